// A Turnstile-style siteverify server for tests (RUNTIME.md: POST form secret, response, remoteip; answer {success}).
// Only the token 'pass-token' with the right secret passes; every call is recorded.

export const CHALLENGE_SECRET = 'test-challenge-secret'
export const PASS_TOKEN = 'pass-token'

export interface ChallengeCall { secret: string | null; response: string | null; remoteip: string | null }

export interface ChallengeServer {
  url: string
  calls: ChallengeCall[]
  /** Env for an app under test that should verify challenges here. */
  env: Record<string, string>
  close(): Promise<void>
}

export function startChallengeServer(secret = CHALLENGE_SECRET): ChallengeServer {
  const calls: ChallengeCall[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url)
      if (req.method !== 'POST' || url.pathname !== '/siteverify') return new Response('not found', { status: 404 })
      const type = req.headers.get('content-type') ?? ''
      let fields: URLSearchParams
      if (type.includes('application/json')) {
        const body = (await req.json().catch(() => ({}))) as Record<string, unknown>
        fields = new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v ?? '')]))
      } else if (type.includes('multipart/form-data')) {
        const form = await req.formData()
        fields = new URLSearchParams([...form.entries()].map(([k, v]) => [k, String(v)]))
      } else {
        fields = new URLSearchParams(await req.text())
      }
      const call = { secret: fields.get('secret'), response: fields.get('response'), remoteip: fields.get('remoteip') }
      calls.push(call)
      const success = call.secret === secret && call.response === PASS_TOKEN
      return Response.json(success
        ? { success: true, challenge_ts: new Date().toISOString(), hostname: 'localhost' }
        : { success: false, 'error-codes': [call.secret === secret ? 'invalid-input-response' : 'invalid-input-secret'] })
    },
  })
  const url = `http://127.0.0.1:${server.port}/siteverify`
  return {
    url,
    calls,
    env: { CHALLENGE_SECRET_KEY: secret, CHALLENGE_VERIFY_URL: url },
    close: async () => { await server.stop(true) },
  }
}

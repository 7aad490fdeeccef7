// Servers on 127.0.0.1 for the outbound address tests (test/ssrf-guards.test.ts): a trap that records whatever
// reaches it (a forbidden address an unguarded call would land on), a redirector that answers `/s<code>/...` with
// that redirect to the trap, and a minimal OpenID provider whose token, key set or userinfo endpoint can be made
// to redirect to the trap.
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

export interface Trap {
  url: string
  port: number
  /** `METHOD /path` of every request that reached it. */
  hits: string[]
  stop(): void
}

export function startTrap(): Trap {
  const hits: string[] = []
  const server = Bun.serve({
    port: 0, hostname: '127.0.0.1',
    fetch(req) {
      hits.push(`${req.method} ${new URL(req.url).pathname}`)
      return Response.json({ trapped: true })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, port: server.port!, hits, stop: () => void server.stop(true) }
}

/** `/s<code>/rest` answers redirect <code> to `<to>/landed/rest`; anything else 404. */
export function startRedirector(to: string) {
  const hits: string[] = []
  const server = Bun.serve({
    port: 0, hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      hits.push(`${req.method} ${path}`)
      const m = /^\/s(30[1-8])(\/.*)?$/.exec(path)
      if (!m) return new Response('not found', { status: 404 })
      return new Response(null, { status: Number(m[1]), headers: { location: `${to}/landed${m[2] ?? ''}` } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, port: server.port!, hits, stop: () => void server.stop(true) }
}

export type OidcEndpoint = 'token' | 'jwks' | 'userinfo'

export interface OidcFake {
  issuer: string
  /** The endpoint that answers with a redirect to the trap (null: none). */
  redirecting: OidcEndpoint | null
  /** The nonce of the sign-in under way, put into the next ID token. */
  nonce: string
  /** The endpoints called, in order. */
  hits: string[]
  stop(): void
}

/**
 * An OpenID provider of one account. The ID token carries the email unless userinfo is the redirecting endpoint
 * (then the app asks userinfo for it). Redirects are 307 for the token request (method and body kept), else 302.
 */
export async function startOidcFake(opts: { clientId: string; trap: string; redirectUri: string }): Promise<OidcFake> {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  const redirect = (status: number, to: string) => new Response(null, { status, headers: { location: `${opts.trap}/${to}` } })
  const fake: OidcFake = { issuer: '', redirecting: null, nonce: '', hits: [], stop: () => {} }
  const idToken = () => new SignJWT({
    nonce: fake.nonce, name: 'Dr Fake', ...(fake.redirecting === 'userinfo' ? {} : { email: 'fake-sso@example.test', email_verified: true }),
  }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(fake.issuer).setAudience(opts.clientId).setSubject('fake-sub-1')
    .setIssuedAt().setExpirationTime('5m').sign(privateKey)
  const server = Bun.serve({
    port: 0, hostname: '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname
      switch (path) {
        case '/.well-known/openid-configuration':
          return Response.json({
            issuer: fake.issuer, authorization_endpoint: `${fake.issuer}/authorize`, token_endpoint: `${fake.issuer}/token`,
            jwks_uri: `${fake.issuer}/jwks`, userinfo_endpoint: `${fake.issuer}/userinfo`,
          })
        case '/token':
          fake.hits.push('token')
          if (fake.redirecting === 'token') return redirect(307, 'token')
          return Response.json({ access_token: 'fake-access-token', token_type: 'Bearer', expires_in: 300, id_token: await idToken() })
        case '/jwks':
          fake.hits.push('jwks')
          return fake.redirecting === 'jwks' ? redirect(302, 'jwks') : Response.json({ keys: [jwk] })
        case '/userinfo':
          fake.hits.push('userinfo')
          return fake.redirecting === 'userinfo' ? redirect(302, 'userinfo') : Response.json({ sub: 'fake-sub-1', email: 'fake-sso@example.test', email_verified: true })
        default:
          return new Response('not found', { status: 404 })
      }
    },
  })
  fake.issuer = `http://127.0.0.1:${server.port}`
  fake.stop = () => void server.stop(true)
  return fake
}

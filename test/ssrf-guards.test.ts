// Every outbound address a user (any role, admins included) can set, against every hostile form of an address:
// one table of settings × addresses, so a new setting is one more row. Each setting is used through the real app
// without the operator's allowance for the address (WEBDAV_ALLOWED_HOSTS, AI_ALLOWED_HOSTS, OIDC_ALLOW_INSECURE_ISSUER),
// and must be refused with its documented answer naming the rule, store nothing and send nothing: loopback addresses
// point at a trap server that counts what reaches it, and a fetch sentinel refuses (and records) any request to an
// address off this machine, so a missing guard fails the test without traffic leaving it. Redirects from an allowed
// server to a forbidden one are never followed. The deliberate exceptions are pinned at the end.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import ipaddr from 'ipaddr.js'
import { API_BASE_RULE } from '../plugins/quiz/services/ai-models'
import { OUTBOUND_ADDRESS_RULE } from '../src/core/outbound'
import { SERVER_RULE } from '../src/core/webdav'
import { startAiServer, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { pageClinician, userWithSession, unescapeHtml, type PageClinician, type SignedIn } from './support/clinical'
import { API, createAccount, registerAdmin, type Account } from './support/quiz'
import { CookieJar, browserGet } from './support/oidc-provider'
import { startOidcFake, startRedirector, startTrap, type OidcFake, type Trap } from './support/outbound-servers'

setDefaultTimeout(60_000)

// ---- the sentinel: nothing leaves this machine ------------------------------------------------------------------
const realFetch = globalThis.fetch
const escaped: string[] = []
function onThisMachine(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost') return true
  if (!ipaddr.isValid(host)) return false
  let ip = ipaddr.parse(host)
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address()
  return ip.range() === 'loopback' || ip.range() === 'unspecified'
}
beforeAll(() => {
  globalThis.fetch = Object.assign((input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    if (onThisMachine(url.hostname)) return realFetch(input, init)
    escaped.push(url.href)
    return Promise.reject(new TypeError(`test sentinel: ${url.host} is off this machine`))
  }, realFetch) as typeof fetch
})
afterAll(() => {
  globalThis.fetch = realFetch
})

/** The hostile forms of an address; loopback ones at the trap's port, so an unguarded call would reach it. */
const hostileHosts = (trap: number): Array<[string, string]> => [
  ['loopback', `127.0.0.1:${trap}`], ['loopback, short form', `127.1:${trap}`], ['loopback, decimal', `2130706433:${trap}`],
  ['loopback, hexadecimal', `0x7f000001:${trap}`], ['loopback, octal', `0177.0.0.1:${trap}`],
  ['a name resolving to loopback', `localhost:${trap}`], ['that name in capitals with a trailing dot', `LOCALHOST.:${trap}`],
  ['IPv6 loopback', `[::1]:${trap}`], ['IPv4-mapped loopback', `[::ffff:127.0.0.1]:${trap}`],
  ['IPv4-mapped loopback, hex words', `[::ffff:7f00:1]:${trap}`], ['IPv4-compatible loopback', `[::127.0.0.1]:${trap}`],
  ['unspecified', `0.0.0.0:${trap}`], ['cloud metadata (link-local)', '169.254.169.254'],
  ['cloud metadata, IPv4-mapped', '[::ffff:169.254.169.254]'], ['cloud metadata through NAT64', '[64:ff9b::a9fe:a9fe]'],
  ['IPv6 link-local', '[fe80::1]'], ['private 10/8', '10.0.0.1'], ['private 172.16/12', '172.16.0.1'],
  ['private 192.168/16', '192.168.1.1'], ['IPv6 unique-local', '[fd00::1]'], ['shared (CGNAT)', '100.64.0.1'],
]

/** The message of either service's error body: quiz `{detail}`, clinical `{error}` or `{message}`; a page's text. */
async function answerOf(res: Response): Promise<{ status: number; text: string; code?: string }> {
  const raw = await res.text()
  try {
    const body = JSON.parse(raw) as { detail?: string; message?: string; error?: string; code?: string }
    return { status: res.status, text: body.detail ?? body.message ?? body.error ?? raw, ...(body.code ? { code: body.code } : {}) }
  } catch {
    return { status: res.status, text: unescapeHtml(raw) }
  }
}

/** An address setting: how to set or use it, what its refusal is, and what must stay as it was. */
interface AddressSetting {
  name: string
  scheme: 'http' | 'https'
  path: string
  use(url: string): Promise<Response>
  refusal: { status: number; says: string }
  /** A snapshot of what the setting stores; equal before and after a refusal. */
  stored?(): Promise<unknown>
}

const UNREACHABLE = 'The AI service could not be reached'

for (const target of databaseTargets()) {
  describe(`outbound address guards [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    let trap: Trap
    let redirector: Awaited<ReturnType<typeof startRedirector>>
    let quizAdmin: Account
    let quizModerator: Account
    let clinician: SignedIn
    let clinicalModerator: SignedIn
    let clinicalAdmin: SignedIn
    let pageUser: PageClinician
    let modelId: number
    const settings: AddressSetting[] = []

    beforeAll(async () => {
      trap = startTrap()
      ai = await startAiServer()
      // The one server the operator allowed (for both lists): it redirects to the trap, which nobody allowed.
      redirector = startRedirector(trap.url)
      const allowed = `127.0.0.1:${redirector.port}`
      t = await startTestApp({ target, env: { ...ai.env, APP_URL: 'http://localhost', WEBDAV_ALLOWED_HOSTS: allowed, AI_ALLOWED_HOSTS: allowed } })
      quizAdmin = await registerAdmin(t)
      quizModerator = await createAccount(t, quizAdmin, 'moderator')
      clinician = await userWithSession(t)
      clinicalModerator = await userWithSession(t, 'moderator')
      clinicalAdmin = await userWithSession(t, 'admin')
      pageUser = await pageClinician(t, 'page-dav', 'Page User')
      const model = await t.post(`${API}/admin/models`, { name: 'Kept', model_id: 'kept-model', task: 'teach' }, { token: quizAdmin.token })
      expect(model.status).toBe(200)
      modelId = ((await model.json()) as { id: number }).id
      const connectionOf = (id: number) => t.db.sql`select nextcloud_url, nextcloud_token from clinical.users where id = ${id}`
      /** A connection stored as if the operator had allowed its address then, and since removed it from the list. */
      const storeConnection = (id: number, url: string) => t.db.sql`
        update clinical.users set nextcloud_url = ${url}, nextcloud_username = 'alice', nextcloud_token = ${t.booted.core.crypto.sealText('dav-secret')}
        where id = ${id}`
      const quizDav = (op: string) => ({
        name: `quiz file-server import (POST ${API}/nextcloud/${op})`, scheme: 'http' as const, path: '/dav',
        use: (server: string) => t.post(`${API}/nextcloud/${op}`, { server, username: 'alice', password: 'dav-secret', path: '/a.pdf' }, { token: quizModerator.token }),
        refusal: { status: 400, says: SERVER_RULE },
      })
      settings.push(
        quizDav('test'), quizDav('files'), quizDav('download'),
        {
          name: 'clinical file-sync connect (POST /api/nextcloud/connect)', scheme: 'http', path: '/dav',
          use: (url) => t.post('/api/nextcloud/connect', { url, username: 'alice', password: 'dav-secret' }, { token: clinician.token }),
          refusal: { status: 400, says: SERVER_RULE }, stored: () => connectionOf(clinician.user.id),
        },
        {
          name: 'clinical file-sync connect page (POST /preferences/webdav/connect)', scheme: 'http', path: '/dav',
          use: (url) => t.form('/preferences/webdav/connect', { url, username: 'alice', password: 'dav-secret' }, { headers: { cookie: pageUser.cookie } }),
          refusal: { status: 422, says: SERVER_RULE }, stored: () => connectionOf(pageUser.id),
        },
        {
          name: 'clinical file-sync export to a stored address (POST /api/nextcloud/export)', scheme: 'http', path: '/dav',
          use: async (url) => (await storeConnection(clinician.user.id, url), t.post('/api/nextcloud/export', { title: 'Note', text: 'S: well.' }, { token: clinician.token })),
          refusal: { status: 400, says: SERVER_RULE },
        },
        {
          name: 'learning studio browse of a stored address (GET /api/admin/learning/webdav-browse)', scheme: 'http', path: '/dav',
          use: async (url) => (await storeConnection(clinicalModerator.user.id, url), t.get('/api/admin/learning/webdav-browse?path=/', { token: clinicalModerator.token })),
          refusal: { status: 400, says: SERVER_RULE },
        },
        {
          name: `quiz AI model api_base on create (POST ${API}/admin/models)`, scheme: 'http', path: '/v1',
          use: (api_base) => t.post(`${API}/admin/models`, { name: 'Hostile', model_id: 'hostile-model', task: 'teach', api_base, api_key: 'sk-never-sent-0001' }, { token: quizAdmin.token }),
          refusal: { status: 400, says: API_BASE_RULE }, stored: () => t.db.sql`select id from quiz.ai_models order by id`,
        },
        {
          name: `quiz AI model api_base on update (PUT ${API}/admin/models/{id})`, scheme: 'http', path: '/v1',
          use: (api_base) => t.put(`${API}/admin/models/${modelId}`, { api_base }, { token: quizAdmin.token }),
          refusal: { status: 400, says: API_BASE_RULE }, stored: () => t.db.sql`select api_base from quiz.ai_models where id = ${modelId}`,
        },
        {
          // Deliberately the closed-port answer, not the rule: a probe must not tell a refused address from a dead one.
          name: `quiz gateway model listing (POST ${API}/admin/litellm/models)`, scheme: 'http', path: '/v1',
          use: (api_base) => t.post(`${API}/admin/litellm/models`, { api_base, api_key: 'sk-never-sent-0001' }, { token: quizAdmin.token }),
          refusal: { status: 502, says: UNREACHABLE },
        },
        {
          name: `quiz model test of a stored api_base (POST ${API}/admin/models/{id}/test)`, scheme: 'http', path: '/v1',
          use: async (api_base) => {
            await t.db.sql`update quiz.ai_models set api_base = ${api_base} where id = ${modelId}`
            try {
              return await t.post(`${API}/admin/models/${modelId}/test`, undefined, { token: quizAdmin.token })
            } finally {
              await t.db.sql`update quiz.ai_models set api_base = null where id = ${modelId}`
            }
          },
          refusal: { status: 502, says: UNREACHABLE },
        },
        {
          // spec 2, OIDC 2: saving checks the format only; the address rule applies when the issuer is used.
          name: 'clinical identity provider issuer (PUT /api/auth/oidc/config, then GET /api/auth/oidc)', scheme: 'https', path: '/realm',
          use: async (issuer) => {
            const saved = await t.put('/api/auth/oidc/config', { 'oidc.enabled': 'true', 'oidc.issuer': issuer, 'oidc.client_id': 'app', 'oidc.client_secret': 's3cret' }, { token: clinicalAdmin.token })
            expect(saved.status).toBe(200)
            const res = await t.get('/api/auth/oidc', { headers: { accept: 'application/json' } })
            expect(res.headers.getSetCookie()).toEqual([])
            return res
          },
          refusal: { status: 400, says: OUTBOUND_ADDRESS_RULE }, stored: () => t.db.sql`select count(*)::int as n from core.kv`,
        },
      )
    })
    afterAll(async () => {
      await t?.close()
      await ai?.close()
      trap?.stop()
      redirector?.stop()
    })

    it('every setting refuses every hostile address with its documented answer naming the rule; nothing stored, nothing sent', async () => {
      const wrong: string[] = []
      for (const setting of settings) {
        for (const [label, host] of hostileHosts(trap.port)) {
          const url = `${setting.scheme}://${host}${setting.path}`
          const before = await setting.stored?.()
          const { status, text } = await answerOf(await setting.use(url))
          if (status !== setting.refusal.status || !text.includes(setting.refusal.says)) wrong.push(`${setting.name} × ${label} (${url}): ${status} ${text.slice(0, 160)}`)
          if (setting.stored && !Bun.deepEquals(await setting.stored(), before)) wrong.push(`${setting.name} × ${label}: stored something`)
        }
      }
      expect(wrong).toEqual([])
      expect(trap.hits).toEqual([])
      expect(escaped).toEqual([])
    })

    describe('a redirect from an allowed server to a forbidden one is not followed', () => {
      const REDIRECTS = [301, 302, 303, 307, 308]
      it.each(REDIRECTS)('file servers (quiz import, clinical export): %i is 502 naming the redirect', async (code) => {
        const server = `${redirector.url}/s${code}/dav`
        const quiz = await answerOf(await t.post(`${API}/nextcloud/files`, { server, username: 'a', password: 'b', path: '/' }, { token: quizModerator.token }))
        expect(quiz.status).toBe(502)
        expect(quiz.text).toContain('redirect')
        // the clinical service words every 5xx alike; its code names the redirect
        const clinical = await answerOf(await t.post('/api/nextcloud/connect', { url: server, username: 'a', password: 'b' }, { token: clinician.token }))
        expect(clinical).toMatchObject({ status: 502, code: 'webdav_redirect' })
        expect(trap.hits).toEqual([])
      })

      it.each(REDIRECTS)('AI gateways (listing, a stored model\'s test): %i is the unreachable answer, no key sent on', async (code) => {
        const api_base = `${redirector.url}/s${code}/v1`
        expect(await answerOf(await t.post(`${API}/admin/litellm/models`, { api_base, api_key: 'sk-never-sent-0001' }, { token: quizAdmin.token })))
          .toEqual({ status: 502, text: UNREACHABLE })
        await t.db.sql`update quiz.ai_models set api_base = ${api_base} where id = ${modelId}`
        expect((await answerOf(await t.post(`${API}/admin/models/${modelId}/test`, undefined, { token: quizAdmin.token }))).status).toBe(502)
        await t.db.sql`update quiz.ai_models set api_base = null where id = ${modelId}`
        expect(trap.hits).toEqual([])
        expect(redirector.hits.length).toBeGreaterThan(0)
      })
    })

    describe('deliberate exceptions', () => {
      it('the admin\'s SMTP host may be a relay on this machine or the local network (mail.ts: clinics run local relays)', async () => {
        const res = await t.put('/api/admin/config/smtp', { host: '127.0.0.1', port: 2525, user: '', pass: '', from: '', secure: false }, { token: clinicalAdmin.token })
        expect(res.status).toBe(200)
        expect((await t.put('/api/admin/config/smtp', { host: '', port: 587, user: '', pass: '', from: '', secure: false }, { token: clinicalAdmin.token })).status).toBe(200)
      })

      it('voice providers are fixed addresses: the Azure region cannot carry a host, a port or a path', async () => {
        for (const region of ['169.254.169.254', 'westeurope.evil.example', 'a/b', 'a@b', 'x:80']) {
          const res = await answerOf(await t.post(`${API}/admin/tts/voices`, { provider: 'azure', api_key: 'k', region }, { token: quizAdmin.token }))
          expect(res.status, region).toBe(400)
        }
        expect(escaped).toEqual([])
      })
    })
  })

  describe(`identity provider redirects, with OIDC_ALLOW_INSECURE_ISSUER [${target}]`, () => {
    let t: TestApp
    let trap: Trap
    let idp: OidcFake
    let admin: SignedIn

    beforeAll(async () => {
      trap = startTrap()
      idp = await startOidcFake({ clientId: 'app', trap: trap.url, redirectUri: 'http://localhost/api/auth/oidc/callback' })
      t = await startTestApp({ target, env: { APP_URL: 'http://localhost', OIDC_ALLOW_INSECURE_ISSUER: 'true' } })
      admin = await userWithSession(t, 'admin')
      const saved = await t.put('/api/auth/oidc/config', { 'oidc.enabled': 'true', 'oidc.issuer': idp.issuer, 'oidc.client_id': 'app', 'oidc.client_secret': 'client-s3cret' }, { token: admin.token })
      expect(saved.status).toBe(200)
    })
    afterAll(async () => {
      await t?.close()
      trap?.stop()
      idp?.stop()
    })

    /** The sign-in up to the callback, with the fake provider answering `redirecting` with a redirect to the trap. */
    async function signInWith(redirecting: 'token' | 'jwks' | 'userinfo') {
      idp.redirecting = redirecting
      const jar = new CookieJar()
      const start = await browserGet(t, jar, '/api/auth/oidc')
      expect(start.status).toBe(302)
      const authorize = new URL(start.headers.get('location')!)
      idp.nonce = authorize.searchParams.get('nonce')!
      const callback = `/api/auth/oidc/callback?code=the-code&state=${encodeURIComponent(authorize.searchParams.get('state')!)}`
      return answerOf(await browserGet(t, jar, callback, { accept: 'application/json' }))
    }

    it.each(['token', 'jwks', 'userinfo'] as const)('a redirect from the %s endpoint is refused (502): the code, secret or token go nowhere else', async (endpoint) => {
      const before = (await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.users`)[0]!.n
      trap.hits.length = 0
      const res = await signInWith(endpoint)
      expect(res.status, res.text).toBe(502)
      expect(idp.hits).toContain(endpoint)
      expect(trap.hits).toEqual([])
      expect((await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.users`)[0]!.n).toBe(before)
    })

    it('the fake provider signs in when nothing redirects (the refusals above are the redirects\', not the setup\'s)', async () => {
      idp.redirecting = null
      const res = await signInWith(null as never)
      expect(res.status).toBe(302)
    })
  })
}

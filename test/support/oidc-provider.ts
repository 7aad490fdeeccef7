// A real OpenID Connect identity provider (oidc-provider) in the test process, on a free 127.0.0.1 port: one
// confidential client with PKCE required, accounts whose claims a test chooses, and an interaction that signs
// in the chosen account at once (consent is granted by loadExistingGrant). Plus a small browser: a cookie jar per
// host and manual redirects between the app (app.request) and the provider (fetch).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider'
import type { TestApp } from './app'

export interface IdpAccount {
  sub: string
  email?: string
  email_verified?: boolean
  name?: string
}

export interface TestIdentityProvider {
  issuer: string
  clientId: string
  clientSecret: string
  /** Requests the provider has received so far (to show that a refused configuration never reached it). */
  readonly requests: number
  /** Sign-ins from now on log in as this account (its claims are kept for the tokens). */
  signInAs(account: IdpAccount): void
  close(): Promise<void>
}

export interface IdentityProviderOptions {
  redirectUri: string
  /** false: the provider keeps scope claims (email, name) out of the ID token and serves them at userinfo only. */
  claimsInIdToken?: boolean
}

/** oidc-provider's storage, in memory for one provider (its own quick-start adapter warns on every start). */
function memoryAdapter() {
  const rows = new Map<string, AdapterPayload>()
  const byGrant = new Map<string, Set<string>>()
  return (name: string): Adapter => {
    const key = (id: string) => `${name}:${id}`
    return {
      async upsert(id, payload) {
        rows.set(key(id), payload)
        if (payload.grantId) {
          const keys = byGrant.get(payload.grantId) ?? new Set()
          keys.add(key(id))
          byGrant.set(payload.grantId, keys)
        }
      },
      async find(id) {
        return rows.get(key(id))
      },
      async findByUid(uid) {
        for (const [k, v] of rows) if (k.startsWith(`${name}:`) && v.uid === uid) return v
        return undefined
      },
      async findByUserCode(userCode) {
        for (const [k, v] of rows) if (k.startsWith(`${name}:`) && v.userCode === userCode) return v
        return undefined
      },
      async consume(id) {
        const row = rows.get(key(id))
        if (row) row.consumed = Math.floor(Date.now() / 1000)
      },
      async destroy(id) {
        rows.delete(key(id))
      },
      async revokeByGrantId(grantId) {
        for (const k of byGrant.get(grantId) ?? []) rows.delete(k)
        byGrant.delete(grantId)
      },
    }
  }
}

export async function startIdentityProvider(opts: IdentityProviderOptions): Promise<TestIdentityProvider> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clientId = `clinical-${crypto.randomUUID().slice(0, 8)}`
  const clientSecret = `secret-${crypto.randomUUID()}`
  const accounts = new Map<string, IdpAccount>()
  let current: string | null = null
  let requests = 0

  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' }

  const provider = new Provider(issuer, {
    adapter: memoryAdapter(),
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomUUID()] },
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [opts.redirectUri], response_types: ['code'], grant_types: ['authorization_code'] }],
    pkce: { required: () => true },
    conformIdTokenClaims: opts.claimsInIdToken === false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Grant: 600, Session: 600 },
    findAccount: async (_ctx, sub) => {
      const account = accounts.get(sub)
      if (!account) return undefined
      return { accountId: sub, claims: async () => ({ ...account }) }
    },
    // Consent for this one first-party client is implied: the grant covers the requested OIDC scopes.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId)
      if (grantId) return ctx.oidc.provider.Grant.find(grantId)
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId })
      grant.addOIDCScope('openid email profile')
      await grant.save()
      return grant
    },
  })
  const callback = provider.callback()
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    requests++
    if (!req.url?.startsWith('/interaction/')) return void callback(req, res)
    void (async () => {
      await provider.interactionDetails(req, res)
      if (!current) throw new Error('no account chosen: call signInAs() first')
      await provider.interactionFinished(req, res, { login: { accountId: current } }, { mergeWithLastSubmission: false })
    })().catch((err) => {
      res.statusCode = 500
      res.end(String(err))
    })
  })

  return {
    issuer,
    clientId,
    clientSecret,
    get requests() {
      return requests
    },
    signInAs(account) {
      accounts.set(account.sub, account)
      current = account.sub
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Cookies of one host: name -> value (paths are ignored: each test flow uses a fresh jar). */
export class CookieJar {
  private readonly hosts = new Map<string, Map<string, string>>()

  store(host: string, res: Response) {
    const jar = this.hosts.get(host) ?? new Map<string, string>()
    this.hosts.set(host, jar)
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';')
      const at = pair!.indexOf('=')
      const name = pair!.slice(0, at).trim()
      const value = pair!.slice(at + 1).trim()
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))
        || attrs.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now())
      if (expired || value === '') jar.delete(name)
      else jar.set(name, value)
    }
  }

  header(host: string): string {
    return [...(this.hosts.get(host) ?? [])].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  get(host: string, name: string): string | undefined {
    return this.hosts.get(host)?.get(name)
  }

  set(host: string, name: string, value: string | null) {
    const jar = this.hosts.get(host) ?? new Map<string, string>()
    this.hosts.set(host, jar)
    if (value === null) jar.delete(name)
    else jar.set(name, value)
  }
}

export const APP_HOST = 'localhost'
const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Test', accept: 'text/html,application/xhtml+xml' }

/** One browser step: a GET to the app (through app.request) or to the provider (fetch), cookies sent and kept. */
export async function browserGet(app: TestApp, jar: CookieJar, url: string, headers: Record<string, string> = {}): Promise<Response> {
  const u = new URL(url, 'http://localhost')
  const host = u.host
  const cookie = jar.header(host)
  const h = { ...BROWSER, ...headers, ...(cookie ? { cookie } : {}) }
  const res = host === APP_HOST
    ? await app.request(u.pathname + u.search, { method: 'GET', headers: h })
    : await fetch(u, { headers: h, redirect: 'manual' })
  jar.store(host, res)
  return res
}

/**
 * Follows redirects from `url` until the answer is not a redirect, or the next stop is the app's callback
 * (returned unvisited, so a test can change it). Gives the last response and, when stopped, the callback URL.
 */
export async function browse(app: TestApp, jar: CookieJar, url: string, opts: { stopAtCallback?: boolean } = {}): Promise<{ res: Response; callbackUrl: string | null }> {
  let next = url
  for (let hop = 0; hop < 15; hop++) {
    const res = await browserGet(app, jar, next)
    const location = res.headers.get('location')
    if (res.status < 300 || res.status >= 400 || !location) return { res, callbackUrl: null }
    const target = new URL(location, new URL(next, 'http://localhost')).toString()
    if (opts.stopAtCallback && new URL(target).pathname.endsWith('/api/auth/oidc/callback')) return { res, callbackUrl: target }
    if (new URL(target).host === APP_HOST && !new URL(target).pathname.startsWith('/api/')) return { res, callbackUrl: null }
    next = target
  }
  throw new Error('too many redirects')
}

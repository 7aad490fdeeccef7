// Spec 2, OIDC (authorization code with PKCE), and spec 3's OIDC settings, against a real identity provider
// (oidc-provider, in-process on 127.0.0.1, so the app runs with OIDC_ALLOW_INSECURE_ISSUER=true except where the
// address rules themselves are tested). A small browser follows the redirects between the app and the provider.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { MESSAGES } from '../plugins/clinical/services/accounts'
import { getConfigValue, REGISTRATION_ENABLED, setConfigValues } from '../plugins/clinical/services/app-config'
import { OIDC_BINDING_COOKIE } from '../plugins/clinical/cookies'
import { OIDC_SECRET_MASK, OIDC_STATE_AUDIENCE, OIDC_STATE_LIFETIME_S } from '../plugins/clinical/services/oidc'
import { isPublicAddress, OUTBOUND_ADDRESS_RULE } from '../src/core/outbound'
import { signToken } from '../src/auth/jwt'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, flushAudit, freshIp, insertUser, signIn, uniqueEmail, withCookie, type SignedIn } from './support/clinical'
import { APP_HOST, browse, browserGet, CookieJar, startIdentityProvider, type IdpAccount, type TestIdentityProvider } from './support/oidc-provider'

const CALLBACK = 'http://localhost/api/auth/oidc/callback'
const JSON_ACCEPT = { accept: 'application/json' }

interface UserRow {
  id: number
  name: string
  email: string
  role: string
  email_verified: boolean
  can_local_auth: boolean
  password_hash: string
  oidc_sub: string | null
}

const account = (tag: string, claims: Partial<IdpAccount> = {}): IdpAccount => ({
  sub: `sub-${tag}-${crypto.randomUUID()}`, email: uniqueEmail(tag), email_verified: true, name: `Dr ${tag}`, ...claims,
})

async function userByEmail(t: TestApp, email: string): Promise<UserRow | undefined> {
  const [row] = await t.db.sql<UserRow>`
    select id, name, email, role, email_verified, can_local_auth, password_hash, oidc_sub
    from clinical.users where lower(email) = ${email.toLowerCase()}`
  return row
}

async function auditActions(t: TestApp, userId: number): Promise<string[]> {
  await flushAudit(t)
  const rows = await t.db.sql<{ action: string }>`select action from clinical.audit_log where user_id = ${userId} order by id`
  return rows.map((r) => r.action)
}

const sessionCount = async (t: TestApp, userId: number) =>
  (await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.user_sessions where user_id = ${userId}`)[0]!.n

const userCount = async (t: TestApp) => (await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.users`)[0]!.n

async function configure(t: TestApp, admin: SignedIn, settings: Record<string, string>) {
  const res = await t.put('/api/auth/oidc/config', settings, { token: admin.token })
  expect(res.status, await res.clone().text()).toBe(200)
}

/** Signs `who` in through the whole flow in a fresh browser; the last response is the callback's. */
async function ssoSignIn(t: TestApp, idp: TestIdentityProvider, who: IdpAccount, jar = new CookieJar()) {
  idp.signInAs(who)
  const { res } = await browse(t, jar, '/api/auth/oidc')
  return { res, jar, session: jar.get(APP_HOST, 'app_auth') ?? null }
}

/** Runs the flow up to the provider's redirect back to the app; the callback is not visited yet. */
async function untilCallback(t: TestApp, idp: TestIdentityProvider, who: IdpAccount) {
  idp.signInAs(who)
  const jar = new CookieJar()
  const { callbackUrl } = await browse(t, jar, '/api/auth/oidc', { stopAtCallback: true })
  expect(callbackUrl).toStartWith(CALLBACK)
  expect(jar.get(APP_HOST, OIDC_BINDING_COOKIE)).toBeTruthy()
  return { jar, callbackUrl: callbackUrl! }
}

async function expectRefusal(res: Response, status: number, code: string) {
  const body = await res.json() as { success: boolean; code: string; error: string; message: string }
  expect(res.status, JSON.stringify(body)).toBe(status)
  // spec 2 writes these refusals as `error=<code>`: the code is the error, the explanation its message.
  expect(body).toMatchObject({ success: false, error: code, code })
  expect(typeof body.message).toBe('string')
  expect(res.headers.getSetCookie().some((c) => c.startsWith('app_auth=') && !c.startsWith('app_auth=;'))).toBe(false)
  return body
}

describe('provider address rules (spec 2, OIDC 2)', () => {
  it.each([
    ['10.1.2.3', false], ['172.16.0.1', false], ['172.31.255.255', false], ['192.168.1.1', false], ['127.0.0.1', false],
    ['169.254.169.254', false], ['0.0.0.0', false], ['100.64.0.1', false], ['100.127.255.254', false], ['224.0.0.1', false],
    ['255.255.255.255', false], ['::', false], ['::1', false], ['fe80::1', false], ['fc00::1', false], ['fd12:3456::1', false],
    ['::ffff:127.0.0.1', false], ['::ffff:7f00:1', false], ['::ffff:10.0.0.1', false], ['::ffff:169.254.169.254', false],
    ['64:ff9b::a00:1', false], ['2002:c0a8:101::1', false], ['ff02::1', false], ['not-an-address', false],
    ['::a00:1', false], ['[::1]', false], ['fec0::1', false], ['2001:db8::1', false], ['198.18.0.1', false], ['192.0.2.1', false],
    // cloud metadata services, one of them (Azure's) on an otherwise public address
    ['168.63.129.16', false], ['::ffff:168.63.129.16', false], ['100.100.100.200', false], ['fd00:ec2::254', false], ['192.0.0.192', false],
    ['2002:808:808::1', true], ['64:ff9b::808:808', true],
    ['8.8.8.8', true], ['100.63.255.255', true], ['100.128.0.1', true], ['172.32.0.1', true], ['1.1.1.1', true],
    ['2606:4700:4700::1111', true], ['::ffff:8.8.8.8', true], ['2001:4860:4860::8888', true],
  ])('%s is public: %p', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected)
  })
})

for (const target of databaseTargets()) {
  describe(`single sign-on (${target})`, () => {
    let idp: TestIdentityProvider
    let t: TestApp
    let admin: SignedIn
    let clockOffsetMs = 0

    beforeAll(async () => {
      idp = await startIdentityProvider({ redirectUri: CALLBACK })
      t = await startTestApp({
        target,
        env: { APP_URL: 'http://localhost', OIDC_ALLOW_INSECURE_ISSUER: 'true' },
        boot: { now: () => Date.now() + clockOffsetMs },
      })
      const adminEmail = uniqueEmail('oidc-admin')
      await insertUser(t, { email: adminEmail, role: 'admin' })
      admin = await signIn(t, adminEmail, { ip: freshIp() })
      await configure(t, admin, {
        'oidc.enabled': 'true', 'oidc.issuer': idp.issuer, 'oidc.client_id': idp.clientId,
        'oidc.client_secret': idp.clientSecret, 'oidc.button_label': 'Hospital login',
      })
    })
    afterAll(async () => {
      await t?.close()
      await idp?.close()
    })

    it('starts with a 302 to the provider: PKCE S256, openid email profile, a nonce, a signed state and the binding cookie', async () => {
      const res = await browserGet(t, new CookieJar(), '/api/auth/oidc')
      expect(res.status).toBe(302)
      const to = new URL(res.headers.get('location')!)
      expect(to.origin).toBe(idp.issuer)
      expect(to.searchParams.get('code_challenge_method')).toBe('S256')
      expect(to.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/)
      expect(to.searchParams.get('scope')).toBe('openid email profile')
      expect(to.searchParams.get('redirect_uri')).toBe(CALLBACK)
      expect(to.searchParams.get('nonce')).toBeTruthy()
      expect(to.searchParams.get('state')!.split('.')).toHaveLength(3)
      const binding = res.headers.getSetCookie().find((c) => c.startsWith(`${OIDC_BINDING_COOKIE}=`))!
      expect(binding).toContain('HttpOnly')
      expect(binding).toContain('SameSite=Lax')
      expect(binding).toContain(`Max-Age=${OIDC_STATE_LIFETIME_S}`)
    })

    it('first sign-in creates the account: verified, no local password, a 64-hex placeholder, a working web session', async () => {
      const who = account('first', { name: 'Dana Reyes' })
      const { res, jar, session } = await ssoSignIn(t, idp, who)
      expect(res.status).toBe(302)
      expect(res.headers.get('location')).toBe('http://localhost/')
      expect(session).toBeTruthy()
      expect(jar.get(APP_HOST, OIDC_BINDING_COOKIE)).toBeUndefined()

      const row = (await userByEmail(t, who.email!))!
      expect(row).toMatchObject({ name: 'Dana Reyes', role: 'user', email_verified: true, can_local_auth: false, oidc_sub: who.sub })
      expect(row.password_hash).toMatch(/^[0-9a-f]{64}$/)

      const me = await t.get('/api/auth/me', { headers: withCookie(session!) })
      expect(me.status).toBe(200)
      expect((await me.json() as { user: unknown }).user).toMatchObject({ id: row.id, email: who.email, canLocalAuth: false, email_verified: true })
      expect(await auditActions(t, row.id)).toEqual(['register', 'login_oidc'])
    })

    it('a second sign-in signs the same account in (a new session, no new account)', async () => {
      const who = account('again')
      const first = await ssoSignIn(t, idp, who)
      const before = await userCount(t)
      const second = await ssoSignIn(t, idp, who)
      expect(second.res.status).toBe(302)
      expect(second.session).toBeTruthy()
      expect(second.session).not.toBe(first.session)
      expect(await userCount(t)).toBe(before)
      const row = (await userByEmail(t, who.email!))!
      expect(await sessionCount(t, row.id)).toBe(2)
      const me = await t.get('/api/auth/me', { headers: withCookie(second.session!) })
      expect((await me.json() as { user: { id: number } }).user.id).toBe(row.id)
    })

    it('links an existing local account when the provider verified its email (any case), audited oidc_linked', async () => {
      const email = uniqueEmail('local-link')
      const id = await insertUser(t, { email, verified: false })
      const who = account('link', { email: email.toUpperCase(), email_verified: true })
      const { res, session } = await ssoSignIn(t, idp, who)
      expect(res.status).toBe(302)
      const row = (await userByEmail(t, email))!
      expect(row).toMatchObject({ id, oidc_sub: who.sub, can_local_auth: true, email_verified: true })
      const me = await t.get('/api/auth/me', { headers: withCookie(session!) })
      expect((await me.json() as { user: { id: number } }).user.id).toBe(id)
      expect(await auditActions(t, id)).toEqual(['oidc_linked', 'login_oidc'])
      await signIn(t, email, { ip: freshIp() }) // the local password still works
    })

    it('refuses to link without a verified email: 401 email_unverified, nothing changed', async () => {
      const email = uniqueEmail('local-unverified')
      const id = await insertUser(t, { email })
      const who = account('unverified', { email, email_verified: false })
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      const body = await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 401, 'email_unverified')
      expect(body.message).toContain('verified')
      expect(await userByEmail(t, email)).toMatchObject({ id, oidc_sub: null })
      expect(await sessionCount(t, id)).toBe(0)
      expect(await auditActions(t, id)).toEqual([])
    })

    it('a browser sees the refusal as a page linking to the app with error=email_unverified', async () => {
      const email = uniqueEmail('local-unverified-page')
      await insertUser(t, { email })
      const { res, jar } = await ssoSignIn(t, idp, account('unverified-page', { email, email_verified: false }))
      expect(res.status).toBe(401)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(await res.text()).toContain('href="/?error=email_unverified"')
      expect(jar.get(APP_HOST, OIDC_BINDING_COOKIE)).toBeUndefined()
      expect(jar.get(APP_HOST, 'app_auth')).toBeUndefined()
    })

    it('refuses an account linked to another subject: 401 sub_mismatch, the link kept', async () => {
      const email = uniqueEmail('linked-other')
      const id = await insertUser(t, { email })
      await t.db.sql`update clinical.users set oidc_sub = 'the-original-subject' where id = ${id}`
      const { jar, callbackUrl } = await untilCallback(t, idp, account('mismatch', { email }))
      await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 401, 'sub_mismatch')
      expect((await userByEmail(t, email))!.oidc_sub).toBe('the-original-subject')
      expect(await sessionCount(t, id)).toBe(0)

      const page = await ssoSignIn(t, idp, account('mismatch-page', { email }))
      expect(page.res.status).toBe(401)
      expect(await page.res.text()).toContain('href="/?error=sub_mismatch"')
    })

    it('refuses a disabled account: 403 account_disabled, no session', async () => {
      const who = account('disabled')
      await ssoSignIn(t, idp, who)
      const row = (await userByEmail(t, who.email!))!
      await t.db.sql`update clinical.users set disabled = true where id = ${row.id}`
      await t.db.sql`delete from clinical.user_sessions where user_id = ${row.id}`
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 403, 'account_disabled')
      expect(await sessionCount(t, row.id)).toBe(0)
    })

    it('a state works once: the replayed callback gets 400 state_replayed', async () => {
      const who = account('replay')
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      const binding = jar.get(APP_HOST, OIDC_BINDING_COOKIE)!
      expect((await browserGet(t, jar, callbackUrl, JSON_ACCEPT)).status).toBe(302)
      jar.set(APP_HOST, OIDC_BINDING_COOKIE, binding) // the same browser, cookie and all
      jar.set(APP_HOST, 'app_auth', null)
      await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 400, 'state_replayed')
      expect(await sessionCount(t, (await userByEmail(t, who.email!))!.id)).toBe(1)
    })

    it(`a state lasts ${OIDC_STATE_LIFETIME_S / 60} minutes: a minute before, the callback works; a minute after, 400 invalid_state`, async () => {
      try {
        const early = await untilCallback(t, idp, account('in-time'))
        clockOffsetMs = (OIDC_STATE_LIFETIME_S - 60) * 1000
        expect((await browserGet(t, early.jar, early.callbackUrl, JSON_ACCEPT)).status).toBe(302)

        clockOffsetMs = 0
        const who = account('late')
        const late = await untilCallback(t, idp, who)
        clockOffsetMs = (OIDC_STATE_LIFETIME_S + 60) * 1000
        await expectRefusal(await browserGet(t, late.jar, late.callbackUrl, JSON_ACCEPT), 400, 'invalid_state')
        expect(await userByEmail(t, who.email!)).toBeUndefined()
      } finally {
        clockOffsetMs = 0
      }
    })

    it('a tampered state gets 400 invalid_state', async () => {
      const who = account('tampered')
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      const url = new URL(callbackUrl)
      const [header, payload, signature] = url.searchParams.get('state')!.split('.')
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString())
      claims.exp += 3600
      url.searchParams.set('state', [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.'))
      await expectRefusal(await browserGet(t, jar, url.toString(), JSON_ACCEPT), 400, 'invalid_state')

      url.searchParams.delete('state')
      await expectRefusal(await browserGet(t, jar, url.toString(), JSON_ACCEPT), 400, 'invalid_state')
      expect(await userByEmail(t, who.email!)).toBeUndefined()
    })

    it('the ID token must carry the nonce of the state: a state re-signed with another nonce gets 401 invalid_id_token', async () => {
      const who = account('nonce')
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      const url = new URL(callbackUrl)
      const claims = JSON.parse(Buffer.from(url.searchParams.get('state')!.split('.')[1]!, 'base64url').toString())
      const forged = await signToken(t.booted.core.config.jwtSecret, OIDC_STATE_AUDIENCE,
        { sub: claims.sub, jti: claims.jti, v: claims.v, b: claims.b, n: 'a-different-nonce' }, OIDC_STATE_LIFETIME_S)
      url.searchParams.set('state', forged)
      await expectRefusal(await browserGet(t, jar, url.toString(), JSON_ACCEPT), 401, 'invalid_id_token')
      expect(await userByEmail(t, who.email!)).toBeUndefined()
    })

    it('a callback without the binding cookie, or with another browser\'s, gets 400 state_unbound', async () => {
      const who = account('unbound')
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      const binding = jar.get(APP_HOST, OIDC_BINDING_COOKIE)!
      jar.set(APP_HOST, OIDC_BINDING_COOKIE, null)
      await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 400, 'state_unbound')
      jar.set(APP_HOST, OIDC_BINDING_COOKIE, 'another-browsers-value')
      await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 400, 'state_unbound')
      expect(await userByEmail(t, who.email!)).toBeUndefined()
      // Refusals without the cookie do not spend the state: the right browser still completes.
      jar.set(APP_HOST, OIDC_BINDING_COOKIE, binding)
      expect((await browserGet(t, jar, callbackUrl, JSON_ACCEPT)).status).toBe(302)
    })

    it('an error from the provider gets 400 idp_error', async () => {
      const { jar, callbackUrl } = await untilCallback(t, idp, account('denied'))
      const url = new URL(callbackUrl)
      url.searchParams.delete('code')
      url.searchParams.set('error', 'access_denied')
      url.searchParams.set('session_state', 'extra-parameters-are-accepted')
      const body = await expectRefusal(await browserGet(t, jar, url.toString(), JSON_ACCEPT), 400, 'idp_error')
      expect(body.message).toContain('access_denied')
    })

    it('a response naming another issuer (RFC 9207 iss) gets 400 issuer_mismatch', async () => {
      const who = account('mix-up')
      const { jar, callbackUrl } = await untilCallback(t, idp, who)
      const url = new URL(callbackUrl)
      expect(url.searchParams.get('iss')).toBe(idp.issuer)
      url.searchParams.set('iss', 'https://idp.example.test')
      await expectRefusal(await browserGet(t, jar, url.toString(), JSON_ACCEPT), 400, 'issuer_mismatch')
      expect(await userByEmail(t, who.email!)).toBeUndefined()
    })

    it('a single sign-on account has no password: change-password refused with the SSO message, password login refused', async () => {
      const who = account('no-password')
      const { session } = await ssoSignIn(t, idp, who)
      const res = await t.post('/api/auth/change-password', { currentPassword: CLINICAL_PASSWORD, newPassword: 'Another-long-passphrase-7' }, { headers: withCookie(session!) })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ success: false, code: 'sso_account', error: MESSAGES.ssoPassword })
      const row = (await userByEmail(t, who.email!))!
      for (const password of [row.password_hash, CLINICAL_PASSWORD]) {
        const login = await t.post('/api/auth/login', { email: who.email, password }, { ip: freshIp() })
        expect(login.status).toBe(401)
        expect(await login.json()).toMatchObject({ success: false, error: MESSAGES.invalidCredentials })
      }
    })

    describe('settings (spec 3)', () => {
      it('only admins read and write them: 401 without a session, 403 for a user', async () => {
        const email = uniqueEmail('oidc-user')
        await insertUser(t, { email })
        const user = await signIn(t, email, { ip: freshIp() })
        expect((await t.get('/api/auth/oidc/config')).status).toBe(401)
        expect((await t.get('/api/auth/oidc/config', { token: user.token })).status).toBe(403)
        expect((await t.put('/api/auth/oidc/config', { 'oidc.enabled': 'false' })).status).toBe(401)
        expect((await t.put('/api/auth/oidc/config', { 'oidc.enabled': 'false' }, { token: user.token })).status).toBe(403)
        expect((await oidcStatus()).oidcEnabled).toBe(true)
      })

      it('reads the six keys as strings with the secret masked; the secret is sealed at rest and in no response', async () => {
        const res = await t.get('/api/auth/oidc/config', { token: admin.token })
        const text = await res.text()
        expect(res.status).toBe(200)
        expect(text).not.toContain(idp.clientSecret)
        expect(JSON.parse(text)).toEqual({
          success: true,
          config: {
            'oidc.enabled': 'true', 'oidc.issuer': idp.issuer, 'oidc.client_id': idp.clientId,
            'oidc.client_secret': OIDC_SECRET_MASK, 'oidc.disable_local_auth': 'false', 'oidc.button_label': 'Hospital login',
          },
        })
        const [stored] = await t.db.sql<{ value: string }>`select value from clinical.app_config where key = 'oidc.client_secret'`
        expect(stored!.value).toStartWith('enc:v1:')
        expect(stored!.value).not.toContain(idp.clientSecret)
      })

      it('writing the mask back keeps the stored secret (sign-in still works)', async () => {
        await configure(t, admin, { 'oidc.client_secret': OIDC_SECRET_MASK, 'oidc.button_label': 'Hospital login' })
        expect(await getConfigValue(t.booted.core, 'oidc.client_secret')).toBe(idp.clientSecret)
        expect((await ssoSignIn(t, idp, account('mask-kept'))).res.status).toBe(302)
      })

      it('a wrong secret makes the token exchange fail: 502 with the generic message and no secret in it', async () => {
        try {
          await configure(t, admin, { 'oidc.client_secret': 'not-the-secret' })
          const { jar, callbackUrl } = await untilCallback(t, idp, account('wrong-secret'))
          const res = await browserGet(t, jar, callbackUrl, JSON_ACCEPT)
          expect(res.status).toBe(502)
          const text = await res.text()
          expect(JSON.parse(text)).toMatchObject({ success: false, code: 'oidc_token_failed', error: 'Request failed' })
          expect(text).not.toContain('not-the-secret')
        } finally {
          await configure(t, admin, { 'oidc.client_secret': idp.clientSecret })
        }
      })

      it.each([
        ['a flag other than "true"/"false"', { 'oidc.enabled': 'yes' }],
        ['a second flag other than "true"/"false"', { 'oidc.disable_local_auth': '1' }],
        ['an issuer that is not an http(s) URL', { 'oidc.issuer': 'ftp://idp.example.test' }],
        ['enabling without an issuer', { 'oidc.issuer': '' }],
      ])('refuses %s: 400 invalid_setting, nothing changed', async (_, settings) => {
        const before = await (await t.get('/api/auth/oidc/config', { token: admin.token })).json()
        const res = await t.put('/api/auth/oidc/config', settings, { token: admin.token })
        expect(res.status).toBe(400)
        expect(await res.json()).toMatchObject({ success: false, code: 'invalid_setting' })
        expect(await (await t.get('/api/auth/oidc/config', { token: admin.token })).json()).toEqual(before)
      })

      it('oidc-status follows the settings; sign-in answers 404 oidc_not_enabled while disabled', async () => {
        expect(await oidcStatus()).toEqual({ success: true, oidcEnabled: true, disableLocalAuth: false, buttonLabel: 'Hospital login' })
        try {
          await configure(t, admin, { 'oidc.enabled': 'false', 'oidc.button_label': '' })
          expect(await oidcStatus()).toMatchObject({ oidcEnabled: false, disableLocalAuth: false })
          expect((await oidcStatus()).buttonLabel).not.toBe('')
          await expectRefusal(await t.get('/api/auth/oidc', { headers: JSON_ACCEPT }), 404, 'oidc_not_enabled')
          await configure(t, admin, { 'oidc.enabled': 'true', 'oidc.disable_local_auth': 'true' })
          expect(await oidcStatus()).toMatchObject({ oidcEnabled: true, disableLocalAuth: true })
        } finally {
          await configure(t, admin, { 'oidc.enabled': 'true', 'oidc.disable_local_auth': 'false', 'oidc.button_label': 'Hospital login' })
        }
      })

      it('writes are audited without the secret', async () => {
        await configure(t, admin, { 'oidc.client_secret': idp.clientSecret })
        await flushAudit(t)
        const rows = await t.db.sql<{ details: string }>`
          select details from clinical.audit_log where action = 'oidc_settings_changed' and user_id = ${admin.user.id} order by id desc limit 1`
        expect(rows[0]!.details).toContain('oidc.client_secret')
        expect(rows[0]!.details).not.toContain(idp.clientSecret)
      })
    })

    async function oidcStatus() {
      return await (await t.get('/api/auth/oidc-status')).json() as { success: boolean; oidcEnabled: boolean; disableLocalAuth: boolean; buttonLabel: string }
    }
  })

  describe(`single sign-on on a new service (${target})`, () => {
    let idp: TestIdentityProvider
    let t: TestApp

    beforeAll(async () => {
      // This provider keeps email and name out of the ID token: the app reads them from userinfo.
      idp = await startIdentityProvider({ redirectUri: CALLBACK, claimsInIdToken: false })
      t = await startTestApp({ target, env: { APP_URL: 'http://localhost', OIDC_ALLOW_INSECURE_ISSUER: 'true' } })
      await setConfigValues(t.booted.core, {
        'oidc.enabled': 'true', 'oidc.issuer': idp.issuer, 'oidc.client_id': idp.clientId, 'oidc.client_secret': idp.clientSecret,
      })
    })
    afterAll(async () => {
      await t?.close()
      await idp?.close()
    })

    it('the very first account, made by single sign-on, becomes admin; later ones are users', async () => {
      expect(await userCount(t)).toBe(0)
      const first = account('first-ever', { name: 'Ada Admin' })
      expect((await ssoSignIn(t, idp, first)).res.status).toBe(302)
      expect(await userByEmail(t, first.email!)).toMatchObject({ role: 'admin', name: 'Ada Admin', email_verified: true })
      const second = account('second')
      expect((await ssoSignIn(t, idp, second)).res.status).toBe(302)
      expect(await userByEmail(t, second.email!)).toMatchObject({ role: 'user' })
    })

    it('with registration disabled no new account is made: 403 registration_disabled; existing accounts still sign in', async () => {
      const existing = account('existing')
      expect((await ssoSignIn(t, idp, existing)).res.status).toBe(302)
      try {
        await setConfigValues(t.booted.core, { [REGISTRATION_ENABLED]: 'false' })
        const before = await userCount(t)
        const who = account('newcomer')
        const { jar, callbackUrl } = await untilCallback(t, idp, who)
        await expectRefusal(await browserGet(t, jar, callbackUrl, JSON_ACCEPT), 403, 'registration_disabled')
        expect(await userCount(t)).toBe(before)
        expect((await ssoSignIn(t, idp, existing)).res.status).toBe(302)
      } finally {
        await setConfigValues(t.booted.core, { [REGISTRATION_ENABLED]: null })
      }
    })
  })

  describe(`issuer address rules without OIDC_ALLOW_INSECURE_ISSUER (${target})`, () => {
    let idp: TestIdentityProvider
    let t: TestApp
    let admin: SignedIn

    beforeAll(async () => {
      idp = await startIdentityProvider({ redirectUri: CALLBACK })
      t = await startTestApp({ target, env: { APP_URL: 'http://localhost' } })
      const email = uniqueEmail('strict-admin')
      await insertUser(t, { email, role: 'admin' })
      admin = await signIn(t, email, { ip: freshIp() })
    })
    afterAll(async () => {
      await t?.close()
      await idp?.close()
    })

    it.each([
      ['a plain http issuer (the real provider)', () => idp.issuer, 'issuer_not_https'],
      ['an https issuer at a private address', () => 'https://10.1.2.3', 'issuer_private_address'],
      ['an https issuer whose name resolves to loopback', () => 'https://localhost', 'issuer_private_address'],
      ['an https issuer at an IPv4-mapped loopback address', () => 'https://[::ffff:127.0.0.1]', 'issuer_private_address'],
      ['an https issuer at a unique-local IPv6 address', () => 'https://[fd00::1]', 'issuer_private_address'],
    ])('refuses %s at sign-in: 400 with the rule, no cookie, nothing stored, the provider never asked', async (_, issuer, code) => {
      // Saving checks the format only.
      await configure(t, admin, { 'oidc.enabled': 'true', 'oidc.issuer': issuer(), 'oidc.client_id': idp.clientId, 'oidc.client_secret': idp.clientSecret })
      const [users, kv, requests] = [await userCount(t), await kvCount(), idp.requests]

      const res = await t.get('/api/auth/oidc', { headers: JSON_ACCEPT })
      const body = await expectRefusal(res, 400, code)
      if (code === 'issuer_not_https') expect(body.message).toContain('must use https')
      else expect(body.message).toContain(OUTBOUND_ADDRESS_RULE)
      expect(res.headers.get('location')).toBeNull()
      expect(res.headers.getSetCookie()).toEqual([])

      const page = await browserGet(t, new CookieJar(), '/api/auth/oidc')
      expect(page.status).toBe(400)
      expect(await page.text()).toContain(`href="/?error=${code}"`)

      expect([await userCount(t), await kvCount(), idp.requests]).toEqual([users, kv, requests])
    })

    async function kvCount() {
      return (await t.db.sql<{ n: number }>`select count(*)::int as n from core.kv`)[0]!.n
    }
  })
}

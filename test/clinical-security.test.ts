// The clinical service's security suite (spec 2, Authentication and Errors): forged, tampered and expired
// tokens, tokens of ended sessions and deleted users, a reset token used twice, SQL and header injection in every
// account input, and oversize bodies. Each attempt must be refused with a 4xx and change nothing.
// The two-factor and single sign-on attacks (a reused backup code, OIDC state replay and expiry, a private-address
// issuer) live beside their features in clinical-2fa.test.ts and clinical-oidc.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { SignJWT } from 'jose'
import { signToken } from '../src/auth/jwt'
import { TOKEN_AUDIENCE, WEB_TOKEN_LIFETIME_S } from '../plugins/clinical/services/sessions'
import { ACCOUNT_BODY_LIMIT as AUTH_BODY_LIMIT } from '../plugins/clinical/routes/index'
import { CLINICAL_BODY_LIMIT } from '../plugins/clinical/envelope'
import { QUIZ_BODY_LIMIT } from '../plugins/quiz/envelope'

const CHUNK_BYTES = 16 * 1024
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, MOBILE, freshIp, insertUser, signIn, uniqueEmail, withCookie } from './support/clinical'
import { startSmtpSink, linkIn, type SmtpSink } from './support/smtp'
import { settle } from './support/clinical'

const JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789'
const enc = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** Inputs that break naive SQL or header handling. */
const HOSTILE = [
  "' or '1'='1",
  "admin@example.test' --",
  "'; drop table clinical.users; --",
  'x" or 1=1 --',
  'a@b.test\r\nBcc: victim@example.test',
  'a@b.test\nSet-Cookie: app_auth=forged',
  '%00\u0000nul',
  '${7*7}{{7*7}}<script>alert(1)</script>',
]

describe.each(databaseTargets())('clinical security suite (%s)', (target) => {
  let app: TestApp
  let smtp: SmtpSink
  let clock = Date.parse('2026-05-04T09:00:00Z')

  beforeAll(async () => {
    smtp = await startSmtpSink()
    app = await startTestApp({
      target,
      env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), APP_URL: 'http://localhost' },
      boot: { now: () => clock },
    })
  })
  afterAll(async () => {
    await app.close()
    await smtp.close()
  })

  /** A snapshot of what an attack must not change. */
  const snapshot = async () => ({
    users: await app.db.sql`select id, email, name, password_hash, role, email_verified, disabled from clinical.users order by id`,
    sessions: await app.db.sql`select token_hash, last_activity from clinical.user_sessions order by token_hash`,
  })
  const meWith = (token: string) => app.get('/api/auth/me', { token })
  const expectRefused = async (res: Response, status = 401) => {
    expect(res.status).toBe(status)
    const body = (await res.json()) as { success: boolean; error: string }
    expect(body.success).toBe(false)
    expect(typeof body.error).toBe('string')
    return body
  }

  describe('tokens', () => {
    let token: string
    let userId: number
    beforeAll(async () => {
      const email = uniqueEmail('victim')
      userId = await insertUser(app, { email })
      token = (await signIn(app, email, { ip: freshIp() })).token
      expect((await meWith(token)).status).toBe(200)
    })

    it('refuses a token whose payload was changed (another user id) under the original signature', async () => {
      const other = await insertUser(app, { email: uniqueEmail('other'), role: 'admin' })
      const [header, payload, signature] = token.split('.')
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>
      const before = await snapshot()
      await expectRefused(await meWith(`${header}.${enc({ ...claims, sub: String(other) })}.${signature}`))
      await expectRefused(await meWith(`${header}.${enc({ ...claims, exp: (claims.exp as number) + 1e6 })}.${signature}`))
      await expectRefused(await meWith(`${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`))
      expect(await snapshot()).toEqual(before)
    })

    it('refuses a token signed with another secret, with alg none, or for the quiz service', async () => {
      const claims = { sub: String(userId), sid: crypto.randomUUID() }
      const wrongKey = await signToken('another-secret-another-secret-another-secret', TOKEN_AUDIENCE, claims, 3600, clock)
      await expectRefused(await meWith(wrongKey))
      const none = `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ ...claims, aud: TOKEN_AUDIENCE, exp: Math.floor(clock / 1000) + 3600 })}.`
      await expectRefused(await meWith(none))
      const hs512 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).setAudience(TOKEN_AUDIENCE)
        .setExpirationTime(Math.floor(clock / 1000) + 3600).sign(new TextEncoder().encode(JWT_SECRET))
      await expectRefused(await meWith(hs512))
      const quiz = await signToken(JWT_SECRET, 'quiz', { sub: String(userId), ver: 0 }, 3600, clock)
      await expectRefused(await meWith(quiz))
      await expectRefused(await meWith('garbage'))
      await expectRefused(await app.get('/api/auth/me', { headers: withCookie('a.b.c') }))
    })

    it('refuses an expired token', async () => {
      const email = uniqueEmail('expiring')
      await insertUser(app, { email })
      const s = await signIn(app, email, { headers: { 'x-client': 'web' }, ip: freshIp() })
      const saved = clock
      clock += WEB_TOKEN_LIFETIME_S * 1000 + 1000
      try {
        const body = await expectRefused(await app.get('/api/auth/me', { headers: withCookie(s.token) }))
        expect(body.error).toBe('Invalid or expired token')
      } finally {
        clock = saved
      }
    })

    it('refuses the token of a deleted session and of a deleted user', async () => {
      const email = uniqueEmail('ended')
      const id = await insertUser(app, { email })
      const first = await signIn(app, email, { ip: freshIp() })
      const second = await signIn(app, email, { ip: freshIp() })
      await app.db.sql`delete from clinical.user_sessions where id = ${first.sessionId}::uuid`
      expect((await expectRefused(await meWith(first.token))).error).toBe('Session revoked')
      expect((await meWith(second.token)).status).toBe(200)
      await app.db.sql`delete from clinical.users where id = ${id}`
      await expectRefused(await meWith(second.token))
    })

    it('a regular user cannot reach admin routes, whatever the token says about roles', async () => {
      const [header, payload] = token.split('.')
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>
      const forged = `${header}.${enc({ ...claims, role: 'admin' })}.${token.split('.')[2]}`
      await expectRefused(await app.get('/api/auth/oidc/config', { token: forged }))
      const res = await app.get('/api/auth/oidc/config', { token })
      expect(res.status).toBe(403)
    })
  })

  it('a reset token works once; the second use is refused and the password stays the first new one', async () => {
    const email = uniqueEmail('reset-twice')
    await insertUser(app, { email })
    const ip = freshIp()
    expect((await app.post('/api/auth/forgot-password', { email }, { ip })).status).toBe(200)
    const mail = await smtp.waitFor((m) => m.to.includes(email.toLowerCase()))
    const { token } = linkIn(mail, '/reset-password')
    const first = await app.post('/api/auth/reset-password', { token, newPassword: 'First-new-password-1' }, { ip })
    expect(first.status).toBe(200)
    const before = await snapshot()
    const second = await app.post('/api/auth/reset-password', { token, newPassword: 'Second-new-password-2' }, { ip })
    await expectRefused(second, 400)
    expect(await snapshot()).toEqual(before)
    await signIn(app, email, { password: 'First-new-password-1', ip: freshIp() })
    const old = await app.post('/api/auth/login', { email, password: 'Second-new-password-2' }, { headers: MOBILE, ip: freshIp() })
    expect(old.status).toBe(401)
  })

  describe('injection in every account input', () => {
    const admin = { email: '', token: '' }
    beforeAll(async () => {
      admin.email = uniqueEmail('inj-admin')
      await insertUser(app, { email: admin.email, role: 'admin' })
      admin.token = (await signIn(app, admin.email, { ip: freshIp() })).token
    })

    /** Every account route with a body, and the fields of each that take text. */
    const routes: Array<{ path: string; body: (v: string) => Record<string, unknown>; auth?: boolean }> = [
      { path: '/api/auth/register', body: (v) => ({ name: v, email: v, password: `${v}-Long-enough-1` }) },
      { path: '/api/auth/register', body: (v) => ({ name: v, email: uniqueEmail('inj'), password: `${v}-Long-enough-1`, challengeToken: v }) },
      { path: '/api/auth/login', body: (v) => ({ email: v, password: v }) },
      { path: '/api/auth/login', body: (v) => ({ email: admin.email, password: v, totpCode: v, backupCode: v }) },
      { path: '/api/auth/resend-verification', body: (v) => ({ email: v }) },
      { path: '/api/auth/forgot-password', body: (v) => ({ email: v, challengeToken: v }) },
      { path: '/api/auth/reset-password', body: (v) => ({ token: v, newPassword: `${v}-Long-enough-1` }) },
      { path: '/api/auth/change-password', body: (v) => ({ currentPassword: v, newPassword: `${v}-Long-enough-1` }), auth: true },
      { path: '/api/auth/verify-2fa', body: (v) => ({ code: v }), auth: true },
      { path: '/api/auth/disable-2fa', body: (v) => ({ password: v }), auth: true },
      { path: '/api/auth/2fa/backup-codes', body: (v) => ({ password: v }), auth: true },
    ]

    it('answers each hostile value with a 4xx or a vague success, never a 5xx, and changes no account', async () => {
      const before = await snapshot()
      const mailsBefore = smtp.messages.length
      for (const route of routes) {
        for (const value of HOSTILE) {
          const res = await app.post(route.path, route.body(value), { ip: freshIp(), headers: MOBILE, ...(route.auth ? { token: admin.token } : {}) })
          expect(res.status, `${route.path} ${JSON.stringify(value)}`).toBeLessThan(500)
          if (route.path === '/api/auth/register' && res.status === 200) {
            // Only a well-formed address registers; a hostile value may be its name or password, stored as text.
            const body = (await res.json()) as { needsVerification: boolean }
            expect(body.needsVerification).toBe(true)
          } else if (res.status === 200) {
            // The vague answers: resend-verification and forgot-password say the same for any input.
            expect(['/api/auth/resend-verification', '/api/auth/forgot-password']).toContain(route.path)
          }
          for (const cookie of res.headers.getSetCookie()) expect(cookie).not.toContain('forged')
        }
      }
      const after = await snapshot()
      // Existing accounts are untouched: the only new rows are registrations with well-formed addresses.
      expect(after.users.slice(0, before.users.length)).toEqual(before.users)
      for (const row of after.users.slice(before.users.length)) {
        expect((row as { email: string }).email).toMatch(/^[^\s'"]+@example\.test$/)
      }
      // The table is still there and answers; no mail went to an injected Bcc.
      await settle()
      for (const mail of smtp.messages.slice(mailsBefore)) expect(mail.to.join(',')).not.toContain('victim@')
    })

    it('path and query inputs are parameters, not SQL', async () => {
      for (const value of HOSTILE) {
        const verify = await app.get(`/api/auth/verify-email?token=${encodeURIComponent(value)}`)
        expect(verify.status).toBe(400)
        const session = await app.request(`/api/auth/sessions/${encodeURIComponent(value)}`, { method: 'DELETE', token: admin.token })
        expect(session.status).toBe(404)
      }
      expect((await app.get('/api/auth/me', { token: admin.token })).status).toBe(200)
    })

    it('hostile header values are refused or ignored', async () => {
      const cases: Array<Record<string, string>> = [
        { authorization: "Bearer ' or 1=1 --" },
        { authorization: 'Bearer a b c' },
        { authorization: 'Basic YWRtaW46YWRtaW4=' },
        { cookie: "app_auth=' or 1=1 --" },
        { cookie: 'app_auth=a; app_auth=b' },
        { 'x-client': "web'; drop table clinical.users; --" },
        { 'x-forwarded-for': "1.2.3.4' or 1=1 --" },
      ]
      for (const headers of cases) {
        const res = await app.get('/api/auth/me', { headers })
        expect(res.status, JSON.stringify(headers)).toBe(401)
      }
      // A hostile X-Forwarded-For is not an IP address: it is refused, and the session keeps the socket's address.
      const email = uniqueEmail('xff')
      await insertUser(app, { email })
      const s = await signIn(app, email, { ip: "10.9.9.9' or '1'='1" })
      const [row] = await app.db.sql<{ ip_address: string }>`select ip_address from clinical.user_sessions where id = ${s.sessionId}::uuid`
      expect(row!.ip_address).toBe('127.0.0.1')
    })
  })

  describe('oversize bodies', () => {
    /** A JSON body of 16 MiB sent in chunks, as a client without Content-Length does; counts what was pulled. */
    const endlessJson = () => {
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"email":"a@example.test","password":"'))
          if (sent >= 16 * 1024 * 1024) return controller.close()
          sent += CHUNK_BYTES
          controller.enqueue(new Uint8Array(CHUNK_BYTES).fill(0x78))
        },
      })
      return { stream, pulled: () => sent }
    }

    it('refuses a declared body over the account routes\' limit with 413 before reading it', async () => {
      const body = JSON.stringify({ email: 'a@example.test', password: 'x'.repeat(AUTH_BODY_LIMIT) })
      const res = await app.request('/api/auth/login', {
        method: 'POST', body, ip: freshIp(),
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      })
      const refused = await expectRefused(res, 413)
      expect(refused.error).toContain(String(AUTH_BODY_LIMIT))
    })

    it('refuses a chunked body (no Content-Length) over the limit with 413, and stops reading it there', async () => {
      const { stream, pulled } = endlessJson()
      const res = await app.request('/api/auth/login', {
        method: 'POST', body: stream, ip: freshIp(), headers: { 'content-type': 'application/json' }, duplex: 'half',
      } as Parameters<TestApp['request']>[1])
      const refused = await expectRefused(res, 413)
      expect(refused.error).toContain(String(AUTH_BODY_LIMIT))
      // read just past the limit, not the 16 MiB the client offered
      expect(pulled()).toBeLessThan(AUTH_BODY_LIMIT + 4 * CHUNK_BYTES)
      // a chunked body within the limit is read and parsed as usual
      const small = new Blob([JSON.stringify({ email: 'nobody@example.test', password: 'wrong password' })]).stream()
      const ok = await app.request('/api/auth/login', { method: 'POST', body: small, ip: freshIp(), headers: { 'content-type': 'application/json' }, duplex: 'half' } as Parameters<TestApp['request']>[1])
      expect(ok.status).toBe(401)
    })

    it('the other JSON routes have their limit too: a chunked body over it is 413 in either service', async () => {
      for (const [path, limit] of [['/api/auth/me', CLINICAL_BODY_LIMIT], ['/quiz/api/auth/login', QUIZ_BODY_LIMIT]] as const) {
        const { stream, pulled } = endlessJson()
        const res = await app.request(path, { method: path.endsWith('/me') ? 'PUT' : 'POST', body: stream, ip: freshIp(), headers: { 'content-type': 'application/json' }, duplex: 'half' } as Parameters<TestApp['request']>[1])
        expect(res.status, path).toBe(413)
        expect(pulled()).toBeLessThan(limit + 4 * CHUNK_BYTES)
      }
    })

    it('refuses over-long fields inside the limit with 400, never hashing them', async () => {
      const before = await snapshot()
      for (const [path, body] of [
        ['/api/auth/login', { email: 'a@example.test', password: 'x'.repeat(300) }],
        ['/api/auth/login', { email: `${'a'.repeat(300)}@example.test`, password: CLINICAL_PASSWORD }],
        ['/api/auth/register', { name: 'n'.repeat(500), email: uniqueEmail('long'), password: CLINICAL_PASSWORD }],
        ['/api/auth/reset-password', { token: 't'.repeat(1000), newPassword: CLINICAL_PASSWORD }],
        ['/api/auth/login', { email: 'a@example.test', password: CLINICAL_PASSWORD, totpCode: '1'.repeat(100) }],
      ] as const) {
        const res = await app.post(path, body, { ip: freshIp() })
        expect(res.status, `${path} ${JSON.stringify(body).slice(0, 60)}`).toBe(400)
      }
      expect(await snapshot()).toEqual(before)
    })

    it('refuses a body that is not JSON, or JSON of the wrong shape, with 400', async () => {
      for (const body of ['{"email":', 'null', '[]', '"text"', '{"email": {"$ne": null}, "password": {"$ne": null}}']) {
        const res = await app.request('/api/auth/login', { method: 'POST', body, headers: { 'content-type': 'application/json' }, ip: freshIp() })
        expect(res.status, body).toBe(400)
      }
    })
  })
})

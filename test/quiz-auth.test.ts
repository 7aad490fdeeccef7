// Spec 1, Auth, Errors, Limits, Authentication: accounts of the quiz service through the real app, with real
// mail (an SMTP listener) and a real bot-challenge verifier.
import { afterAll, afterEach, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { PASSWORD_MIN } from '../plugins/quiz/models/accounts'
import { FORGOT_PASSWORD_RULE, LOGIN_RULE, RESET_TOKEN_LIFETIME_S, VERIFY_TOKEN_LIFETIME_S } from '../plugins/quiz/services/accounts'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { linkIn, startSmtpSink, type SmtpSink } from './support/smtp'
import { PASS_TOKEN, startChallengeServer, type ChallengeServer } from './support/challenge'
import {
  API, PASSWORD, expectDetail, expectUserResponse, expectValidation, freshIp, isResetMail, isVerifyMail, login, loginToken,
  register, settle, uniqueEmail, userCount, type TokenBody, type UserBody,
} from './support/quiz'


// Each file boots real apps (and the first one migrates the PGlite template); password hashing is deliberately slow.
setDefaultTimeout(30_000)
const VERIFY_TOKEN_TTL_MS = VERIFY_TOKEN_LIFETIME_S * 1000
const RESET_TOKEN_TTL_MS = RESET_TOKEN_LIFETIME_S * 1000
const MINUTE_MS = 60_000

// The tests below go by the implementation's constants; this pins those to spec 1, Limits (and the token
// lifetimes the tests' names promise), so a wrong constant still fails.
describe('quiz account limits', () => {
  it('password at least 8 characters; login 10 per client address per 15 minutes; forgot-password 3 per email address per hour; verification link 24 hours, reset link 1 hour', () => {
    expect(PASSWORD_MIN).toBe(8)
    expect(LOGIN_RULE).toMatchObject({ limit: 10, windowS: 15 * 60 })
    expect(FORGOT_PASSWORD_RULE).toMatchObject({ limit: 3, windowS: 3600 })
    expect(VERIFY_TOKEN_LIFETIME_S).toBe(24 * 3600)
    expect(RESET_TOKEN_LIFETIME_S).toBe(3600)
  })
})

let sink: SmtpSink
beforeAll(async () => {
  sink = await startSmtpSink()
})
afterAll(() => sink.close())

/** Registers a later user and waits for the verification mail; the user stays unverified. */
async function registerUnverified(t: TestApp, tag: string, extra: Record<string, unknown> = {}) {
  const email = uniqueEmail(tag)
  const res = await register(t, email, extra)
  expect(res.status).toBe(200)
  const mail = await sink.waitFor(isVerifyMail(email))
  return { email, link: linkIn(mail, '/quiz/verify-email') }
}

/** Registers a later user, follows the mailed link through the API, and logs in. */
async function registerVerified(t: TestApp, tag: string) {
  const { email, link } = await registerUnverified(t, tag)
  const res = await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(link.token)}`)
  expect(res.status).toBe(200)
  return { email, token: await loginToken(t, email, PASSWORD) }
}

async function requestReset(t: TestApp, email: string) {
  const res = await t.post(`${API}/auth/forgot-password`, { email }, { ip: freshIp() })
  expect(res.status).toBe(200)
  return linkIn(await sink.waitFor(isResetMail(email)), '/quiz/reset-password')
}

/** A token whose payload was changed after signing (a JWT's middle part), or whose secret part was altered. */
function tamper(token: string): string {
  const parts = token.split('.')
  if (parts.length === 3) {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>
    payload.role = 'admin'
    payload.sub = typeof payload.sub === 'string' ? `${payload.sub}0` : 1
    return [parts[0], Buffer.from(JSON.stringify(payload)).toString('base64url'), parts[2]].join('.')
  }
  const i = Math.floor(token.length / 2)
  return token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1)
}

for (const target of databaseTargets()) {
  describe(`quiz accounts [${target}]`, () => {
    let t: TestApp
    let firstRes: Response
    let firstBody: TokenBody
    const adminEmail = uniqueEmail('first-admin')
    beforeAll(async () => {
      t = await startTestApp({ target, env: sink.env })
      firstRes = await register(t, adminEmail)
      firstBody = (await firstRes.clone().json()) as TokenBody
    })
    afterAll(() => t.close())

    it('the first user ever becomes admin and verified, and gets {access_token, token_type: bearer} at once', async () => {
      expect(firstRes.status).toBe(200)
      expect(firstBody.token_type).toBe('bearer')
      expect(typeof firstBody.access_token).toBe('string')
      expect(firstBody).not.toHaveProperty('requires_verification')
      const me = await t.get(`${API}/auth/me`, { token: firstBody.access_token })
      expect(me.status).toBe(200)
      expectUserResponse((await me.json()) as UserBody, { email: adminEmail, role: 'admin' })
      expect((await login(t, adminEmail, PASSWORD)).status).toBe(200)
      const [row] = await t.db.sql<{ role: string }>`select role from quiz.users where lower(email) = lower(${adminEmail})`
      expect(row?.role).toBe('admin')
      await settle()
      expect(sink.to(adminEmail)).toHaveLength(0)
    })

    it('a later user gets {requires_verification: true, message}, role user, and a mail linking to /quiz/verify-email', async () => {
      const email = uniqueEmail('later')
      const res = await register(t, email)
      expect(res.status).toBe(200)
      const body = (await res.json()) as Record<string, unknown>
      expect(body.requires_verification).toBe(true)
      expect(typeof body.message).toBe('string')
      expect(body).not.toHaveProperty('access_token')
      const mail = await sink.waitFor(isVerifyMail(email))
      expect(mail.text).toContain('http://localhost/quiz/verify-email?token=')
      expect(mail.text).toContain('valid for 24 hours')
      expect(mail.subject.length).toBeGreaterThan(0)
      const [row] = await t.db.sql<{ role: string }>`select role from quiz.users where lower(email) = lower(${email})`
      expect(row?.role).toBe('user')
      await expectDetail(await login(t, email, PASSWORD), 403)
    })

    it('following the mailed link shows an HTML page saying the email is verified; then login works', async () => {
      const { email, link } = await registerUnverified(t, 'via-link')
      const page = await t.get(link.pathAndQuery, { headers: { accept: 'text/html' } })
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type') ?? '').toContain('text/html')
      const html = await page.text()
      expect(html).toMatch(/<html/i)
      expect(html).toMatch(/verified/i)
      const token = await loginToken(t, email, PASSWORD)
      const me = (await (await t.get(`${API}/auth/me`, { token })).json()) as UserBody
      expectUserResponse(me, { email, role: 'user' })
    })

    it('GET /api/auth/verify-email verifies once: {message}, then the same token is 400', async () => {
      const { email, link } = await registerUnverified(t, 'verify-api')
      const res = await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(link.token)}`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as { message: unknown }
      expect(typeof body.message).toBe('string')
      expect((await login(t, email, PASSWORD)).status).toBe(200)
      await expectDetail(await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(link.token)}`), 400)
    })

    it('verify-email with a garbage token is 400, and without a token 422', async () => {
      await expectDetail(await t.get(`${API}/auth/verify-email?token=not-a-real-token-${Date.now()}`), 400)
      const missing = await t.get(`${API}/auth/verify-email`)
      expect(missing.status).toBe(422)
      const body = (await missing.json()) as { detail: Array<{ loc: unknown[] }> }
      expect(body.detail.some((d) => d.loc[0] === 'query' && d.loc.includes('token'))).toBe(true)
    })

    it('registering an existing email in any letter case is 409 and creates no second user or mail', async () => {
      const { email } = await registerUnverified(t, 'dup')
      const res = await register(t, email.toUpperCase())
      await expectDetail(res, 409)
      await expectDetail(await register(t, email), 409)
      expect(await userCount(t, email)).toBe(1)
      await settle()
      expect(sink.to(email)).toHaveLength(1)
    })

    it('a password one character under the minimum is 422 at body.password; the minimum itself is accepted', async () => {
      const short = uniqueEmail('short-pw')
      await expectValidation(await register(t, short, { password: 'x'.repeat(PASSWORD_MIN - 1) }), 'password')
      expect(await userCount(t, short)).toBe(0)
      const exact = uniqueEmail('exact-pw')
      const ok = await register(t, exact, { password: 'y'.repeat(PASSWORD_MIN) })
      expect(ok.status).toBe(200)
      expect(await userCount(t, exact)).toBe(1)
    })

    it('an invalid email is 422 at body.email and creates no user', async () => {
      const res = await t.post(`${API}/auth/register`, { email: 'not-an-email', password: PASSWORD, name: 'x' }, { ip: freshIp() })
      await expectValidation(res, 'email')
      expect(await userCount(t, 'not-an-email')).toBe(0)
    })

    it('without a configured bot challenge the challenge_token field is ignored', async () => {
      const email = uniqueEmail('no-challenge')
      const res = await register(t, email, { challenge_token: 'anything-at-all' })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { requires_verification: boolean }).requires_verification).toBe(true)
      const login1 = await login(t, adminEmail, PASSWORD, { challenge_token: 'whatever' })
      expect(login1.status).toBe(200)
    })

    it('login answers 401 with the same detail for a wrong password and for an unknown email', async () => {
      const { email } = await registerVerified(t, 'wrong-pw')
      const wrong = await expectDetail(await login(t, email, 'wrong-password-1'), 401)
      const unknown = await expectDetail(await login(t, uniqueEmail('nobody'), PASSWORD), 401)
      expect(unknown).toBe(wrong)
    })

    it('login of an unverified user is 403', async () => {
      const { email } = await registerUnverified(t, 'unverified')
      await expectDetail(await login(t, email, PASSWORD), 403)
    })

    it('login compares the email case-insensitively', async () => {
      const { email } = await registerVerified(t, 'MixedCase')
      expect((await login(t, email.toUpperCase(), PASSWORD)).status).toBe(200)
      expect((await login(t, email.toLowerCase(), PASSWORD)).status).toBe(200)
    })

    it('one-time tokens keep to their purpose: a verification token cannot reset a password, a reset token cannot verify', async () => {
      const { email, link: verify } = await registerUnverified(t, 'purpose')
      await expectDetail(await t.post(`${API}/auth/reset-password`, { token: verify.token, new_password: 'hijacked-pass-1' }, { ip: freshIp() }), 400)
      expect((await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(verify.token)}`)).status).toBe(200)
      const reset = await requestReset(t, email)
      await expectDetail(await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(reset.token)}`), 400)
      await expectDetail(await login(t, email, 'hijacked-pass-1'), 401)
      expect((await t.post(`${API}/auth/reset-password`, { token: reset.token, new_password: 'rightful-pass-1' }, { ip: freshIp() })).status).toBe(200)
    })

    it('login counts every attempt per client address: the 11th in 15 minutes is 429 with Retry-After; another address still gets in', async () => {
      const { email } = await registerVerified(t, 'limited')
      const ip = freshIp()
      for (let i = 0; i < LOGIN_RULE.limit; i++) {
        const ok = i % 2 === 0
        const res = await login(t, email, ok ? PASSWORD : 'wrong-password-1', {}, ip)
        expect(res.status).toBe(ok ? 200 : 401)
      }
      const blocked = await login(t, email, PASSWORD, {}, ip)
      await expectDetail(blocked, 429)
      const retryAfter = Number(blocked.headers.get('retry-after'))
      expect(Number.isInteger(retryAfter)).toBe(true)
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(LOGIN_RULE.windowS)
      expect((await login(t, email, PASSWORD, {}, freshIp())).status).toBe(200)
    })

    it('resend-verification answers the same message for unknown, verified and unverified addresses, and mails only the unverified one', async () => {
      const { email: pending, link: first } = await registerUnverified(t, 'resend')
      const unknown = uniqueEmail('resend-unknown')
      const answers: string[] = []
      for (const email of [unknown, adminEmail, pending]) {
        const res = await t.post(`${API}/auth/resend-verification`, { email }, { ip: freshIp() })
        expect(res.status).toBe(200)
        const body = (await res.json()) as { message: string }
        expect(typeof body.message).toBe('string')
        answers.push(body.message)
      }
      expect(new Set(answers).size).toBe(1)
      const second = await sink.waitFor((m) => isVerifyMail(pending)(m) && !m.text.includes(first.token))
      const link = linkIn(second, '/quiz/verify-email')
      expect((await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(link.token)}`)).status).toBe(200)
      expect((await login(t, pending, PASSWORD)).status).toBe(200)
      await settle()
      expect(sink.to(unknown)).toHaveLength(0)
      expect(sink.to(adminEmail)).toHaveLength(0)
      expect(sink.to(pending)).toHaveLength(2)
    })

    it('forgot-password answers the same message for unknown and known addresses and mails a reset link only to the known one', async () => {
      const { email } = await registerVerified(t, 'forgot')
      const unknown = uniqueEmail('forgot-unknown')
      const known = await t.post(`${API}/auth/forgot-password`, { email }, { ip: freshIp() })
      const missing = await t.post(`${API}/auth/forgot-password`, { email: unknown }, { ip: freshIp() })
      expect(known.status).toBe(200)
      expect(missing.status).toBe(200)
      const a = (await known.json()) as { message: string }
      const b = (await missing.json()) as { message: string }
      expect(typeof a.message).toBe('string')
      expect(b.message).toBe(a.message)
      const mail = await sink.waitFor(isResetMail(email))
      expect(mail.text).toContain('http://localhost/quiz/reset-password?token=')
      await settle()
      expect(sink.to(unknown)).toHaveLength(0)
    })

    it('reset-password sets the new password once: new login works, the old is 401, earlier tokens are 401, the token again is 400', async () => {
      const { email, token: before } = await registerVerified(t, 'reset')
      const link = await requestReset(t, email)
      const res = await t.post(`${API}/auth/reset-password`, { token: link.token, new_password: 'brand-new-pass-2' }, { ip: freshIp() })
      expect(res.status).toBe(200)
      expect(typeof ((await res.json()) as { message: unknown }).message).toBe('string')
      await expectDetail(await login(t, email, PASSWORD), 401)
      expect((await login(t, email, 'brand-new-pass-2')).status).toBe(200)
      await expectDetail(await t.get(`${API}/auth/me`, { token: before }), 401)
      await expectDetail(await t.post(`${API}/auth/reset-password`, { token: link.token, new_password: 'third-pass-333' }, { ip: freshIp() }), 400)
      expect((await login(t, email, 'brand-new-pass-2')).status).toBe(200)
      await expectDetail(await login(t, email, 'third-pass-333'), 401)
    })

    it('reset-password with a garbage token is 400; a too-short new_password is 422 and leaves the token usable', async () => {
      await expectDetail(await t.post(`${API}/auth/reset-password`, { token: `garbage-${Date.now()}`, new_password: 'whatever-123' }, { ip: freshIp() }), 400)
      const { email } = await registerVerified(t, 'reset-short')
      const link = await requestReset(t, email)
      await expectValidation(
        await t.post(`${API}/auth/reset-password`, { token: link.token, new_password: 'z'.repeat(PASSWORD_MIN - 1) }, { ip: freshIp() }),
        'new_password',
      )
      expect((await login(t, email, PASSWORD)).status).toBe(200)
      const ok = await t.post(`${API}/auth/reset-password`, { token: link.token, new_password: 'z'.repeat(PASSWORD_MIN) }, { ip: freshIp() })
      expect(ok.status).toBe(200)
      expect((await login(t, email, 'z'.repeat(PASSWORD_MIN))).status).toBe(200)
    })

    it('forgot-password allows 3 requests per email address per hour: the 4th is 429, only 3 mails arrive, other addresses are unaffected', async () => {
      const { email } = await registerVerified(t, 'forgot-limit')
      const { email: other } = await registerVerified(t, 'forgot-other')
      for (let i = 0; i < FORGOT_PASSWORD_RULE.limit; i++) {
        expect((await t.post(`${API}/auth/forgot-password`, { email }, { ip: freshIp() })).status).toBe(200)
      }
      const blocked = await t.post(`${API}/auth/forgot-password`, { email }, { ip: freshIp() })
      await expectDetail(blocked, 429)
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
      const otherRes = await t.post(`${API}/auth/forgot-password`, { email: other }, { ip: freshIp() })
      expect(otherRes.status).toBe(200)
      await sink.waitFor(isResetMail(other))
      const deadline = Date.now() + 5000
      while (sink.messages.filter(isResetMail(email)).length < FORGOT_PASSWORD_RULE.limit && Date.now() < deadline) await settle(100)
      await settle(600)
      expect(sink.messages.filter(isResetMail(email))).toHaveLength(FORGOT_PASSWORD_RULE.limit)
    })

    it('GET /api/auth/me returns the caller as UserResponse', async () => {
      const { email, token } = await registerVerified(t, 'me')
      const res = await t.get(`${API}/auth/me`, { token })
      expect(res.status).toBe(200)
      expectUserResponse((await res.json()) as UserBody, { email, name: email.split('@')[0], role: 'user' })
    })

    it('GET /api/auth/me without a token, with a garbage token or with a tampered token is 401', async () => {
      await expectDetail(await t.get(`${API}/auth/me`), 401)
      await expectDetail(await t.get(`${API}/auth/me`, { token: 'garbage' }), 401)
      await expectDetail(await t.get(`${API}/auth/me`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } }), 401)
      await expectDetail(await t.get(`${API}/auth/me`, { token: tamper(firstBody.access_token) }), 401)
      expect((await t.get(`${API}/auth/me`, { token: firstBody.access_token })).status).toBe(200)
    })

    it('PUT /api/auth/me changes the name and keeps the token working', async () => {
      const { email, token } = await registerVerified(t, 'rename')
      const res = await t.put(`${API}/auth/me`, { name: 'Renamed Person' }, { token })
      expect(res.status).toBe(200)
      expectUserResponse((await res.json()) as UserBody, { email, name: 'Renamed Person' })
      const me = (await (await t.get(`${API}/auth/me`, { token })).json()) as UserBody
      expect(me.name).toBe('Renamed Person')
      expect((await login(t, email, PASSWORD)).status).toBe(200)
    })

    it('PUT /api/auth/me: new_password without current_password or with a wrong one is 400 and the password stays', async () => {
      const { email, token } = await registerVerified(t, 'pw-guard')
      await expectDetail(await t.put(`${API}/auth/me`, { new_password: 'another-pass-1' }, { token }), 400)
      await expectDetail(await t.put(`${API}/auth/me`, { current_password: 'not-my-password', new_password: 'another-pass-1' }, { token }), 400)
      expect((await login(t, email, PASSWORD)).status).toBe(200)
      await expectDetail(await login(t, email, 'another-pass-1'), 401)
      expect((await t.get(`${API}/auth/me`, { token })).status).toBe(200)
    })

    it('PUT /api/auth/me: a new_password under 8 characters is 422', async () => {
      const { email, token } = await registerVerified(t, 'pw-short')
      await expectValidation(await t.put(`${API}/auth/me`, { current_password: PASSWORD, new_password: 'q'.repeat(PASSWORD_MIN - 1) }, { token }), 'new_password')
      expect((await login(t, email, PASSWORD)).status).toBe(200)
    })

    it('PUT /api/auth/me with the right current_password changes the password and returns a fresh access_token; older tokens stop working', async () => {
      const { email, token } = await registerVerified(t, 'pw-change')
      const res = await t.put(`${API}/auth/me`, { current_password: PASSWORD, new_password: 'changed-pass-9' }, { token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as UserBody
      expectUserResponse(body, { email })
      expect(typeof body.access_token).toBe('string')
      const me = await t.get(`${API}/auth/me`, { token: body.access_token! })
      expect(me.status).toBe(200)
      expect(((await me.json()) as UserBody).email).toBe(email)
      await expectDetail(await t.get(`${API}/auth/me`, { token }), 401)
      expect((await login(t, email, 'changed-pass-9')).status).toBe(200)
      await expectDetail(await login(t, email, PASSWORD), 401)
    })

    it('user settings start as {}, PUT stores any JSON object ({saved: true}) and GET returns it, per user', async () => {
      const a = await registerVerified(t, 'settings-a')
      const b = await registerVerified(t, 'settings-b')
      const empty = await t.get(`${API}/auth/me/settings`, { token: a.token })
      expect(empty.status).toBe(200)
      expect(await empty.json()).toEqual({})
      const settings = { theme: 'dark', voice: null, volume: 0.5, nested: { shuffle: true, list: [1, 'two'] } }
      const put = await t.put(`${API}/auth/me/settings`, settings, { token: a.token })
      expect(put.status).toBe(200)
      expect(await put.json()).toEqual({ saved: true })
      expect(await (await t.get(`${API}/auth/me/settings`, { token: a.token })).json()).toEqual(settings)
      expect(await (await t.get(`${API}/auth/me/settings`, { token: b.token })).json()).toEqual({})
      const replaced = { theme: 'light' }
      expect((await t.put(`${API}/auth/me/settings`, replaced, { token: a.token })).status).toBe(200)
      expect(await (await t.get(`${API}/auth/me/settings`, { token: a.token })).json()).toEqual(replaced)
    })

    it('user settings must be a JSON object: an array or a string body is 422 and nothing changes', async () => {
      const { token } = await registerVerified(t, 'settings-bad')
      const stored = { keep: 'me' }
      expect((await t.put(`${API}/auth/me/settings`, stored, { token })).status).toBe(200)
      for (const bad of [[1, 2, 3], 'just a string']) {
        const res = await t.put(`${API}/auth/me/settings`, bad, { token })
        expect(res.status).toBe(422)
        expect(Array.isArray(((await res.json()) as { detail: unknown }).detail)).toBe(true)
      }
      // A body that is not JSON (curl --data sends it as a form) is refused, not stored as a form's fields.
      for (const [body, type] of [['theme=dark', 'application/x-www-form-urlencoded'], ['{"theme":', 'application/json'], ['', 'text/plain']]) {
        const res = await t.request(`${API}/auth/me/settings`, { method: 'PUT', body, token, headers: { 'content-type': type! } })
        expect(res.status).toBeGreaterThanOrEqual(400)
        expect(res.status).toBeLessThan(500)
      }
      expect(await (await t.get(`${API}/auth/me/settings`, { token })).json()).toEqual(stored)
      // JSON sent with a form's content type (curl --data '{...}') is read as the JSON it is.
      const res = await t.request(`${API}/auth/me/settings`, {
        method: 'PUT', body: '{"theme":"light"}', token, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expect(res.status).toBe(200)
      expect(await (await t.get(`${API}/auth/me/settings`, { token })).json()).toEqual({ theme: 'light' })
    })

    it('the /me routes need credentials: 401 without a token', async () => {
      await expectDetail(await t.put(`${API}/auth/me`, { name: 'x' }), 401)
      await expectDetail(await t.get(`${API}/auth/me/settings`), 401)
      await expectDetail(await t.put(`${API}/auth/me/settings`, { a: 1 }), 401)
    })
  })

  describe(`quiz first registration [${target}]`, () => {
    let t: TestApp
    beforeAll(async () => {
      t = await startTestApp({ target, env: sink.env })
    })
    afterAll(() => t.close())

    it('concurrent first registrations make exactly one admin; the others wait for verification', async () => {
      const emails = Array.from({ length: 5 }, (_, i) => uniqueEmail(`race-${i}`))
      const results = await Promise.all(emails.map((email) => register(t, email)))
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
      const bodies = (await Promise.all(results.map((r) => r.json()))) as Array<Record<string, unknown>>
      expect(bodies.filter((b) => typeof b.access_token === 'string')).toHaveLength(1)
      expect(bodies.filter((b) => b.requires_verification === true)).toHaveLength(4)
      const rows = await t.db.sql<{ role: string }>`select role from quiz.users`
      expect(rows.map((r) => r.role).sort()).toEqual(['admin', 'user', 'user', 'user', 'user'])
    })
  })

  describe(`quiz registration while mail is down [${target}]`, () => {
    let t: TestApp
    beforeAll(async () => {
      const { createServer } = await import('node:net')
      const closed = createServer()
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()))
      const port = (closed.address() as { port: number }).port
      await new Promise<void>((r) => closed.close(() => r()))
      t = await startTestApp({ target, env: { ...sink.env, SMTP_PORT: String(port) } })
      expect((await register(t, uniqueEmail('down-admin'))).status).toBe(200)
    })
    afterAll(() => t.close())

    it('an unreachable mail server never leaves a half-registered account: either 200 (resend later) or an error with no user created', async () => {
      const email = uniqueEmail('mail-down')
      const res = await register(t, email)
      const created = await userCount(t, email)
      if (res.status === 200) {
        expect(((await res.json()) as { requires_verification: boolean }).requires_verification).toBe(true)
        expect(created).toBe(1)
      } else {
        expect(res.status).toBeGreaterThanOrEqual(500)
        expect(created).toBe(0)
        expect((await register(t, email)).status).not.toBe(409)
      }
    })
  })

  describe(`quiz token expiry [${target}]`, () => {
    let t: TestApp
    let offsetMs = 0
    beforeAll(async () => {
      t = await startTestApp({ target, env: sink.env, boot: { now: () => Date.now() + offsetMs } })
      expect((await register(t, uniqueEmail('clock-admin'))).status).toBe(200)
    })
    afterEach(() => {
      offsetMs = 0
    })
    afterAll(() => t.close())

    it('a verification link works within 24 hours and is 400 after; the user stays unverified until a resent link is used', async () => {
      const early = await registerUnverified(t, 'verify-early')
      const late = await registerUnverified(t, 'verify-late')
      offsetMs = VERIFY_TOKEN_TTL_MS - 10 * MINUTE_MS
      expect((await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(early.link.token)}`)).status).toBe(200)
      offsetMs = VERIFY_TOKEN_TTL_MS + MINUTE_MS
      await expectDetail(await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(late.link.token)}`), 400)
      await expectDetail(await login(t, late.email, PASSWORD), 403)
      expect((await login(t, early.email, PASSWORD)).status).toBe(200)
      expect((await t.post(`${API}/auth/resend-verification`, { email: late.email }, { ip: freshIp() })).status).toBe(200)
      const fresh = linkIn(await sink.waitFor((m) => isVerifyMail(late.email)(m) && !m.text.includes(late.link.token)), '/quiz/verify-email')
      expect((await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(fresh.token)}`)).status).toBe(200)
      expect((await login(t, late.email, PASSWORD)).status).toBe(200)
    })

    it('a reset link works within 1 hour and is 400 after; the old password then still works', async () => {
      const early = await registerVerified(t, 'reset-early')
      const late = await registerVerified(t, 'reset-late')
      const earlyLink = await requestReset(t, early.email)
      const lateLink = await requestReset(t, late.email)
      offsetMs = RESET_TOKEN_TTL_MS - 5 * MINUTE_MS
      expect((await t.post(`${API}/auth/reset-password`, { token: earlyLink.token, new_password: 'early-new-pass' }, { ip: freshIp() })).status).toBe(200)
      offsetMs = RESET_TOKEN_TTL_MS + MINUTE_MS
      await expectDetail(await t.post(`${API}/auth/reset-password`, { token: lateLink.token, new_password: 'late-new-pass' }, { ip: freshIp() }), 400)
      expect((await login(t, late.email, PASSWORD)).status).toBe(200)
      await expectDetail(await login(t, late.email, 'late-new-pass'), 401)
      expect((await login(t, early.email, 'early-new-pass')).status).toBe(200)
    })
  })

  describe(`quiz bot challenge [${target}]`, () => {
    let t: TestApp
    let challenge: ChallengeServer
    const adminEmail = uniqueEmail('challenge-admin')
    beforeAll(async () => {
      challenge = startChallengeServer()
      t = await startTestApp({ target, env: { ...sink.env, ...challenge.env } })
      const first = await register(t, adminEmail, { challenge_token: PASS_TOKEN })
      expect(first.status).toBe(200)
    })
    afterAll(async () => {
      await t.close()
      await challenge.close()
    })

    it('register without or with a wrong challenge_token is 400 and creates no user and sends no mail; with a passing token it works', async () => {
      const email = uniqueEmail('challenged')
      await expectDetail(await register(t, email), 400)
      await expectDetail(await register(t, email, { challenge_token: 'wrong-token' }), 400)
      await expectDetail(await register(t, email, { challenge_token: null }), 400)
      expect(await userCount(t, email)).toBe(0)
      const ip = freshIp()
      const ok = await t.post(`${API}/auth/register`, { email, password: PASSWORD, name: 'Challenged', challenge_token: PASS_TOKEN }, { ip })
      expect(ok.status).toBe(200)
      expect(((await ok.json()) as { requires_verification: boolean }).requires_verification).toBe(true)
      expect(await userCount(t, email)).toBe(1)
      await sink.waitFor(isVerifyMail(email))
      await settle()
      expect(sink.to(email)).toHaveLength(1)
      expect(challenge.calls).toContainEqual({ secret: challenge.env.CHALLENGE_SECRET_KEY!, response: PASS_TOKEN, remoteip: ip })
    })

    it('login without or with a wrong challenge_token is 400; with a passing token it works', async () => {
      await expectDetail(await login(t, adminEmail, PASSWORD), 400)
      await expectDetail(await login(t, adminEmail, PASSWORD, { challenge_token: 'wrong-token' }), 400)
      const ok = await login(t, adminEmail, PASSWORD, { challenge_token: PASS_TOKEN })
      expect(ok.status).toBe(200)
      expect(((await ok.json()) as TokenBody).token_type).toBe('bearer')
    })

    it('forgot-password without or with a wrong challenge_token is 400 and sends no mail; with a passing token it mails the link', async () => {
      await expectDetail(await t.post(`${API}/auth/forgot-password`, { email: adminEmail }, { ip: freshIp() }), 400)
      await expectDetail(await t.post(`${API}/auth/forgot-password`, { email: adminEmail, challenge_token: 'wrong-token' }, { ip: freshIp() }), 400)
      await settle()
      expect(sink.messages.filter(isResetMail(adminEmail))).toHaveLength(0)
      const ok = await t.post(`${API}/auth/forgot-password`, { email: adminEmail, challenge_token: PASS_TOKEN }, { ip: freshIp() })
      expect(ok.status).toBe(200)
      await sink.waitFor(isResetMail(adminEmail))
      await settle()
      expect(sink.messages.filter(isResetMail(adminEmail))).toHaveLength(1)
    })
  })
}

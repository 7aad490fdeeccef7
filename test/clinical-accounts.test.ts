// Spec 2, Authentication and accounts, Login rules, Session, Passwords, Limits and Events: the clinical accounts
// API from outside, on each database target, with real mail (an SMTP listener), a real bot-challenge verifier
// and a clock the tests move (link expiry). Every test uses its own client addresses, so no rate limit leaks.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { createHash } from 'node:crypto'
import { NAME_MAX, PASSWORD_MAX, PASSWORD_MIN } from '../plugins/clinical/models/accounts'
import {
  ACCOUNT_SECURITY_RULE, FORGOT_PASSWORD_RULE, LOGIN_RULE, REGISTER_RULE, RESEND_VERIFICATION_RULE, RESET_MAIL_RULE,
  RESET_TOKEN_LIFETIME_S, VERIFICATION_MAIL_RULE, VERIFY_TOKEN_LIFETIME_S,
} from '../plugins/clinical/services/accounts'
import { MAIL_QUOTE_MAX } from '../src/core/mail'
import { setConfigValues } from '../plugins/clinical/services/app-config'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { PASS_TOKEN, startChallengeServer, type ChallengeServer } from './support/challenge'
import {
  CLINICAL_PASSWORD, MOBILE, WEB, cookieValue, flushAudit, freshIp, insertUser, settle, signIn, uniqueEmail, withCookie,
} from './support/clinical'
import { linkIn, startSmtpSink, type ReceivedMail, type SmtpSink } from './support/smtp'

// Each file boots real apps; password hashing (argon2id, 19 MiB) is deliberately slow.
setDefaultTimeout(30_000)

const MINUTE_MS = 60_000
const DAY_S = 24 * 3600
const STRONG_PASSWORD = 'Vq7!mountain-Lantern-42'
const WEAK_PASSWORD = 'password1'
const ARGON2ID_PREFIX = '$argon2id$v=19$m=19456,t=2,p=1$'

// The tests below go by the implementation's constants; this pins those to spec 2, Limits, so a wrong constant
// still fails.
describe('clinical account limits', () => {
  it('login 10 / 15 min, register 5 / hour, forgot-password 5 / hour, resend-verification 3 / 15 min, change-password 20 / 15 min; reset link 1 hour', () => {
    expect(LOGIN_RULE).toMatchObject({ limit: 10, windowS: 15 * 60 })
    expect(REGISTER_RULE).toMatchObject({ limit: 5, windowS: 3600 })
    expect(FORGOT_PASSWORD_RULE).toMatchObject({ limit: 5, windowS: 3600 })
    expect(RESEND_VERIFICATION_RULE).toMatchObject({ limit: 3, windowS: 15 * 60 })
    expect(ACCOUNT_SECURITY_RULE).toMatchObject({ limit: 20, windowS: 15 * 60 })
    expect(RESET_TOKEN_LIFETIME_S).toBe(3600)
    expect(VERIFY_TOKEN_LIFETIME_S).toBeGreaterThan(0)
  })
})

// ---- helpers ----------------------------------------------------------------------------------------------

type Json = Record<string, unknown>
interface LoginBody { success: true; token: string; sessionId: string; user: Json }

const isVerifyMail = (email: string) => (m: ReceivedMail) => m.to.includes(email.toLowerCase()) && m.text.includes('/api/auth/verify-email?token=')
const isResetMail = (email: string) => (m: ReceivedMail) => m.to.includes(email.toLowerCase()) && m.text.includes('/reset-password?token=')

/** The claims of a JWT (not verified: the app did that). */
function claims(token: string): { iat: number; exp: number; [k: string]: unknown } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'))
}

/** The whole Set-Cookie line of app_auth, or undefined. */
const authCookieLine = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('app_auth='))

/** A clinical error answer: the status and `{success: false, error}` with a message; returns the body. */
async function expectError(res: Response, status: number, error?: string): Promise<Json> {
  const body = (await res.json()) as Json
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body.success).toBe(false)
  expect(typeof body.error).toBe('string')
  expect((body.error as string).length).toBeGreaterThan(0)
  if (error !== undefined) expect(body.error).toBe(error)
  return body
}

async function expectRateLimited(res: Response, windowS: number) {
  await expectError(res, 429)
  const retryAfter = Number(res.headers.get('retry-after'))
  expect(Number.isInteger(retryAfter)).toBe(true)
  expect(retryAfter).toBeGreaterThan(0)
  expect(retryAfter).toBeLessThanOrEqual(windowS)
}

/** A register answer of an account verified and signed in at once (the login response plus needsVerification: false). */
function expectSignedInAtOnce(answer: object) {
  const body = answer as Json
  // (field by field: bun's toMatchObject writes asymmetric matchers into the object it checks)
  expect(body.success).toBe(true)
  expect(body.needsVerification).toBe(false)
  expect(typeof body.message).toBe('string')
  expect(typeof body.token).toBe('string')
  expect(body.sessionId).toMatch(/^[0-9a-f-]{36}$/)
  expect(Object.keys(body).sort()).toEqual(['message', 'needsVerification', 'sessionId', 'success', 'token', 'user'])
}

const register = (t: TestApp, email: string, extra: Json = {}, opts: { ip?: string; headers?: Record<string, string> } = {}) =>
  t.post('/api/auth/register', { name: 'Test Clinician', email, password: CLINICAL_PASSWORD, ...extra }, { ip: opts.ip ?? freshIp(), headers: opts.headers ?? MOBILE })

const login = (t: TestApp, email: string, password = CLINICAL_PASSWORD, opts: { ip?: string; headers?: Record<string, string> } = {}) =>
  t.post('/api/auth/login', { email, password }, { ip: opts.ip ?? freshIp(), headers: opts.headers ?? MOBILE })

const me = (t: TestApp, token: string, ip = freshIp()) => t.get('/api/auth/me', { token, ip, headers: MOBILE })

async function userCount(t: TestApp, email: string): Promise<number> {
  const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.users where lower(email) = lower(${email})`
  return row!.n
}

async function userId(t: TestApp, email: string): Promise<number> {
  const [row] = await t.db.sql<{ id: number }>`select id from clinical.users where lower(email) = lower(${email})`
  return row!.id
}

async function sessionCount(t: TestApp, id: number): Promise<number> {
  const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.user_sessions where user_id = ${id}`
  return row!.n
}

interface AuditRow { action: string; user_id: number | null; ip_address: string | null; details: string }
/** The audit rows written so far (after a flush of the batched writer), filtered. */
async function auditRows(t: TestApp, filter: { action?: string; userId?: number; ip?: string }): Promise<AuditRow[]> {
  await flushAudit(t)
  return t.db.sql<AuditRow>`
    select action, user_id, ip_address, details from clinical.audit_log
    where (${filter.action ?? null}::text is null or action = ${filter.action ?? null})
      and (${filter.userId ?? null}::integer is null or user_id = ${filter.userId ?? null})
      and (${filter.ip ?? null}::text is null or ip_address = ${filter.ip ?? null})
    order by id`
}

// ---- the suite ------------------------------------------------------------------------------------------

let sink: SmtpSink
let challenge: ChallengeServer
beforeAll(async () => {
  sink = await startSmtpSink()
  challenge = startChallengeServer()
})
afterAll(async () => {
  await sink.close()
  await challenge.close()
})

for (const target of databaseTargets()) {
  describe(`clinical accounts with mail sending [${target}]`, () => {
    let t: TestApp
    /** Added to the real time: tests move it forward to expire links. */
    let offsetMs = 0
    const firstEmail = uniqueEmail('first-admin')
    let firstRes: Response
    let firstMail: ReceivedMail
    let firstLogin: Response
    let first: LoginBody
    /** Every password and token the tests use: none may ever reach an audit row. */
    const secrets = new Set<string>([CLINICAL_PASSWORD, STRONG_PASSWORD, WEAK_PASSWORD])

    beforeAll(async () => {
      t = await startTestApp({ target, env: sink.env, boot: { now: () => Date.now() + offsetMs } })
      firstRes = await register(t, firstEmail, { name: 'First Admin' }, { headers: WEB })
      // Mail sending is configured, so the first account, too, confirms its address before signing in.
      firstMail = await sink.waitFor(isVerifyMail(firstEmail))
      const link = linkIn(firstMail, '/api/auth/verify-email')
      secrets.add(link.token)
      expect((await t.get(link.pathAndQuery, { ip: freshIp() })).status).toBe(200)
      firstLogin = await login(t, firstEmail, CLINICAL_PASSWORD, { headers: WEB, ip: freshIp() })
      first = (await firstLogin.clone().json()) as typeof first
      secrets.add(first.token)
    })
    afterAll(() => t.close())

    /** Registers a later user and waits for its verification mail; the user stays unverified. */
    async function registerUnverified(tag: string) {
      const email = uniqueEmail(tag)
      const res = await register(t, email)
      expect(res.status).toBe(200)
      const link = linkIn(await sink.waitFor(isVerifyMail(email)), '/api/auth/verify-email')
      secrets.add(link.token)
      return { email, link }
    }

    /** A verified user (inserted directly) with a mobile session. */
    async function verifiedUser(tag: string, password = CLINICAL_PASSWORD) {
      const email = uniqueEmail(tag)
      const id = await insertUser(t, { email, password: password === CLINICAL_PASSWORD ? undefined : password })
      const session = await signIn(t, email, { password, ip: freshIp() })
      secrets.add(session.token)
      return { email, id, ...session }
    }

    async function requestReset(email: string) {
      const res = await t.post('/api/auth/forgot-password', { email }, { ip: freshIp(), headers: MOBILE })
      expect(res.status).toBe(200)
      const link = linkIn(await sink.waitFor(isResetMail(email)), '/reset-password')
      secrets.add(link.token)
      return link
    }

    describe('register', () => {
      it('the first user becomes admin and, mail being configured, confirms the address like every account before signing in', async () => {
        expect(firstRes.status).toBe(200)
        expect(await firstRes.json()).toEqual({ success: true, needsVerification: true, message: expect.any(String) })
        expect(authCookieLine(firstRes)).toBeUndefined()
        expect(firstMail.text).toContain('http://localhost/api/auth/verify-email?token=')
        const rows = await auditRows(t, { action: 'register', userId: first.user.id as number })
        expect(rows).toHaveLength(1)
        expect(JSON.parse(rows[0]!.details)).toMatchObject({ role: 'admin', verified: false })
        // Signed in once the link was followed: an admin with a web session.
        expect(firstLogin.status).toBe(200)
        expect(first.user).toEqual({ id: expect.any(Number), name: 'First Admin', email: firstEmail, role: 'admin', totp_enabled: false, email_verified: true })
        expect(cookieValue(firstLogin)).toBe(first.token)
        const profile = await me(t, first.token)
        expect(profile.status).toBe(200)
        expect(((await profile.json()) as { user: Json }).user).toMatchObject({ role: 'admin', email_verified: true })
        await settle()
        expect(sink.to(firstEmail)).toHaveLength(1)
      })

      it('a later user gets {success, needsVerification: true, message} and no token; the mail really arrives; login says Email not verified', async () => {
        const email = uniqueEmail('later')
        const res = await register(t, email, {}, { headers: WEB })
        expect(res.status).toBe(200)
        const body = (await res.json()) as Json
        expect(body).toEqual({ success: true, needsVerification: true, message: expect.any(String) })
        expect(authCookieLine(res)).toBeUndefined()
        const mail = await sink.waitFor(isVerifyMail(email))
        expect(mail.text).toContain('http://localhost/api/auth/verify-email?token=')
        expect(mail.text).toContain('valid for 24 hours')
        const [row] = await t.db.sql<{ role: string; email_verified: boolean }>`select role, email_verified from clinical.users where email = ${email}`
        expect(row).toEqual({ role: 'user', email_verified: false })
        await expectError(await login(t, email), 403, 'Email not verified')
        const rows = await auditRows(t, { action: 'register', userId: await userId(t, email) })
        expect(JSON.parse(rows[0]!.details)).toMatchObject({ role: 'user', verified: false })
      })

      it('the mailed link answers an HTML success page and verifies the account: login then works; audited as email_verified', async () => {
        const { email, link } = await registerUnverified('via-link')
        const ip = freshIp()
        const page = await t.get(link.pathAndQuery, { ip, headers: { accept: 'text/html' } })
        expect(page.status).toBe(200)
        expect(page.headers.get('content-type') ?? '').toContain('text/html')
        const html = await page.text()
        expect(html).toMatch(/<html/i)
        expect(html).toMatch(/verified/i)
        const res = await login(t, email)
        expect(res.status).toBe(200)
        expect(((await res.json()) as LoginBody).user).toMatchObject({ email, email_verified: true })
        const rows = await auditRows(t, { action: 'email_verified', userId: await userId(t, email) })
        expect(rows).toHaveLength(1)
        expect(rows[0]!.ip_address).toBe(ip)
      })

      it('a used, an unknown, a missing or a malformed token answers the HTML error page with 400', async () => {
        const { email, link } = await registerUnverified('reuse')
        expect((await t.get(link.pathAndQuery, { ip: freshIp() })).status).toBe(200)
        const probes = [
          link.pathAndQuery,
          `/api/auth/verify-email?token=${'a'.repeat(43)}`,
          '/api/auth/verify-email',
          '/api/auth/verify-email?token=',
          `/api/auth/verify-email?token=${'x'.repeat(600)}`,
          `/api/auth/verify-email?token=${link.token}&token=${link.token}`,
        ]
        for (const path of probes) {
          const page = await t.get(path, { ip: freshIp(), headers: { accept: 'text/html' } })
          expect(page.status, path.slice(0, 60)).toBe(400)
          expect(page.headers.get('content-type') ?? '', path.slice(0, 60)).toContain('text/html')
          const html = await page.text()
          expect(html).toMatch(/<html/i)
          expect(html).toMatch(/invalid|expired/i)
        }
        expect(await auditRows(t, { action: 'email_verified', userId: await userId(t, email) })).toHaveLength(1)
      })

      it(`the link works until it expires (${VERIFY_TOKEN_LIFETIME_S / 3600} h), then answers the HTML error page with 400 and the account stays unverified`, async () => {
        const early = await registerUnverified('expiry-early')
        const late = await registerUnverified('expiry-late')
        offsetMs += VERIFY_TOKEN_LIFETIME_S * 1000 - MINUTE_MS
        expect((await t.get(early.link.pathAndQuery, { ip: freshIp() })).status).toBe(200)
        offsetMs += 2 * MINUTE_MS
        const page = await t.get(late.link.pathAndQuery, { ip: freshIp() })
        expect(page.status).toBe(400)
        expect(page.headers.get('content-type') ?? '').toContain('text/html')
        await expectError(await login(t, late.email), 403, 'Email not verified')
      })

      it('an email already registered, in any letter case, is 409 and creates no second user or mail', async () => {
        const { email } = await registerUnverified('dup')
        await expectError(await register(t, email.toUpperCase()), 409)
        await expectError(await register(t, email), 409)
        expect(await userCount(t, email)).toBe(1)
        await settle()
        expect(sink.to(email)).toHaveLength(1)
      })

      it('invalid input is 400 with a message (never 500), and creates no user', async () => {
        const email = uniqueEmail('invalid')
        const cases: Array<[string, unknown]> = [
          ['an invalid email', { name: 'X', email: 'not-an-email', password: CLINICAL_PASSWORD }],
          [`a password of ${PASSWORD_MIN - 1} characters`, { name: 'X', email, password: 'x'.repeat(PASSWORD_MIN - 1) }],
          [`a password of ${PASSWORD_MAX + 1} characters`, { name: 'X', email, password: 'x'.repeat(PASSWORD_MAX + 1) }],
          ['an empty name', { name: '', email, password: CLINICAL_PASSWORD }],
          ['a blank name', { name: '   ', email, password: CLINICAL_PASSWORD }],
          [`a name of ${NAME_MAX + 1} characters`, { name: 'n'.repeat(NAME_MAX + 1), email, password: CLINICAL_PASSWORD }],
          ['no password', { name: 'X', email }],
          ['a number for the email', { name: 'X', email: 12345, password: CLINICAL_PASSWORD }],
          ['an array body', [email]],
        ]
        for (const [what, body] of cases) {
          const res = await t.post('/api/auth/register', body, { ip: freshIp(), headers: MOBILE })
          const answer = await expectError(res, 400)
          expect(answer.error, what).not.toBe('Request failed')
        }
        const garbled = await t.request('/api/auth/register', {
          method: 'POST', ip: freshIp(), headers: { 'content-type': 'application/json', ...MOBILE }, body: '{"name": "X", "email":',
        })
        await expectError(garbled, 400)
        expect(await userCount(t, email)).toBe(0)
        expect((await register(t, email, { password: 'p'.repeat(PASSWORD_MIN) })).status).toBe(200)
      })

      it(`registrations are limited per client address: the ${REGISTER_RULE.limit + 1}th in an hour is 429 with Retry-After; another address still registers`, async () => {
        const ip = freshIp()
        for (let i = 0; i < REGISTER_RULE.limit; i++) expect((await register(t, uniqueEmail('reg-limit'), {}, { ip })).status).toBe(200)
        const blockedEmail = uniqueEmail('reg-limit-blocked')
        await expectRateLimited(await register(t, blockedEmail, {}, { ip }), REGISTER_RULE.windowS)
        expect(await userCount(t, blockedEmail)).toBe(0)
        expect((await register(t, blockedEmail)).status).toBe(200)
      })

      it('without a configured bot challenge, challengeToken is ignored', async () => {
        const calls = challenge.calls.length
        const res = await register(t, uniqueEmail('no-challenge'), { challengeToken: 'anything-at-all' })
        expect(res.status).toBe(200)
        expect(challenge.calls).toHaveLength(calls)
      })
    })

    describe('resend-verification', () => {
      it('answers the same message for unknown, verified and unverified addresses, and mails only the unverified one', async () => {
        const { email: pending, link: firstLink } = await registerUnverified('resend')
        const unknown = uniqueEmail('resend-unknown')
        const answers = new Set<string>()
        for (const email of [unknown, firstEmail, pending]) {
          const res = await t.post('/api/auth/resend-verification', { email }, { ip: freshIp(), headers: MOBILE })
          expect(res.status).toBe(200)
          const body = (await res.json()) as { success: boolean; message: string }
          expect(body.success).toBe(true)
          answers.add(body.message)
        }
        expect(answers.size).toBe(1)
        const second = await sink.waitFor((m) => isVerifyMail(pending)(m) && !m.text.includes(firstLink.token))
        const link = linkIn(second, '/api/auth/verify-email')
        secrets.add(link.token)
        expect((await t.get(link.pathAndQuery, { ip: freshIp() })).status).toBe(200)
        expect((await login(t, pending)).status).toBe(200)
        await settle()
        expect(sink.to(unknown)).toHaveLength(0)
        expect(sink.to(firstEmail)).toHaveLength(1) // its own verification mail at registration, no second one
        expect(sink.to(pending)).toHaveLength(2)
      })

      it(`mails one account at most ${VERIFICATION_MAIL_RULE.limit} times an hour, whatever the client address; the answer never changes`, async () => {
        const { email } = await registerUnverified('resend-cap')
        const unknown = uniqueEmail('resend-cap-unknown')
        const answers = new Set<string>()
        for (let i = 0; i < VERIFICATION_MAIL_RULE.limit + 2; i++) {
          for (const address of [email, unknown]) {
            const res = await t.post('/api/auth/resend-verification', { email: address }, { ip: freshIp(), headers: MOBILE })
            expect(res.status).toBe(200)
            answers.add(JSON.stringify(await res.json()))
          }
        }
        expect(answers.size).toBe(1)
        await sink.waitFor((m) => sink.to(email).length === 1 + VERIFICATION_MAIL_RULE.limit && isVerifyMail(email)(m))
        await settle()
        expect(sink.to(email)).toHaveLength(1 + VERIFICATION_MAIL_RULE.limit) // its registration mail and the capped resends
        expect(sink.to(unknown)).toHaveLength(0)
      })

      it(`is limited to ${RESEND_VERIFICATION_RULE.limit} per 15 minutes per client address: then 429 with Retry-After; another address still gets an answer`, async () => {
        const { email } = await registerUnverified('resend-limit')
        const ip = freshIp()
        for (let i = 0; i < RESEND_VERIFICATION_RULE.limit; i++) {
          expect((await t.post('/api/auth/resend-verification', { email }, { ip, headers: MOBILE })).status).toBe(200)
        }
        await expectRateLimited(await t.post('/api/auth/resend-verification', { email }, { ip, headers: MOBILE }), RESEND_VERIFICATION_RULE.windowS)
        await settle()
        expect(sink.to(email)).toHaveLength(1 + RESEND_VERIFICATION_RULE.limit)
        expect((await t.post('/api/auth/resend-verification', { email }, { ip: freshIp(), headers: MOBILE })).status).toBe(200)
      })
    })

    describe('login', () => {
      it('unknown email, wrong password and disabled account get the same status and body: 401 Invalid credentials', async () => {
        const { email } = await verifiedUser('wrong-pw')
        const disabled = uniqueEmail('disabled')
        await insertUser(t, { email: disabled, disabled: true })
        const answers: Array<{ status: number; body: string }> = []
        for (const [who, password] of [
          [uniqueEmail('nobody'), CLINICAL_PASSWORD], [email, 'Wrong-password-1'], [disabled, CLINICAL_PASSWORD], [disabled, 'Wrong-password-1'],
        ] as const) {
          const res = await login(t, who, password)
          answers.push({ status: res.status, body: await res.text() })
        }
        for (const a of answers) expect(a).toEqual(answers[0]!)
        expect(answers[0]!.status).toBe(401)
        expect(JSON.parse(answers[0]!.body)).toMatchObject({ success: false, error: 'Invalid credentials' })
      })

      it('Email not verified only after the correct password; a wrong one gets Invalid credentials', async () => {
        const email = uniqueEmail('unverified')
        await insertUser(t, { email, verified: false })
        await expectError(await login(t, email, 'Wrong-password-1'), 401, 'Invalid credentials')
        await expectError(await login(t, email), 403, 'Email not verified')
      })

      it('failures are audited: login_failed for an unknown email and a wrong password, login_blocked for a disabled or unverified account', async () => {
        const ip = freshIp()
        const known = uniqueEmail('audit-known')
        const knownId = await insertUser(t, { email: known })
        const disabled = uniqueEmail('audit-disabled')
        const disabledId = await insertUser(t, { email: disabled, disabled: true })
        const unverified = uniqueEmail('audit-unverified')
        const unverifiedId = await insertUser(t, { email: unverified, verified: false })
        await login(t, uniqueEmail('audit-nobody'), CLINICAL_PASSWORD, { ip })
        await login(t, known, 'Wrong-password-1', { ip })
        await login(t, disabled, CLINICAL_PASSWORD, { ip })
        await login(t, unverified, CLINICAL_PASSWORD, { ip })
        const rows = await auditRows(t, { ip })
        expect(rows.map((r) => [r.action, r.user_id])).toEqual([
          ['login_failed', null], ['login_failed', knownId], ['login_blocked', disabledId], ['login_blocked', unverifiedId],
        ])
      })

      it('success answers {success, token, sessionId, user: {id, name, email, role, totp_enabled, email_verified}}; the session row is keyed by the token\'s SHA-256; audited as login', async () => {
        const email = uniqueEmail('shape')
        const id = await insertUser(t, { email, name: 'Shape Test', role: 'moderator' })
        const ip = freshIp()
        const res = await login(t, email.toUpperCase(), CLINICAL_PASSWORD, { ip })
        expect(res.status).toBe(200)
        const body = (await res.json()) as LoginBody
        secrets.add(body.token)
        expect(Object.keys(body).sort()).toEqual(['sessionId', 'success', 'token', 'user'])
        expect(body.success).toBe(true)
        expect(body.user).toEqual({ id, name: 'Shape Test', email, role: 'moderator', totp_enabled: false, email_verified: true })
        expect(body.sessionId).toMatch(/^[0-9a-f-]{36}$/)
        const hash = createHash('sha256').update(body.token).digest('hex')
        const [session] = await t.db.sql<{ id: string; user_id: number; ip_address: string }>`
          select id::text as id, user_id, ip_address from clinical.user_sessions where token_hash = ${hash}`
        expect(session).toEqual({ id: body.sessionId, user_id: id, ip_address: ip })
        const rows = await auditRows(t, { action: 'login', userId: id })
        expect(rows).toHaveLength(1)
        expect(rows[0]!.ip_address).toBe(ip)
        const [user] = await t.db.sql<{ last_login: Date | string | null }>`select last_login from clinical.users where id = ${id}`
        expect(user!.last_login).not.toBeNull()
      })

      const clients: Array<[string, Record<string, string>, 'web' | 'mobile']> = [
        ['X-Client: web', { 'x-client': 'web' }, 'web'],
        ['X-Client: browser', { 'x-client': 'browser' }, 'web'],
        ['X-Client: mobile', { 'x-client': 'mobile' }, 'mobile'],
        ['X-Client: ios', { 'x-client': 'ios' }, 'mobile'],
        ['X-Client: android', { 'x-client': 'android' }, 'mobile'],
        ['X-Client: app', { 'x-client': 'app' }, 'mobile'],
        ['X-Client: mobile from a browser User-Agent', { 'x-client': 'mobile', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' }, 'mobile'],
        ['a browser User-Agent (Mozilla/...)', { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15' }, 'web'],
        ['an okhttp User-Agent', { 'user-agent': 'okhttp/4.12.0' }, 'mobile'],
        ['a curl User-Agent', { 'user-agent': 'curl/8.5.0' }, 'mobile'],
        ['no User-Agent and no X-Client', {}, 'mobile'],
      ]
      it.each(clients)('%s signs in a %s client', async (_, headers, kind) => {
        const email = uniqueEmail('client')
        await insertUser(t, { email })
        const res = await login(t, email, CLINICAL_PASSWORD, { headers })
        expect(res.status).toBe(200)
        const body = (await res.json()) as LoginBody
        secrets.add(body.token)
        const { iat, exp } = claims(body.token)
        const cookie = authCookieLine(res)
        if (kind === 'web') {
          // spec 2, token transport: cookie app_auth, httpOnly, sameSite lax; web JWT 30 days
          expect(cookie).toBeDefined()
          expect(cookie!.startsWith(`app_auth=${body.token};`)).toBe(true)
          expect(cookie).toMatch(/;\s*HttpOnly/i)
          expect(cookie).toMatch(/;\s*SameSite=Lax/i)
          expect(cookie).toMatch(/;\s*Max-Age=2592000\b/)
          expect(exp - iat).toBe(30 * DAY_S)
          expect((await t.get('/api/auth/me', { ip: freshIp(), headers: withCookie(body.token) })).status).toBe(200)
        } else {
          // mobile: Bearer transport, no cookie; mobile JWT 365 days
          expect(cookie).toBeUndefined()
          expect(exp - iat).toBe(365 * DAY_S)
        }
        expect((await me(t, body.token)).status).toBe(200)
        const [row] = await t.db.sql<{ client: string }>`select client from clinical.user_sessions where id = ${body.sessionId}::uuid`
        expect(row!.client).toBe(kind)
      })

      it(`counts every attempt per client address: the ${LOGIN_RULE.limit + 1}th in 15 minutes is 429 with Retry-After; another address still gets in`, async () => {
        const { email } = await verifiedUser('login-limit')
        const ip = freshIp()
        for (let i = 0; i < LOGIN_RULE.limit; i++) {
          const ok = i % 2 === 0
          expect((await login(t, email, ok ? CLINICAL_PASSWORD : 'Wrong-password-1', { ip })).status).toBe(ok ? 200 : 401)
        }
        await expectRateLimited(await login(t, email, CLINICAL_PASSWORD, { ip }), LOGIN_RULE.windowS)
        expect((await login(t, email)).status).toBe(200)
      })

      it('a stored bcrypt hash verifies, and is replaced by an argon2id hash after the login', async () => {
        const email = uniqueEmail('bcrypt')
        const bcrypt = await Bun.password.hash(CLINICAL_PASSWORD, { algorithm: 'bcrypt', cost: 4 })
        const id = await insertUser(t, { email, password: `hash:${bcrypt}` })
        await expectError(await login(t, email, 'Wrong-password-1'), 401, 'Invalid credentials')
        const [before] = await t.db.sql<{ password_hash: string }>`select password_hash from clinical.users where id = ${id}`
        expect(before!.password_hash).toBe(bcrypt)
        expect((await login(t, email)).status).toBe(200)
        const [after] = await t.db.sql<{ password_hash: string }>`select password_hash from clinical.users where id = ${id}`
        expect(after!.password_hash.startsWith(ARGON2ID_PREFIX)).toBe(true)
        expect(await Bun.password.verify(CLINICAL_PASSWORD, after!.password_hash)).toBe(true)
        expect((await login(t, email)).status).toBe(200)
      })
    })

    describe('forgot-password and reset-password', () => {
      it('forgot-password answers the same message for unknown and known addresses, and mails a /reset-password?token= link only to the known one', async () => {
        const { email } = await verifiedUser('forgot')
        const unknown = uniqueEmail('forgot-unknown')
        const disabled = uniqueEmail('forgot-disabled')
        await insertUser(t, { email: disabled, disabled: true })
        const answers = new Set<string>()
        for (const address of [unknown, disabled, email]) {
          const res = await t.post('/api/auth/forgot-password', { email: address }, { ip: freshIp(), headers: MOBILE })
          expect(res.status).toBe(200)
          const body = (await res.json()) as { success: boolean; message: string }
          expect(body.success).toBe(true)
          answers.add(body.message)
        }
        expect(answers.size).toBe(1)
        const mail = await sink.waitFor(isResetMail(email))
        expect(mail.text).toContain('http://localhost/reset-password?token=')
        expect(mail.text).toContain('valid for 1 hour and works once')
        secrets.add(linkIn(mail, '/reset-password').token)
        await settle()
        expect(sink.to(unknown)).toHaveLength(0)
        expect(sink.to(disabled)).toHaveLength(0)
      })

      it(`forgot-password mails one account at most ${RESET_MAIL_RULE.limit} times an hour, whatever the client address; the answer never changes`, async () => {
        const { email } = await verifiedUser('forgot-cap')
        const unknown = uniqueEmail('forgot-cap-unknown')
        const answers = new Set<string>()
        for (let i = 0; i < RESET_MAIL_RULE.limit + 2; i++) {
          for (const address of [email, unknown]) {
            const res = await t.post('/api/auth/forgot-password', { email: address }, { ip: freshIp(), headers: MOBILE })
            expect(res.status).toBe(200)
            answers.add(JSON.stringify(await res.json()))
          }
        }
        expect(answers.size).toBe(1)
        await sink.waitFor((m) => sink.to(email).length === RESET_MAIL_RULE.limit && isResetMail(email)(m))
        await settle()
        expect(sink.to(email)).toHaveLength(RESET_MAIL_RULE.limit)
        expect(sink.to(unknown)).toHaveLength(0)
        const [{ n }] = (await t.db.sql<{ n: number }>`
          select count(*)::int as n from clinical.auth_tokens a join clinical.users u on u.id = a.user_id
          where lower(u.email) = ${email} and a.purpose = 'reset_password'`) as [{ n: number }]
        expect(n).toBe(RESET_MAIL_RULE.limit)
      })

      it('mails quote the user\'s name on one line, capped, in the text part and escaped in the HTML part (verification and reset)', async () => {
        const name = 'Eve\r\n\r\nYour account is locked.\nSign in at http://evil.example/login\u2028<a href="http://evil.example">here</a>\t\u202Eend'
        const email = uniqueEmail('mail-name')
        expect((await register(t, email, { name })).status).toBe(200)
        const verify = await sink.waitFor(isVerifyMail(email))
        const id = await userId(t, email)
        await t.db.sql`update clinical.users set email_verified = true where id = ${id}`
        expect((await t.post('/api/auth/forgot-password', { email }, { ip: freshIp(), headers: MOBILE })).status).toBe(200)
        const reset = await sink.waitFor(isResetMail(email))
        for (const mail of [verify, reset]) {
          secrets.add(linkIn(mail, mail === verify ? '/api/auth/verify-email' : '/reset-password').token)
          const [first, blank] = mail.text.split('\n')
          expect(first).toStartWith('Hello Eve Your account is locked. Sign in at http://evil.example/login <a href=')
          expect(first!.length).toBeLessThanOrEqual('Hello ,'.length + MAIL_QUOTE_MAX)
          expect(first).not.toMatch(/[\r\u2028\t\u202E]/)
          expect(blank).toBe('')
          expect(mail.text).not.toContain('\nYour account is locked')
          expect(mail.html).not.toBeNull()
          expect(mail.html).not.toContain('<a href="http://evil.example">')
          expect(mail.html).toContain('&lt;a href=')
          expect(mail.html).not.toMatch(/Eve[\r\n]/)
        }
      })

      it(`forgot-password is limited to ${FORGOT_PASSWORD_RULE.limit} per hour per client address: then 429 with Retry-After`, async () => {
        const ip = freshIp()
        const email = uniqueEmail('forgot-limit')
        for (let i = 0; i < FORGOT_PASSWORD_RULE.limit; i++) {
          expect((await t.post('/api/auth/forgot-password', { email }, { ip, headers: MOBILE })).status).toBe(200)
        }
        await expectRateLimited(await t.post('/api/auth/forgot-password', { email }, { ip, headers: MOBILE }), FORGOT_PASSWORD_RULE.windowS)
        expect((await t.post('/api/auth/forgot-password', { email }, { ip: freshIp(), headers: MOBILE })).status).toBe(200)
      })

      it('a reset token works once: the new password signs in, the old one no longer does, a second use is 400; every session ends; audited', async () => {
        const user = await verifiedUser('reset')
        const web = await signIn(t, user.email, { ip: freshIp(), headers: WEB })
        expect(await sessionCount(t, user.id)).toBe(2)
        const link = await requestReset(user.email)
        const ip = freshIp()
        const res = await t.post('/api/auth/reset-password', { token: link.token, newPassword: STRONG_PASSWORD }, { ip, headers: MOBILE })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })
        expect(await sessionCount(t, user.id)).toBe(0)
        await expectError(await me(t, user.token), 401, 'Session revoked')
        expect((await t.get('/api/auth/me', { ip: freshIp(), headers: withCookie(web.token) })).status).toBe(401)
        expect((await login(t, user.email, STRONG_PASSWORD)).status).toBe(200)
        await expectError(await login(t, user.email), 401, 'Invalid credentials')
        await expectError(await t.post('/api/auth/reset-password', { token: link.token, newPassword: 'Another-strong-Pw-7' }, { ip: freshIp(), headers: MOBILE }), 400)
        expect((await login(t, user.email, STRONG_PASSWORD)).status).toBe(200)
        const rows = await auditRows(t, { action: 'password_reset', userId: user.id })
        expect(rows).toHaveLength(1)
        expect(rows[0]!.ip_address).toBe(ip)
      })

      it('passwordWarning comes with a weak but valid password, and not with a strong one', async () => {
        const weak = await verifiedUser('reset-weak')
        const weakRes = await t.post('/api/auth/reset-password', { token: (await requestReset(weak.email)).token, newPassword: WEAK_PASSWORD }, { ip: freshIp(), headers: MOBILE })
        expect(weakRes.status).toBe(200)
        const weakBody = (await weakRes.json()) as { success: boolean; passwordWarning?: unknown }
        expect(weakBody.success).toBe(true)
        expect(typeof weakBody.passwordWarning).toBe('string')
        expect((weakBody.passwordWarning as string).length).toBeGreaterThan(0)
        expect((await login(t, weak.email, WEAK_PASSWORD)).status).toBe(200)

        const strong = await verifiedUser('reset-strong')
        const strongRes = await t.post('/api/auth/reset-password', { token: (await requestReset(strong.email)).token, newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE })
        expect(strongRes.status).toBe(200)
        expect(await strongRes.json()).not.toHaveProperty('passwordWarning')
      })

      it('a new password under the minimum is 400 and leaves the token usable; an unknown token is 400', async () => {
        const user = await verifiedUser('reset-short')
        const link = await requestReset(user.email)
        await expectError(await t.post('/api/auth/reset-password', { token: link.token, newPassword: 'x'.repeat(PASSWORD_MIN - 1) }, { ip: freshIp(), headers: MOBILE }), 400)
        expect((await login(t, user.email)).status).toBe(200)
        await expectError(await t.post('/api/auth/reset-password', { token: 'b'.repeat(43), newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE }), 400)
        await expectError(await t.post('/api/auth/reset-password', { newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE }), 400)
        expect((await t.post('/api/auth/reset-password', { token: link.token, newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE })).status).toBe(200)
      })

      it('a reset token works until it expires after 1 hour, then answers 400 and the password stays', async () => {
        const early = await verifiedUser('reset-early')
        const late = await verifiedUser('reset-late')
        const earlyLink = await requestReset(early.email)
        const lateLink = await requestReset(late.email)
        offsetMs += 3600 * 1000 - MINUTE_MS
        expect((await t.post('/api/auth/reset-password', { token: earlyLink.token, newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE })).status).toBe(200)
        offsetMs += 2 * MINUTE_MS
        await expectError(await t.post('/api/auth/reset-password', { token: lateLink.token, newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE }), 400)
        expect((await login(t, late.email)).status).toBe(200)
      })
    })

    describe('change-password', () => {
      const change = (token: string, currentPassword: string, newPassword: string, ip = freshIp()) =>
        t.post('/api/auth/change-password', { currentPassword, newPassword }, { token, ip, headers: MOBILE })

      it('a wrong current password is 400 and changes nothing; without a session 401', async () => {
        const user = await verifiedUser('change-wrong')
        await expectError(await change(user.token, 'Wrong-password-1', STRONG_PASSWORD), 400)
        expect((await login(t, user.email)).status).toBe(200)
        await expectError(await t.post('/api/auth/change-password', { currentPassword: CLINICAL_PASSWORD, newPassword: STRONG_PASSWORD }, { ip: freshIp(), headers: MOBILE }), 401)
        await expectError(await change(user.token, CLINICAL_PASSWORD, 'x'.repeat(PASSWORD_MIN - 1)), 400)
        expect((await login(t, user.email)).status).toBe(200)
      })

      it('success ends the other sessions but not the current one; the new password signs in; audited as password_changed', async () => {
        const user = await verifiedUser('change-ok')
        const other = await signIn(t, user.email, { ip: freshIp(), headers: WEB })
        const ip = freshIp()
        const res = await change(user.token, CLINICAL_PASSWORD, STRONG_PASSWORD, ip)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })
        expect((await me(t, user.token)).status).toBe(200)
        const ended = await t.get('/api/auth/me', { ip: freshIp(), headers: withCookie(other.token) })
        await expectError(ended, 401, 'Session revoked')
        expect(await sessionCount(t, user.id)).toBe(1)
        expect((await login(t, user.email, STRONG_PASSWORD)).status).toBe(200)
        await expectError(await login(t, user.email), 401, 'Invalid credentials')
        const rows = await auditRows(t, { action: 'password_changed', userId: user.id })
        expect(rows).toHaveLength(1)
        expect(rows[0]!.ip_address).toBe(ip)
      })

      it('passwordWarning comes with a weak but valid new password', async () => {
        const user = await verifiedUser('change-weak')
        const res = await change(user.token, CLINICAL_PASSWORD, WEAK_PASSWORD)
        expect(res.status).toBe(200)
        expect(typeof ((await res.json()) as { passwordWarning?: unknown }).passwordWarning).toBe('string')
      })

      it('an account without a local password (single sign-on) is refused with an SSO-aware 400', async () => {
        const user = await verifiedUser('change-sso')
        await t.db.sql`update clinical.users set can_local_auth = false where id = ${user.id}`
        const body = await expectError(await change(user.token, CLINICAL_PASSWORD, STRONG_PASSWORD), 400)
        expect(body.error).toMatch(/single sign-on|identity provider/i)
      })

      it(`is limited to ${ACCOUNT_SECURITY_RULE.limit} per 15 minutes per client address: then 429 with Retry-After`, async () => {
        const user = await verifiedUser('change-limit')
        const ip = freshIp()
        for (let i = 0; i < ACCOUNT_SECURITY_RULE.limit; i++) expect((await change(user.token, 'Wrong-password-1', STRONG_PASSWORD, ip)).status).toBe(400)
        await expectRateLimited(await change(user.token, CLINICAL_PASSWORD, STRONG_PASSWORD, ip), ACCOUNT_SECURITY_RULE.windowS)
        expect((await login(t, user.email)).status).toBe(200)
        expect((await change(user.token, CLINICAL_PASSWORD, STRONG_PASSWORD)).status).toBe(200)
      })
    })

    describe('logout, me and registration-status', () => {
      it('logout with a Bearer token deletes that session only: the token then gets 401 Session revoked; the cookie is cleared; audited', async () => {
        const user = await verifiedUser('logout')
        const other = await signIn(t, user.email, { ip: freshIp() })
        const ip = freshIp()
        const res = await t.post('/api/auth/logout', undefined, { token: user.token, ip, headers: MOBILE })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })
        expect(authCookieLine(res)).toMatch(/^app_auth=;.*Max-Age=0/)
        const [row] = await t.db.sql`select 1 from clinical.user_sessions where id = ${user.sessionId}::uuid`
        expect(row).toBeUndefined()
        await expectError(await me(t, user.token), 401, 'Session revoked')
        expect((await me(t, other.token)).status).toBe(200)
        const rows = await auditRows(t, { action: 'logout', userId: user.id })
        expect(rows).toHaveLength(1)
        expect(rows[0]!.ip_address).toBe(ip)
      })

      it('logout with the cookie ends the web session and clears the cookie', async () => {
        const email = uniqueEmail('logout-web')
        const id = await insertUser(t, { email })
        const web = await signIn(t, email, { ip: freshIp(), headers: WEB })
        const res = await t.post('/api/auth/logout', undefined, { ip: freshIp(), headers: withCookie(web.cookie!) })
        expect(res.status).toBe(200)
        expect(cookieValue(res)).toBe('')
        expect(await sessionCount(t, id)).toBe(0)
        await expectError(await t.get('/api/auth/me', { ip: freshIp(), headers: withCookie(web.cookie!) }), 401)
      })

      it('logout without a token still answers {success: true} and clears the cookie', async () => {
        const res = await t.post('/api/auth/logout', undefined, { ip: freshIp(), headers: WEB })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })
        expect(cookieValue(res)).toBe('')
      })

      it('GET /api/auth/me answers {user: {id, name, email, role, totp_enabled, email_verified, canLocalAuth}}; 401 without a valid token', async () => {
        const user = await verifiedUser('me')
        const res = await me(t, user.token)
        expect(res.status).toBe(200)
        const body = (await res.json()) as { user: Json }
        expect(body.user).toEqual({ id: user.id, name: 'Test User', email: user.email, role: 'user', totp_enabled: false, email_verified: true, canLocalAuth: true })
        await t.db.sql`update clinical.users set can_local_auth = false where id = ${user.id}`
        expect(((await (await me(t, user.token)).json()) as { user: Json }).user.canLocalAuth).toBe(false)
        await expectError(await t.get('/api/auth/me', { ip: freshIp(), headers: MOBILE }), 401)
        await expectError(await me(t, 'not.a.token'), 401)
        const forged = user.token.slice(0, -4) + (user.token.endsWith('AAAA') ? 'BBBB' : 'AAAA')
        await expectError(await me(t, forged), 401)
      })

      it('registration-status says registration is enabled by default', async () => {
        const res = await t.get('/api/auth/registration-status', { ip: freshIp() })
        expect(res.status).toBe(200)
        expect(await res.json()).toMatchObject({ registrationEnabled: true })
      })
    })

    describe('input validation', () => {
      it('every accounts endpoint answers a malformed body with 400 and a message, never 500', async () => {
        const user = await verifiedUser('invalid-bodies')
        const cases: Array<[string, unknown, string?]> = [
          ['/api/auth/login', { email: user.email }],
          ['/api/auth/login', { email: '', password: CLINICAL_PASSWORD }],
          ['/api/auth/login', { email: user.email, password: 'x'.repeat(PASSWORD_MAX + 1) }],
          ['/api/auth/login', { email: [user.email], password: CLINICAL_PASSWORD }],
          ['/api/auth/resend-verification', {}],
          ['/api/auth/resend-verification', { email: 42 }],
          ['/api/auth/forgot-password', { email: '' }],
          ['/api/auth/forgot-password', {}],
          ['/api/auth/reset-password', { token: '', newPassword: STRONG_PASSWORD }],
          ['/api/auth/reset-password', { token: 'abc', newPassword: 12345678 }],
          ['/api/auth/change-password', { newPassword: STRONG_PASSWORD }, user.token],
          ['/api/auth/change-password', { currentPassword: CLINICAL_PASSWORD, newPassword: 'x'.repeat(PASSWORD_MAX + 1) }, user.token],
        ]
        for (const [path, body, token] of cases) {
          const answer = await expectError(await t.post(path, body, { token, ip: freshIp(), headers: MOBILE }), 400)
          expect(answer.error, `${path} ${JSON.stringify(body).slice(0, 60)}`).not.toBe('Request failed')
        }
        for (const path of ['/api/auth/login', '/api/auth/forgot-password', '/api/auth/reset-password']) {
          const garbled = await t.request(path, {
            method: 'POST', ip: freshIp(), headers: { 'content-type': 'application/json', ...MOBILE }, body: '{"email": ',
          })
          await expectError(garbled, 400)
        }
        expect((await login(t, user.email)).status).toBe(200)
      })
    })

    describe('token transport', () => {
      it('the Bearer header is read first, then the cookie; an empty Bearer value falls through to the cookie', async () => {
        const email = uniqueEmail('transport')
        await insertUser(t, { email })
        const web = await signIn(t, email, { ip: freshIp(), headers: WEB })
        const mobile = await signIn(t, email, { ip: freshIp() })
        const ip = freshIp()
        const get = (headers: Record<string, string>) => t.get('/api/auth/me', { ip, headers })
        expect((await get({ authorization: 'Bearer ', cookie: `app_auth=${web.token}` })).status).toBe(200)
        expect((await get({ authorization: `Bearer ${mobile.token}`, cookie: 'app_auth=garbage' })).status).toBe(200)
        expect((await get({ authorization: 'Bearer garbage', cookie: `app_auth=${web.token}` })).status).toBe(401)
      })
    })

    describe('audit log', () => {
      it('holds register, login, login_failed, login_blocked, logout, email_verified, password_changed and password_reset, and no password or token in any details', async () => {
        const rows = await auditRows(t, {})
        const actions = new Set(rows.map((r) => r.action))
        for (const action of ['register', 'login', 'login_failed', 'login_blocked', 'logout', 'email_verified', 'password_changed', 'password_reset']) {
          expect(actions.has(action), action).toBe(true)
        }
        expect(secrets.size).toBeGreaterThan(10)
        for (const row of rows) {
          for (const secret of secrets) expect(row.details.includes(secret), `${row.action}: ${row.details}`).toBe(false)
          expect(row.details).not.toMatch(/"(password|newPassword|currentPassword|token)"/i)
        }
      })
    })
  })

  describe(`clinical accounts without mail sending [${target}]`, () => {
    let t: TestApp
    const firstEmail = uniqueEmail('nomail-first')
    let firstRes: Response
    let admin: LoginBody

    beforeAll(async () => {
      t = await startTestApp({ target })
      // Registration is off before the first account exists: the first one is still allowed.
      await setConfigValues(t.booted.core, { registration_enabled: 'false' })
      firstRes = await register(t, firstEmail, {}, { headers: MOBILE })
      admin = (await firstRes.clone().json()) as LoginBody
    })
    afterAll(() => t.close())

    it('registration off: the very first user is still allowed (admin), every later one gets 403 until it is on again', async () => {
      expect(firstRes.status).toBe(200)
      expect(admin.user).toMatchObject({ role: 'admin', email_verified: true })
      expect(await (await t.get('/api/auth/registration-status', { ip: freshIp() })).json()).toMatchObject({ registrationEnabled: false })
      const email = uniqueEmail('nomail-refused')
      await expectError(await register(t, email), 403)
      expect(await userCount(t, email)).toBe(0)
      const on = await t.post('/api/admin/settings/registration', { enabled: true }, { token: admin.token, ip: freshIp(), headers: MOBILE })
      expect(on.status).toBe(200)
      expect((await register(t, email)).status).toBe(200)
    })

    it('a later user is verified and signed in at once: token, sessionId and user, and the cookie for a web client', async () => {
      const email = uniqueEmail('nomail-web')
      const res = await register(t, email, { name: 'Web Person' }, { headers: WEB })
      expect(res.status).toBe(200)
      const body = (await res.json()) as LoginBody & { needsVerification: boolean; message: string }
      expectSignedInAtOnce(body)
      expect(body.user).toEqual({ id: expect.any(Number), name: 'Web Person', email, role: 'user', totp_enabled: false, email_verified: true })
      expect(body).not.toHaveProperty('cookie')
      const cookie = authCookieLine(res)
      expect(cookie?.startsWith(`app_auth=${body.token};`)).toBe(true)
      expect(cookie).toMatch(/HttpOnly/i)
      expect(cookie).toMatch(/SameSite=Lax/i)
      expect(claims(body.token).exp - claims(body.token).iat).toBe(30 * DAY_S)
      expect((await t.get('/api/auth/me', { ip: freshIp(), headers: withCookie(body.token) })).status).toBe(200)
      const [row] = await t.db.sql<{ client: string }>`select client from clinical.user_sessions where id = ${body.sessionId}::uuid`
      expect(row!.client).toBe('web')
      expect((await login(t, email)).status).toBe(200)
    })

    it('a mobile client registering gets no cookie, and its token works as Bearer', async () => {
      const email = uniqueEmail('nomail-mobile')
      const res = await register(t, email, {}, { headers: MOBILE })
      expect(res.status).toBe(200)
      const body = (await res.json()) as LoginBody & { needsVerification: boolean }
      expect(body.needsVerification).toBe(false)
      expect(authCookieLine(res)).toBeUndefined()
      expect(claims(body.token).exp - claims(body.token).iat).toBe(365 * DAY_S)
      expect((await me(t, body.token)).status).toBe(200)
      const rows = await auditRows(t, { action: 'register', userId: body.user.id as number })
      expect(JSON.parse(rows[0]!.details)).toMatchObject({ role: 'user', verified: true })
    })
  })

  describe(`clinical accounts with the bot challenge [${target}]`, () => {
    let t: TestApp
    beforeAll(async () => {
      t = await startTestApp({ target, env: challenge.env })
      expect((await register(t, uniqueEmail('challenge-first'), { challengeToken: PASS_TOKEN })).status).toBe(200)
    })
    afterAll(() => t.close())

    it('register needs a passing challengeToken: missing or failing is 400 and creates no user; the verifier sees the client address', async () => {
      const email = uniqueEmail('challenge')
      await expectError(await register(t, email), 400)
      await expectError(await register(t, email, { challengeToken: 'wrong-token' }), 400)
      expect(await userCount(t, email)).toBe(0)
      const ip = freshIp()
      expect((await register(t, email, { challengeToken: PASS_TOKEN }, { ip })).status).toBe(200)
      expect(challenge.calls.at(-1)).toEqual({ secret: challenge.env.CHALLENGE_SECRET_KEY!, response: PASS_TOKEN, remoteip: ip })
    })

    it('forgot-password needs it too; login does not', async () => {
      const email = uniqueEmail('challenge-login')
      await insertUser(t, { email })
      await expectError(await t.post('/api/auth/forgot-password', { email }, { ip: freshIp(), headers: MOBILE }), 400)
      await expectError(await t.post('/api/auth/forgot-password', { email, challengeToken: 'wrong-token' }, { ip: freshIp(), headers: MOBILE }), 400)
      expect((await t.post('/api/auth/forgot-password', { email, challengeToken: PASS_TOKEN }, { ip: freshIp(), headers: MOBILE })).status).toBe(200)
      const calls = challenge.calls.length
      expect((await login(t, email)).status).toBe(200)
      expect(challenge.calls).toHaveLength(calls)
    })
  })
}

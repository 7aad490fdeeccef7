// Spec 3, Configuration: the mail settings through the real app on each database target, with real SMTP listeners:
// the status and its source (env, database, none), stored settings used by the mailer from the next send on (the
// test email and a registration's verification mail), the environment winning over stored settings, the password
// sealed at rest and kept when sent empty, the test email's failure reporting the server's message without the
// password, the test email's rate rule, and the audit rows.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { SMTPServer } from 'smtp-server'
import type { AddressInfo } from 'node:net'
import { TEST_EMAIL_RULE } from '../plugins/admin/services/config'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, flushAudit, freshIp, MOBILE, userWithSession, type SignedIn } from './support/clinical'
import { closedPort } from './support/net'
import { startSmtpSink, type SmtpSink } from './support/smtp'
import { uniqueEmail } from './support/quiz'

setDefaultTimeout(30_000)

const PASS = `mail-pass-${crypto.randomUUID()}`
const REJECTED_PASS = `rejected-pass-${crypto.randomUUID()}`
const base64 = (s: string) => Buffer.from(s).toString('base64')

/** An SMTP server that refuses every sign-in and quotes the credentials it was sent in its refusal. */
async function startRefusingServer(): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    secure: false, allowInsecureAuth: true, disabledCommands: ['STARTTLS'], logger: false,
    onAuth(auth, _session, cb) {
      cb(new Error(`Authentication failed for ${auth.username} with password ${auth.password}`))
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

for (const target of databaseTargets()) {
  describe(`admin mail settings [${target}]`, () => {
    let envSink: SmtpSink
    let dbSink: SmtpSink
    let refusing: { port: number; close(): Promise<void> }
    /** SMTP_* set in its environment (to envSink). */
    let withEnv: TestApp
    /** No mail in its environment. */
    let withoutEnv: TestApp
    let envAdmin: SignedIn
    let admin: SignedIn
    const answers: string[] = []

    beforeAll(async () => {
      ;[envSink, dbSink, refusing] = await Promise.all([startSmtpSink(), startSmtpSink(), startRefusingServer()])
      ;[withEnv, withoutEnv] = await Promise.all([
        startTestApp({ target, env: envSink.env }),
        startTestApp({ target, env: { APP_URL: 'http://localhost' } }),
      ])
      envAdmin = await userWithSession(withEnv, 'admin')
      admin = await userWithSession(withoutEnv, 'admin')
    }, 120_000)
    afterAll(async () => {
      await Promise.all([withEnv?.close(), withoutEnv?.close()])
      await Promise.all([envSink?.close(), dbSink?.close(), refusing?.close()])
    })

    const call = async (app: TestApp, who: SignedIn, method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown) => {
      const opts = { token: who.token, ip: freshIp(), headers: MOBILE }
      const res = method === 'GET' ? await app.get(path, opts) : method === 'PUT' ? await app.put(path, body, opts) : await app.post(path, body, opts)
      const text = await res.text()
      answers.push(text)
      return { status: res.status, body: JSON.parse(text) }
    }
    const status = (app: TestApp, who: SignedIn) => call(app, who, 'GET', '/api/admin/config/smtp/status')
    const saveSmtp = (app: TestApp, who: SignedIn, settings: Record<string, unknown>) => call(app, who, 'PUT', '/api/admin/config/smtp', {
      host: '127.0.0.1', port: dbSink.port, user: 'mailer', pass: PASS, from: 'Clinic <clinic@example.test>', secure: false, ...settings,
    })
    const testEmail = (app: TestApp, who: SignedIn, to: string) => call(app, who, 'POST', '/api/admin/config/test-email', { to })
    const storedPass = async (app: TestApp) =>
      (await app.db.sql<{ value: string }>`select value from clinical.app_config where key = 'smtp.pass'`)[0]?.value ?? null

    it('without mail anywhere: source none, and the test email says mail is not configured', async () => {
      expect((await status(withoutEnv, admin)).body).toEqual({ configured: false, host: '', port: '', user: '', from: '', source: 'none', note: '' })
      const res = await testEmail(withoutEnv, admin, uniqueEmail('nobody'))
      expect(res.status).toBe(200)
      expect(res.body.success).toBe(false)
      expect(res.body.message).toContain('not configured')
    })

    it('stored settings: source database, the password sealed at rest, and the test email reaches that server', async () => {
      expect((await saveSmtp(withoutEnv, admin, {})).status).toBe(200)
      expect((await status(withoutEnv, admin)).body).toEqual({
        configured: true, host: '127.0.0.1', port: String(dbSink.port), user: 'mailer', from: 'Clinic <clinic@example.test>', source: 'database', note: '',
      })
      const sealed = await storedPass(withoutEnv)
      expect(sealed).not.toContain(PASS)
      expect(withoutEnv.booted.core.crypto.openText(sealed!)).toBe(PASS)

      const to = uniqueEmail('db-test')
      const res = await testEmail(withoutEnv, admin, to)
      expect(res.body.success).toBe(true)
      const mail = await dbSink.waitFor((m) => m.to.includes(to))
      expect(mail.from).toBe('clinic@example.test')
      expect(envSink.to(to)).toHaveLength(0)
    })

    it('the mailer uses stored settings from then on: a registration now needs its email link, sent to that server', async () => {
      const email = uniqueEmail('registers')
      const res = await withoutEnv.post('/api/auth/register', { name: 'New Clinician', email, password: CLINICAL_PASSWORD }, { ip: freshIp(), headers: MOBILE })
      expect(res.status).toBe(200)
      expect((await res.json()).needsVerification).toBe(true)
      await dbSink.waitFor((m) => m.to.includes(email) && m.text.includes('/api/auth/verify-email?token='))
    })

    it('an empty password keeps the stored one; an empty user removes it; an empty host removes every SMTP setting', async () => {
      const sealed = await storedPass(withoutEnv)
      expect((await saveSmtp(withoutEnv, admin, { pass: '' })).status).toBe(200)
      expect(await storedPass(withoutEnv)).toBe(sealed)
      expect((await saveSmtp(withoutEnv, admin, { user: '', pass: '' })).status).toBe(200)
      expect(await storedPass(withoutEnv)).toBeNull()
      expect((await saveSmtp(withoutEnv, admin, { host: '' })).status).toBe(200)
      expect((await withoutEnv.db.sql`select key from clinical.app_config where key like 'smtp.%'`)).toHaveLength(0)
      expect((await status(withoutEnv, admin)).body.source).toBe('none')
    })

    it('bad settings are 400 invalid_setting naming the field', async () => {
      for (const [field, value] of [['host', 'not a host!'], ['from', 'no address here']] as const) {
        const res = await saveSmtp(withoutEnv, admin, { [field]: value })
        expect(res.status, field).toBe(400)
        expect(res.body.code).toBe('invalid_setting')
        expect(res.body.error).toContain(`smtp.${field}`)
      }
      expect((await saveSmtp(withoutEnv, admin, { port: 0 })).status).toBe(400)
    })

    it('a refused sign-in: success false with the server\'s message, and no form of the password in it', async () => {
      expect((await saveSmtp(withoutEnv, admin, { port: refusing.port, pass: REJECTED_PASS })).status).toBe(200)
      const res = await testEmail(withoutEnv, admin, uniqueEmail('refused'))
      expect(res.status).toBe(200)
      expect(res.body.success).toBe(false)
      expect(res.body.message).toContain('Authentication failed for mailer')
      expect(res.body.message).toContain('[redacted]')
      for (const form of [REJECTED_PASS, base64(REJECTED_PASS), base64(`\u0000mailer\u0000${REJECTED_PASS}`)]) expect(res.body.message).not.toContain(form)
    })

    it('an unreachable server: success false with the connection error', async () => {
      expect((await saveSmtp(withoutEnv, admin, { port: closedPort() })).status).toBe(200)
      const res = await testEmail(withoutEnv, admin, uniqueEmail('unreachable'))
      expect(res.body.success).toBe(false)
      expect(res.body.message).toMatch(/ECONNREFUSED|connect/i)
      await saveSmtp(withoutEnv, admin, { host: '' })
    })

    it('the environment wins: stored settings do not change where mail goes, and the status says so', async () => {
      expect((await saveSmtp(withEnv, envAdmin, {})).status).toBe(200)
      const { body } = await status(withEnv, envAdmin)
      expect(body).toMatchObject({ configured: true, source: 'env', host: '127.0.0.1', port: String(envSink.port), from: 'quiz@example.test' })
      expect(body.note).toContain('environment')
      const to = uniqueEmail('env-test')
      expect((await testEmail(withEnv, envAdmin, to)).body.success).toBe(true)
      await envSink.waitFor((m) => m.to.includes(to))
      expect(dbSink.to(to)).toHaveLength(0)
    })

    it(`at most ${TEST_EMAIL_RULE.limit} test emails per admin per ${TEST_EMAIL_RULE.windowS / 60} minutes (429)`, async () => {
      const busy = await userWithSession(withoutEnv, 'admin')
      for (let i = 0; i < TEST_EMAIL_RULE.limit; i++) expect((await testEmail(withoutEnv, busy, uniqueEmail('limit'))).status).toBe(200)
      const over = await withoutEnv.post('/api/admin/config/test-email', { to: uniqueEmail('limit') }, { token: busy.token, ip: freshIp(), headers: MOBILE })
      expect(over.status).toBe(429)
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0)
    })

    it('changes and test emails are audited without the password; no answer held it', async () => {
      await flushAudit(withoutEnv)
      const rows = await withoutEnv.db.sql<{ action: string; user_id: number; details: string }>`
        select action, user_id, details from clinical.audit_log where action in ('smtp_settings_changed', 'config_test_email') order by id`
      expect(rows.filter((r) => r.action === 'smtp_settings_changed').length).toBeGreaterThan(3)
      expect(JSON.parse(rows.find((r) => r.action === 'smtp_settings_changed')!.details).keys).toContain('smtp.pass')
      expect(rows.some((r) => r.action === 'config_test_email' && JSON.parse(r.details).delivered === true)).toBe(true)
      const everything = JSON.stringify(await withoutEnv.db.sql`select details from clinical.audit_log`)
      for (const secret of [PASS, REJECTED_PASS]) {
        expect(everything).not.toContain(secret)
        for (const text of answers) expect(text).not.toContain(secret)
      }
    })
  })
}

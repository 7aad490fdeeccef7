// src/core/outbox.ts through the real app on each database target, with a real SMTP listener the test stops and
// starts again on the same port: a password reset while the mail server is down answers as usual and its mail waits
// in the outbox (the admin sees it with its error); with the server back the retry schedule (run directly, on a moved
// clock) delivers it exactly once, also when two runs (two Cores on PostgreSQL) race; a rolled-back transaction sends
// nothing; a message past the maximum age is given up and an admin's retry (API or console) sends it; no credential
// or link token reaches the last error, the log or an answer, and the body is sealed at rest and gone once sent.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { tmpdir } from 'node:os'
import { SMTPServer } from 'smtp-server'
import { createLogger } from '../src/core/log'
import { openDb } from '../src/core/db'
import { MAIL_MAX_AGE_MS, MAIL_RETRY_BASE_DELAY_MS, MAIL_RETRY_JITTER, MAIL_RETRY_MAX_DELAY_MS, retryDelayMs } from '../src/core/outbox'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, cookieValue, EVIL, flushAudit, freshIp, insertUser, MOBILE, userWithSession } from './support/clinical'
import { capturingLogger, closedPort } from './support/net'
import { uniqueEmail } from './support/quiz'
import { rejection, waitFor } from './support/wait'

setDefaultTimeout(30_000)

const PASS = `outbox-pass-${crypto.randomUUID()}`
const LINK_TOKEN = `tok${crypto.randomUUID().replaceAll('-', '')}`
const base64 = (s: string) => Buffer.from(s).toString('base64')
const MINUTE_MS = 60_000

type Mode = 'accept' | 'refuse-auth' | 'quote-data'
/** An SMTP listener on a fixed port that can be stopped and started again; it can refuse, quoting what it was sent. */
function smtpListener(port: number) {
  const received: Array<{ to: string[]; raw: string }> = []
  let server: SMTPServer | null = null
  const state = { mode: 'accept' as Mode }
  return {
    state,
    received,
    to: (address: string) => received.filter((m) => m.to.includes(address.toLowerCase())),
    async start() {
      server = new SMTPServer({
        secure: false, authOptional: true, allowInsecureAuth: true, disabledCommands: ['STARTTLS'], logger: false,
        onAuth(auth, _session, cb) {
          if (state.mode === 'refuse-auth') return cb(new Error(`Authentication failed for ${auth.username} with password ${auth.password}`))
          cb(null, { user: auth.username })
        },
        onData(stream, session, cb) {
          const chunks: Buffer[] = []
          stream.on('data', (c: Buffer) => chunks.push(c))
          stream.on('end', () => {
            // quoted-printable undone, so the test reads the link as the mail carries it
            const raw = Buffer.concat(chunks).toString('utf8').replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
            if (state.mode === 'quote-data') return cb(new Error(`Message refused: ${/\S*token=\S*/.exec(raw)?.[0] ?? 'no link'}`))
            received.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw })
            cb()
          })
        },
      })
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject)
        server!.listen(port, '127.0.0.1', () => resolve())
      })
    },
    async stop() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
      server = null
    },
  }
}

interface Listed { id: number; to: string; subject: string; status: string; attempts: number; lastError: string | null; nextAttemptAt: string | null }

for (const target of databaseTargets()) {
  describe(`mail outbox [${target}]`, () => {
    const port = closedPort()
    const smtp = smtpListener(port)
    const clock = { now: Date.now() }
    const lines: string[] = []
    const answers: string[] = []
    const env = {
      SMTP_HOST: '127.0.0.1', SMTP_PORT: String(port), SMTP_USER: 'mailer', SMTP_PASS: PASS, SMTP_FROM: 'clinic@example.test',
      SMTP_SECURE: 'false', APP_URL: 'http://localhost',
    }
    let t: TestApp
    /** A second Core on the same PostgreSQL database (two processes); on PGlite the same one runs twice. */
    let other: TestApp | null = null

    const schedule = (app: TestApp) => app.booted.schedules.find((s) => s.name === 'core.mail.outbox')!.run()
    // A fresh session each time: the clock moves further than a session's idle timeout.
    const admin = () => userWithSession(t, 'admin')
    const outbox = async () => {
      const res = await t.get('/api/admin/config/smtp/outbox', { token: (await admin()).token, ip: freshIp(), headers: MOBILE })
      const text = await res.text()
      answers.push(text)
      expect(res.status).toBe(200)
      return JSON.parse(text) as { success: true; counts: Record<string, number>; messages: Listed[] }
    }
    const listedTo = async (address: string) => (await outbox()).messages.filter((m) => m.to === address)
    const retry = async (id: number) => {
      const res = await t.post(`/api/admin/config/smtp/outbox/${id}/retry`, undefined, { token: (await admin()).token, ip: freshIp(), headers: MOBILE })
      const text = await res.text()
      answers.push(text)
      return { status: res.status, body: JSON.parse(text) }
    }
    const rowOf = async (address: string) =>
      (await t.db.sql<{ id: number; status: string; body: string | null; last_error: string | null }>`
        select id, status, body, last_error from core.mail_outbox where recipient = ${address} order by id`)
    const send = (to: string, text = 'Hello') => t.booted.core.mail.send({ to, subject: 'Outbox test', text })

    beforeAll(async () => {
      t = await startTestApp({ target, env, boot: { now: () => clock.now, log: capturingLogger(lines) } })
      if (target === 'postgres') {
        const db = await openDb({ url: t.booted.core.config.databaseUrl, dataDir: tmpdir(), poolSize: 4 })
        other = await startTestApp({ target, env, boot: { db, now: () => clock.now, log: createLogger('silent') } })
      }
    }, 120_000)
    afterAll(async () => {
      await other?.close()
      await t?.close()
      await smtp.stop()
    })

    it(`backs off from ${MAIL_RETRY_BASE_DELAY_MS / 1000} s, doubling, capped at ${MAIL_RETRY_MAX_DELAY_MS / 60_000} min, with jitter`, () => {
      expect(retryDelayMs(1, () => 0.5)).toBe(MAIL_RETRY_BASE_DELAY_MS)
      expect(retryDelayMs(2, () => 0.5)).toBe(2 * MAIL_RETRY_BASE_DELAY_MS)
      expect(retryDelayMs(40, () => 0.5)).toBe(MAIL_RETRY_MAX_DELAY_MS)
      expect(retryDelayMs(1, () => 0)).toBe(MAIL_RETRY_BASE_DELAY_MS * (1 - MAIL_RETRY_JITTER))
      expect(retryDelayMs(1, () => 1)).toBe(MAIL_RETRY_BASE_DELAY_MS * (1 + MAIL_RETRY_JITTER))
    })

    let resetTo = ''
    it('the mail server down: a password reset answers as usual and its mail waits in the outbox with its error', async () => {
      resetTo = uniqueEmail('reset')
      await insertUser(t, { email: resetTo })
      const forgot = (email: string) => t.post('/api/auth/forgot-password', { email }, { ip: freshIp(), headers: MOBILE })
      const [known, unknown] = [await forgot(resetTo), await forgot(uniqueEmail('nobody'))]
      expect(known.status).toBe(200)
      expect(await known.json()).toEqual(await unknown.json())

      const [listed] = await waitFor(async () => {
        const found = await listedTo(resetTo)
        return found.length > 0 && found[0]!.attempts > 0 ? found : null
      }, 'the reset mail in the outbox')
      expect(listed).toMatchObject({ subject: expect.any(String), status: 'pending', attempts: 1 })
      expect(listed!.lastError).toMatch(/ECONNREFUSED|connect/i)
      expect(Date.parse(listed!.nextAttemptAt!)).toBeGreaterThan(clock.now)
      // sealed at rest: the link is not readable in the table
      const [row] = await rowOf(resetTo)
      expect(row!.body).toStartWith('enc:v1:')
      expect(row!.body).not.toContain('reset-password')
      expect(t.booted.core.crypto.openText(row!.body!)).toContain('/reset-password?token=')
    })

    it('the server back: the schedule delivers it once it is due, exactly once, and the body is deleted', async () => {
      await smtp.start()
      await schedule(t)
      expect(smtp.to(resetTo)).toHaveLength(0) // not due yet
      clock.now += 2 * MINUTE_MS
      await schedule(t)
      await schedule(t)
      expect(smtp.to(resetTo)).toHaveLength(1)
      expect(smtp.to(resetTo)[0]!.raw).toContain('/reset-password?token=')
      expect(await listedTo(resetTo)).toHaveLength(0)
      const [row] = await rowOf(resetTo)
      expect(row).toMatchObject({ status: 'sent', body: null, last_error: null })
      expect((await outbox()).counts.sent).toBeGreaterThanOrEqual(1)
    })

    it('two schedule runs at once (two Cores on PostgreSQL) send each waiting message once', async () => {
      await smtp.stop()
      const addresses = Array.from({ length: 6 }, (_, i) => uniqueEmail(`race-${i}`))
      for (const to of addresses) await send(to)
      for (const to of addresses) expect((await rowOf(to))[0]!.status).toBe('pending')
      await smtp.start()
      clock.now += 2 * MINUTE_MS
      await Promise.all([schedule(t), schedule(other ?? t), schedule(t), schedule(other ?? t)])
      for (const to of addresses) expect(smtp.to(to), to).toHaveLength(1)
    })

    it('a rolled-back transaction sends nothing and keeps nothing; a committed one sends after its commit', async () => {
      const core = t.booted.core
      const dropped = uniqueEmail('rolled-back')
      const kept = uniqueEmail('committed')
      expect((await rejection(core.transaction(async (tx) => {
        await tx.mail.send({ to: dropped, subject: 'Reset', text: `http://localhost/reset-password?token=${LINK_TOKEN}` })
        throw new Error('the unit of work failed')
      }))).message).toContain('the unit of work failed')
      await core.transaction(async (tx) => {
        await tx.mail.send({ to: kept, subject: 'Welcome', text: 'Hello' })
        expect(smtp.to(kept)).toHaveLength(0)
      })
      expect(smtp.to(kept)).toHaveLength(1)
      await clockedRuns(2)
      expect(smtp.to(dropped)).toHaveLength(0)
      expect(await rowOf(dropped)).toHaveLength(0)
    })

    /** Runs the schedule `n` times, each a little later. */
    async function clockedRuns(n: number) {
      for (let i = 0; i < n; i++) {
        clock.now += MINUTE_MS
        await schedule(t)
      }
    }

    it('no credential and no link token in the last error, the log or an answer', async () => {
      const refusedAuth = uniqueEmail('refused-auth')
      const quoted = uniqueEmail('quoted')
      smtp.state.mode = 'refuse-auth'
      await send(refusedAuth)
      smtp.state.mode = 'quote-data'
      await send(quoted, `Reset: http://localhost/reset-password?token=${LINK_TOKEN}`)
      smtp.state.mode = 'accept'
      const [auth] = await listedTo(refusedAuth)
      expect(auth!.lastError).toContain('Authentication failed for mailer')
      expect(auth!.lastError).toContain('[redacted]')
      const [data] = await listedTo(quoted)
      expect(data!.lastError).toContain('token=[redacted]')
      const everything = [...answers, ...lines, JSON.stringify(await t.db.sql`select last_error from core.mail_outbox`)]
      for (const text of everything) {
        for (const secret of [PASS, base64(PASS), base64(`\u0000mailer\u0000${PASS}`), LINK_TOKEN]) expect(text).not.toContain(secret)
      }
      await clockedRuns(3)
      expect(smtp.to(refusedAuth)).toHaveLength(1)
      expect(smtp.to(quoted)).toHaveLength(1)
    })

    it('past the maximum age a message is given up (logged as an error); an admin retries it from the console or the API', async () => {
      await smtp.stop()
      const fromPage = uniqueEmail('given-up-page')
      const fromApi = uniqueEmail('given-up-api')
      await send(fromPage)
      await send(fromApi)
      clock.now += MAIL_MAX_AGE_MS + MINUTE_MS
      await schedule(t)
      const [page, api] = [(await listedTo(fromPage))[0]!, (await listedTo(fromApi))[0]!]
      for (const m of [page, api]) expect(m).toMatchObject({ status: 'failed', attempts: 2, nextAttemptAt: null })
      expect((await outbox()).counts.failed).toBeGreaterThanOrEqual(2)
      const givenUp = lines.map((l) => JSON.parse(l) as { level: number; msg: string; mailId?: number })
        .filter((l) => l.msg.startsWith('mail given up'))
      expect(givenUp.map((l) => l.mailId)).toEqual(expect.arrayContaining([page.id, api.id]))
      expect(givenUp.every((l) => l.level === 50)).toBe(true)
      await smtp.start()
      await schedule(t)
      expect(smtp.to(fromPage)).toHaveLength(0) // given up: only a retry sends it

      // the console: the section lists it with a Retry button; a form from another site is refused
      const email = uniqueEmail('console-admin')
      await insertUser(t, { email, role: 'admin' })
      const login = await t.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
      const cookie = `app_auth=${cookieValue(login)}`
      const settings = await (await t.get('/admin/settings', { headers: { accept: 'text/html', cookie }, ip: freshIp() })).text()
      answers.push(settings)
      expect(settings).toContain('id="mail-outbox"')
      expect(settings).toContain(`<th scope="row">${fromPage}</th>`)
      expect(settings).toContain(`action="/admin/settings/outbox/${page.id}/retry"`)
      const retryPath = `/admin/settings/outbox/${page.id}/retry`
      expect((await t.form(retryPath, {}, { headers: { cookie, ...EVIL }, ip: freshIp() })).status).toBe(403)
      expect(smtp.to(fromPage)).toHaveLength(0)
      const posted = await t.form(retryPath, {}, { headers: { cookie }, ip: freshIp() })
      expect(posted.status).toBe(303)
      expect(posted.headers.get('location')).toBe('/admin/settings?notice=mail_sent#mail-outbox')
      expect(smtp.to(fromPage)).toHaveLength(1)

      // the API: the message as it stands after the attempt; a sent one is 409, an unknown one 404
      const res = await retry(api.id)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ success: true, message: { id: api.id, status: 'sent', attempts: 3, lastError: null } })
      expect(smtp.to(fromApi)).toHaveLength(1)
      expect(await retry(api.id)).toMatchObject({ status: 409, body: { code: 'mail_already_sent' } })
      expect(await retry(2_000_000_000)).toMatchObject({ status: 404, body: { code: 'mail_not_found' } })
      expect(smtp.to(fromApi)).toHaveLength(1)

      await flushAudit(t)
      const audited = await t.db.sql<{ details: string }>`select details from clinical.audit_log where action = 'mail_outbox_retry' order by id`
      expect(audited.map((r) => JSON.parse(r.details).mailId)).toEqual([page.id, api.id])
      for (const r of audited) expect(r.details).not.toContain('@')
    })

    it('a retry while the server is still down keeps the message waiting with a fresh window and the new error', async () => {
      await smtp.stop()
      const to = uniqueEmail('still-down')
      await send(to)
      clock.now += MAIL_MAX_AGE_MS + MINUTE_MS
      await schedule(t)
      const [failed] = await listedTo(to)
      expect(failed!.status).toBe('failed')
      const res = await retry(failed!.id)
      expect(res.body.message).toMatchObject({ status: 'pending', attempts: 3 })
      expect(res.body.message.lastError).toMatch(/ECONNREFUSED|connect/i)
      expect(Date.parse(res.body.message.giveUpAt)).toBeGreaterThan(clock.now + MAIL_MAX_AGE_MS - MINUTE_MS)
      await smtp.start()
    })

    it('only admins see and retry the outbox', async () => {
      const user = await userWithSession(t, 'user')
      expect((await t.get('/api/admin/config/smtp/outbox', { token: user.token, ip: freshIp(), headers: MOBILE })).status).toBe(403)
      expect((await t.post('/api/admin/config/smtp/outbox/1/retry', undefined, { token: user.token, ip: freshIp(), headers: MOBILE })).status).toBe(403)
      expect((await t.get('/api/admin/config/smtp/outbox', { ip: freshIp(), headers: MOBILE })).status).toBe(401)
    })
  })
}

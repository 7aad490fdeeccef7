// Spec 1, Contact: the public form (validation, storage, the mail to every admin through a real SMTP listener, the
// per-address limit, the bot challenge when configured) and the two admin routes, whose admin check is made in the
// handler: 403 for other signed-in users, working for admins.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { Writable } from 'node:stream'
import pino from 'pino'
import { CONTACT_RULE } from '../plugins/quiz/services/contact'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { PASS_TOKEN, startChallengeServer, type ChallengeServer } from './support/challenge'
import { API, createAccount, expectDetail, expectValidation, freshIp, registerAdmin, settle, type Account } from './support/quiz'
import { startSmtpSink, type SmtpSink } from './support/smtp'

setDefaultTimeout(30_000)

interface Submission { id: number; name: string; email: string; type: string; message: string; read: boolean; created_at: string }

const valid = (over: Record<string, unknown> = {}) => ({
  name: 'Dana Example', email: 'dana@example.test', type: 'question', message: 'How do I reset my progress?', ...over,
})

for (const target of databaseTargets()) {
  describe(`contact [${target}]`, () => {
    let smtp: SmtpSink
    let t: TestApp
    let admin: Account
    let admin2: Account
    let moderator: Account
    let user: Account

    beforeAll(async () => {
      smtp = await startSmtpSink()
      t = await startTestApp({ target, env: smtp.env })
      admin = await registerAdmin(t)
      admin2 = await createAccount(t, admin, 'admin', 'admin2')
      moderator = await createAccount(t, admin, 'moderator')
      user = await createAccount(t, admin, 'user')
    })
    afterAll(async () => {
      await t.close()
      await smtp.close()
    })

    const send = (body: Record<string, unknown>, ip = freshIp()) => t.post(`${API}/contact`, body, { ip })
    const list = (who: Account) => t.get(`${API}/contact/submissions`, { token: who.token })

    it('stores a message without sign-in and mails every admin', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      const res = await send(valid({ name: `  Dana ${tag} `, message: `  Line one ${tag}\nLine two  `, type: 'moderator' }))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true })
      const [row] = await t.db.sql<Submission>`select * from quiz.contact_submissions where name = ${`Dana ${tag}`}`
      expect(row).toMatchObject({ email: 'dana@example.test', type: 'moderator', message: `Line one ${tag}\nLine two`, read: false })
      for (const a of [admin, admin2]) {
        const mail = await smtp.waitFor((m) => m.to.includes(a.email.toLowerCase()) && m.text.includes(tag))
        expect(mail.subject).toContain(`Dana ${tag}`)
        expect(mail.text).toContain(`Line one ${tag}\nLine two`)
        expect(mail.text).toContain('dana@example.test')
        expect(mail.text).toContain('Moderator request')
        expect(mail.to).toEqual([a.email.toLowerCase()]) // one mail each: no admin sees the others' addresses
      }
      await settle()
      expect(smtp.messages.filter((m) => m.text.includes(tag) && (m.to.includes(moderator.email.toLowerCase()) || m.to.includes(user.email.toLowerCase())))).toEqual([])
    })

    it('keeps a name on one line in the mail', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ name: `Eve ${tag}\nBcc: victim@example.test` }))).status).toBe(200)
      const mail = await smtp.waitFor((m) => m.to.includes(admin.email.toLowerCase()) && m.text.includes(tag))
      expect(mail.text).toContain(`Eve ${tag} Bcc: victim@example.test`)
      expect(mail.to).not.toContain('victim@example.test')
    })

    it('refuses bad input with 422 and stores nothing', async () => {
      const [before] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.contact_submissions`
      await expectValidation(await send(valid({ name: 'x'.repeat(121) })), 'name')
      await expectValidation(await send(valid({ name: '' })), 'name')
      await expectValidation(await send(valid({ name: '   ' })), 'name')
      await expectValidation(await send(valid({ message: 'x'.repeat(2001) })), 'message')
      await expectValidation(await send(valid({ message: ' \n ' })), 'message')
      await expectValidation(await send(valid({ email: 'not-an-address' })), 'email')
      await expectValidation(await send(valid({ type: 'complaint' })), 'type')
      const { name: _, ...noName } = valid()
      await expectValidation(await send(noName), 'name')
      const [after] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.contact_submissions`
      expect(after!.n).toBe(before!.n)
      // the limits themselves pass
      expect((await send(valid({ name: 'n'.repeat(120), message: 'm'.repeat(2000) }))).status).toBe(200)
    })

    it(`limits each client address to ${CONTACT_RULE.limit} messages an hour: 429 with Retry-After`, async () => {
      const ip = freshIp()
      for (let i = 0; i < CONTACT_RULE.limit; i++) expect((await send(valid({ message: `hello ${i}` }), ip)).status).toBe(200)
      const over = await send(valid(), ip)
      await expectDetail(over, 429)
      const retry = Number(over.headers.get('retry-after'))
      expect(retry).toBeGreaterThan(0)
      expect(retry).toBeLessThanOrEqual(3600)
      expect((await send(valid(), freshIp())).status).toBe(200) // another address is not affected
    })

    it('lists the messages for an admin, newest first, and marks one read', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ message: `first ${tag}` }))).status).toBe(200)
      expect((await send(valid({ message: `second ${tag}` }))).status).toBe(200)
      const res = await list(admin)
      expect(res.status).toBe(200)
      const all = (await res.json()) as Submission[]
      const mine = all.filter((s) => s.message.endsWith(tag))
      expect(mine.map((s) => s.message)).toEqual([`second ${tag}`, `first ${tag}`])
      expect(Object.keys(mine[0]!).sort()).toEqual(['created_at', 'email', 'id', 'message', 'name', 'read', 'type'])
      expect(Number.isNaN(Date.parse(mine[0]!.created_at))).toBe(false)
      for (let i = 1; i < all.length; i++) expect(Date.parse(all[i - 1]!.created_at)).toBeGreaterThanOrEqual(Date.parse(all[i]!.created_at))

      const target = mine[1]!
      expect(target.read).toBe(false)
      const read = await t.put(`${API}/contact/submissions/${target.id}/read`, undefined, { token: admin2.token })
      expect(read.status).toBe(200)
      expect(await read.json()).toEqual({ success: true })
      expect((await t.put(`${API}/contact/submissions/${target.id}/read`, undefined, { token: admin.token })).status).toBe(200)
      const after = (await (await list(admin)).json()) as Submission[]
      expect(after.find((s) => s.id === target.id)!.read).toBe(true)
      expect(after.find((s) => s.id === mine[0]!.id)!.read).toBe(false)
    })

    it('admin routes: 403 for a user and a moderator, 401 signed out, 404 unknown, 422 bad id', async () => {
      const [row] = await t.db.sql<{ id: number }>`select id from quiz.contact_submissions where not read order by id limit 1`
      for (const who of [user, moderator]) {
        await expectDetail(await list(who), 403)
        await expectDetail(await t.put(`${API}/contact/submissions/${row!.id}/read`, undefined, { token: who.token }), 403)
      }
      const [still] = await t.db.sql<{ read: boolean }>`select read from quiz.contact_submissions where id = ${row!.id}`
      expect(still!.read).toBe(false)
      expect((await t.get(`${API}/contact/submissions`)).status).toBe(401)
      expect((await t.put(`${API}/contact/submissions/${row!.id}/read`)).status).toBe(401)
      await expectDetail(await t.put(`${API}/contact/submissions/2147483647/read`, undefined, { token: admin.token }), 404)
      expect((await t.put(`${API}/contact/submissions/2147483648/read`, undefined, { token: admin.token })).status).toBe(422)
      expect((await t.put(`${API}/contact/submissions/0/read`, undefined, { token: admin.token })).status).toBe(422)
    })
  })

  describe(`contact while the mail server is down [${target}]`, () => {
    let t: TestApp
    const lines: string[] = []

    beforeAll(async () => {
      // An SMTP port nothing listens on: every send fails at once.
      const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
      const port = s.port!
      await s.stop(true)
      const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb() } }))
      t = await startTestApp({ target, env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(port), SMTP_FROM: 'quiz@example.test' }, boot: { log } })
      await registerAdmin(t)
    })
    afterAll(() => t.close())

    it('still stores the message and answers success; the mail waits in the outbox', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      const res = await t.post(`${API}/contact`, valid({ message: `mail down ${tag}` }), { ip: freshIp() })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true })
      expect((await t.db.sql`select id from quiz.contact_submissions where message = ${`mail down ${tag}`}`).length).toBe(1)
      const deadline = Date.now() + 10_000
      while (!lines.some((l) => l.includes('kept in the outbox')) && Date.now() < deadline) await settle(100)
      expect(lines.some((l) => l.includes('kept in the outbox'))).toBe(true)
    })
  })

  describe(`contact with the bot challenge [${target}]`, () => {
    let challenge: ChallengeServer
    let t: TestApp

    beforeAll(async () => {
      challenge = startChallengeServer()
      t = await startTestApp({ target, env: challenge.env })
    })
    afterAll(async () => {
      await t.close()
      await challenge.close()
    })

    const count = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.contact_submissions`)[0]!.n

    it('requires a passing challenge token', async () => {
      expect(await expectDetail(await t.post(`${API}/contact`, valid(), { ip: freshIp() }), 400)).toContain('challenge')
      await expectDetail(await t.post(`${API}/contact`, valid({ challenge_token: 'wrong' }), { ip: freshIp() }), 400)
      expect(await count()).toBe(0)
      const ip = freshIp()
      const ok = await t.post(`${API}/contact`, valid({ challenge_token: PASS_TOKEN }), { ip })
      expect(ok.status).toBe(200)
      expect(await count()).toBe(1)
      expect(challenge.calls.at(-1)).toMatchObject({ response: PASS_TOKEN, remoteip: ip })
    })
  })
}

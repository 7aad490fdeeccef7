// The contact pages: /quiz/contact (the public form, prefilled when signed in; Post/Redirect/Get to a thank-you
// note; 422 with messages next to the fields; 429 with Retry-After; the bot challenge when configured; the mail to
// every admin through a real SMTP listener) and /quiz/contact/messages (admins only: the messages escaped, newest
// first, marked read by a plain form or by htmx). Cross-origin posts are refused.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { CONTACT_MESSAGE_MAX, CONTACT_NAME_MAX } from '../plugins/quiz/models/contact'
import { CONTACT_RULE } from '../plugins/quiz/services/contact'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { PASS_TOKEN, startChallengeServer, type ChallengeServer } from './support/challenge'
import { createAccount, freshIp, PASSWORD, registerAdmin, settle, type Account } from './support/quiz'
import { startSmtpSink, type SmtpSink } from './support/smtp'

setDefaultTimeout(30_000)

const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

interface Row { id: number; name: string; email: string; type: string; message: string; read: boolean }

const valid = (over: Record<string, string> = {}) => ({
  name: 'Dana Example', email: 'dana@example.test', type: 'question', message: 'How do I reset my progress?', ...over,
})

/** The text of one table row of the messages page. */
const rowOf = (page: string, id: number) => {
  const start = page.indexOf(`<tr id="submission-${id}"`)
  expect(start).toBeGreaterThanOrEqual(0)
  return page.slice(start, page.indexOf('</tr>', start) + 5)
}

for (const target of databaseTargets()) {
  describe(`quiz pages: contact [${target}]`, () => {
    let smtp: SmtpSink
    let t: TestApp
    let admin: Account
    let user: Account
    let moderator: Account
    let adminCookie = ''
    let userCookie = ''
    let moderatorCookie = ''

    const pageCookie = async (email: string) => {
      const res = await t.form('/quiz/login', { email, password: PASSWORD }, { ip: freshIp() })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const rows = (tag: string) =>
      t.db.sql<Row>`select id, name, email, type, message, read from quiz.contact_submissions where message like ${`%${tag}%`} order by id`
    const count = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.contact_submissions`)[0]!.n
    const send = (fields: Record<string, string>, opts: { ip?: string; headers?: Record<string, string> } = {}) =>
      t.form('/quiz/contact', fields, { ip: opts.ip ?? freshIp(), headers: opts.headers })
    const messagesPage = async (cookie = adminCookie) => {
      const res = await t.get('/quiz/contact/messages', { headers: { ...html, cookie } })
      expect(res.status).toBe(200)
      return res.text()
    }

    beforeAll(async () => {
      smtp = await startSmtpSink()
      t = await startTestApp({ target, env: smtp.env })
      admin = await registerAdmin(t)
      user = await createAccount(t, admin, 'user', 'writer')
      moderator = await createAccount(t, admin, 'moderator', 'contactmod')
      adminCookie = await pageCookie(admin.email)
      userCookie = await pageCookie(user.email)
      moderatorCookie = await pageCookie(moderator.email)
    })
    afterAll(async () => {
      await t?.close()
      await smtp?.close()
    })

    it('signed out: the form with labelled fields, the two choices, the message limit; no widget without a challenge', async () => {
      const res = await t.get('/quiz/contact', { headers: html })
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(body).toContain('<html')
      expect(body).toContain('<h1>Contact us</h1>')
      expect(body).toContain('action="/quiz/contact" method="post"')
      for (const name of ['name', 'email', 'type', 'message']) {
        expect(body).toContain(`<label for="${name}">`)
        expect(body).toContain(`id="${name}" name="${name}"`)
      }
      expect(body).toContain('<option value="question">A question</option>')
      expect(body).toContain('<option value="moderator">Ask to become a moderator</option>')
      expect(body).toContain(`maxlength="${CONTACT_MESSAGE_MAX}"`)
      expect(body).toContain(`At most ${CONTACT_MESSAGE_MAX} characters.`)
      expect(body).toContain(`maxlength="${CONTACT_NAME_MAX}"`)
      expect(body).toContain('href="/quiz/login"')
      expect(body).not.toContain('cf-turnstile')
      // nothing prefilled for a visitor
      expect(body).toContain('id="name" name="name" type="text" value=""')
      expect(body).toContain('id="email" name="email" type="email" value=""')

      const fragment = await (await t.get('/quiz/contact', { headers: { ...html, 'hx-request': 'true' } })).text()
      expect(fragment).toStartWith('<div id="contact">')
      expect(fragment).not.toContain('<html')
    })

    it('signed in: name and email are prefilled from the account, and the nav is the signed-in one', async () => {
      const body = await (await t.get('/quiz/contact', { headers: { ...html, cookie: userCookie } })).text()
      expect(body).toContain(`id="email" name="email" type="email" value="${user.email}"`)
      expect(body).toContain('id="name" name="name" type="text" value="writer"')
      expect(body).toContain('Sign out')
      expect(body).not.toContain('href="/quiz/login"')
    })

    it('sends through the form: 303 to the thank-you note, stored as typed, mailed to the admin', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      const res = await send(valid({ name: `Dana ${tag}`, type: 'moderator', message: `Line one ${tag}\r\nLine two` }))
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/contact?sent=1')
      const [row] = await rows(tag)
      expect(row).toMatchObject({ name: `Dana ${tag}`, email: 'dana@example.test', type: 'moderator', message: `Line one ${tag}\nLine two`, read: false })
      const mail = await smtp.waitFor((m) => m.to.includes(admin.email.toLowerCase()) && m.text.includes(tag))
      expect(mail.text).toContain(`Line one ${tag}\nLine two`)
      expect(mail.text).toContain('Moderator request')
      const thanks = await (await t.get('/quiz/contact?sent=1', { headers: html })).text()
      expect(thanks).toContain('<h1>Message sent</h1>')
      expect(thanks).toContain('your message has been sent')
      expect(thanks).not.toContain('<form id="contact-form"')
    })

    it('a signed-in user sends too (their cookie is no obstacle)', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      const res = await send(valid({ name: 'writer', email: user.email, message: `From a user ${tag}` }), { headers: { cookie: userCookie } })
      expect(res.status).toBe(303)
      expect((await rows(tag)).length).toBe(1)
    })

    it('refuses bad input with 422, the message next to the field, the values kept, nothing stored or mailed', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      const before = await count()
      const cases: Array<[Record<string, string>, string, string]> = [
        [{ name: '' }, 'name', 'Required'],
        [{ name: '   ' }, 'name', 'Required'],
        [{ name: 'n'.repeat(CONTACT_NAME_MAX + 1) }, 'name', `Must be at most ${CONTACT_NAME_MAX} characters`],
        [{ email: 'not-an-address' }, 'email', 'Enter a valid email address'],
        [{ type: 'complaint' }, 'type', 'Choose one of: A question, Ask to become a moderator'],
        [{ message: ' \n ' }, 'message', 'Required'],
        [{ message: 'm'.repeat(CONTACT_MESSAGE_MAX + 1) }, 'message', `Must be at most ${CONTACT_MESSAGE_MAX} characters`],
      ]
      for (const [over, field, message] of cases) {
        const res = await send(valid({ message: `Kept <b>${tag}</b>`, ...over }))
        expect(res.status).toBe(422)
        const body = await res.text()
        expect(body).toContain(`<span class="field-error" id="${field}-error">${message}</span>`)
        expect(body).toContain(`aria-invalid="true" aria-describedby="${field === 'message' || field === 'email' ? `${field}-hint ` : ''}${field}-error"`)
        if (field !== 'message') expect(body).toContain(`Kept &lt;b&gt;${tag}&lt;/b&gt;</textarea>`)
        if (field !== 'email') expect(body).toContain('value="dana@example.test"')
      }
      expect(await count()).toBe(before)
      await settle()
      expect(smtp.messages.some((m) => m.text.includes(tag))).toBe(false)
      // the limits themselves pass, a message's CRLF line breaks counted as one character each (as the browser does)
      const atLimit = `${tag}\r\n${'m'.repeat(CONTACT_MESSAGE_MAX - tag.length - 1)}`
      const ok = await send(valid({ name: 'n'.repeat(CONTACT_NAME_MAX), message: atLimit }))
      expect(ok.status).toBe(303)
      expect((await rows(tag))[0]!.message.length).toBe(CONTACT_MESSAGE_MAX)
    })

    it(`over ${CONTACT_RULE.limit} messages an hour from one address: 429 with Retry-After, the form kept, when to retry said`, async () => {
      const ip = freshIp()
      const tag = crypto.randomUUID().slice(0, 8)
      for (let i = 0; i < CONTACT_RULE.limit; i++) expect((await send(valid({ message: `burst ${i} ${tag}` }), { ip })).status).toBe(303)
      const over = await send(valid({ message: `one too many ${tag}` }), { ip })
      expect(over.status).toBe(429)
      const retry = Number(over.headers.get('retry-after'))
      expect(retry).toBeGreaterThan(0)
      expect(retry).toBeLessThanOrEqual(CONTACT_RULE.windowS)
      const body = await over.text()
      expect(body).toContain('You can send a message again in about 60 minutes.')
      expect(body).toContain(`one too many ${tag}</textarea>`)
      expect(body).toContain('<form id="contact-form"')
      expect((await rows(tag)).length).toBe(CONTACT_RULE.limit)
    })

    it('a post from another site is refused (403) and stores nothing', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      const res = await send(valid({ message: `cross ${tag}` }), { headers: { origin: 'https://evil.example' } })
      expect(res.status).toBe(403)
      expect((await rows(tag)).length).toBe(0)
    })

    it('messages: admins see every message newest first, user text escaped, email as a mailto link, unread in words', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ name: `<script>alert("n")</script> ${tag}`, email: `dana+${tag}@example.test`, message: `first <b>${tag}</b>\nsecond line & more` }))).status).toBe(303)
      expect((await send(valid({ name: `Later ${tag}`, message: `later ${tag}` }))).status).toBe(303)
      const [first, later] = await rows(tag)
      const page = await messagesPage()
      expect(page).toContain('<h1>Messages from the contact form</h1>')
      expect(page).toContain('<th scope="col">From</th>')
      expect(page).not.toContain('<script>alert')
      expect(page).not.toContain(`<b>${tag}</b>`)
      const row = rowOf(page, first!.id)
      expect(row).toContain(`<th scope="row">&lt;script&gt;alert(&quot;n&quot;)&lt;/script&gt; ${tag}</th>`)
      expect(row).toContain(`<a href="mailto:dana%2B${tag}@example.test">dana+${tag}@example.test</a>`)
      expect(row).toContain(`first &lt;b&gt;${tag}&lt;/b&gt;</span><br/><span>second line &amp; more</span>`)
      expect(row).toContain('<td>A question</td>')
      expect(row).toContain('<strong>Unread</strong>')
      expect(row).toContain(`action="/quiz/contact/messages/${first!.id}/read" method="post"`)
      expect(row).toContain('Mark as read')
      // newest first
      expect(page.indexOf(`id="submission-${later!.id}"`)).toBeLessThan(page.indexOf(`id="submission-${first!.id}"`))
      const fragment = await (await t.get('/quiz/contact/messages', { headers: { ...html, cookie: adminCookie, 'hx-request': 'true' } })).text()
      expect(fragment).toStartWith('<div id="messages">')
      expect(fragment).not.toContain('<html')
    })

    it('messages: a user or a moderator gets 403 (page and form), a visitor is sent to sign in; nothing changes', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ message: `private ${tag}` }))).status).toBe(303)
      const [row] = await rows(tag)
      for (const cookie of [userCookie, moderatorCookie]) {
        const res = await t.get('/quiz/contact/messages', { headers: { ...html, cookie } })
        expect(res.status).toBe(403)
        expect(await res.text()).not.toContain(`private ${tag}`)
        expect((await t.form(`/quiz/contact/messages/${row!.id}/read`, {}, { headers: { cookie } })).status).toBe(403)
      }
      const visitor = await t.get('/quiz/contact/messages', { headers: html })
      expect(visitor.status).toBe(303)
      expect(visitor.headers.get('location')).toBe('/quiz/login')
      expect((await t.form(`/quiz/contact/messages/${row!.id}/read`, {})).status).toBe(303)
      expect((await rows(tag))[0]!.read).toBe(false)
    })

    it('mark as read without JavaScript: 303 back to the list, the message then read and without its form', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ message: `plain read ${tag}` }))).status).toBe(303)
      const [row] = await rows(tag)
      const res = await t.form(`/quiz/contact/messages/${row!.id}/read`, {}, { headers: { cookie: adminCookie } })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/quiz/contact/messages#submission-${row!.id}`)
      expect((await rows(tag))[0]!.read).toBe(true)
      const after = rowOf(await messagesPage(), row!.id)
      expect(after).toContain('<td>Read')
      expect(after).not.toContain('Unread')
      expect(after).not.toContain('Mark as read')
    })

    it('mark as read with htmx: the row comes back, read; a reload of the post address lands on the list', async () => {
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ message: `htmx read ${tag}` }))).status).toBe(303)
      const [row] = await rows(tag)
      const res = await t.form(`/quiz/contact/messages/${row!.id}/read`, {}, { headers: { cookie: adminCookie, 'hx-request': 'true' } })
      expect(res.status).toBe(200)
      const fragment = await res.text()
      expect(fragment).toStartWith(`<tr id="submission-${row!.id}">`)
      expect(fragment).toContain('(marked as read)')
      expect(fragment).not.toContain('Unread')
      expect(fragment).not.toContain('<form')
      expect((await rows(tag))[0]!.read).toBe(true)
      const reload = await t.get(`/quiz/contact/messages/${row!.id}/read`, { headers: { ...html, cookie: adminCookie } })
      expect(reload.status).toBe(303)
      expect(reload.headers.get('location')).toBe('/quiz/contact/messages')
    })

    it('mark as read: an unknown message is 404, a post from another site 403', async () => {
      expect((await t.form('/quiz/contact/messages/2147483647/read', {}, { headers: { cookie: adminCookie } })).status).toBe(404)
      const tag = crypto.randomUUID().slice(0, 8)
      expect((await send(valid({ message: `forged ${tag}` }))).status).toBe(303)
      const [row] = await rows(tag)
      const forged = await t.form(`/quiz/contact/messages/${row!.id}/read`, {}, { headers: { cookie: adminCookie, origin: 'https://evil.example' } })
      expect(forged.status).toBe(403)
      expect((await rows(tag))[0]!.read).toBe(false)
    })
  })

  describe(`quiz pages: contact with the bot challenge [${target}]`, () => {
    let challenge: ChallengeServer
    let t: TestApp

    beforeAll(async () => {
      challenge = startChallengeServer()
      t = await startTestApp({ target, env: { ...challenge.env, CHALLENGE_SITE_KEY: 'contact-site-key' } })
    })
    afterAll(async () => {
      await t?.close()
      await challenge?.close()
    })

    const count = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.contact_submissions`)[0]!.n

    it('shows the widget; without a passing token the form comes back 422 with the reason, with one it is sent', async () => {
      const page = await (await t.get('/quiz/contact', { headers: html })).text()
      expect(page).toContain('<div class="cf-turnstile" data-sitekey="contact-site-key"></div>')
      for (const extra of [{}, { 'cf-turnstile-response': 'wrong' }] as Array<Record<string, string>>) {
        const refused = await t.form('/quiz/contact', { ...valid(), ...extra }, { ip: freshIp() })
        expect(refused.status).toBe(422)
        const body = await refused.text()
        expect(body).toContain('<span class="field-error" id="challenge-error">')
        expect(body).toContain('How do I reset my progress?</textarea>')
      }
      expect(await count()).toBe(0)
      const ip = freshIp()
      const passed = await t.form('/quiz/contact', { ...valid(), 'cf-turnstile-response': PASS_TOKEN }, { ip })
      expect(passed.status).toBe(303)
      expect(passed.headers.get('location')).toBe('/quiz/contact?sent=1')
      expect(await count()).toBe(1)
      expect(challenge.calls.at(-1)).toMatchObject({ response: PASS_TOKEN, remoteip: ip })
    })
  })
}

// src/core/mail.ts: one send() over SMTP (a real SMTP listener), Resend (an HTTP server speaking its API)
// and the log transport (no mail configured: the message and its links go to the server log).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import pino from 'pino'
import { resetPasswordMail, verificationMail } from '../src/auth/one-time-token'
import { createMailer, MAIL_QUOTE_MAX, mailHtml, mailQuote } from '../src/core/mail'
import { createLogger } from '../src/core/log'
import { startSmtpSink, type SmtpSink } from './support/smtp'
import { rejection } from './support/wait'

const silent = createLogger('silent')

describe('SMTP transport', () => {
  let sink: SmtpSink
  beforeAll(async () => {
    sink = await startSmtpSink()
  })
  afterAll(() => sink.close())

  it('delivers subject, sender and text to the SMTP server', async () => {
    const mailer = createMailer({ transport: 'smtp', host: '127.0.0.1', port: sink.port, from: 'clinic@example.test', secure: false }, silent)
    expect(mailer.configured).toBe(true)
    await mailer.send({ to: 'nurse@example.test', subject: 'Shift change', text: 'See you at 7.' })
    const mail = await sink.waitFor((m) => m.subject === 'Shift change')
    expect(mail.to).toEqual(['nurse@example.test'])
    expect(mail.from).toContain('clinic@example.test')
    expect(mail.text).toContain('See you at 7.')
    mailer.close()
  })

  it('an unreachable SMTP server makes send() reject instead of hanging', async () => {
    const mailer = createMailer({ transport: 'smtp', host: '127.0.0.1', port: 1, from: 'clinic@example.test', secure: false }, silent)
    expect(await rejection(mailer.send({ to: 'x@example.test', subject: 's', text: 't' }))).toBeInstanceOf(Error)
    mailer.close()
  })
})

describe('Resend transport', () => {
  const received: Array<{ auth: string | null; body: Record<string, unknown> }> = []
  let fail = false
  let api: ReturnType<typeof Bun.serve>
  beforeAll(() => {
    api = Bun.serve({
      port: 0,
      async fetch(req) {
        if (new URL(req.url).pathname !== '/emails' || req.method !== 'POST') return new Response('not found', { status: 404 })
        received.push({ auth: req.headers.get('authorization'), body: (await req.json()) as Record<string, unknown> })
        if (fail) return Response.json({ name: 'validation_error', message: 'The from address is not verified', statusCode: 422 }, { status: 422 })
        return Response.json({ id: crypto.randomUUID() })
      },
    })
  })
  afterAll(() => api.stop(true))
  const mailer = () => createMailer({ transport: 'resend', apiKey: 're_test_key', from: 'clinic@example.test', baseUrl: `http://127.0.0.1:${api.port}` }, silent)

  it('posts the message to the Resend API with the key as Bearer token', async () => {
    fail = false
    await mailer().send({ to: 'doctor@example.test', subject: 'Results', text: 'Ready.' })
    const last = received.at(-1)!
    expect(last.auth).toBe('Bearer re_test_key')
    expect(last.body).toMatchObject({ from: 'clinic@example.test', to: 'doctor@example.test', subject: 'Results', text: 'Ready.' })
  })

  it('an error answer from the API makes send() reject with its message', async () => {
    fail = true
    expect((await rejection(mailer().send({ to: 'doctor@example.test', subject: 'Results', text: 'Ready.' }))).message).toContain('not verified')
  })
})

describe('log transport', () => {
  it('is not "configured" and writes the message, links included, to the log', async () => {
    const lines: string[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
    const mailer = createMailer({ transport: 'log', from: 'no-reply@localhost' }, log)
    expect(mailer.configured).toBe(false)
    await mailer.send({ to: 'a@example.test', subject: 'Confirm', text: 'Open http://localhost/quiz/verify-email?token=abc' })
    const entry = JSON.parse(lines.at(-1)!) as { mail: { to: string; text: string } }
    expect(entry.mail.to).toBe('a@example.test')
    expect(entry.mail.text).toContain('verify-email?token=abc')
  })
})

describe('user-supplied text in mails', () => {
  it('is quoted on one line: line breaks, tabs, other controls and separators become one space; trimmed', () => {
    expect(mailQuote('  Ann\r\n\r\nClick http://evil.example \u2028 now\u2029\t\u0000\u000b\u0085x\u00a0y\u202e\u200bz  ')).toBe('Ann Click http://evil.example now x y z')
    expect(mailQuote('\r\n\t')).toBe('')
    // joiners some scripts need stay
    expect(mailQuote('क्\u200dष')).toBe('क्\u200dष')
  })

  it(`is capped at ${MAIL_QUOTE_MAX} characters, never splitting a character`, () => {
    const long = '😀'.repeat(MAIL_QUOTE_MAX + 10)
    const quoted = mailQuote(long)
    expect(Array.from(quoted)).toHaveLength(MAIL_QUOTE_MAX)
    expect(quoted.endsWith('…')).toBe(true)
    expect(quoted).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/)
    expect(mailQuote('a'.repeat(MAIL_QUOTE_MAX))).toBe('a'.repeat(MAIL_QUOTE_MAX))
  })

  it('is escaped for HTML parts', () => {
    expect(mailHtml('<b>Ann</b>\n& "co"')).toBe('&lt;b&gt;Ann&lt;/b&gt; &amp; &quot;co&quot;')
  })

  it.each([
    ['verification', verificationMail],
    ['password reset', resetPasswordMail],
  ])('the %s mail (both services) greets on one line in its text part and escapes the name in its HTML part', (_, build) => {
    const name = 'Eve\n\nYour account is locked: <a href="http://evil.example">sign in here</a>\r\nThanks'
    const mail = build({ email: 'eve@example.test', name }, 'http://localhost/x?token=a&b=1', 3600)
    const lines = mail.text.split('\n')
    expect(lines[0]).toBe(`Hello ${mailQuote(name)},`)
    expect(lines[1]).toBe('')
    expect(mail.text).not.toContain('\nYour account is locked')
    expect(mail.text).toContain('http://localhost/x?token=a&b=1')
    expect(mail.html).toContain(`<p>Hello ${mailHtml(name)},</p>`)
    expect(mail.html).not.toContain('<a href="http://evil.example">')
    expect(mail.html).toContain('<a href="http://localhost/x?token=a&amp;b=1">')
    expect(mail.subject).not.toContain('Eve')
    expect(build({ email: 'x@example.test', name: '\r\n' }, 'http://localhost/x', 3600).text).toStartWith('Hello,\n')
  })
})

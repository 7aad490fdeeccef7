// One send(message) API over SMTP (nodemailer), Resend, or the log (no mail configured: the message,
// with its links, goes to the server log so an operator can still act; RUNTIME.md, Mail).
import nodemailer from 'nodemailer'
import type { MailConfig } from '../config'
import type { Logger } from './log'
import { withTimeout } from './timeout'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
}

export interface Mailer {
  /** True when a real transport (SMTP or Resend) is configured. */
  readonly configured: boolean
  readonly transport: MailConfig['transport']
  send(message: MailMessage): Promise<void>
  close(): void
}

export const MAIL_TIMEOUT_MS = 15_000
/** The most characters of a user-supplied text (a name) a mail quotes. */
export const MAIL_QUOTE_MAX = 80

// Controls (line breaks included), line, paragraph and space separators, and the invisible characters that
// reorder or hide text (bidi controls, zero-width space, BOM). Joiners stay: some scripts need them.
const UNQUOTABLE = /[\p{Cc}\p{Zl}\p{Zp}\p{Zs}\u200B\u200E\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]+/gu

/**
 * User-supplied text as every mail quotes it, in the text and the HTML part alike: on one line (each run of the
 * characters above becomes one space), trimmed, at most MAIL_QUOTE_MAX characters. A name cannot add lines or
 * paragraphs of its own to a mail that carries a link.
 */
export function mailQuote(text: string, max = MAIL_QUOTE_MAX): string {
  const line = text.replace(UNQUOTABLE, ' ').trim()
  const chars = Array.from(line)
  return chars.length <= max ? line : `${chars.slice(0, max - 1).join('').trimEnd()}…`
}

/** Text for an HTML part: quoted as above, then escaped. */
export const mailHtml = (text: string, max = MAIL_QUOTE_MAX): string => Bun.escapeHTML(mailQuote(text, max))

export function createMailer(config: MailConfig, log: Logger): Mailer {
  if (config.transport === 'smtp') {
    const transporter = nodemailer.createTransport({
      host: config.host,
      port: config.port,
      secure: config.secure,
      auth: config.user ? { user: config.user, pass: config.pass ?? '' } : undefined,
      connectionTimeout: MAIL_TIMEOUT_MS,
      greetingTimeout: MAIL_TIMEOUT_MS,
      socketTimeout: MAIL_TIMEOUT_MS,
      // A local relay without TLS is common in clinics; TLS is used when the server offers it.
      tls: { rejectUnauthorized: !config.host.match(/^(localhost|127\.|::1)/) },
    })
    return {
      configured: true,
      transport: 'smtp',
      async send(m) {
        await transporter.sendMail({ from: config.from, to: m.to, subject: m.subject, text: m.text, html: m.html })
      },
      close: () => transporter.close(),
    }
  }
  if (config.transport === 'resend') {
    return {
      configured: true,
      transport: 'resend',
      async send(m) {
        const { Resend } = await import('resend')
        const resend = new Resend(config.apiKey, config.baseUrl ? { baseUrl: config.baseUrl } : undefined)
        const result = await withTimeout(
          resend.emails.send({ from: config.from, to: m.to, subject: m.subject, text: m.text, html: m.html }),
          MAIL_TIMEOUT_MS, 'mail send',
        )
        if (result.error) throw new Error(`resend: ${result.error.message}`)
      },
      close: () => {},
    }
  }
  return {
    configured: false,
    transport: 'log',
    async send(m) {
      log.info({ mail: { to: m.to, subject: m.subject, text: m.text } }, 'mail not configured: message written to the log')
    },
    close: () => {},
  }
}

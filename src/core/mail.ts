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

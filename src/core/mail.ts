// One send(message) API over SMTP (nodemailer), Resend, or the log (no mail configured: the message,
// with its links, goes to the server log so an operator can still act; RUNTIME.md, Mail). The transport is the
// environment's (SMTP_*, RESEND_API_KEY) when it names one; otherwise the SMTP settings an admin stored in the
// settings table (spec 3, PUT /api/admin/config/smtp), read through the settings cache at each send. The
// environment wins, so a deployment's own mail settings cannot be replaced from the web console. With an outbox
// (src/core/outbox.ts) every message sent through a real transport is written to the database first and retried
// until sent; the log transport writes at once (it cannot fail, and the outbox would only keep a copy of the links).
import type { MailConfig } from '../config'
import type { Crypto } from './crypto'
import type { Db } from './db'
import type { Logger } from './log'
import { createOutbox, type MailOutbox, type OutboxDeps } from './outbox'
import type { SettingsCache } from './settings'
import { withTimeout } from './timeout'

export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
}

/** Where the transport's settings come from: the environment, the settings table, or nowhere (the log). */
export type MailSource = 'env' | 'database' | 'none'

export interface MailStatus {
  configured: boolean
  source: MailSource
  transport: MailConfig['transport']
  host: string
  port: string
  user: string
  from: string
  /** SMTP settings are stored in the table but the environment's transport is used instead. */
  storedIgnored: boolean
}

export interface MailTestResult {
  delivered: boolean
  source: MailSource
  /** What happened; on failure the transport's own message with every credential of the transport removed. */
  message: string
}

export interface Mailer {
  /**
   * True when a real transport (SMTP or Resend) is configured: the environment's, or SMTP settings in the table as
   * the settings cache last read them (synchronous, so a path that has just read settings gets a fresh answer).
   */
  readonly configured: boolean
  readonly transport: MailConfig['transport']
  /**
   * With an outbox: writes the message to it (in the bound transaction, if any) and makes the first attempt at once
   * (after the commit); resolves once the message is kept, whether or not that attempt succeeded, and a rolled-back
   * transaction sends nothing. Without one: sends at once and rejects when the transport fails.
   */
  send(message: MailMessage): Promise<void>
  /** A mailer whose `send` writes in the transaction `tx` and attempts after its commit (`afterCommit`). */
  bind(tx: Db, afterCommit: (fn: () => Promise<void> | void) => void): Mailer
  /** The outbox (pending and failed messages, the retry schedule's work), or null when the mailer has none. */
  readonly outbox: MailOutbox | null
  /** The transport a send would use now, without its password. */
  status(): Promise<MailStatus>
  /** Sends at once through the current transport and reports the outcome instead of throwing (the admin's test mail). */
  sendTest(message: MailMessage): Promise<MailTestResult>
  close(): void
}

/** SMTP settings stored in the settings table (spec 3, Mail settings). */
export interface SmtpSettings {
  host: string
  port: number
  user: string
  pass: string
  from: string
  secure: boolean
}

/** Their keys in the settings table; the password is sealed there with DATA_ENCRYPTION_KEY. */
export const SMTP_KEYS = {
  host: 'smtp.host', port: 'smtp.port', user: 'smtp.user', pass: 'smtp.pass', from: 'smtp.from', secure: 'smtp.secure',
} as const
export const SMTP_DEFAULT_PORT = 587

/** The SMTP settings of the settings table, as the mailer reads them. */
export interface StoredSmtpSettings {
  /** The settings (at most the cache's TTL old), or null when no host is stored. */
  read(): Promise<SmtpSettings | null>
  /** Whether a host is stored, from the cache's last snapshot, without waiting. */
  isSet(): boolean
}

export function storedSmtpSettings(settings: SettingsCache, crypto: Crypto, log: Logger): StoredSmtpSettings {
  const keys = Object.values(SMTP_KEYS)
  const open = (value: string) => {
    if (!crypto.isSealedText(value)) return value
    try {
      return crypto.openText(value)
    } catch (err) {
      log.error({ err, key: SMTP_KEYS.pass }, 'the stored SMTP password could not be opened (was DATA_ENCRYPTION_KEY changed?)')
      return ''
    }
  }
  return {
    async read() {
      const v = await settings.getMany(keys)
      const host = v[SMTP_KEYS.host]?.trim()
      if (!host) return null
      const port = Number(v[SMTP_KEYS.port])
      return {
        host,
        port: Number.isInteger(port) && port >= 1 && port <= 65535 ? port : SMTP_DEFAULT_PORT,
        user: v[SMTP_KEYS.user]?.trim() ?? '',
        pass: open(v[SMTP_KEYS.pass] ?? ''),
        from: v[SMTP_KEYS.from]?.trim() ?? '',
        secure: v[SMTP_KEYS.secure] === 'true',
      }
    },
    isSet: () => Boolean(settings.peek()?.get(SMTP_KEYS.host)?.trim()),
  }
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


/** The most characters of a transport's error message a test mail reports. */
export const MAIL_ERROR_MAX = 300
const REDACTED = '[redacted]'

/** One transport as the mailer uses it. */
interface Transport {
  source: 'env' | 'database'
  kind: 'smtp' | 'resend'
  host: string
  port: string
  user: string
  from: string
  /** Never shown: the password or key, and the encodings an SMTP exchange carries it in (AUTH PLAIN and LOGIN). */
  secrets: string[]
  send(m: MailMessage): Promise<void>
  close(): void
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64')

function credentialForms(user: string, pass: string): string[] {
  if (!pass) return []
  const forms = [pass, base64(pass), base64(`\u0000${user}\u0000${pass}`), base64(`${user}\u0000${pass}`), encodeURIComponent(pass)]
  return [...new Set(forms)].sort((a, b) => b.length - a.length)
}

// A server may quote a link of the message it refused: its one-time token must not reach a log or a page.
const LINK_SECRET = /([?&#](?:token|code|key|secret|password)=)[^\s&#"'<>]+/gi

/** An error's message on one line, at most MAIL_ERROR_MAX characters, with each secret and link token replaced. */
export function mailErrorMessage(err: unknown, secrets: readonly string[]): string {
  let text = err instanceof Error ? err.message : String(err)
  for (const secret of secrets) if (secret) text = text.split(secret).join(REDACTED)
  text = text.replace(LINK_SECRET, `$1${REDACTED}`)
  text = text.replace(/\s+/g, ' ').trim() || 'unknown error'
  return text.length <= MAIL_ERROR_MAX ? text : `${text.slice(0, MAIL_ERROR_MAX - 1)}…`
}

function smtpTransport(source: Transport['source'], s: { host: string; port: number; user?: string; pass?: string; from: string; secure: boolean }): Transport {
  const transporter = (require('nodemailer') as typeof import('nodemailer')).createTransport({
    host: s.host,
    port: s.port,
    secure: s.secure,
    auth: s.user ? { user: s.user, pass: s.pass ?? '' } : undefined,
    connectionTimeout: MAIL_TIMEOUT_MS,
    greetingTimeout: MAIL_TIMEOUT_MS,
    socketTimeout: MAIL_TIMEOUT_MS,
    // A local relay without TLS is common in clinics; TLS is used when the server offers it.
    tls: { rejectUnauthorized: !s.host.match(/^(localhost|127\.|::1)/) },
  })
  return {
    source, kind: 'smtp', host: s.host, port: String(s.port), user: s.user ?? '', from: s.from,
    secrets: credentialForms(s.user ?? '', s.pass ?? ''),
    async send(m) {
      await transporter.sendMail({ from: s.from, to: m.to, subject: m.subject, text: m.text, html: m.html })
    },
    close: () => transporter.close(),
  }
}

function resendTransport(config: Extract<MailConfig, { transport: 'resend' }>): Transport {
  const api = new URL(config.baseUrl ?? 'https://api.resend.com')
  return {
    source: 'env', kind: 'resend', host: api.hostname, port: api.port || (api.protocol === 'http:' ? '80' : '443'), user: '', from: config.from,
    secrets: [config.apiKey],
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

export interface MailerOptions {
  /** The SMTP settings of the settings table, used while the environment names no transport. */
  stored?: StoredSmtpSettings
  /** Keeps every message sent through a real transport in core.mail_outbox until it is sent. */
  outbox?: OutboxDeps
}

export function createMailer(config: MailConfig, log: Logger, opts: MailerOptions = {}): Mailer {
  const fromEnv = config.transport === 'smtp' ? smtpTransport('env', config) : config.transport === 'resend' ? resendTransport(config) : null
  // One nodemailer transport per distinct stored settings: a change replaces it at the next send.
  let fromTable: { settings: string; transport: Transport } | null = null
  const storedTransport = (s: SmtpSettings): Transport => {
    const key = JSON.stringify(s)
    if (fromTable?.settings !== key) {
      fromTable?.transport.close()
      fromTable = { settings: key, transport: smtpTransport('database', { ...s, user: s.user || undefined, from: s.from || config.from }) }
    }
    return fromTable.transport
  }
  const current = async (): Promise<Transport | null> => {
    if (fromEnv) return fromEnv
    const stored = await opts.stored?.read()
    return stored ? storedTransport(stored) : null
  }
  const deliver = async (transport: Transport | null, m: MailMessage) => {
    if (transport) return transport.send(m)
    log.info({ mail: { to: m.to, subject: m.subject, text: m.text } }, 'mail not configured: message written to the log')
  }
  /** One attempt through the transport that applies now: null when accepted, else its error without a credential. */
  const sendOnce = async (m: MailMessage): Promise<string | null> => {
    let transport: Transport | null = null
    try {
      transport = await current()
      await deliver(transport, m)
      return null
    } catch (err) {
      // A server may quote what it was sent: the error that reaches logs carries no credential.
      return mailErrorMessage(err, transport?.secrets ?? [])
    }
  }
  const sendNow = async (m: MailMessage) => {
    const error = await sendOnce(m)
    if (error !== null) throw new Error(`mail send failed: ${error}`)
  }
  const outbox = opts.outbox ? createOutbox({ ...opts.outbox, log }, sendOnce) : null

  type Scope = { tx: Db; afterCommit: (fn: () => Promise<void> | void) => void } | null
  const send = async (scope: Scope, m: MailMessage) => {
    if (!outbox) return scope ? scope.afterCommit(() => sendNow(m)) : sendNow(m)
    const transport = await current()
    if (!transport) return scope ? scope.afterCommit(() => deliver(null, m)) : deliver(null, m)
    const held = await outbox.enqueue(scope?.tx ?? opts.outbox!.db, m)
    if (scope) scope.afterCommit(async () => void (await outbox.attempt(held)))
    else await outbox.attempt(held)
  }

  const mailer = (scope: Scope): Mailer => ({
    get configured() {
      return fromEnv !== null || (opts.stored?.isSet() ?? false)
    },
    get transport() {
      return fromEnv?.kind ?? (opts.stored?.isSet() ? 'smtp' : 'log')
    },
    send: (m) => send(scope, m),
    bind: (tx, afterCommit) => mailer({ tx, afterCommit }),
    outbox,
    async status() {
      const transport = await current()
      const storedIgnored = fromEnv !== null && (await opts.stored?.read()) != null
      if (!transport) return { configured: false, source: 'none', transport: 'log', host: '', port: '', user: '', from: '', storedIgnored }
      const { source, kind, host, port, user, from } = transport
      return { configured: true, source, transport: kind, host, port, user, from, storedIgnored }
    },
    async sendTest(m) {
      const transport = await current()
      if (!transport) {
        return { delivered: false, source: 'none', message: 'Mail sending is not configured: set SMTP_* (or RESEND_API_KEY) in the environment, or store SMTP settings' }
      }
      try {
        await transport.send(m)
        return { delivered: true, source: transport.source, message: `Test email sent to ${m.to} through ${transport.kind === 'smtp' ? `${transport.host}:${transport.port}` : 'Resend'}` }
      } catch (err) {
        return { delivered: false, source: transport.source, message: `The mail server refused or could not be reached: ${mailErrorMessage(err, transport.secrets)}` }
      }
    },
    close() {
      fromEnv?.close()
      fromTable?.transport.close()
    },
  })
  return mailer(null)
}

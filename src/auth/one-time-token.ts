// One-time tokens of both services' accounts (email verification, password reset): a random 256-bit token goes
// into the link; only its SHA-256 is stored, in a table of the shape (token_hash, user_id, purpose, expires_at,
// used_at). Consuming is one conditional update, so a token works once even under parallel requests.
import { randomToken, sha256Hex } from '../core/crypto'
import { rawSql, type Db } from '../core/db'
import { HttpError } from '../core/errors'
import { mailHtml, mailQuote, type MailMessage } from '../core/mail'

export type OneTimePurpose = 'verify_email' | 'reset_password'

export interface OneTimeTokens {
  create(db: Db, userId: number, purpose: OneTimePurpose, lifetimeS: number, nowMs: number): Promise<string>
  /** The token's user, marking it used; 400 with the table's message for an unknown, expired or used token alike. */
  consume(db: Db, token: string, purpose: OneTimePurpose, nowMs: number): Promise<number>
}

export function oneTimeTokens(table: 'quiz.auth_tokens' | 'clinical.auth_tokens', invalidMessage: string): OneTimeTokens {
  const t = rawSql(table)
  return {
    async create(db, userId, purpose, lifetimeS, nowMs) {
      const token = randomToken(32)
      await db.sql`
        insert into ${t} (token_hash, user_id, purpose, expires_at)
        values (${sha256Hex(token)}, ${userId}, ${purpose}, ${new Date(nowMs + lifetimeS * 1000).toISOString()})`
      return token
    },
    async consume(db, token, purpose, nowMs) {
      const now = new Date(nowMs).toISOString()
      const [row] = await db.sql<{ user_id: number }>`
        update ${t} set used_at = ${now}
        where token_hash = ${sha256Hex(token)} and purpose = ${purpose} and used_at is null and expires_at > ${now}
        returning user_id`
      if (!row) throw HttpError.badRequest('invalid_token', invalidMessage)
      return row.user_id
    },
  }
}

/** "1 hour", "24 hours", "30 minutes": a token lifetime as the mails state it. */
const lifetimeText = (seconds: number) =>
  seconds % 3600 === 0 ? `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}` : `${Math.round(seconds / 60)} minutes`

type Recipient = { email: string; name: string }

/** "Hello Ann," with the name quoted on one line (src/core/mail.ts), or "Hello," when nothing of it is left. */
const greeting = (name: string, quote: (text: string) => string) => {
  const quoted = quote(name)
  return quoted ? `Hello ${quoted},` : 'Hello,'
}

/** The text and HTML parts of a mail carrying one link: the user's name quoted, everything in the HTML part escaped. */
function linkMail(user: Recipient, subject: string, lead: string, link: string, closing: string): MailMessage {
  const href = Bun.escapeHTML(link)
  return {
    to: user.email,
    subject,
    text: `${greeting(user.name, mailQuote)}\n\n${lead}\n\n${link}\n\n${closing}\n`,
    html: `<p>${greeting(user.name, mailHtml)}</p>\n<p>${Bun.escapeHTML(lead)}</p>\n<p><a href="${href}">${href}</a></p>\n<p>${Bun.escapeHTML(closing)}</p>\n`,
  }
}

/** The mail carrying an email-verification link, the same for both services. */
export const verificationMail = (user: Recipient, link: string, lifetimeS: number): MailMessage =>
  linkMail(user, 'Confirm your email address', 'Confirm your email address to finish signing up:', link,
    `The link is valid for ${lifetimeText(lifetimeS)}. If you did not sign up, ignore this message.`)

/** The mail carrying a password-reset link, the same for both services. */
export const resetPasswordMail = (user: Recipient, link: string, lifetimeS: number): MailMessage =>
  linkMail(user, 'Reset your password', 'Someone asked to reset the password of your account. To choose a new one, open:', link,
    `The link is valid for ${lifetimeText(lifetimeS)} and works once. If it was not you, ignore this message: your password stays as it is.`)

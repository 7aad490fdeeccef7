// Spec 1, Contact: the public contact form (stored, then mailed to every admin) and the admins' reading of it.
// Plain functions over the core services; nothing here knows about HTTP.
import { verifyChallenge } from '../../../src/auth/challenge'
import { HttpError } from '../../../src/core/errors'
import { mailQuote } from '../../../src/core/mail'
import type { RateRule } from '../../../src/core/ratelimit'
import type { Core } from '../../../src/plugin'
import type { ContactBody, ContactSubmission } from '../models/contact'
import { hasRole, type QuizUser } from './accounts'

/** Not in the spec: the public form is limited per client address so it cannot flood the admins' mailboxes. */
export const CONTACT_RULE: RateRule = {
  name: 'quiz.contact', limit: 5, windowS: 3600, message: 'Too many messages from this address, try again later',
}

const TYPE_LABEL: Record<ContactBody['type'], string> = { question: 'Question', moderator: 'Moderator request' }

interface SubmissionRow {
  id: number; name: string; email: string; type: ContactBody['type']; message: string; read: boolean; created_at: Date
}

const toSubmission = (row: SubmissionRow): ContactSubmission => ({
  id: row.id, name: row.name, email: row.email, type: row.type, message: row.message, read: row.read,
  created_at: new Date(row.created_at).toISOString(),
})

const blank = (field: string) => HttpError.unprocessable('blank', `${field} must not be blank`, { [field]: `${field} must not be blank` })

/** The mail each admin gets: user text quoted on one line where it is a name, the message as sent. */
export function contactMail(to: string, s: ContactSubmission) {
  const name = mailQuote(s.name)
  return {
    to,
    subject: `Contact form: ${TYPE_LABEL[s.type].toLowerCase()} from ${name}`,
    text: [
      'A message arrived through the quiz service\'s contact form.',
      '',
      `From: ${name} <${mailQuote(s.email, 254)}>`,
      `Type: ${TYPE_LABEL[s.type]}`,
      `Received: ${s.created_at}`,
      `Submission: #${s.id}`,
      '',
      '----- message -----',
      s.message,
      '-------------------',
      '',
      'Reply to the sender at the address above. This mail goes to every admin of the quiz service.',
    ].join('\n'),
  }
}

/**
 * Stores a contact message and mails every admin in the background (a mail failure is logged; the message stays
 * stored and listed). The client address's hits are counted first (CONTACT_RULE), then the bot challenge.
 */
export async function submitContact(core: Core, input: ContactBody, clientIp: string): Promise<void> {
  const name = input.name.trim()
  const message = input.message.trim()
  if (!name) throw blank('name')
  if (!message) throw blank('message')
  await core.rateLimit.consume(CONTACT_RULE, clientIp)
  await verifyChallenge(core.config.challenge, input.challenge_token, clientIp)
  const [row] = await core.db.sql<SubmissionRow>`
    insert into quiz.contact_submissions (name, email, type, message, client_address)
    values (${name}, ${input.email.trim()}, ${input.type}, ${message}, ${clientIp})
    returning id, name, email, type, message, read, created_at`
  const submission = toSubmission(row!)
  void notifyAdmins(core, submission).catch((err) => core.log.error({ err, submission: submission.id }, 'contact mail failed'))
}

async function notifyAdmins(core: Core, submission: ContactSubmission): Promise<void> {
  const admins = await core.db.sql<{ email: string }>`select email from quiz.users where role = 'admin' order by id`
  if (admins.length === 0) core.log.warn({ submission: submission.id }, 'contact message stored, but there is no admin to mail')
  // One mail per admin, so no admin sees the others' addresses; one failing does not stop the rest.
  const results = await Promise.allSettled(admins.map((a) => core.mail.send(contactMail(a.email, submission))))
  const failed = results.filter((r) => r.status === 'rejected')
  if (failed.length > 0) {
    core.log.error({ err: (failed[0] as PromiseRejectedResult).reason, submission: submission.id, failed: failed.length }, 'contact mail failed')
  }
}

/** spec 1: the admin check of the submission endpoints is made here, not by the route's guard. */
function requireAdmin(user: QuizUser) {
  if (!hasRole(user, 'admin')) throw HttpError.forbidden('admin_required', 'Only admins can read contact messages')
}

export async function listSubmissions(core: Core, user: QuizUser): Promise<ContactSubmission[]> {
  requireAdmin(user)
  const rows = await core.db.sql<SubmissionRow>`
    select id, name, email, type, message, read, created_at from quiz.contact_submissions order by created_at desc, id desc`
  return rows.map(toSubmission)
}

export async function markRead(core: Core, user: QuizUser, id: number): Promise<void> {
  requireAdmin(user)
  const rows = await core.db.sql`update quiz.contact_submissions set read = true where id = ${id} returning id`
  if (rows.length === 0) throw HttpError.notFound('submission_not_found', 'Contact message not found')
}

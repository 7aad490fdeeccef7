// The mail outbox: a message is written to core.mail_outbox (in the caller's transaction when there is one) before
// it is sent, so a mail server that is down delays it instead of losing it. The first attempt is made at once
// (after the commit); a failed one is retried with exponential backoff by the core's schedule until MAIL_MAX_AGE_MS,
// then the message is marked failed and an admin can retry it. Each attempt holds its row through a claim and a
// lease (taken with FOR UPDATE SKIP LOCKED), so several processes never send one message twice at once.
import { randomUUID } from 'node:crypto'
import type { Crypto } from './crypto'
import type { Db } from './db'
import { HttpError } from './errors'
import type { Logger } from './log'
import type { MailMessage } from './mail'

/** The first retry's delay; each later one doubles, up to MAIL_RETRY_MAX_DELAY_MS. */
export const MAIL_RETRY_BASE_DELAY_MS = 30_000
export const MAIL_RETRY_MAX_DELAY_MS = 60 * 60_000
/** Each delay is stretched or shrunk at random by up to this share, so a backlog does not retry in one burst. */
export const MAIL_RETRY_JITTER = 0.2
/** A message still unsent this long after it was written (or an admin's retry) is marked failed. */
export const MAIL_MAX_AGE_MS = 48 * 60 * 60_000
/** How long one attempt holds its message: well above a send's worst case (connect, greet, data timeouts). */
export const MAIL_ATTEMPT_LEASE_MS = 5 * 60_000
/** The most messages one run of the retry schedule attempts. */
export const MAIL_OUTBOX_BATCH = 50
/** Sent messages (their bodies already gone) are kept this long for the admin's counts, then deleted. */
export const MAIL_SENT_RETENTION_MS = 7 * 24 * 60 * 60_000
/** Failed messages (still sealed) are kept this long after their last attempt, then deleted. */
export const MAIL_FAILED_RETENTION_MS = 30 * 24 * 60 * 60_000
/** The most pending and failed messages the admin's list shows. */
export const MAIL_OUTBOX_LIST_MAX = 100

export type OutboxStatus = 'pending' | 'sent' | 'failed'

/** One message as the admin sees it: never its body. */
export interface OutboxMessage {
  id: number
  to: string
  subject: string
  status: OutboxStatus
  attempts: number
  /** The last failed attempt's error, credentials and link tokens removed. */
  lastError: string | null
  /** When a pending message is tried next (null once sent or failed). */
  nextAttemptAt: string | null
  createdAt: string
  lastAttemptAt: string | null
  /** When a pending message is given up (marked failed). */
  giveUpAt: string
  sentAt: string | null
}

export interface OutboxList {
  counts: Record<OutboxStatus, number>
  /** Pending and failed messages, oldest first, at most MAIL_OUTBOX_LIST_MAX. */
  messages: OutboxMessage[]
}

/** A message written and held for one attempt. */
export interface HeldMessage {
  id: number
  claim: string
  recipient: string
  subject: string
  body: string | null
  attempts: number
  give_up_at: Date
}

export interface MailOutbox {
  /** Writes the message with `db` (a transaction handle or the root), held for the attempt that follows. */
  enqueue(db: Db, message: MailMessage): Promise<HeldMessage>
  /** Makes the attempt of a held message and records its outcome (true: sent); logs instead of throwing. */
  attempt(held: HeldMessage): Promise<boolean>
  /** Attempts the pending messages that are due, one claim at a time; answers how many were sent. */
  deliverDue(): Promise<number>
  list(): Promise<OutboxList>
  /** A failed (or waiting) message tried again at once with a fresh MAIL_MAX_AGE_MS; 404 unknown, 409 sent or in flight. */
  retry(id: number): Promise<OutboxMessage>
  /** Deletes sent and failed messages past their retention; answers how many. */
  sweep(): Promise<number>
}

export interface OutboxDeps {
  db: Db
  crypto: Crypto
  now: () => number
}

/** Sends one message now through the transport that applies; null when it was accepted, else its error (no secret). */
export type DeliverOnce = (message: MailMessage) => Promise<string | null>

/** The delay before the next attempt after `attempts` failed ones: doubling from the base, capped, with jitter. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const plain = Math.min(MAIL_RETRY_BASE_DELAY_MS * 2 ** Math.max(0, attempts - 1), MAIL_RETRY_MAX_DELAY_MS)
  return Math.round(plain * (1 - MAIL_RETRY_JITTER + 2 * MAIL_RETRY_JITTER * random()))
}

interface Row {
  id: number
  recipient: string
  subject: string
  status: OutboxStatus
  attempts: number
  last_error: string | null
  next_attempt_at: Date
  created_at: Date
  last_attempt_at: Date | null
  give_up_at: Date
  sent_at: Date | null
}
const iso = (d: Date | null) => (d ? d.toISOString() : null)
const toMessage = (r: Row): OutboxMessage => ({
  id: r.id, to: r.recipient, subject: r.subject, status: r.status, attempts: r.attempts, lastError: r.last_error,
  nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null, createdAt: iso(r.created_at)!,
  lastAttemptAt: iso(r.last_attempt_at), giveUpAt: iso(r.give_up_at)!, sentAt: iso(r.sent_at),
})

export function createOutbox(deps: OutboxDeps & { log: Logger }, deliverOnce: DeliverOnce): MailOutbox {
  const { db, crypto, now, log } = deps
  const at = (offsetMs = 0) => new Date(now() + offsetMs).toISOString()
  // A resting database (DbRest) stays open while a message waits for its next attempt: the retry schedule skips
  // its runs while the database rests.
  db.rest?.holdWhile(async () => (await db.sql<{ waiting: boolean }>`
    select exists (select 1 from core.mail_outbox where status = 'pending') as waiting`)[0]!.waiting)

  const read = async (id: number) => {
    const [row] = await db.sql<Row>`
      select id, recipient, subject, status, attempts, last_error, next_attempt_at, created_at, last_attempt_at, give_up_at, sent_at
      from core.mail_outbox where id = ${id}`
    return row
  }

  const open = (held: HeldMessage): MailMessage | null => {
    try {
      const parts = JSON.parse(crypto.openText(held.body ?? '')) as { text: string; html: string | null }
      return { to: held.recipient, subject: held.subject, text: parts.text, ...(parts.html === null ? {} : { html: parts.html }) }
    } catch {
      return null
    }
  }

  /** Records an attempt's outcome, if the attempt still holds the row; true when the message was sent. */
  const settle = async (held: HeldMessage, error: string | null, giveUpNow = false): Promise<boolean> => {
    const when = at()
    if (error === null) {
      const done = await db.sql`
        update core.mail_outbox set status = 'sent', body = null, claim = null, attempts = attempts + 1, last_error = null,
          last_attempt_at = ${when}, sent_at = ${when}
        where id = ${held.id} and claim = ${held.claim} returning id`
      if (done.length === 0) log.warn({ mailId: held.id }, 'mail sent after its attempt lost the outbox claim')
      return true
    }
    const attempts = held.attempts + 1
    const giveUp = giveUpNow || now() >= held.give_up_at.getTime()
    const next = giveUp ? when : at(retryDelayMs(attempts))
    const kept = await db.sql`
      update core.mail_outbox set status = ${giveUp ? 'failed' : 'pending'}, claim = null, attempts = ${attempts},
        last_error = ${error}, last_attempt_at = ${when}, next_attempt_at = ${next}
      where id = ${held.id} and claim = ${held.claim} returning id`
    if (kept.length === 0) return false
    if (giveUp) log.error({ mailId: held.id, attempts, error }, 'mail given up: marked failed in the outbox (an admin can retry it)')
    else log.warn({ mailId: held.id, attempts, nextAttemptAt: next, error }, 'mail not sent: kept in the outbox for another attempt')
    return false
  }

  const attempt = async (held: HeldMessage): Promise<boolean> => {
    try {
      const message = open(held)
      if (!message) return await settle(held, 'the message could not be opened (was DATA_ENCRYPTION_KEY changed?)', true)
      return await settle(held, await deliverOnce(message))
    } catch (err) {
      // The database failed around the attempt: the lease runs out and the schedule tries again.
      log.error({ err, mailId: held.id }, 'mail outbox attempt could not be recorded')
      return false
    }
  }

  const claimDue = async (): Promise<HeldMessage | undefined> => {
    const [held] = await db.sql<HeldMessage>`
      update core.mail_outbox set claim = ${randomUUID()}, next_attempt_at = ${at(MAIL_ATTEMPT_LEASE_MS)}
      where id = (
        select id from core.mail_outbox where status = 'pending' and next_attempt_at <= ${at()}
        order by next_attempt_at, id limit 1 for update skip locked)
      returning id, claim, recipient, subject, body, attempts, give_up_at`
    return held
  }

  return {
    async enqueue(into, m) {
      const body = crypto.sealText(JSON.stringify({ text: m.text, html: m.html ?? null }))
      const [held] = await into.sql<HeldMessage>`
        insert into core.mail_outbox (recipient, subject, body, next_attempt_at, claim, give_up_at, created_at)
        values (${m.to}, ${m.subject}, ${body}, ${at(MAIL_ATTEMPT_LEASE_MS)}, ${randomUUID()}, ${at(MAIL_MAX_AGE_MS)}, ${at()})
        returning id, claim, recipient, subject, body, attempts, give_up_at`
      return held!
    },
    attempt,
    async deliverDue() {
      let sent = 0
      for (let i = 0; i < MAIL_OUTBOX_BATCH; i++) {
        const held = await claimDue()
        if (!held) break
        if (await attempt(held)) sent++
      }
      return sent
    },
    async list() {
      const [rows, counts] = await Promise.all([
        db.sql<Row>`
          select id, recipient, subject, status, attempts, last_error, next_attempt_at, created_at, last_attempt_at, give_up_at, sent_at
          from core.mail_outbox where status <> 'sent' order by created_at, id limit ${MAIL_OUTBOX_LIST_MAX}`,
        db.sql<{ status: OutboxStatus; n: number }>`select status, count(*)::int as n from core.mail_outbox group by status`,
      ])
      const total: Record<OutboxStatus, number> = { pending: 0, sent: 0, failed: 0 }
      for (const c of counts) total[c.status] = c.n
      return { counts: total, messages: rows.map(toMessage) }
    },
    async retry(id) {
      const [held] = await db.sql<HeldMessage>`
        update core.mail_outbox set status = 'pending', claim = ${randomUUID()}, next_attempt_at = ${at(MAIL_ATTEMPT_LEASE_MS)},
          give_up_at = greatest(give_up_at, ${at(MAIL_MAX_AGE_MS)}::timestamptz)
        where id = ${id} and (status = 'failed' or (status = 'pending' and (claim is null or next_attempt_at <= ${at()})))
        returning id, claim, recipient, subject, body, attempts, give_up_at`
      if (!held) {
        const row = await read(id)
        if (!row) throw HttpError.notFound('mail_not_found', 'No such message in the outbox')
        if (row.status === 'sent') throw HttpError.conflict('mail_already_sent', 'This message has been sent')
        throw HttpError.conflict('mail_being_sent', 'This message is being sent right now')
      }
      await attempt(held)
      return toMessage((await read(id))!)
    },
    async sweep() {
      const rows = await db.sql`
        delete from core.mail_outbox
        where (status = 'sent' and sent_at < ${at(-MAIL_SENT_RETENTION_MS)})
           or (status = 'failed' and last_attempt_at < ${at(-MAIL_FAILED_RETENTION_MS)})
        returning id`
      return rows.length
    },
  }
}

// Spec 2, Events: the audit log writer. write() redacts at once and queues; a batch is one multi-row insert,
// flushed every second or at 50 entries, and drained at shutdown. Every entry is also copied to the log
// (the "log aggregator" copy), redacted the same way.
import { fragment, joinFragments } from '../../src/core/db'
import type { Core } from '../../src/plugin'

/** Spec 2, Events: the common action values; others may exist. */
export const AUDIT_ACTIONS = [
  'register', 'login', 'login_failed', 'login_blocked', 'login_oidc', 'logout', 'email_verified',
  'password_changed', 'password_reset', '2fa_enabled', '2fa_backup_code_used', '2fa_backup_codes_regenerated',
  'oidc_linked', 'session_idle_timeout',
] as const
export type KnownAuditAction = (typeof AUDIT_ACTIONS)[number]
/** A known action, or any other string (`string & {}` keeps the known values in editor completion). */
export type AuditAction = KnownAuditAction | (string & {})

/** Spec 2, Limits: audit flush every 1 second or at 50 entries. */
export const AUDIT_FLUSH_MS = 1_000
export const AUDIT_BATCH_SIZE = 50
/** Spec 2, Limits: audit details are capped at 500 characters. */
export const AUDIT_DETAIL_MAX = 500
/** Entries held in memory at most (a database that hangs must not grow the queue without bound). */
export const AUDIT_QUEUE_MAX = 10_000
/** Note-body text keeps this many leading characters (after redaction), then a truncation marker. */
export const NOTE_EXCERPT_CHARS = 40
/** Free text of at least this many words, or with a line break, is taken for a note body. */
export const NOTE_BODY_MIN_WORDS = 20
/** Each string is scanned up to this length: the rest could never reach the 500-character result. */
const REDACT_SCAN_MAX = 8 * AUDIT_DETAIL_MAX

// ---- redaction ------------------------------------------------------------------------------------------

const MONTH = String.raw`(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?`
const DAY = String.raw`(?:0?[1-9]|[12]\d|3[01])`
const MONTH_NUM = String.raw`(?:0?[1-9]|1[0-2])`
const YEAR = String.raw`(?:19|20)\d{2}`
const ANY_DATE = String.raw`(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|${MONTH}\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{1,2}(?:st|nd|rd|th)?\s+${MONTH},?\s+\d{4})`
// A date followed by a time is an event's timestamp, not a birth date.
const NOT_A_TIME = String.raw`(?![T ]\d{1,2}:\d{2})`

/** Pattern, replacement; applied in order (labelled forms first, so they keep their label). */
const REDACTIONS: Array<[RegExp, string | ((match: string, ...groups: string[]) => string)]> = [
  [/[\w.%+-]+@[\w-]+(?:\.[\w-]+)+/g, '[EMAIL]'],
  [/(\b(?:SSN|social\s+security(?:\s+(?:number|no\.?|#))?)\s*[:#=]?\s*)\d{3}[- ]?\d{2}[- ]?\d{4}\b/gi, '$1[SSN]'],
  [new RegExp(String.raw`(\b(?:DOB|D\.O\.B\.?|date\s+of\s+birth|birth\s*date|birthday|born(?:\s+on)?)\s*[:=#-]?\s*)${ANY_DATE}`, 'gi'), '$1[DOB]'],
  [/(\b(?:phone|tel|telephone|mobile|cell|fax)\.?\s*(?:no\.?|number|#)?\s*[:=]?\s*)\+?[\d(][\d\s().-]{5,}\d/gi, '$1[PHONE]'],
  [/\b\d{3}([- ])\d{2}\1\d{4}\b/g, '[SSN]'],
  [new RegExp(String.raw`\b${YEAR}([-/.])${MONTH_NUM}\1${DAY}\b${NOT_A_TIME}`, 'g'), '[DOB]'],
  [new RegExp(String.raw`\b${DAY}([-/.])${DAY}\1${YEAR}\b${NOT_A_TIME}`, 'g'), '[DOB]'],
  [new RegExp(String.raw`\b${DAY}/${DAY}/\d{2}\b`, 'g'), '[DOB]'],
  [new RegExp(String.raw`\b${MONTH}\s+${DAY}(?:st|nd|rd|th)?,?\s+${YEAR}\b|\b${DAY}(?:st|nd|rd|th)?\s+${MONTH},?\s+${YEAR}\b`, 'gi'), '[DOB]'],
  // International (+44 20 7946 0958): any grouping, 7 to 15 digits.
  [/\+\d{1,3}(?:[\s.-]?\(?\d{1,5}\)?){1,5}/g, (m) => (digitCount(m) >= 7 && digitCount(m) <= 15 ? '[PHONE]' : m)],
  // North American: (555) 123-4567, 555-123-4567, 555.123.4567, 1-555-123-4567.
  [/(?:\b1[\s.-])?(?:\(\d{3}\)\s?|\b\d{3}[\s.-])\d{3}[\s.-]\d{4}\b/g, '[PHONE]'],
  // National numbers with a trunk 0: 020 7946 0958, 030-1234-5678.
  [/\b0\d{2,4}[\s-]\d{3,4}[\s-]?\d{3,4}\b/g, (m) => (digitCount(m) >= 10 && digitCount(m) <= 12 ? '[PHONE]' : m)],
]

/** Keys whose value is personal data whatever its form. */
const SENSITIVE_KEYS: Array<[RegExp, string]> = [
  [/^(?:ssn|social_?security(?:_?number)?)$/i, '[SSN]'],
  [/^(?:dob|date_?of_?birth|birth_?date|birthday)$/i, '[DOB]'],
  [/^(?:phone|phone_?number|tel|telephone|mobile|cell|fax)$/i, '[PHONE]'],
  [/^(?:e_?mail|email_?address)$/i, '[EMAIL]'],
]
/** Keys that carry clinical free text: their value is always cut to an excerpt. */
const NOTE_KEY = /note|transcript|content|text|body|narrative|hpi|soap|document|summary|handout|dictation/i

const digitCount = (s: string) => s.replace(/\D/g, '').length
const stripNul = (s: string) => s.replaceAll('\u0000', '')

function redactPatterns(text: string): string {
  let out = text.length > REDACT_SCAN_MAX ? text.slice(0, REDACT_SCAN_MAX) : text
  for (const [pattern, replacement] of REDACTIONS) {
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement)
  }
  return out
}

/** Cuts at `max`, but never inside a `[TAG]` marker. */
function cutAt(text: string, max: number): string {
  let head = text.slice(0, max)
  const open = head.lastIndexOf('[')
  if (open > head.lastIndexOf(']')) head = head.slice(0, open)
  return head.trimEnd()
}

const looksLikeNoteBody = (text: string) =>
  text.length > NOTE_EXCERPT_CHARS && (/[\r\n]/.test(text) || text.split(/\s+/).length >= NOTE_BODY_MIN_WORDS)

/** The first line's first NOTE_EXCERPT_CHARS characters, ending on a whole word. */
function excerpt(text: string): string {
  const line = text.split(/[\r\n]/)[0] ?? ''
  let head = cutAt(line, NOTE_EXCERPT_CHARS)
  const space = head.lastIndexOf(' ')
  if (/\S/.test(line[head.length] ?? ' ') && space > 0) head = head.slice(0, space)
  return `${head}… [truncated, ${text.length} chars]`
}

function capDetails(text: string): string {
  return text.length <= AUDIT_DETAIL_MAX ? text : cutAt(text, AUDIT_DETAIL_MAX - 1) + '…'
}

/**
 * Spec 2, Encryption at rest, audit details: social security numbers, telephone numbers, emails and dates of
 * birth become [SSN], [PHONE], [EMAIL], [DOB]; note-body text (long prose or several lines) is cut to a short
 * excerpt; the result is at most AUDIT_DETAIL_MAX characters.
 */
export function redactDetails(text: string): string {
  const redacted = redactPatterns(text)
  return capDetails(looksLikeNoteBody(redacted) ? excerpt(redacted) : redacted)
}

/** An object's details: each string redacted on its own (keys decide for personal data and note text), as JSON. */
function redactObject(details: object): string {
  const walk = (value: unknown, key: string, depth: number): unknown => {
    if (typeof value === 'string') {
      const tag = SENSITIVE_KEYS.find(([k]) => k.test(key))?.[1]
      if (tag) return tag
      const redacted = redactPatterns(value)
      const noteKey = NOTE_KEY.test(key) && redacted.length > NOTE_EXCERPT_CHARS
      return noteKey || looksLikeNoteBody(redacted) ? excerpt(redacted) : redacted
    }
    if (typeof value === 'number' && SENSITIVE_KEYS.some(([k]) => k.test(key))) return walk(String(value), key, depth)
    if (value instanceof Error) return walk(value.message, key, depth)
    if (value === null || typeof value !== 'object' || value instanceof Date) return value
    if (depth >= 5) return '[…]'
    if (Array.isArray(value)) return value.slice(0, AUDIT_DETAIL_MAX).map((v) => walk(v, key, depth + 1))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k, depth + 1)]))
  }
  // A second pattern pass catches what only the JSON shows (a number under an unlisted key, e.g. "tel":5551234567).
  return capDetails(redactPatterns(JSON.stringify(walk(details, '', 0)) ?? ''))
}

// ---- writer ---------------------------------------------------------------------------------------------

export interface AuditEntry {
  action: AuditAction
  userId?: number | null
  ip?: string | null
  /** Free text or an object (stored as JSON); redacted and capped before it is queued or logged. */
  details?: string | Record<string, unknown> | null
}

export interface AuditWriter {
  /** Redacts, copies to the log and queues; never throws and never waits for the database. */
  write(entry: AuditEntry): void
  /** Writes everything queued so far (in batches of batchSize, one insert each). */
  flush(): Promise<void>
  /** Stops the timer and drains the queue (failed batches get their one retry); later writes are only logged. */
  close(): Promise<void>
}

export interface AuditWriterOptions {
  flushMs?: number
  batchSize?: number
}

interface QueuedEntry {
  at: string
  action: string
  userId: number | null
  ip: string | null
  details: string
  /** Failed inserts so far: an entry is retried once, then dropped with an error log. */
  failures: number
}

/**
 * A batched writer over the core's database. The clinical plugin's setup makes the one writer of a boot
 * (ClinicalState.audit), which every clinical-family plugin writes through; shutdown drains it.
 */
export function createAuditWriter(
  core: Pick<Core, 'db' | 'log' | 'now' | 'onShutdown'>,
  opts: AuditWriterOptions = {},
): AuditWriter {
  const { db, log } = core
  const flushMs = opts.flushMs ?? AUDIT_FLUSH_MS
  const batchSize = Math.max(1, opts.batchSize ?? AUDIT_BATCH_SIZE)
  let queue: QueuedEntry[] = []
  let timer: ReturnType<typeof setTimeout> | null = null
  let chain: Promise<void> = Promise.resolve()
  let drainWaiting = false
  let closed = false

  const schedule = () => {
    if (timer || closed || queue.length === 0) return
    timer = setTimeout(() => {
      timer = null
      void flush()
    }, flushMs)
    timer.unref?.()
  }

  const insert = (batch: QueuedEntry[]) =>
    db.sql`insert into clinical.audit_log (at, action, user_id, ip_address, details) values ${joinFragments(
      batch.map((e) => fragment`(${e.at}::timestamptz, ${e.action}, ${e.userId}::integer, ${e.ip}, ${e.details})`),
      ',',
    )}`

  // Writes the entries queued when it starts; stops at the first failed batch (the database is likely down).
  const drain = async () => {
    let pending = queue.length
    while (pending > 0) {
      const batch = queue.splice(0, Math.min(batchSize, pending))
      pending -= batch.length
      try {
        await insert(batch)
      } catch (err) {
        for (const e of batch) e.failures++
        const retry = batch.filter((e) => e.failures < 2)
        const dropped = batch.length - retry.length
        log.error({ err, entries: batch.length, retrying: retry.length }, 'audit log insert failed')
        if (dropped > 0) log.error({ dropped }, `audit log: ${dropped} entries dropped after a failed retry`)
        queue = [...retry, ...queue]
        break
      }
    }
  }

  const flush = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer)
      timer = null
    }
    // A drain that has not started yet will also take what was queued since: no need to chain another.
    if (drainWaiting) return chain
    drainWaiting = true
    chain = chain
      .then(() => {
        drainWaiting = false
        return drain()
      })
      .catch((err) => log.error({ err }, 'audit log flush failed'))
      .finally(schedule)
    return chain
  }

  const write = (entry: AuditEntry): void => {
    try {
      const action = typeof entry.action === 'string' && entry.action !== '' ? entry.action : 'unknown'
      const userId = Number.isSafeInteger(entry.userId) ? (entry.userId as number) : null
      const ip = typeof entry.ip === 'string' && entry.ip !== '' ? entry.ip.slice(0, 100) : null
      let details = ''
      try {
        const raw = entry.details
        details = raw == null ? '' : typeof raw === 'string' ? redactDetails(raw) : redactObject(raw)
      } catch {
        details = '[details could not be serialised]'
      }
      log.info({ audit: { action, userId, ip, details } }, 'audit')
      if (closed) {
        log.error({ action }, 'audit entry written after shutdown: logged only, not stored')
        return
      }
      // PostgreSQL text cannot hold U+0000; one such entry would fail its whole batch.
      queue.push({ at: new Date(core.now()).toISOString(), action: stripNul(action), userId, ip: ip && stripNul(ip), details: stripNul(details), failures: 0 })
      if (queue.length > AUDIT_QUEUE_MAX) {
        const dropped = queue.splice(0, queue.length - AUDIT_QUEUE_MAX).length
        log.error({ dropped }, `audit log: queue full, ${dropped} oldest entries dropped`)
      }
      if (queue.length >= batchSize) void flush()
      else schedule()
    } catch (err) {
      try {
        log.error({ err }, 'audit write failed')
      } catch {
        // the log itself failed: nothing left to report to
      }
    }
  }

  const close = async () => {
    closed = true
    // Each round writes entries or counts a failure against them, so this ends after two failures at most.
    do {
      await flush()
    } while (queue.length > 0)
  }

  core.onShutdown(close)
  return { write, flush, close }
}

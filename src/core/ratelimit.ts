// Rate limits keyed by (rule, subject), in PostgreSQL so every process on one database agrees.
// A sliding log: each allowed hit is a row; a hit is allowed while fewer than `limit` rows lie inside the last
// window. Refused hits are not recorded, so Retry-After is exact: the moment the oldest hit in the window
// leaves it. A per-key advisory lock makes concurrent hits count one after another.
import type { Db } from './db'
import { HttpError } from './errors'

export interface RateRule {
  /** Stable name, part of the key: `quiz.login`. */
  name: string
  limit: number
  windowS: number
  /** The message of the 429. */
  message?: string
}

export interface RateDecision {
  allowed: boolean
  remaining: number
  retryAfterS: number
}

export interface RateLimiter {
  /** Records one hit when it is within the rule, and says whether it was. */
  hit(rule: RateRule, subject: string): Promise<RateDecision>
  /** Records one hit, or throws 429 (with Retry-After) when over the rule. */
  consume(rule: RateRule, subject: string): Promise<void>
  reset(rule: RateRule, subject: string): Promise<void>
  /** Deletes hits older than any rule's window. */
  sweep(): Promise<number>
}

export function createRateLimiter(db: Db, now: () => number = Date.now): RateLimiter {
  const limiter: RateLimiter = {
    hit: (rule, subject) =>
      db.transaction(async (tx) => {
        const t = now()
        const windowStart = new Date(t - rule.windowS * 1000).toISOString()
        await tx.sql`select pg_advisory_xact_lock(hashtext(${rule.name}), hashtext(${subject}))`
        const [inWindow] = await tx.sql<{ n: number; oldest: Date | string | null }>`
          select count(*)::int as n, min(at) as oldest from core.rate_hits
          where rule = ${rule.name} and subject = ${subject} and at > ${windowStart}`
        const n = inWindow?.n ?? 0
        if (n >= rule.limit) {
          const oldest = new Date(inWindow!.oldest!).getTime()
          return { allowed: false, remaining: 0, retryAfterS: Math.max(1, Math.ceil((oldest + rule.windowS * 1000 - t) / 1000)) }
        }
        await tx.sql`insert into core.rate_hits (rule, subject, at) values (${rule.name}, ${subject}, ${new Date(t).toISOString()})`
        return { allowed: true, remaining: rule.limit - n - 1, retryAfterS: 0 }
      }),
    async consume(rule, subject) {
      const d = await limiter.hit(rule, subject)
      if (!d.allowed) throw HttpError.tooManyRequests('rate_limited', rule.message ?? 'Too many requests, try again later', d.retryAfterS)
    },
    async reset(rule, subject) {
      await db.sql`delete from core.rate_hits where rule = ${rule.name} and subject = ${subject}`
    },
    async sweep() {
      // The longest window of any rule is an hour; a day leaves a wide margin.
      const rows = await db.sql`delete from core.rate_hits where at < now() - interval '1 day' returning rule`
      return rows.length
    },
  }
  return limiter
}

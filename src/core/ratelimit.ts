// Windowed counters keyed by (rule, subject), in PostgreSQL so every process on one database agrees.
// A sliding-window estimate (the previous window weighted by how much of it still overlaps) avoids the
// double burst a plain fixed window allows at its edge.
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
  /** Counts one hit and says whether it is within the rule. */
  hit(rule: RateRule, subject: string): Promise<RateDecision>
  /** Counts one hit and throws 429 (with Retry-After) when over the rule. */
  consume(rule: RateRule, subject: string): Promise<void>
  reset(rule: RateRule, subject: string): Promise<void>
  sweep(): Promise<number>
}

/** Absorbs floating-point error in the weighted estimate, so a hit exactly at the limit is not refused. */
const FLOAT_SLACK = 1e-9

/**
 * Milliseconds until one more hit is within the limit. Refused hits count too (a client that keeps hammering
 * stays out), so waiting only until the estimate is back at the limit is not enough: the next hit adds one.
 * It fits later in this window once the previous window's weight has faded enough, or else in the next
 * window, where this window's hits become the fading part.
 */
function msUntilNextHitFits(limit: number, windowMs: number, sinceStartMs: number, current: number, previous: number): number {
  if (current + 1 <= limit && previous > 0) {
    // current + 1 + previous * (1 - x / W) <= limit
    const x = windowMs * (1 - (limit - current - 1) / previous)
    return Math.max(0, x - sinceStartMs)
  }
  // 1 + current * (1 - x / W) <= limit, x into the next window
  const x = current > 0 ? Math.max(0, windowMs * (1 - (limit - 1) / current)) : 0
  return windowMs - sinceStartMs + x
}

export function createRateLimiter(db: Db, now: () => number = Date.now): RateLimiter {
  const limiter: RateLimiter = {
    async hit(rule, subject) {
      const windowMs = rule.windowS * 1000
      const t = now()
      const start = Math.floor(t / windowMs) * windowMs
      const current = new Date(start).toISOString()
      const previous = new Date(start - windowMs).toISOString()
      const rows = await db.sql<{ window_start: Date; hits: number }>`
        with bumped as (
          insert into core.rate_limits (rule, subject, window_start, hits)
          values (${rule.name}, ${subject}, ${current}, 1)
          on conflict (rule, subject, window_start) do update set hits = core.rate_limits.hits + 1
          returning window_start, hits
        )
        select window_start, hits from bumped
        union all
        select window_start, hits from core.rate_limits
        where rule = ${rule.name} and subject = ${subject} and window_start = ${previous}`
      let currentHits = 0
      let previousHits = 0
      for (const r of rows) {
        if (new Date(r.window_start).getTime() === start) currentHits = Number(r.hits)
        else previousHits = Number(r.hits)
      }
      const overlap = 1 - (t - start) / windowMs
      const estimate = currentHits + previousHits * overlap
      const allowed = estimate <= rule.limit + FLOAT_SLACK
      const retryAfterS = allowed ? 0 : Math.ceil(msUntilNextHitFits(rule.limit, windowMs, t - start, currentHits, previousHits) / 1000)
      return { allowed, remaining: Math.max(0, Math.floor(rule.limit - estimate + FLOAT_SLACK)), retryAfterS }
    },
    async consume(rule, subject) {
      const d = await limiter.hit(rule, subject)
      if (!d.allowed) throw HttpError.tooManyRequests('rate_limited', rule.message ?? 'Too many requests, try again later', d.retryAfterS)
    },
    async reset(rule, subject) {
      await db.sql`delete from core.rate_limits where rule = ${rule.name} and subject = ${subject}`
    },
    async sweep() {
      // Keep two days: the longest rule window is an hour, the previous window is still read.
      const rows = await db.sql`delete from core.rate_limits where window_start < now() - interval '2 days' returning rule`
      return rows.length
    },
  }
  return limiter
}

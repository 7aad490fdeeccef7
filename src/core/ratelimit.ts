// Rate limits keyed by (rule, subject), in PostgreSQL so every process on one database agrees. A rule says its mode:
// - strict (the default: login, password reset, registration, mail, 2FA, contact, AI use): a sliding log in
//   core.rate_hits. Each allowed hit is a row; a hit is allowed while fewer than `limit` rows lie inside the last
//   window. Refused hits are not recorded, so Retry-After is exact: the moment the oldest hit in the window leaves it.
//   A per-key advisory lock makes concurrent hits, of any process, count one after another.
// - batched (a large limit checked on every request: the API-wide rule): no database work per hit; each process
//   counts in memory and reconciles with the others every RATE_FLUSH_MS, within a stated tolerance
//   (src/core/ratelimit-batched.ts).
import type { Db } from './db'
import { HttpError } from './errors'
import type { Logger } from './log'
import { createBatchedCounts } from './ratelimit-batched'

export { RATE_FLUSH_MS } from './ratelimit-tally'

export type RateMode = 'strict' | 'batched'

export interface RateRule {
  /** Stable name, part of the key: `quiz.login`. */
  name: string
  limit: number
  windowS: number
  /** The message of the 429. */
  message?: string
  /**
   * `strict` (default): exact across processes, one transaction per hit. `batched`: counted in memory and reconciled
   * with the database every RATE_FLUSH_MS, within the tolerance above; for large limits checked on every request.
   */
  mode?: RateMode
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
  /**
   * consume for a check on every request: a batched rule's hit decided from memory returns (or throws the 429) at
   * once, without a promise; anything else answers consume's promise.
   */
  consumeNow(rule: RateRule, subject: string): void | Promise<void>
  /** Forgets a subject's hits (a batched rule: the database's and this process's; other processes keep their own). */
  reset(rule: RateRule, subject: string): Promise<void>
  /** Deletes hits older than any rule's window. */
  sweep(): Promise<number>
  /** Writes the batched hits held in memory and reads the other processes' counts (the timer does it every RATE_FLUSH_MS). */
  flush(): Promise<void>
  /** Flushes and stops the timer: the clean-shutdown hook. */
  close(): Promise<void>
  /** How many batched keys this process holds in memory (the ones with hits or counts still in their window). */
  heldKeys(): number
  /** The limiter inside a transaction: strict hits in it (they roll back with it), batched ones shared with this one. */
  bind(db: Db): RateLimiter
}

export interface RateLimiterOptions {
  /** How often batched hits are written and the other processes' read (default RATE_FLUSH_MS). */
  flushMs?: number
  log?: Pick<Logger, 'warn'>
  /** Registers the shutdown flush (Core.onShutdown). */
  onShutdown?: (fn: () => Promise<void>) => void
  /**
   * The only process on its database (the embedded PGlite, whose folder one process owns): the database holds no
   * hits this process does not know but what an earlier run of it wrote, read once at the first batched hit (the
   * last SOLO_LOOKBACK_S seconds' counts). From then on no key of a rule within that is read: a new one starts at what
   * that read found. Its hits go to the solo log (src/core/ratelimit-solo-log.ts), a row a flush, for the next start.
   */
  solo?: boolean
}

function hitStrict(db: Db, rule: RateRule, subject: string, t: number): Promise<RateDecision> {
  return db.transaction(async (tx) => {
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
  })
}

/** The 429 (with Retry-After) of a hit the rule refused: what `consume` throws. */
export function refuseOver(rule: RateRule, decision: RateDecision): void {
  if (!decision.allowed) throw HttpError.tooManyRequests('rate_limited', rule.message ?? 'Too many requests, try again later', decision.retryAfterS)
}

export function createRateLimiter(db: Db, now: () => number = Date.now, opts: RateLimiterOptions = {}): RateLimiter {
  const batched = createBatchedCounts(db, now, opts)
  const over = (db: Db): RateLimiter => {
    const limiter: RateLimiter = {
      hit(rule, subject) {
        return rule.mode === 'batched' ? batched.hit(rule, subject) : hitStrict(db, rule, subject, now())
      },
      async consume(rule, subject) {
        refuseOver(rule, await limiter.hit(rule, subject))
      },
      consumeNow(rule, subject) {
        if (rule.mode !== 'batched') return limiter.consume(rule, subject)
        const d = batched.hitNow(rule, subject)
        return d instanceof Promise ? d.then((decided) => refuseOver(rule, decided)) : refuseOver(rule, d)
      },
      async reset(rule, subject) {
        await batched.reset(rule, subject)
        await db.sql`delete from core.rate_hits where rule = ${rule.name} and subject = ${subject}`
      },
      async sweep() {
        // The longest window of any rule is an hour; a day leaves a wide margin.
        const hits = await db.sql`delete from core.rate_hits where at < now() - interval '1 day' returning rule`
        const slots = await db.sql`
          delete from core.rate_counts where slot < extract(epoch from now())::bigint - 86400 returning rule`
        return hits.length + slots.length
      },
      flush: batched.flush,
      heldKeys: batched.held,
      close: batched.close,
      bind: over,
    }
    return limiter
  }
  const root = over(db)
  opts.onShutdown?.(() => root.close())
  return root
}

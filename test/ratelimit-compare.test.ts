// The project's rate limiter (src/core/ratelimit.ts, both modes) beside rate-limiter-flexible's RateLimiterPostgres
// (test/support/library-ratelimit.ts, over the same Db) on each database target: the same burst, two-process, crash
// and window-edge runs. Where they differ, each one's observed behaviour is asserted:
// - two limiters on two connections: strict and the library are exact; batched admits up to the other's unflushed
//   hits more until a flush;
// - a limiter dropped without a flush: strict and the library lose nothing (each hit is written when answered),
//   batched loses what it had not flushed;
// - at a window's edge the library's fixed window admits up to 2 × limit - 1 within less than a window; the sliding
//   log never more than `limit` in any window, and its Retry-After is when the oldest hit leaves.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Db } from '../src/core/db'
import { createRateLimiter, type RateLimiter, type RateRule } from '../src/core/ratelimit'
import { databaseTargets } from './support/app'
import { createLibraryRateLimiter, createLibraryTable, openSharedDatabase } from './support/library-ratelimit'

const LIMIT = 10
/** The window-edge run waits most of a window: short, with room for a busy machine either side of the edge. */
const EDGE_WINDOW_S = 4
const NO_TIMER = { flushMs: 3_600_000 }

interface Implementation {
  name: string
  mode: 'strict' | 'batched'
  make(db: Db): RateLimiter
  /** Admitted of 25 + 25 simultaneous hits through two limiters on two connections, before any flush. */
  twoInstances: number
  /** Admitted through a second limiter after a first one admitted 6 and was dropped without a flush. */
  afterCrash: number
  /** Whether more than `limit` hits can pass within one window's length, across the edge of a window. */
  edgeOvershoot: boolean
}

const implementations: Implementation[] = [
  { name: 'project, strict', mode: 'strict', make: (db) => createRateLimiter(db), twoInstances: LIMIT, afterCrash: LIMIT - 6, edgeOvershoot: false },
  {
    name: 'project, batched', mode: 'batched', make: (db) => createRateLimiter(db, Date.now, NO_TIMER),
    twoInstances: 2 * LIMIT, afterCrash: LIMIT, edgeOvershoot: false,
  },
  { name: 'rate-limiter-flexible', mode: 'strict', make: (db) => createLibraryRateLimiter(db), twoInstances: LIMIT, afterCrash: LIMIT - 6, edgeOvershoot: true },
]

const allowedOf = async (decisions: Promise<{ allowed: boolean }>[]) => (await Promise.all(decisions)).filter((d) => d.allowed).length
/** The most of these times (ms) inside any span of `windowS`. */
const mostInWindow = (times: number[], windowS: number) =>
  Math.max(0, ...times.map((t) => times.filter((u) => u >= t && u < t + windowS * 1000).length))

for (const target of databaseTargets()) {
  describe(`rate limiters compared [${target}]`, () => {
    let first: Db
    let second: Db
    let close: () => Promise<void>
    beforeAll(async () => {
      ;({ first, second, close } = await openSharedDatabase(target))
      await createLibraryTable(first)
    }, 60_000)
    afterAll(() => close(), 30_000)

    it('the library runs on this database through its storeClient hook: its own table, its own statements', async () => {
      const limiter = createLibraryRateLimiter(first)
      const r: RateRule = { name: 'compare.hook', limit: 2, windowS: 60 }
      expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
      const [row] = await first.sql<{ key: string; points: number; expire: number }>`
        select key, points, expire from public.rate_limiter_flexible where key = 'compare.hook:ip-1'`
      expect(row).toMatchObject({ key: 'compare.hook:ip-1', points: 1 })
      expect(row!.expire).toBeGreaterThan(Date.now())
      await limiter.reset(r, 'ip-1')
      expect(await first.sql`select 1 from public.rate_limiter_flexible where key = 'compare.hook:ip-1'`).toEqual([])
    })

    for (const impl of implementations) {
      describe(impl.name, () => {
        const rule = (windowS = 60): RateRule => ({ name: `compare.${crypto.randomUUID().slice(0, 8)}`, limit: LIMIT, windowS, mode: impl.mode })

        it('a burst of 50 simultaneous hits: exactly `limit` pass', async () => {
          const r = rule()
          const limiter = impl.make(first)
          expect(await allowedOf(Array.from({ length: 50 }, () => limiter.hit(r, 'ip-1')))).toBe(LIMIT)
          const refused = await limiter.hit(r, 'ip-1')
          expect(refused.allowed).toBe(false)
          expect(refused.retryAfterS).toBeGreaterThanOrEqual(59)
          expect(refused.retryAfterS).toBeLessThanOrEqual(60)
        })

        it(`two limiters on two connections, 25 + 25 simultaneous hits: ${impl.twoInstances} pass`, async () => {
          const r = rule()
          const a = impl.make(first)
          const b = impl.make(second)
          expect(await allowedOf(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).hit(r, 'ip-1')))).toBe(impl.twoInstances)
          await a.flush()
          await b.flush()
          await a.flush()
          expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
          expect((await b.hit(r, 'ip-1')).allowed).toBe(false)
        })

        it(`a limiter dropped without a flush after 6 hits: the next one admits ${impl.afterCrash}`, async () => {
          const r = rule()
          const dropped = impl.make(first)
          expect(await allowedOf(Array.from({ length: 6 }, () => dropped.hit(r, 'ip-1')))).toBe(6)
          const next = impl.make(second)
          expect(await allowedOf(Array.from({ length: 20 }, () => next.hit(r, 'ip-1')))).toBe(impl.afterCrash)
        })

        it(`across a window's edge: ${impl.edgeOvershoot ? 'more than' : 'never more than'} \`limit\` within one window's length`, async () => {
          const r = rule(EDGE_WINDOW_S)
          const limiter = impl.make(first)
          const admitted: number[] = []
          const hit = async () => {
            const at = Date.now()
            const d = await limiter.hit(r, 'ip-1')
            if (d.allowed) admitted.push(at)
            return d
          }
          const start = Date.now()
          await hit()
          // The rest of the limit just before the first hit's window ends, then a full limit's worth just after it.
          await Bun.sleep(start + EDGE_WINDOW_S * 1000 - 1_200 - Date.now())
          for (let i = 1; i < LIMIT; i++) await hit()
          const full = await hit()
          expect(full.allowed).toBe(false)
          expect(full.retryAfterS).toBeLessThanOrEqual(2)
          await Bun.sleep(start + EDGE_WINDOW_S * 1000 + 300 - Date.now())
          const after: boolean[] = []
          for (let i = 0; i < LIMIT; i++) after.push((await hit()).allowed)
          const most = mostInWindow(admitted, EDGE_WINDOW_S)
          console.log(`[${target}] ${impl.name}: ${admitted.length} admitted in ${((Date.now() - start) / 1000).toFixed(1)} s, at most ${most} within ${EDGE_WINDOW_S} s (limit ${LIMIT})`)
          if (impl.edgeOvershoot) {
            // The fixed window restarts: a full limit again, right after the 9 hits before the edge.
            expect(after.every(Boolean)).toBe(true)
            expect(most).toBe(2 * LIMIT - 1)
          } else {
            // The sliding log: only the first hit has left the window, so one more passes and the rest wait for the 9.
            expect(after.filter(Boolean)).toHaveLength(1)
            expect(most).toBe(LIMIT)
            const refused = await limiter.hit(r, 'ip-1')
            expect(refused.retryAfterS).toBeGreaterThanOrEqual(EDGE_WINDOW_S - 2)
            expect(refused.retryAfterS).toBeLessThanOrEqual(EDGE_WINDOW_S - 1)
          }
        }, 20_000)
      })
    }
  })
}

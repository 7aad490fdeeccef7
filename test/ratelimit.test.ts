// The rate limiter's two modes (src/core/ratelimit.ts) on each database target: strict rules exact across processes,
// batched rules exact within a process and within the stated tolerance across processes (two limiters on two
// connections to one database play two processes), Retry-After, reset, sweep, the shutdown flush and what a crash
// loses; then two real server processes on one PostgreSQL database.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLINICAL_API_RATE_RULE } from '../plugins/clinical/envelope'
import { openDb, type Db } from '../src/core/db'
import { createRateLimiter, type RateLimiter, type RateRule } from '../src/core/ratelimit'
import { databaseTargets } from './support/app'
import { createThrowawayDatabase, type ThrowawayDatabase } from './support/database'
import { openSharedDatabase } from './support/library-ratelimit'
import { startServer, type ServerProcess } from './support/server-process'
import { rejection, waitFor } from './support/wait'

const WINDOW_S = 60
/** Manual flushes only: the timer of these limiters never fires during a test. */
const NO_TIMER = { flushMs: 3_600_000 }
const START_MS = 1_700_000_000_500

const rule = (limit: number, mode: RateRule['mode'] = 'batched'): RateRule =>
  ({ name: `test.${mode}.${crypto.randomUUID().slice(0, 8)}`, limit, windowS: WINDOW_S, mode })
const clock = (start = START_MS) => {
  let t = start
  return { now: () => t, advance: (s: number) => void (t += s * 1000) }
}
const allowedOf = async (decisions: Promise<{ allowed: boolean }>[]) => (await Promise.all(decisions)).filter((d) => d.allowed).length
const burst = (limiter: RateLimiter, r: RateRule, n: number, subject = 'ip-1') =>
  allowedOf(Array.from({ length: n }, () => limiter.hit(r, subject)))

for (const target of databaseTargets()) {
  describe(`rate limits [${target}]`, () => {
    let first: Db
    let second: Db
    let close: () => Promise<void>
    beforeAll(async () => {
      ;({ first, second, close } = await openSharedDatabase(target))
    }, 60_000)
    afterAll(() => close(), 30_000)

    describe('strict rules (the default): exact across processes', () => {
      it('50 simultaneous hits from two limiters on two connections: exactly `limit` pass', async () => {
        const r = rule(10, 'strict')
        const a = createRateLimiter(first)
        const b = createRateLimiter(second)
        const decisions = Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).hit(r, 'ip-1'))
        expect(await allowedOf(decisions)).toBe(10)
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
      })

      it('a hit is in the database when it is answered: a limiter dropped at once loses nothing', async () => {
        const r = rule(10, 'strict')
        expect(await burst(createRateLimiter(first), r, 6)).toBe(6)
        expect(await burst(createRateLimiter(second), r, 10)).toBe(4)
      })
    })

    describe('batched rules: memory, reconciled every flush', () => {
      it('exact within one process: 50 simultaneous hits (the key read once from the database), exactly `limit` pass', async () => {
        const r = rule(10)
        const a = createRateLimiter(first, clock().now, NO_TIMER)
        expect(await burst(a, r, 50)).toBe(10)
        const refused = await a.hit(r, 'ip-1')
        expect(refused).toMatchObject({ allowed: false, remaining: 0 })
        expect((await a.hit(r, 'ip-2')).allowed).toBe(true)
      })

      it('a flush writes and reads back only the keys hit since the last one; a key not current is read at the next flush, or at once past its first hit', async () => {
        const r = rule(5) // H = U = 1: a key hit once here, none of it written, is held back
        const statements: Array<{ text: string; keys: number }> = []
        const counted: Db = {
          ...first,
          sql: (strings, ...values) => {
            // keys: the longest array parameter (the keys a flush writes or reads back)
            statements.push({ text: strings.join('?'), keys: Math.max(0, ...values.map((v) => (Array.isArray(v) ? v.length : 0))) })
            return first.sql(strings, ...values)
          },
        }
        const a = createRateLimiter(counted, clock().now, NO_TIMER)
        const b = createRateLimiter(second, clock().now, NO_TIMER)
        await Promise.all(Array.from({ length: 100 }, (_, i) => a.hit(r, `addr-${i}`)))
        expect(statements).toEqual([]) // a new key's first hit waits for no read
        await a.flush()
        expect(statements).toEqual([]) // each was hit once: held back, neither written nor read
        // A held key's next hit is past H: it reads the counts at once; the next flush writes it and reads it back.
        await Promise.all(Array.from({ length: 100 }, (_, i) => a.hit(r, `addr-${i}`)))
        expect(statements).toHaveLength(100)
        statements.length = 0
        await a.flush()
        expect(statements).toMatchObject([{ keys: 100 }])
        statements.length = 0
        await a.hit(r, 'addr-1')
        expect(statements).toEqual([])
        await a.flush()
        expect(statements).toMatchObject([{ keys: 1 }]) // addr-1 alone, not the 100 keys held
        // The other process fills addr-2's window (its first hit decided on nothing known, the next ones on a read of
        // a's two).
        expect(await burst(b, r, 5, 'addr-2')).toBe(3)
        await b.flush()
        statements.length = 0
        await a.flush() // nothing hit since the last flush: no statement
        expect(statements).toEqual([])
        // a has not hit addr-2 since its last flush: its first hit is decided on what a last read (U = 1 hit over
        // the limit, the stated tolerance), the next one reads the counts at once.
        expect((await a.hit(r, 'addr-2')).allowed).toBe(true)
        expect(statements).toEqual([])
        expect((await a.hit(r, 'addr-2')).allowed).toBe(false)
        expect(statements).toHaveLength(1)
        // A key hit between two flushes is read back by the second: no read of its own at its next hit.
        await a.flush()
        statements.length = 0
        expect((await a.hit(r, 'addr-2')).allowed).toBe(false)
        expect(statements).toEqual([])
      })

      it('solo (the embedded PGlite): what an earlier run wrote is read once, at the first hit; then no key is read', async () => {
        const r = rule(5)
        const c = clock()
        const earlier = createRateLimiter(first, c.now, NO_TIMER)
        expect(await burst(earlier, r, 3)).toBe(3)
        await earlier.flush()
        const statements: string[] = []
        const counted: Db = { ...first, sql: (strings, ...values) => (statements.push(strings.join('?')), first.sql(strings, ...values)) }
        const solo = createRateLimiter(counted, c.now, { ...NO_TIMER, solo: true })
        expect(await burst(solo, r, 5)).toBe(2) // the earlier run's 3 hits still count
        expect(await burst(solo, r, 7, 'ip-2')).toBe(5)
        // One read of what earlier runs wrote (the shared counts, then the solo log), none per key.
        expect(statements.filter((text) => text.includes('select'))).toHaveLength(2)
        expect(statements).toHaveLength(2)
        await solo.flush()
        statements.length = 0
        expect((await solo.hit(r, 'ip-2')).allowed).toBe(false) // held: not read again after the flush
        expect((await solo.hit(r, 'ip-1')).allowed).toBe(false) // the earlier run's hits still count after the flush
        expect((await solo.hit(r, 'ip-3')).allowed).toBe(true)
        expect(statements).toEqual([])
        // A solo flush appends one row to the log, not a row per key and slot to the shared counts.
        expect(await first.sql`select 1 from core.rate_counts where rule = ${r.name} and subject = 'ip-2'`).toEqual([])
        const logged = await first.sql<{ entries: Array<[string, string, number, number]> }>`select entries from core.rate_log order by id`
        expect(logged.flatMap((row) => row.entries).filter(([name]) => name === r.name).map(([, subject, , hits]) => [subject, hits]))
          .toEqual([['ip-1', 2], ['ip-2', 5]])
        // Once its window is over, the earlier run's hits no longer count.
        c.advance(WINDOW_S + 2)
        expect(await burst(solo, r, 7)).toBe(5)
      })

      it('solo: a restart reads the log back (a reset marker drops what came before it); rows past the lookback go', async () => {
        const r = rule(4)
        const c = clock(Date.now())
        const run1 = createRateLimiter(first, c.now, { ...NO_TIMER, solo: true })
        expect(await burst(run1, r, 3, 'ip-a')).toBe(3)
        expect(await burst(run1, r, 2, 'ip-b')).toBe(2)
        await run1.flush()
        expect(await burst(run1, r, 1, 'ip-a')).toBe(1)
        await run1.close() // the shutdown flush: a second row
        const run2 = createRateLimiter(first, c.now, { ...NO_TIMER, solo: true })
        expect(await burst(run2, r, 3, 'ip-a')).toBe(0) // 4 of 4 in the window
        expect(await burst(run2, r, 3, 'ip-b')).toBe(2)
        await run2.reset(r, 'ip-a')
        expect(await burst(run2, r, 1, 'ip-a')).toBe(1)
        await run2.close()
        const run3 = createRateLimiter(first, c.now, { ...NO_TIMER, solo: true })
        expect(await burst(run3, r, 5, 'ip-a')).toBe(3) // the reset dropped the 4 before it; 1 after it counts
        expect(await burst(run3, r, 1, 'ip-b')).toBe(0)
        // Ten minutes on, a flush deletes the rows that left the lookback (the window is long gone too).
        c.advance(601)
        expect(await burst(run3, r, 1, 'ip-c')).toBe(1)
        await run3.close()
        const [left] = await first.sql<{ oldest: number | null }>`select min(at)::float8 as oldest from core.rate_log`
        expect(left?.oldest).toBe(Math.floor(c.now() / 1000))
      })

      it('with the database down, every key decides from memory: this process\'s own hits still count', async () => {
        const r = rule(3)
        let down = false
        const failing: Db = {
          ...first,
          sql: (strings, ...values) => (down ? Promise.reject(new Error('connection refused')) : first.sql(strings, ...values)),
        }
        const a = createRateLimiter(failing, clock().now, NO_TIMER)
        expect(await burst(a, r, 2)).toBe(2)
        await a.flush()
        await a.flush() // the key was not hit before this flush: its counts are read again past its next hit
        down = true
        expect(await burst(a, r, 5)).toBe(1)
        // A new key: its first hit waits for no read, the next ones' read fails and they decide from memory.
        expect(await burst(a, r, 5, 'ip-new')).toBe(3)
        await a.flush() // not written: held for the next flush
        down = false
        expect((await a.hit(r, 'ip-new')).allowed).toBe(false)
        await a.flush()
        expect(await first.sql<{ hits: number }>`select hits from core.rate_counts where rule = ${r.name} and subject = 'ip-new'`)
          .toEqual([{ hits: 3 }])
      })

      it('no database write per hit: nothing is stored until the flush, then one row per key and second', async () => {
        const r = rule(100)
        const c = clock()
        const a = createRateLimiter(first, c.now, NO_TIMER)
        for (let i = 0; i < 30; i++) {
          await a.hit(r, 'ip-1')
          if (i % 10 === 9) c.advance(1)
        }
        const stored = () => first.sql<{ slot: number; hits: number }>`select slot, hits from core.rate_counts where rule = ${r.name} order by slot`
        expect(await stored()).toEqual([])
        await a.flush()
        const start = Math.floor(START_MS / 1000)
        expect(await stored()).toEqual([{ slot: start, hits: 10 }, { slot: start + 1, hits: 10 }, { slot: start + 2, hits: 10 }])
      })

      it('a key whose hits all left their window is let go at a flush; a key still in use stays, a key let go starts anew', async () => {
        const r = rule(2)
        const c = clock()
        const a = createRateLimiter(first, c.now, NO_TIMER) // one flush walks every key (a slice of PRUNE_EVERY_MS)
        await Promise.all(Array.from({ length: 100 }, (_, i) => a.hit(r, `addr-${i}`)))
        await a.flush()
        expect(a.heldKeys()).toBe(100)
        c.advance(30)
        await a.hit(r, 'addr-0')
        c.advance(WINDOW_S - 30)
        await a.flush()
        expect(a.heldKeys()).toBe(100) // a minute since the first hits, but their slot still counts
        c.advance(1)
        await a.flush()
        expect(a.heldKeys()).toBe(1) // addr-0's second hit is still in its window
        expect((await a.hit(r, 'addr-0')).allowed).toBe(true)
        expect((await a.hit(r, 'addr-0')).allowed).toBe(false)
        expect((await a.hit(r, 'addr-5')).allowed).toBe(true) // let go, read again: its old hits are out of the window
        expect(a.heldKeys()).toBe(2)
      })

      it('after a flush the other process counts them: 6 through one, then exactly 4 of a burst through the other', async () => {
        const r = rule(10)
        const c = clock()
        const a = createRateLimiter(first, c.now, NO_TIMER)
        const b = createRateLimiter(second, c.now, NO_TIMER)
        expect(await burst(a, r, 6)).toBe(6)
        await a.flush()
        expect(await burst(b, r, 20)).toBe(4)
        // a learns of b's hits when it next reads the key: a has not hit it since its last flush, so its first hit
        // is decided on what it last read (one over the limit: U, the stated tolerance) and the next one reads.
        await b.flush()
        await a.flush()
        expect((await a.hit(r, 'ip-1')).allowed).toBe(true)
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
        // Hit since the last flush, the key is read back by the next one: current, no more over the limit.
        await a.flush()
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
      })

      it('tolerance: the overshoot is at most the hits the other process admitted since it last flushed', async () => {
        const r = rule(10)
        const c = clock()
        const a = createRateLimiter(first, c.now, NO_TIMER)
        const b = createRateLimiter(second, c.now, NO_TIMER)
        // Both know the key before either writes more: each is blind to the other's hits until a flush. (Two hits
        // each: a key hit once here, H, would be held back and not written.)
        await burst(a, r, 2)
        await burst(b, r, 2)
        await a.flush()
        await b.flush()
        await a.flush()
        const unflushedA = await burst(a, r, 20)
        const admittedB = await burst(b, r, 20)
        expect(unflushedA).toBe(6)
        expect(admittedB).toBe(6)
        expect(4 + unflushedA + admittedB).toBeLessThanOrEqual(r.limit + unflushedA)
        await a.flush()
        await b.flush()
        await a.flush()
        // Once both flushed, neither admits another hit in this window.
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
        expect((await b.hit(r, 'ip-1')).allowed).toBe(false)
      })

      it('with the timer, the other process sees a hit after two flush intervals and a statement (1 s slack)', async () => {
        const flushMs = 50
        const r = rule(200) // H = 4: a's 5 hits are written, not held back
        const a = createRateLimiter(first, Date.now, { flushMs })
        const b = createRateLimiter(second, Date.now, { flushMs })
        try {
          await b.hit(r, 'ip-1')
          expect(await burst(a, r, 5)).toBe(5)
          const started = performance.now()
          let seenMs = -1
          // b's probes are hits too: what b counts beyond its own is a's.
          for (let own = 1; performance.now() - started < 5_000; ) {
            await Bun.sleep(5)
            const { remaining } = await b.hit(r, 'ip-1')
            own++
            if (r.limit - remaining - own >= 5) {
              seenMs = performance.now() - started
              break
            }
          }
          console.log(`[${target}] a hit seen by the other limiter after ${Math.round(seenMs)} ms (flush every ${flushMs} ms)`)
          expect(seenMs).toBeGreaterThanOrEqual(0)
          expect(seenMs).toBeLessThanOrEqual(2 * flushMs + 1_000)
        } finally {
          await Promise.all([a.close(), b.close()])
        }
      })

      it('under a steady burst through both, with the timer, the total stays within limit + the other\'s hits of 2 flushes', async () => {
        const flushMs = 50
        const r = rule(100)
        const limiters = [createRateLimiter(first, Date.now, { flushMs }), createRateLimiter(second, Date.now, { flushMs })]
        const admitted: number[][] = [[], []]
        const refused = [0, 0]
        // Each goes on until it has been refused 20 times: both reached the limit, whatever the machine's pace.
        const until = Date.now() + 20_000
        await Promise.all(limiters.map(async (limiter, i) => {
          while (refused[i]! < 20 && Date.now() < until) {
            if ((await limiter.hit(r, 'ip-1')).allowed) admitted[i]!.push(Date.now())
            else refused[i]!++
            await Bun.sleep(10)
          }
        }))
        await Promise.all(limiters.map((l) => l.close()))
        // The most one side admitted in any span of two flushes plus a slack for the statement and a busy machine.
        const blind = (times: number[]) => Math.max(0, ...times.map((t) => times.filter((u) => u >= t && u < t + 2 * flushMs + 250).length))
        const total = admitted[0]!.length + admitted[1]!.length
        console.log(`[${target}] steady burst: ${admitted[0]!.length} + ${admitted[1]!.length} admitted, limit ${r.limit}`)
        expect(refused).toEqual([20, 20])
        expect(total).toBeLessThanOrEqual(r.limit + Math.max(blind(admitted[0]!), blind(admitted[1]!)))
      })

      it('a crash loses at most the hits since the last flush; a clean close writes them all', async () => {
        const r = rule(10)
        const c = clock()
        const crashed = createRateLimiter(first, c.now, NO_TIMER)
        expect(await burst(crashed, r, 5)).toBe(5)
        await crashed.flush()
        expect(await burst(crashed, r, 3)).toBe(3)
        // `crashed` is dropped without its flush: its last 3 hits are lost, the 5 flushed ones count.
        const next = createRateLimiter(second, c.now, NO_TIMER)
        expect(await burst(next, r, 10)).toBe(5)

        const closing = rule(10)
        const clean = createRateLimiter(first, c.now, NO_TIMER)
        expect(await burst(clean, closing, 4)).toBe(4)
        await clean.close()
        expect(await burst(createRateLimiter(second, c.now, NO_TIMER), closing, 10)).toBe(6)
      })

      it('a key hit at most H times here, none written, is held back: the other process admits H more at most; the shutdown flush writes it', async () => {
        const r = rule(3) // H = U = 1
        const c = clock()
        const statements: string[] = []
        const counted: Db = { ...first, sql: (strings, ...values) => (statements.push(strings.join('?')), first.sql(strings, ...values)) }
        const a = createRateLimiter(counted, c.now, NO_TIMER)
        const b = createRateLimiter(second, c.now, NO_TIMER)
        expect((await a.hit(r, 'ip-1')).allowed).toBe(true)
        await a.flush()
        expect(statements).toEqual([])
        expect(await first.sql`select 1 from core.rate_counts where rule = ${r.name}`).toEqual([])
        // b cannot see a's held hit: it admits the limit, one over in all (the stated tolerance: H per other process).
        expect(await burst(b, r, 5)).toBe(3)
        await b.flush()
        // a's next hit reads at once and sees b's 3: refused. A refusal is no hit: a still holds one, held back.
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
        expect(statements).toHaveLength(1)
        await a.flush()
        expect(await first.sql<{ hits: number }>`select sum(hits)::int as hits from core.rate_counts where rule = ${r.name}`)
          .toEqual([{ hits: 3 }])
        // Past H hits here, the key is written.
        c.advance(WINDOW_S + 1)
        expect(await burst(a, r, 2)).toBe(2)
        await a.flush()
        expect(await first.sql<{ hits: number }>`select sum(hits)::int as hits from core.rate_counts where rule = ${r.name} and slot >= ${Math.floor(c.now() / 1000) - 1}`)
          .toEqual([{ hits: 2 }])
        // A key held back at shutdown is written by the shutdown flush.
        const other = rule(3)
        expect((await a.hit(other, 'ip-2')).allowed).toBe(true)
        await a.flush()
        expect(await first.sql`select 1 from core.rate_counts where rule = ${other.name}`).toEqual([])
        await a.close()
        expect(await first.sql<{ hits: number }>`select hits from core.rate_counts where rule = ${other.name}`).toEqual([{ hits: 1 }])
        expect(await burst(b, other, 5, 'ip-2')).toBe(2) // its first hit blind (U), then a's one read
      })

      it('the API rule\'s size (200 a minute): a key is held back for its first H = 4 hits, read past them, then written', async () => {
        const r = rule(200)
        const statements: string[] = []
        const counted: Db = { ...first, sql: (strings, ...values) => (statements.push(strings.join('?')), first.sql(strings, ...values)) }
        const a = createRateLimiter(counted, clock().now, NO_TIMER)
        const b = createRateLimiter(second, clock().now, NO_TIMER)
        for (let i = 0; i < 4; i++) expect((await a.hit(r, 'ip-1')).allowed).toBe(true)
        await a.flush()
        expect(statements).toEqual([]) // four hits, none written, none read
        expect((await a.hit(r, 'ip-1')).allowed).toBe(true)
        expect(statements).toHaveLength(1) // the fifth reads the key's counts first
        await a.flush()
        expect(statements).toHaveLength(2) // and the next flush writes the five
        // b fills the window to the limit: each process held at most H of it unseen by the other.
        const admitted = await burst(b, r, 250)
        await b.flush()
        expect(admitted).toBe(195)
        expect(admitted + 5).toBe(r.limit)
        const other = rule(200)
        const held = await burst(a, other, 4, 'ip-2') // held back by a
        expect(held + await burst(b, other, 250, 'ip-2')).toBeLessThanOrEqual(other.limit + 4)
      })

      it('Retry-After: exact for this process\'s hits, never early for another\'s (at most one second late), within the window', async () => {
        const r = rule(3)
        const c = clock()
        const a = createRateLimiter(first, c.now, NO_TIMER)
        for (const step of [0, 10, 10]) {
          c.advance(step)
          expect((await a.hit(r, 'ip-1')).allowed).toBe(true)
        }
        c.advance(5)
        const own = await a.hit(r, 'ip-1')
        expect(own).toMatchObject({ allowed: false, retryAfterS: WINDOW_S - 25 })
        c.advance(own.retryAfterS - 1)
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
        c.advance(1)
        expect((await a.hit(r, 'ip-1')).allowed).toBe(true)
        await a.flush()

        // b's first hit of the key is decided on nothing known (U, the stated tolerance); its flush reads a's back.
        const b = createRateLimiter(second, c.now, NO_TIMER)
        expect((await b.hit(r, 'ip-1')).allowed).toBe(true)
        await b.flush()
        // b counts a's hits by their whole second (the clock is half a second into it): +0 (it leaves the window
        // in half a second), +10, +20 and +60 s, and its own at +60 s; the third to leave is a's at +20 s: 21 s.
        const other = await b.hit(r, 'ip-1')
        expect(other).toMatchObject({ allowed: false, retryAfterS: 21 })
        c.advance(other.retryAfterS - 1)
        expect((await b.hit(r, 'ip-1')).allowed).toBe(false)
        c.advance(1)
        expect((await b.hit(r, 'ip-1')).allowed).toBe(true)
        // Now b's own hits (+60, +81 s) and a's (+60 s) fill it: the first to leave is b's at +60 s, exactly.
        expect(await b.hit(r, 'ip-1')).toMatchObject({ allowed: false, retryAfterS: 39 })

        // b's own hit the oldest: it leaves exactly a window after it was made. (b's one hit is held back, H: a does
        // not see it; a's two are written.)
        const mixed = rule(3)
        expect((await b.hit(mixed, 'ip-1')).allowed).toBe(true)
        c.advance(5)
        expect(await burst(a, mixed, 2)).toBe(2)
        await a.flush()
        await b.flush()
        c.advance(5)
        expect(await b.hit(mixed, 'ip-1')).toMatchObject({ allowed: false, retryAfterS: WINDOW_S - 10 })
      })

      it('a hit inside a transaction counts in the shared memory, rolled back or not', async () => {
        const r = rule(2)
        const a = createRateLimiter(first, clock().now, NO_TIMER)
        await first.transaction(async (tx) => expect((await a.bind(tx).hit(r, 'ip-1')).allowed).toBe(true))
        expect((await rejection(first.transaction(async (tx) => {
          expect((await a.bind(tx).hit(r, 'ip-1')).allowed).toBe(true)
          throw new Error('rolled back')
        }))).message).toContain('rolled back')
        expect((await a.hit(r, 'ip-1')).allowed).toBe(false)
      })

      it('reset forgets the subject here and in the database; sweep removes counts older than a day', async () => {
        const r = rule(2)
        const c = clock(Date.now())
        const a = createRateLimiter(first, c.now, NO_TIMER)
        expect(await burst(a, r, 3)).toBe(2)
        await a.flush()
        await a.reset(r, 'ip-1')
        expect(await burst(a, r, 3)).toBe(2)
        await a.flush()
        // Another process: its first hit is decided on nothing known (U, the stated tolerance), the next ones read.
        expect(await burst(createRateLimiter(second, c.now, NO_TIMER), r, 3)).toBe(1)

        const old = rule(5)
        const past = clock(Date.now() - 2 * 24 * 3600 * 1000)
        const before = createRateLimiter(first, past.now, NO_TIMER)
        await burst(before, old, 3)
        await before.flush()
        await a.flush()
        expect(await a.sweep()).toBeGreaterThanOrEqual(1)
        const left = await first.sql<{ rule: string }>`select distinct rule from core.rate_counts where rule = any(${[old.name, r.name]}::text[])`
        expect(left.map((row) => row.rule)).toEqual([r.name])
      })
    })
  })
}

const serverUrl = process.env.TEST_DATABASE_URL
describe(`the API-wide rule (${CLINICAL_API_RATE_RULE.mode}) across two server processes`, () => {
  if (!serverUrl) {
    it.skip('needs TEST_DATABASE_URL: two server processes can share only a PostgreSQL server', () => {})
    return
  }
  let database: ThrowawayDatabase
  let db: Db
  const dirs: string[] = []
  let one: ServerProcess
  let other: ServerProcess
  beforeAll(async () => {
    database = await createThrowawayDatabase(serverUrl, 'rate_two')
    const env = () => {
      dirs.push(mkdtempSync(join(tmpdir(), 'rate-two-')))
      return {
        DATABASE_URL: database.url, DATA_DIR: dirs.at(-1)!, JWT_SECRET: 'rate-two-secret-rate-two-secret-rate-two-0123',
        DATA_ENCRYPTION_KEY: '0'.repeat(63) + '3', TRUST_PROXY: 'true', LOG_LEVEL: 'warn', WORKERS: '0',
      }
    }
    one = await startServer(env(), { bare: true })
    other = await startServer(env(), { bare: true })
    db = await openDb({ url: database.url, dataDir: tmpdir(), poolSize: 1 })
  }, 90_000)
  afterAll(async () => {
    await Promise.all([one?.stop(), other?.stop()])
    await db?.close()
    await database?.drop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  const me = (server: ServerProcess, address: string) => fetch(`${server.url}/api/auth/me`, { headers: { 'x-forwarded-for': address } })
  const stored = async (address: string) => (await db.sql<{ n: number }>`
    select coalesce(sum(hits), 0)::int as n from core.rate_counts where rule = ${CLINICAL_API_RATE_RULE.name} and subject = ${address}`)[0]!.n

  it('half the limit through one process, then exactly the other half through the other; then both refuse', async () => {
    const address = '10.79.0.1'
    const half = CLINICAL_API_RATE_RULE.limit / 2
    for (let i = 0; i < half; i++) expect((await me(one, address)).status).toBe(401)
    await waitFor(async () => (await stored(address)) === half, 'the first process to write its hits')
    for (let i = 0; i < half; i++) expect((await me(other, address)).status, `request ${half + i + 1}`).toBe(401)
    const refused = await me(other, address)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(CLINICAL_API_RATE_RULE.windowS)
    await waitFor(async () => (await me(one, address)).status === 429, 'the first process to count the second one\'s hits')
  })

  it('a clean stop (SIGTERM) writes the hits still held in memory', async () => {
    const address = '10.79.0.2'
    const statuses = await Promise.all(Array.from({ length: 20 }, () => me(one, address).then((r) => r.status)))
    expect(statuses.every((s) => s === 401)).toBe(true)
    expect(await one.stop()).toBe(0)
    expect(await stored(address)).toBe(20)
  })
})

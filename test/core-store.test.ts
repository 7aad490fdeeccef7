// The temporary store (src/core/kv.ts) and the rate limiter (src/core/ratelimit.ts) on each database target, and the
// local file storage's sweep of temporary files (src/core/storage.ts).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { Db } from '../src/core/db'
import { HttpError } from '../src/core/errors'
import { createKv, type Kv } from '../src/core/kv'
import { createRateLimiter, type RateRule } from '../src/core/ratelimit'
import { createLocalStorage, PARTIAL_MAX_AGE_MS, PARTIAL_SUFFIX } from '../src/core/storage'
import { databaseTargets, openCoreDb } from './support/app'

const unique = (name: string) => `${name}.${crypto.randomUUID().slice(0, 8)}`

for (const target of databaseTargets()) {
  describe(`core stores [${target}]`, () => {
    let db: Db
    let close: () => Promise<void>
    beforeAll(async () => {
      ;({ db, close } = await openCoreDb(target))
    }, 60_000)
    afterAll(() => close(), 30_000)

    describe('kv', () => {
      let kv: Kv
      beforeAll(() => {
        kv = createKv(db)
      })
      /** Moves a key's expiry into the past, as if its TTL ran out. */
      const expire = (key: string) => db.sql`update core.kv set expires_at = now() - interval '1 second' where key = ${key}`

      it('keeps any JSON value and overwrites it on the next set', async () => {
        const key = unique('kv.values')
        expect(await kv.get(key)).toBeNull()
        for (const value of [{ step: 3, answers: ['a', null] }, 'text', 42, true, [1, 2]]) {
          await kv.set(key, value)
          expect(await kv.get(key)).toEqual(value)
        }
      })

      it('a value without TTL stays; a value with TTL is gone once it expired', async () => {
        const forever = unique('kv.forever')
        const brief = unique('kv.brief')
        await kv.set(forever, 'kept')
        await kv.set(brief, 'short', 0.2)
        expect(await kv.get(brief)).toBe('short')
        await Bun.sleep(300)
        expect(await kv.get(brief)).toBeNull()
        expect(await kv.get(forever)).toBe('kept')
      })

      it('set without TTL makes an expiring key permanent again', async () => {
        const key = unique('kv.renew')
        await kv.set(key, 1, 60)
        await kv.set(key, 2)
        const [row] = await db.sql<{ expires_at: Date | null }>`select expires_at from core.kv where key = ${key}`
        expect(row!.expires_at).toBeNull()
        expect(await kv.get(key)).toBe(2)
      })

      it('setIfAbsent: the first caller wins, the second gets false while the value lives, true once it expired', async () => {
        const key = unique('kv.lock')
        expect(await kv.setIfAbsent(key, { device: 'a' }, 60)).toBe(true)
        expect(await kv.setIfAbsent(key, { device: 'b' }, 60)).toBe(false)
        expect(await kv.get(key)).toEqual({ device: 'a' })
        await expire(key)
        expect(await kv.setIfAbsent(key, { device: 'b' }, 60)).toBe(true)
        expect(await kv.get(key)).toEqual({ device: 'b' })
      })

      it('setIfAbsent never replaces a value set without TTL', async () => {
        const key = unique('kv.permanent')
        await kv.set(key, 'permanent')
        expect(await kv.setIfAbsent(key, 'other', 60)).toBe(false)
        expect(await kv.get(key)).toBe('permanent')
      })

      it('setIfAbsent from many callers at once lets exactly one win', async () => {
        const key = unique('kv.race')
        const results = await Promise.all(Array.from({ length: 10 }, (_, n) => kv.setIfAbsent(key, n, 60)))
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(await kv.get(key)).toBe(results.indexOf(true))
      })

      it('delete removes one key; deletePrefix removes exactly the keys that start with the prefix', async () => {
        const base = unique('kv.prefix')
        await kv.set(`${base}:a`, 1)
        await kv.set(`${base}:b`, 2)
        await kv.set(`${base}x`, 3) // shares the characters but not the "base:" prefix
        await kv.set(`%${base}:c`, 4) // a LIKE wildcard in front must not match
        await kv.delete(`${base}:a`)
        expect(await kv.get(`${base}:a`)).toBeNull()
        expect(await kv.get(`${base}:b`)).toBe(2)
        await kv.deletePrefix(`${base}:`)
        expect(await kv.get(`${base}:b`)).toBeNull()
        expect(await kv.get(`${base}x`)).toBe(3)
        expect(await kv.get(`%${base}:c`)).toBe(4)
      })

      it('deletePrefix treats % and _ literally', async () => {
        const base = unique('kv.literal')
        await kv.set(`${base}_%:a`, 1)
        await kv.set(`${base}ab:a`, 2)
        await kv.deletePrefix(`${base}_%`)
        expect(await kv.get(`${base}_%:a`)).toBeNull()
        expect(await kv.get(`${base}ab:a`)).toBe(2)
      })

      it('sweep removes expired rows only and says how many', async () => {
        const gone = [unique('kv.sweep'), unique('kv.sweep')]
        const kept = [unique('kv.sweep'), unique('kv.sweep')]
        for (const key of gone) {
          await kv.set(key, 'old', 60)
          await expire(key)
        }
        await kv.set(kept[0]!, 'live', 60)
        await kv.set(kept[1]!, 'forever')
        expect(await kv.sweep()).toBeGreaterThanOrEqual(2)
        const [left] = await db.sql<{ n: number }>`select count(*)::int as n from core.kv where key = any(${[...gone, ...kept]}::text[])`
        expect(left!.n).toBe(2)
        expect(await kv.get(kept[0]!)).toBe('live')
        expect(await kv.get(kept[1]!)).toBe('forever')
      })
    })

    describe('rate limits', () => {
      const WINDOW_S = 60
      const rule = (limit = 5): RateRule => ({ name: unique('test.rule'), limit, windowS: WINDOW_S, message: 'Slow down' })
      /** A clock the test moves, starting on a window boundary in the present (sweep compares with now()). */
      const clock = () => {
        const c = { t: Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000 }
        return { now: () => c.t, advance: (s: number) => void (c.t += s * 1000) }
      }

      it('allows exactly `limit` hits in a window and refuses the next with Retry-After', async () => {
        const c = clock()
        const limiter = createRateLimiter(db, c.now)
        const r = rule(5)
        for (let n = 1; n <= 5; n++) {
          const d = await limiter.hit(r, 'ip-1')
          expect(d).toEqual({ allowed: true, remaining: 5 - n, retryAfterS: 0 })
        }
        const refused = await limiter.hit(r, 'ip-1')
        expect(refused.allowed).toBe(false)
        expect(refused.remaining).toBe(0)
        expect(refused.retryAfterS).toBeGreaterThan(0)
        expect(refused.retryAfterS).toBeLessThanOrEqual(WINDOW_S)
      })

      it('consume() throws 429 rate_limited with the rule\'s message and a Retry-After header', async () => {
        const limiter = createRateLimiter(db, clock().now)
        const r = rule(2)
        await limiter.consume(r, 'ip-1')
        await limiter.consume(r, 'ip-1')
        const err = await limiter.consume(r, 'ip-1').then(() => null, (e: unknown) => e)
        expect(err).toBeInstanceOf(HttpError)
        const http = err as HttpError
        expect(http.status).toBe(429)
        expect(http.code).toBe('rate_limited')
        expect(http.message).toBe('Slow down')
        expect(Number(http.headers?.['retry-after'])).toBeGreaterThanOrEqual(1)
      })

      it('counts each (rule, subject) pair on its own', async () => {
        const limiter = createRateLimiter(db, clock().now)
        const login = rule(1)
        const reset = rule(1)
        expect((await limiter.hit(login, 'ip-1')).allowed).toBe(true)
        expect((await limiter.hit(login, 'ip-1')).allowed).toBe(false)
        expect((await limiter.hit(login, 'ip-2')).allowed).toBe(true)
        expect((await limiter.hit(reset, 'ip-1')).allowed).toBe(true)
      })

      it('slides: a hit leaves the count exactly one window after it was made', async () => {
        const c = clock()
        const limiter = createRateLimiter(db, c.now)
        const r = rule(4)
        for (let n = 0; n < 2; n++) await limiter.hit(r, 'ip-1')
        c.advance(30)
        for (let n = 0; n < 2; n++) await limiter.hit(r, 'ip-1')
        const full = await limiter.hit(r, 'ip-1')
        expect(full).toEqual({ allowed: false, remaining: 0, retryAfterS: WINDOW_S - 30 })
        // One second short of a window after the first two hits: still four in the window.
        c.advance(WINDOW_S - 30 - 1)
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(false)
        // A window after the first two, those two have left: two fit, the third does not.
        c.advance(1)
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(false)
        c.advance(2 * WINDOW_S)
        for (let n = 0; n < 4; n++) expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
      })

      it('refused hits are not recorded: hammering does not push a client out beyond one window', async () => {
        const c = clock()
        const limiter = createRateLimiter(db, c.now)
        const r = rule(3)
        for (let n = 0; n < 3; n++) await limiter.hit(r, 'ip-1')
        for (let n = 0; n < 50; n++) {
          c.advance(1)
          expect((await limiter.hit(r, 'ip-1')).retryAfterS).toBeLessThanOrEqual(WINDOW_S)
        }
        c.advance(WINDOW_S - 50)
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
      })

      it('a client that waits Retry-After after a refusal is let in on its next try', async () => {
        // Refusals at several points: at a window start with nothing before, mid-window with a busy previous window.
        for (const offsetS of [0, 17, 45]) {
          const c = clock()
          const limiter = createRateLimiter(db, c.now)
          const r = rule(5)
          for (let n = 0; n < 5; n++) await limiter.hit(r, 'ip-1') // fills the first window
          c.advance(WINDOW_S + offsetS)
          let refused = await limiter.hit(r, 'ip-1')
          while (refused.allowed) refused = await limiter.hit(r, 'ip-1')
          expect(refused.retryAfterS).toBeGreaterThan(0)
          c.advance(refused.retryAfterS)
          const next = await limiter.hit(r, 'ip-1')
          expect({ offsetS, allowed: next.allowed }).toEqual({ offsetS, allowed: true })
        }
      })

      it('a client that hammered past the limit is let in once it waits Retry-After', async () => {
        const c = clock()
        const limiter = createRateLimiter(db, c.now)
        const r = rule(5)
        let last = await limiter.hit(r, 'ip-1')
        for (let n = 0; n < 8; n++) last = await limiter.hit(r, 'ip-1')
        expect(last.allowed).toBe(false)
        c.advance(last.retryAfterS)
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
      })

      it('Retry-After is the shortest wait: one second earlier the next hit is still refused', async () => {
        const outcomes: string[] = []
        for (const limit of [1, 4]) {
          for (const previousHits of [0, limit, 2 * limit + 1]) {
            for (const offsetS of [0, 20, 45]) {
              // The same history under two rule names: one probes at Retry-After, the other a second before.
              const probe = async (earlyS: number) => {
                const c = clock()
                const limiter = createRateLimiter(db, c.now)
                const r = rule(limit)
                for (let n = 0; n < previousHits; n++) await limiter.hit(r, 'ip-1')
                c.advance(WINDOW_S + offsetS)
                let refused = await limiter.hit(r, 'ip-1')
                while (refused.allowed) refused = await limiter.hit(r, 'ip-1')
                c.advance(refused.retryAfterS - earlyS)
                return (await limiter.hit(r, 'ip-1')).allowed
              }
              const onTime = await probe(0)
              const early = await probe(1)
              if (!onTime || early) outcomes.push(`limit ${limit}, previous ${previousHits}, +${offsetS}s: on time ${onTime}, early ${early}`)
            }
          }
        }
        expect(outcomes).toEqual([])
      })

      it('two limiters on one database (two processes) share their counts', async () => {
        const c = clock()
        const first = createRateLimiter(db, c.now)
        const second = createRateLimiter(db, c.now)
        const r = rule(5)
        for (let n = 0; n < 3; n++) expect((await first.hit(r, 'ip-1')).allowed).toBe(true)
        for (let n = 0; n < 2; n++) expect((await second.hit(r, 'ip-1')).allowed).toBe(true)
        expect((await first.hit(r, 'ip-1')).allowed).toBe(false)
        expect((await second.hit(r, 'ip-1')).allowed).toBe(false)
      })

      it('concurrent hits are all counted: exactly `limit` of 20 simultaneous hits pass', async () => {
        const limiter = createRateLimiter(db, clock().now)
        const r = rule(7)
        const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.hit(r, 'ip-1')))
        expect(decisions.filter((d) => d.allowed)).toHaveLength(7)
      })

      it('reset clears a subject\'s counts for that rule only', async () => {
        const limiter = createRateLimiter(db, clock().now)
        const r = rule(1)
        await limiter.hit(r, 'ip-1')
        await limiter.hit(r, 'ip-2')
        await limiter.reset(r, 'ip-1')
        expect((await limiter.hit(r, 'ip-1')).allowed).toBe(true)
        expect((await limiter.hit(r, 'ip-2')).allowed).toBe(false)
      })

      it('sweep removes hits older than a day and keeps recent ones', async () => {
        const c = clock()
        const limiter = createRateLimiter(db, c.now)
        const old = rule(5)
        const recent = rule(5)
        c.advance(-2 * 24 * 3600)
        await limiter.hit(old, 'ip-1')
        c.advance(2 * 24 * 3600)
        await limiter.hit(recent, 'ip-1')
        expect(await limiter.sweep()).toBeGreaterThanOrEqual(1)
        const left = await db.sql<{ rule: string }>`select rule from core.rate_hits where rule = any(${[old.name, recent.name]}::text[])`
        expect(left.map((row) => row.rule)).toEqual([recent.name])
      })
    })
  })
}

describe('local file storage', () => {
  it('sweeps the temporary files a killed write left once they are old, and nothing else', async () => {
    const root = mkdtempSync(join(tmpdir(), 'storage-sweep-'))
    try {
      const storage = createLocalStorage(root)
      await storage.put('docs/1/a.pdf', new Uint8Array([1, 2, 3]))
      // What a process killed between write and rename leaves beside the key: an old one, and one of a write under way.
      const old = join(root, 'docs', '1', `b.pdf.${crypto.randomUUID()}${PARTIAL_SUFFIX}`)
      const fresh = join(root, 'docs', '1', `c.pdf.${crypto.randomUUID()}${PARTIAL_SUFFIX}`)
      // A stored file whose own name ends in .part is the user's, not a temporary one.
      await storage.put('docs/1/notes.part', new Uint8Array([4]))
      writeFileSync(old, 'half')
      writeFileSync(fresh, 'half')
      const longAgo = new Date(Date.now() - PARTIAL_MAX_AGE_MS - 60_000)
      utimesSync(old, longAgo, longAgo)
      utimesSync(join(root, 'docs', '1', 'notes.part'), longAgo, longAgo)

      expect(await storage.sweepPartials()).toBe(1)
      expect(readdirSync(join(root, 'docs', '1')).sort()).toEqual(['a.pdf', basename(fresh), 'notes.part'].sort())
      expect(await (await storage.get('docs/1/a.pdf'))!.bytes()).toEqual(new Uint8Array([1, 2, 3]))
      expect(await storage.sweepPartials(0)).toBe(1)
      expect(existsSync(fresh)).toBe(false)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})

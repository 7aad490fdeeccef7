// The keys a batched rule holds compactly while they are hit a few times (src/core/ratelimit-few-hits.ts): the
// IPv4 spelling of a key, the store itself, and the limiter's decisions through it against an exact model of one
// process (batched rules are exact within a process, src/core/ratelimit-batched.ts).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import type { Db } from '../src/core/db'
import { createRateLimiter, type RateRule } from '../src/core/ratelimit'
import { FEW_HITS_MAX, FewHits, ipv4Bits, ipv4Text } from '../src/core/ratelimit-few-hits'
import { openCoreDb } from './support/app'

const CANONICAL_PART = /^(0|[1-9]\d{0,2})$/
const isCanonicalIpv4 = (s: string) => {
  const parts = s.split('.')
  return parts.length === 4 && parts.every((p) => CANONICAL_PART.test(p) && Number(p) <= 255)
}

describe('ipv4Bits: one key for one spelling', () => {
  it('reads every canonical address as its 32 bits, which ipv4Text spells back', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (bits) => {
      const text = ipv4Text(bits)
      expect(text).toBe([bits >>> 24, (bits >>> 16) & 255, (bits >>> 8) & 255, bits & 255].join('.'))
      expect(ipv4Bits(text)).toBe(bits)
    }))
  })

  it('refuses every other spelling (leading zeros, out of range, padding, IPv6, names)', () => {
    for (const s of [
      '', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.04', '1.2.3.00', '256.1.1.1', '1.2.3.1000', '1.2.3.4 ', ' 1.2.3.4', '1..2.3',
      '.1.2.3', '1.2.3.', 'a.b.c.d', '::1', '::ffff:1.2.3.4', '1.2.3.-1', '1.2.3.+4', '\uff11.2.3.4', 'user:42',
    ]) expect(ipv4Bits(s)).toBe(-1)
    // Dotted digit strings of any shape: read exactly when canonical, and then spelled back as they came.
    const dotted = fc.array(fc.stringMatching(/^[0-9]{0,4}$/), { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'))
    fc.assert(fc.property(fc.oneof(dotted, fc.string()), (s) => {
      const bits = ipv4Bits(s)
      expect(bits >= 0).toBe(isCanonicalIpv4(s))
      if (bits >= 0) expect(ipv4Text(bits)).toBe(s)
    }), { numRuns: 5_000 })
  })
})

describe('FewHits: a rule\'s keys hit a few times, in typed arrays', () => {
  it('holds up to `most` hits of a key, counting those after `sinceMs`; the hit past them is left to the tally', () => {
    const keys = new FewHits(3)
    expect(keys.hit('198.18.0.1', 1_000, 0)).toBe(1)
    expect(keys.hit('198.18.0.1', 2_000, 1_500)).toBe(1) // the first is before sinceMs: out of the window
    expect(keys.hit('198.18.0.1', 3_000, 0)).toBe(3)
    expect(keys.hit('198.18.0.1', 4_000, 0)).toBe(0) // full: nothing kept
    expect(keys.size).toBe(1)
    expect(keys.take('198.18.0.1')).toEqual({ hits: [1_000, 2_000, 3_000], admitted: 3 })
    expect(keys.take('198.18.0.1')).toBeUndefined()
    expect(keys.size).toBe(0)
  })

  it('keeps the hits ascending when the clock steps back, as a tally does', () => {
    const keys = new FewHits(4)
    keys.hit('user:1', 5_000, 0)
    keys.hit('user:1', 4_000, 0)
    expect(keys.take('user:1')).toEqual({ hits: [5_000, 5_000], admitted: 2 })
  })

  it('keeps IPv4 keys and others apart, and every key\'s hits through growth and reused slots', () => {
    const keys = new FewHits(FEW_HITS_MAX)
    const subjects = Array.from({ length: 3_000 }, (_, i) => (i % 3 === 0 ? `2001:db8::${i.toString(16)}` : i % 3 === 1 ? ipv4Text(0xc6120000 + i) : `key-${i}`))
    subjects.forEach((s, i) => keys.hit(s, i, -1))
    subjects.forEach((s, i) => i % 2 === 0 && keys.hit(s, i + 10_000, -1))
    expect(keys.size).toBe(3_000)
    // Half of them taken out; their slots go to new keys, which start empty.
    for (let i = 1; i < subjects.length; i += 2) expect(keys.take(subjects[i]!)).toEqual({ hits: [i], admitted: 1 })
    for (let i = 0; i < 1_500; i++) expect(keys.hit(`new-${i}`, 50_000, -1)).toBe(1)
    for (let i = 0; i < subjects.length; i += 2) expect(keys.take(subjects[i]!)).toEqual({ hits: [i, i + 10_000], admitted: 2 })
    expect(keys.size).toBe(1_500)
  })

  it('prune drops the hits before `fromMs` a slice at a time, and lets go of the keys left with none', () => {
    const keys = new FewHits(2)
    for (let i = 0; i < 10; i++) keys.hit(`10.0.0.${i}`, 1_000, 0)
    for (let i = 0; i < 5; i++) keys.hit(`10.0.0.${i}`, 9_000, 0)
    keys.prune(5_000, 4) // a slice: the first four keys
    expect(keys.size).toBe(10 - 0) // each of them still has its second hit
    keys.prune(5_000, 100) // the rest of the walk
    expect(keys.size).toBe(5)
    expect(keys.take('10.0.0.0')).toEqual({ hits: [9_000], admitted: 2 })
    expect(keys.take('10.0.0.7')).toBeUndefined()
    // What is left of a key holds new hits again, up to `most`.
    expect(keys.hit('10.0.0.1', 10_000, 0)).toBe(2)
    expect(keys.hit('10.0.0.1', 11_000, 0)).toBe(0)
  })

  it('shrinks its arrays after a flood once a prune\'s walk finds most keys gone, every key left keeping its hits', () => {
    const keys = new FewHits(3)
    const flood = 20_000
    for (let i = 0; i < flood; i++) keys.hit(ipv4Text(0xc6120000 + i), 1_000, 0)
    expect(keys.capacity).toBeGreaterThanOrEqual(flood)
    // 300 keys stay in the window (a second hit at 9 s); a few are named, not addresses.
    const kept = Array.from({ length: 300 }, (_, i) => ipv4Text(0xc6120000 + i * 61))
    for (const s of kept) keys.hit(s, 9_000, 0)
    for (let i = 0; i < 20; i++) keys.hit(`user:${i}`, 9_000, 0)
    keys.prune(5_000, flood) // not the end of the walk yet: nothing moves
    expect(keys.capacity).toBeGreaterThanOrEqual(flood)
    keys.prune(5_000, flood)
    expect(keys.size).toBe(320)
    expect(keys.capacity).toBe(1_024)
    // The prune dropped their first hits (before 5 s); what is left moved with them.
    for (const s of kept) expect(keys.hit(s, 9_500, 0)).toBe(2)
    for (const s of kept) expect(keys.take(s)).toEqual({ hits: [9_000, 9_500], admitted: 3 })
    for (let i = 0; i < 20; i++) expect(keys.take(`user:${i}`)).toEqual({ hits: [9_000], admitted: 1 })
    // New keys after the shrink get slots of their own, and the arrays grow again.
    for (let i = 0; i < 3_000; i++) expect(keys.hit(`10.1.${i >> 8}.${i & 255}`, 10_000, 0)).toBe(1)
    expect(keys.capacity).toBeGreaterThanOrEqual(3_000)
    for (let i = 0; i < 3_000; i += 97) expect(keys.take(`10.1.${i >> 8}.${i & 255}`)).toEqual({ hits: [10_000], admitted: 1 })
  })

  it('drain hands every key out, IPv4 keys spelled as they came, and empties the store', () => {
    const keys = new FewHits(1)
    keys.hit('198.18.255.7', 1, 0)
    keys.hit('::1', 2, 0)
    expect([...keys.drain()]).toEqual([['198.18.255.7', { hits: [1], admitted: 1 }], ['::1', { hits: [2], admitted: 1 }]])
    expect(keys.size).toBe(0)
  })

  it('refuses to hold more hits a key than its slots have', () => {
    expect(() => new FewHits(FEW_HITS_MAX + 1)).toThrow(RangeError)
  })
})

describe('a batched rule through its few-hits keys, in one process', () => {
  let db: Db
  let close: () => Promise<void>
  beforeAll(async () => {
    ;({ db, close } = await openCoreDb('pglite'))
  })
  afterAll(() => close())

  const SUBJECTS = ['198.18.0.1', '198.18.0.2', '10.0.0.1', '2001:db8::1', 'user:42', '01.2.3.4']
  const WINDOW_MS = 60_000

  it('decides exactly as a sliding window of its own hits: admitted, remaining and Retry-After', async () => {
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 1, max: 12 }),
      fc.array(fc.record({ key: fc.nat(SUBJECTS.length - 1), advanceMs: fc.nat(25_000), flush: fc.boolean() }), { minLength: 1, maxLength: 60 }),
      async (limit, steps) => {
        const rule: RateRule = { name: `test.few.${crypto.randomUUID().slice(0, 8)}`, limit, windowS: WINDOW_MS / 1000, mode: 'batched' }
        let t = 1_700_000_000_500
        const limiter = createRateLimiter(db, () => t, { flushMs: 3_600_000 })
        const model = new Map<string, number[]>()
        try {
          for (const step of steps) {
            t += step.advanceMs
            const subject = SUBJECTS[step.key]!
            const own = (model.get(subject) ?? []).filter((at) => at > t - WINDOW_MS)
            const decision = await limiter.hit(rule, subject)
            if (own.length < limit) {
              expect(decision).toEqual({ allowed: true, remaining: limit - own.length - 1, retryAfterS: 0 })
              own.push(t)
            } else {
              const leaves = own[own.length - limit]! + WINDOW_MS
              expect(decision).toEqual({ allowed: false, remaining: 0, retryAfterS: Math.min(60, Math.max(1, Math.ceil((leaves - t) / 1000))) })
            }
            model.set(subject, own)
            if (step.flush) await limiter.flush()
          }
        } finally {
          await limiter.close()
        }
      },
    ), { numRuns: 80 })
  }, 60_000)
})

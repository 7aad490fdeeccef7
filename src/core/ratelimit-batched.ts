// The batched mode of the rate limits, for a large limit checked on every request (the API-wide rule);
// src/core/ratelimit.ts has the rules, the strict mode and the limiter that hands each rule to its mode, and
// src/core/ratelimit-tally.ts what one key holds in memory and how a hit is decided from it.
// No database work per hit: each process keeps its own hits in memory (a sliding log, exact within the process);
// every RATE_FLUSH_MS one statement adds them to per-slot counts in core.rate_counts and reads back the other
// processes' counts of the keys hit since the last flush. So a flush costs what the keys in use cost, not every key
// held for its window (with 100,000 client addresses held, reading them all back took the database half a second
// every 250 ms).
// A key whose counts were not read at the latest flush (new to the process, or not hit before that flush) is
// decided on what the process last read of it (nothing, for a new key) for its first `unread` hits: U = the
// rule's limit spread over its window, for one RATE_FLUSH_MS (1 at least; 1 for 200 a minute). The next flush
// reads its counts back; a hit past U reads them at once. So no request waits for the database because its client
// address is new (before, each new address cost a read in the request's path).
// A key this process has admitted at most H hits of in the window, none of them written, is held back: H = 2% of the
// rule's limit (U at least; 4 for 200 a minute). A flush neither writes nor reads it, and its hits are decided on
// this process's own; the hit past H reads its counts at once, and the next flush writes every hit it holds. So a
// flush costs the keys near enough to their limit to matter, not every client address seen a few times a minute
// (with a new address every few requests, writing and reading each took the database more CPU than the requests
// themselves); the shutdown flush writes the held keys too.
// Tolerance across P processes: in any window a key gets at most `limit`, plus the hits the other processes
// admitted that this one had not read when it decided: those of the last 2 × RATE_FLUSH_MS and one statement's
// time for a key it reads at every flush; for a key whose counts are not current, what they admitted since this
// process last read it, on which it admits at most U hits before reading again; and at most H hits of each other
// process that holds the key back (2% of the limit a process). Never more than P × limit. A process killed without
// its shutdown flush loses the hits it admitted since its last flush, and those of the keys it held back.
// The other processes' hits are counted by slot (1 s for a window up to a minute), a slot as long as any of it lies
// in the window: on that side the window is up to one slot longer, never shorter. Retry-After is exact for this
// process's hits, up to one slot late for the others', and never above the window.
// Solo (one process on its database, the embedded PGlite): nothing is read back; each flush appends the keys' new
// hits as one row of the solo log (src/core/ratelimit-solo-log.ts), read once by the next start. The writes of a
// flush are in src/core/ratelimit-batched-write.ts.
import type { Db } from './db'
import type { RateDecision, RateLimiterOptions, RateRule } from './ratelimit'
import { FEW_HITS_MAX, FewHits, type FewHitsKey } from './ratelimit-few-hits'
import { writeShared, writeSolo, type FlushWrite } from './ratelimit-batched-write'
import { appendSoloLog, readSoloLog } from './ratelimit-solo-log'
import {
  decide, firstSlot, heldHits, keyOf, newTally, NONE, othersOf, RATE_FLUSH_MS, readAt, slotS, trim, unreadHits,
  type Tally,
} from './ratelimit-tally'

/**
 * How far back a solo limiter reads what earlier runs wrote, once: rules with a longer window (and slot) read their
 * keys one by one instead. The API-wide rule's window is a minute.
 */
const SOLO_LOOKBACK_S = 600
/**
 * Every key held is visited once in this long, a slice at each flush, to let go of the hits and counts that left
 * their window and of the keys with nothing left (the keys hit are trimmed at every flush anyway).
 */
const PRUNE_EVERY_MS = 5_000

/** The batched counts of one limiter: what its `hit` does for a batched rule, and what it flushes. */
export interface BatchedCounts {
  hit(rule: RateRule, subject: string): Promise<RateDecision>
  /** hit, answered at once when the key's counts need no read (most hits). */
  hitNow(rule: RateRule, subject: string): RateDecision | Promise<RateDecision>
  /** Forgets a key: this process's hits and counts of it, and what the database holds (a solo log marks the reset). */
  reset(rule: RateRule, subject: string): Promise<void>
  flush(): Promise<void>
  close(): Promise<void>
  held(): number
}

export function createBatchedCounts(db: Db, now: () => number, opts: RateLimiterOptions): BatchedCounts {
  const flushMs = opts.flushMs ?? RATE_FLUSH_MS
  /** Rule name → subject → tally (a map per rule: no key string to build and hash at every hit). */
  const tallies = new Map<string, Map<string, Tally>>()
  const tallyMap = (rule: RateRule) => {
    let map = tallies.get(rule.name)
    if (!map) tallies.set(rule.name, (map = new Map()))
    return map
  }
  /** Lets go of a key (reset, or pruned): a flush under way writes nothing of it. */
  const letGo = (tally: Tally) => {
    tally.gone = true
    active.delete(tally)
    tallyMap(tally.rule).delete(tally.subject)
  }
  /**
   * Rule name → the rule's keys hit a few times (held back, never read): their hits alone, in typed arrays
   * (src/core/ratelimit-few-hits.ts). Not for a solo rule, whose keys are written at every flush.
   */
  const fewHits = new Map<string, { rule: RateRule; keys: FewHits }>()
  const fewHitsOf = (rule: RateRule) => {
    let found = fewHits.get(rule.name)
    if (!found) fewHits.set(rule.name, (found = { rule, keys: new FewHits(Math.min(FEW_HITS_MAX, heldHits(rule), rule.limit)) }))
    return found.keys
  }
  const tallied = () => {
    let n = 0
    for (const map of tallies.values()) n += map.size
    return n
  }
  const held = () => {
    let n = tallied()
    for (const { keys } of fewHits.values()) n += keys.size
    return n
  }
  const loading = new Map<string, Promise<Tally>>()
  let timer: ReturnType<typeof setInterval> | null = null
  let chain: Promise<void> = Promise.resolve()
  let reconciling = false
  let closed = false
  /** The keys hit since the last reconcile: the ones it writes and reads back. */
  let active = new Set<Tally>()
  /** Where the prune stands in its walk over every key; null between walks. */
  let pruning: Iterator<Tally> | null = null
  /** Flushes started so far: a key's counts are current when read at the latest one. */
  let flushes = 0
  /** Solo: what earlier runs wrote (key → slot counts), read once; null until read. */
  let earlier: Map<string, Map<number, number>> | null = null
  let earlierAt = 0
  let readingEarlier: Promise<void> | null = null
  const readEarlier = () =>
    (readingEarlier ??= (async () => {
      earlier = await readSoloLog(db, Math.floor(now() / 1000) - SOLO_LOOKBACK_S)
      earlierAt = now()
    })().catch((err) => {
      readingEarlier = null
      throw err
    }))

  const startTimer = () => {
    if (timer || closed) return
    timer = setInterval(() => void (reconciling || flush()), flushMs)
    timer.unref?.()
  }
  const stopTimer = () => {
    if (timer) clearInterval(timer)
    timer = null
  }

  /** A rule whose keys only this process counts (solo), within what the read of earlier runs covers. */
  const isSolo = (rule: RateRule) => opts.solo === true && rule.windowS + slotS(rule) <= SOLO_LOOKBACK_S

  /**
   * The key's tally, with the other processes' counts as of the latest flush; for a key new to this process, or not
   * hit before that flush (so not read back by it), as last read (none, for a new key) for its first U hits, and read
   * first past them. With the database down, a key decides from what this process knew (its own hits still count).
   */
  const tallyOf = (rule: RateRule, subject: string): Tally | Promise<Tally> => {
    const map = tallyMap(rule)
    const known = map.get(subject)
    const solo = isSolo(rule)
    if (known && (known.othersFlush === flushes || solo)) return known
    if (solo) {
      if (!earlier) return readEarlier().then(() => tallyOf(rule, subject))
      const t = now()
      const from = firstSlot(rule, t)
      const key = keyOf(rule, subject)
      const found = earlier.get(key)
      const others = found ? othersOf({ written: null }, [...found].filter(([slot]) => slot >= from)) : NONE
      earlier.delete(key)
      const tally = newTally(rule, subject, others, flushes, t)
      map.set(subject, tally)
      startTimer()
      return tally
    }
    // (No key string to build while nothing is being read: most hits.)
    let load = loading.size === 0 ? undefined : loading.get(keyOf(rule, subject))
    if (!load) {
      const tally = known ?? newTally(rule, subject, NONE, -1, now())
      // Decided on what is known: a key not current for its first U hits (the hit makes it active, so the next flush
      // reads its counts back), a key held back (never written) for its first H (read once it is written).
      if (tally.unread < unreadHits(rule) || (tally.written === null && tally.hits.length < heldHits(rule))) {
        tally.unread++
        if (!known) {
          map.set(subject, tally)
          startTimer()
        }
        return tally
      }
      const key = keyOf(rule, subject)
      load = (async () => {
        const asOf = flushes
        const t = now()
        let rows: Array<{ slot: number; hits: number }>
        try {
          rows = await db.sql<{ slot: number; hits: number }>`
            select slot, hits from core.rate_counts where rule = ${rule.name} and subject = ${subject} and slot >= ${firstSlot(rule, t)}`
        } catch (err) {
          const kept = map.get(subject)
          if (kept) return kept
          throw err
        }
        let tally = map.get(subject)
        if (!tally) {
          tally = newTally(rule, subject, NONE, asOf, t)
          map.set(subject, tally)
        }
        // A reconcile writing this key meanwhile may have written hits `written` does not count yet: they are taken
        // for the other processes' until the next flush, which refuses early, never late.
        readAt(tally, rows.map((r) => [r.slot, r.hits]), asOf)
        startTimer()
        return tally
      })().finally(() => loading.delete(key))
      loading.set(key, load)
    }
    return load
  }

  function* everyTally(): Generator<Tally> {
    for (const map of tallies.values()) yield* map.values()
  }

  /**
   * Lets go of the hits and counts that left their window, and of the keys with nothing left and no recent hit: a
   * slice of the keys at each flush, so every key is visited once in PRUNE_EVERY_MS (no pause walking them all).
   */
  const pruneSlice = (t: number) => {
    // What earlier runs wrote is out of every solo rule's window once SOLO_LOOKBACK_S has passed: unused keys go.
    if (earlier && earlier.size > 0 && t - earlierAt > SOLO_LOOKBACK_S * 1000) earlier = new Map()
    for (const { rule, keys } of fewHits.values()) keys.prune(firstSlot(rule, t) * 1000, Math.ceil((keys.size * flushMs) / PRUNE_EVERY_MS))
    let left = Math.ceil((tallied() * flushMs) / PRUNE_EVERY_MS)
    pruning ??= everyTally()
    while (left-- > 0) {
      const next = pruning.next()
      if (next.done) {
        pruning = null
        return
      }
      const tally = next.value
      trim(tally, t)
      if (tally.hits.length + tally.others.size === 0 && t - tally.lastMs > tally.rule.windowS * 1000) letGo(tally)
    }
  }

  /** A shared key of at most H hits here, none written: a flush holds it back (see the top of this file). */
  const heldBack = (tally: Tally) =>
    tally.written === null && tally.hits.length <= heldHits(tally.rule) && !isSolo(tally.rule)

  /**
   * Writes the hits admitted since the last flush: a solo rule's keys as one row of the solo log, the others' in one
   * statement that adds them to their slots and reads back the counts of every key hit since the last flush, but
   * for the keys held back. `final` (the shutdown flush) writes every hit not written yet, held back or not.
   */
  const reconcile = async (final = false) => {
    reconciling = true
    flushes++
    const t = now()
    pruneSlice(t)
    if (final) {
      for (const { rule, keys } of fewHits.values()) for (const [subject, key] of keys.drain()) tallyMap(rule).set(subject, tallyOfFew(rule, subject, key))
      for (const tally of everyTally()) if (tally.unwritten > 0) active.add(tally)
    }
    // A key reset meanwhile is no longer held: nothing of it is written back.
    const keys: Tally[] = []
    for (const tally of active) {
      if (tally.gone) continue
      trim(tally, t)
      if (final || !heldBack(tally)) keys.push(tally)
    }
    active = new Set()
    if (keys.length === 0) {
      if (held() === 0) stopTimer()
      reconciling = false
      return
    }
    for (const tally of keys) {
      tally.writing = tally.unwritten
      tally.unwritten = 0
    }
    const solo = keys.filter((tally) => isSolo(tally.rule))
    const shared = solo.length === 0 ? keys : keys.filter((tally) => !isSolo(tally.rule))
    try {
      if (solo.length > 0) await writeSolo(flushWrite, solo, t)
      if (shared.length > 0) await writeShared(flushWrite, shared, t, !final)
    } finally {
      reconciling = false
    }
  }

  const holdBack = (keys: Tally[], err: unknown) => {
    // Held for the next flush: the hits still count here, the other processes (or the next start) see them later.
    for (const tally of keys) {
      tally.unwritten += tally.writing
      tally.writing = 0
      active.add(tally)
    }
    opts.log?.warn({ err, keys: keys.length }, 'rate limits: batched hits not written, held for the next flush')
  }
  /** What the writers (src/core/ratelimit-batched-write.ts) need of this limiter's flush under way. */
  const flushWrite: FlushWrite = {
    db,
    get flush() {
      return flushes
    },
    soloLookbackS: SOLO_LOOKBACK_S,
    holdBack,
  }

  const flush = (final = false): Promise<void> => (chain = chain.then(() => reconcile(final)))

  const record = (tally: Tally) => {
    active.add(tally)
    return decide(tally, now())
  }
  /** A key held in fewHits as a tally, as its hits there left it: held back, never read, nothing written. */
  const tallyOfFew = (rule: RateRule, subject: string, { hits, admitted }: FewHitsKey): Tally => {
    const tally = newTally(rule, subject, NONE, -1, hits.at(-1)!)
    tally.hits = hits
    tally.unwritten = hits.length
    tally.unread = admitted
    return tally
  }
  const hitNow = (rule: RateRule, subject: string) => {
    // A key not tallied: its first hits here (a new client address: most of a flood of them) are admitted as a held
    // key's are (held back, on its own hits alone: fewer than the rule's limit), in fewHits; the hit past them makes
    // it a tally, as they left it, and goes the tally's way.
    const ruleTallies = tallyMap(rule)
    if (!isSolo(rule) && !ruleTallies.has(subject)) {
      const t = now()
      const keys = fewHitsOf(rule)
      const own = keys.hit(subject, t, t - rule.windowS * 1000)
      if (own > 0) {
        startTimer()
        return { allowed: true, remaining: rule.limit - own, retryAfterS: 0 }
      }
      const few = keys.take(subject)
      if (few) {
        const tally = tallyOfFew(rule, subject, few)
        trim(tally, t)
        ruleTallies.set(subject, tally)
      }
    }
    const found = tallyOf(rule, subject)
    return found instanceof Promise ? found.then(record) : record(found)
  }

  return {
    hitNow,
    async hit(rule, subject) {
      return hitNow(rule, subject)
    },
    async reset(rule, subject) {
      const tally = tallyMap(rule).get(subject)
      if (tally) letGo(tally)
      fewHits.get(rule.name)?.keys.take(subject)
      earlier?.delete(keyOf(rule, subject))
      await db.sql`delete from core.rate_counts where rule = ${rule.name} and subject = ${subject}`
      if (opts.solo) {
        const s = Math.floor(now() / 1000)
        await appendSoloLog(db, s, [[rule.name, subject, s, 0]], SOLO_LOOKBACK_S)
      }
    },
    flush: () => flush(),
    held,
    async close() {
      closed = true
      stopTimer()
      await flush(true)
    },
  }
}

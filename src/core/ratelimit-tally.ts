// A batched rate-limit key in memory (src/core/ratelimit-batched.ts counts and flushes them): this process's hits,
// the other processes' counts by slot as last read, and the decision a hit gets from them. The tolerance these
// counts keep across processes is described at the top of ratelimit-batched.ts.
import type { RateDecision, RateRule } from './ratelimit'
import { rateKey } from './ratelimit-solo-log'

/** How often a batched limiter writes its hits and reads the other processes' counts. */
export const RATE_FLUSH_MS = 250
/** A batched rule's window is counted in about this many slots in the database (one second at least). */
const SLOTS_PER_WINDOW = 60

/**
 * A batched key in memory. `hits` are this process's admitted hits (ms, ascending): the last `unwritten` are not in
 * the database yet, the `writing` before them are being written, the rest are in `written` (slot → hits; null while
 * none). A key is small (a client address hit once: a tally and its one-hit list), as tens of thousands are held.
 */
export interface Tally {
  readonly rule: RateRule
  readonly subject: string
  hits: number[]
  writing: number
  unwritten: number
  written: Map<number, number> | null
  /** Slot start (epoch s) → the other processes' hits there, as of the last reconcile (NONE while none). */
  others: Map<number, number>
  /** The flush whose counts `others` are (a read between two flushes: the earlier one); -1 before any read. */
  othersFlush: number
  /** Hits admitted since `others` stopped being current (at most unreadHits(rule)): the next read sets it to 0. */
  unread: number
  lastMs: number
  /** Let go of (reset, or pruned): a flush under way writes nothing of it. */
  gone: boolean
}

/** The other processes' counts of a key they never hit: shared, never written to (trim only deletes). */
export const NONE: Map<number, number> = new Map()

export const slotS = (rule: RateRule) => Math.max(1, Math.ceil(rule.windowS / SLOTS_PER_WINDOW))
export const slotOf = (rule: RateRule, ms: number) => Math.floor(ms / 1000 / slotS(rule)) * slotS(rule)
/** The first slot inside the window that ends at `ms`: it counts whole. */
export const firstSlot = (rule: RateRule, ms: number) => slotOf(rule, ms - rule.windowS * 1000)
export const keyOf = (rule: RateRule, subject: string) => rateKey(rule.name, subject)
/**
 * U of the tolerance (at the top of ratelimit-batched.ts): the hits a key whose counts are not current admits before
 * they are read.
 */
export const unreadHits = (rule: RateRule) => Math.max(1, Math.floor((rule.limit * RATE_FLUSH_MS) / (rule.windowS * 1000)))
/** H of the hold-back (ratelimit-batched.ts): the hits of a key a process keeps to itself until the key is written. */
export const heldHits = (rule: RateRule) => Math.max(unreadHits(rule), Math.floor(rule.limit / 50))

export const newTally = (rule: RateRule, subject: string, others: Map<number, number>, othersFlush: number, t: number): Tally =>
  ({ rule, subject, hits: [], writing: 0, unwritten: 0, written: null, others, othersFlush, unread: 0, lastMs: t, gone: false })

/** Drops the hits and the other processes' slots that left the window ending at `t` (hits not yet written too). */
export function trim(tally: Tally, t: number) {
  const from = firstSlot(tally.rule, t)
  let gone = 0
  while (gone < tally.hits.length && slotOf(tally.rule, tally.hits[gone]!) < from) gone++
  if (gone > 0) tally.hits.splice(0, gone)
  tally.unwritten = Math.min(tally.unwritten, tally.hits.length)
  if (tally.written) for (const slot of tally.written.keys()) if (slot < from) tally.written.delete(slot)
  for (const slot of tally.others.keys()) if (slot < from) tally.others.delete(slot)
}

/** Takes a key's counts as read at flush `asOf` (slot → hits of every process): current from then on, U hits anew. */
export function readAt(tally: Tally, counts: Iterable<[number, number]>, asOf: number) {
  tally.others = othersOf(tally, counts)
  tally.othersFlush = asOf
  tally.unread = 0
}

/** A key's slot counts (slot → hits of every process) less this process's written hits: the other processes' hits. */
export function othersOf(tally: Pick<Tally, 'written'>, counts: Iterable<[number, number]>): Map<number, number> {
  let others = NONE
  for (const [slot, hits] of counts) {
    const theirs = hits - (tally.written?.get(slot) ?? 0)
    if (theirs > 0) {
      if (others === NONE) others = new Map()
      others.set(slot, theirs)
    }
  }
  return others
}

/** The index of the first value above `ms` in an ascending list. */
function firstAbove(list: number[], ms: number): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list[mid]! > ms) hi = mid
    else lo = mid + 1
  }
  return lo
}

export function decide(tally: Tally, t: number): RateDecision {
  const { rule } = tally
  const windowMs = rule.windowS * 1000
  const oldest = firstAbove(tally.hits, t - windowMs)
  const own = tally.hits.length - oldest
  const from = firstSlot(rule, t)
  let others = 0
  for (const [slot, n] of tally.others) if (slot >= from) others += n
  if (own + others < rule.limit) {
    // Ascending even if the clock steps back.
    tally.lastMs = Math.max(t, tally.lastMs)
    tally.hits.push(tally.lastMs)
    tally.unwritten++
    return { allowed: true, remaining: rule.limit - own - others - 1, retryAfterS: 0 }
  }
  // The moment enough hits have left the window: this process's leave `windowMs` after they were made, the other
  // processes' once their whole slot has; both lists are in order, so walk them together.
  const slots = [...tally.others].filter(([slot]) => slot >= from).sort((a, b) => a[0] - b[0])
  let excess = own + others - rule.limit + 1
  let i = oldest
  let s = 0
  let at = t + windowMs
  while (excess > 0 && (i < tally.hits.length || s < slots.length)) {
    const mine = i < tally.hits.length ? tally.hits[i]! + windowMs : Infinity
    const theirs = s < slots.length ? (slots[s]![0] + slotS(rule)) * 1000 + windowMs : Infinity
    if (mine <= theirs) {
      at = mine
      i++
      excess--
    } else {
      at = theirs
      excess -= slots[s]![1]
      s++
    }
  }
  return { allowed: false, remaining: 0, retryAfterS: Math.min(rule.windowS, Math.max(1, Math.ceil((at - t) / 1000))) }
}

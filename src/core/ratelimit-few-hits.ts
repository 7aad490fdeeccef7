// The keys of a batched rule this process has hit only a few times (src/core/ratelimit-batched.ts): a client address
// that comes and goes. Such a key is held back (neither written nor read) and decided on its own hits alone, so it
// needs nothing but the moments of those hits: they are kept in typed arrays, a slot of them per key, under its
// subject (an IPv4 address as its 32 bits), until the hit past `most` makes the key a Tally. A flood of new addresses
// held as tallies (an object, its list of hits and the address string each, for a minute) cost the clinical `me`
// read about a fifth of its CPU time, most of it in the collector: scripts/bench/README.md, "Keys hit a few times".

/** The most hits a key is held with here; a rule that holds back fewer (H, ratelimit-batched.ts) holds that many. */
export const FEW_HITS_MAX = 4
/** The fewest key slots the arrays hold once a key is (they double as keys come, and shrink after a prune's walk). */
const MIN_CAPACITY = 1024

/** A canonical dotted IPv4 address (four numbers 0-255 without leading zeros: "198.18.0.1") as its 32 bits, else -1. */
export function ipv4Bits(subject: string): number {
  const n = subject.length
  if (n < 7 || n > 15) return -1
  let bits = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < n; i++) {
    const c = subject.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1
      bits = bits * 256 + part
      part = 0
      digits = 0
      dots++
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1 // a leading zero: not the canonical spelling
      part = part * 10 + (c - 48)
      if (++digits > 3 || part > 255) return -1
    } else return -1
  }
  return dots === 3 && digits > 0 ? bits * 256 + part : -1
}

/** The address ipv4Bits read. */
export const ipv4Text = (bits: number) => `${bits >>> 24}.${(bits >>> 16) & 255}.${(bits >>> 8) & 255}.${bits & 255}`

/** What a key held here has: its hits (ms, ascending) and how many it was admitted in all (its `unread`). */
export interface FewHitsKey { hits: number[]; admitted: number }

/** One rule's keys hit at most `most` times: their hits, FEW_HITS_MAX slots a key. */
export class FewHits {
  private readonly v4 = new Map<number, number>()
  private readonly named = new Map<string, number>()
  private hitsAt = new Float64Array(0)
  private counts = new Uint8Array(0)
  private admitted = new Uint32Array(0)
  private readonly free: number[] = []
  private used = 0
  /** Where the prune stands in its walk over the keys; null between walks. */
  private pruning: Iterator<void> | null = null
  private pruneFromMs = 0

  /** `most`: at most FEW_HITS_MAX, and no more than the rule admits in a window (every hit held here is admitted). */
  constructor(readonly most: number) {
    if (most < 0 || most > FEW_HITS_MAX) throw new RangeError(`a key holds 0 to ${FEW_HITS_MAX} hits here, not ${most}`)
  }

  get size(): number {
    return this.v4.size + this.named.size
  }

  /** Key slots the arrays hold room for (37 bytes each), used or free. */
  get capacity(): number {
    return this.counts.length
  }

  /**
   * A hit at `ms` of a key holding fewer than `most` hits (or none): kept, and the key's hits after `sinceMs` (this
   * one included) answered. 0 when the key already holds `most`: nothing is kept, take() hands the key over.
   */
  hit(subject: string, ms: number, sinceMs: number): number {
    const bits = ipv4Bits(subject)
    let slot = bits < 0 ? this.named.get(subject) : this.v4.get(bits)
    if (slot === undefined) {
      if (this.most === 0) return 0
      slot = this.slot()
      if (bits < 0) this.named.set(subject, slot)
      else this.v4.set(bits, slot)
    }
    const count = this.counts[slot]!
    if (count >= this.most) return 0
    const at = slot * FEW_HITS_MAX
    // Ascending even if the clock steps back (as a tally's).
    this.hitsAt[at + count] = count > 0 ? Math.max(ms, this.hitsAt[at + count - 1]!) : ms
    this.counts[slot] = count + 1
    this.admitted[slot]!++
    let within = 0
    for (let i = 0; i <= count; i++) if (this.hitsAt[at + i]! > sinceMs) within++
    return within
  }

  /** The key's hits, which it no longer holds here; undefined when it holds none. */
  take(subject: string): FewHitsKey | undefined {
    const bits = ipv4Bits(subject)
    const slot = bits < 0 ? this.named.get(subject) : this.v4.get(bits)
    if (slot === undefined) return undefined
    if (bits < 0) this.named.delete(subject)
    else this.v4.delete(bits)
    return this.release(slot)
  }

  /**
   * Visits up to `budget` keys, from where the last call stopped: drops their hits before `fromMs`, and lets go of
   * the keys left with none.
   */
  prune(fromMs: number, budget: number): void {
    this.pruneFromMs = fromMs
    this.pruning ??= this.walk()
    while (budget-- > 0) {
      if (this.pruning.next().done) {
        this.pruning = null
        this.shrink()
        return
      }
    }
  }

  /** Every key with its hits, each let go of as it is handed out (the shutdown flush writes them). */
  *drain(): Generator<[subject: string, key: FewHitsKey]> {
    for (const [bits, slot] of this.v4) {
      this.v4.delete(bits)
      yield [ipv4Text(bits), this.release(slot)]
    }
    for (const [subject, slot] of this.named) {
      this.named.delete(subject)
      yield [subject, this.release(slot)]
    }
  }

  private slot(): number {
    const reused = this.free.pop()
    if (reused !== undefined) return reused
    if (this.used === this.counts.length) {
      const capacity = Math.max(MIN_CAPACITY, this.used * 2)
      const hitsAt = new Float64Array(capacity * FEW_HITS_MAX)
      hitsAt.set(this.hitsAt)
      this.hitsAt = hitsAt
      const counts = new Uint8Array(capacity)
      counts.set(this.counts)
      this.counts = counts
      const admitted = new Uint32Array(capacity)
      admitted.set(this.admitted)
      this.admitted = admitted
    }
    return this.used++
  }

  /** Resizes the arrays to the keys held: a slot array at its peak after a flood of addresses would stay so. */
  private resize(capacity: number): void {
    const hitsAt = new Float64Array(capacity * FEW_HITS_MAX)
    const counts = new Uint8Array(capacity)
    const admitted = new Uint32Array(capacity)
    let used = 0
    const move = (slot: number) => {
      const to = used++
      hitsAt.set(this.hitsAt.subarray(slot * FEW_HITS_MAX, (slot + 1) * FEW_HITS_MAX), to * FEW_HITS_MAX)
      counts[to] = this.counts[slot]!
      admitted[to] = this.admitted[slot]!
      return to
    }
    for (const [bits, slot] of this.v4) this.v4.set(bits, move(slot))
    for (const [subject, slot] of this.named) this.named.set(subject, move(slot))
    this.hitsAt = hitsAt
    this.counts = counts
    this.admitted = admitted
    this.used = used
    this.free.length = 0
  }

  /** After a prune's walk: arrays over four times the keys held shrink to twice (never below MIN_CAPACITY). */
  private shrink(): void {
    const capacity = this.counts.length
    if (capacity <= MIN_CAPACITY || this.size * 4 > capacity) return
    this.resize(Math.max(MIN_CAPACITY, this.size * 2))
  }

  private release(slot: number): FewHitsKey {
    const at = slot * FEW_HITS_MAX
    const key = { hits: Array.from(this.hitsAt.subarray(at, at + this.counts[slot]!)), admitted: this.admitted[slot]! }
    this.forget(slot)
    return key
  }

  private forget(slot: number): void {
    this.counts[slot] = 0
    this.admitted[slot] = 0
    this.free.push(slot)
  }

  /** Drops a slot's hits before pruneFromMs; true when none is left. */
  private trimmed(slot: number): boolean {
    const at = slot * FEW_HITS_MAX
    const count = this.counts[slot]!
    let gone = 0
    while (gone < count && this.hitsAt[at + gone]! < this.pruneFromMs) gone++
    if (gone === 0) return false
    if (gone === count) return true
    this.hitsAt.copyWithin(at, at + gone, at + count)
    this.counts[slot] = count - gone
    return false
  }

  private *walk(): Generator<void> {
    for (const [bits, slot] of this.v4) {
      if (this.trimmed(slot)) {
        this.v4.delete(bits)
        this.forget(slot)
      }
      yield
    }
    for (const [subject, slot] of this.named) {
      if (this.trimmed(slot)) {
        this.named.delete(subject)
        this.forget(slot)
      }
      yield
    }
  }
}

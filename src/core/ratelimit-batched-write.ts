// What a flush of the batched counts (src/core/ratelimit-batched.ts) writes: the hits its keys admitted since the
// last flush, a solo rule's as one row of the solo log, a shared rule's added to their slots in core.rate_counts in
// one statement that reads back every process's counts of the same keys. A write that fails hands its keys back
// (`holdBack`): their hits still count in this process and are written at the next flush.
import type { Db } from './db'
import { appendSoloLog, type SoloEntry } from './ratelimit-solo-log'
import { firstSlot, readAt, slotOf, type Tally } from './ratelimit-tally'

/** What a write needs of the flush under way. */
export interface FlushWrite {
  db: Db
  /** The flush's number: the keys written are current as of it. */
  flush: number
  /** How far back a solo limiter reads what earlier runs wrote, once (the solo log keeps that much). */
  soloLookbackS: number
  /** Keys whose hits were not written: held for the next flush. */
  holdBack(keys: Tally[], err: unknown): void
}

/** A key's hits being written, one run per slot: [slot, hits] (hits are ascending, so are their slots). */
function slotRuns(tally: Tally): Array<[number, number]> {
  const runs: Array<[number, number]> = []
  for (let h = tally.hits.length - tally.writing; h < tally.hits.length; h++) {
    const slot = slotOf(tally.rule, tally.hits[h]!)
    const last = runs.at(-1)
    if (last?.[0] === slot) last[1]++
    else runs.push([slot, 1])
  }
  return runs
}

/** The hits being written of `keys` are in the database now (this process's there): `written` counts them. */
function markWritten(keys: Tally[], slots: Array<Array<[number, number]>>, flush: number) {
  keys.forEach((tally, i) => {
    for (const [slot, hits] of slots[i]!) (tally.written ??= new Map()).set(slot, (tally.written.get(slot) ?? 0) + hits)
    tally.writing = 0
    tally.othersFlush = flush
  })
}

/** Solo keys: no other process counts them, so nothing is read back; their hits go to the log for the next start. */
export async function writeSolo(w: FlushWrite, keys: Tally[], t: number): Promise<void> {
  const slots = keys.map(slotRuns)
  const entries: SoloEntry[] = []
  keys.forEach((tally, i) => {
    for (const [slot, hits] of slots[i]!) entries.push([tally.rule.name, tally.subject, slot, hits])
  })
  try {
    await appendSoloLog(w.db, Math.floor(t / 1000), entries, w.soloLookbackS)
  } catch (err) {
    return w.holdBack(keys, err)
  }
  markWritten(keys, slots, w.flush)
}

/**
 * Shared keys: one statement adds their hits to their slots and reads back every process's counts of them; the
 * shutdown flush (`readBack` false) only adds them, as no hit is decided after it (with 100,000 addresses held, the
 * read was up to a third of the statement's time).
 */
export async function writeShared(w: FlushWrite, keys: Tally[], t: number, readBack = true): Promise<void> {
  // Parallel arrays: the keys (a rule as its index in `rules`), then the slots written, each by its key's index.
  const rules: string[] = []
  const ruleIndex = new Map<string, number>()
  const keyRule: number[] = []
  const keySubject: string[] = []
  const keySince: number[] = []
  const slotKey: number[] = []
  const slotAt: number[] = []
  const slotHits: number[] = []
  const slots = keys.map(slotRuns)
  keys.forEach((tally, i) => {
    let r = ruleIndex.get(tally.rule.name)
    if (r === undefined) {
      ruleIndex.set(tally.rule.name, (r = rules.length + 1)) // SQL arrays count from 1
      rules.push(tally.rule.name)
    }
    keyRule.push(r)
    keySubject.push(tally.subject)
    keySince.push(firstSlot(tally.rule, t))
    for (const [slot, hits] of slots[i]!) {
      slotKey.push(i)
      slotAt.push(slot)
      slotHits.push(hits)
    }
  })
  let rows: Array<{ i: number; slot: number; hits: number }>
  try {
    // The counts of the keys are read beside the insert, in the statement's snapshot (before it), one index lookup
    // per key; what this flush adds is added to them here. (Having the insert return its rows, matched to the keys
    // by rule and subject, cost the database as much again; the NOT EXISTS over the delta before that was seen
    // running for over a minute on a server holding 100,000 keys.) Keys travel once, as their index.
    rows = await w.db.sql<{ i: number; slot: number; hits: number }>`
      with k (i, rule, subject, since) as (
        select u.i - 1, (${rules}::text[])[u.r], u.subject, u.since
        from unnest(${keyRule}::int[], ${keySubject}::text[], ${keySince}::bigint[]) with ordinality as u(r, subject, since, i)
      ), added as (
        insert into core.rate_counts as c (rule, subject, slot, hits)
        select k.rule, k.subject, d.slot, d.hits
        from unnest(${slotKey}::int[], ${slotAt}::bigint[], ${slotHits}::int[]) as d(i, slot, hits) join k on k.i = d.i
        on conflict (rule, subject, slot) do update set hits = c.hits + excluded.hits
      )
      select k.i::int as i, c.slot::float8 as slot, c.hits from k
        join lateral (select slot, hits from core.rate_counts c where c.rule = k.rule and c.subject = k.subject and c.slot >= k.since) c on true
        where ${readBack}`
  } catch (err) {
    return w.holdBack(keys, err)
  }
  if (!readBack) return markWritten(keys, slots, w.flush)
  const counts: Array<Map<number, number>> = keys.map(() => new Map())
  for (const { i, slot, hits } of rows) counts[i]!.set(slot, hits)
  // What was written is in the counts read back, and this process's from now on: readAt takes it out of the
  // counts, the rest is the others'.
  keys.forEach((_, i) => {
    for (const [slot, hits] of slots[i]!) counts[i]!.set(slot, (counts[i]!.get(slot) ?? 0) + hits)
  })
  markWritten(keys, slots, w.flush)
  keys.forEach((tally, i) => readAt(tally, counts[i]!, w.flush))
}

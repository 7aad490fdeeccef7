// What a solo batched limiter (the embedded database: one process counts) keeps of its windows for the next start:
// one core.rate_log row per flush with the hits it admitted, read back once at the first hit after a start.
// The shared counts of core.rate_counts serve several processes, which read each other's keys at every flush;
// a solo process reads nothing while it runs, so its hits are appended in one row instead of a row per key and slot
// (on PGlite those rows cost the clinical API rule about 200 us of a request: scripts/bench/README.md).
import type { Db } from './db'

/** A key as the batched counts' maps spell it: the rule's name, a newline, the subject. */
export const rateKey = (rule: string, subject: string) => `${rule}\n${subject}`

/** One key's hits in one slot: rule, subject, slot (epoch s), hits; hits 0 is a reset of the key (all before it go). */
export type SoloEntry = [rule: string, subject: string, slot: number, hits: number]

/**
 * Appends one flush's entries, and deletes the rows that left the lookback of every solo rule. (The list travels
 * inside an object, as a JSON value: the drivers send a bare array as a PostgreSQL array.)
 */
export async function appendSoloLog(db: Db, atS: number, entries: SoloEntry[], lookbackS: number): Promise<void> {
  await db.sql`
    with gone as (delete from core.rate_log where at < ${atS - lookbackS})
    insert into core.rate_log (at, entries) values (${atS}, ${{ e: entries }}::jsonb -> 'e')`
}

/**
 * What earlier runs admitted since `sinceS` (epoch s), key (rateKey) → slot → hits: the shared
 * counts first (rows of a version before this log), then the log in the order it was written, a reset marker
 * dropping what its key had before it.
 */
export async function readSoloLog(db: Db, sinceS: number): Promise<Map<string, Map<number, number>>> {
  const counts = new Map<string, Map<number, number>>()
  const add = (rule: string, subject: string, slot: number, hits: number) => {
    const key = rateKey(rule, subject)
    if (hits === 0) return void counts.delete(key)
    if (slot < sinceS) return
    let slots = counts.get(key)
    if (!slots) counts.set(key, (slots = new Map()))
    slots.set(slot, (slots.get(slot) ?? 0) + hits)
  }
  const shared = await db.sql<{ rule: string; subject: string; slot: number; hits: number }>`
    select rule, subject, slot::float8 as slot, hits from core.rate_counts where slot >= ${sinceS}`
  for (const r of shared) add(r.rule, r.subject, r.slot, r.hits)
  const rows = await db.sql<{ entries: SoloEntry[] }>`select entries from core.rate_log where at >= ${sinceS} order by id`
  for (const row of rows) for (const [rule, subject, slot, hits] of row.entries) add(rule, subject, slot, hits)
  return counts
}

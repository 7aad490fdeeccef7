// A short-lived cache over a key-value settings table the caller names (`key text primary key, value text`), so the
// hot paths (every generation, every mail) read run-time settings without a query each. The whole table is one
// snapshot (a few dozen rows): one query refreshes every key at once, and keys read together are read from the
// same moment. A write in this process invalidates at once; a write in another process is seen within the TTL.
import { rawSql, type Db } from './db'

/**
 * How long one snapshot serves reads. A change committed by another process on the same database is seen here
 * at most this long after its commit, plus the one query that reads the table again.
 */
export const SETTINGS_TTL_MS = 2_000

/** `schema.table` or `table`: the name is spliced into the SQL, so only a plain identifier passes. */
const TABLE_NAME = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/

export interface SettingsCacheOptions {
  /** The key-value table, e.g. `clinical.app_config`. */
  table: string
  /** 0 reads the table on every call (no cache). Default SETTINGS_TTL_MS. */
  ttlMs?: number
}

/** Stored values as strings, exactly as in the table (opening sealed values is the caller's business). */
export interface SettingsCache {
  readonly table: string
  readonly ttlMs: number
  /** The value of one key, or null when it is not set. */
  get(key: string): Promise<string | null>
  /** The keys among these that are set, with their values. */
  getMany(keys: readonly string[]): Promise<Record<string, string>>
  /** Every key that is set. */
  all(): Promise<Record<string, string>>
  /**
   * The values as last read, without waiting (null before the first read); a snapshot past its TTL starts a
   * refresh in the background. For synchronous questions ("is mail configured?") on a path that has just read.
   */
  peek(): ReadonlyMap<string, string> | null
  /** Forgets the snapshot: the next read queries the table. Call it after a write has committed. */
  invalidate(): void
}

interface Snapshot {
  values: Map<string, string>
  /** performance.now() after which the snapshot no longer serves reads. */
  expiresAt: number
}

export function createSettingsCache(db: Db, opts: SettingsCacheOptions): SettingsCache {
  if (!TABLE_NAME.test(opts.table)) throw new Error(`settings table "${opts.table}" is not a plain [schema.]table name`)
  const table = rawSql(opts.table)
  const ttlMs = Math.max(0, opts.ttlMs ?? SETTINGS_TTL_MS)
  let snapshot: Snapshot | null = null
  let loading: { generation: number; promise: Promise<Map<string, string>> } | null = null
  // Bumped by invalidate(): a read that started before a write must not store what it read as fresh.
  let generation = 0

  const load = (): Promise<Map<string, string>> => {
    if (loading && loading.generation === generation) return loading.promise
    const started = performance.now()
    const startedIn = generation
    const promise = db.sql<{ key: string; value: string }>`select key, value from ${table}`.then((rows) => {
      const values = new Map(rows.map((r) => [r.key, r.value]))
      // The TTL counts from the query's start: a commit after that moment is seen once the TTL has passed.
      if (startedIn === generation) snapshot = { values, expiresAt: started + ttlMs }
      return values
    })
    const entry = { generation: startedIn, promise }
    loading = entry
    promise.then(
      () => { if (loading === entry) loading = null },
      () => { if (loading === entry) loading = null },
    )
    return promise
  }

  const fresh = (): Promise<Map<string, string>> =>
    snapshot && performance.now() < snapshot.expiresAt ? Promise.resolve(snapshot.values) : load()

  const pick = (values: ReadonlyMap<string, string>, keys: readonly string[]) => {
    const out: Record<string, string> = {}
    for (const key of keys) {
      const value = values.get(key)
      if (value !== undefined) out[key] = value
    }
    return out
  }

  const getMany = async (keys: readonly string[]): Promise<Record<string, string>> => {
    if (keys.length === 0) return {}
    if (ttlMs === 0) {
      // Uncached: only the keys asked for, as a plain reader would.
      const rows = await db.sql<{ key: string; value: string }>`
        select key, value from ${table} where key = any(${keys as string[]}::text[])`
      return Object.fromEntries(rows.map((r) => [r.key, r.value]))
    }
    return pick(await fresh(), keys)
  }

  return {
    table: opts.table,
    ttlMs,
    get: async (key) => (await getMany([key]))[key] ?? null,
    getMany,
    async all() {
      return Object.fromEntries(await (ttlMs === 0 ? load() : fresh()))
    },
    peek() {
      if (!snapshot || performance.now() >= snapshot.expiresAt) void load().catch(() => {})
      return snapshot?.values ?? null
    },
    invalidate() {
      generation++
      if (snapshot) snapshot.expiresAt = 0
    },
  }
}

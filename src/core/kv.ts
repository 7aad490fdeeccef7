// Temporary store with optional TTL, in PostgreSQL so every process on the database sees the same values.
import type { Db } from './db'

export interface Kv {
  get<T = unknown>(key: string): Promise<T | null>
  /** ttlS null keeps the value until it is deleted. */
  set(key: string, value: unknown, ttlS?: number | null): Promise<void>
  /** Sets only when the key is absent or expired; true when this call set it (device locks). */
  setIfAbsent(key: string, value: unknown, ttlS: number): Promise<boolean>
  delete(key: string): Promise<void>
  deletePrefix(prefix: string): Promise<void>
  /** Removes expired rows; the schedule calls it. */
  sweep(): Promise<number>
}

const expiry = (ttlS: number | null | undefined) => (ttlS == null ? null : new Date(Date.now() + ttlS * 1000).toISOString())

export function createKv(db: Db): Kv {
  return {
    async get<T>(key: string) {
      const [row] = await db.sql<{ value: T }>`
        select value from core.kv where key = ${key} and (expires_at is null or expires_at > now())`
      return row ? row.value : null
    },
    async set(key, value, ttlS = null) {
      await db.sql`
        insert into core.kv (key, value, expires_at) values (${key}, ${{ v: value }}::jsonb -> 'v', ${expiry(ttlS)})
        on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at`
    },
    async setIfAbsent(key, value, ttlS) {
      const rows = await db.sql`
        insert into core.kv (key, value, expires_at) values (${key}, ${{ v: value }}::jsonb -> 'v', ${expiry(ttlS)})
        on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at
          where core.kv.expires_at is not null and core.kv.expires_at <= now()
        returning key`
      return rows.length === 1
    },
    async delete(key) {
      await db.sql`delete from core.kv where key = ${key}`
    },
    async deletePrefix(prefix) {
      await db.sql`delete from core.kv where starts_with(key, ${prefix})`
    },
    async sweep() {
      const rows = await db.sql`delete from core.kv where expires_at <= now() returning key`
      return rows.length
    },
  }
}

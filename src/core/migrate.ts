// Applies the core's sql/ files, then each plugin's sql/ files, each once, in order, in its own transaction,
// recorded in core.migrations. An advisory lock keeps several processes starting together from racing.
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Db } from './db'

export interface MigrationSource {
  /** Recorded as `${owner}/${file}`: `core` for sql/, the plugin name for plugins/<name>/sql. */
  owner: string
  dir: string
}

export class MigrationError extends Error {
  constructor(readonly file: string, cause: unknown) {
    super(`migration ${file} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
  }
}

const LOCK_KEY = 727274 // arbitrary, constant: the advisory lock all processes take around a migration

export async function migrate(db: Db, sources: MigrationSource[]): Promise<string[]> {
  await db.transaction(async (tx) => {
    await tx.sql`select pg_advisory_xact_lock(${LOCK_KEY})`
    await tx.exec(`
      create schema if not exists core;
      create table if not exists core.migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      );`)
  })
  const applied: string[] = []
  for (const { owner, dir } of sources) {
    if (!existsSync(dir)) continue
    const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort()
    for (const file of files) {
      const name = `${owner}/${file}`
      const text = readFileSync(join(dir, file), 'utf8')
      try {
        const ran = await db.transaction(async (tx) => {
          await tx.sql`select pg_advisory_xact_lock(${LOCK_KEY})`
          const [done] = await tx.sql`select 1 from core.migrations where name = ${name}`
          if (done) return false
          await tx.exec(text)
          await tx.sql`insert into core.migrations (name) values (${name})`
          return true
        })
        if (ran) applied.push(name)
      } catch (err) {
        throw new MigrationError(name, err)
      }
    }
  }
  return applied
}

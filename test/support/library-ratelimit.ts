// The RateLimiter interface (src/core/ratelimit.ts) over rate-limiter-flexible's RateLimiterPostgres, for the
// comparison in test/ratelimit-compare.test.ts and scripts/bench/ratelimit-compare.ts.
// The library's hooks: `storeClient` with a `storeType` other than pool/knex/sequelize/typeorm is used as it is, and
// every statement goes through `storeClient.query({ text, values, name })`, read back as `{ rows, rowCount }`
// (lib/RateLimiterPostgres.js: _getConnection, _query, _get, _delete). `libraryStoreClient` answers that call with
// the project's Db (src/core/db.ts): the `$n` text is cut into a template at its placeholders, so Db.sql numbers the
// parameters again, and the library runs unchanged on PGlite and on PostgreSQL. The statement `name` (a prepared
// statement for node-postgres) is dropped: Bun's client prepares statements itself and PGlite has one connection.
// What the library counts is a fixed window per key (points reset `duration` after the window's first hit), one
// upsert per hit, refused hits included; its Retry-After is the time to the window's end (msBeforeNext).
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible'
import { ROOT_DIR } from '../../src/app'
import { openDb, type Db } from '../../src/core/db'
import { migrate } from '../../src/core/migrate'
import { refuseOver, type RateDecision, type RateLimiter, type RateRule } from '../../src/core/ratelimit'
import { freshServerDatabase, openCoreDb, type DatabaseTarget } from './app'

/** Where the library keeps its rows: its own table, created by its own `CREATE TABLE IF NOT EXISTS`. */
export const LIBRARY_TABLE = { schemaName: 'public', tableName: 'rate_limiter_flexible' }

interface LibraryQuery {
  text: string
  values?: unknown[]
}

/** node-postgres's `client.query({ text, values })` as the library calls it, answered by Db.sql. */
export function libraryStoreClient(db: Db) {
  return {
    async query({ text, values = [] }: LibraryQuery) {
      const strings: string[] = []
      const params: unknown[] = []
      let from = 0
      for (const m of text.matchAll(/\$(\d+)/g)) {
        strings.push(text.slice(from, m.index))
        params.push(values[Number(m[1]) - 1])
        from = m.index + m[0].length
      }
      strings.push(text.slice(from))
      const rows = await db.sql(Object.assign(strings, { raw: strings }) as unknown as TemplateStringsArray, ...params)
      return { rows, rowCount: rows.length }
    },
  }
}

/** Creates the library's table through its own start-up path (the constructor's callback). */
export function createLibraryTable(db: Db): Promise<void> {
  return new Promise((resolve, reject) => {
    new RateLimiterPostgres(
      { storeClient: libraryStoreClient(db), storeType: 'client', ...LIBRARY_TABLE, points: 1, duration: 1, clearExpiredByTimeout: false },
      (err?: unknown) => (err ? reject(err) : resolve()),
    )
  })
}

/** A RateLimiter over rate-limiter-flexible: one RateLimiterPostgres per rule (points = limit, duration = window). */
export function createLibraryRateLimiter(db: Db): RateLimiter {
  const store = libraryStoreClient(db)
  const byRule = new Map<string, RateLimiterPostgres>()
  const limiterOf = (rule: RateRule) => {
    let limiter = byRule.get(rule.name)
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: store, storeType: 'client', ...LIBRARY_TABLE, tableCreated: true, clearExpiredByTimeout: false,
        keyPrefix: rule.name, points: rule.limit, duration: rule.windowS,
      })
      byRule.set(rule.name, limiter)
    }
    return limiter
  }
  const limiter: RateLimiter = {
    heldKeys: () => 0, // every hit is a row in the library's table: nothing held in memory
    async hit(rule, subject): Promise<RateDecision> {
      try {
        const res = await limiterOf(rule).consume(subject)
        return { allowed: true, remaining: res.remainingPoints, retryAfterS: 0 }
      } catch (err) {
        // Over the limit the library rejects with its result, not an Error.
        if (!(err instanceof RateLimiterRes)) throw err
        return { allowed: false, remaining: 0, retryAfterS: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) }
      }
    },
    async consume(rule, subject) {
      refuseOver(rule, await limiter.hit(rule, subject))
    },
    consumeNow: (rule, subject) => limiter.consume(rule, subject), // every hit is a database round trip
    async reset(rule, subject) {
      await limiterOf(rule).delete(subject)
    },
    async sweep() {
      const [row] = await db.sql<{ n: number }>`
        select count(*)::int as n from public.rate_limiter_flexible where expire < ${Date.now()}`
      const first = byRule.values().next().value ?? new RateLimiterPostgres({
        storeClient: store, storeType: 'client', ...LIBRARY_TABLE, tableCreated: true, clearExpiredByTimeout: false, points: 1, duration: 1,
      })
      await (first as unknown as { clearExpired(expire: number): Promise<void> }).clearExpired(Date.now())
      return row?.n ?? 0
    },
    // Every hit is written when it is made: nothing is held.
    flush: async () => {},
    close: async () => {},
    bind: (tx) => createLibraryRateLimiter(tx),
  }
  return limiter
}

/**
 * Two handles on one migrated database, as two processes have: two connection pools on a PostgreSQL server; PGlite
 * has one connection, so both are the same handle there.
 */
export async function openSharedDatabase(target: DatabaseTarget): Promise<{ first: Db; second: Db; close(): Promise<void> }> {
  if (target === 'pglite') {
    const { db, close } = await openCoreDb(target)
    return { first: db, second: db, close }
  }
  const server = await freshServerDatabase()
  const first = await openDb({ url: server.url, dataDir: tmpdir(), poolSize: 4 })
  await migrate(first, [{ owner: 'core', dir: join(ROOT_DIR, 'sql') }])
  const second = await openDb({ url: server.url, dataDir: tmpdir(), poolSize: 4 })
  return {
    first,
    second,
    async close() {
      await Promise.all([first.close(), second.close()])
      await server.drop()
    },
  }
}

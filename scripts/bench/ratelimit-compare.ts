// Rate limiters side by side (src/core/ratelimit.ts in both modes, and rate-limiter-flexible's RateLimiterPostgres
// through test/support/library-ratelimit.ts), on in-memory PGlite and on PostgreSQL when BENCH_DATABASE_URL answers.
// 1. Hits: CONCURRENCY hits in flight for DURATION_S, each on one of SUBJECTS keys in turn (a rule of a 60 s window
//    with a limit none reaches): hits/s, p50 and p99 per hit, statements per hit; and batched mode once more with a
//    new key at every hit (its first hit reads the key's counts). They alternate over ROUNDS, so a busier moment of
//    the machine does not favour one.
// 2. Memory: the heap a batched limiter holds for KEYS keys of 20 hits each (the others hold nothing per key).
// 3. The app: GET /api/auth/me signed in, through app.fetch in process, with the API-wide rule strict and batched.
// 4. Install size of the library against the project's own file.
// Settings: CONCURRENCY (16), DURATION_S (5), ROUNDS (2), SUBJECTS (1000), KEYS (10000), APP_S (5).
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { hashPassword } from '../../src/auth/password'
import { boot, ROOT_DIR as APP_ROOT } from '../../src/app'
import { loadConfig } from '../../src/config'
import { openDb, type Db } from '../../src/core/db'
import { createLogger } from '../../src/core/log'
import { migrate } from '../../src/core/migrate'
import { createRateLimiter, type RateLimiter, type RateRule } from '../../src/core/ratelimit'
import { CLINICAL_API_RATE_RULE } from '../../plugins/clinical/envelope'
import { plugins } from '../../plugins'
import { createLibraryRateLimiter, createLibraryTable } from '../../test/support/library-ratelimit'
import { formatMs, freshDataDir, freshServerDatabase, quantile, redact, ROOT_DIR, SERVER_URL, serverAvailable } from './support'

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)
const DURATION_S = Number(process.env.DURATION_S ?? 5)
const ROUNDS = Number(process.env.ROUNDS ?? 2)
const SUBJECTS = Number(process.env.SUBJECTS ?? 1_000)
const KEYS = Number(process.env.KEYS ?? 10_000)
const APP_S = Number(process.env.APP_S ?? 5)
const PASSWORD = 'Correct-horse-battery-9'

type Target = 'pglite' | 'postgres'
interface Variant { name: string; mode: 'strict' | 'batched'; make(db: Db): RateLimiter; newKeys?: boolean }
const variants: Variant[] = [
  { name: 'project strict (sliding log, DB)', mode: 'strict', make: (db) => createRateLimiter(db) },
  { name: 'project batched (memory + 250 ms)', mode: 'batched', make: (db) => createRateLimiter(db) },
  { name: 'project batched, a new key each hit', mode: 'batched', make: (db) => createRateLimiter(db), newKeys: true },
  { name: 'rate-limiter-flexible (DB)', mode: 'strict', make: (db) => createLibraryRateLimiter(db) },
]
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

async function openTarget(target: Target) {
  const server = target === 'postgres' ? await freshServerDatabase('bench_rate') : null
  const db = await openDb({ url: server?.url ?? 'memory://', dataDir: freshDataDir('bench-rate'), poolSize: 10 })
  await migrate(db, [{ owner: 'core', dir: join(APP_ROOT, 'sql') }])
  await createLibraryTable(db)
  return { db, server, close: async () => { await db.close(); await server?.drop() } }
}

/** The Db, counting its statements (those inside transactions too). */
function counting(db: Db, counter: { queries: number }): Db {
  return {
    ...db,
    sql: (strings, ...values) => {
      counter.queries++
      return db.sql(strings, ...values)
    },
    transaction: (fn) => db.transaction((tx) => fn(counting(tx, counter))),
  }
}

interface Figure { hitsPerS: number; p50: number; p99: number; refused: number; queriesPerHit: number }

async function hits(db: Db, variant: Variant): Promise<Figure> {
  const counter = { queries: 0 }
  const limiter = variant.make(counting(db, counter))
  const rule: RateRule = { name: `bench.${crypto.randomUUID().slice(0, 8)}`, limit: 1_000_000_000, windowS: 60, mode: variant.mode }
  let next = 0
  let refused = 0
  const latencies: number[] = []
  const until = performance.now() + DURATION_S * 1000
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) {
      const s = performance.now()
      if (!(await limiter.hit(rule, address(variant.newKeys ? next++ : next++ % SUBJECTS))).allowed) refused++
      latencies.push(performance.now() - s)
    }
  }))
  const elapsedS = (performance.now() - started) / 1000
  await limiter.close()
  return {
    hitsPerS: latencies.length / elapsedS, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99),
    refused, queriesPerHit: counter.queries / latencies.length,
  }
}

/** The heap a batched limiter holds for KEYS keys of 20 hits each; the other two hold nothing per key. */
async function heldMemory(db: Db): Promise<string> {
  const limiter = createRateLimiter(db)
  const rule: RateRule = { name: `bench.mem.${crypto.randomUUID().slice(0, 8)}`, limit: 200, windowS: 60, mode: 'batched' }
  Bun.gc(true)
  const before = process.memoryUsage().heapUsed
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < KEYS; i += 500) await Promise.all(Array.from({ length: Math.min(500, KEYS - i) }, (_, j) => limiter.hit(rule, address(i + j))))
  }
  Bun.gc(true)
  const held = process.memoryUsage().heapUsed - before
  await limiter.close()
  return `batched: ${(held / 1024 / 1024).toFixed(1)} MB of heap for ${KEYS} keys x 20 hits (${(held / KEYS).toFixed(0)} bytes a key); `
    + 'strict and rate-limiter-flexible hold nothing per key'
}

/** GET /api/auth/me signed in, with the API-wide rule in the given mode: req/s, p50, p99. */
async function appFigures(target: Target): Promise<string[]> {
  const lines: string[] = []
  for (const mode of ['strict', 'batched', 'strict', 'batched'] as const) {
    const server = target === 'postgres' ? await freshServerDatabase('bench_rate_app') : null
    const dataDir = freshDataDir('bench-rate-app')
    const config = loadConfig({
      DATA_DIR: dataDir, DATABASE_URL: server?.url ?? 'memory://', TRUST_PROXY: 'true', LOG_LEVEL: 'silent', WORKERS: '0',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123456789', DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1',
    })
    const app = await boot(config, plugins, { log: createLogger('silent') })
    // The rule is read at each request: switching its mode here switches the app's.
    const rule = CLINICAL_API_RATE_RULE as { mode?: 'strict' | 'batched' }
    const shipped = rule.mode
    rule.mode = mode
    try {
      await app.core.db.sql`insert into clinical.users (name, email, password_hash, email_verified)
        values ('Bench', 'bench@example.test', ${await hashPassword(PASSWORD)}, true)`
      const login = await app.fetch(new Request('http://localhost/api/auth/login', {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'mobile' },
        body: JSON.stringify({ email: 'bench@example.test', password: PASSWORD }),
      }))
      const { token } = (await login.json()) as { token: string }
      let i = 0
      const once = async () => {
        // 100 client addresses in turn: each stays under 200 a minute for a 5 s run at up to 4,000 req/s.
        const res = await app.fetch(new Request('http://localhost/api/auth/me', {
          headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address(i++ % 100) },
        }))
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`GET /api/auth/me answered ${res.status}`)
      }
      for (let w = 0; w < 100; w++) await once()
      const latencies: number[] = []
      const until = performance.now() + APP_S * 1000
      const started = performance.now()
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < until) {
          const s = performance.now()
          await once()
          latencies.push(performance.now() - s)
        }
      }))
      const perS = latencies.length / ((performance.now() - started) / 1000)
      lines.push(`API rule ${mode.padEnd(8)} ${perS.toFixed(0).padStart(8)} req/s  p50 ${formatMs(quantile(latencies, 0.5))} ms  p99 ${formatMs(quantile(latencies, 0.99))} ms`)
    } catch (err) {
      lines.push(`API rule ${mode}: ${(err as Error).message} (more than 200 requests a minute per address: lower APP_S)`)
    } finally {
      rule.mode = shipped
      await app.shutdown()
      await server?.drop()
    }
  }
  return lines
}

function treeSize(dir: string): { bytes: number; files: number } {
  let bytes = 0
  let files = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      const sub = treeSize(path)
      bytes += sub.bytes
      files += sub.files
    } else {
      bytes += statSync(path).size
      files++
    }
  }
  return { bytes, files }
}

async function run(target: Target) {
  const { db, close } = await openTarget(target)
  try {
    const results = new Map<string, Figure[]>(variants.map((v) => [v.name, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) results.get(variant.name)!.push(await hits(db, variant))
    }
    console.log(`\n${target}${target === 'postgres' ? ` (${redact(SERVER_URL)})` : ''}: ${CONCURRENCY} hits in flight, ${DURATION_S} s x ${ROUNDS} rounds, ${SUBJECTS} keys in turn`)
    console.log(`${'limiter'.padEnd(36)} ${'hits/s'.padStart(16)} ${'p50 ms'.padStart(13)} ${'p99 ms'.padStart(13)} ${'queries/hit'.padStart(13)}`)
    const each = (fs: Figure[], pick: (f: Figure) => string) => fs.map(pick).join(' / ')
    for (const [name, fs] of results) {
      console.log(`${name.padEnd(36)} ${each(fs, (f) => f.hitsPerS.toFixed(0)).padStart(16)} ${each(fs, (f) => formatMs(f.p50)).padStart(13)} `
        + `${each(fs, (f) => formatMs(f.p99)).padStart(13)} ${each(fs, (f) => f.queriesPerHit.toFixed(3)).padStart(13)}`
        + (fs.some((f) => f.refused > 0) ? `  (refused: ${each(fs, (f) => String(f.refused))})` : ''))
    }
    console.log(`\n${target}: ${await heldMemory(db)}`)
  } finally {
    await close()
  }
  console.log(`\n${target}: GET /api/auth/me signed in, ${CONCURRENCY} in flight, ${APP_S} s, alternating`)
  for (const line of await appFigures(target)) console.log(line)
}

await run('pglite')
if (await serverAvailable()) await run('postgres')
else console.log(`\nPostgreSQL at ${redact(SERVER_URL)} does not answer: skipped`)

const library = treeSize(join(ROOT_DIR, 'node_modules/rate-limiter-flexible'))
const own = ['src/core/ratelimit.ts', 'sql/002_rate_hits.sql', 'sql/007_rate_counts.sql'].map((f) => statSync(join(ROOT_DIR, f)).size)
console.log(`\ninstall size: rate-limiter-flexible ${(library.bytes / 1024).toFixed(0)} KiB in ${library.files} files (no dependencies); `
  + `the project's limiter ${(own.reduce((a, b) => a + b, 0) / 1024).toFixed(1)} KiB in ${own.length} files`)

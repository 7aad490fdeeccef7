// The hand-written job queue (src/core/jobs.ts) against pg-boss behind the same interface
// (test/support/library-jobs.ts), on PGlite and on the PostgreSQL server: enqueue throughput (one job per commit),
// end-to-end jobs/s with WORKERS workers draining JOBS jobs, claim latency (enqueue to handler start on an idle
// queue), takeover after kill -9 of a worker process, resident memory added by the drain, and install size.
//
//   bun scripts/bench/queue-compare.ts
//   JOBS=1000 WORKERS=4 LATENCY_SAMPLES=30 HEARTBEAT_MS=5000 TARGETS=pglite,postgres bun scripts/bench/queue-compare.ts
//
// Each (target, queue) runs in a fresh process, so memory and timers do not carry over. pg-boss runs twice: claiming
// one job per fetch (as the hand-written queue does) and ten. Prints figures only; nothing is asserted.
import { $ } from 'bun'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb, type Db } from '../../src/core/db'
import { DEFAULT_HEARTBEAT_MS } from '../../src/core/jobs'
import { createLogger } from '../../src/core/log'
import { openQueue, statusCounts, type QueueImpl } from '../../test/support/library-jobs'
import { prepareCompare, recordingHandler, spawnQueueWorker, until } from '../../test/support/queue-worker'
import { formatMs, freshServerDatabase, percentile, redact, ROOT_DIR, serverAvailable, SERVER_URL } from './support'

const JOBS = Number(process.env.JOBS ?? 1_000)
const WORKERS = Number(process.env.WORKERS ?? 4)
const LATENCY_SAMPLES = Number(process.env.LATENCY_SAMPLES ?? 30)
const TARGETS = (process.env.TARGETS ?? 'pglite,postgres').split(',')
const POLL_MS = 200
/** The hand-written queue's heartbeat for the takeover (the app's default); pg-boss's is 10 s, its least. */
const HEARTBEAT_MS = Number(process.env.HEARTBEAT_MS ?? DEFAULT_HEARTBEAT_MS)
const log = createLogger('silent')

interface Variant { label: string; impl: QueueImpl; batch: number }
const VARIANTS: Variant[] = [
  { label: 'hand-written', impl: 'hand-written', batch: 1 },
  { label: 'pg-boss, batch 1', impl: 'pg-boss', batch: 1 },
  { label: 'pg-boss, batch 10', impl: 'pg-boss', batch: 10 },
]
interface Figures { enqueuePerS: number; drainPerS: number; claimP50: number; claimP99: number; rssDeltaMb: number }

/** One variant in this process: the figures as one JSON line. */
async function measure(variant: Variant, url: string): Promise<Figures> {
  const db = await openDb({ url, dataDir: tmpdir(), poolSize: 8 })
  await prepareCompare(db)
  const q = await openQueue(variant.impl, db, log, { workers: WORKERS, pollMs: POLL_MS, heartbeatMs: HEARTBEAT_MS, batchSize: variant.batch })
  const kind = 'bench.drain'
  const started = new Map<string, number>()
  q.register(kind, async (ctx) => void started.set(ctx.id, performance.now()))
  await q.registered()
  Bun.gc(true)
  const rss0 = process.memoryUsage.rss()
  const ids: string[] = []
  let t = performance.now()
  for (let n = 0; n < JOBS; n++) ids.push((await q.enqueue(kind, { n }, { service: 'bench' })).id)
  const enqueuePerS = JOBS / ((performance.now() - t) / 1000)
  t = performance.now()
  q.start()
  await until(async () => (await statusCounts(variant.impl, db, ids)).completed === JOBS, 'the drain', 600_000, 50)
  const drainPerS = JOBS / ((performance.now() - t) / 1000)
  const rssDeltaMb = (process.memoryUsage.rss() - rss0) / 2 ** 20
  const latencies: number[] = []
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    await Bun.sleep(Math.random() * 200) // the enqueue lands anywhere in the workers' poll cycle
    const at = performance.now()
    const { id } = await q.enqueue(kind, { i }, { service: 'bench' })
    await until(async () => started.has(id), 'the job started', 30_000, 1)
    latencies.push(started.get(id)! - at)
  }
  latencies.sort((a, b) => a - b)
  await q.stop(1_000)
  await q.close()
  await db.close()
  return { enqueuePerS, drainPerS, claimP50: percentile(latencies, 50), claimP99: percentile(latencies, 99), rssDeltaMb }
}

/** Kills a worker process mid-job; answers ms from the kill until a survivor (this process) completed the job. */
async function takeover(impl: QueueImpl, target: string): Promise<number> {
  const server = target === 'postgres' ? await freshServerDatabase('bench_queue') : null
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-queue-'))
  let db: Db | null = null
  try {
    if (server) {
      db = await openDb({ url: server.url, dataDir, poolSize: 4 })
      await prepareCompare(db)
    }
    const kind = 'bench.crash'
    const doomed = spawnQueueWorker({
      ...(server ? { DATABASE_URL: server.url } : { DATA_DIR: dataDir, QUEUE_PREPARE: '1' }),
      QUEUE_IMPL: impl, QUEUE_KIND: kind, QUEUE_WORKERS: '1', QUEUE_MODE: 'hold', QUEUE_ENQUEUE: '1',
      QUEUE_POLL_MS: String(POLL_MS), QUEUE_HEARTBEAT_MS: String(HEARTBEAT_MS),
    })
    const id = String((await doomed.event('running')).running)
    await doomed.kill9()
    const killed = performance.now()
    db ??= await openDb({ url: null, dataDir, poolSize: 1 })
    const q = await openQueue(impl, db, log, { workers: 1, pollMs: POLL_MS, heartbeatMs: HEARTBEAT_MS })
    q.register(kind, recordingHandler(db, 'survivor'))
    await q.registered()
    q.start()
    await until(async () => (await q.get(id))?.status === 'completed', 'the takeover', 120_000, 20)
    const ms = performance.now() - killed
    await q.stop(500)
    await q.close()
    return ms
  } finally {
    await db?.close()
    await server?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** The bytes on disk of a package and everything it depends on, and how many packages that is. */
async function installSize(name: string): Promise<{ packages: number; mb: number }> {
  const seen = new Set<string>()
  const walk = (pkg: string) => {
    const dir = join(ROOT_DIR, 'node_modules', pkg)
    if (seen.has(pkg) || !existsSync(dir)) return
    seen.add(pkg)
    for (const dep of Object.keys(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies ?? {})) walk(dep)
  }
  walk(name)
  const total = (await $`du -scb ${[...seen].map((p) => join(ROOT_DIR, 'node_modules', p))}`.text()).trim().split('\n').at(-1)!
  return { packages: seen.size, mb: Number.parseInt(total, 10) / 1e6 }
}
const lines = (...files: string[]) => files.reduce((n, f) => n + readFileSync(join(ROOT_DIR, f), 'utf8').split('\n').length, 0)

if (process.argv[2] === '--variant') {
  const figures = await measure(VARIANTS.find((v) => v.label === process.argv[3])!, process.argv[4]!)
  console.log(JSON.stringify(figures))
  process.exit(0)
}

const targets = TARGETS.filter((t) => t === 'pglite' || t === 'postgres')
if (targets.includes('postgres') && !(await serverAvailable())) targets.splice(targets.indexOf('postgres'), 1)
console.log(`queue comparison: ${JOBS} jobs, ${WORKERS} workers, ${LATENCY_SAMPLES} latency samples; server ${redact(SERVER_URL)}; targets ${targets.join(', ')}\n`)
console.log('| target | queue | enqueue jobs/s | drain jobs/s | claim p50 ms | claim p99 ms | RSS delta MB | takeover after kill -9 s |')
console.log('|---|---|---:|---:|---:|---:|---:|---:|')
for (const target of targets) {
  const takeovers = new Map<QueueImpl, number>()
  for (const variant of VARIANTS) {
    const server = target === 'postgres' ? await freshServerDatabase('bench_queue') : null
    try {
      const out = await $`${process.execPath} ${import.meta.path} --variant ${variant.label} ${server?.url ?? 'memory://'}`.text()
      const f = JSON.parse(out.trim().split('\n').at(-1)!) as Figures
      if (!takeovers.has(variant.impl)) takeovers.set(variant.impl, await takeover(variant.impl, target))
      console.log(`| ${target} | ${variant.label} | ${Math.round(f.enqueuePerS)} | ${Math.round(f.drainPerS)} | ${formatMs(f.claimP50)} | ${formatMs(f.claimP99)} | ${f.rssDeltaMb.toFixed(1)} | ${(takeovers.get(variant.impl)! / 1000).toFixed(1)} |`)
    } finally {
      await server?.drop()
    }
  }
}
const boss = await installSize('pg-boss')
console.log(`\nsize: hand-written ${lines('src/core/jobs.ts')} lines in src/core/jobs.ts + ${lines('sql/001_core.sql', 'sql/003_job_workers.sql')} lines of SQL (two files, with the kv and rate-limit tables), no dependency;`)
console.log(`      pg-boss ${boss.packages} packages, ${boss.mb.toFixed(1)} MB in node_modules, + ${lines('test/support/library-jobs.ts', 'test/support/pgboss-db.ts')} lines of adapter and mapping (test/support/library-jobs.ts, pgboss-db.ts)`)

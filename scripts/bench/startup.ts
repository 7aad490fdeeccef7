// Start-up time and idle memory of the server (`bun src/main.ts`):
//   - fresh: a new empty DATA_DIR (PGlite runs initdb, migrations run), ms from spawn to the first 200 of
//     GET /api/health;
//   - existing: the same again on the now-initialised DATA_DIR;
//   - idle RSS: VmRSS of the server process after IDLE_S seconds without requests (after each start), and of it the
//     anonymous memory (heaps, PGlite's WebAssembly memory; the rest is mapped files, mostly the bun binary);
//   - PGlite at rest: a third start on the existing DATA_DIR with PGLITE_SUSPEND_AFTER_S=REST_S: VmRSS once the
//     embedded database has closed (its log line), and the time of the first request after it (GET /api/health,
//     which opens the database again).
// Each is repeated REPEAT times (median printed), on the embedded PGlite and, when the PostgreSQL server of
// BENCH_DATABASE_URL answers, with DATABASE_URL pointing at a fresh database of it.
//
//   bun scripts/bench/startup.ts            (REPEAT=3 IDLE_S=5 REST_S=5)
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freshDataDir, freshServerDatabase, median, redact, rssMb, SERVER_URL, serverAvailable, spawnServer } from './support'

const REPEAT = Number(process.env.REPEAT ?? 3)
const IDLE_MS = Number(process.env.IDLE_S ?? 5) * 1000
const REST_S = Number(process.env.REST_S ?? 5)

interface Sample {
  freshMs: number
  freshRssMb: number
  existingMs: number
  existingRssMb: number
  existingAnonMb: number
  /** PGlite only: at rest, and the first request after it. */
  restedRssMb?: number
  restedAnonMb?: number
  wakeMs?: number
}

/** Anonymous resident memory of a process in MB (smaps_rollup). */
const anonMb = (pid: number) => Number(/^Anonymous:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? NaN) / 1024

async function startOnce(env: Record<string, string>): Promise<{ ms: number; rss: number; anon: number }> {
  const server = await spawnServer({ cmd: [process.execPath, 'src/main.ts'], env, readyPath: '/api/health' })
  try {
    await Bun.sleep(IDLE_MS)
    return { ms: server.readyMs, rss: rssMb(server.proc.pid), anon: anonMb(server.proc.pid) }
  } finally {
    await server.stop()
  }
}

/** A start on existing data whose database rests after REST_S: memory at rest, then the request that opens it. */
async function restOnce(env: Record<string, string>): Promise<{ rss: number; anon: number; wakeMs: number }> {
  const server = await spawnServer({
    cmd: [process.execPath, 'src/main.ts'], env: { ...env, LOG_LEVEL: 'info', PGLITE_SUSPEND_AFTER_S: String(REST_S) }, readyPath: '/api/health',
  })
  try {
    const log = join(tmpdir(), `bench-server-${server.port}.log`)
    const deadline = performance.now() + REST_S * 1000 + 60_000
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('"event":"suspended"'))) {
      if (performance.now() > deadline) throw new Error(`the database did not rest within ${REST_S + 60} s; log: ${log}`)
      await Bun.sleep(250)
    }
    await Bun.sleep(1000)
    const rss = rssMb(server.proc.pid)
    const anon = anonMb(server.proc.pid)
    const started = performance.now()
    const res = await fetch(`http://127.0.0.1:${server.port}/api/health`)
    if (res.status !== 200) throw new Error(`GET /api/health after the rest answered ${res.status}`)
    return { rss, anon, wakeMs: performance.now() - started }
  } finally {
    await server.stop()
  }
}

async function sample(database: 'pglite' | 'postgres'): Promise<Sample> {
  const dataDir = freshDataDir('bench-startup')
  const db = database === 'postgres' ? await freshServerDatabase('bench_startup') : null
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) }
  try {
    const fresh = await startOnce(env)
    const existing = await startOnce(env)
    const rested = database === 'pglite' ? await restOnce(env) : null
    return {
      freshMs: fresh.ms, freshRssMb: fresh.rss, existingMs: existing.ms, existingRssMb: existing.rss, existingAnonMb: existing.anon,
      restedRssMb: rested?.rss, restedAnonMb: rested?.anon, wakeMs: rested?.wakeMs,
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    await db?.drop()
  }
}

async function main() {
  const targets: Array<'pglite' | 'postgres'> = ['pglite']
  if (await serverAvailable()) targets.push('postgres')
  else console.log(`(no PostgreSQL server answers at ${redact(SERVER_URL)}: PGlite only)`)
  console.log(`start-up: bun ${Bun.version}, ${REPEAT} runs each, idle ${IDLE_MS / 1000} s before reading VmRSS\n`)

  const rows: string[][] = []
  for (const target of targets) {
    const samples: Sample[] = []
    for (let i = 0; i < REPEAT; i++) samples.push(await sample(target))
    const col = (pick: (s: Sample) => number | undefined, digits: number) => samples.some((s) => pick(s) === undefined)
      ? '-'
      : `${median(samples.map((s) => pick(s)!)).toFixed(digits)}  [${samples.map((s) => pick(s)!.toFixed(digits)).join(', ')}]`
    rows.push([
      target === 'pglite' ? 'PGlite (DATA_DIR)' : 'PostgreSQL (DATABASE_URL)',
      col((s) => s.freshMs, 0),
      col((s) => s.existingMs, 0),
      col((s) => s.freshRssMb, 0),
      col((s) => s.existingRssMb, 0),
      col((s) => s.existingAnonMb, 0),
      col((s) => s.restedRssMb, 0),
      col((s) => s.restedAnonMb, 0),
      col((s) => s.wakeMs, 0),
    ])
  }
  const header = [
    'database', 'fresh start ms', 'existing start ms', 'idle RSS MB (fresh)', 'idle RSS MB (existing)', 'of it anonymous MB',
    'at rest RSS MB', 'of it anonymous MB', 'first request after rest ms',
  ]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')
  console.log(line(header))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const r of rows) console.log(line(r))
  console.log('\nmedian [each run]; start = spawn of `bun src/main.ts` to the first 200 of GET /api/health')
  console.log(`at rest: PGLITE_SUSPEND_AFTER_S=${REST_S}, read 1 s after the database closed (existing data)`)
}

await main()

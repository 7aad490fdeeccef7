// Start-up time and idle memory of the server (`bun src/main.ts`):
//   - fresh: a new empty DATA_DIR (PGlite runs initdb, migrations run), ms from spawn to the first 200 of
//     GET /api/health;
//   - existing: the same again on the now-initialised DATA_DIR;
//   - idle RSS: VmRSS of the server process after IDLE_S seconds without requests (after each start), and of it the
//     anonymous memory (heaps, PGlite's WebAssembly memory; the rest is mapped files, mostly the bun binary).
// Each is repeated REPEAT times (median printed), on the embedded PGlite and, when the PostgreSQL server of
// BENCH_DATABASE_URL answers, with DATABASE_URL pointing at a fresh database of it.
//
//   bun scripts/bench/startup.ts            (REPEAT=3 IDLE_S=5)
import { readFileSync, rmSync } from 'node:fs'
import { freshDataDir, freshServerDatabase, median, redact, rssMb, SERVER_URL, serverAvailable, spawnServer } from './support'

const REPEAT = Number(process.env.REPEAT ?? 3)
const IDLE_MS = Number(process.env.IDLE_S ?? 5) * 1000

interface Sample {
  freshMs: number
  freshRssMb: number
  existingMs: number
  existingRssMb: number
  existingAnonMb: number
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

async function sample(database: 'pglite' | 'postgres'): Promise<Sample> {
  const dataDir = freshDataDir('bench-startup')
  const db = database === 'postgres' ? await freshServerDatabase('bench_startup') : null
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) }
  try {
    const fresh = await startOnce(env)
    const existing = await startOnce(env)
    return { freshMs: fresh.ms, freshRssMb: fresh.rss, existingMs: existing.ms, existingRssMb: existing.rss, existingAnonMb: existing.anon }
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
    const col = (pick: (s: Sample) => number, digits: number) =>
      `${median(samples.map(pick)).toFixed(digits)}  [${samples.map((s) => pick(s).toFixed(digits)).join(', ')}]`
    rows.push([
      target === 'pglite' ? 'PGlite (DATA_DIR)' : 'PostgreSQL (DATABASE_URL)',
      col((s) => s.freshMs, 0),
      col((s) => s.existingMs, 0),
      col((s) => s.freshRssMb, 0),
      col((s) => s.existingRssMb, 0),
      col((s) => s.existingAnonMb, 0),
    ])
  }
  const header = ['database', 'fresh start ms', 'existing start ms', 'idle RSS MB (fresh)', 'idle RSS MB (existing)', 'of it anonymous MB']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')
  console.log(line(header))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const r of rows) console.log(line(r))
  console.log('\nmedian [each run]; start = spawn of `bun src/main.ts` to the first 200 of GET /api/health')
}

await main()

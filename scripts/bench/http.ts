// Requests per second of the hot authenticated reads on one core, the app against a bare Bun.serve doing the same
// database work with the same driver (scripts/bench/bare-server.ts):
// - quiz me: GET {quiz}/api/auth/me with the quiz Bearer token;
// - clinical me: GET /api/auth/me with a clinical (mobile) Bearer token; each request comes from another client
//   address (X-Forwarded-For, TRUST_PROXY=1), so the API rate rule of 200 per minute per address refuses none; the
//   app does that rule's work, the bare server does not;
// - bank list: GET {quiz}/api/questions/bank, the default first page (50 of BANK_QUESTIONS seeded questions, with
//   categories, source quizzes and tags).
// The server under test runs pinned to CPU SERVER_CPU (`taskset -c 0`), the load generator to LOAD_CPU (`taskset
// -c 1`); the PostgreSQL server, when used, is not pinned. Paired slices (SLICES, 8 by default): every server is
// started once (all pinned to SERVER_CPU, each idle while another is measured; on PGlite each on a copy of the seeded
// DATA_DIR) and warmed up; then each slice has every server answer each read for SLICE_S seconds, in a rotating
// order. A slow spell of a shared VM (the same server's figure moves by a factor of two from one minute to the next
// on some) then falls on the servers alike: `paired`, the median over the slices of the app's req/s over the bare
// server's in the same slice, is the figure to read (1.00 = no framework cost). SLICES=0 measures in rounds instead,
// as this script did first: ROUNDS rounds start each server once, in a rotating order, for DURATION_S a read (a slow
// spell then falls on one server's round). The table has the medians over the slices (rounds) and the spread (min
// to max) of req/s, their ratio (app / bare), and the CPU time per request of the server process and of the
// PostgreSQL server (from /proc, over the measured load).
//
//   bun scripts/bench/http.ts   (SLICES=8 SLICE_S=3 WARMUP_S=3 CONNECTIONS=50 LOADGEN=wrk|autocannon
//                                READS=quiz-me,bank,clinical-me SERVERS=app,app-warn,bare,bare-rule,elysia TARGETS=pglite,postgres
//                                (bare-rule: the bare server with the clinical API rate rule, opt-in;
//                                elysia: the bare server's handlers routed by a bare Elysia app, opt-in)
//                                APP_OTHERS=before=<another checkout>,...: adds each one's app, LOG_LEVEL=info
//                                PROFILE_DIR=<dir>: every server writes a CPU profile per start there, bun --cpu-prof-md
//                                SLICES=0 ROUNDS=3 DURATION_S=10: rounds instead of paired slices)
//
// Runs on the embedded PGlite (a fresh DATA_DIR) and, when the PostgreSQL server of BENCH_DATABASE_URL answers, on
// a fresh database of it. The app runs at its default LOG_LEVEL=info (the request log line is part of the product)
// and with LOG_LEVEL=warn (no line per request, like the bare server).
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDb } from '../../src/core/db'
import {
  appOthers, cpuMs, envList as list, freshDataDir, freshServerDatabase, mainThreadCpuMs, median, redact, ROOT_DIR, seedBank, SERVER_URL, serverAvailable, spawnServer, type Spawned,
} from './support'

const DURATION_S = Number(process.env.DURATION_S ?? 10)
const WARMUP_S = Number(process.env.WARMUP_S ?? 3)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
/** Paired slices (see the top of this file; 0: rounds instead): how many, and each server's seconds on a read in each. */
const SLICES = Number(process.env.SLICES ?? 8)
const SLICE_S = Number(process.env.SLICE_S ?? 3)
const BANK_QUESTIONS = Number(process.env.BANK_QUESTIONS ?? 500)
const SERVER_CPU = process.env.SERVER_CPU ?? '0'
const LOAD_CPU = process.env.LOAD_CPU ?? '1'
/**
 * Where the embedded database's thread runs (PGlite on a thread of its own, src/core/db-pglite-worker.ts): on the
 * server's CPU by default, so the whole server holds one core; `DB_THREAD_CPU=0,1` leaves it free to run on either,
 * as the PostgreSQL server is (the comparison of the two databases, each with a core of its own).
 */
const DB_THREAD_CPU = process.env.DB_THREAD_CPU ?? null
/** Other checkouts' apps to measure in the same run (`name=dir`, comma-separated): the code before a change, say. */
const APP_OTHERS = appOthers()
/** Where each server writes a CPU profile of each run (bun --cpu-prof-md: one markdown file per server start), if set. */
const PROFILE_DIR = process.env.PROFILE_DIR ?? null
const PROFILE_FLAGS = PROFILE_DIR ? ['--cpu-prof-md', `--cpu-prof-dir=${PROFILE_DIR}`] : []
/** The command that starts a server from its script: this Bun, profiling it when PROFILE_DIR is set. */
const bunRunning = (script: string) => [process.execPath, ...PROFILE_FLAGS, script]
const JWT_SECRET = `bench-${crypto.randomUUID()}-${crypto.randomUUID()}`

type LoadGen = 'wrk' | 'autocannon'
const LOADGEN: LoadGen = (process.env.LOADGEN as LoadGen | undefined) ?? (Bun.which('wrk') ? 'wrk' : 'autocannon')

interface Read { key: string; label: string; path: string; token: 'quiz' | 'clinical'; rotateAddress?: boolean }
// The clinical read goes last: its rate rule writes a row per request, and on PGlite (in the server's process) the
// database's own work after those writes would otherwise be measured in the next read.
const READS = ([
  { key: 'quiz-me', label: 'quiz GET /quiz/api/auth/me', path: '/quiz/api/auth/me', token: 'quiz' },
  { key: 'bank', label: 'quiz GET /quiz/api/questions/bank', path: '/quiz/api/questions/bank', token: 'quiz' },
  { key: 'clinical-me', label: 'clinical GET /api/auth/me', path: '/api/auth/me', token: 'clinical', rotateAddress: true },
] satisfies Read[] as Read[]).filter((r) => list('READS', 'quiz-me,clinical-me,bank').includes(r.key))

interface ServerKind { key: string; label: string; cmd: string[]; logLevel?: string; env?: Record<string, string> }
/** The bare server with the clinical API rate rule's work (the app's own limiter): the app / bare+rule column. */
const BARE_RULE_LABEL = 'bare Bun.serve + API rule'
const SERVERS = ([
  { key: 'app', label: 'app (LOG_LEVEL=info)', cmd: bunRunning('src/main.ts'), logLevel: 'info' },
  { key: 'app-warn', label: 'app (LOG_LEVEL=warn)', cmd: bunRunning('src/main.ts'), logLevel: 'warn' },
  ...APP_OTHERS.map(({ name, dir }) => ({ key: `other:${name}`, label: `app ${name} (LOG_LEVEL=info)`, cmd: bunRunning(join(dir, 'src/main.ts')), logLevel: 'info' })),
  { key: 'bare', label: 'bare Bun.serve', cmd: bunRunning('scripts/bench/bare-server.ts') },
  { key: 'bare-rule', label: BARE_RULE_LABEL, cmd: bunRunning('scripts/bench/bare-server.ts'), env: { BARE_RATE_RULE: '1' } },
  { key: 'elysia', label: 'bare Elysia (no hooks)', cmd: bunRunning('scripts/bench/bare-server.ts'), env: { BARE_FRAMEWORK: 'elysia' } },
] satisfies ServerKind[] as ServerKind[]).filter((s) => s.key === 'bare' || s.key.startsWith('other:') || list('SERVERS', 'app,app-warn,bare').includes(s.key))

interface LoadResult { rps: number; p50Ms: number; p99Ms: number; non2xx: number; requests: number }

/** The PostgreSQL server's processes (all of them: the backends serving the app and their helpers). */
const postgresPids = () =>
  readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres'
    } catch {
      return false
    }
  })

async function run(cmd: string[], env: Record<string, string> = {}): Promise<string> {
  const proc = Bun.spawn(['taskset', '-c', LOAD_CPU, ...cmd], { cwd: ROOT_DIR, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...env } })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd[0]} exited with ${code}: ${err}`)
  return out
}

const WRK_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 }
function wrkMs(out: string, percentile: string): number {
  const m = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out)
  return m ? Number(m[1]) * WRK_UNITS[m[2]!]! : NaN
}

// wrk: the next client address of the benchmarking range 198.18.0.0/15 (131,072 of them) with each request, so an
// address comes back every few seconds at most: far under the clinical API rule's 200 per minute. A load goes on
// from where the server's last one stopped (ROTATE_FROM), so short slices spread over the range as one long load.
const SCRIPT_DIR = freshDataDir('bench-http-wrk')
const ROTATE_SCRIPT = join(SCRIPT_DIR, 'rotate.lua')
const ADDRESSES = 131_072
writeFileSync(ROTATE_SCRIPT, `local n = tonumber(os.getenv("ROTATE_FROM") or "0")
request = function()
  n = (n + 1) % 131072
  wrk.headers["X-Forwarded-For"] = string.format("198.%d.%d.%d", 18 + math.floor(n / 65536), math.floor(n / 256) % 256, n % 256)
  return wrk.format()
end
`)

/** The requests each server was sent so far: where its next rotating load starts in the address range. */
const sent = new Map<string, number>()

async function load(url: string, read: Read, token: string, seconds: number): Promise<LoadResult> {
  const auth = `Bearer ${token}`
  if (LOADGEN === 'wrk') {
    const script = read.rotateAddress ? ['-s', ROTATE_SCRIPT] : []
    const origin = new URL(url).origin
    const out = await run(['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...script, '-H', `Authorization: ${auth}`, url],
      { ROTATE_FROM: String((sent.get(origin) ?? 0) % ADDRESSES) })
    const requests = Number(/^\s*(\d+) requests in/m.exec(out)?.[1] ?? NaN)
    sent.set(origin, (sent.get(origin) ?? 0) + (requests || 0))
    return {
      requests,
      rps: Number(/^Requests\/sec:\s+([\d.]+)/m.exec(out)?.[1] ?? NaN),
      p50Ms: wrkMs(out, '50'),
      p99Ms: wrkMs(out, '99'),
      non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    }
  }
  if (read.rotateAddress) throw new Error('the clinical read needs wrk (a client address per request): apt-get install wrk, or READS without clinical-me')
  const out = await run([
    'node', join(ROOT_DIR, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(CONNECTIONS), '-d', String(seconds),
    '-H', `Authorization=${auth}`, url,
  ])
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number }
  return { rps: r.requests.average, p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx, requests: r.requests.total }
}

const post = async (server: Spawned, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  })
  const json = (await res.json()) as Record<string, unknown>
  if (res.status !== 200) throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** Moves a process's threads of that name (Bun names a Worker's thread `Worker`) to other CPUs. */
async function pinThreads(pid: number, name: string, cpus: string) {
  const tasks = readdirSync(`/proc/${pid}/task`).filter((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === name)
  if (tasks.length === 0) throw new Error(`no thread named ${name} in process ${pid}`)
  for (const tid of tasks) await Bun.spawn(['taskset', '-p', '-c', cpus, tid], { stdout: 'ignore' }).exited
}

interface Measured {
  round: number; database: string; server: string; read: string; result: LoadResult
  /** CPU per request, µs: the server process's, and the PostgreSQL server's (null on PGlite: it is in the server's). */
  serverUs: number; databaseUs: number | null
  /** Of serverUs, the main thread's; the rest is the collector's, the JIT's and (PGlite) the database thread's. */
  mainUs: number
}

async function target(database: 'pglite' | 'postgres', out: Measured[]) {
  const dataDir = freshDataDir('bench-http')
  const pg = database === 'postgres' ? await freshServerDatabase('bench_http') : null
  const env = { DATA_DIR: dataDir, JWT_SECRET, DATABASE_URL: pg?.url ?? '', TRUST_PROXY: '1' }
  const label = database === 'pglite' ? 'PGlite' : 'PostgreSQL'
  // PGlite is one process's database: every server runs alone on the DATA_DIR, and so does the seed.
  const start = async (kind: ServerKind, over: Record<string, string> = {}) => {
    const spawned = await spawnServer({
      cmd: kind.cmd, env: { ...env, ...kind.env, ...(kind.logLevel ? { LOG_LEVEL: kind.logLevel } : {}), ...over }, readyPath: '/api/health', pin: SERVER_CPU,
    })
    if (DB_THREAD_CPU && database === 'pglite') await pinThreads(spawned.proc.pid, 'Worker', DB_THREAD_CPU)
    return spawned
  }
  try {
    const tokens: Record<Read['token'], string> = { quiz: '', clinical: '' }
    const setup = await start(SERVERS.find((s) => s.cmd.at(-1)!.endsWith('src/main.ts'))!)
    try {
      const account = { email: 'bench@example.test', password: 'bench-password-1', name: 'Bench' }
      tokens.quiz = String((await post(setup, '/quiz/api/auth/register', account)).access_token)
      tokens.clinical = String((await post(setup, '/api/auth/register', account, { 'x-client': 'mobile' })).token)
    } finally {
      await setup.stop()
    }
    const db = await openDb({ url: pg?.url ?? null, dataDir, poolSize: 1 })
    try {
      await seedBank(db, BANK_QUESTIONS)
    } finally {
      await db.close()
    }

    const bodies = new Map<string, string>()
    /** Checks that the server answers the read as every other server does, and warms it up. */
    const prepare = async (server: Spawned, kind: ServerKind, read: Read) => {
      const url = `http://127.0.0.1:${server.port}${read.path}`
      const check = await fetch(url, { headers: { authorization: `Bearer ${tokens[read.token]}`, 'x-forwarded-for': '198.19.255.255' } })
      const body = await check.text()
      if (check.status !== 200) throw new Error(`${kind.label}: GET ${read.path} answered ${check.status}: ${body}`)
      // Every server answers the same JSON (key order aside), so they do the same work.
      const first = bodies.get(read.key)
      if (first === undefined) bodies.set(read.key, body)
      else if (!Bun.deepEquals(JSON.parse(first), JSON.parse(body))) {
        throw new Error(`${kind.label}: GET ${read.path} answered another body:\n${body.slice(0, 600)}\nthan\n${first.slice(0, 600)}`)
      }
      if (WARMUP_S > 0) await load(url, read, tokens[read.token], WARMUP_S)
    }
    const measure = async (server: Spawned, kind: ServerKind, read: Read, round: number, seconds: number) => {
      const dbPids = database === 'postgres' ? postgresPids() : []
      const before = { server: cpuMs([server.proc.pid]), main: mainThreadCpuMs(server.proc.pid), database: cpuMs(dbPids) }
      const result = await load(`http://127.0.0.1:${server.port}${read.path}`, read, tokens[read.token], seconds)
      const perRequest = (ms: number) => (ms * 1000) / result.requests
      const measured: Measured = {
        round, database: label, server: kind.label, read: read.label, result,
        serverUs: perRequest(cpuMs([server.proc.pid]) - before.server),
        mainUs: perRequest(mainThreadCpuMs(server.proc.pid) - before.main),
        databaseUs: database === 'postgres' ? perRequest(cpuMs(dbPids) - before.database) : null,
      }
      out.push(measured)
      console.log(`${SLICES > 0 ? 'slice' : 'round'} ${round}  ${label.padEnd(10)}  ${kind.label.padEnd(28)}  ${read.label.padEnd(34)}  ` +
        `${Math.round(result.rps).toLocaleString('en-US').padStart(7)} req/s  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  ` +
        `CPU/req ${measured.serverUs.toFixed(0)} us (main thread ${measured.mainUs.toFixed(0)})${measured.databaseUs === null ? '' : ` + database ${measured.databaseUs.toFixed(0)} us`}` +
        (result.non2xx ? `  NON-2XX ${result.non2xx}` : ''))
    }
    /** Only the clinical read has a rule: the bare server with it answers that read alone. */
    const answers = (kind: ServerKind, read: Read) => kind.key !== 'bare-rule' || read.rotateAddress === true

    if (SLICES > 0) {
      // Every server at once, each on a database of its own when the database is PGlite's folder.
      const started: Array<{ kind: ServerKind; server: Spawned }> = []
      const copies: string[] = []
      try {
        for (const kind of SERVERS) {
          const own = database === 'pglite' ? freshDataDir('bench-http-copy') : null
          if (own) {
            cpSync(dataDir, own, { recursive: true })
            copies.push(own)
          }
          const server = await start(kind, own ? { DATA_DIR: own } : {})
          started.push({ kind, server })
          for (const read of READS) if (answers(kind, read)) await prepare(server, kind, read)
        }
        for (let slice = 1; slice <= SLICES; slice++) {
          const order = started.map((_, i) => started[(i + slice - 1) % started.length]!)
          for (const read of READS) {
            for (const { kind, server } of order) if (answers(kind, read)) await measure(server, kind, read, slice, SLICE_S)
          }
        }
      } finally {
        for (const { server } of started) await server.stop()
        for (const copy of copies) rmSync(copy, { recursive: true, force: true })
      }
      return
    }
    for (let round = 1; round <= ROUNDS; round++) {
      const order = SERVERS.map((_, i) => SERVERS[(i + round - 1) % SERVERS.length]!)
      for (const kind of order) {
        const server = await start(kind)
        try {
          for (const read of READS) {
            if (!answers(kind, read)) continue
            await prepare(server, kind, read)
            await measure(server, kind, read, round, DURATION_S)
          }
        } finally {
          await server.stop()
        }
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    await pg?.drop()
  }
}

function table(rows: Measured[]) {
  const withRule = rows.some((r) => r.server === BARE_RULE_LABEL)
  const header = ['read', 'database', 'server', 'req/s median', 'req/s min-max', 'p50 ms', 'p99 ms', 'non-2xx', 'app / bare', 'bare / app',
    'paired', ...(withRule ? ['app / bare+rule'] : []), 'CPU us/req', 'main thread', 'db CPU us/req', 'CPU bare / app']
  const groups = new Map<string, Measured[]>()
  for (const r of rows) {
    const key = `${r.read}\u0000${r.database}\u0000${r.server}`
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  const medianOf = (read: string, database: string, server: string, pick: (r: Measured) => number) =>
    median(rows.filter((r) => r.read === read && r.database === database && r.server === server).map(pick))
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
  const cells = [...groups.values()].map((g) => {
    const { read, database, server } = g[0]!
    const rps = g.map((r) => r.result.rps)
    const bare = medianOf(read, database, 'bare Bun.serve', (r) => r.result.rps)
    const bareCpu = medianOf(read, database, 'bare Bun.serve', (r) => r.serverUs)
    const cpu = median(g.map((r) => r.serverUs))
    const isBare = server.startsWith('bare Bun.serve')
    // Only the clinical read has a rule; for the others the bare server with it is the bare server.
    const bareRule = medianOf(read, database, BARE_RULE_LABEL, (r) => r.result.rps)
    // The ratio within each round (slice), then its median: what a slow spell does to both servers cancels out.
    const bareIn = (round: number) => rows.find((r) => r.read === read && r.database === database && r.server === 'bare Bun.serve' && r.round === round)
    const paired = median(g.flatMap((r) => {
      const b = bareIn(r.round)
      return b ? [r.result.rps / b.result.rps] : []
    }))
    return [
      read, database, server, fmt(median(rps)), `${fmt(Math.min(...rps))}-${fmt(Math.max(...rps))}`,
      median(g.map((r) => r.result.p50Ms)).toFixed(2), median(g.map((r) => r.result.p99Ms)).toFixed(2),
      String(g.reduce((n, r) => n + r.result.non2xx, 0)),
      isBare ? '' : (median(rps) / bare).toFixed(2), isBare ? '' : (bare / median(rps)).toFixed(2), isBare ? '' : paired.toFixed(2),
      ...(withRule ? [isBare || !read.startsWith('clinical') ? '' : (median(rps) / bareRule).toFixed(2)] : []),
      cpu.toFixed(0), median(g.map((r) => r.mainUs)).toFixed(0), g[0]!.databaseUs === null ? '-' : median(g.map((r) => r.databaseUs!)).toFixed(0), isBare ? '' : (bareCpu / cpu).toFixed(2),
    ]
  })
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) => c.map((x, i) => (i < 3 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ')
  console.log(line(header))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const c of cells) console.log(line(c))
}

async function main() {
  const targets = list('TARGETS', 'pglite,postgres') as Array<'pglite' | 'postgres'>
  if (targets.includes('postgres') && !(await serverAvailable())) {
    console.log(`(no PostgreSQL server answers at ${redact(SERVER_URL)}: PGlite only)`)
    targets.splice(targets.indexOf('postgres'), 1)
  }
  console.log(`server on CPU ${SERVER_CPU}${DB_THREAD_CPU ? ` (PGlite's thread on CPU ${DB_THREAD_CPU})` : ''}, ${LOADGEN} on CPU ${LOAD_CPU}, ${CONNECTIONS} connections, ${SLICES > 0 ? SLICE_S : DURATION_S} s after ${WARMUP_S} s ` +
    `warm-up, ${SLICES > 0 ? `${SLICES} paired slices of ${SLICE_S} s` : `${ROUNDS} rounds`}, ${BANK_QUESTIONS} bank questions, bun ${Bun.version}\n`)
  const rows: Measured[] = []
  try {
    for (const t of targets) await target(t, rows)
  } finally {
    rmSync(SCRIPT_DIR, { recursive: true, force: true })
  }
  console.log('')
  table(rows)
  const spans = SLICES > 0 ? 'slices' : 'rounds'
  console.log(`\napp / bare: the share of the bare server's requests/s the app answers, medians over the ${spans}`)
  console.log(`paired: the median over the ${spans} of the app's req/s over the bare server's in the same one (goal: at least 0.80)`)
  console.log('CPU us/req: the server process\'s CPU time per request (all its threads), of it the main thread\'s (the rest: the')
  console.log('collector, the JIT and, on PGlite, the database thread); db: the PostgreSQL server\'s;')
  console.log('CPU bare / app: the bare server\'s CPU per request over the app\'s (steadier than req/s on a shared VM)')
  if (SERVERS.some((s) => s.key === 'bare-rule')) {
    console.log('app / bare+rule: the clinical read against the bare server doing the API rate rule\'s work too (the app\'s limiter)')
  }
}

await main()
// Ends the run once the table is out: connections left open (fetch keep-alive, the database helpers) kept it alive.
process.exit(0)

// Requests per second of GET {quiz}/api/auth/me (Bearer token) on one core, against a bare Bun.serve doing the
// same work (scripts/bench/bare-server.ts: verify the HS256 token, read the user row by id through openDb).
// The server under test runs pinned to CPU SERVER_CPU (`taskset -c 0`), the load generator to LOAD_CPU
// (`taskset -c 1`); the PostgreSQL server, when used, is not pinned. The ratio bare/app is the framework's cost.
//
//   bun scripts/bench/http.ts                 (DURATION_S=10 WARMUP_S=3 CONNECTIONS=50 LOADGEN=wrk|autocannon)
//
// Runs on the embedded PGlite (a fresh DATA_DIR) and, when the PostgreSQL server of BENCH_DATABASE_URL
// answers, on a fresh database of it. The app runs once with LOG_LEVEL=warn (like the bare server, which
// logs nothing) and once with the default LOG_LEVEL=info (one log line per request).
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { freshDataDir, freshServerDatabase, redact, ROOT_DIR, SERVER_URL, serverAvailable, spawnServer, type Spawned } from './support'

const DURATION_S = Number(process.env.DURATION_S ?? 10)
const WARMUP_S = Number(process.env.WARMUP_S ?? 3)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50)
const SERVER_CPU = process.env.SERVER_CPU ?? '0'
const LOAD_CPU = process.env.LOAD_CPU ?? '1'
const JWT_SECRET = `bench-${crypto.randomUUID()}-${crypto.randomUUID()}`
const ME_PATH = '/quiz/api/auth/me'

type LoadGen = 'wrk' | 'autocannon'
const LOADGEN: LoadGen = (process.env.LOADGEN as LoadGen | undefined) ?? (Bun.which('wrk') ? 'wrk' : 'autocannon')

interface LoadResult {
  rps: number
  p50Ms: number
  p99Ms: number
  non2xx: number
}

async function run(cmd: string[]): Promise<string> {
  const proc = Bun.spawn(['taskset', '-c', LOAD_CPU, ...cmd], { cwd: ROOT_DIR, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd[0]} exited with ${code}: ${err}`)
  return out
}

const WRK_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 }
function wrkMs(out: string, percentile: string): number {
  const m = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out)
  return m ? Number(m[1]) * WRK_UNITS[m[2]!]! : NaN
}

async function load(url: string, token: string, seconds: number): Promise<LoadResult> {
  const auth = `Bearer ${token}`
  if (LOADGEN === 'wrk') {
    const out = await run(['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-H', `Authorization: ${auth}`, url])
    return {
      rps: Number(/^Requests\/sec:\s+([\d.]+)/m.exec(out)?.[1] ?? NaN),
      p50Ms: wrkMs(out, '50'),
      p99Ms: wrkMs(out, '99'),
      non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
    }
  }
  const out = await run([
    'node', join(ROOT_DIR, 'node_modules/autocannon/autocannon.js'), '-j', '-c', String(CONNECTIONS), '-d', String(seconds),
    '-H', `Authorization=${auth}`, url,
  ])
  const r = JSON.parse(out) as { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number }
  return { rps: r.requests.average, p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx }
}

async function measure(server: Spawned, token: string): Promise<LoadResult> {
  const url = `http://127.0.0.1:${server.port}${ME_PATH}`
  const check = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  if (check.status !== 200) throw new Error(`GET ${ME_PATH} answered ${check.status}: ${await check.text()}`)
  if (WARMUP_S > 0) await load(url, token, WARMUP_S)
  return load(url, token, DURATION_S)
}

async function register(server: Spawned): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${server.port}/quiz/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench-password-1', name: 'Bench' }),
  })
  const body = (await res.json()) as { access_token?: string }
  if (res.status !== 200 || !body.access_token) throw new Error(`register answered ${res.status}: ${JSON.stringify(body)}`)
  return body.access_token
}

interface Row {
  database: string
  server: string
  result: LoadResult
}

async function target(database: 'pglite' | 'postgres'): Promise<Row[]> {
  const dataDir = freshDataDir('bench-http')
  const db = database === 'postgres' ? await freshServerDatabase('bench_http') : null
  const env = { DATA_DIR: dataDir, JWT_SECRET, DATABASE_URL: db?.url ?? '' }
  const label = database === 'pglite' ? 'PGlite' : 'PostgreSQL'
  const rows: Row[] = []
  const app = (logLevel: string) => spawnServer({
    cmd: [process.execPath, 'src/main.ts'], env: { ...env, LOG_LEVEL: logLevel }, readyPath: '/api/health', pin: SERVER_CPU,
  })
  try {
    // PGlite is one process's database: the servers run one after the other on the same DATA_DIR.
    let token: string
    {
      const server = await app('warn')
      try {
        token = await register(server)
        rows.push({ database: label, server: 'app (LOG_LEVEL=warn)', result: await measure(server, token) })
      } finally {
        await server.stop()
      }
    }
    {
      const server = await app('info')
      try {
        rows.push({ database: label, server: 'app (LOG_LEVEL=info)', result: await measure(server, token) })
      } finally {
        await server.stop()
      }
    }
    {
      const server = await spawnServer({
        cmd: [process.execPath, 'scripts/bench/bare-server.ts'], env, readyPath: '/api/health', pin: SERVER_CPU,
      })
      try {
        rows.push({ database: label, server: 'bare Bun.serve', result: await measure(server, token) })
      } finally {
        await server.stop()
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    await db?.drop()
  }
  return rows
}

async function main() {
  const targets: Array<'pglite' | 'postgres'> = ['pglite']
  if (await serverAvailable()) targets.push('postgres')
  else console.log(`(no PostgreSQL server answers at ${redact(SERVER_URL)}: PGlite only)`)
  console.log(`GET ${ME_PATH}: server on CPU ${SERVER_CPU}, ${LOADGEN} on CPU ${LOAD_CPU}, ${CONNECTIONS} connections, ` +
    `${DURATION_S} s after ${WARMUP_S} s warm-up, bun ${Bun.version}\n`)
  const rows: Row[] = []
  for (const t of targets) rows.push(...(await target(t)))

  const header = ['database', 'server', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'bare / this']
  const cells = rows.map((r) => {
    const bare = rows.find((b) => b.database === r.database && b.server === 'bare Bun.serve')!
    return [
      r.database, r.server, Math.round(r.result.rps).toLocaleString('en-US'), r.result.p50Ms.toFixed(2),
      r.result.p99Ms.toFixed(2), String(r.result.non2xx), (bare.result.rps / r.result.rps).toFixed(2),
    ]
  })
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) => c.map((x, i) => (i < 2 ? x.padEnd(widths[i]!) : x.padStart(widths[i]!))).join('  ')
  console.log(line(header))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const c of cells) console.log(line(c))
  console.log('\nbare / this: how many times more requests/s the bare server answers (1.00 = no framework cost)')
}

await main()

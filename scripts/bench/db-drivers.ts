// Compares the PostgreSQL server drivers behind src/core/db.ts under sustained load: Bun's SQL client and
// postgres.js (as db.ts opens it, max_pipeline 1), plus postgres.js with its default pipelining opened directly.
// The load runs without pause and is sampled per round, so a driver that slows down steadily shows it.
//
//   bun scripts/bench/db-drivers.ts
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ROUNDS=6 ROUND_S=5 CONCURRENCY=50 POOL_SIZE=10 bun scripts/bench/db-drivers.ts
//
// A throwaway database is created on the server of BENCH_DATABASE_URL (default: the local server) and dropped
// at the end. Prints figures only; nothing is asserted.
import { SQL } from 'bun'
import { join } from 'node:path'
import postgres from 'postgres'
import { compile, openDb } from '../../src/core/db'
import { redact, SERVER_URL } from './support'

const BASE_URL = SERVER_URL
const ROUNDS = Number(process.env.ROUNDS ?? 6)
const ROUND_MS = Number(process.env.ROUND_S ?? 5) * 1000
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50)
const POOL_SIZE = Number(process.env.POOL_SIZE ?? 10)
const ROWS = Number(process.env.ROWS ?? 10_000)
const LIST_SIZE = 50

/** The SQL text with `$n` placeholders, as db.ts compiles it. */
const placeholders = (strings: TemplateStringsArray) => strings.reduce((text, s, i) => (i === 0 ? s : `${text}$${i}${s}`), '')
/** Keeps a workload's SQL as template pieces; its values come from params() per query. */
const sql = (strings: TemplateStringsArray, ..._slots: unknown[]) => strings

/** What a workload needs from a driver: one parameterised query (template pieces + values) returning rows. */
interface Runner {
  query(strings: TemplateStringsArray, params: unknown[]): Promise<unknown[]>
  close(): Promise<void>
}

interface DriverUnderTest {
  name: string
  open(url: string): Promise<Runner>
}

const drivers: DriverUnderTest[] = [
  {
    name: 'bun',
    async open(url) {
      const db = await openDb({ url, dataDir: '/nonexistent', poolSize: POOL_SIZE })
      return { query: (strings, params) => db.sql(strings, ...params), close: () => db.close() }
    },
  },
  {
    // postgres.js as db.ts used it before Bun's client won this comparison: max_pipeline 1, int8 as numbers.
    name: 'postgres-js',
    async open(url) {
      const client = postgres(url, {
        max: POOL_SIZE, max_pipeline: 1, onnotice: () => {},
        types: { int8: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } },
      } as Parameters<typeof postgres>[1])
      await client.unsafe('select 1')
      return {
        query: async (strings, params) => {
          const { text, params: values } = compile(strings, params)
          return [...(await client.unsafe(text, values as never[]))]
        },
        close: () => client.end({ timeout: 5 }),
      }
    },
  },
  {
    // What db.ts would get without max_pipeline: 1 (postgres.js defaults, same pool size).
    name: 'pg-js pipelined',
    async open(url) {
      const client = postgres(url, { max: POOL_SIZE, onnotice: () => {} })
      await client.unsafe('select 1')
      return {
        query: async (strings, params) => [...(await client.unsafe(placeholders(strings), params as never[]))],
        close: () => client.end({ timeout: 5 }),
      }
    },
  },
]

interface Workload {
  name: string
  sql: TemplateStringsArray
  params(): unknown[]
  expectRows: number
}

const workloads: Workload[] = [
  {
    name: 'read by primary key',
    sql: sql`select id, name, email, score, created_at from bench.item where id = ${'id'}`,
    params: () => [1 + Math.floor(Math.random() * ROWS)],
    expectRows: 1,
  },
  {
    name: `list of ${LIST_SIZE} rows`,
    sql: sql`select id, name, email, score, created_at from bench.item where id > ${'after'} order by id limit ${'limit'}`,
    params: () => [Math.floor(Math.random() * (ROWS - LIST_SIZE)), LIST_SIZE],
    expectRows: LIST_SIZE,
  },
]

async function withDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const name = `bench_drivers_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`
  const admin = new SQL({ url: BASE_URL, max: 1 })
  await admin.unsafe(`create database "${name}"`)
  const url = new URL(BASE_URL)
  url.pathname = `/${name}`
  try {
    const setup = new SQL({ url: url.toString(), max: 1 })
    await setup.unsafe(`
      create schema bench;
      create table bench.item (
        id int primary key, name text not null, email text not null, score int not null,
        created_at timestamptz not null default now()
      );
      insert into bench.item (id, name, email, score)
        select g, 'Item ' || g, 'user' || g || '@example.test', g % 1000 from generate_series(1, ${ROWS}) g;
      analyze bench.item;`)
    await setup.close()
    return await fn(url.toString())
  } finally {
    await admin.unsafe(`drop database if exists "${name}" with (force)`)
    await admin.close()
  }
}

interface RunResult {
  qps: number[]
  errors: number
  p99Ms: number[]
}

/** CONCURRENCY loops keep one query each in flight for ROUNDS * ROUND_MS; the count is sampled every round. */
async function sustained(runner: Runner, workload: Workload): Promise<RunResult> {
  let done = 0
  let errors = 0
  let latencies: number[] = []
  let stop = false
  const loop = async () => {
    while (!stop) {
      const t0 = performance.now()
      try {
        const rows = await runner.query(workload.sql, workload.params())
        if (rows.length !== workload.expectRows) errors++
        else done++
      } catch {
        errors++
      }
      latencies.push(performance.now() - t0)
    }
  }
  // Warm up the pool before measuring.
  await Promise.all(Array.from({ length: POOL_SIZE * 2 }, () => runner.query(workload.sql, workload.params())))
  const loops = Array.from({ length: CONCURRENCY }, loop)
  const qps: number[] = []
  const p99Ms: number[] = []
  let last = done
  let lastAt = performance.now()
  for (let r = 0; r < ROUNDS; r++) {
    await Bun.sleep(ROUND_MS)
    const now = performance.now()
    qps.push(((done - last) * 1000) / (now - lastAt))
    const sorted = latencies.sort((a, b) => a - b)
    p99Ms.push(sorted[Math.floor(sorted.length * 0.99)] ?? NaN)
    latencies = []
    last = done
    lastAt = now
  }
  stop = true
  await Promise.all(loops)
  return { qps, errors, p99Ms }
}

const fmt = (n: number, width: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-').padStart(width)
const fmt1 = (n: number, width: number) => (Number.isFinite(n) ? n.toFixed(1) : '-').padStart(width)
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

async function main() {
  console.log(`db drivers: ${ROUNDS} rounds x ${ROUND_MS / 1000} s, ${CONCURRENCY} queries in flight, pool ${POOL_SIZE}, ${ROWS} rows`)
  console.log(`server: ${redact(BASE_URL)}  bun ${Bun.version}  postgres.js ${(await Bun.file(join(import.meta.dir, '../../node_modules/postgres/package.json')).json()).version}\n`)
  await withDatabase(async (url) => {
    for (const workload of workloads) {
      const results = new Map<string, RunResult>()
      for (const driver of drivers) {
        const runner = await driver.open(url)
        try {
          results.set(driver.name, await sustained(runner, workload))
        } finally {
          await runner.close()
        }
        Bun.gc(true)
      }
      printWorkload(workload, results)
    }
  })
}

function printWorkload(workload: Workload, results: Map<string, RunResult>) {
  const names = [...results.keys()]
  const W = 17
  console.log(`== ${workload.name}: queries/s per round (p99 ms)`)
  console.log('round'.padEnd(7) + names.map((n) => n.padStart(W)).join('') + '   bun / pg-js   bun / pipelined')
  const get = (name: string) => results.get(name)!
  for (let r = 0; r < ROUNDS; r++) {
    const cells = names.map((n) => `${fmt(get(n).qps[r]!, 8)} (${fmt1(get(n).p99Ms[r]!, 5)})`.padStart(W))
    const bun = get('bun').qps[r]!
    console.log(
      String(r + 1).padEnd(7) + cells.join('') +
      fmt1(bun / get('postgres-js').qps[r]!, 14) + fmt1(bun / get('pg-js pipelined').qps[r]!, 18),
    )
  }
  const means = names.map((n) => mean(get(n).qps))
  console.log('mean'.padEnd(7) + means.map((m) => fmt(m, 8).padStart(W)).join('') +
    fmt1(means[0]! / means[1]!, 14) + fmt1(means[0]! / means[2]!, 18))
  console.log('last/1st'.padEnd(7) + names.map((n) => {
    const q = get(n).qps
    return `${(q[q.length - 1]! / q[0]!).toFixed(2)}`.padStart(W)
  }).join(''))
  const errors = names.map((n) => `${n}: ${get(n).errors}`).join(', ')
  console.log(`errors: ${errors}\n`)
}

await main()

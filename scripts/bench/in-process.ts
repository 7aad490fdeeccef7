// CPU time per request of the hot authenticated reads through the app's own fetch in this process (no HTTP, no
// load generator, no other process on the request's path but the PostgreSQL server): the framework's and the
// envelope's cost per request, steadier on a shared VM than requests/s over HTTP (scripts/bench/http.ts). This tree's
// app and each of APP_OTHERS (another checkout, booted from its own files in this same process) answer the same
// reads in interleaved rounds, so a change is measured against the tree before it under the same load.
// - quiz me: GET /quiz/api/auth/me with a quiz Bearer token;
// - clinical me: GET /api/auth/me with a clinical (mobile) Bearer token, each request from the next address of
//   198.18.0.0/15 (X-Forwarded-For, TRUST_PROXY=1), so the API rate rule counts every request and refuses none;
// - bank: GET /quiz/api/questions/bank, the default first page (50 of BANK_QUESTIONS seeded questions, with their
//   source quiz, category and tags), the quiz token; a twentieth of REQUESTS a round (each costs some 20 times more).
// Every app runs at LOG_LEVEL=info; their request lines go to this process's stdout (send it to /dev/null), the
// figures to stderr. CPU time is the whole process's (every thread: PGlite's too); the PostgreSQL server's is not.
//
// On PostgreSQL the bare server of scripts/bench/bare-server.ts answers the same reads on the first tree's database
// too ("bare": the same database work without the framework; BARE=0 leaves it out, BARE_FRAMEWORK=elysia routes it
// through a bare Elysia app, BARE_RATE_RULE=1 adds the API rule's work).
// SEPARATE=1: each tree (and the bare server) answers each round in a fresh process of its own, pinned to
// SERVER_CPU, after a warm-up of its own; besides the process's CPU it gives the main thread's (the rest: the
// collector's and the JIT's threads). Steadier than one process for all, where every tree's heap is marked by one
// collector and each tree's memory moves the others' figures (scripts/bench/README.md, "Keys hit a few times").
//
//   bun scripts/bench/in-process.ts > /dev/null   (READS=quiz-me,clinical-me,bank BANK_QUESTIONS=500 TARGETS=postgres,pglite ROUNDS=6
//                                                  REQUESTS=30000 per round CONCURRENCY=50 APP_OTHERS=before=<dir>
//                                                  BARE=1 SEPARATE=1 SERVER_CPU=0)
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openBare } from './bare-server'
import type { Db } from '../../src/core/db'
import { appOthers, BENCH_JWT_SECRET, envList as list, freshDataDir, freshServerDatabase, mainThreadCpuMs, median, ROOT_DIR, seedBank, serverAvailable } from './support'

const READS = list('READS', 'quiz-me,clinical-me,bank')
const BANK_QUESTIONS = Number(process.env.BANK_QUESTIONS ?? 500)
const ROUNDS = Number(process.env.ROUNDS ?? 6)
const REQUESTS = Number(process.env.REQUESTS ?? 30_000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50)
const TREES = [{ name: 'app', dir: ROOT_DIR }, ...appOthers()]
const SEPARATE = process.env.SEPARATE === '1'
const SERVER_CPU = process.env.SERVER_CPU ?? '0'

interface Booted { fetch(request: Request): Promise<Response>; shutdown(): Promise<void>; core: { db: Db } }
interface Tokens { quiz: string; clinical: string }
interface Subject { tree: string; read: string; send: (i: number) => Promise<void>; cpuUs: number[]; share: number }

const BASE = 'http://127.0.0.1'

async function bootTree(dir: string, env: Record<string, string | undefined>): Promise<Booted> {
  const support = await import(join(dir, 'scripts/bench/support.ts')) as { bootForBench(env: Record<string, string | undefined>): Promise<Booted> }
  return support.bootForBench({ ...env, LOG_LEVEL: 'info', TRUST_PROXY: '1' })
}

async function register(tree: string, app: Booted): Promise<Tokens> {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await app.fetch(new Request(BASE + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }))
    if (!res.ok) throw new Error(`${tree}: POST ${path} answered ${res.status}: ${await res.text()}`)
    return res.json() as Promise<Record<string, unknown>>
  }
  const account = { email: 'bench@example.test', password: 'bench-password-1', name: 'Bench' }
  return {
    quiz: String((await post('/quiz/api/auth/register', account)).access_token),
    clinical: String((await post('/api/auth/register', account, { 'x-client': 'mobile' })).token),
  }
}

function subjects(tree: string, app: Pick<Booted, 'fetch'>, tokens: Tokens): Subject[] {
  const reader = (path: string, token: string, rotate: boolean) => async (i: number) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (rotate) headers['x-forwarded-for'] = `198.${18 + ((i >> 16) & 1)}.${(i >> 8) & 255}.${i & 255}`
    const res = await app.fetch(new Request(BASE + path, { headers }))
    if (res.status !== 200) throw new Error(`${tree}: GET ${path} answered ${res.status}: ${await res.text()}`)
    await res.arrayBuffer()
  }
  const all: Subject[] = [
    { tree, read: 'quiz-me', send: reader('/quiz/api/auth/me', tokens.quiz, false), cpuUs: [], share: 1 },
    { tree, read: 'clinical-me', send: reader('/api/auth/me', tokens.clinical, true), cpuUs: [], share: 1 },
    { tree, read: 'bank', send: reader('/quiz/api/questions/bank', tokens.quiz, false), cpuUs: [], share: 1 / 20 },
  ]
  return all.filter((s) => READS.includes(s.read))
}

/** count requests, CONCURRENCY in flight; answers CPU microseconds per request, the whole process's and the main thread's. */
async function measureBoth(subject: Subject, count: number, offset: number): Promise<{ cpuUs: number; mainUs: number }> {
  let next = 0
  const before = process.cpuUsage()
  const mainBefore = mainThreadCpuMs(process.pid)
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count) await subject.send(offset + next++)
  }))
  const used = process.cpuUsage(before)
  return { cpuUs: (used.user + used.system) / count, mainUs: ((mainThreadCpuMs(process.pid) - mainBefore) * 1000) / count }
}
const measure = async (subject: Subject, count: number, offset: number) => (await measureBoth(subject, count, offset)).cpuUs

/** What a SEPARATE child is to measure: one tree's app (or the bare server, `dir` null) on a database prepared for it. */
interface ChildTask { tree: string; dir: string | null; env: Record<string, string | undefined>; tokens: Tokens; offset: number; out: string }

/** A SEPARATE child: boots one tree, warms each read up, measures it once, writes the figures to `out`. */
async function child(task: ChildTask) {
  const app: Pick<Booted, 'fetch'> & { close(): Promise<void> } = task.dir === null
    ? await openBare({ ...process.env, ...task.env, JWT_SECRET: BENCH_JWT_SECRET })
    : await bootTree(task.dir, task.env).then((b) => ({ fetch: b.fetch, close: b.shutdown }))
  const figures: Array<{ read: string; cpuUs: number; mainUs: number }> = []
  let offset = task.offset
  for (const s of subjects(task.tree, app, task.tokens)) {
    // A fresh process: as long a warm-up as the measure, so the JIT's compiling is done before it.
    await measure(s, Math.ceil(REQUESTS * s.share), (offset += REQUESTS))
    Bun.gc(true)
    figures.push({ read: s.read, ...(await measureBoth(s, Math.ceil(REQUESTS * s.share), (offset += REQUESTS))) })
  }
  writeFileSync(task.out, JSON.stringify(figures))
  await app.close()
}

/** SEPARATE=1: every round, each tree (then the bare server) in a process of its own, in a rotating order. */
async function separate(target: string): Promise<Array<{ tree: string; read: string; cpuUs: number[]; mainUs: number[] }>> {
  const tasks: Array<Omit<ChildTask, 'offset' | 'out'>> = []
  const dbs: Array<{ drop(): Promise<void> }> = []
  const dirs: string[] = []
  const results = new Map<string, { tree: string; read: string; cpuUs: number[]; mainUs: number[] }>()
  try {
    for (const tree of TREES) {
      const pg = target === 'postgres' ? await freshServerDatabase('bench_inproc') : null
      if (pg) dbs.push(pg)
      const env = { DATABASE_URL: pg?.url, DATA_DIR: freshDataDir('bench-inproc') }
      dirs.push(env.DATA_DIR)
      // Registered and seeded once, by the tree itself (PGlite: then closed, so its children can open the folder).
      const app = await bootTree(tree.dir, env)
      const tokens = await register(tree.name, app)
      if (READS.includes('bank')) await seedBank(app.core.db, BANK_QUESTIONS)
      await app.shutdown()
      tasks.push({ tree: tree.name, dir: tree.dir, env, tokens })
      if (pg && tree === TREES[0] && process.env.BARE !== '0') tasks.push({ tree: 'bare', dir: null, env, tokens })
    }
    const out = join(freshDataDir('bench-inproc-out'), 'figures.json')
    dirs.push(join(out, '..'))
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < tasks.length; i++) {
        const task = tasks[(i + round) % tasks.length]!
        const proc = Bun.spawn(['taskset', '-c', SERVER_CPU, process.execPath, import.meta.path], {
          env: { ...process.env, INPROC_CHILD: JSON.stringify({ ...task, offset: (round * tasks.length + i) * 2 * REQUESTS * READS.length, out }) },
          stdout: 'ignore', stderr: 'inherit',
        })
        if ((await proc.exited) !== 0) throw new Error(`${task.tree}: the measuring process exited with ${proc.exitCode}`)
        for (const f of JSON.parse(readFileSync(out, 'utf8')) as Array<{ read: string; cpuUs: number; mainUs: number }>) {
          const key = `${task.tree}\u0000${f.read}`
          if (!results.has(key)) results.set(key, { tree: task.tree, read: f.read, cpuUs: [], mainUs: [] })
          results.get(key)!.cpuUs.push(f.cpuUs)
          results.get(key)!.mainUs.push(f.mainUs)
        }
      }
    }
  } finally {
    for (const db of dbs) await db.drop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
  return [...results.values()]
}

async function main() {
  const targets = list('TARGETS', 'postgres,pglite')
  if (targets.includes('postgres') && !(await serverAvailable())) targets.splice(targets.indexOf('postgres'), 1)
  console.error(`in process: ${READS.join(', ')}; ${ROUNDS} rounds of ${REQUESTS} requests, ${CONCURRENCY} in flight; bun ${Bun.version}` +
    `${SEPARATE ? `; each tree a process of its own a round, on CPU ${SERVER_CPU}` : ''}\n`)
  for (const target of targets) {
    if (SEPARATE) {
      printFigures(target, await separate(target))
      continue
    }
    const apps: Array<{ shutdown(): Promise<void> }> = []
    const dbs: Array<{ drop(): Promise<void> }> = []
    const all: Subject[] = []
    try {
      for (const tree of TREES) {
        const pg = target === 'postgres' ? await freshServerDatabase('bench_inproc') : null
        if (pg) dbs.push(pg)
        const app = await bootTree(tree.dir, { DATABASE_URL: pg?.url, DATA_DIR: freshDataDir('bench-inproc') })
        apps.push(app)
        const tokens = await register(tree.name, app)
        if (READS.includes('bank')) await seedBank(app.core.db, BANK_QUESTIONS)
        all.push(...subjects(tree.name, app, tokens))
        // The bare server on the first tree's database (a PGlite folder is one instance's).
        if (pg && tree === TREES[0] && process.env.BARE !== '0') {
          const bare = await openBare({ ...process.env, JWT_SECRET: BENCH_JWT_SECRET, DATABASE_URL: pg.url })
          apps.push({ shutdown: () => bare.close() })
          all.push(...subjects('bare', bare, tokens))
        }
      }
      let offset = 0
      for (const s of all) await measure(s, Math.ceil(Math.min(REQUESTS, 5_000) * s.share), (offset += 5_000)) // warm-up
      for (let round = 0; round < ROUNDS; round++) {
        // a rotating order, so no tree always runs after the same one
        const order = all.map((_, i) => all[(i + round) % all.length]!)
        for (const s of order) s.cpuUs.push(await measure(s, Math.ceil(REQUESTS * s.share), (offset += REQUESTS)))
      }
    } finally {
      for (const app of apps) await app.shutdown()
      for (const db of dbs) await db.drop()
    }
    printFigures(target, all)
  }
  process.exit(0)
}

/** The medians and rounds of each tree a read, against the first tree's; the main thread's too when measured. */
function printFigures(target: string, rows: Array<{ tree: string; read: string; cpuUs: number[]; mainUs?: number[] }>) {
  const rounds = (xs: number[]) => `${median(xs).toFixed(1).padStart(7)} [${xs.map((u) => u.toFixed(1)).join(', ')}]`
  console.error(`${target === 'postgres' ? 'PostgreSQL' : 'PGlite'}: CPU us per request, median [rounds]${SEPARATE ? '; main thread, median [rounds]' : ''}`)
  for (const read of READS) {
    const ofRead = rows.filter((r) => r.read === read)
    const base = median(ofRead[0]!.cpuUs)
    for (const r of ofRead) {
      const m = median(r.cpuUs)
      const vs = r === ofRead[0] ? '' : `  (${m >= base ? '+' : ''}${((m / base - 1) * 100).toFixed(1)}% against ${ofRead[0]!.tree})`
      console.error(`  ${read.padEnd(12)} ${r.tree.padEnd(10)} ${rounds(r.cpuUs)}${r.mainUs ? `; main ${rounds(r.mainUs).trimStart()}` : ''}${vs}`)
    }
  }
  console.error('')
}

if (process.env.INPROC_CHILD) {
  await child(JSON.parse(process.env.INPROC_CHILD) as ChildTask)
  process.exit(0)
}
await main()

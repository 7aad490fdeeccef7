// Shared by the benchmark scripts: throwaway databases, free ports, spawning a server and waiting for it.
import { SQL, type Subprocess } from 'bun'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { boot, type Booted } from '../../src/app'
import { loadConfig } from '../../src/config'
import type { Db } from '../../src/core/db'
import { createLogger } from '../../src/core/log'
import { plugins } from '../../plugins'
import { createThrowawayDatabase } from '../../test/support/database'

export const ROOT_DIR = join(import.meta.dir, '../..')
/** The PostgreSQL server the benchmarks create their throwaway databases on. */
export const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export const redact = (url: string) => url.replace(/:[^:@/]*@/, ':***@')

/** True when the PostgreSQL server of SERVER_URL answers. */
export async function serverAvailable(): Promise<boolean> {
  const admin = new SQL({ url: SERVER_URL, max: 1, connectionTimeout: 3 })
  try {
    await admin.unsafe('select 1')
    return true
  } catch {
    return false
  } finally {
    await admin.close().catch(() => {})
  }
}

/** A fresh, empty database on SERVER_URL; `drop()` removes it. */
export const freshServerDatabase = (prefix: string) => createThrowawayDatabase(SERVER_URL, prefix)

export const freshDataDir = (prefix: string) => mkdtempSync(join(tmpdir(), `${prefix}-`))

/**
 * The whole app booted in this process, as the in-process benchmarks drive it (through `fetch`, or its services):
 * a bench JWT secret and data key, no job workers, warnings only; `env` (DATA_DIR, DATABASE_URL, ...) over that.
 */
export const BENCH_JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789'

export function bootForBench(env: Record<string, string | undefined>): Promise<Booted> {
  const settings = {
    JWT_SECRET: BENCH_JWT_SECRET, DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1',
    WORKERS: '0', LOG_LEVEL: 'warn', ...env,
  }
  return boot(loadConfig(settings), plugins, { log: createLogger(settings.LOG_LEVEL) })
}

export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  await probe.stop(true)
  return port
}

export interface Spawned {
  proc: Subprocess
  port: number
  /** ms from spawn to the first 200 of the readiness URL. */
  readyMs: number
  stop(): Promise<void>
}

/**
 * Spawns `cmd` (with PORT set) and polls `readyPath` until it answers 200. `pin` runs it under
 * `taskset -c <cpu>`; the pid is then still the server's (taskset execs it).
 */
export async function spawnServer(opts: {
  cmd: string[]
  env: Record<string, string | undefined>
  readyPath: string
  pin?: string
  timeoutMs?: number
}): Promise<Spawned> {
  const port = await freePort()
  const cmd = opts.pin ? ['taskset', '-c', opts.pin, ...opts.cmd] : opts.cmd
  const logFile = join(tmpdir(), `bench-server-${port}.log`)
  const started = performance.now()
  const proc = Bun.spawn(cmd, {
    cwd: ROOT_DIR,
    env: { ...process.env, LOG_LEVEL: 'warn', ...opts.env, PORT: String(port), HOST: '127.0.0.1' },
    stdout: Bun.file(logFile),
    stderr: Bun.file(logFile),
  })
  const url = `http://127.0.0.1:${port}${opts.readyPath}`
  const deadline = started + (opts.timeoutMs ?? 120_000)
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode} before it was ready; log: ${logFile}`)
    try {
      const res = await fetch(url)
      if (res.status === 200) break
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error(`server not ready after ${opts.timeoutMs ?? 120_000} ms; log: ${logFile}`)
    }
    await Bun.sleep(5)
  }
  const readyMs = performance.now() - started
  return {
    proc,
    port,
    readyMs,
    async stop() {
      proc.kill('SIGTERM')
      const exited = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => null)])
      if (exited === null) {
        proc.kill('SIGKILL')
        await proc.exited
      }
    },
  }
}

/**
 * CPU time in ms the processes used so far, every thread of them (utime + stime of /proc/<pid>/stat). With the
 * requests answered meanwhile it gives CPU per request: steadier than req/s on a shared VM, where another tenant's
 * load moves req/s from run to run.
 */
const TICKS_PER_S = 100 // getconf CLK_TCK on Linux
function ticksOf(statPath: string): number {
  try {
    const stat = readFileSync(statPath, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0 // ended meanwhile
  }
}
export function cpuMs(pids: number[]): number {
  let ticks = 0
  for (const pid of pids) ticks += ticksOf(`/proc/${pid}/stat`)
  return (ticks * 1000) / TICKS_PER_S
}
/**
 * The same for the process's main thread alone (the JavaScript thread that serves the requests): the rest is its
 * helper threads, the collector's and the JIT's, and on PGlite the database's own thread.
 */
export const mainThreadCpuMs = (pid: number) => (ticksOf(`/proc/${pid}/task/${pid}/stat`) * 1000) / TICKS_PER_S

/** Resident memory of a process in MB (VmRSS of /proc/<pid>/status). */
export function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : NaN
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** The p-th percentile (0 to 100, nearest rank) of samples sorted ascending. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/** The q-quantile (0 to 1) of samples in any order, by the rank (n - 1) x q. */
export const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * q))]!
}

/** Milliseconds as the tables print them: two decimals under 10, one above. */
export const formatMs = (n: number) => n.toFixed(n < 10 ? 2 : 1)

/**
 * p50/p95/p99 of `runs` calls of `work` after 5 warm-up calls (given 0 to 4); the measured calls get
 * `offset + i`, so work that must not repeat a warm-up's input (a fresh address, a new name) passes 5.
 */
export async function timed(runs: number, work: (i: number) => Promise<void>, offset = 0): Promise<{ p50: number; p95: number; p99: number }> {
  for (let i = 0; i < 5; i++) await work(i)
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await work(offset + i)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) }
}

/** The time of each of `rounds` calls, in ms, after `warmup` calls that are not counted (JIT, caches, connections). */
export async function sampleMs(rounds: number, once: () => Promise<void> | void, warmup = 20): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await once()
  const samples: number[] = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await once()
    samples.push(performance.now() - started)
  }
  return samples
}

/** A comma-separated setting of the environment, `all` when it is not set. */
export const envList = (name: string, all: string) => (process.env[name] ?? all).split(',').map((s) => s.trim()).filter(Boolean)

/** APP_OTHERS=name=dir,...: other checkouts whose app a benchmark runs beside this tree's. */
export const appOthers = () => envList('APP_OTHERS', '').map((entry) => {
  const at = entry.indexOf('=')
  if (at <= 0 || at === entry.length - 1) throw new Error(`APP_OTHERS entries are name=dir, not "${entry}"`)
  return { name: entry.slice(0, at), dir: entry.slice(at + 1) }
})

/** The bank's content: categories, quizzes (one unpublished), questions with a source quiz and two tags each. */
export async function seedBank(db: Db, questions: number) {
  const [user] = await db.sql<{ id: number }>`select id from quiz.users where email = 'bench@example.test'`
  await db.sql`insert into quiz.question_categories (name) select 'Category ' || g from generate_series(1, 4) g`
  await db.sql`insert into quiz.quizzes (user_id, title, mode, is_published)
    select ${user!.id}, 'Quiz ' || g, 'learning', g <> 5 from generate_series(1, 5) g`
  await db.sql`insert into quiz.tags (kind, name)
    select (array['subject', 'disease', 'keyword'])[1 + g % 3], 'Tag ' || g from generate_series(1, 12) g`
  await db.sql`insert into quiz.questions (question_text, options, correct_answer, explanation, question_category_id, source_quiz_id)
    select 'Question ' || g || ': which of these fits ' || md5(g::text) || '?',
      jsonb_build_array('alpha ' || g, 'beta ' || g, 'gamma ' || g, 'delta ' || g), 'beta ' || g,
      'Because ' || md5((g * 7)::text) || ' ' || md5((g * 11)::text),
      case when g % 5 = 0 then null else (select id from quiz.question_categories order by id offset g % 4 limit 1) end,
      case when g % 3 = 0 then null else (select id from quiz.quizzes order by id offset g % 5 limit 1) end
    from generate_series(1, ${questions}) g`
  await db.sql`insert into quiz.quiz_questions (quiz_id, question_id, position)
    select z.id, q.id, row_number() over (partition by z.id order by q.id) from quiz.quizzes z join quiz.questions q on q.id % 5 = z.id % 5`
  await db.sql`insert into quiz.question_tags (question_id, tag_id) select q.id, t.id from quiz.questions q join quiz.tags t on t.id % 6 = q.id % 6`
  for (const table of ['questions', 'quizzes', 'quiz_questions', 'question_tags', 'tags', 'question_categories']) {
    await db.exec(`analyze quiz.${table}`)
  }
}

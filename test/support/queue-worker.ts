// One worker process of the queue comparison (test/queue-compare.test.ts, scripts/bench/queue-compare.ts): opens the
// database of DATABASE_URL (or an embedded PGlite under DATA_DIR), runs the queue QUEUE_IMPL with QUEUE_WORKERS
// workers on job kind QUEUE_KIND, and prints one JSON line per event on stdout: {"ready"}, {"running": id}.
// Each run is recorded in compare.runs (job, process). QUEUE_MODE=hold keeps every job running until the process is
// killed (the crash test); drain completes it. SIGTERM stops the queue cleanly and exits 0.
import type { Subprocess } from 'bun'
import { join } from 'node:path'
import { openDb, type Db } from '../../src/core/db'
import type { JobHandler } from '../../src/core/jobs'
import { createLogger } from '../../src/core/log'
import { migrate } from '../../src/core/migrate'
import { openQueue, type QueueImpl } from './library-jobs'

/** The runs log both queues' handlers write: how many times each job's handler started, and where. */
export async function prepareCompare(db: Db): Promise<void> {
  await migrate(db, [{ owner: 'core', dir: join(import.meta.dir, '../../sql') }])
  await db.exec(`create schema if not exists compare;
    create table if not exists compare.runs (job_id text not null, process text not null, at timestamptz not null default now())`)
}

/** A handler that logs its run; with `hold` it then waits until the process dies. */
export const recordingHandler = (db: Db, process: string, hold = false, onRun?: (id: string) => void): JobHandler =>
  async (ctx) => {
    await db.sql`insert into compare.runs (job_id, process) values (${ctx.id}, ${process})`
    onRun?.(ctx.id)
    if (hold) await new Promise(() => {})
    return { process }
  }

/** Polls slowly: on PGlite (one connection) each probe waits behind the workers' queries. */
export async function until<T>(probe: () => Promise<T | null | false>, what: string, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(everyMs)
  }
}

export interface QueueWorkerProcess {
  readonly events: Array<Record<string, unknown>>
  /** The first event carrying `key`; rejects when the process exits first. */
  event(key: string): Promise<Record<string, unknown>>
  kill9(): Promise<void>
  /** SIGTERM; answers the exit code. */
  stop(): Promise<number>
}

/** Spawns this script with `env` (on PATH and HOME only, besides the queue's settings). */
export function spawnQueueWorker(env: Record<string, string>): QueueWorkerProcess {
  const proc: Subprocess<'ignore', 'pipe', 'inherit'> = Bun.spawn([process.execPath, import.meta.path], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdin: 'ignore', stdout: 'pipe', stderr: 'inherit',
  })
  const events: Array<Record<string, unknown>> = []
  void (async () => {
    let buffer = ''
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buffer += r.value
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        events.push(JSON.parse(buffer.slice(0, nl)))
        buffer = buffer.slice(nl + 1)
      }
    }
  })()
  return {
    events,
    event: (key) => until(async () => {
      const found = events.find((e) => key in e)
      if (!found && proc.exitCode !== null) throw new Error(`the queue worker exited with ${proc.exitCode}`)
      return found ?? null
    }, `the queue worker's "${key}"`, 60_000, 20),
    async kill9() {
      proc.kill('SIGKILL')
      await proc.exited
    },
    async stop() {
      proc.kill('SIGTERM')
      return proc.exited
    },
  }
}

if (import.meta.main) {
  const env = process.env
  const name = `pid${process.pid}`
  const say = (event: object) => process.stdout.write(JSON.stringify(event) + '\n')
  const db = await openDb({ url: env.DATABASE_URL ?? null, dataDir: env.DATA_DIR!, poolSize: 6 })
  if (env.QUEUE_PREPARE === '1') await prepareCompare(db)
  const jobs = await openQueue(env.QUEUE_IMPL as QueueImpl, db, createLogger(env.LOG_LEVEL ?? 'silent'), {
    workers: Number(env.QUEUE_WORKERS ?? 1), pollMs: Number(env.QUEUE_POLL_MS ?? 200), heartbeatMs: Number(env.QUEUE_HEARTBEAT_MS ?? 200),
    batchSize: Number(env.QUEUE_BATCH ?? 1),
  })
  const kind = env.QUEUE_KIND!
  jobs.register(kind, recordingHandler(db, name, env.QUEUE_MODE === 'hold', (id) => say({ running: id })))
  await jobs.registered()
  const enqueue = Number(env.QUEUE_ENQUEUE ?? 0)
  if (enqueue > 0) {
    const ids: string[] = []
    for (let n = 0; n < enqueue; n++) ids.push((await jobs.enqueue(kind, { n }, { service: 'compare' })).id)
    say({ enqueued: ids })
  }
  jobs.start()
  say({ ready: name })
  process.on('SIGTERM', async () => {
    await jobs.stop(2_000)
    await jobs.close()
    await db.close()
    process.exit(0)
  })
}

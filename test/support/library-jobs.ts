// The project's Jobs interface (src/core/jobs.ts) on pg-boss, for comparing the hand-written queue with a maintained
// library (test/queue-compare.test.ts, scripts/bench/queue-compare.ts); not used by the app. pg-boss runs on the
// project's Db through its adapter hook (test/support/pgboss-db.ts), so the same code serves PGlite and the server.
// Mapping, as close as the library allows:
// - a job kind is a pg-boss queue; service, owner and title travel in the job's data beside the payload;
// - enqueue in the caller's transaction: send() with `db` bound to that transaction;
// - lease: expireInSeconds; crash takeover: heartbeatSeconds (the library's minimum is 10 s), found by the
//   supervisor's monitor pass (monitorIntervalSeconds, 60 s by default, 1 s here) and retried (retryLimit =
//   maxAttempts - 1);
// - give-up: a throwing handler dead-letters the job at once (perJobResults `deadletter`, as the hand-written queue
//   fails it without retry); a job out of attempts is failed by the supervisor and copied to the dead letter queue,
//   whose worker runs onGiveUp in the transaction that completes the dead letter job (not the one that failed it);
// - steps and recordResult: pg-boss keeps no progress, so they live in a table of our own (library_jobs.progress).
// WORKERS=0 (inline runs inside enqueue) has no pg-boss counterpart and is refused.
import { PgBoss, type Job, type JobWithMetadata } from 'pg-boss'
import { rawSql, type Db } from '../../src/core/db'
import {
  createJobs, DEFAULT_LEASE_MS, DEFAULT_POLL_MS, JOB_ERROR_MAX, JobCancelled, type EnqueueOptions, type GiveUpHandler, type GiveUpReason,
  type JobContext, type JobHandler, type JobRecord, type Jobs, type JobsOptions, type JobStatus, type JobStep,
} from '../../src/core/jobs'
import type { Logger } from '../../src/core/log'
import { bossDb } from './pgboss-db'

export const BOSS_SCHEMA = 'pgboss'
/** pg-boss refuses a heartbeat under 10 s: the floor of its crash takeover. */
export const BOSS_MIN_HEARTBEAT_S = 10
const DEAD = '__dead'

export interface LibraryJobsOptions extends JobsOptions {
  /** Job heartbeat (pg-boss heartbeatSeconds, at least 10). */
  heartbeatSeconds?: number
  /** How often this instance's supervisor fails expired jobs and jobs whose heartbeat stopped. */
  superviseSeconds?: number
  /**
   * Jobs a worker claims per fetch, run one after another. pg-boss waits a polling interval after every fetch
   * unless it came back full (burstWhenBatchFull, which needs a batch of 2 or more).
   */
  batchSize?: number
}

export type QueueImpl = 'hand-written' | 'pg-boss'
export const QUEUE_IMPLS: QueueImpl[] = ['hand-written', 'pg-boss']

/**
 * Either queue behind the one interface. `registered` waits until the kinds registered so far can take jobs (pg-boss
 * creates a queue per kind; on PGlite, sending inside a transaction while that creation waits for the one connection
 * would deadlock, so it must be done first, as at boot). `close` stops what the library keeps running.
 */
export type CompareQueue = Jobs & { registered(): Promise<void>; close(): Promise<void> }
export async function openQueue(impl: QueueImpl, db: Db, log: Logger, opts: LibraryJobsOptions): Promise<CompareQueue> {
  if (impl === 'pg-boss') return createLibraryJobs(db, log, opts)
  return Object.assign(createJobs(db, log, opts), { registered: async () => {}, close: async () => {} })
}

export type LibraryJobs = CompareQueue & { readonly boss: PgBoss }

interface JobData { payload: unknown; service: string; ownerId: number | null; title: string }
interface BossRow {
  id: string; name: string; state: string; data: JobData; output: { value?: unknown; message?: string } | null
  retry_count: number; started_on: Date | null; created_on: Date; completed_on: Date | null
  steps: JobStep[] | null; result: unknown; error: string | null
}
/** The claim went away while the handler ran (expired, failed by the supervisor, taken by another attempt). */
class JobLost extends Error {}

const STATUS: Record<string, JobStatus> = { created: 'pending', retry: 'pending', active: 'running', completed: 'completed', failed: 'failed', cancelled: 'cancelled' }
const toRecord = (r: BossRow): JobRecord => ({
  id: r.id, kind: r.name, service: r.data.service, owner_id: r.data.ownerId, title: r.data.title,
  status: STATUS[r.state] ?? 'pending', payload: r.data.payload, steps: r.steps ?? [],
  result: r.state === 'completed' ? (r.output?.value ?? null) : (r.result ?? null),
  error: r.state === 'failed' ? (r.error ?? r.output?.message ?? null) : null,
  attempts: r.started_on ? r.retry_count + 1 : 0, created_at: r.created_on, started_at: r.started_on, finished_at: r.completed_on,
})
const SELECT = `select j.id::text as id, j.name, j.state::text as state, j.data, j.output, j.retry_count, j.started_on, j.created_on,
  j.completed_on, p.steps, p.result, p.error from ${BOSS_SCHEMA}.job j left join library_jobs.progress p on p.job_id = j.id`

export async function createLibraryJobs(db: Db, log: Logger, opts: LibraryJobsOptions): Promise<LibraryJobs> {
  if (opts.workers === 0) throw new Error('pg-boss has no inline mode (WORKERS=0)')
  const leaseS = Math.max(1, Math.round((opts.leaseMs ?? DEFAULT_LEASE_MS) / 1000))
  const heartbeatS = Math.max(BOSS_MIN_HEARTBEAT_S, opts.heartbeatSeconds ?? BOSS_MIN_HEARTBEAT_S)
  const pollS = Math.max(0.5, (opts.pollMs ?? DEFAULT_POLL_MS) / 1000)
  const boss = new PgBoss({
    db: bossDb(db), backend: db.kind === 'pglite' ? 'pglite' : 'postgres', schema: BOSS_SCHEMA,
    // Expiry and heartbeat failures run in the monitor pass (60 s by default): as often as the supervisor here.
    superviseIntervalSeconds: opts.superviseSeconds ?? 1, monitorIntervalSeconds: opts.superviseSeconds ?? 1, schedule: false, openTelemetry: { enabled: false },
  })
  boss.on('error', (err) => log.warn({ err }, 'pg-boss error'))
  await boss.start()
  await db.exec(`create schema if not exists library_jobs;
    create table if not exists library_jobs.progress (job_id uuid primary key, steps jsonb not null default '[]', result jsonb, error text)`)

  const handlers = new Map<string, JobHandler>()
  const hooks = new Map<string, GiveUpHandler>()
  const queues = new Map<string, Promise<void>>()
  let started: Promise<void> | null = null

  const ensureQueue = (kind: string) => {
    let ready = queues.get(kind)
    if (!ready) {
      ready = (async () => {
        await boss.createQueue(kind + DEAD, { retryLimit: 3 })
        await boss.createQueue(kind, { expireInSeconds: leaseS, heartbeatSeconds: heartbeatS, deadLetter: kind + DEAD })
      })()
      queues.set(kind, ready)
    }
    return ready
  }
  const read = async (executor: Db, id: string) => {
    const [row] = await executor.sql<BossRow>`${rawSql(SELECT)} where j.id = ${id}`
    return row ? toRecord(row) : null
  }
  const progress = (executor: Db, id: string, step: JobStep) => executor.sql`
    insert into library_jobs.progress (job_id, steps) values (${id}, jsonb_build_array(${step}::jsonb))
    on conflict (job_id) do update set steps = library_jobs.progress.steps || excluded.steps`

  /** Runs a handler for a claimed job; answers the outcome for the library to settle. */
  async function execute(job: Job<JobData>): Promise<{ status: 'completed' | 'deadletter'; output: object } | null> {
    const handler = handlers.get(job.name)
    const state = async (executor: Db) =>
      (await executor.sql<{ state: string; retry_count: number }>`
        select state::text as state, retry_count from ${rawSql(BOSS_SCHEMA)}.job where id = ${job.id}`)[0]
    const check = async (executor: Db) => {
      const s = await state(executor)
      if (!s || s.state === 'cancelled') throw new JobCancelled()
      if (s.state !== 'active' || s.retry_count !== job.retryCount || job.signal.aborted) throw new JobLost()
    }
    const [prior] = await db.sql<{ result: unknown }>`select result from library_jobs.progress where job_id = ${job.id}`
    const ctx: JobContext = {
      id: job.id, payload: job.data.payload, ownerId: job.data.ownerId, attempt: job.retryCount + 1,
      maxAttempts: (job as JobWithMetadata<JobData>).retryLimit + 1 || 0, recorded: prior?.result ?? null, signal: job.signal,
      async step(message, extra) {
        await check(db)
        await progress(db, job.id, { message, ...extra, at: new Date().toISOString() })
      },
      throwIfCancelled: () => check(db),
      async recordResult(tx, result) {
        await check(tx)
        await tx.sql`insert into library_jobs.progress (job_id, result) values (${job.id}, ${{ value: result ?? null }}::jsonb -> 'value')
          on conflict (job_id) do update set result = excluded.result`
      },
    }
    try {
      if (!handler) throw new Error(`no handler registered for job kind "${job.name}"`)
      return { status: 'completed', output: { value: (await handler(ctx)) ?? null } }
    } catch (err) {
      if (err instanceof JobCancelled || err instanceof JobLost || job.signal.aborted) return null
      const message = err instanceof Error ? err.message : String(err)
      log.warn({ err, job: job.id, kind: job.name }, 'job failed')
      return { status: 'deadletter', output: { message: message.slice(0, JOB_ERROR_MAX) } }
    }
  }

  /** The dead letter queue's worker: onGiveUp in the transaction that completes the dead letter job. */
  const giveUp = async (kind: string, [dead]: JobWithMetadata<JobData>[]) => {
    const hook = hooks.get(kind)
    const origin = dead!.sourceId!
    const sourceMessage = (dead!.sourceOutput as { message?: string } | null)?.message ?? ''
    const reason: GiveUpReason = /job (heartbeat timeout|timed out)/.test(sourceMessage)
      ? { kind: 'abandoned', attempts: (dead!.sourceRetryCount ?? 0) + 1 }
      : { kind: 'failed', error: sourceMessage }
    await db.transaction(async (tx) => {
      const [p] = await tx.sql<{ result: unknown }>`select result from library_jobs.progress where job_id = ${origin}`
      const outcome = hook ? await hook(tx, { id: origin, payload: dead!.data.payload, ownerId: dead!.data.ownerId, recorded: p?.result ?? null, reason }) : undefined
      if (outcome) {
        await progress(tx, origin, { message: outcome.message, name: outcome.name, status: outcome.status, at: new Date().toISOString() })
        if (reason.kind === 'abandoned') await tx.sql`update library_jobs.progress set error = ${outcome.message} where job_id = ${origin}`
      }
      await boss.complete(kind + DEAD, dead!.id, null, { db: bossDb(tx) })
    })
  }

  const queue = (executor: Db, afterCommit: ((fn: () => void) => void) | null) => ({
    async enqueue(kind: string, payload: unknown, o: EnqueueOptions): Promise<JobRecord> {
      if (!handlers.has(kind)) throw new Error(`unknown job kind "${kind}"`)
      await ensureQueue(kind)
      const data: JobData = { payload: payload ?? null, service: o.service, ownerId: o.ownerId ?? null, title: o.title ?? '' }
      const id = await boss.send(kind, data, { retryLimit: (o.maxAttempts ?? 3) - 1, db: bossDb(executor) })
      afterCommit?.(() => {})
      return (await read(executor, id!))!
    },
    get: (id: string) => read(executor, id),
    async listForOwner(service: string, ownerId: number, limit = 20, kind?: string) {
      const rows = await executor.sql<BossRow>`${rawSql(SELECT)} where j.data @> ${{ service, ownerId }}::jsonb`
      return rows.filter((r) => kind === undefined || r.name === kind).map(toRecord)
        .sort((a, b) => b.created_at.getTime() - a.created_at.getTime()).slice(0, limit)
    },
    async cancel(id: string): Promise<'cancelled' | 'not_running' | 'not_found'> {
      const job = await read(executor, id)
      if (!job) return 'not_found'
      if (job.result !== null && job.status === 'running') return 'not_running'
      const res = await boss.cancel(job.kind, id, { db: bossDb(executor) })
      return (res as { affected?: number }).affected! > 0 ? 'cancelled' : 'not_running'
    },
  })

  const jobs: LibraryJobs = {
    boss,
    inline: false,
    register(kind, handler, o) {
      handlers.set(kind, handler as JobHandler)
      const hook = o?.onGiveUp ?? handler.onGiveUp
      if (hook) hooks.set(kind, hook as GiveUpHandler)
      void ensureQueue(kind)
    },
    ...queue(db, null),
    bind: (tx, afterCommit) => ({ ...jobs, ...queue(tx, afterCommit) }),
    registered: async () => void (await Promise.all(queues.values())),
    async runOnce() {
      for (const kind of handlers.keys()) {
        await ensureQueue(kind)
        const [job] = await boss.fetch<JobData>(kind, { batchSize: 1, includeMetadata: true })
        if (!job) continue
        const touch = setInterval(() => void boss.touch(kind, job).catch(() => {}), (heartbeatS * 1000) / 2)
        try {
          const outcome = await execute(job)
          if (outcome?.status === 'completed') await boss.complete(kind, job, outcome.output)
          else if (outcome) await boss.fail(kind, job, outcome.output) // retried while attempts remain, unlike work()
        } finally {
          clearInterval(touch)
        }
        return true
      }
      return false
    },
    start() {
      started = (async () => {
        for (const kind of handlers.keys()) {
          await ensureQueue(kind)
          await boss.work(kind, {
            localConcurrency: opts.workers, pollingIntervalSeconds: pollS, perJobResults: true, includeMetadata: true,
            batchSize: opts.batchSize ?? 1, burstWhenBatchFull: (opts.batchSize ?? 1) > 1,
          },
            async (batch: JobWithMetadata<JobData>[]) => {
              const out = []
              for (const job of batch) {
                const outcome = await execute(job)
                if (outcome) out.push({ id: job.id, ...outcome })
              }
              return out
            })
          await boss.work(kind + DEAD, { pollingIntervalSeconds: pollS, includeMetadata: true }, (batch: JobWithMetadata<JobData>[]) => giveUp(kind, batch))
        }
      })()
    },
    async stop(graceMs = 10_000) {
      await started
      await boss.stop({ graceful: true, timeout: graceMs, close: false })
    },
    async close() {
      await boss.stop({ graceful: false, close: false }).catch(() => {})
    },
  }
  return jobs
}

/** How many of `ids` are in each status (the queue's own table, read in one statement). */
export async function statusCounts(impl: QueueImpl, db: Db, ids: string[]): Promise<Partial<Record<JobStatus, number>>> {
  const rows = impl === 'pg-boss'
    ? await db.sql<{ status: string; n: number }>`
        select state::text as status, count(*)::int as n from ${rawSql(BOSS_SCHEMA)}.job where id = any(${ids}::uuid[]) group by 1`
    : await db.sql<{ status: string; n: number }>`select status, count(*)::int as n from core.jobs where id = any(${ids}::uuid[]) group by 1`
  const counts: Partial<Record<JobStatus, number>> = {}
  for (const r of rows) {
    const status = impl === 'pg-boss' ? STATUS[r.status]! : (r.status as JobStatus)
    counts[status] = (counts[status] ?? 0) + r.n
  }
  return counts
}

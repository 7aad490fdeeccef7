// The job queue: a PostgreSQL table drained by in-process workers. Claims use FOR UPDATE SKIP LOCKED so two
// workers (in one process or several) never run one job; a lease, renewed while the job runs, lets another
// worker reclaim a job whose process died. WORKERS=0 runs each job inline, inside the request that enqueued it.
import { hostname } from 'node:os'
import { fragment, rawSql as raw, type Db, type Fragment } from './db'
import type { Logger } from './log'

export type JobStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled'

export interface JobStep {
  /** Human-readable progress line. */
  message: string
  /** Optional machine-readable name and state (document processing steps use both). */
  name?: string
  status?: string
  at: string
}

export interface JobRecord {
  id: string
  kind: string
  service: string
  owner_id: number | null
  title: string
  status: JobStatus
  payload: unknown
  steps: JobStep[]
  result: unknown
  error: string | null
  attempts: number
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
}

export interface JobContext<P = unknown> {
  readonly id: string
  readonly payload: P
  readonly ownerId: number | null
  /** Aborted when the job is cancelled or the process shuts down. */
  readonly signal: AbortSignal
  /** Appends a step, renews the lease, and throws JobCancelled when the job was cancelled meanwhile. */
  step(message: string, extra?: { name?: string; status?: string }): Promise<void>
  /** Throws JobCancelled when the job was cancelled (a cheap check between steps). */
  throwIfCancelled(): Promise<void>
  /**
   * Records the job's result inside the handler's own transaction: a job that already was cancelled throws
   * JobCancelled (rolling the transaction back), and from the commit on a cancel is refused, so a cancel can
   * never leave the job `cancelled` beside work that was saved.
   */
  recordResult(tx: Db, result: unknown): Promise<void>
}

export type JobHandler<P = any> = (ctx: JobContext<P>) => Promise<unknown>

/** Thrown inside a handler to stop a cancelled job; its transaction rolls back, nothing is half made. */
export class JobCancelled extends Error {
  constructor() {
    super('job cancelled')
  }
}
/** Thrown when another worker took the job over (this worker stalled past its lease). */
class JobLost extends Error {}

export interface EnqueueOptions {
  service: string
  ownerId?: number | null
  title?: string
  maxAttempts?: number
}

export interface Jobs {
  register<P>(kind: string, handler: JobHandler<P>): void
  /**
   * Inserts the job. With WORKERS=0 it runs it before returning, and the record returned is final. On a
   * transaction-bound queue (`bind`, or a Core from `core.transaction`) the job is inserted in that transaction,
   * so it exists only once it commits; the inline run (WORKERS=0) waits for the commit, and the record returned
   * is the inserted one.
   */
  enqueue(kind: string, payload: unknown, opts: EnqueueOptions): Promise<JobRecord>
  get(id: string): Promise<JobRecord | null>
  /** The owner's newest jobs of a service, of one kind when `kind` is given. */
  listForOwner(service: string, ownerId: number, limit?: number, kind?: string): Promise<JobRecord[]>
  /** Cancels a pending or running job: `cancelled`, `not_running` (finished, or its result already recorded) or `not_found`. */
  cancel(id: string): Promise<'cancelled' | 'not_running' | 'not_found'>
  /** Claims and runs one job; false when none was claimable. Workers loop on it; tests call it directly. */
  runOnce(workerId?: string): Promise<boolean>
  start(): void
  /** Stops claiming, waits up to graceMs for running jobs, then hands the rest back to the queue. */
  stop(graceMs?: number): Promise<void>
  readonly inline: boolean
  /**
   * The same queue with `enqueue`, `get`, `listForOwner` and `cancel` running on a transaction handle; what must
   * wait for the commit (the inline run, waking idle workers) is handed to `afterCommit`.
   */
  bind(tx: Db, afterCommit: (fn: () => Promise<void> | void) => void): Jobs
}

export interface JobsOptions {
  workers: number
  leaseMs?: number
  pollMs?: number
}

export const DEFAULT_LEASE_MS = 60_000
export const DEFAULT_POLL_MS = 1_000

const COLUMNS = 'id, kind, service, owner_id, title, status, payload, steps, result, error, attempts, created_at, started_at, finished_at'

export function createJobs(db: Db, log: Logger, opts: JobsOptions): Jobs {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS
  const pollMs = opts.pollMs ?? DEFAULT_POLL_MS
  const handlers = new Map<string, JobHandler>()
  // `cancelled`: cancel() was called in this process; the handler's next step throws JobCancelled at once.
  const running = new Map<string, { controller: AbortController; worker: string; done: Promise<void>; cancelled: boolean }>()
  const processId = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
  let stopping = false
  let loops: Promise<void>[] = []
  const waiting = new Set<() => void>()
  const wakeAll = () => {
    for (const resume of waiting) resume()
    waiting.clear()
  }
  const leaseInterval = `${leaseMs} milliseconds`

  const read = async (id: string, executor: Db = db) => {
    const [row] = await executor.sql<JobRecord>`select ${raw(COLUMNS)} from core.jobs where id = ${id}`
    return row ?? null
  }

  async function execute(job: JobRecord, worker: string): Promise<void> {
    const handler = handlers.get(job.kind)
    const controller = new AbortController()
    let finish!: () => void
    const done = new Promise<void>((r) => (finish = r))
    const run = { controller, worker, done, cancelled: false }
    running.set(job.id, run)
    // Checked before touching the database: on PGlite a cancel() waits for the handler's open transaction,
    // so the handler must learn of it here, not from the row.
    const throwIfAborted = () => {
      if (run.cancelled) throw new JobCancelled()
      if (controller.signal.aborted) throw new JobLost()
    }
    const check = (row: { status: string; locked_by: string | null } | undefined) => {
      if (!row || row.status === 'cancelled') {
        controller.abort()
        throw new JobCancelled()
      }
      if (row.status !== 'running' || row.locked_by !== worker) {
        controller.abort()
        throw new JobLost()
      }
    }
    const readState = async (executor: Db) => {
      const [row] = await executor.sql<{ status: string; locked_by: string | null }>`
        select status, locked_by from core.jobs where id = ${job.id}`
      return row
    }
    // Only the worker holding a running job writes to it: a cancelled job, or one another worker took over, gets
    // nothing more from this one (JobCancelled or JobLost instead).
    const updateOwn = async (executor: Db, changes: Fragment) => {
      throwIfAborted()
      const [row] = await executor.sql<{ id: string }>`
        update core.jobs set ${changes}
        where id = ${job.id} and status = 'running' and locked_by = ${worker}
        returning id`
      if (row) return
      check(await readState(executor))
      controller.abort()
      throw new JobLost()
    }
    const ctx: JobContext = {
      id: job.id,
      payload: job.payload,
      ownerId: job.owner_id,
      signal: controller.signal,
      async step(message, extra) {
        const step: JobStep = { message, ...extra, at: new Date().toISOString() }
        await updateOwn(db, fragment`steps = steps || jsonb_build_array(${step}::jsonb), lease_until = now() + ${leaseInterval}::interval`)
      },
      async throwIfCancelled() {
        throwIfAborted()
        check(await readState(db))
      },
      recordResult: (tx, result) => updateOwn(tx, fragment`result = ${{ value: result ?? null }}::jsonb -> 'value'`),
    }
    // Renew the lease while the handler works between steps.
    const heartbeat = setInterval(() => {
      db.sql<{ status: string }>`
        update core.jobs set lease_until = now() + ${leaseInterval}::interval
        where id = ${job.id} and locked_by = ${worker} and status = 'running' returning status`
        .then((rows) => {
          if (rows.length === 0) controller.abort()
        })
        .catch((err) => log.warn({ err, job: job.id }, 'job lease renewal failed'))
    }, Math.max(50, Math.floor(leaseMs / 3)))
    try {
      if (!handler) throw new Error(`no handler registered for job kind "${job.kind}"`)
      const result = await handler(ctx)
      await db.sql`
        update core.jobs set status = 'completed', result = ${{ value: result ?? null }}::jsonb -> 'value',
          finished_at = now(), lease_until = null
        where id = ${job.id} and status = 'running' and locked_by = ${worker}`
    } catch (err) {
      // Once aborted (cancelled, taken over, shutting down) the job's status is someone else's to set; an error
      // the abort provoked in the handler is not a failure.
      if (err instanceof JobCancelled || err instanceof JobLost || controller.signal.aborted) {
        log.info({ job: job.id, kind: job.kind }, run.cancelled || err instanceof JobCancelled ? 'job cancelled' : 'job interrupted')
      } else {
        const message = err instanceof Error ? err.message : String(err)
        log.warn({ err, job: job.id, kind: job.kind }, 'job failed')
        await db.sql`
          update core.jobs set status = 'failed', error = ${message.slice(0, 2000)}, finished_at = now(), lease_until = null
          where id = ${job.id} and status = 'running' and locked_by = ${worker}`
      }
    } finally {
      clearInterval(heartbeat)
      running.delete(job.id)
      finish()
    }
  }

  const inlineWorker = `${processId}:inline`
  const insert = async (executor: Db, kind: string, payload: unknown, o: EnqueueOptions) => {
    if (!handlers.has(kind)) throw new Error(`unknown job kind "${kind}"`)
    const inline = opts.workers === 0
    const [row] = await executor.sql<JobRecord>`
      insert into core.jobs (id, kind, service, owner_id, title, payload, max_attempts, status, locked_by, lease_until, attempts, started_at)
      values (${crypto.randomUUID()}, ${kind}, ${o.service}, ${o.ownerId ?? null}, ${o.title ?? ''}, ${{ value: payload ?? null }}::jsonb -> 'value',
        ${o.maxAttempts ?? 3},
        ${inline ? 'running' : 'pending'}, ${inline ? inlineWorker : null},
        ${inline ? new Date(Date.now() + leaseMs).toISOString() : null}, ${inline ? 1 : 0},
        ${inline ? new Date().toISOString() : null})
      returning ${raw(COLUMNS)}`
    return row!
  }

  // What reads and writes job rows on behalf of a caller, on the root handle or on the caller's transaction.
  const queue = (executor: Db, afterCommit: ((fn: () => Promise<void> | void) => void) | null) => ({
    async enqueue(kind: string, payload: unknown, o: EnqueueOptions): Promise<JobRecord> {
      const row = await insert(executor, kind, payload, o)
      if (afterCommit) {
        afterCommit(opts.workers === 0 ? () => execute(row, inlineWorker) : wakeAll)
        return row
      }
      if (opts.workers === 0) {
        await execute(row, inlineWorker)
        return (await read(row.id))!
      }
      wakeAll()
      return row
    },
    get: (id: string) => read(id, executor),
    async listForOwner(service: string, ownerId: number, limit = 20, kind?: string) {
      return executor.sql<JobRecord>`
        select ${raw(COLUMNS)} from core.jobs
        where service = ${service} and owner_id = ${ownerId} ${kind === undefined ? raw('') : fragment`and kind = ${kind}`}
        order by created_at desc limit ${limit}`
    },
    async cancel(id: string): Promise<'cancelled' | 'not_running' | 'not_found'> {
      // Tell a handler of this process first: on PGlite the update below waits until its transaction ends, and
      // the handler's next step or recordResult must refuse to go on meanwhile.
      const local = running.get(id)
      if (local) local.cancelled = true
      // A job that recorded its result (recordResult) has saved its work: too late to cancel.
      const [row] = await executor.sql<{ status: JobStatus }>`
        with target as (select id, status, result from core.jobs where id = ${id} for update),
        changed as (
          update core.jobs j set status = 'cancelled', finished_at = now(), lease_until = null
          from target where j.id = target.id and target.status in ('pending', 'running') and target.result is null
          returning j.id
        )
        select case when exists (select 1 from changed) then 'cancelled' else target.status end as status from target`
      const outcome = !row ? 'not_found' : row.status === 'cancelled' ? 'cancelled' : 'not_running'
      if (local) {
        if (outcome === 'cancelled') local.controller.abort()
        else local.cancelled = false
      }
      return outcome
    },
  })

  const jobs: Jobs = {
    inline: opts.workers === 0,
    register(kind, handler) {
      handlers.set(kind, handler as JobHandler)
    },
    ...queue(db, null),
    bind: (tx, afterCommit) => ({ ...jobs, ...queue(tx, afterCommit) }),
    async runOnce(workerId = `${processId}:w0`) {
      const kinds = [...handlers.keys()]
      if (kinds.length === 0) return false
      const [job] = await db.sql<JobRecord & { max_attempts: number }>`
        update core.jobs set status = 'running', locked_by = ${workerId}, attempts = attempts + 1,
          lease_until = now() + ${leaseInterval}::interval, started_at = coalesce(started_at, now())
        where id = (
          select id from core.jobs
          where (status = 'pending' or (status = 'running' and lease_until < now())) and kind = any(${kinds}::text[])
          order by created_at limit 1
          for update skip locked
        )
        returning ${raw(COLUMNS)}, max_attempts`
      if (!job) return false
      if (job.attempts > job.max_attempts) {
        await db.sql`
          update core.jobs set status = 'failed', finished_at = now(), lease_until = null,
            error = ${`abandoned after ${job.max_attempts} attempts: the worker running it stopped`}
          where id = ${job.id} and locked_by = ${workerId}`
        return true
      }
      if (job.attempts > 1) log.warn({ job: job.id, kind: job.kind, attempt: job.attempts }, 'job reclaimed after an expired lease')
      await execute(job, workerId)
      return true
    },
    start() {
      stopping = false
      loops = Array.from({ length: opts.workers }, (_, n) => (async () => {
        const worker = `${processId}:w${n}`
        while (!stopping) {
          let claimed = false
          try {
            claimed = await jobs.runOnce(worker)
          } catch (err) {
            log.error({ err }, 'job worker could not claim')
          }
          if (!claimed && !stopping) {
            await new Promise<void>((resolve) => {
              const resume = () => {
                clearTimeout(timer)
                waiting.delete(resume)
                resolve()
              }
              const timer = setTimeout(resume, pollMs)
              waiting.add(resume)
            })
          }
        }
      })())
    },
    async stop(graceMs = 10_000) {
      stopping = true
      wakeAll()
      const inFlight = [...running.entries()]
      if (inFlight.length > 0) {
        const all = Promise.all(inFlight.map(([, r]) => r.done))
        await Promise.race([all, Bun.sleep(graceMs)])
      }
      // Hand unfinished jobs back so another worker (or the next start) claims them; their attempt is not counted.
      for (const [id, r] of running) {
        r.controller.abort()
        await db.sql`
          update core.jobs set status = 'pending', locked_by = null, lease_until = null, attempts = greatest(attempts - 1, 0)
          where id = ${id} and locked_by = ${r.worker} and status = 'running'`
      }
      await Promise.race([Promise.all(loops), Bun.sleep(1000)])
      loops = []
    },
  }
  return jobs
}

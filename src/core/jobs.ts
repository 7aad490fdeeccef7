// The job queue: a PostgreSQL table drained by in-process workers. Claims use FOR UPDATE SKIP LOCKED so two
// workers (in one process or several) never run one job. A started queue keeps a heartbeat row in
// core.job_workers: a running job whose process stopped beating is reclaimed within a few heartbeats, and a live
// process's job is never taken. A lease, renewed while the job runs, covers holders without a heartbeat row.
// A reclaimed job sees what an earlier attempt committed (`ctx.recorded`) and resumes after it; a job that gives
// up (abandoned or failed) lets its handler settle what it was working on (`onGiveUp`) in the same transaction.
// WORKERS=0 runs each job inline, inside the request that enqueued it. What the rest of the app sees of it (records,
// a handler's context, the Jobs interface) is in src/core/jobs-api.ts, exported from here too.
import { hostname } from 'node:os'
import { fragment, quietly, rawSql as raw, type Db, type Fragment } from './db'
import type { Logger } from './log'
import {
  DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, DEFAULT_POLL_MS, JOB_ERROR_MAX, JobCancelled, STALE_HEARTBEATS,
  type EnqueueOptions, type GiveUpHandler, type GiveUpReason, type JobContext, type JobHandler, type JobRecord, type Jobs,
  type JobsOptions, type JobStatus, type JobStep,
} from './jobs-api'

export * from './jobs-api'

/** Thrown when another worker took the job over (this worker stalled past its lease). */
class JobLost extends Error {}

const COLUMNS = 'id, kind, service, owner_id, title, status, payload, steps, result, error, attempts, created_at, started_at, finished_at'

type ClaimedJob = JobRecord & { max_attempts: number }

export function createJobs(db: Db, log: Logger, opts: JobsOptions): Jobs {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS
  const pollMs = opts.pollMs ?? DEFAULT_POLL_MS
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS
  const handlers = new Map<string, JobHandler>()
  const giveUpHooks = new Map<string, GiveUpHandler>()
  // `cancelled`: cancel() was called in this process; the handler's next step throws JobCancelled at once.
  const running = new Map<string, { controller: AbortController; worker: string; done: Promise<void>; cancelled: boolean }>()
  const processName = `${hostname()}:${process.pid}`
  // Also this process's core.job_workers id: every job a worker of this queue claims names it (locked_process).
  const processId = `${processName}:${crypto.randomUUID().slice(0, 8)}`
  let stopping = false
  let loops: Promise<void>[] = []
  let heartbeat: { timer: ReturnType<typeof setInterval>; inFlight: Promise<void> } | null = null
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

  /**
   * Marks a job this worker holds failed and, in the same transaction, lets its handler settle what it was working
   * on. A hook that throws is logged and the job is failed without it, so a broken hook cannot keep a job alive.
   */
  async function giveUp(job: ClaimedJob, worker: string, reason: GiveUpReason): Promise<void> {
    const error = reason.kind === 'failed' ? reason.error
      : `abandoned after ${reason.attempts} attempts: the worker running it stopped`
    const markFailed = (executor: Db) => executor.sql<{ id: string }>`
      update core.jobs set status = 'failed', error = ${error.slice(0, JOB_ERROR_MAX)}, finished_at = now(), lease_until = null
      where id = ${job.id} and status = 'running' and locked_by = ${worker}
      returning id`
    const hook = giveUpHooks.get(job.kind)
    if (!hook) {
      await markFailed(db)
      return
    }
    try {
      await db.transaction(async (tx) => {
        const [own] = await markFailed(tx)
        if (!own) return // cancelled or taken over meanwhile: not this worker's to settle
        const outcome = await hook(tx, { id: job.id, payload: job.payload, ownerId: job.owner_id, recorded: job.result, reason })
        if (!outcome) return
        const step: JobStep = { message: outcome.message, name: outcome.name, status: outcome.status, at: new Date().toISOString() }
        // An abandoned job has no error of its own: the hook's message says what happened in the job's words.
        await tx.sql`
          update core.jobs set steps = steps || jsonb_build_array(${step}::jsonb)
            ${reason.kind === 'abandoned' ? fragment`, error = ${outcome.message.slice(0, JOB_ERROR_MAX)}` : raw('')}
          where id = ${job.id}`
      })
    } catch (err) {
      log.error({ err, job: job.id, kind: job.kind }, 'job give-up hook failed; the job is failed without it')
      await markFailed(db)
    }
  }

  async function execute(job: ClaimedJob, worker: string): Promise<void> {
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
      attempt: job.attempts,
      maxAttempts: job.max_attempts,
      recorded: job.result ?? null,
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
    const renewal = setInterval(() => {
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
        // The result the handler recorded in this attempt (if any) is what the hook should see.
        const [latest] = await db.sql<{ result: unknown }>`select result from core.jobs where id = ${job.id}`
        await giveUp({ ...job, result: latest?.result ?? null }, worker, { kind: 'failed', error: message })
      }
    } finally {
      clearInterval(renewal)
      running.delete(job.id)
      finish()
    }
  }

  // A database that rests (DbRest): polls and heartbeats are not use, and while it rests they wait. It rests only
  // when no job is pending or running, so none can be missed: a new one is written by a query that opens it again.
  const asleep = () => db.rest?.asleep === true
  const workWaiting = async () => running.size > 0
    || (await db.sql<{ waiting: boolean }>`
      select exists (select 1 from core.jobs where status in ('pending', 'running')) as waiting`)[0]!.waiting
  let releaseHold: (() => void) | null = null

  // This process's heartbeat row: written on start and every heartbeatMs; stale rows of stopped processes are
  // swept once they hold no running job (or once even their leases are over).
  const sweep = () => db.sql`
    delete from core.job_workers w
    where w.heartbeat_at < now() - w.heartbeat_ms * ${STALE_HEARTBEATS} * interval '1 millisecond'
      and (w.heartbeat_at < now() - ${leaseInterval}::interval
        or not exists (select 1 from core.jobs j where j.locked_process = w.id and j.status = 'running'))`
  const beat = async () => {
    await db.sql`
      insert into core.job_workers (id, process, workers, heartbeat_ms, started_at, heartbeat_at)
      values (${processId}, ${processName}, ${opts.workers}, ${heartbeatMs}, now(), now())
      on conflict (id) do update set heartbeat_at = now()`
    await sweep()
  }
  const beatSafely = () => quietly(db, beat).catch((err) => log.warn({ err }, 'job worker heartbeat failed'))

  const inlineWorker = `${processId}:inline`
  const insert = async (executor: Db, kind: string, payload: unknown, o: EnqueueOptions) => {
    if (!handlers.has(kind)) throw new Error(`unknown job kind "${kind}"`)
    const inline = opts.workers === 0
    const [row] = await executor.sql<ClaimedJob>`
      insert into core.jobs (id, kind, service, owner_id, title, payload, max_attempts, status, locked_by, locked_process, lease_until, attempts, started_at)
      values (${crypto.randomUUID()}, ${kind}, ${o.service}, ${o.ownerId ?? null}, ${o.title ?? ''}, ${{ value: payload ?? null }}::jsonb -> 'value',
        ${o.maxAttempts ?? 3},
        ${inline ? 'running' : 'pending'}, ${inline ? inlineWorker : null}, ${inline ? processId : null},
        ${inline ? new Date(Date.now() + leaseMs).toISOString() : null}, ${inline ? 1 : 0},
        ${inline ? new Date().toISOString() : null})
      returning ${raw(COLUMNS)}, max_attempts`
    return row!
  }
  const publicRecord = ({ max_attempts: _, ...row }: ClaimedJob): JobRecord => row

  // What reads and writes job rows on behalf of a caller, on the root handle or on the caller's transaction.
  const queue = (executor: Db, afterCommit: ((fn: () => Promise<void> | void) => void) | null) => ({
    async enqueue(kind: string, payload: unknown, o: EnqueueOptions): Promise<JobRecord> {
      const row = await insert(executor, kind, payload, o)
      if (afterCommit) {
        afterCommit(opts.workers === 0 ? () => execute(row, inlineWorker) : wakeAll)
        return publicRecord(row)
      }
      if (opts.workers === 0) {
        await execute(row, inlineWorker)
        return (await read(row.id))!
      }
      wakeAll()
      return publicRecord(row)
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
    register(kind, handler, o) {
      handlers.set(kind, handler as JobHandler)
      const hook = o?.onGiveUp ?? handler.onGiveUp
      if (hook) giveUpHooks.set(kind, hook as GiveUpHandler)
      else giveUpHooks.delete(kind)
    },
    ...queue(db, null),
    bind: (tx, afterCommit) => ({ ...jobs, ...queue(tx, afterCommit) }),
    async runOnce(workerId = `${processId}:w0`) {
      const kinds = [...handlers.keys()]
      if (kinds.length === 0) return false
      // Claimable: pending; or running and held by a process whose heartbeat went stale; or, for a holder with no
      // heartbeat row (an inline run, a queue never started, a swept row), running past its lease. A holder with a
      // fresh heartbeat keeps its job even when a lease renewal is late. This process never reclaims its own jobs:
      // it is alive, and on PGlite a burst of queries resolves without yielding to timers, so its heartbeat can
      // go stale while its workers run (test/queue-compare.test.ts, burst).
      const [job] = await quietly(db, () => db.sql<ClaimedJob>`
        update core.jobs set status = 'running', locked_by = ${workerId}, locked_process = ${processId}, attempts = attempts + 1,
          lease_until = now() + ${leaseInterval}::interval, started_at = coalesce(started_at, now())
        where id = (
          select j.id from core.jobs j
          left join core.job_workers w on w.id = j.locked_process
          where j.kind = any(${kinds}::text[])
            and (j.status = 'pending' or (j.status = 'running' and j.locked_process is distinct from ${processId} and case
              when w.id is null then j.lease_until < now()
              else w.heartbeat_at < now() - w.heartbeat_ms * ${STALE_HEARTBEATS} * interval '1 millisecond'
            end))
          order by j.created_at limit 1
          for update of j skip locked
        )
        returning ${raw(COLUMNS)}, max_attempts`)
      if (!job) return false
      if (job.attempts > job.max_attempts) {
        await giveUp(job, workerId, { kind: 'abandoned', attempts: job.max_attempts })
        return true
      }
      if (job.attempts > 1) log.warn({ job: job.id, kind: job.kind, attempt: job.attempts }, 'job reclaimed from a worker that stopped')
      await execute(job, workerId)
      return true
    },
    start() {
      stopping = false
      if (heartbeat) clearInterval(heartbeat.timer) // started twice: one heartbeat is enough
      // Registered before the loops claim, so a job they take is covered by the heartbeat from the start.
      const registered = beatSafely()
      const state = { timer: setInterval(() => asleep() || (state.inFlight = beatSafely()), heartbeatMs), inFlight: registered }
      heartbeat = state
      releaseHold?.()
      releaseHold = db.rest?.holdWhile(workWaiting) ?? null
      loops = Array.from({ length: opts.workers }, (_, n) => (async () => {
        await registered
        const worker = `${processId}:w${n}`
        while (!stopping) {
          let claimed = false
          try {
            claimed = !asleep() && await jobs.runOnce(worker)
          } catch (err) {
            log.error({ err }, 'job worker could not claim')
          }
          // Between two jobs the event loop gets a turn: on PGlite a job's queries resolve without one, so a burst of
          // jobs would otherwise hold off timers (the heartbeat) and requests until the queue is empty.
          if (claimed) await new Promise<void>((resolve) => setImmediate(resolve))
          else if (!stopping) {
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
      releaseHold?.()
      releaseHold = null
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
          update core.jobs set status = 'pending', locked_by = null, locked_process = null, lease_until = null,
            attempts = greatest(attempts - 1, 0)
          where id = ${id} and locked_by = ${r.worker} and status = 'running'`
      }
      await Promise.race([Promise.all(loops), Bun.sleep(1000)])
      loops = []
      if (heartbeat) {
        const { timer, inFlight: last } = heartbeat
        heartbeat = null
        clearInterval(timer)
        await last
        try {
          await sweep() // a job reclaimed since the last beat frees its dead holder's row now
          await db.sql`delete from core.job_workers where id = ${processId}`
        } catch (err) {
          log.warn({ err }, 'could not remove the job worker heartbeat row')
        }
      }
    },
  }
  return jobs
}

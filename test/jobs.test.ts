// The job queue (src/core/jobs.ts) on each database target: exactly-once claims under concurrency, lease
// reclaim after a crash, worker heartbeats, resuming from a recorded result, giving up, cancellation with rollback,
// failures, inline mode and shutdown hand-back. Real processes killed with SIGKILL: test/job-crash.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ConfigError, JOB_HEARTBEAT_MS_MIN, JOB_LEASE_MS_MAX, JOB_LEASE_MS_MIN, loadConfig } from '../src/config'
import type { Db } from '../src/core/db'
import {
  createJobs, DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, defineJob, JobCancelled, STALE_HEARTBEATS,
  type GiveUpContext, type JobHandler, type JobRecord, type Jobs, type JobsOptions,
} from '../src/core/jobs'
import { createLogger } from '../src/core/log'
import { databaseTargets, openCoreDb } from './support/app'
import { rejection, waitFor } from './support/wait'

const log = createLogger(process.env.LOG_LEVEL ?? 'silent')
const SERVICE = 'test'

/** Each test registers its own job kind, so claims never cross between tests. */
const uniqueKind = (name: string) => `test.${name}.${crypto.randomUUID().slice(0, 8)}`

describe('job configuration (JOB_LEASE_MS, JOB_HEARTBEAT_MS)', () => {
  const base = { DATA_DIR: '/tmp/jobs-config-test', JWT_SECRET: 'j'.repeat(40), DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1' }
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env })
    } catch (err) {
      if (err instanceof ConfigError) return err.problems
      throw err
    }
    throw new Error('loadConfig accepted the configuration')
  }

  it('defaults to a 60 s lease and a 5 s heartbeat, and reads both', () => {
    expect(loadConfig(base)).toMatchObject({ jobLeaseMs: DEFAULT_LEASE_MS, jobHeartbeatMs: DEFAULT_HEARTBEAT_MS })
    expect(DEFAULT_LEASE_MS).toBe(60_000)
    expect(DEFAULT_HEARTBEAT_MS).toBe(5_000)
    expect(loadConfig({ ...base, JOB_LEASE_MS: '2000', JOB_HEARTBEAT_MS: '250' })).toMatchObject({ jobLeaseMs: 2_000, jobHeartbeatMs: 250 })
  })

  it('refuses values that are not integers in range, and a heartbeat not shorter than the lease', () => {
    expect(problems({ JOB_LEASE_MS: String(JOB_LEASE_MS_MIN - 1) })).toEqual([expect.stringContaining('JOB_LEASE_MS must be an integer')])
    expect(problems({ JOB_LEASE_MS: String(JOB_LEASE_MS_MAX + 1) })).toEqual([expect.stringContaining('JOB_LEASE_MS must be an integer')])
    expect(problems({ JOB_HEARTBEAT_MS: String(JOB_HEARTBEAT_MS_MIN - 1) })).toEqual([expect.stringContaining('JOB_HEARTBEAT_MS must be an integer')])
    expect(problems({ JOB_HEARTBEAT_MS: 'soon' })).toEqual([expect.stringContaining('JOB_HEARTBEAT_MS must be an integer')])
    expect(problems({ JOB_LEASE_MS: '5000', JOB_HEARTBEAT_MS: '5000' })).toEqual(['JOB_HEARTBEAT_MS (5000) must be shorter than JOB_LEASE_MS (5000)'])
  })
})

/** A handler that holds its job until released: `started` once it runs, `runs()` how many times it ran. */
function heldJob() {
  const started = Promise.withResolvers<void>()
  const release = Promise.withResolvers<void>()
  let count = 0
  const handler: JobHandler = async () => {
    count++
    started.resolve()
    await release.promise
    return 'once'
  }
  return { handler, started, release, runs: () => count }
}

for (const target of databaseTargets()) {
  describe(`jobs [${target}]`, () => {
    let db: Db
    let close: () => Promise<void>
    const instances: Jobs[] = []
    /** A Jobs instance stands for one process; several on one database mimic several processes. */
    const jobsFor = (opts: JobsOptions) => {
      const jobs = createJobs(db, log, opts)
      instances.push(jobs)
      return jobs
    }
    const status = async (id: string) => (await db.sql<JobRecord>`select status from core.jobs where id = ${id}`)[0]?.status

    beforeAll(async () => {
      ;({ db, close } = await openCoreDb(target, 8))
      await db.exec(`
        create schema test;
        create table test.job_runs (job_id uuid not null, worker text not null);
        create table test.job_writes (job_id uuid not null, note text not null);`)
    }, 60_000)
    afterAll(async () => {
      for (const jobs of instances) await jobs.stop(100)
      await close()
    }, 30_000)

    describe('claims', () => {
      it('runs each of 30 jobs exactly once when four workers of two processes claim at the same time', async () => {
        const kind = uniqueKind('once')
        const record = (worker: string): JobHandler => async (ctx) => {
          await db.sql`insert into test.job_runs (job_id, worker) values (${ctx.id}, ${worker})`
          await ctx.step('recorded')
          return { worker }
        }
        const a = jobsFor({ workers: 2, leaseMs: 5_000 })
        const b = jobsFor({ workers: 2, leaseMs: 5_000 })
        a.register(kind, record('a'))
        b.register(kind, record('b'))
        const ids: string[] = []
        for (let n = 0; n < 30; n++) ids.push((await a.enqueue(kind, { n }, { service: SERVICE })).id)

        const drain = async (jobs: Jobs, worker: string) => {
          while (await jobs.runOnce(worker));
        }
        await Promise.all([drain(a, 'a:w0'), drain(a, 'a:w1'), drain(b, 'b:w0'), drain(b, 'b:w1')])

        const runs = await db.sql<{ job_id: string; n: number }>`
          select job_id::text as job_id, count(*)::int as n from test.job_runs
          where job_id = any(${ids}::uuid[]) group by job_id`
        expect(runs.length).toBe(30)
        expect(runs.filter((r) => r.n !== 1)).toEqual([])
        const final = await db.sql<{ status: string; attempts: number; n: number }>`
          select status, attempts, count(*)::int as n from core.jobs where id = any(${ids}::uuid[]) group by status, attempts`
        expect(final).toEqual([{ status: 'completed', attempts: 1, n: 30 }])
      })

      it('started workers drain the queue once each job, and wake on enqueue rather than waiting for the poll', async () => {
        const kind = uniqueKind('loops')
        const handler: JobHandler = async (ctx) => {
          await db.sql`insert into test.job_runs (job_id, worker) values (${ctx.id}, 'loop')`
        }
        // A long poll: the jobs only finish quickly if enqueue wakes the idle workers.
        const a = jobsFor({ workers: 2, leaseMs: 5_000, pollMs: 60_000 })
        const b = jobsFor({ workers: 2, leaseMs: 5_000, pollMs: 60_000 })
        a.register(kind, handler)
        b.register(kind, handler)
        a.start()
        b.start()
        await Bun.sleep(50) // let the loops find the queue empty and go to sleep
        const ids: string[] = []
        for (let n = 0; n < 20; n++) ids.push((await a.enqueue(kind, { n }, { service: SERVICE })).id)
        await waitFor(async () => {
          const [row] = await db.sql<{ n: number }>`
            select count(*)::int as n from core.jobs where id = any(${ids}::uuid[]) and status = 'completed'`
          return row!.n === 20
        }, 'all 20 jobs completed')
        await Promise.all([a.stop(1_000), b.stop(1_000)])
        const [twice] = await db.sql<{ n: number }>`
          select count(*)::int as n from (select job_id from test.job_runs where job_id = any(${ids}::uuid[])
          group by job_id having count(*) <> 1) x`
        expect(twice!.n).toBe(0)
      })

      it('claims the oldest job first', async () => {
        const kind = uniqueKind('order')
        const seen: number[] = []
        const jobs = jobsFor({ workers: 1 })
        jobs.register<{ n: number }>(kind, async (ctx) => void seen.push(ctx.payload.n))
        for (const n of [1, 2, 3]) await jobs.enqueue(kind, { n }, { service: SERVICE })
        while (await jobs.runOnce());
        expect(seen).toEqual([1, 2, 3])
      })

      it('only claims kinds this process has a handler for', async () => {
        const mine = uniqueKind('mine')
        const theirs = uniqueKind('theirs')
        const other = jobsFor({ workers: 1 })
        other.register(theirs, async () => 'theirs')
        const job = await other.enqueue(theirs, {}, { service: SERVICE })
        const jobs = jobsFor({ workers: 1 })
        jobs.register(mine, async () => 'mine')
        expect(await jobs.runOnce()).toBe(false)
        expect(await status(job.id)).toBe('pending')
      })
    })

    describe('leases', () => {
      it('reclaims a job whose worker died once its lease ran out, counting the attempt', async () => {
        const kind = uniqueKind('reclaim')
        const jobs = jobsFor({ workers: 1, leaseMs: 300 })
        jobs.register(kind, async (ctx) => {
          await ctx.step('ran again')
          return 'done'
        })
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        // A worker of another process claims it and dies: nobody renews its 300 ms lease.
        await db.sql`
          update core.jobs set status = 'running', locked_by = 'dead-process:w0', attempts = attempts + 1,
            started_at = now(), lease_until = now() + interval '300 milliseconds'
          where id = ${job.id}`
        expect(await jobs.runOnce('live:w0')).toBe(false) // the lease still holds
        expect(await status(job.id)).toBe('running')
        await Bun.sleep(400)
        expect(await jobs.runOnce('live:w0')).toBe(true)
        const done = (await jobs.get(job.id))!
        expect(done.status).toBe('completed')
        expect(done.attempts).toBe(2)
        expect(done.result).toBe('done')
        expect(done.steps.map((s) => s.message)).toEqual(['ran again'])
      })

      it('fails a job with an error once its worker died more than max_attempts times, without running it again', async () => {
        const kind = uniqueKind('abandoned')
        let ran = 0
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async () => void ran++)
        const job = await jobs.enqueue(kind, {}, { service: SERVICE, maxAttempts: 2 })
        await db.sql`
          update core.jobs set status = 'running', locked_by = 'dead-process:w0', attempts = 2,
            started_at = now(), lease_until = now() - interval '1 second'
          where id = ${job.id}`
        expect(await jobs.runOnce('live:w0')).toBe(true)
        const failed = (await jobs.get(job.id))!
        expect(failed.status).toBe('failed')
        expect(failed.error).toContain('abandoned after 2 attempts')
        expect(failed.finished_at).not.toBeNull()
        expect(ran).toBe(0)
        expect(await jobs.runOnce('live:w0')).toBe(false)
      })

      it('renews the lease while a handler works, so no other worker reclaims a live job', async () => {
        const kind = uniqueKind('heartbeat')
        const { handler, started, release, runs } = heldJob()
        const a = jobsFor({ workers: 1, leaseMs: 300 })
        const b = jobsFor({ workers: 1, leaseMs: 300 })
        a.register(kind, handler)
        b.register(kind, handler)
        const job = await a.enqueue(kind, {}, { service: SERVICE })
        const running = a.runOnce('a:w0')
        await started.promise
        await Bun.sleep(700) // more than two leases
        expect(await b.runOnce('b:w0')).toBe(false)
        release.resolve()
        expect(await running).toBe(true)
        expect(runs()).toBe(1)
        expect((await a.get(job.id))!.status).toBe('completed')
      })

      it('a stalled worker whose job was reclaimed stops at its next step and writes nothing into the new run', async () => {
        const kind = uniqueKind('stalled')
        const stalledWoke = Promise.withResolvers<void>()
        const stalledStarted = Promise.withResolvers<void>()
        const rescuerStarted = Promise.withResolvers<void>()
        const rescuerRelease = Promise.withResolvers<void>()
        let stalledSaw: unknown = null
        // Leases long enough that neither heartbeat renews or expires anything during the test.
        const stalled = jobsFor({ workers: 1, leaseMs: 60_000 })
        stalled.register(kind, async (ctx) => {
          stalledStarted.resolve()
          await stalledWoke.promise
          try {
            await ctx.step('stalled worker woke up')
          } catch (err) {
            stalledSaw = err
            throw err
          }
          return 'from the stalled worker'
        })
        const rescuer = jobsFor({ workers: 1, leaseMs: 60_000 })
        rescuer.register(kind, async (ctx) => {
          await ctx.step('rescuer started')
          rescuerStarted.resolve()
          await rescuerRelease.promise
          return 'from the rescuer'
        })
        const job = await stalled.enqueue(kind, {}, { service: SERVICE })
        const stalledRun = stalled.runOnce('stalled:w0')
        await stalledStarted.promise
        await db.sql`update core.jobs set lease_until = now() - interval '1 second' where id = ${job.id}`
        const rescue = rescuer.runOnce('rescuer:w0')
        await rescuerStarted.promise
        // The stalled worker wakes while the rescuer holds the job.
        stalledWoke.resolve()
        await stalledRun
        expect(stalledSaw).toBeInstanceOf(Error)
        expect(stalledSaw).not.toBeInstanceOf(JobCancelled)
        expect((await rescuer.get(job.id))!).toMatchObject({ status: 'running', attempts: 2 })
        rescuerRelease.resolve()
        expect(await rescue).toBe(true)
        const final = (await rescuer.get(job.id))!
        expect(final.status).toBe('completed')
        expect(final.result).toBe('from the rescuer')
        expect(final.steps.map((s) => s.message)).toEqual(['rescuer started'])
      })
    })

    describe('worker heartbeats', () => {
      const workerRows = () => db.sql<{ id: string; workers: number; heartbeat_ms: number; heartbeat_at: Date }>`
        select id, workers, heartbeat_ms, heartbeat_at from core.job_workers order by id`
      /** A process that beat every heartbeatMs and then stopped (killed), its last beat `agoMs` ago. */
      const stoppedProcess = async (agoMs: number, heartbeatMs = 100) => {
        const id = `dead-process-${crypto.randomUUID().slice(0, 8)}`
        await db.sql`
          insert into core.job_workers (id, process, workers, heartbeat_ms, heartbeat_at)
          values (${id}, 'gone:1', 1, ${heartbeatMs}, now() - ${`${agoMs} milliseconds`}::interval)`
        return id
      }
      /** The job as a worker of that process left it: running, its attempt counted, a lease of a minute ahead. */
      const heldBy = (jobId: string, processId: string) => db.sql`
        update core.jobs set status = 'running', locked_by = ${`${processId}:w0`}, locked_process = ${processId}, attempts = attempts + 1,
          started_at = now(), lease_until = now() + interval '60 seconds'
        where id = ${jobId}`

      it('start() registers the process with its worker count and beats every JOB_HEARTBEAT_MS; stop() removes its row', async () => {
        const before = new Set((await workerRows()).map((r) => r.id))
        const jobs = jobsFor({ workers: 2, heartbeatMs: 50 })
        jobs.register(uniqueKind('beating'), async () => 'idle')
        jobs.start()
        const row = await waitFor(async () => (await workerRows()).find((r) => !before.has(r.id)), 'the process registered')
        expect(row).toMatchObject({ workers: 2, heartbeat_ms: 50 })
        await waitFor(async () => (await workerRows()).find((r) => r.id === row.id && r.heartbeat_at > row.heartbeat_at), 'a later heartbeat')
        await jobs.stop(100)
        expect((await workerRows()).filter((r) => r.id === row.id)).toEqual([])
      })

      it(`reclaims a running job within ${STALE_HEARTBEATS} heartbeats of its process stopping, long before its lease ends`, async () => {
        const kind = uniqueKind('dead-heartbeat')
        const jobs = jobsFor({ workers: 1, leaseMs: 60_000 })
        jobs.register(kind, async (ctx) => ({ attempt: ctx.attempt }))
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        const dead = await stoppedProcess(0, 100)
        await heldBy(job.id, dead)
        expect(await jobs.runOnce('live:w0')).toBe(false) // its last beat is fresh: the process may be alive
        const stopped = Date.now()
        await waitFor(() => jobs.runOnce('live:w0'), 'the job reclaimed', 5_000)
        // Three missed beats of 100 ms, not the minute of its lease.
        expect(Date.now() - stopped).toBeLessThan(2_000)
        expect((await jobs.get(job.id))!).toMatchObject({ status: 'completed', attempts: 2, result: { attempt: 2 } })
      })

      it('never takes the job of a process that still beats, even when its lease renewal is late', async () => {
        const kind = uniqueKind('live-heartbeat')
        const { handler, started, release, runs } = heldJob()
        // A 60 s lease renews every 20 s, so nothing renews it during the test.
        const holder = jobsFor({ workers: 1, leaseMs: 60_000, heartbeatMs: 50, pollMs: 20 })
        const other = jobsFor({ workers: 1, leaseMs: 60_000 })
        holder.register(kind, handler)
        other.register(kind, handler)
        holder.start()
        const job = await holder.enqueue(kind, {}, { service: SERVICE })
        await started.promise
        await db.sql`update core.jobs set lease_until = now() - interval '1 second' where id = ${job.id}` // the renewal is late
        await Bun.sleep(300) // six heartbeats
        expect(await other.runOnce('other:w0')).toBe(false)
        release.resolve()
        await waitFor(async () => (await holder.get(job.id))!.status === 'completed', 'the job completed by its holder')
        expect(runs()).toBe(1)
        expect((await holder.get(job.id))!.attempts).toBe(1)
        await holder.stop(1_000)
      })

      it('sweeps a stopped process\'s row once it holds no running job; one holding a job stays until the job is reclaimed or its lease is over', async () => {
        const idle = await stoppedProcess(10_000)
        const holding = await stoppedProcess(10_000)
        const unhandled = uniqueKind('nobody-here') // no live process has a handler: the job waits for one
        const enqueuer = jobsFor({ workers: 1 })
        enqueuer.register(unhandled, async () => 'never here')
        const job = await enqueuer.enqueue(unhandled, {}, { service: SERVICE })
        await heldBy(job.id, holding)
        const sweeper = jobsFor({ workers: 1, heartbeatMs: 50, leaseMs: 60_000 })
        sweeper.register(uniqueKind('sweeper'), async () => 'idle')
        sweeper.start()
        await waitFor(async () => !(await workerRows()).some((r) => r.id === idle), 'the idle row swept')
        await Bun.sleep(150)
        expect((await workerRows()).some((r) => r.id === holding)).toBe(true)
        // Silent for longer than the lease: the job's lease is over too, so the lease rule takes over from here.
        await db.sql`update core.job_workers set heartbeat_at = now() - interval '2 minutes' where id = ${holding}`
        await waitFor(async () => !(await workerRows()).some((r) => r.id === holding), 'the holding row swept after the lease')
        await sweeper.stop(100)
      })
    })

    describe('resuming', () => {
      it('hands a run its attempt number, and a reclaimed run the result an earlier attempt recorded', async () => {
        const kind = uniqueKind('resume')
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async (ctx) => ({ attempt: ctx.attempt, maxAttempts: ctx.maxAttempts, recorded: ctx.recorded }))
        const first = await jobs.enqueue(kind, {}, { service: SERVICE, maxAttempts: 4 })
        expect(await jobs.runOnce('live:w0')).toBe(true)
        expect((await jobs.get(first.id))!.result).toEqual({ attempt: 1, maxAttempts: 4, recorded: null })

        const second = await jobs.enqueue(kind, {}, { service: SERVICE, maxAttempts: 4 })
        // An attempt saved its work with recordResult (the result commits with it), then its process died.
        await db.sql`
          update core.jobs set status = 'running', locked_by = 'dead-process:w0', attempts = 1, started_at = now(),
            result = ${{ saved: 41 }}::jsonb, lease_until = now() - interval '1 second'
          where id = ${second.id}`
        expect(await jobs.runOnce('live:w0')).toBe(true)
        expect((await jobs.get(second.id))!).toMatchObject({
          status: 'completed', attempts: 2, result: { attempt: 2, maxAttempts: 4, recorded: { saved: 41 } },
        })
      })
    })

    describe('giving up', () => {
      /** The job as a dead process left it after its last allowed attempt; the next claim abandons it. */
      const lastAttemptDied = (jobId: string, attempts: number, recorded: unknown = null) => db.sql`
        update core.jobs set status = 'running', locked_by = 'dead-process:w0', attempts = ${attempts}, started_at = now(),
          result = ${{ value: recorded }}::jsonb -> 'value', lease_until = now() - interval '1 second'
        where id = ${jobId}`

      it('an abandoned job\'s onGiveUp runs in the transaction that fails it: its writes, final step and message land together', async () => {
        const kind = uniqueKind('give-up-abandoned')
        const seen: GiveUpContext[] = []
        let ran = 0
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async () => void ran++, {
          onGiveUp: async (tx, job) => {
            seen.push(job)
            await tx.sql`insert into test.job_writes (job_id, note) values (${job.id}, 'settled')`
            return { message: 'Stopped after 2 attempts: start it again', name: 'done', status: 'failed' }
          },
        })
        const job = await jobs.enqueue(kind, { thing: 7 }, { service: SERVICE, ownerId: 5, maxAttempts: 2 })
        await lastAttemptDied(job.id, 2, { saved: 3 })
        expect(await jobs.runOnce('live:w0')).toBe(true)
        expect(ran).toBe(0)
        expect(seen).toEqual([{ id: job.id, payload: { thing: 7 }, ownerId: 5, recorded: { saved: 3 }, reason: { kind: 'abandoned', attempts: 2 } }])
        expect(await db.sql`select note from test.job_writes where job_id = ${job.id}`).toEqual([{ note: 'settled' }])
        const failed = (await jobs.get(job.id))!
        expect(failed).toMatchObject({ status: 'failed', error: 'Stopped after 2 attempts: start it again' })
        expect(failed.steps.at(-1)).toMatchObject({ message: 'Stopped after 2 attempts: start it again', name: 'done', status: 'failed' })
        expect(failed.finished_at).not.toBeNull()
      })

      it('a handler that throws gives up with reason failed: the job keeps the handler\'s error, the hook\'s step comes last', async () => {
        const kind = uniqueKind('give-up-failed')
        const reasons: unknown[] = []
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, defineJob(async (ctx) => {
          await ctx.step('working')
          throw new Error('the model answered nonsense')
        }, {
          onGiveUp: async (_tx, job) => {
            reasons.push(job.reason)
            return { message: 'Nothing was saved', status: 'failed' }
          },
        }))
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        await jobs.runOnce('live:w0')
        expect(reasons).toEqual([{ kind: 'failed', error: 'the model answered nonsense' }])
        const failed = (await jobs.get(job.id))!
        expect(failed).toMatchObject({ status: 'failed', error: 'the model answered nonsense' })
        expect(failed.steps.map((s) => s.message)).toEqual(['working', 'Nothing was saved'])
      })

      it('a hook that throws is rolled back, and the job still ends failed with its own error', async () => {
        const kind = uniqueKind('give-up-broken')
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async () => 'never', {
          onGiveUp: async (tx, job) => {
            await tx.sql`insert into test.job_writes (job_id, note) values (${job.id}, 'half settled')`
            throw new Error('the hook is broken')
          },
        })
        const job = await jobs.enqueue(kind, {}, { service: SERVICE, maxAttempts: 1 })
        await lastAttemptDied(job.id, 1)
        expect(await jobs.runOnce('live:w0')).toBe(true)
        expect(await db.sql`select note from test.job_writes where job_id = ${job.id}`).toEqual([])
        const failed = (await jobs.get(job.id))!
        expect(failed.status).toBe('failed')
        expect(failed.error).toContain('abandoned after 1 attempts')
        expect(await jobs.runOnce('live:w0')).toBe(false)
      })

      it('a cancelled or completed job never gives up', async () => {
        const kind = uniqueKind('give-up-not')
        let hooks = 0
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async () => 'done', { onGiveUp: async () => void hooks++ })
        const done = await jobs.enqueue(kind, {}, { service: SERVICE })
        await jobs.runOnce('live:w0')
        const cancelled = await jobs.enqueue(kind, {}, { service: SERVICE })
        await jobs.cancel(cancelled.id)
        expect(await jobs.runOnce('live:w0')).toBe(false)
        expect((await jobs.get(done.id))!.status).toBe('completed')
        expect(hooks).toBe(0)
      })
    })

    describe('cancel', () => {
      it('cancels a pending job: it becomes cancelled and never runs', async () => {
        const kind = uniqueKind('cancel-pending')
        let ran = 0
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async () => void ran++)
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        expect(await jobs.cancel(job.id)).toBe('cancelled')
        expect(await jobs.runOnce()).toBe(false)
        const final = (await jobs.get(job.id))!
        expect(final.status).toBe('cancelled')
        expect(final.finished_at).not.toBeNull()
        expect(ran).toBe(0)
      })

      it('cancels a running job: its next step throws JobCancelled and its transaction rolls back', async () => {
        const kind = uniqueKind('cancel-running')
        const inserted = Promise.withResolvers<void>()
        const proceed = Promise.withResolvers<void>()
        let stepThrew: unknown = null
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async (ctx) => {
          await db.transaction(async (tx) => {
            await tx.sql`insert into test.job_writes (job_id, note) values (${ctx.id}, 'first half')`
            inserted.resolve()
            await proceed.promise
            try {
              await ctx.step('first half written')
            } catch (err) {
              stepThrew = err
              throw err
            }
            await tx.sql`insert into test.job_writes (job_id, note) values (${ctx.id}, 'second half')`
          })
          return 'finished'
        })
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        const run = jobs.runOnce('w0')
        await inserted.promise
        const cancelling = jobs.cancel(job.id)
        proceed.resolve()
        expect(await cancelling).toBe('cancelled')
        expect(await run).toBe(true)
        expect(stepThrew).toBeInstanceOf(JobCancelled)
        const writes = await db.sql`select note from test.job_writes where job_id = ${job.id}`
        expect(writes).toEqual([])
        const final = (await jobs.get(job.id))!
        expect(final.status).toBe('cancelled')
        expect(final.result).toBeNull()
        expect(final.error).toBeNull()
      })

      it('a job cancelled from another process stops at its next step and stays cancelled', async () => {
        const kind = uniqueKind('cancel-remote')
        const started = Promise.withResolvers<void>()
        const proceed = Promise.withResolvers<void>()
        let stepThrew: unknown = null
        const worker = jobsFor({ workers: 1 })
        worker.register(kind, async (ctx) => {
          await ctx.step('one')
          started.resolve()
          await proceed.promise
          try {
            await ctx.step('two')
          } catch (err) {
            stepThrew = err
            throw err
          }
          return 'finished'
        })
        const web = jobsFor({ workers: 1 }) // another process: it cannot reach the worker's memory
        const job = await worker.enqueue(kind, {}, { service: SERVICE })
        const run = worker.runOnce('w0')
        await started.promise
        expect(await web.cancel(job.id)).toBe('cancelled')
        proceed.resolve()
        await run
        expect(stepThrew).toBeInstanceOf(JobCancelled)
        const final = (await worker.get(job.id))!
        expect(final.status).toBe('cancelled')
        expect(final.steps.map((s) => s.message)).toEqual(['one'])
      })

      it('a cancel that comes before recordResult rolls the handler\'s transaction back, so no work is saved', async () => {
        const kind = uniqueKind('cancel-before-result')
        const inserted = Promise.withResolvers<void>()
        const proceed = Promise.withResolvers<void>()
        let recordThrew: unknown = null
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async (ctx) => {
          await db.transaction(async (tx) => {
            await tx.sql`insert into test.job_writes (job_id, note) values (${ctx.id}, 'work')`
            inserted.resolve()
            await proceed.promise
            try {
              await ctx.recordResult(tx, { saved: true })
            } catch (err) {
              recordThrew = err
              throw err
            }
          })
          return { saved: true }
        })
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        const run = jobs.runOnce('w0')
        await inserted.promise
        const cancelling = jobs.cancel(job.id)
        proceed.resolve()
        expect(await cancelling).toBe('cancelled')
        await run
        expect(recordThrew).toBeInstanceOf(JobCancelled)
        expect(await db.sql`select note from test.job_writes where job_id = ${job.id}`).toEqual([])
        const final = (await jobs.get(job.id))!
        expect(final.status).toBe('cancelled')
        expect(final.result).toBeNull()
      })

      it('a cancel that comes once the result is recorded is refused: the saved work stays and the job completes', async () => {
        const kind = uniqueKind('cancel-after-result')
        const recorded = Promise.withResolvers<void>()
        const proceed = Promise.withResolvers<void>()
        const worker = jobsFor({ workers: 1 })
        worker.register(kind, async (ctx) => {
          await db.transaction(async (tx) => {
            await tx.sql`insert into test.job_writes (job_id, note) values (${ctx.id}, 'work')`
            await ctx.recordResult(tx, { saved: true })
            recorded.resolve()
            await proceed.promise
          })
          await ctx.step('saved')
          return { saved: true }
        })
        const web = jobsFor({ workers: 1 }) // the cancel request arrives in another process
        const job = await worker.enqueue(kind, {}, { service: SERVICE })
        const run = worker.runOnce('w0')
        await recorded.promise
        // It waits for the handler's transaction (the job row is locked), then finds the result recorded.
        const cancelling = web.cancel(job.id)
        proceed.resolve()
        expect(await cancelling).toBe('not_running')
        await run
        expect(await db.sql`select note from test.job_writes where job_id = ${job.id}`).toEqual([{ note: 'work' }])
        const final = (await worker.get(job.id))!
        expect(final.status).toBe('completed')
        expect(final.result).toEqual({ saved: true })
        expect(final.steps.map((step) => step.message)).toEqual(['saved'])
      })

      it('answers not_running for a finished job and not_found for an unknown id', async () => {
        const kind = uniqueKind('cancel-done')
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async () => 'done')
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        await jobs.runOnce()
        expect(await jobs.cancel(job.id)).toBe('not_running')
        expect((await jobs.get(job.id))!.status).toBe('completed')
        expect(await jobs.cancel(crypto.randomUUID())).toBe('not_found')
      })
    })

    describe('results and failures', () => {
      it('a handler may report steps from inside its own transaction', async () => {
        const kind = uniqueKind('step-in-tx')
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async (ctx) => {
          await db.transaction(async (tx) => {
            await tx.sql`insert into test.job_writes (job_id, note) values (${ctx.id}, 'part one')`
            await ctx.step('part one written')
            await ctx.throwIfCancelled()
            await tx.sql`insert into test.job_writes (job_id, note) values (${ctx.id}, 'part two')`
          })
          await ctx.step('committed')
          return 'both parts'
        })
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        expect(await jobs.runOnce()).toBe(true)
        const final = (await jobs.get(job.id))!
        expect(final.status).toBe('completed')
        expect(final.steps.map((s) => s.message)).toEqual(['part one written', 'committed'])
        const writes = await db.sql<{ note: string }>`select note from test.job_writes where job_id = ${job.id} order by note`
        expect(writes.map((w) => w.note)).toEqual(['part one', 'part two'])
      })

      it('a throwing handler ends failed with its error text; steps keep their order, names and timestamps', async () => {
        const kind = uniqueKind('fails')
        const jobs = jobsFor({ workers: 1 })
        jobs.register(kind, async (ctx) => {
          await ctx.step('reading the file')
          await ctx.step('extracting text', { name: 'extract', status: 'done' })
          await ctx.step('classifying')
          throw new Error('the model answered nonsense')
        })
        const before = Date.now()
        const job = await jobs.enqueue(kind, {}, { service: SERVICE, ownerId: 7, title: 'Classify' })
        await jobs.runOnce()
        const failed = (await jobs.get(job.id))!
        expect(failed.status).toBe('failed')
        expect(failed.error).toBe('the model answered nonsense')
        expect(failed.result).toBeNull()
        expect(failed.finished_at).not.toBeNull()
        expect(failed.steps.map((s) => s.message)).toEqual(['reading the file', 'extracting text', 'classifying'])
        expect(failed.steps[1]).toMatchObject({ name: 'extract', status: 'done' })
        const times = failed.steps.map((s) => Date.parse(s.at))
        expect(times.every((t) => Number.isFinite(t) && t >= before - 1_000)).toBe(true)
        expect([...times].sort((x, y) => x - y)).toEqual(times)
        // a failed job is not retried
        expect(await jobs.runOnce()).toBe(false)
      })

      it('stores the handler result and lists an owner\'s jobs newest first, only for that service and owner', async () => {
        const kind = uniqueKind('owner')
        const jobs = jobsFor({ workers: 1 })
        jobs.register<{ n: number }>(kind, async (ctx) => ({ doubled: ctx.payload.n * 2, items: ['a', 'b'] }))
        const ownerId = 1_000 + Math.floor(Math.random() * 1_000_000)
        const first = await jobs.enqueue(kind, { n: 1 }, { service: SERVICE, ownerId, title: 'First' })
        await Bun.sleep(5)
        const second = await jobs.enqueue(kind, { n: 2 }, { service: SERVICE, ownerId, title: 'Second' })
        await jobs.enqueue(kind, { n: 3 }, { service: SERVICE, ownerId: ownerId + 1 })
        await jobs.enqueue(kind, { n: 4 }, { service: 'other', ownerId })
        while (await jobs.runOnce());
        const listed = await jobs.listForOwner(SERVICE, ownerId)
        expect(listed.map((j) => j.id)).toEqual([second.id, first.id])
        expect(listed[0]).toMatchObject({ status: 'completed', title: 'Second', owner_id: ownerId, payload: { n: 2 } })
        expect(listed[0]!.result).toEqual({ doubled: 4, items: ['a', 'b'] })
      })

      it('refuses to enqueue a kind nobody registered', async () => {
        const jobs = jobsFor({ workers: 1 })
        expect((await rejection(jobs.enqueue(uniqueKind('unknown'), {}, { service: SERVICE }))).message).toContain('unknown job kind')
      })
    })

    describe('inline mode (WORKERS=0)', () => {
      it('runs the job inside enqueue and returns the final record with steps and result', async () => {
        const kind = uniqueKind('inline')
        const jobs = jobsFor({ workers: 0 })
        expect(jobs.inline).toBe(true)
        jobs.register<{ text: string }>(kind, async (ctx) => {
          await ctx.step('counting words', { name: 'count', status: 'running' })
          return { words: ctx.payload.text.split(' ').length }
        })
        const job = await jobs.enqueue(kind, { text: 'three little words' }, { service: SERVICE })
        expect(job.status).toBe('completed')
        expect(job.result).toEqual({ words: 3 })
        expect(job.attempts).toBe(1)
        expect(job.steps).toHaveLength(1)
        expect(job.steps[0]).toMatchObject({ message: 'counting words', name: 'count', status: 'running' })
        expect(job.started_at).not.toBeNull()
        expect(job.finished_at).not.toBeNull()
        expect(await status(job.id)).toBe('completed')
      })

      it('returns a failed record when the inline handler throws', async () => {
        const kind = uniqueKind('inline-fail')
        const jobs = jobsFor({ workers: 0 })
        jobs.register(kind, async () => {
          throw new Error('no text found in the PDF')
        })
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        expect(job.status).toBe('failed')
        expect(job.error).toBe('no text found in the PDF')
      })
    })

    describe('shutdown', () => {
      it('stop() hands a job still running after the grace period back as pending, and another worker completes it', async () => {
        const kind = uniqueKind('shutdown')
        const started = Promise.withResolvers<void>()
        let sawAbort = false
        const leaving = jobsFor({ workers: 1, pollMs: 20, leaseMs: 60_000 })
        // A well-behaved handler: it gives up when its signal aborts.
        leaving.register(kind, (ctx) => new Promise((_, reject) => {
          started.resolve()
          ctx.signal.addEventListener('abort', () => {
            sawAbort = true
            reject(new Error('aborted by shutdown'))
          })
        }))
        leaving.start()
        const job = await leaving.enqueue(kind, {}, { service: SERVICE })
        await started.promise
        expect(await status(job.id)).toBe('running')
        await leaving.stop(50)
        expect(sawAbort).toBe(true)
        await Bun.sleep(50) // give a late failure write the chance to land, if the core allowed one
        const handedBack = (await leaving.get(job.id))!
        expect(handedBack.status).toBe('pending')
        expect(handedBack.attempts).toBe(0)
        expect(handedBack.error).toBeNull()
        const [lock] = await db.sql<{ locked_by: string | null; lease_until: Date | null }>`
          select locked_by, lease_until from core.jobs where id = ${job.id}`
        expect(lock).toEqual({ locked_by: null, lease_until: null })

        const next = jobsFor({ workers: 1 })
        next.register(kind, async () => 'finished after restart')
        expect(await next.runOnce()).toBe(true)
        const final = (await next.get(job.id))!
        expect(final.status).toBe('completed')
        expect(final.result).toBe('finished after restart')
        expect(final.attempts).toBe(1)
      })

      it('stop() lets a job that finishes within the grace period complete', async () => {
        const kind = uniqueKind('graceful')
        const started = Promise.withResolvers<void>()
        const jobs = jobsFor({ workers: 1, pollMs: 20 })
        jobs.register(kind, async () => {
          started.resolve()
          await Bun.sleep(100)
          return 'made it'
        })
        jobs.start()
        const job = await jobs.enqueue(kind, {}, { service: SERVICE })
        await started.promise
        await jobs.stop(2_000)
        expect((await jobs.get(job.id))!).toMatchObject({ status: 'completed', result: 'made it' })
      })
    })
  })
}

// croner tasks: expiry sweeps and the plugins' schedules. Each run is guarded so one failing task logs and
// waits for its next turn instead of stopping the others. Every process starts the same schedules; a claimed row
// per scheduled time (core.schedule_runs) lets exactly one of them run each period.
import { Cron } from 'croner'
import type { Core, Schedule } from '../plugin'
import { quietly } from './db'

/**
 * A task that fires up to this late still belongs to the scheduled time before it (a busy event loop); later than
 * that, it claims the next scheduled time instead, which another process may also run: the tasks are idempotent, so
 * the cost is one repeated sweep. Keep it under half the shortest schedule's period (30 s).
 */
export const SCHEDULE_SLOT_TOLERANCE_MS = 5_000
/** Claims older than this are swept. */
export const SCHEDULE_RUNS_KEEP_DAYS = 7

/** A schedule with what it runs on (the Core, or its plugin's state) already bound. */
export interface BoundSchedule {
  name: string
  cron: string
  run(): Promise<void>
  skipWhileAsleep?: boolean
}

/** Claims one scheduled run for this process: true when no other process has it. */
export async function claimScheduledRun(core: Core, name: string, slot: Date): Promise<boolean> {
  const rows = await core.db.sql`
    insert into core.schedule_runs (name, slot) values (${name}, ${slot}) on conflict (name, slot) do nothing returning name`
  return rows.length > 0
}

export function startSchedules(core: Core, schedules: BoundSchedule[]): () => void {
  // A resting database (DbRest): a sweep opens it, but its queries are not use, so it rests again once done.
  const tasks = schedules.map((s) => {
    const task: Cron = new Cron(s.cron, { protect: true, catch: (err) => core.log.error({ err, schedule: s.name }, 'scheduled task failed') }, async () => {
      if (s.skipWhileAsleep && core.db.rest?.asleep) return
      // croner runs on the real clock: the slot is the scheduled time this firing belongs to.
      const slot = task.nextRun(new Date(Date.now() - SCHEDULE_SLOT_TOLERANCE_MS))
      await quietly(core.db, async () => {
        if (slot && !(await claimScheduledRun(core, s.name, slot))) return
        await s.run()
      })
    })
    return task
  })
  return () => tasks.forEach((t) => t.stop())
}

/** The core's own sweeps. */
export const coreSchedules: Schedule[] = [
  { name: 'core.kv.sweep', cron: '0 */5 * * * *', run: async (core) => void (await core.kv.sweep()) },
  { name: 'core.ratelimit.sweep', cron: '0 17 * * * *', run: async (core) => void (await core.rateLimit.sweep()) },
  // Vector collections get their ANN index, or a fresh one, when due (a build can take a minute: never in a request).
  { name: 'core.vectors.maintain', cron: '0 */10 * * * *', run: (core) => core.vectors.maintainAll() },
  // Mail the server could not send at once is retried when due (src/core/outbox.ts). Each message is also claimed
  // with FOR UPDATE SKIP LOCKED, so even two runs at once (a late firing) never send one message twice.
  // The outbox holds a resting database open while a message waits (src/core/outbox.ts), so it skips while it rests.
  {
    name: 'core.mail.outbox', cron: '*/30 * * * * *', skipWhileAsleep: true,
    run: async (core) => void (await core.mail.outbox?.deliverDue()),
  },
  // A write the process was killed in the middle of leaves its temporary file (src/core/storage.ts).
  { name: 'core.storage.sweep', cron: '0 23 * * * *', run: async (core) => void (await core.storage.sweepPartials()) },
  { name: 'core.mail.outbox.sweep', cron: '0 47 * * * *', run: async (core) => void (await core.mail.outbox?.sweep()) },
  {
    name: 'core.schedule.sweep', cron: '0 53 4 * * *',
    run: async (core) => void (await core.db.sql`
      delete from core.schedule_runs where claimed_at < ${new Date(core.now() - SCHEDULE_RUNS_KEEP_DAYS * 86_400_000)}`),
  },
]

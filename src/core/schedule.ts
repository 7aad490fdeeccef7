// croner tasks: expiry sweeps and the plugins' schedules. Each run is guarded so one failing task logs and
// waits for its next turn instead of stopping the others.
import { Cron } from 'croner'
import type { Core, Schedule } from '../plugin'

/** A schedule with what it runs on (the Core, or its plugin's state) already bound. */
export interface BoundSchedule {
  name: string
  cron: string
  run(): Promise<void>
}

export function startSchedules(core: Core, schedules: BoundSchedule[]): () => void {
  const tasks = schedules.map((s) =>
    new Cron(s.cron, { name: s.name, protect: true, catch: (err) => core.log.error({ err, schedule: s.name }, 'scheduled task failed') }, () => s.run()),
  )
  return () => tasks.forEach((t) => t.stop())
}

/** The core's own sweeps. */
export const coreSchedules: Schedule[] = [
  { name: 'core.kv.sweep', cron: '0 */5 * * * *', run: async (core) => void (await core.kv.sweep()) },
  { name: 'core.ratelimit.sweep', cron: '0 17 * * * *', run: async (core) => void (await core.rateLimit.sweep()) },
  // Vector collections get their ANN index, or a fresh one, when due (a build can take a minute: never in a request).
  { name: 'core.vectors.maintain', cron: '0 */10 * * * *', run: (core) => core.vectors.maintainAll() },
]

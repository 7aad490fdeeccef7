// croner tasks: expiry sweeps and the plugins' schedules. Each run is guarded so one failing task logs and
// waits for its next turn instead of stopping the others.
import { Cron } from 'croner'
import type { Core, Schedule } from '../plugin'

export function startSchedules(core: Core, schedules: Schedule[]): () => void {
  const tasks = schedules.map((s) =>
    new Cron(s.cron, { name: s.name, protect: true, catch: (err) => core.log.error({ err, schedule: s.name }, 'scheduled task failed') }, () => s.run(core)),
  )
  return () => tasks.forEach((t) => t.stop())
}

/** The core's own sweeps. */
export const coreSchedules: Schedule[] = [
  { name: 'core.kv.sweep', cron: '0 */5 * * * *', run: async (core) => void (await core.kv.sweep()) },
  { name: 'core.ratelimit.sweep', cron: '0 17 * * * *', run: async (core) => void (await core.rateLimit.sweep()) },
]

// Spec 3: administration of the clinical service (users, configuration, logs, milestones).
import { definePlugin, type Core } from '../../src/plugin'
import { clinicalPlugin, type ClinicalState } from '../clinical/exports'
import { adminRoutes } from './routes'
import { sweepAccessLog, sweepApiMetrics, sweepAuditLog, sweepUsageLog } from './services/logs'

/** The admin plugin's state: the Core, and the clinical plugin's (its guard, its audit writer). */
export interface AdminState {
  core: Core
  clinical: ClinicalState
}

export default definePlugin<AdminState>({
  name: 'admin',
  app: 'clinical',
  dir: import.meta.dir,
  setup: (core, use) => ({ core, clinical: use(clinicalPlugin) }),
  routes: adminRoutes,
  // spec 3, Logs: each log's retention (services/logs.ts). Every process runs them; a delete of what is past retention
  // is idempotent, so the later runs of the same minute find nothing left.
  schedules: [
    { name: 'admin.audit-log.sweep', cron: '0 5 3 * * *', run: async ({ core }) => void (await sweepAuditLog(core)) },
    { name: 'admin.access-log.sweep', cron: '0 15 3 * * *', run: async ({ core }) => void (await sweepAccessLog(core)) },
    { name: 'admin.api-metrics.sweep', cron: '0 25 * * * *', run: async ({ core }) => void (await sweepApiMetrics(core)) },
    { name: 'admin.usage-log.sweep', cron: '0 35 3 * * *', run: async ({ core }) => void (await sweepUsageLog(core)) },
  ],
})

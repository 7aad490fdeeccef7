// Spec 3: administration of the clinical service (users, configuration, logs, milestones).
import { definePlugin, type Core } from '../../src/plugin'
import { clinicalPlugin, type ClinicalState } from '../clinical/exports'
import { adminRoutes } from './routes'

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
})

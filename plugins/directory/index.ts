// Spec 3: the personal phone directory (extensions, pagers) of the clinical service's users.
import { definePlugin, type Core } from '../../src/plugin'
import { clinicalPlugin, type ClinicalState } from '../clinical/exports'
import { directoryRoutes } from './routes'

/** The directory plugin's state: the Core, and the clinical plugin's (its guard). */
export interface DirectoryState {
  core: Core
  clinical: ClinicalState
}

export default definePlugin<DirectoryState>({
  name: 'directory',
  app: 'clinical',
  dir: import.meta.dir,
  setup: (core, use) => ({ core, clinical: use(clinicalPlugin) }),
  routes: directoryRoutes,
})

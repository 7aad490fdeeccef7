// Spec 3: the learning hub of the clinical service (categories, articles and slide decks with quizzes) and its
// authoring.
import { definePlugin, type Core } from '../../src/plugin'
import { clinicalPlugin, type ClinicalState } from '../clinical/exports'
import { learningRoutes } from './routes'

/** The learning plugin's state: the Core, and the clinical plugin's (its guard, its audit writer). */
export interface LearningState {
  core: Core
  clinical: ClinicalState
}

export default definePlugin<LearningState>({
  name: 'learning',
  app: 'clinical',
  dir: import.meta.dir,
  setup: (core, use) => ({ core, clinical: use(clinicalPlugin) }),
  routes: learningRoutes,
})

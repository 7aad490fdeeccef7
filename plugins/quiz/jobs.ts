// Every job kind of the quiz service, by area.
import type { Core } from '../../src/plugin'
import { aiModelJobs } from './services/ai-models'
import { documentJobs } from './services/documents'
import { extractionJobs } from './services/extraction'

export const quizJobs = (core: Core) => ({ ...documentJobs(core), ...extractionJobs(core), ...aiModelJobs(core) })

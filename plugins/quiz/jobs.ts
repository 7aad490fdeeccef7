// Every job kind of the quiz service, by area.
import { aiModelJobs } from './services/ai-models'
import { documentJobs } from './services/documents'
import { extractionJobs } from './services/extraction'
import { tagJobs } from './services/tags'
import type { QuizState } from './state'

export const quizJobs = ({ core }: QuizState) => ({ ...documentJobs(core), ...extractionJobs(core), ...aiModelJobs(core), ...tagJobs(core) })

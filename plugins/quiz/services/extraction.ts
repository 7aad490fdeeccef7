// Spec 1, Quizzes: extraction jobs that turn a section's pages into a quiz.
import type { JobHandler } from '../../../src/core/jobs'
import type { Core } from '../../../src/plugin'

export const extractionJobs = (core: Core): Record<string, JobHandler> => {
  void core
  return {}
}

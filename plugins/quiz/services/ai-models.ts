// Spec 1, Admin: AI model configuration, and the embedding admin (test, regenerate).
import type { JobHandler } from '../../../src/core/jobs'
import type { Core } from '../../../src/plugin'

export const aiModelJobs = (core: Core): Record<string, JobHandler> => {
  void core
  return {}
}

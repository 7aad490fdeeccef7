// Spec 1, Documents: upload, processing (a job), visibility, sections.
import type { JobHandler } from '../../../src/core/jobs'
import type { Core } from '../../../src/plugin'

export const documentJobs = (core: Core): Record<string, JobHandler> => {
  void core
  return {}
}

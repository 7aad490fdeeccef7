// Spec 1, Tags: subjects, diseases and keywords on bank questions, and the AI classification job.
import type { JobHandler } from '../../../src/core/jobs'
import type { Core } from '../../../src/plugin'

export const tagJobs = (_core: Core): Record<string, JobHandler> => ({})

// TypeBox models of spec 1's Tags area: the tag lists, the classification job and the AI's structured answer.
// The OpenAPI docs come from them.
import { t } from 'elysia'
import { Int } from '../../../src/core/schema'
import { JobStatus, JobStepModel } from './extraction'

export const TAG_CLASSIFY_JOB_KIND = 'quiz.tags.classify'
export const TAG_CLASSIFY_JOB_TITLE = 'Tag classification'
/** Untagged questions sent to the AI in one call, and saved in one transaction. */
export const TAG_BATCH_SIZE = 20
/** The longest tag name kept; a longer one the AI gives is dropped, not cut. */
export const TAG_NAME_MAX = 60
/** Tags of one kind kept per question (the first ones the AI gives, after removing repeats). */
export const TAGS_PER_KIND_MAX = 5

export const TAG_KINDS = ['subject', 'disease', 'keyword'] as const
export type TagKind = (typeof TAG_KINDS)[number]

export const TagEntry = t.Object({
  id: Int(),
  name: t.String(),
  count: Int({ minimum: 1, description: 'Number of bank questions with this tag' }),
})
export type TagEntry = typeof TagEntry.static

export const TagsResponse = t.Object({
  subjects: t.Array(TagEntry, { description: 'Subject tags (e.g. Cardiology), most used first' }),
  diseases: t.Array(TagEntry, { description: 'Disease tags (e.g. Myocardial infarction), most used first' }),
  keywords: t.Array(TagEntry, { description: 'Keyword tags (e.g. Troponin), most used first' }),
})
export type TagsResponse = typeof TagsResponse.static

export const ClassifyStarted = t.Object({
  job_id: t.String({ format: 'uuid' }),
  status: t.Literal('started', { description: 'Always `started`: poll GET /api/tags/status/{job_id}' }),
})

export const TagJobParams = t.Object({ job_id: t.String({ format: 'uuid' }) })

export const TagJobStatus = t.Object({
  job_id: t.String({ format: 'uuid' }),
  status: JobStatus,
  steps: t.Array(JobStepModel, { description: 'Progress lines in order: one per batch, then a summary' }),
  error: t.Nullable(t.String({ description: 'Why the job failed; null unless failed' })),
})
export type TagJobStatus = typeof TagJobStatus.static

// The AI's answer (structured output). Loose on purpose past its shape: every name is checked and normalised
// afterwards (trimmed, blank and over-long ones dropped, repeats removed, at most TAGS_PER_KIND_MAX per kind).
export const AiTaggedQuestion = t.Object({
  id: t.Integer({ description: 'The id of the question, as given' }),
  subjects: t.Array(t.String(), { description: 'Medical subjects or specialties the question belongs to, e.g. "Cardiology"' }),
  diseases: t.Array(t.String(), { description: 'Diseases or conditions the question is about, e.g. "Heart failure"; empty if none' }),
  keywords: t.Array(t.String(), { description: 'Short key terms: drugs, tests, signs, mechanisms, e.g. "Troponin"' }),
})
export type AiTaggedQuestion = typeof AiTaggedQuestion.static
export const AiTagAnswer = t.Object({ questions: t.Array(AiTaggedQuestion) })

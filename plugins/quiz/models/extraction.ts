// TypeBox models of spec 1's Quizzes area (creation by extraction, extraction jobs); the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

export const TITLE_MAX = 200
export const TIME_LIMIT_MAX_MINUTES = 24 * 60
export const LAST_STEP_MAX = 80 // spec 1, limits: last_step in job listings truncated to 80 characters
export const EXTRACTION_JOB_KIND = 'quiz.extract'

export const EXTRACTION_MODES = ['standard', 'questions_only', 'two_step', 'regex', 'ai_decide', 'generate'] as const
export type ExtractionMode = (typeof EXTRACTION_MODES)[number]
export const DEFAULT_EXTRACTION_MODE: ExtractionMode = 'standard'

export const QuizMode = t.Union([t.Literal('timed'), t.Literal('learning')], { description: '`timed` or `learning`' })
export type QuizMode = typeof QuizMode.static

export const ExtractionMode = t.Union([
  t.Literal('standard'), t.Literal('questions_only'), t.Literal('two_step'), t.Literal('regex'), t.Literal('ai_decide'), t.Literal('generate'),
], {
  description: 'How questions are taken from the section; see the endpoint description. Default `standard`.',
})

/** One multiple-choice question as extraction produces it (the parser and every AI mode). */
export const ExtractedQuestion = t.Object({
  question_text: t.String({ description: 'The question stem' }),
  options: t.Array(t.String(), { description: 'The answer options, in order, without their letters' }),
  correct_answer: t.String({ description: 'The correct option: its exact text, or its letter (A = first option)' }),
  explanation: t.String({ description: 'Why the answer is correct; empty when the source gives none' }),
})
export type ExtractedQuestion = typeof ExtractedQuestion.static

export const CreateQuizBody = t.Object({
  section_id: RowId('The section whose pages are extracted; its document must be ready'),
  title: t.String({ minLength: 1, maxLength: TITLE_MAX }),
  mode: QuizMode,
  time_limit_minutes: t.Optional(t.Nullable(t.Integer({ minimum: 1, maximum: TIME_LIMIT_MAX_MINUTES, description: 'For timed quizzes' }))),
  model_id: t.Optional(t.Nullable(RowId('An AI model configuration id (task extraction); null: the default extraction model'))),
  question_category_id: t.Optional(t.Nullable(RowId('Question category given to every extracted question'))),
  extraction_mode: t.Optional(t.Nullable(ExtractionMode)),
})
export type CreateQuizBody = typeof CreateQuizBody.static

export const JobStarted = t.Object({
  job_id: t.String({ format: 'uuid' }),
  status: t.Literal('pending', { description: 'Always `pending`: poll GET /api/quizzes/job/{job_id}' }),
})

export const JobStatus = t.Union([t.Literal('pending'), t.Literal('running'), t.Literal('completed'), t.Literal('failed'), t.Literal('cancelled')])

export const JobStepModel = t.Object({
  message: t.String({ description: 'Human-readable progress line' }),
  at: t.String({ format: 'date-time' }),
}, { additionalProperties: true })

export const JobListItem = t.Object({
  job_id: t.String({ format: 'uuid' }),
  title: t.String(),
  status: JobStatus,
  steps_count: Int(),
  last_step: t.String({ maxLength: LAST_STEP_MAX, description: 'The latest step, cut to 80 characters; empty before the first step' }),
  quiz_id: t.Nullable(Int({ description: 'Set when completed' })),
})

export const JobDetail = t.Object({
  job_id: t.String({ format: 'uuid' }),
  title: t.String(),
  status: JobStatus,
  steps: t.Array(JobStepModel),
  quiz_id: t.Optional(Int({ description: 'Present when completed' })),
  error: t.Optional(t.String({ description: 'Present when failed' })),
})

export const JobIdParams = t.Object({ job_id: t.String({ format: 'uuid' }) })
export const CancelledResponse = t.Object({ status: t.Literal('cancelled') })

// The AI's answers (structured output). Loose on purpose: each question is checked and normalised afterwards,
// and an invalid one is dropped and counted rather than failing the whole answer.
export const AiQuestion = t.Object({
  question_text: t.String({ description: 'The question stem, without its number' }),
  options: t.Array(t.String(), { description: 'Answer options without letters, e.g. ["Paris", "Rome"]' }),
  correct_answer: t.String({ description: 'The exact text of the correct option' }),
  explanation: t.Optional(t.String({ description: 'Why the answer is correct' })),
})
export type AiQuestion = typeof AiQuestion.static
export const AiQuestionList = t.Object({ questions: t.Array(AiQuestion) })
export const AiQuestionBlocks = t.Object({
  blocks: t.Array(t.String(), { description: 'Each multiple-choice question of the text, copied verbatim with its options, answer and explanation' }),
})
export const AiDecision = t.Object({
  decision: t.Union([t.Literal('extract'), t.Literal('generate')], { description: 'extract: the text contains questions; generate: it is teaching material' }),
  reason: t.String({ description: 'One short sentence' }),
})

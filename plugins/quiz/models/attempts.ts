// TypeBox models of the quiz service's Attempts area: attempts, their graded answers, the dashboard and history,
// and the saved progress of an attempt under way. The OpenAPI docs come from them.
import type { IntegerOptions, TSchema } from '@sinclair/typebox'
import { t } from 'elysia'
import { INT4_MAX, Int, RowId } from '../../../src/core/schema'
import { OPTION_TEXT_MAX } from './quizzes'

export const ANSWERS_MAX = 1000

const Id = RowId()
export const AttemptParams = t.Object({ attempt_id: Id })

export const StartQuery = t.Object({
  quiz_id: RowId('The quiz to attempt'),
  fresh: t.Optional(t.Boolean({ default: false, description: 'true: always start a new attempt instead of resuming' })),
})
export const QuizIdQuery = t.Object({ quiz_id: RowId('The quiz') })
export const AttemptListQuery = t.Object({ quiz_id: t.Optional(RowId('Only the attempts on this quiz')) })

export const AttemptResponse = t.Object({
  id: Int(),
  quiz_id: Int(),
  score: Int({ description: 'Correct answers; 0 while incomplete' }),
  total_questions: Int({ description: 'Questions in the quiz at start; on submit, the questions graded' }),
  percentage: t.Number({ description: '100 * score / total_questions, one decimal; 0 while incomplete or with no questions' }),
  started_at: t.String({ format: 'date-time' }),
  completed_at: t.Nullable(t.String({ format: 'date-time', description: 'null while incomplete' })),
}, { title: 'AttemptResponse' })
export type AttemptResponse = typeof AttemptResponse.static

export const AttemptAnswer = t.Object({
  question_id: Int(),
  question_text: t.String(),
  options: t.Array(t.String()),
  user_answer: t.Nullable(t.String({ description: 'null when left unanswered' })),
  correct_answer: t.String(),
  is_correct: t.Boolean({ description: 'false for an unanswered question' }),
  explanation: t.String(),
})
export type AttemptAnswer = typeof AttemptAnswer.static

export const AttemptDetail = t.Object({
  ...AttemptResponse.properties,
  answers: t.Array(AttemptAnswer, { description: 'In quiz order; empty while the attempt is incomplete' }),
}, { title: 'AttemptDetail' })
export type AttemptDetail = typeof AttemptDetail.static

export const SubmitBody = t.Object({
  answers: t.Array(t.Object({
    question_id: RowId('A question of the attempt\'s quiz'),
    user_answer: t.Nullable(t.String({ maxLength: OPTION_TEXT_MAX, description: 'The chosen option\'s text; null or absent counts as unanswered' })),
  }), { maxItems: ANSWERS_MAX, description: 'At most one entry per question; questions left out count as unanswered (incorrect)' }),
})
export type SubmitBody = typeof SubmitBody.static

export const InProgressItem = t.Object({
  attempt_id: Int(),
  quiz_id: Int(),
  quiz_title: t.String(),
  total_questions: Int(),
  started_at: t.String({ format: 'date-time' }),
})
export type InProgressItem = typeof InProgressItem.static

export const QuizStat = t.Object({
  quiz_id: Int(),
  quiz_title: t.String(),
  attempts_count: Int(),
  best_score: t.Number({ description: 'Best percentage' }),
  latest_score: t.Number({ description: 'Percentage of the most recent completed attempt' }),
  average_score: t.Number({ description: 'Mean percentage, one decimal' }),
})
export type QuizStat = typeof QuizStat.static

export const Dashboard = t.Object({
  total_documents: Int({ description: 'Documents the caller can see: all for moderators, their own for others' }),
  total_quizzes: Int({ description: 'Distinct quizzes with a completed attempt' }),
  total_attempts: Int({ description: 'Completed attempts' }),
  average_score: t.Number({ description: 'Mean percentage over completed attempts, one decimal; 0 with none' }),
  quiz_stats: t.Array(QuizStat),
})
export type Dashboard = typeof Dashboard.static

export const HistoryEntry = t.Object({
  quiz_id: Int(),
  title: t.String(),
  attempts: t.Array(t.Object({
    attempt_id: Int(),
    date: t.String({ format: 'date-time', description: 'When the attempt was completed' }),
    percentage: t.Number(),
    score: Int(),
    total: Int(),
  }), { description: 'Completed attempts, oldest first' }),
})
export type HistoryEntry = typeof HistoryEntry.static

/**
 * Saved progress, with its whole numbers as `integer` makes them: the body of PUT /api/attempts/progress takes
 * Elysia's t.Integer (a string of digits too, as any request), the answer of GET the plain integers it sends.
 */
const savedProgress = <I extends TSchema>(integer: (options: IntegerOptions) => I) => t.Object({
  quiz_id: integer({ minimum: 1, maximum: INT4_MAX, description: 'The quiz under way' }),
  attempt_id: integer({ minimum: 1, maximum: INT4_MAX, description: 'The caller\'s incomplete attempt on that quiz' }),
  answers: t.Record(t.String({ pattern: '^[1-9][0-9]{0,9}$' }), t.String({ maxLength: OPTION_TEXT_MAX }), {
    additionalProperties: false, maxProperties: ANSWERS_MAX, description: 'Question id to chosen answer',
  }),
  current_idx: integer({ minimum: 0, maximum: ANSWERS_MAX, description: 'Index of the question on screen' }),
  mode: t.String({ minLength: 1, maxLength: 20, description: 'The player mode, e.g. timed or learning' }),
  voice: t.Nullable(t.String({ maxLength: 200 })),
  time_left: t.Nullable(integer({ description: 'Seconds left on the timer when saved' })),
  started_at: t.Nullable(t.String({ format: 'date-time', description: 'When the timer started (ISO timestamp)' })),
  total_time: t.Nullable(integer({ minimum: 0, maximum: 31_536_000, description: 'The timer\'s full length in seconds' })),
}, { title: 'SavedProgress' })
export const SavedProgress = savedProgress(t.Integer)
export const SavedProgressAnswer = savedProgress(Int)
export type SavedProgress = typeof SavedProgress.static

export const SavedResponse = t.Object({ saved: t.Literal(true) })
export const SessionHeaders = t.Object({
  'x-quiz-session': t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Identifies the device for the 30-second progress lock' })),
}, { additionalProperties: true }) // the other headers (Authorization) stay for the role guard

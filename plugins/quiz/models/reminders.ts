// TypeBox models of the spaced-repetition reminders: the caller's due questions, a review quiz built from them, and
// the answer to one due question (which moves its schedule).
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'
import { OPTION_TEXT_MAX, QuizAnsweredQuestion } from './quizzes'

export const DUE_LIMIT_DEFAULT = 50
export const DUE_LIMIT_MAX = 200

export const DueQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: DUE_LIMIT_MAX, default: DUE_LIMIT_DEFAULT, description: `At most this many questions (default ${DUE_LIMIT_DEFAULT}, maximum ${DUE_LIMIT_MAX})` })),
})

export const DueQuestion = t.Object({
  question_id: Int(),
  question_text: t.String(),
  due: t.String({ format: 'date-time' }),
  quiz_id: t.Nullable(Int({ description: 'The quiz of the caller\'s latest attempt that answered this question; null when none is left' })),
})
export type DueQuestion = typeof DueQuestion.static

export const DueResponse = t.Object({
  count: Int({ description: 'How many of the caller\'s questions are due now (all of them, not only the listed ones)' }),
  next_due: t.Nullable(t.String({ format: 'date-time', description: 'The earliest due time of any of the caller\'s cards (in the past when some are due); null with no cards' })),
  questions: t.Array(DueQuestion, { description: 'Due questions, most overdue first' }),
})
export type DueResponse = typeof DueResponse.static

export const ReviewQuiz = t.Object({
  title: t.String(),
  mode: t.Literal('learning'),
  questions_count: Int(),
  questions: t.Array(QuizAnsweredQuestion, { description: 'The due questions, most overdue first, with answers and explanations' }),
}, { title: 'ReviewQuiz', description: 'A learning view of the caller\'s due questions; nothing is stored' })
export type ReviewQuiz = typeof ReviewQuiz.static

export const ReviewAnswerBody = t.Object({
  question_id: RowId('A question on the caller\'s review schedule'),
  answer: t.Nullable(t.String({ maxLength: OPTION_TEXT_MAX, description: 'The chosen option\'s exact text; null: "I don\'t know" (rated as wrong)' })),
})
export type ReviewAnswerBody = typeof ReviewAnswerBody.static

export const ReviewAnswerResponse = t.Object({
  question_id: Int(),
  is_correct: t.Boolean(),
  correct_answer: t.String(),
  explanation: t.String(),
  next_due: t.String({ format: 'date-time', description: 'When the question is due again after this answer' }),
}, { title: 'ReviewAnswer' })
export type ReviewAnswerResponse = typeof ReviewAnswerResponse.static

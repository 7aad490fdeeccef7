// TypeBox models of spec 1's Quizzes area past creation: reading, editing, publishing and the trash of quizzes,
// and the edit and removal of their (shared) questions. The OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'
import { QuizMode, TITLE_MAX } from './extraction'

export const QUESTION_TEXT_MAX = 10_000
export const EXPLANATION_MAX = 10_000
export const OPTION_TEXT_MAX = 2_000
export const OPTIONS_MIN = 2
export const OPTIONS_MAX = 20
export const QUESTION_TYPE_MAX = 50

const Id = RowId()
export const QuizParams = t.Object({ quiz_id: Id })
export const QuizQuestionParams = t.Object({ quiz_id: Id, question_id: Id })

export const QuizResponse = t.Object({
  id: Int(),
  section_id: t.Nullable(Int({ description: 'The section the quiz was extracted from; null when that section was deleted or the quiz was built otherwise' })),
  user_id: Int({ description: 'The user who created the quiz' }),
  title: t.String(),
  questions_count: Int(),
  mode: QuizMode,
  time_limit_minutes: t.Nullable(Int()),
  is_published: Int({ minimum: 0, maximum: 1, description: '1 when published (regular users see it), else 0' }),
  category_id: t.Nullable(Int({ description: 'The quiz category the quiz is in; null when uncategorized' })),
  created_at: t.String({ format: 'date-time' }),
})
export type QuizResponse = typeof QuizResponse.static

const questionFields = {
  id: Int({ description: 'The bank question id' }),
  position: Int({ description: 'Place of the question in this quiz, from 1' }),
  question_text: t.String(),
  question_type: t.String({ description: '`multiple_choice` for extracted questions' }),
  options: t.Array(t.String(), { description: 'The answer options, in order' }),
  image_path: t.Nullable(t.String()),
}
const answerFields = {
  correct_answer: t.String({ description: 'The exact text of the correct option' }),
  explanation: t.String({ description: 'Why the answer is correct; may be empty' }),
}

export const QuizQuestion = t.Object(questionFields, { description: 'A question without its answer' })
export const QuizAnsweredQuestion = t.Object({ ...questionFields, ...answerFields }, { description: 'A question with its answer and explanation' })
export type QuizAnsweredQuestion = typeof QuizAnsweredQuestion.static

export const QuizDetail = t.Object({
  ...QuizResponse.properties,
  questions: t.Array(QuizQuestion, { description: 'In quiz order; no correct_answer or explanation' }),
}, { title: 'QuizDetail', description: 'A timed quiz as taken: its questions without answers' })
export const QuizLearningDetail = t.Object({
  ...QuizResponse.properties,
  questions: t.Array(QuizAnsweredQuestion, { description: 'In quiz order, each with correct_answer and explanation' }),
}, { title: 'QuizLearningDetail', description: 'A learning quiz, or any quiz read with study=true: questions with answers and explanations' })
export const QuizReview = t.Object({
  ...QuizResponse.properties,
  questions: t.Array(QuizAnsweredQuestion, { description: 'In quiz order, each with correct_answer and explanation' }),
}, { title: 'QuizReview', description: 'The quiz with full answers, for review' })
// The answered view first: a response is matched against the members in order.
export const QuizView = t.Union([QuizLearningDetail, QuizDetail])

export const QuizListQuery = t.Object({
  category_id: t.Optional(RowId('Only quizzes in this quiz category (an unknown category gives an empty list)')),
  uncategorized: t.Optional(t.Boolean({ default: false, description: 'true: only quizzes in no category; not together with category_id' })),
})
export type QuizListQuery = typeof QuizListQuery.static

export const StudyQuery = t.Object({
  study: t.Optional(t.Boolean({ default: false, description: 'true: answers and explanations are included whatever the quiz mode' })),
})
export const ShuffleQuery = t.Object({
  shuffle_options: t.Optional(t.Boolean({ default: true, description: 'Also shuffle the options of each question (default true)' })),
})
export const PublishQuery = t.Object({
  published: t.Optional(t.Boolean({ default: true, description: 'The published flag to set (default true)' })),
})
export const PublishResponse = t.Object({ quiz_id: Int(), is_published: Int({ minimum: 0, maximum: 1, description: '1 when published, else 0' }) })

export const RenameBody = t.Object({ title: t.String({ minLength: 1, maxLength: TITLE_MAX, description: 'Trimmed; must not be blank' }) })
export type RenameBody = typeof RenameBody.static

/** A question as the quiz's question list and the edit answer show it. */
export const QuestionItem = t.Object({
  id: Int(),
  question_text: t.String(),
  question_type: t.String(),
  options: t.Array(t.String()),
  correct_answer: t.String(),
  explanation: t.String(),
})
export type QuestionItem = typeof QuestionItem.static

export const QuestionPatch = t.Object({
  question_text: t.Optional(t.String({ minLength: 1, maxLength: QUESTION_TEXT_MAX })),
  options: t.Optional(t.Array(t.String({ minLength: 1, maxLength: OPTION_TEXT_MAX }), {
    minItems: OPTIONS_MIN, maxItems: OPTIONS_MAX, description: `${OPTIONS_MIN} to ${OPTIONS_MAX} distinct, non-blank options`,
  })),
  correct_answer: t.Optional(t.String({ maxLength: OPTION_TEXT_MAX, description: 'Must equal one of the options (after this change)' })),
  explanation: t.Optional(t.String({ maxLength: EXPLANATION_MAX })),
  question_type: t.Optional(t.String({ minLength: 1, maxLength: QUESTION_TYPE_MAX })),
})
export type QuestionPatch = typeof QuestionPatch.static

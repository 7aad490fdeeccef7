// TypeBox models of spec 1's Quiz categories and Question categories; the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'
import { TIME_LIMIT_MAX_MINUTES, TITLE_MAX } from './extraction'

export const CATEGORY_NAME_MAX = 100
export const CATEGORY_DESCRIPTION_MAX = 2_000

/**
 * An optional category id in a query string: a RowId, or `null` (or an empty value, as an HTML form sends it)
 * meaning none. Query strings carry text, so JSON's null arrives as the word `null`.
 */
export const OptionalIdQuery = (description: string) =>
  t.Optional(t.Union([RowId(), t.Literal('null'), t.Literal('')], { description }))
/** The id an OptionalIdQuery value names, or null. */
export const idOrNull = (value: number | 'null' | '' | undefined): number | null => (typeof value === 'number' ? value : null)

export const CategoryParams = t.Object({ category_id: RowId() })
export const QuizCategoryParams = t.Object({ quiz_id: RowId() })
export const QuestionCategoryParams = t.Object({ cat_id: RowId() })

const Name = t.String({ minLength: 1, maxLength: CATEGORY_NAME_MAX, description: `Trimmed; 1 to ${CATEGORY_NAME_MAX} characters, unique whatever the letter case` })
const Description = t.Nullable(t.String({ maxLength: CATEGORY_DESCRIPTION_MAX, description: `At most ${CATEGORY_DESCRIPTION_MAX} characters; trimmed, and a blank one is stored as null` }))

export const QuizCategoryBody = t.Object({ name: Name })
export type QuizCategoryBody = typeof QuizCategoryBody.static

export const QuizCategory = t.Object({
  id: Int(),
  name: t.String(),
  quiz_count: Int({ description: 'Quizzes in the category that are not in the trash' }),
}, { title: 'CategoryResponse' })

export const AssignQuery = t.Object({
  category_id: OptionalIdQuery('The quiz category to put the quiz in; absent, empty or `null`: the quiz becomes uncategorized'),
})
export const AssignResponse = t.Object({
  quiz_id: Int(),
  category_id: t.Nullable(Int({ description: 'The quiz\'s category now; null when uncategorized' })),
})

export const QuestionCategoryBody = t.Object({
  name: Name,
  description: t.Optional(Description),
})
export type QuestionCategoryBody = typeof QuestionCategoryBody.static

export const QuestionCategory = t.Object({
  id: Int(),
  name: t.String(),
  description: t.Nullable(t.String()),
  question_count: Int({ description: 'Bank questions in the category' }),
}, { title: 'QCatResponse' })

export const DeleteQuestionCategoryQuery = t.Object({
  move_to: OptionalIdQuery('The question category that receives this category\'s questions; absent, empty or `null`: they become uncategorized'),
})

export const CreateQuizQuery = t.Object({
  title: t.String({ minLength: 1, maxLength: TITLE_MAX, description: 'The new quiz\'s title; trimmed, must not be blank' }),
  mode: t.Optional(t.Union([t.Literal('timed'), t.Literal('learning')], { default: 'timed', description: '`timed` (default) or `learning`' })),
  time_limit_minutes: t.Optional(t.Union([
    t.Integer({ minimum: 1, maximum: TIME_LIMIT_MAX_MINUTES }), t.Literal('null'), t.Literal(''),
  ], { description: `Minutes, 1 to ${TIME_LIMIT_MAX_MINUTES}; absent, empty or \`null\`: no time limit` })),
})
export type CreateQuizQuery = typeof CreateQuizQuery.static

export const CreatedQuiz = t.Object({
  id: Int({ description: 'The new quiz' }),
  title: t.String(),
  questions_count: Int(),
})

// Spec 1, Quiz categories and Question categories. The lists are read by the category API, the bank's filters and
// the staff pages' category pickers.
import type { Core } from '../../../src/plugin'

export interface QuizCategory { id: number; name: string; quiz_count: number }
export interface QuestionCategory { id: number; name: string; description: string | null; question_count: number }

/** GET /api/categories/: every quiz category by name, with the number of its quizzes out of the trash. */
export async function listQuizCategories(core: Core): Promise<QuizCategory[]> {
  return core.db.sql<QuizCategory>`
    select c.id, c.name, (select count(*) from quiz.quizzes q where q.category_id = c.id and q.deleted_at is null)::int as quiz_count
    from quiz.quiz_categories c order by lower(c.name), c.id`
}

/** GET /api/question-categories/: every question category by name, with the number of its bank questions. */
export async function listQuestionCategories(core: Core): Promise<QuestionCategory[]> {
  return core.db.sql<QuestionCategory>`
    select c.id, c.name, c.description, (select count(*) from quiz.questions q where q.question_category_id = c.id)::int as question_count
    from quiz.question_categories c order by lower(c.name), c.id`
}

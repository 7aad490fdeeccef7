// Spec 1, Quiz categories and Question categories. The lists are read by the category API, the bank's filters and
// the staff pages' category pickers. Names are trimmed and unique whatever their letter case (unique indexes on
// lower(name) back that up against a race).
import { isUniqueViolation } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { createQuizFromQuestions } from './quizzes'

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

const quizCategoryNotFound = () => HttpError.notFound('category_not_found', 'Quiz category not found')
const questionCategoryNotFound = () => HttpError.notFound('question_category_not_found', 'Question category not found')
const nameTaken = (kind: string) => {
  const message = `A ${kind} with this name already exists`
  return new HttpError(409, 'category_name_taken', message, { name: message })
}

/** A name as stored: trimmed, and not blank (422 naming the field). */
function cleanName(name: string): string {
  const clean = name.trim()
  if (!clean) throw HttpError.unprocessable('invalid_input', 'The name must not be blank', { name: 'Required' })
  return clean
}
/** A description as stored: trimmed; blank or absent is null. */
const cleanDescription = (description: string | null | undefined): string | null => description?.trim() || null

/** POST /api/categories/: a new quiz category, empty. 409 when the name is taken, in any letter case. */
export async function createQuizCategory(core: Core, name: string): Promise<QuizCategory> {
  const clean = cleanName(name)
  const [row] = await core.db.sql<{ id: number; name: string }>`
    insert into quiz.quiz_categories (name) values (${clean}) on conflict do nothing returning id, name`
  if (!row) throw nameTaken('quiz category')
  return { ...row, quiz_count: 0 }
}

/** DELETE /api/categories/{id}: its quizzes (in the trash too) become uncategorized, by the foreign key's `set null`. */
export async function deleteQuizCategory(core: Core, categoryId: number): Promise<void> {
  const rows = await core.db.sql`delete from quiz.quiz_categories where id = ${categoryId} returning id`
  if (rows.length === 0) throw quizCategoryNotFound()
}

/**
 * PATCH /api/categories/quizzes/{quiz_id}: puts the quiz in a category, or (null) in none. A quiz in the trash is
 * hidden like an unknown one: 404. The category row is held until the change commits, so a concurrent delete of it
 * waits instead of breaking the foreign key.
 */
export async function setQuizCategory(core: Core, quizId: number, categoryId: number | null): Promise<{ quiz_id: number; category_id: number | null }> {
  return core.transaction(async (tx) => {
    if (categoryId !== null) {
      const [category] = await tx.db.sql`select id from quiz.quiz_categories where id = ${categoryId} for share`
      if (!category) throw quizCategoryNotFound()
    }
    const [quiz] = await tx.db.sql`
      update quiz.quizzes set category_id = ${categoryId} where id = ${quizId} and deleted_at is null returning id`
    if (!quiz) throw HttpError.notFound('quiz_not_found', 'Quiz not found')
    return { quiz_id: quizId, category_id: categoryId }
  })
}

async function findQuestionCategory(core: Core, categoryId: number): Promise<QuestionCategory | null> {
  const [row] = await core.db.sql<QuestionCategory>`
    select c.id, c.name, c.description, (select count(*) from quiz.questions q where q.question_category_id = c.id)::int as question_count
    from quiz.question_categories c where c.id = ${categoryId}`
  return row ?? null
}

/** One question category with its count (404 unknown). */
export async function getQuestionCategory(core: Core, categoryId: number): Promise<QuestionCategory> {
  const category = await findQuestionCategory(core, categoryId)
  if (!category) throw questionCategoryNotFound()
  return category
}

/** POST /api/question-categories/: a new, empty question category. 409 when the name is taken, in any letter case. */
export async function createQuestionCategory(core: Core, input: { name: string; description?: string | null }): Promise<QuestionCategory> {
  const name = cleanName(input.name)
  const description = cleanDescription(input.description)
  const [row] = await core.db.sql<{ id: number; name: string; description: string | null }>`
    insert into quiz.question_categories (name, description) values (${name}, ${description})
    on conflict do nothing returning id, name, description`
  if (!row) throw nameTaken('question category')
  return { ...row, question_count: 0 }
}

/**
 * PATCH /api/question-categories/{id}: a new name and, when given, a new description (null clears it; absent keeps
 * it). 404 unknown; 409 when another category has the name. One statement, so a unique violation is the clash.
 */
export async function updateQuestionCategory(core: Core, categoryId: number, input: { name: string; description?: string | null }): Promise<QuestionCategory> {
  const name = cleanName(input.name)
  const keepDescription = input.description === undefined
  const description = cleanDescription(input.description)
  let rows: Array<{ id: number }>
  try {
    rows = await core.db.sql<{ id: number }>`
      update quiz.question_categories
      set name = ${name}, description = case when ${keepDescription}::boolean then description else ${description}::text end
      where id = ${categoryId} returning id`
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken('question category')
    throw err
  }
  if (rows.length === 0) throw questionCategoryNotFound()
  return getQuestionCategory(core, categoryId)
}

/**
 * DELETE /api/question-categories/{id}?move_to=: in one transaction, the category's questions move to `moveTo` (or,
 * null, become uncategorized) and the category goes. 404 unknown category, 400 when moveTo is the category itself,
 * 404 unknown moveTo. Both rows are locked in id order, so two opposite moves cannot deadlock. Answers how many
 * questions moved.
 */
export async function deleteQuestionCategory(core: Core, categoryId: number, moveTo: number | null): Promise<{ moved: number }> {
  return core.transaction(async (tx) => {
    const ids = moveTo === null ? [categoryId] : [categoryId, moveTo]
    const locked = await tx.db.sql<{ id: number }>`
      select id from quiz.question_categories
      where id in (select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int)
      order by id for update`
    const found = new Set(locked.map((r) => r.id))
    if (!found.has(categoryId)) throw questionCategoryNotFound()
    if (moveTo === categoryId) throw HttpError.badRequest('move_to_same_category', 'move_to must be another category than the one deleted')
    if (moveTo !== null && !found.has(moveTo)) throw HttpError.notFound('move_to_not_found', 'The category in move_to was not found')
    const moved = await tx.db.sql`
      update quiz.questions set question_category_id = ${moveTo}, updated_at = now() where question_category_id = ${categoryId} returning id`
    await tx.db.sql`delete from quiz.question_categories where id = ${categoryId}`
    return { moved: moved.length }
  })
}

/**
 * POST /api/question-categories/{id}/create-quiz: a quiz referencing every question of the category, in id order
 * (nothing copied). 404 unknown category; 400 when it has no questions. The category is held while the quiz is made.
 */
export async function createQuizFromCategory(
  core: Core, userId: number, categoryId: number,
  input: { title: string; mode: 'timed' | 'learning'; time_limit_minutes: number | null },
): Promise<{ id: number; title: string; questions_count: number }> {
  return core.transaction(async (tx) => {
    const [category] = await tx.db.sql`select id from quiz.question_categories where id = ${categoryId} for share`
    if (!category) throw questionCategoryNotFound()
    const rows = await tx.db.sql<{ id: number }>`select id from quiz.questions where question_category_id = ${categoryId} order by id`
    if (rows.length === 0) throw HttpError.badRequest('category_has_no_questions', 'This category has no questions to make a quiz from')
    return createQuizFromQuestions(tx, userId, { ...input, questionIds: rows.map((r) => r.id) })
  })
}

// Spec 1, Quizzes: reading, renaming, publishing and the trash of quizzes, and the edit and removal of their
// questions. Questions live in the shared bank and quizzes reference them (quiz_questions), so an edit shows in
// every quiz that uses the question, and removal deletes the bank question only when no other quiz uses it.
import { rawSql as raw } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import type { Role } from '../models/accounts'
import type { QuestionItem, QuestionPatch, QuizAnsweredQuestion, QuizListQuery, QuizResponse } from '../models/quizzes'
import { hasRole } from './accounts'
import { hasCompletedAttempt } from './attempts'
import { indexQuestions, optionsOf, unindexQuestions } from './question-index'

type Caller = { id: number; role: Role }
type QuizRow = Omit<QuizResponse, 'created_at'> & { created_at: Date; deleted: boolean }

const QUIZ_COLUMNS = raw(`q.id, q.section_id, q.user_id, q.title,
  (select count(*) from quiz.quiz_questions qq where qq.quiz_id = q.id)::int as questions_count,
  q.mode, q.time_limit_minutes, case when q.is_published then 1 else 0 end as is_published, q.category_id, q.created_at,
  q.deleted_at is not null as deleted`)

const toQuizResponse = ({ deleted: _, created_at, ...row }: QuizRow): QuizResponse => ({ ...row, created_at: created_at.toISOString() })

const quizNotFound = () => HttpError.notFound('quiz_not_found', 'Quiz not found')
const isModerator = (user: Caller) => hasRole(user, 'moderator')

async function findQuiz(core: Core, quizId: number, lock = false): Promise<QuizRow | null> {
  const [row] = lock
    ? await core.db.sql<QuizRow>`select ${QUIZ_COLUMNS} from quiz.quizzes q where q.id = ${quizId} for update`
    : await core.db.sql<QuizRow>`select ${QUIZ_COLUMNS} from quiz.quizzes q where q.id = ${quizId}`
  return row ?? null
}

/** A quiz out of the trash (404 otherwise); a regular user sees published quizzes only (404 for the rest). */
async function activeQuiz(core: Core, quizId: number, user?: Caller, lock = false): Promise<QuizRow> {
  const quiz = await findQuiz(core, quizId, lock)
  if (!quiz || quiz.deleted) throw quizNotFound()
  if (user && !isModerator(user) && quiz.is_published !== 1) throw quizNotFound()
  return quiz
}

/**
 * GET /api/quizzes/: moderators see every quiz out of the trash, others the published ones; newest first. Optionally
 * only one quiz category's quizzes, or only the uncategorized ones (asking for both is a contradiction: 400).
 */
export async function listQuizzes(core: Core, user: Caller, filter: QuizListQuery = {}): Promise<QuizResponse[]> {
  const all = isModerator(user)
  const categoryId = filter.category_id ?? null
  const uncategorized = filter.uncategorized ?? false
  if (categoryId !== null && uncategorized) {
    throw HttpError.badRequest('conflicting_filters', 'Use either category_id or uncategorized=true, not both')
  }
  const rows = await core.db.sql<QuizRow>`
    select ${QUIZ_COLUMNS} from quiz.quizzes q
    where q.deleted_at is null and (${all}::boolean or q.is_published)
      and (${categoryId}::int is null or q.category_id = ${categoryId}::int)
      and (not ${uncategorized}::boolean or q.category_id is null)
    order by q.created_at desc, q.id desc`
  return rows.map(toQuizResponse)
}

/** GET /api/quizzes/trash: the quizzes in the trash, most recently trashed first. */
export async function listTrash(core: Core): Promise<QuizResponse[]> {
  const rows = await core.db.sql<QuizRow>`
    select ${QUIZ_COLUMNS} from quiz.quizzes q where q.deleted_at is not null order by q.deleted_at desc, q.id desc`
  return rows.map(toQuizResponse)
}

type StoredQuestion = QuizAnsweredQuestion

async function quizQuestions(core: Core, quizId: number): Promise<StoredQuestion[]> {
  const rows = await core.db.sql<StoredQuestion>`
    select q.id, qq.position, q.question_text, q.question_type, q.options, q.image_path, q.correct_answer, q.explanation
    from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
    where qq.quiz_id = ${quizId} order by qq.position, q.id`
  return rows.map((r) => ({ ...r, options: optionsOf(r.options) }))
}

const withoutAnswer = ({ correct_answer: _c, explanation: _e, ...q }: StoredQuestion) => q

/** GET /api/quizzes/{id}: answers and explanations for a learning quiz or with study=true, none for a timed quiz. */
export async function getQuiz(core: Core, user: Caller, quizId: number, study: boolean) {
  const quiz = toQuizResponse(await activeQuiz(core, quizId, user))
  const questions = await quizQuestions(core, quizId)
  if (study || quiz.mode === 'learning') return { ...quiz, questions }
  return { ...quiz, questions: questions.map(withoutAnswer) }
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** POST /api/quizzes/{id}/shuffle: the timed view in a random order; nothing is stored. Positions stay the quiz's own. */
export async function shuffleQuiz(core: Core, user: Caller, quizId: number, shuffleOptions: boolean) {
  const quiz = toQuizResponse(await activeQuiz(core, quizId, user))
  const questions = shuffled(await quizQuestions(core, quizId)).map(withoutAnswer)
  return { ...quiz, questions: shuffleOptions ? questions.map((q) => ({ ...q, options: shuffled(q.options) })) : questions }
}

/** GET /api/quizzes/{id}/review: full answers, for moderators and for users with a completed attempt on the quiz. */
export async function reviewQuiz(core: Core, user: Caller, quizId: number) {
  const quiz = toQuizResponse(await activeQuiz(core, quizId, user))
  if (!isModerator(user) && !(await hasCompletedAttempt(core, user.id, quizId))) {
    throw HttpError.forbidden('attempt_required', 'Complete an attempt on this quiz to see its review')
  }
  return { ...quiz, questions: await quizQuestions(core, quizId) }
}

/** PATCH /api/quizzes/{id}: a new title. */
export async function renameQuiz(core: Core, quizId: number, title: string): Promise<QuizResponse> {
  const clean = title.trim()
  if (!clean) throw HttpError.unprocessable('invalid_input', 'The title must not be blank', { title: 'Required' })
  await activeQuiz(core, quizId)
  await core.db.sql`update quiz.quizzes set title = ${clean} where id = ${quizId}`
  return toQuizResponse((await findQuiz(core, quizId))!)
}

/** PATCH /api/quizzes/{id}/publish: sets the flag, in or out of the trash (spec 1, Quiz states: any). */
export async function publishQuiz(core: Core, quizId: number, published: boolean): Promise<{ quiz_id: number; is_published: 0 | 1 }> {
  const [row] = await core.db.sql<{ id: number }>`update quiz.quizzes set is_published = ${published} where id = ${quizId} returning id`
  if (!row) throw quizNotFound()
  return { quiz_id: quizId, is_published: published ? 1 : 0 }
}

/** DELETE /api/quizzes/{id}: into the trash. A quiz already there is hidden, so 404. */
export async function trashQuiz(core: Core, quizId: number): Promise<void> {
  const [row] = await core.db.sql<{ id: number }>`
    update quiz.quizzes set deleted_at = now() where id = ${quizId} and deleted_at is null returning id`
  if (!row) throw quizNotFound()
}

/** PATCH /api/quizzes/{id}/restore: out of the trash; 400 for a quiz that is not in it. */
export async function restoreQuiz(core: Core, quizId: number): Promise<QuizResponse> {
  return core.transaction(async (tx) => {
    const quiz = await findQuiz(tx, quizId, true)
    if (!quiz) throw quizNotFound()
    if (!quiz.deleted) throw HttpError.badRequest('quiz_not_in_trash', 'The quiz is not in the trash')
    await tx.db.sql`update quiz.quizzes set deleted_at = null where id = ${quizId}`
    return toQuizResponse({ ...quiz, deleted: false })
  })
}

/**
 * DELETE /api/quizzes/{id}/permanent: only from the trash (400 otherwise). The quiz's links go with it; its
 * questions stay in the bank, detached (their source quiz becomes null), whether or not another quiz uses them.
 */
export async function deleteQuizPermanently(core: Core, quizId: number): Promise<void> {
  await core.transaction(async (tx) => {
    const quiz = await findQuiz(tx, quizId, true)
    if (!quiz) throw quizNotFound()
    if (!quiz.deleted) throw HttpError.badRequest('quiz_not_in_trash', 'Only a quiz in the trash can be deleted permanently: move it to the trash first')
    await tx.db.sql`delete from quiz.quizzes where id = ${quizId}`
  })
}

/** GET /api/quizzes/{id}/questions: the quiz's questions with answers, in quiz order. */
export async function listQuestions(core: Core, quizId: number): Promise<QuestionItem[]> {
  await activeQuiz(core, quizId)
  return (await quizQuestions(core, quizId)).map(toQuestionItem)
}

const toQuestionItem = (q: Pick<StoredQuestion, keyof QuestionItem>): QuestionItem => ({
  id: q.id, question_text: q.question_text, question_type: q.question_type, options: q.options,
  correct_answer: q.correct_answer, explanation: q.explanation,
})

async function linkedQuestion(core: Core, quizId: number, questionId: number, lock: boolean): Promise<StoredQuestion> {
  const [row] = lock
    ? await core.db.sql<StoredQuestion>`
        select q.id, qq.position, q.question_text, q.question_type, q.options, q.image_path, q.correct_answer, q.explanation
        from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
        where qq.quiz_id = ${quizId} and qq.question_id = ${questionId} for no key update of q`
    : await core.db.sql<StoredQuestion>`
        select q.id, qq.position, q.question_text, q.question_type, q.options, q.image_path, q.correct_answer, q.explanation
        from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
        where qq.quiz_id = ${quizId} and qq.question_id = ${questionId}`
  if (!row) throw HttpError.notFound('question_not_found', 'Question not found in this quiz')
  return { ...row, options: optionsOf(row.options) }
}

/**
 * PATCH /api/quizzes/{id}/questions/{question_id}: the bank question changes, so every quiz that references it
 * shows the edit. The result must still be a valid question: distinct, non-blank options and a correct_answer
 * equal to one of them (400 otherwise). Its embedding is rewritten in the same unit of work.
 */
export async function updateQuestion(core: Core, quizId: number, questionId: number, patch: QuestionPatch): Promise<QuestionItem> {
  return core.transaction(async (tx) => {
    await activeQuiz(tx, quizId)
    const current = await linkedQuestion(tx, quizId, questionId, true)
    const next = {
      question_text: patch.question_text?.trim() ?? current.question_text,
      question_type: patch.question_type?.trim() ?? current.question_type,
      options: patch.options?.map((o) => o.trim()) ?? current.options,
      correct_answer: patch.correct_answer?.trim() ?? current.correct_answer,
      explanation: patch.explanation?.trim() ?? current.explanation,
    }
    if (!next.question_text) throw HttpError.badRequest('question_text_blank', 'The question text must not be blank', { question_text: 'Required' })
    if (!next.question_type) throw HttpError.badRequest('question_type_blank', 'The question type must not be blank', { question_type: 'Required' })
    if (next.options.some((o) => !o)) throw HttpError.badRequest('option_blank', 'Options must not be blank', { options: 'Options must not be blank' })
    if (new Set(next.options).size !== next.options.length) {
      throw HttpError.badRequest('options_not_distinct', 'Options must be distinct', { options: 'Options must be distinct' })
    }
    if (!next.options.includes(next.correct_answer)) {
      throw HttpError.badRequest('correct_answer_not_an_option', 'correct_answer must equal one of the options', {
        correct_answer: 'Must equal one of the options',
      })
    }
    const indexedTextChanged = next.question_text !== current.question_text || next.options.join('\n') !== current.options.join('\n')
    // A question whose text or options changed is classified again by the next tag run (its tags stay until then).
    await tx.db.sql`
      update quiz.questions set question_text = ${next.question_text}, question_type = ${next.question_type},
        options = ${{ value: next.options }}::jsonb -> 'value', correct_answer = ${next.correct_answer}, explanation = ${next.explanation}, updated_at = now(),
        tagged_at = case when ${indexedTextChanged}::boolean then null else tagged_at end
      where id = ${questionId}`
    if (indexedTextChanged) await indexQuestions(tx, [{ id: questionId, question_text: next.question_text, options: next.options }])
    return { id: questionId, ...next }
  })
}

/**
 * DELETE /api/quizzes/{id}/questions/{question_id} (spec 1, Question removal): only the link when another quiz
 * (in the trash too, which may come back) references the question; otherwise the bank question goes, with its
 * embedding. The quiz's remaining questions are numbered 1..n again.
 */
export async function removeQuestion(core: Core, quizId: number, questionId: number): Promise<{ deleted_from_bank: boolean }> {
  return core.transaction(async (tx) => {
    await activeQuiz(tx, quizId, undefined, true)
    await linkedQuestion(tx, quizId, questionId, true)
    const [{ n: others } = { n: 0 }] = await tx.db.sql<{ n: number }>`
      select count(*)::int as n from quiz.quiz_questions where question_id = ${questionId} and quiz_id <> ${quizId}`
    const deletedFromBank = others === 0
    if (deletedFromBank) {
      await tx.db.sql`delete from quiz.questions where id = ${questionId}`
      await unindexQuestions(tx, [questionId])
    } else {
      await tx.db.sql`delete from quiz.quiz_questions where quiz_id = ${quizId} and question_id = ${questionId}`
    }
    await tx.db.sql`
      update quiz.quiz_questions qq set position = r.n
      from (select question_id, row_number() over (order by position, question_id)::int as n
            from quiz.quiz_questions where quiz_id = ${quizId}) r
      where qq.quiz_id = ${quizId} and qq.question_id = r.question_id and qq.position <> r.n`
    return { deleted_from_bank: deletedFromBank }
  })
}

/** The quiz (out of the trash) and its questions with answers, for the staff pages. */
export async function quizWithQuestions(core: Core, quizId: number): Promise<{ quiz: QuizResponse; questions: StoredQuestion[] }> {
  const quiz = toQuizResponse(await activeQuiz(core, quizId))
  return { quiz, questions: await quizQuestions(core, quizId) }
}

/** One question of a quiz, for the staff pages' click-to-edit row. */
export async function quizQuestion(core: Core, quizId: number, questionId: number): Promise<StoredQuestion> {
  await activeQuiz(core, quizId)
  return linkedQuestion(core, quizId, questionId, false)
}

export interface NewQuizFromQuestions {
  title: string
  mode: 'timed' | 'learning'
  time_limit_minutes: number | null
  /** Bank question ids in the quiz's order; a repeated id counts once (its first place). */
  questionIds: number[]
}

/**
 * A quiz that references existing bank questions (nothing is copied), for POST /api/questions/from-bank and a
 * question category's create-quiz. 400 with no questions; 404 naming the ids that are not in the bank. The quiz
 * starts unpublished, like an extracted one.
 */
export async function createQuizFromQuestions(core: Core, userId: number, input: NewQuizFromQuestions): Promise<{ id: number; title: string; questions_count: number }> {
  const title = input.title.trim()
  if (!title) throw HttpError.unprocessable('invalid_input', 'The title must not be blank', { title: 'Required' })
  const ids = [...new Set(input.questionIds)]
  if (ids.length === 0) throw HttpError.badRequest('no_questions', 'A quiz needs at least one question')
  return core.transaction(async (tx) => {
    const found = await tx.db.sql<{ id: number }>`
      select id from quiz.questions where id in (select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int) for share`
    if (found.length !== ids.length) {
      const have = new Set(found.map((r) => r.id))
      const missing = ids.filter((id) => !have.has(id))
      throw HttpError.notFound('question_not_found', `Not in the question bank: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''}`)
    }
    const [quiz] = await tx.db.sql<{ id: number }>`
      insert into quiz.quizzes (user_id, title, mode, time_limit_minutes)
      values (${userId}, ${title}, ${input.mode}, ${input.time_limit_minutes}) returning id`
    await tx.db.sql`
      insert into quiz.quiz_questions (quiz_id, question_id, position)
      select ${quiz!.id}, e.id::int, e.n from jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value') with ordinality as e(id, n)`
    return { id: quiz!.id, title, questions_count: ids.length }
  })
}

/** Where each of these quizzes is: `active`, `trash`, or absent from the map when deleted for good. */
export async function quizStates(core: Core, quizIds: number[]): Promise<Map<number, 'active' | 'trash'>> {
  if (quizIds.length === 0) return new Map()
  const rows = await core.db.sql<{ id: number; deleted: boolean }>`
    select id, deleted_at is not null as deleted from quiz.quizzes
    where id in (select jsonb_array_elements_text(${{ value: quizIds }}::jsonb -> 'value')::int)`
  return new Map(rows.map((r) => [r.id, r.deleted ? 'trash' : 'active']))
}

// The quiz service's pages for quizzes: regular users pick a published quiz from the list or its search (each linked
// to its start page, with their own state); moderators list, rename, publish, trash, restore and delete quizzes and
// edit or remove their questions. One URL serves a page and its htmx fragment; every form also works without
// JavaScript (Post/Redirect/Get), and the rules stay in the services (quizzes.ts, search.ts, attempts.ts).
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { INT4_MAX, RowId } from '../../../src/core/schema'
import { isFragment, pageContext } from '../../../views/layout'
import { FormBody, formErrors, formFailure, formFields, hasErrors, html, redirect } from '../../../views/page'
import { QuestionPatch, RenameBody, type QuizListQuery } from '../models/quizzes'
import { SEARCH_Q_MAX, SEARCH_Q_MIN } from '../models/search'
import { hasRole, type QuizUser } from '../services/accounts'
import * as attempts from '../services/attempts'
import { listQuizCategories, setQuizCategory } from '../services/categories'
import * as quizzes from '../services/quizzes'
import { searchQuizzes } from '../services/search'
import type { QuizState } from '../state'
import {
  CategoryForm, QuestionEditForm, QuestionList, QuestionRow, questionValues, QuizPage, QuizTable, QuizzesContent, QuizzesPage, RenameForm,
  TrashPage, TrashTable, type Back, type CategoryFilter, type LearnerState, type QuestionValues, type QuizListView, type SearchView,
} from '../views/quizzes'

const QuizParams = t.Object({ id: RowId() })
const QuestionParams = t.Object({ id: RowId(), question_id: RowId() })
/**
 * The list's category filter (a quiz category's id, `none` for the uncategorized quizzes, or empty for all) and its
 * search text. q is taken loose: a text too short or too long is a message on the page, not an error page.
 */
const ListQuery = t.Object({ category_id: t.Optional(t.Union([RowId(), t.Literal('none'), t.Literal('')])), q: t.Optional(t.String()) })

/** A filter value as the page carries it (query or a form's hidden field) and as the service takes it; anything else is no filter. */
function categoryFilter(value: unknown): { filter: CategoryFilter; query: QuizListQuery } {
  if (value === 'none') return { filter: 'none', query: { uncategorized: true } }
  const id = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN
  if (id >= 1 && id <= INT4_MAX) return { filter: String(id), query: { category_id: id } }
  return { filter: '', query: {} }
}

/** A category select's value: '' for none, else a quiz category id (422 for anything else). */
function categoryChoice(value: string | undefined): number | null {
  if (!value) return null
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN
  if (!(id >= 1 && id <= INT4_MAX)) throw HttpError.unprocessable('invalid_input', 'Choose a category', { category_id: 'Choose a category' })
  return id
}

const requireModerator = (user: QuizUser) => {
  if (!hasRole(user, 'moderator')) throw HttpError.forbidden('insufficient_role', 'Only moderators manage quizzes')
}

/** A question form's fields as the API's patch: options one per line, blank lines dropped; absent fields unchanged. */
function questionPatch(f: Record<string, string>): QuestionPatch {
  const patch: QuestionPatch = {}
  if (f.question_text !== undefined) patch.question_text = f.question_text
  if (f.options !== undefined) patch.options = f.options.split(/\r?\n/).map((o) => o.trim()).filter(Boolean)
  if (f.correct_answer !== undefined) patch.correct_answer = f.correct_answer
  if (f.explanation !== undefined) patch.explanation = f.explanation
  if (f.question_type !== undefined) patch.question_type = f.question_type
  return patch
}

export const quizzesPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const backTo = (back: string | undefined, quizId: number): string => {
    const b = (back ?? 'list') as Back
    if (b === 'trash') return `${base}/quizzes/trash`
    if (b === 'quiz') return `${base}/quizzes/${quizId}`
    return `${base}/quizzes`
  }
  /** After a list action: the table htmx targets (by its id), or Post/Redirect/Get; the list keeps its category filter. */
  const afterAction = async (request: Request, user: QuizUser, back: string | undefined, quizId: number, filterValue?: string) => {
    const target = request.headers.get('hx-target')
    const { filter, query } = categoryFilter(filterValue)
    if (isFragment(request) && target === 'quizzes') {
      const [list, categories] = [await quizzes.listQuizzes(core, user, query), await listQuizCategories(core)]
      return html(QuizTable({ base, quizzes: list, categories, filter }))
    }
    if (isFragment(request) && target === 'trash') return html(TrashTable({ base, quizzes: await quizzes.listTrash(core) }))
    const to = backTo(back, quizId)
    return redirect(filter && to === `${base}/quizzes` ? `${to}?category_id=${filter}` : to)
  }
  /** A regular user's own state per quiz, from the dashboard and the in-progress list: the same few queries whatever the list's length. */
  const learnerState = async (user: QuizUser): Promise<LearnerState> => {
    const [stats, open] = await Promise.all([attempts.dashboard(core, user), attempts.inProgress(core, user)])
    return { inProgress: new Set(open.map((a) => a.quiz_id)), bestScore: new Map(stats.quiz_stats.map((s) => [s.quiz_id, s.best_score])) }
  }
  /**
   * The list page's contents. A search runs over what the caller may see (published quizzes only for a regular user)
   * and keeps the hits that are in the list, so the category filter narrows a search too.
   */
  const listView = async (user: QuizUser, query: typeof ListQuery.static): Promise<QuizListView> => {
    const moderator = hasRole(user, 'moderator')
    const { filter, query: listQuery } = categoryFilter(query.category_id)
    const q = (query.q ?? '').trim()
    const [list, categories, learner] = await Promise.all([
      quizzes.listQuizzes(core, user, listQuery), listQuizCategories(core), moderator ? null : learnerState(user),
    ])
    const search: SearchView = { q, hits: null, notice: null }
    if (q.length > 0 && q.length < SEARCH_Q_MIN) search.notice = `Type at least ${SEARCH_Q_MIN} characters to search. The quizzes are listed below.`
    else if (q.length > SEARCH_Q_MAX) search.notice = `A search can be at most ${SEARCH_Q_MAX} characters long. The quizzes are listed below.`
    else if (q) {
      try {
        const inList = new Map(list.map((z) => [z.id, z]))
        search.hits = (await searchQuizzes(core, user, q, 'all')).flatMap((result) => {
          const quiz = inList.get(result.quiz_id)
          return quiz ? [{ result, quiz }] : []
        })
      } catch (err) {
        // the embedding model out of reach: the page still lists the quizzes, and the log keeps the cause
        if (!(err instanceof HttpError) || err.status < 500) throw err
        core.log.warn({ err, code: err.code }, 'quiz list search unavailable')
        search.notice = 'Search is not available right now: try again in a moment. The quizzes are listed below.'
      }
    }
    return { base, moderator, quizzes: list, categories, filter, learner, search }
  }
  const quizPage = async (user: QuizUser, quizId: number, extra: Partial<Parameters<typeof QuizPage>[0]> = {}, status = 200) => {
    const { quiz, questions } = await quizzes.quizWithQuestions(core, quizId)
    return html(QuizPage({ ctx, user, quiz, questions, categories: await listQuizCategories(core), ...extra }), { status })
  }

  return new Elysia({ prefix: '/quizzes' })
    .use(pages)
    .get('', async ({ request, user, query }) => {
      const view = await listView(user, query)
      return html(isFragment(request) ? QuizzesContent(view) : QuizzesPage({ ctx, user, ...view }))
    }, { signedIn: true, query: ListQuery })
    .get('/trash', async ({ request, user }) => {
      requireModerator(user)
      const list = await quizzes.listTrash(core)
      return html(isFragment(request) ? TrashTable({ base, quizzes: list }) : TrashPage({ ctx, user, quizzes: list }))
    }, { signedIn: true })
    .get('/:id', async ({ request, user, params }) => {
      requireModerator(user)
      if (!isFragment(request)) return quizPage(user, params.id)
      const { questions } = await quizzes.quizWithQuestions(core, params.id)
      return html(QuestionList({ base, quizId: params.id, questions }))
    }, { signedIn: true, params: QuizParams })
    .post('/:id/rename', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      try {
        const errors = formErrors(RenameBody, { title: f.title ?? '' })
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the title', errors)
        const quiz = await quizzes.renameQuiz(core, params.id, f.title!)
        if (!isFragment(request)) return redirect(`${base}/quizzes/${params.id}`)
        return html(RenameForm({ base, quiz, saved: true }))
      } catch (err) {
        if (err instanceof HttpError && (err.status === 404 || err.status === 403)) throw err
        const { errors, flash } = formFailure(err)
        const error = errors?.title ?? flash.text
        if (!isFragment(request)) return quizPage(user, params.id, { flash, renameValue: f.title ?? '', renameError: error }, 422)
        const { quiz } = await quizzes.quizWithQuestions(core, params.id)
        return html(RenameForm({ base, quiz, value: f.title ?? '', error }), { status: 422 })
      }
    }, { signedIn: true, params: QuizParams, body: FormBody })
    .post('/:id/category', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      try {
        await setQuizCategory(core, params.id, categoryChoice(f.category_id))
        if (!isFragment(request)) return redirect(`${base}/quizzes/${params.id}`)
        const { quiz } = await quizzes.quizWithQuestions(core, params.id)
        return html(CategoryForm({ base, quiz, categories: await listQuizCategories(core), saved: true }))
      } catch (err) {
        // the quiz gone is the error page; a category deleted meanwhile (or a forged value) is said next to the select
        if (err instanceof HttpError && (err.code === 'quiz_not_found' || err.status === 403)) throw err
        const { errors, flash } = formFailure(err)
        const error = errors?.category_id ?? (err instanceof HttpError && err.code === 'category_not_found' ? 'That category no longer exists: choose another' : flash.text)
        if (!isFragment(request)) return quizPage(user, params.id, { flash, categoryError: error }, 422)
        const { quiz } = await quizzes.quizWithQuestions(core, params.id)
        return html(CategoryForm({ base, quiz, categories: await listQuizCategories(core), error }), { status: 422 })
      }
    }, { signedIn: true, params: QuizParams, body: FormBody })
    .post('/:id/publish', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      await quizzes.publishQuiz(core, params.id, f.published !== '0')
      return afterAction(request, user, f.back, params.id, f.category_id)
    }, { signedIn: true, params: QuizParams, body: FormBody })
    .post('/:id/trash', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      await quizzes.trashQuiz(core, params.id)
      return afterAction(request, user, f.back === 'quiz' ? 'list' : f.back, params.id, f.category_id)
    }, { signedIn: true, params: QuizParams, body: FormBody })
    .post('/:id/restore', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      await quizzes.restoreQuiz(core, params.id)
      return afterAction(request, user, f.back ?? 'trash', params.id)
    }, { signedIn: true, params: QuizParams, body: FormBody })
    .post('/:id/delete-permanently', async ({ request, user, params, body }) => {
      requireModerator(user)
      await quizzes.deleteQuizPermanently(core, params.id)
      return afterAction(request, user, 'trash', params.id)
    }, { signedIn: true, params: QuizParams, body: FormBody })
    // A boosted form post puts its action in the address bar: a reload (a GET) lands on a page, never a 404.
    .get('/:id/:action', ({ params }) =>
      redirect(params.action === 'restore' || params.action === 'delete-permanently' ? `${base}/quizzes/trash` : `${base}/quizzes/${params.id}`), {
      signedIn: true, params: t.Object({ id: RowId(), action: t.Union([t.Literal('rename'), t.Literal('category'), t.Literal('publish'), t.Literal('trash'), t.Literal('restore'), t.Literal('delete-permanently')]) }),
    })
    .get('/:id/questions/:question_id/remove', ({ params }) => redirect(`${base}/quizzes/${params.id}`), { signedIn: true, params: QuestionParams })
    .get('/:id/questions/:question_id', async ({ request, user, params }) => {
      requireModerator(user)
      if (!isFragment(request)) return redirect(`${base}/quizzes/${params.id}#question-${params.question_id}`)
      const q = await quizzes.quizQuestion(core, params.id, params.question_id)
      return html(QuestionRow({ base, quizId: params.id, q }))
    }, { signedIn: true, params: QuestionParams })
    .get('/:id/questions/:question_id/edit', async ({ request, user, params }) => {
      requireModerator(user)
      const q = await quizzes.quizQuestion(core, params.id, params.question_id)
      const values = questionValues(q)
      if (isFragment(request)) return html(QuestionEditForm({ base, quizId: params.id, questionId: q.id, values }))
      return quizPage(user, params.id, { editing: { questionId: q.id, values } })
    }, { signedIn: true, params: QuestionParams })
    .post('/:id/questions/:question_id', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const values: QuestionValues = {
        question_text: f.question_text ?? '', options: f.options ?? '', correct_answer: f.correct_answer ?? '',
        explanation: f.explanation ?? '', question_type: f.question_type ?? '',
      }
      try {
        const patch = questionPatch(f)
        const errors = formErrors(QuestionPatch, patch)
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the question', errors)
        await quizzes.updateQuestion(core, params.id, params.question_id, patch)
        if (!isFragment(request)) return redirect(`${base}/quizzes/${params.id}#question-${params.question_id}`)
        const q = await quizzes.quizQuestion(core, params.id, params.question_id)
        return html(QuestionRow({ base, quizId: params.id, q, saved: true }))
      } catch (err) {
        if (err instanceof HttpError && (err.status === 404 || err.status === 403)) throw err
        const { errors, flash } = formFailure(err)
        const editing = { questionId: params.question_id, values, errors, message: flash.text }
        if (isFragment(request)) {
          return html(QuestionEditForm({ base, quizId: params.id, ...editing }), { status: 422 })
        }
        return quizPage(user, params.id, { flash, editing }, 422)
      }
    }, { signedIn: true, params: QuestionParams, body: FormBody })
    .post('/:id/questions/:question_id/remove', async ({ request, user, params }) => {
      requireModerator(user)
      await quizzes.removeQuestion(core, params.id, params.question_id)
      if (!isFragment(request)) return redirect(`${base}/quizzes/${params.id}`)
      const { questions } = await quizzes.quizWithQuestions(core, params.id)
      return html(QuestionList({ base, quizId: params.id, questions }))
    }, { signedIn: true, params: QuestionParams })
}

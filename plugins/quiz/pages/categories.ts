// The quiz service's staff page for categories (moderators): quiz categories and question categories, their counts,
// adding, editing and deleting them, and making a quiz from a question category. One URL serves the page and its
// htmx fragment; every form also works without JavaScript (Post/Redirect/Get, 422 re-renders), and the rules stay
// in services/categories.ts.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { INT4_MAX, RowId } from '../../../src/core/schema'
import { isFragment, pageContext } from '../../../views/layout'
import { FormBody, formErrors, formFailure, formFields, hasErrors, html, redirect } from '../../../views/page'
import { QuestionCategoryBody, QuizCategoryBody } from '../models/categories'
import { hasRole, type QuizUser } from '../services/accounts'
import * as categories from '../services/categories'
import type { QuizState } from '../state'
import { quizSettings } from './quiz-settings'
import {
  CategoriesPage, CategorySections, QuestionCategoriesSection, QuestionCategoryEditRow, QuestionCategoryRow, QuizCategoriesSection,
  type CategoriesState, type MakeQuizValues, type QuestionCategoryValues,
} from '../views/categories'

const IdParams = t.Object({ id: RowId() })

const requireModerator = (user: QuizUser) => {
  if (!hasRole(user, 'moderator')) throw HttpError.forbidden('insufficient_role', 'Only moderators manage categories')
}

/** Failures a form shows; a missing row (404) or a refusal (403) is the error page instead. */
const shownInForm = (err: unknown) => !(err instanceof HttpError && (err.status === 404 || err.status === 403))

/** Why a delete's move of the questions was refused: said next to the form, not as an error page. */
const MOVE_REFUSALS = new Set(['invalid_move_to', 'move_to_same_category', 'move_to_not_found'])

/** A move_to select's value: '' for none, else a category id (anything else is refused). */
function moveTarget(value: string | undefined): number | null {
  if (!value) return null
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN
  if (!(id >= 1 && id <= INT4_MAX)) throw HttpError.badRequest('invalid_move_to', 'Choose where the questions go')
  return id
}

export const categoriesPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const lists = async () => ({
    quizCategories: await categories.listQuizCategories(core),
    questionCategories: await categories.listQuestionCategories(core),
  })
  const page = async (user: QuizUser, state: CategoriesState = {}, status = 200) =>
    html(CategoriesPage({ ctx, user, ...(await lists()), ...state }), { status })
  const quizSection = async (state: CategoriesState['quiz'] = {}, status = 200) =>
    html(QuizCategoriesSection({ base, categories: await categories.listQuizCategories(core), ...state }), { status })
  const questionSection = async (state: CategoriesState['question'] = {}, status = 200) =>
    html(QuestionCategoriesSection({ base, categories: await categories.listQuestionCategories(core), ...state }), { status })
  const home = `${base}/categories`

  return new Elysia({ prefix: '/categories' })
    .use(pages)
    .get('', async ({ request, user }) => {
      requireModerator(user)
      if (!isFragment(request)) return page(user)
      const target = request.headers.get('hx-target')
      if (target === 'quiz-categories') return quizSection()
      if (target === 'question-categories') return questionSection()
      return html(CategorySections({ base, ...(await lists()) }))
    }, { signedIn: true })

    // quiz categories
    .post('/quiz', async ({ request, user, body }) => {
      requireModerator(user)
      const name = formFields(body).name ?? ''
      try {
        const errors = formErrors(QuizCategoryBody, { name })
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the name', errors)
        const created = await categories.createQuizCategory(core, name)
        if (!isFragment(request)) return redirect(`${home}#quiz-category-${created.id}`)
        return quizSection({ saved: `Added the quiz category ${created.name}.` })
      } catch (err) {
        const { errors, flash } = formFailure(err)
        const add = { value: name, error: errors?.name ?? flash.text }
        if (isFragment(request)) return quizSection({ add }, 422)
        return page(user, { quiz: { add } }, 422)
      }
    }, { signedIn: true, body: FormBody })
    .post('/quiz/:id/delete', async ({ request, user, params }) => {
      requireModerator(user)
      await categories.deleteQuizCategory(core, params.id)
      if (!isFragment(request)) return redirect(home)
      return quizSection({ saved: 'Deleted the quiz category; its quizzes now have no category.' })
    }, { signedIn: true, params: IdParams, body: FormBody })

    // question categories
    .post('/question', async ({ request, user, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const values: QuestionCategoryValues = { name: f.name ?? '', description: f.description ?? '' }
      try {
        const errors = formErrors(QuestionCategoryBody, { ...values })
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the category', errors)
        const created = await categories.createQuestionCategory(core, values)
        if (!isFragment(request)) return redirect(`${home}#qcat-${created.id}`)
        return questionSection({ saved: `Added the question category ${created.name}.` })
      } catch (err) {
        const { errors, flash } = formFailure(err)
        const add = { values, errors: errors ?? { name: flash.text } }
        if (isFragment(request)) return questionSection({ add }, 422)
        return page(user, { question: { add } }, 422)
      }
    }, { signedIn: true, body: FormBody })
    .get('/question/:id', async ({ request, user, params }) => {
      requireModerator(user)
      if (!isFragment(request)) return redirect(`${home}#qcat-${params.id}`)
      const category = await categories.getQuestionCategory(core, params.id)
      return html(QuestionCategoryRow({ base, category, all: await categories.listQuestionCategories(core) }))
    }, { signedIn: true, params: IdParams })
    .get('/question/:id/edit', async ({ request, user, params }) => {
      requireModerator(user)
      const category = await categories.getQuestionCategory(core, params.id)
      const editing = { id: category.id, values: { name: category.name, description: category.description ?? '' } }
      if (isFragment(request)) return html(QuestionCategoryEditRow({ base, editing }))
      return page(user, { question: { editing } })
    }, { signedIn: true, params: IdParams })
    .post('/question/:id', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const values: QuestionCategoryValues = { name: f.name ?? '', description: f.description ?? '' }
      try {
        const errors = formErrors(QuestionCategoryBody, { ...values })
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the category', errors)
        const saved = await categories.updateQuestionCategory(core, params.id, values)
        if (!isFragment(request)) return redirect(`${home}#qcat-${params.id}`)
        return questionSection({ saved: `Saved the question category ${saved.name}.` })
      } catch (err) {
        if (!shownInForm(err)) throw err
        const { errors, flash } = formFailure(err)
        const editing = { id: params.id, values, errors, message: errors ? undefined : flash.text }
        if (isFragment(request)) return html(QuestionCategoryEditRow({ base, editing }), { status: 422 })
        return page(user, { question: { editing } }, 422)
      }
    }, { signedIn: true, params: IdParams, body: FormBody })
    .post('/question/:id/delete', async ({ request, user, params, body }) => {
      requireModerator(user)
      try {
        await categories.deleteQuestionCategory(core, params.id, moveTarget(formFields(body).move_to))
        if (!isFragment(request)) return redirect(home)
        return questionSection({ saved: 'Deleted the question category.' })
      } catch (err) {
        // a refused move is said in the section; the category itself gone is the error page
        if (!(err instanceof HttpError && MOVE_REFUSALS.has(err.code))) throw err
        const { flash } = formFailure(err)
        if (isFragment(request)) return questionSection({ message: flash.text }, 422)
        return page(user, { question: { message: flash.text } }, 422)
      }
    }, { signedIn: true, params: IdParams, body: FormBody })
    .post('/question/:id/create-quiz', async ({ user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const values: MakeQuizValues = { title: f.title ?? '', mode: f.mode ?? 'timed', time_limit_minutes: f.time_limit_minutes ?? '' }
      try {
        const quiz = await categories.createQuizFromCategory(core, user.id, params.id, quizSettings(values))
        // a plain post and a boosted one alike: the new quiz's page
        return redirect(`${base}/quizzes/${quiz.id}`)
      } catch (err) {
        if (!shownInForm(err)) throw err
        const { errors, flash } = formFailure(err)
        return page(user, { question: { makeQuiz: { id: params.id, values, errors, message: errors ? undefined : flash.text } } }, 422)
      }
    }, { signedIn: true, params: IdParams, body: FormBody })

    // A boosted form post puts its action in the address bar: a reload (a GET) lands on the page, never a 404.
    .get('/quiz', () => redirect(home), { signedIn: true })
    .get('/question', () => redirect(home), { signedIn: true })
    .get('/quiz/:id/delete', () => redirect(home), { signedIn: true, params: IdParams })
    .get('/question/:id/:action', ({ params }) => redirect(`${home}#qcat-${params.id}`), {
      signedIn: true, params: t.Object({ id: RowId(), action: t.Union([t.Literal('delete'), t.Literal('create-quiz')]) }),
    })
}

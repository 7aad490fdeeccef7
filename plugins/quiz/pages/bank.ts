// The quiz service's question bank page: every signed-in user searches and filters the bank and stars favorites;
// moderators also see near-duplicate flags and act on a selection of questions (a new quiz from them, or one
// category for all). One URL serves the page and its htmx fragment; every form works without JavaScript
// (Post/Redirect/Get, 422 re-renders), and the rules stay in services/bank.ts.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { INT4_MAX, RowId } from '../../../src/core/schema'
import { isFragment, pageContext, type Flash } from '../../../views/layout'
import { FormBody, formFailure, html, redirect } from '../../../views/page'
import { BANK_QUERY_MAX, BULK_CATEGORY_MAX, FROM_BANK_MAX, type SearchMode } from '../models/bank'
import { hasRole, type QuizUser } from '../services/accounts'
import * as bank from '../services/bank'
import { listQuestionCategories } from '../services/categories'
import { addFavorite, favoriteIds, removeFavorite } from '../services/favorites'
import { listQuizzes } from '../services/quizzes'
import type { QuizState } from '../state'
import { quizSettings } from './quiz-settings'
import {
  BANK_PAGE_SIZE, BankPageView, BankResultsBlock, FavoriteButton, bankUrl, type BankResults, type BankView, type SelectionValues,
} from '../views/bank'

const QuestionParams = t.Object({ question_id: RowId() })
const MODES: SearchMode[] = ['keyword', 'semantic', 'hybrid']

const asId = (value: string | null | undefined): number | null => {
  if (!value || !/^\d{1,10}$/.test(value.trim())) return null
  const id = Number(value.trim())
  return id >= 1 && id <= INT4_MAX ? id : null
}
/** A form value that may come once (a string) or many times (an array). */
const many = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [])

/** The page's filters from its URL. A link is never refused: a value that does not parse is left out. */
export function viewOf(params: URLSearchParams): BankView {
  const mode = params.get('search_mode') as SearchMode | null
  const category = params.get('category') ?? ''
  const tagIds = params.getAll('tag_ids').flatMap((v) => v.split(',')).map(asId).filter((id): id is number => id !== null)
  const page = Number(params.get('page') ?? '1')
  return {
    q: (params.get('q') ?? '').trim().slice(0, BANK_QUERY_MAX),
    mode: mode && MODES.includes(mode) ? mode : 'hybrid',
    category: category === 'none' || asId(category) !== null ? category.trim() : '',
    favorites: params.get('favorites_only') === 'true',
    tagIds: [...new Set(tagIds)],
    quizId: asId(params.get('quiz_id')),
    question: asId(params.get('question')),
    page: Number.isSafeInteger(page) && page >= 1 && page <= 1_000_000 ? page : 1,
  }
}

const filtersOf = (v: BankView): bank.BankFilters => ({
  q: v.q || null,
  quizId: v.quizId,
  categoryId: v.category !== '' && v.category !== 'none' ? Number(v.category) : null,
  categoryIds: null,
  uncategorized: v.category === 'none',
  favoritesOnly: v.favorites,
  tagIds: v.tagIds,
  questionIds: v.question === null ? null : [v.question],
})

/** A `back` field: our own bank page only (never another site or page). */
function ownBankUrl(base: string, back: string | undefined): string {
  const own = `${base}/bank`
  if (!back || !back.startsWith(own)) return own
  const rest = back.slice(own.length)
  return rest === '' || rest.startsWith('?') ? back : own
}

const paramsOf = (url: string) => new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '')

const noticeOf = (params: URLSearchParams): Flash => {
  const n = Number(params.get('count') ?? '0')
  if (params.get('notice') === 'category-set' && Number.isSafeInteger(n) && n >= 0) {
    return { kind: 'ok', text: `Category set for ${n} ${n === 1 ? 'question' : 'questions'}.` }
  }
  return null
}

const requireModerator = (user: QuizUser) => {
  if (!hasRole(user, 'moderator')) throw HttpError.forbidden('insufficient_role', 'Only moderators act on a selection of questions')
}

export const bankPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)

  const results = async (user: QuizUser, view: BankView, selection?: SelectionValues): Promise<BankResults> => {
    const moderator = hasRole(user, 'moderator')
    const page = await bank.listBank(core, user, filtersOf(view), view.mode, BANK_PAGE_SIZE, (view.page - 1) * BANK_PAGE_SIZE)
    const ids = page.questions.map((q) => q.id)
    return {
      view, page, selection,
      favorites: new Set(await favoriteIds(core, user.id)),
      nearDuplicates: moderator ? await bank.nearDuplicates(core, ids) : null,
      categories: moderator ? await listQuestionCategories(core) : [],
    }
  }
  const fullPage = async (user: QuizUser, view: BankView, opts: { flash?: Flash; selection?: SelectionValues; status?: number } = {}) => {
    const moderator = hasRole(user, 'moderator')
    const r = await results(user, view, opts.selection)
    const data = {
      categories: moderator ? r.categories : await listQuestionCategories(core),
      tags: await bank.listTags(core),
      quizzes: (await listQuizzes(core, user)).map((z) => ({ id: z.id, title: z.title })),
    }
    return html(BankPageView({ ctx, user, moderator, flash: opts.flash, data, results: r }), { status: opts.status ?? 200 })
  }

  return new Elysia({ prefix: '/bank' })
    .use(pages)
    .get('', async ({ request, user }) => {
      const params = new URL(request.url).searchParams
      const view = viewOf(params)
      if (isFragment(request)) {
        return html(BankResultsBlock({ base, moderator: hasRole(user, 'moderator'), r: await results(user, view) }))
      }
      return fullPage(user, view, { flash: noticeOf(params) })
    }, { signedIn: true })
    .post('/questions/:question_id/favorite', async ({ request, user, params, body }) => {
      const f = body as Record<string, unknown> | undefined
      const want = f?.favorite !== '0'
      if (want) await addFavorite(core, user.id, params.question_id)
      else await removeFavorite(core, user.id, params.question_id)
      const back = ownBankUrl(base, typeof f?.back === 'string' ? f.back : undefined)
      if (!isFragment(request)) return redirect(`${back}#question-${params.question_id}`)
      return html(FavoriteButton({ base, questionId: params.question_id, favorite: want, back }))
    }, { signedIn: true, params: QuestionParams, body: FormBody })
    .post('/selection', async ({ user, body }) => {
      requireModerator(user)
      const f = (body ?? {}) as Record<string, unknown>
      const field = (name: string) => (typeof f[name] === 'string' ? (f[name] as string) : '')
      const back = ownBankUrl(base, field('back'))
      const view = viewOf(paramsOf(back))
      const ticked = [...new Set(many(f.question_ids).map(asId).filter((id): id is number => id !== null))]
      const values: SelectionValues = {
        title: field('title'), mode: field('mode'), time_limit_minutes: field('time_limit_minutes'), category: field('category'), selected: ticked,
      }
      try {
        // `do`, not `action`: a form control named action would shadow the form's own action in the page's DOM
        const action = field('do')
        if (action !== 'new_quiz' && action !== 'set_category') throw HttpError.badRequest('invalid_action', 'Choose what to do with the selected questions')
        const ids = field('all_matches') === 'true' ? await bank.bankIds(core, user, filtersOf(view)) : ticked
        const max = action === 'new_quiz' ? FROM_BANK_MAX : BULK_CATEGORY_MAX
        if (ids.length === 0) throw HttpError.unprocessable('invalid_input', 'Select at least one question first', { question_ids: 'Select at least one question' })
        if (ids.length > max) {
          throw HttpError.unprocessable('invalid_input', `That is ${ids.length} questions: at most ${max} at once`, { question_ids: `At most ${max} questions at once` })
        }
        if (action === 'new_quiz') {
          const quiz = await bank.quizFromBank(core, user.id, { ...quizSettings(values), question_ids: ids })
          return redirect(`${base}/quizzes/${quiz.id}`)
        }
        const category = values.category === 'none' || values.category === '' ? null : asId(values.category)
        if (category === null && values.category !== 'none' && values.category !== '') {
          throw HttpError.unprocessable('invalid_input', 'Choose a category', { category: 'Choose a category' })
        }
        const done = await bank.setCategoryOfMany(core, ids, category)
        const next = new URLSearchParams(paramsOf(back))
        next.set('notice', 'category-set')
        next.set('count', String(done.updated))
        return redirect(`${base}/bank?${next.toString()}`)
      } catch (err) {
        if (err instanceof HttpError && err.status === 403) throw err
        const { errors, flash } = formFailure(err)
        return fullPage(user, view, { flash, selection: { ...values, errors }, status: 422 })
      }
    }, { signedIn: true, body: FormBody })
    // A boosted form post puts its action in the address bar: a reload (a GET) lands on the bank page, never a 404.
    .get('/selection', () => redirect(`${base}/bank`), { signedIn: true })
    .get('/questions/:question_id/favorite', ({ params }) => redirect(`${base}/bank?question=${params.question_id}`), { signedIn: true, params: QuestionParams })
}

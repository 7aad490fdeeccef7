// The learning hub's reader pages (spec 3, learning hub), for any signed-in user:
//   /learning                      the hub: search as you type (the results fragment), categories, the feed paged
//   /learning/category/:slug       a category with its content
//   /learning/read/:slug           an article with its quiz; POST …/quiz scores the answers
//   /learning/read/:slug/slides    the deck inside the page frame
// Content sits under /read/ so no content slug can clash with `category`. One URL serves a page and its htmx
// fragment; the rules stay in the services; unknown or unpublished content is the 404 page.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { bodyLimits } from '../../../src/envelope'
import { isFragment } from '../../../views/layout'
import { FormBody, html, redirect } from '../../../views/page'
import { clinicalPageKit } from '../../clinical/pages/common'
import type { LearningState } from '../index'
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, FEED_OFFSET_MAX, SEARCH_Q_MAX, SlugParams, type ContentRead, type SubmitQuizBody } from '../model'
import { categoryNotFound, listCategories } from '../service'
import * as reading from '../service-reader'
import { searchLearning } from '../service-search'
import { CategoryPage, HubPage, HubResults, SlidesPage, type HubResultsView } from '../views/reader'
import { ArticlePage, QuizSection, type Chosen } from '../views/reader-article'

// Typed by hand into the address bar as often as clicked: out-of-range numbers are brought into range, not refused.
const HubQuery = t.Object({ q: t.Optional(t.String()), limit: t.Optional(t.String()), offset: t.Optional(t.String()) })
const whole = (text: string | undefined, fallback: number, min: number, max: number) => {
  const n = Number.parseInt(text ?? '', 10)
  return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback
}

/** The quiz form's answers (`answer-<question id>`: one option id, or several for checkboxes) as the service takes them. */
function formAnswers(body: unknown): { answers: SubmitQuizBody['answers']; chosen: Chosen } {
  const answers: SubmitQuizBody['answers'] = []
  const chosen: Chosen = new Map()
  for (const [key, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    const m = /^answer-(\d{1,9})$/.exec(key)
    if (!m) continue
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string')
    // Anything but a number is no option of the question: the service refuses it as one.
    const optionIds = values.map((v) => (/^\d{1,9}$/.test(v) ? Number(v) : 0))
    answers.push({ questionId: Number(m[1]), optionIds })
    chosen.set(Number(m[1]), new Set(optionIds))
  }
  return { answers, chosen }
}

/** A refused submission (422) in words a reader can act on, naming the question when the service does. */
function quizProblem(err: HttpError, answers: SubmitQuizBody['answers'], content: ContentRead): string {
  const field = Object.keys(err.fields ?? {})[0] ?? ''
  const index = /^answers\.(\d+)\./.exec(field)?.[1]
  const questionId = index === undefined ? undefined : answers[Number(index)]?.questionId
  const n = content.questions.findIndex((q) => q.id === questionId) + 1
  if (err.code === 'unknown_option') return `Question ${n}: the answer sent is not one of its options. Choose again and check your answers.`
  if (err.code === 'unknown_question') return 'The answers name a question this quiz does not have. Reload the page and answer again.'
  if (err.code === 'no_questions') return 'This content has no quiz.'
  return err.message
}

export const readerPages = (state: LearningState) => {
  const { core } = state
  const base = core.config.clinicalBasePath

  /** The hub's results: hybrid search (keyword alone when the embedding model fails), or a page of the feed. */
  const hubResults = async (q: string, limit: number, offset: number): Promise<HubResultsView> => {
    if (q) {
      try {
        return { kind: 'search', q, results: await searchLearning(core, 'hybrid', q), keywordOnly: false }
      } catch (err) {
        if (!(err instanceof HttpError) || (err.status !== 502 && err.status !== 503)) throw err
        core.log.warn({ err: err.cause ?? err, code: err.code }, 'learning hub search: semantic search failed, keyword results only')
        return { kind: 'search', q, results: await searchLearning(core, 'keyword', q), keywordOnly: true }
      }
    }
    // One more than the page shows: whether an older page exists, without counting the feed.
    const rows = await reading.listFeed(core, limit + 1, offset)
    return { kind: 'feed', entries: rows.slice(0, limit), limit, offset, older: rows.length > limit }
  }

  return new Elysia()
    .use(clinicalPageKit(state.clinical))
    .use(bodyLimits)
    .get('/learning', async ({ request, user, query }) => {
      const q = (query.q ?? '').trim().slice(0, SEARCH_Q_MAX)
      const limit = whole(query.limit, FEED_LIMIT_DEFAULT, 1, FEED_LIMIT_MAX)
      const offset = whole(query.offset, 0, 0, FEED_OFFSET_MAX)
      const results = await hubResults(q, limit, offset)
      if (isFragment(request)) return html(HubResults({ base, view: results }))
      return html(HubPage({ base, user, q, categories: await listCategories(core), results }))
    }, { signedIn: true, query: HubQuery })

    .get('/learning/category/:slug', async ({ user, params }) => {
      const category = (await listCategories(core)).find((c) => c.slug === params.slug)
      if (!category) throw categoryNotFound()
      const entries = await reading.listCategoryContent(core, params.slug)
      return html(CategoryPage({ base, user, category, entries }))
    }, { signedIn: true, params: SlugParams })

    .get('/learning/read/:slug', async ({ user, params }) =>
      html(ArticlePage({ base, user, content: await reading.readContent(core, user.id, params.slug) })),
    { signedIn: true, params: SlugParams })

    // The quiz form posts; a GET of its address (a reload, a bookmark) shows the article and its quiz.
    .get('/learning/read/:slug/quiz', ({ params }) => redirect(`${base}/learning/read/${encodeURIComponent(params.slug)}#learn-quiz`),
      { signedIn: true, params: SlugParams })

    // The answer is the page itself (200), not a redirect: the per-question results exist only in this answer (the
    // service records the score and the progress, not which question was right), and the form keeps the choices.
    .post('/learning/read/:slug/quiz', async ({ request, user, params, body }) => {
      const content = await reading.readContent(core, user.id, params.slug)
      const { answers, chosen } = formAnswers(body)
      const fragment = isFragment(request)
      try {
        const result = await reading.submitQuiz(core, user.id, { contentId: content.id, answers })
        const view = { base, content: await reading.readContent(core, user.id, params.slug), chosen, result }
        return html(fragment ? QuizSection(view) : ArticlePage({ ...view, user }))
      } catch (err) {
        if (!(err instanceof HttpError) || err.status !== 422) throw err
        const view = { base, content, chosen, problem: quizProblem(err, answers, content) }
        return html(fragment ? QuizSection(view) : ArticlePage({ ...view, user }), { status: 422 })
      }
    }, { signedIn: true, params: SlugParams, body: FormBody })

    .get('/learning/read/:slug/slides', async ({ user, params }) => {
      const { title, rendered } = await reading.contentSlides(core, params.slug)
      return html(SlidesPage({ base, user, slug: params.slug, title, css: rendered.css, slides: rendered.slides }))
    }, { signedIn: true, params: SlugParams })
}

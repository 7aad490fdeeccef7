// The quiz service's learner pages, read only, for any signed-in user: /progress (the dashboard figures, the
// scores-over-time chart and the history), /reviews (the questions due under spaced repetition) and /favorites (the
// starred questions with their answers). One URL serves the page and, for htmx requests, its content fragment; the
// figures come from the same services as the JSON API.
import { Elysia } from 'elysia'
import { isFragment, pageContext } from '../../../views/layout'
import { FormBody, formFields, html, redirect } from '../../../views/page'
import * as attempts from '../services/attempts'
import { bankQuestions } from '../services/bank'
import { favoriteIds } from '../services/favorites'
import { getUserSettings, saveUserSettings } from '../services/accounts'
import { DIGEST_SETTING, dueReminders } from '../services/reminders'
import type { QuizState } from '../state'
import { DigestForm, FavoritesContent, FavoritesPage, ProgressContent, ProgressPage, ReviewsContent, ReviewsPage } from '../views/learner'

/** Due questions listed on the reviews page (the count says how many more are due). */
export const REVIEWS_LISTED = 50
/** Quizzes drawn as lines on the progress page's chart, the most recently taken (more lines than this cannot be told apart). */
export const CHART_QUIZZES = 8

export const learnerPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const digestOn = async (userId: number) => (await getUserSettings(core, userId))[DIGEST_SETTING] === true
  const ctx = pageContext(base, core.config.challenge)
  return new Elysia()
    .use(pages)
    .get('/progress', async ({ request, user }) => {
      const [dashboard, history] = await Promise.all([attempts.dashboard(core, user), attempts.history(core, user)])
      if (isFragment(request)) return html(ProgressContent({ base, dashboard, history, chartQuizzes: CHART_QUIZZES }))
      return html(ProgressPage({ ctx, user, dashboard, history, chartQuizzes: CHART_QUIZZES }))
    }, { signedIn: true })
    .get('/reviews', async ({ request, user }) => {
      const [due, digest] = await Promise.all([dueReminders(core, user.id, REVIEWS_LISTED), digestOn(user.id)])
      if (isFragment(request)) return html(ReviewsContent({ base, due, limit: REVIEWS_LISTED, digest }))
      return html(ReviewsPage({ ctx, user, due, limit: REVIEWS_LISTED, digest }))
    }, { signedIn: true })
    // The daily review email on or off: the same user setting PUT /api/auth/me/settings writes.
    .post('/reviews/digest', async ({ request, user, body }) => {
      const on = formFields(body).on === '1'
      await saveUserSettings(core, user.id, { ...(await getUserSettings(core, user.id)), [DIGEST_SETTING]: on })
      if (!isFragment(request)) return redirect(`${base}/reviews#digest`)
      return html(DigestForm({ base, on, saved: true }))
    }, { signedIn: true, body: FormBody })
    .get('/reviews/digest', () => redirect(`${base}/reviews#digest`), { signedIn: true })
    .get('/favorites', async ({ request, user }) => {
      const questions = await bankQuestions(core, user, await favoriteIds(core, user.id))
      if (isFragment(request)) return html(FavoritesContent({ base, questions }))
      return html(FavoritesPage({ ctx, user, questions }))
    }, { signedIn: true })
}

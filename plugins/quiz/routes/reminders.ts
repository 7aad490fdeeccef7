// Spaced-repetition reminders (beyond the API's spec), the JSON API. The rules are in services/reminders.ts.
import { Elysia } from 'elysia'
import { DUE_LIMIT_DEFAULT, DueQuery, DueResponse, ReviewAnswerBody, ReviewAnswerResponse, ReviewQuiz } from '../models/reminders'
import * as reminders from '../services/reminders'
import type { QuizState } from '../state'

const tags = ['Reminders']
const ALGORITHM = [
  'Every submitted attempt moves the caller\'s schedule card of each question it graded with FSRS (the ts-fsrs package',
  'with its default parameters: request_retention 0.9, maximum_interval 36500 days, no fuzz, default weights): a wrong or',
  'unanswered question is rated Again (due again soon), a right one Good (due later, further out each time it is right).',
].join(' ')

export const reminderRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/reminders' })
    .use(auth)
    .get('/due', ({ user, query }) => reminders.dueReminders(core, user.id, query.limit ?? DUE_LIMIT_DEFAULT), {
      role: 'user', query: DueQuery, response: DueResponse,
      detail: {
        tags, summary: 'The caller\'s questions due for review',
        description: [
          ALGORITHM, '`count` is how many questions are due now, `next_due` the earliest due time of any card (null with none),',
          '`questions` the due ones, most overdue first, up to `limit`. Deleting an attempt removes the cards of its questions.',
          `A user who sets \`"${reminders.DIGEST_SETTING}": true\` in PUT ${api}/auth/me/settings gets one email a day (07:00 server`,
          'time) naming the questions due, when any are; never two on one day, whichever process sends it.',
        ].join(' '),
      },
    })
    .post('/review-quiz', ({ user, query }) => reminders.reviewQuiz(core, user.id, query.limit ?? DUE_LIMIT_DEFAULT), {
      role: 'user', query: DueQuery, response: ReviewQuiz,
      detail: {
        tags, summary: 'A review quiz of the due questions',
        description: [
          'The caller\'s due questions (most overdue first, up to `limit`) as a learning view with answers and explanations.',
          'Nothing is stored and no quiz is created, so nothing needs publishing and no one else sees it. The schedule moves',
          `when a question is answered: one at a time with POST ${api}/reminders/answer, or in a submitted attempt`,
          `(POST ${api}/attempts/{attempt_id}/submit). ${ALGORITHM}`,
        ].join(' '),
      },
    })
    .post('/answer', ({ user, body }) => reminders.answerReview(core, user.id, body), {
      role: 'user', body: ReviewAnswerBody, response: ReviewAnswerResponse,
      detail: {
        tags, summary: 'Answer one question on the caller\'s review schedule',
        description: [
          'Grades the answer (the exact text of an option; null counts as wrong) and moves the caller\'s card of the question',
          'in one transaction: wrong is Again, right is Good, as in a submit. Answering before the question is due is allowed:',
          'FSRS weighs the time since the last review. 404 when the question is not on the caller\'s schedule (never answered',
          `in a submitted attempt). No attempt is stored. Answers \`next_due\`, the new due time. ${ALGORITHM}`,
        ].join(' '),
      },
    })
}

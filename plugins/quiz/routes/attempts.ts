// Attempts and saved progress, the JSON API. Routing, guards, validation and response shaping only; the rules are
// in services/attempts.ts. The static paths (progress, in-progress, stats/dashboard, history) come before `/:attempt_id`.
import { Elysia, t } from 'elysia'
import {
  AttemptDetail, AttemptListQuery, AttemptParams, AttemptResponse, Dashboard, HistoryEntry, InProgressItem, QuizIdQuery,
  SavedProgress, SavedProgressAnswer, SavedResponse, SessionHeaders, StartQuery, SubmitBody,
} from '../models/attempts'
import * as attempts from '../services/attempts'
import type { QuizState } from '../state'

const tags = ['Attempts']
const OWNER = 'Only the owner may touch an attempt: 404 for an unknown attempt, 403 for another user\'s.'
const LOCK = [
  'Device lock: send `x-quiz-session` (any id of the browser tab or device, up to 200 characters) to take a 30-second lock',
  'on this quiz\'s saved progress; the same id renews it on every save and read. While another id holds a live lock, both',
  'saving and reading answer 409. Without the header no lock is taken or checked.',
].join(' ')

/** JSON `null`: a bare null is not a body every client reads as JSON. */
// Typed as never: Elysia sends a returned Response as it is, and the route's schema (nullable) documents it.
const jsonNull = () => new Response('null', { headers: { 'content-type': 'application/json' } }) as never

export const attemptRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/attempts' })
    .use(auth)
    .post('/start', ({ user, query }) => attempts.startAttempt(core, user, query.quiz_id, query.fresh ?? false), {
      role: 'user', query: StartQuery, response: AttemptResponse,
      detail: {
        tags, summary: 'Start or resume an attempt',
        description: [
          'Resumes the caller\'s most recent incomplete attempt on the quiz; with none, or with `fresh=true`, starts a new one',
          '(`total_questions` is the quiz\'s question count now). fresh=true completes nothing: earlier incomplete attempts stay',
          'incomplete, and the new one is the one later starts resume. Parallel starts on the same quiz resume one attempt, never',
          'two. The quiz must be visible to the caller: out of the trash and, for regular users, published (404 otherwise).',
        ].join(' '),
      },
    })
    .post('/progress', ({ user, body, headers }) => attempts.saveProgress(core, user, body, headers['x-quiz-session']), {
      role: 'user', body: SavedProgress, headers: SessionHeaders, response: SavedResponse,
      detail: {
        tags, summary: 'Save the progress of an attempt',
        description: [
          'Stores the body as the caller\'s saved progress of that quiz (one per user and quiz; a save replaces the previous one)',
          'for 7 days from this save. `attempt_id` must be the caller\'s incomplete attempt on `quiz_id`: 404 unknown attempt,',
          '403 another user\'s, 400 an attempt on another quiz, 409 an attempt already submitted.', LOCK,
        ].join(' '),
      },
    })
    .get('/progress', async ({ user, query, headers }) => {
      const saved = await attempts.readProgress(core, user, query.quiz_id, headers['x-quiz-session'])
      return saved ?? jsonNull()
    }, {
      role: 'user', query: QuizIdQuery, headers: SessionHeaders, response: t.Nullable(SavedProgressAnswer),
      detail: {
        tags, summary: 'Read the saved progress of a quiz',
        description: [
          'The caller\'s saved progress of the quiz, or null (none saved, expired, or its attempt was submitted or deleted).',
          'On a timed quiz whose saved timer has run out the attempt is submitted automatically with the saved answers (answers',
          'for questions no longer in the quiz are dropped; the rest count as unanswered) and the answer is null; read the result',
          `with GET ${api}/attempts/{attempt_id}. The timer has run out when \`started_at\` + \`total_time\` seconds is now or`,
          'earlier (both saved), otherwise when the saved `time_left` is 0 or less. Two reads racing submit it exactly once.', LOCK,
        ].join(' '),
      },
    })
    .delete('/progress/:attempt_id', async ({ user, params, set }) => {
      await attempts.clearProgress(core, user, params.attempt_id)
      set.status = 204
    }, {
      role: 'user', params: AttemptParams,
      detail: {
        tags, summary: 'Clear saved progress',
        description: `204; the saved progress of that attempt and its device lock are gone (204 too when none was saved). ${OWNER}`,
      },
    })
    .get('/in-progress', ({ user }) => attempts.inProgress(core, user), {
      role: 'user', response: t.Array(InProgressItem),
      detail: {
        tags, summary: 'Attempts under way',
        description: 'For each quiz (out of the trash) with an incomplete attempt of the caller, the most recent such attempt; newest first.',
      },
    })
    .get('/stats/dashboard', ({ user }) => attempts.dashboard(core, user), {
      role: 'user', response: Dashboard,
      detail: {
        tags, summary: 'The caller\'s dashboard',
        description: [
          'Counts and scores over the caller\'s completed attempts (incomplete ones are left out). Scores are percentages with one',
          'decimal; `average_score` is 0 with no attempts. `total_documents` counts the documents the caller can see (all of them',
          'for moderators, their own for others). `quiz_stats` has one entry per quiz attempted (trashed quizzes included), the',
          'quiz with the latest completed attempt first.',
        ].join(' '),
      },
    })
    .get('/history', ({ user }) => attempts.history(core, user), {
      role: 'user', response: t.Array(HistoryEntry),
      detail: {
        tags, summary: 'The caller\'s score history',
        description: [
          'Per quiz, the caller\'s completed attempts oldest first (`date` is when it was completed, `total` the questions graded);',
          'the quiz with the latest completed attempt first.',
        ].join(' '),
      },
    })
    .get('', ({ user, query }) => attempts.listAttempts(core, user, query.quiz_id ?? null), {
      role: 'user', query: AttemptListQuery, response: t.Array(AttemptResponse),
      detail: { tags, summary: 'The caller\'s attempts', description: 'Complete and incomplete, newest first; only the caller\'s own.' },
    })
    .get('/:attempt_id/in-progress', async ({ user, query }) => (await attempts.latestInProgress(core, user, query.quiz_id)) ?? jsonNull(), {
      role: 'user', params: AttemptParams, query: QuizIdQuery, response: t.Nullable(AttemptResponse),
      detail: {
        tags, summary: 'The latest incomplete attempt on a quiz',
        description: [
          'The caller\'s most recent incomplete attempt on `quiz_id`, or null. The path\'s attempt_id is not used for the',
          'lookup (it must be a valid id, any number works); `quiz_id` alone decides.',
        ].join(' '),
      },
    })
    .post('/:attempt_id/submit', async ({ user, params, body }) => (await attempts.submitAttempt(core, user, params.attempt_id, body.answers))!, {
      role: 'user', params: AttemptParams, body: SubmitBody, response: AttemptDetail,
      detail: {
        tags, summary: 'Submit an attempt',
        description: [
          'Grades every question of the quiz (in quiz order): an answer is correct when it equals the correct option exactly;',
          'a question with no entry, or a null answer, counts as incorrect. `score` is the correct count, `percentage`',
          '100 * score / total rounded to one decimal (0 with no questions), `total_questions` the questions graded. In one step',
          'the answers are stored, the attempt completed, the saved progress of the quiz cleared, and the caller\'s reminder',
          `schedule updated (see ${api}/reminders/due). 409 when the attempt is already submitted; 400 naming any question that`,
          `is not in the quiz, or a question answered twice; nothing changes then. An attempt started before its quiz went to the trash may still be submitted. ${OWNER}`,
        ].join(' '),
      },
    })
    .get('/:attempt_id', ({ user, params }) => attempts.getAttempt(core, user, params.attempt_id), {
      role: 'user', params: AttemptParams, response: AttemptDetail,
      detail: {
        tags, summary: 'An attempt with its answers',
        description: `The attempt and its graded answers in quiz order; \`answers\` is empty while the attempt is incomplete. ${OWNER}`,
      },
    })
    .delete('/:attempt_id', async ({ user, params, set }) => {
      await attempts.deleteAttempt(core, user, params.attempt_id)
      set.status = 204
    }, {
      role: 'user', params: AttemptParams,
      detail: {
        tags, summary: 'Delete an attempt',
        description: [
          '204. The attempt goes with its answers, and the caller\'s reminder schedule of every question it answered is removed',
          '(the schedule is kept per user and question, so this resets those questions even if another attempt graded them too).',
          `Saved progress of the attempt is cleared. Attempts stay while their quiz is in the trash and go when it is deleted for good. ${OWNER}`,
        ].join(' '),
      },
    })
}

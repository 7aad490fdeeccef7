// The quiz player's pages, for any signed-in user: a quiz's start page, taking it (timed: every question in one form
// with a countdown and autosave; learning: one question per page, checked at once, with the tutor and the question
// read aloud), the review of a finished attempt, and the due-review player. The rules are the JSON API's
// (services/attempts.ts, reminders.ts, tutor.ts, speech.ts); the saved progress and its device lock are the API's
// too, the device being this browser (an httpOnly cookie), so a second browser on the same quiz gets the lock's
// message. Every form works without JavaScript; views/static/player.js adds the countdown and the autosave.
import { Elysia, t } from 'elysia'
import { readCookie, httpOnlyCookie } from '../../../src/auth/cookie'
import { HttpError } from '../../../src/core/errors'
import { RowId } from '../../../src/core/schema'
import { isFragment, pageContext } from '../../../views/layout'
import { FormBody, formFields, html, redirect } from '../../../views/page'
import type { AttemptResponse, SavedProgress } from '../models/attempts'
import { TUTOR_MESSAGE_MAX, TUTOR_MESSAGES_MAX, type TutorMessage } from '../models/tutor'
import { SPEECH_TEXT_MAX } from '../models/speech'
import type { QuizUser } from '../services/accounts'
import * as attempts from '../services/attempts'
import * as quizzes from '../services/quizzes'
import { answerReview, dueReminders, reviewQuiz } from '../services/reminders'
import { speak } from '../services/speech'
import { chat, listTeachModels } from '../services/tutor'
import type { QuizState } from '../state'
import {
  AttemptReviewPage, DueReviewPage, LearningPlayer, LockedPage, StartPage, TimedPlayer, TutorPanel, type DueReviewProps, type TutorState,
} from '../views/player'

/** This browser, for the saved progress's device lock: a random id in an httpOnly cookie. */
export const DEVICE_COOKIE = 'quiz_device'
const DEVICE_COOKIE_S = 365 * 24 * 60 * 60
/** A tutor conversation in the player is kept a day, per attempt and question. */
const TUTOR_CHAT_TTL_S = 24 * 60 * 60
/** The last due-review answer, shown once above the next question. */
const REVIEW_RESULT_TTL_S = 10 * 60

const QuizParams = t.Object({ quiz_id: RowId() })
const AttemptParams = t.Object({ attempt_id: RowId() })
const PlayQuery = t.Object({ q: t.Optional(t.String({ maxLength: 10 })), expired: t.Optional(t.String({ maxLength: 1 })) })

const tutorKey = (userId: number, attemptId: number, questionId: number) => `quiz.player-tutor:${userId}:${attemptId}:${questionId}`
const reviewResultKey = (userId: number) => `quiz.review-result:${userId}`

/** The `q_<question id>` radio fields of a player form: question id -> chosen option text. */
function formAnswers(f: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(f)) {
    const m = /^q_([1-9][0-9]{0,9})$/.exec(name)
    if (m) out[m[1]!] = value
  }
  return out
}

const isLocked = (err: unknown) => err instanceof HttpError && err.code === 'progress_locked'

interface StoredChat { messages: TutorMessage[]; suggestions: string[] }

export const playerPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const playUrl = (attemptId: number) => `${base}/attempts/${attemptId}/play`

  /** This browser's device id, and the Set-Cookie that gives it one the first time. */
  const deviceOf = (request: Request): { device: string; headers: Record<string, string> } => {
    const known = readCookie(request, DEVICE_COOKIE)
    if (known && /^[0-9a-f-]{36}$/.test(known)) return { device: known, headers: {} }
    const device = crypto.randomUUID()
    return { device, headers: { 'set-cookie': httpOnlyCookie(core.config, DEVICE_COOKIE, device, base || '/', DEVICE_COOKIE_S) } }
  }

  /** The quiz as its player shows it (answers only in learning mode); 404 when the caller may not take it. */
  const quizOf = async (user: QuizUser, quizId: number) => quizzes.getQuiz(core, user, quizId, false)

  /** The first saved progress of an attempt: no answers, the timer (when the quiz has a time limit) starting now. */
  const firstProgress = (quiz: { id: number; mode: string; time_limit_minutes: number | null }, attempt: AttemptResponse): SavedProgress => {
    const total = quiz.mode === 'timed' && quiz.time_limit_minutes ? quiz.time_limit_minutes * 60 : null
    return {
      quiz_id: quiz.id, attempt_id: attempt.id, answers: {}, current_idx: 0, mode: quiz.mode, voice: null,
      time_left: total, started_at: total === null ? null : new Date(core.now()).toISOString(), total_time: total,
    }
  }

  const lockedPage = (user: QuizUser, quiz: { id: number; title: string }, headers: Record<string, string>) =>
    html(LockedPage({ ctx, user, quiz }), { status: 409, headers })

  const tutorState = async (userId: number, attemptId: number, questionId: number, error?: string): Promise<TutorState> => {
    const [models, stored] = await Promise.all([listTeachModels(core), core.kv.get<StoredChat>(tutorKey(userId, attemptId, questionId))])
    return { available: models.length > 0, messages: stored?.messages ?? [], suggestions: stored?.suggestions ?? [], error }
  }

  /**
   * The attempt's saved progress for this browser (409 another's lock); a first one is saved when there is none.
   * Null when the attempt is submitted meanwhile: its timer ran out (this read, or a parallel one, submitted it).
   */
  const progressFor = async (user: QuizUser, quiz: { id: number; mode: string; time_limit_minutes: number | null }, attempt: AttemptResponse, device: string): Promise<SavedProgress | null> => {
    const saved = await attempts.readProgress(core, user, quiz.id, device)
    if (saved) return saved
    const first = firstProgress(quiz, attempt)
    try {
      await attempts.saveProgress(core, user, first, device)
    } catch (err) {
      if (err instanceof HttpError && err.code === 'attempt_completed') return null
      throw err
    }
    return first
  }

  /** The due-review page's content: the most overdue question, how many are due, and the answer just given. */
  async function dueReview(user: QuizUser, answered?: string): Promise<Pick<DueReviewProps, 'question' | 'remaining' | 'result'>> {
    const [due, next, last] = await Promise.all([
      dueReminders(core, user.id, 1), reviewQuiz(core, user.id, 1), core.kv.get<NonNullable<DueReviewProps['result']>>(reviewResultKey(user.id)),
    ])
    return { question: next.questions[0] ?? null, remaining: due.count, result: last && answered === String(last.question_id) ? last : null }
  }

  /**
   * The progress the player works on, or the page instead of it: the lock's message (409) when another browser holds
   * the quiz, the results when the timer ran out (the read submitted it), the start page when this browser's saved
   * progress is another (newer) attempt's, which that page offers to continue.
   */
  const openProgress = async (user: QuizUser, quiz: { id: number; title: string; mode: string; time_limit_minutes: number | null },
    attempt: AttemptResponse, device: string, headers: Record<string, string>): Promise<SavedProgress | Response> => {
    let saved: SavedProgress | null
    try {
      saved = await progressFor(user, quiz, attempt, device)
    } catch (err) {
      if (!isLocked(err)) throw err
      return lockedPage(user, quiz, headers)
    }
    if (!saved) return redirect(`${base}/attempts/${attempt.id}?expired=1`, headers)
    if (saved.attempt_id !== attempt.id) return redirect(`${base}/play/${quiz.id}`, headers)
    return saved
  }

  return new Elysia()
    .use(pages)
    // A quiz's start page: how it works, continue or start, the caller's completed attempts.
    .get('/play/:quiz_id', async ({ user, params }) => {
      const { questions: _, ...quiz } = await quizOf(user, params.quiz_id)
      const [current, all] = await Promise.all([attempts.latestInProgress(core, user, quiz.id), attempts.listAttempts(core, user, quiz.id)])
      return html(StartPage({ ctx, user, quiz, current, completed: all.filter((a) => a.completed_at !== null) }))
    }, { signedIn: true, params: QuizParams })
    // Start (fresh=1: a new attempt) or continue; a timed attempt whose time ran out meanwhile shows its results.
    .post('/play/:quiz_id', async ({ request, user, params, body }) => {
      const { device, headers } = deviceOf(request)
      const { questions: _, ...quiz } = await quizOf(user, params.quiz_id)
      const fresh = formFields(body).fresh === '1'
      const current = await attempts.latestInProgress(core, user, quiz.id)
      try {
        await attempts.readProgress(core, user, quiz.id, device) // takes this browser's lock; submits an expired timer
      } catch (err) {
        if (!isLocked(err)) throw err
        const all = await attempts.listAttempts(core, user, quiz.id)
        return html(StartPage({ ctx, user, quiz, current, completed: all.filter((a) => a.completed_at !== null), locked: true }), { status: 409, headers })
      }
      if (current && !fresh && (await attempts.getAttempt(core, user, current.id)).completed_at) {
        return redirect(`${base}/attempts/${current.id}?expired=1`, headers)
      }
      const attempt = await attempts.startAttempt(core, user, quiz.id, fresh)
      const saved = await core.kv.get<SavedProgress>(attempts.progressKey(user.id, quiz.id))
      if (!saved || saved.attempt_id !== attempt.id) await attempts.saveProgress(core, user, firstProgress(quiz, attempt), device)
      return redirect(playUrl(attempt.id), headers)
    }, { signedIn: true, params: QuizParams, body: FormBody })
    .get('/attempts/:attempt_id/play', async ({ request, user, params, query }) => {
      const { device, headers } = deviceOf(request)
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      if (attempt.completed_at) return redirect(`${base}/attempts/${attempt.id}`, headers)
      const { questions, ...quiz } = await quizOf(user, attempt.quiz_id)
      const saved = await openProgress(user, quiz, attempt, device, headers)
      if (saved instanceof Response) return saved
      if (questions.length === 0) return redirect(`${base}/play/${quiz.id}`, headers)
      if (quiz.mode === 'timed') {
        const timer = saved.started_at && saved.total_time !== null
          ? (() => {
            const deadline = Date.parse(saved.started_at) + saved.total_time * 1000
            return { deadline: new Date(deadline).toISOString(), remaining: Math.max(0, Math.round((deadline - core.now()) / 1000)) }
          })()
          : null
        return html(TimedPlayer({ ctx, user, quiz, attempt, questions, answers: saved.answers, timer }), { headers })
      }
      const asked = query.q && /^\d{1,4}$/.test(query.q) ? Number(query.q) : saved.current_idx + 1
      const index = Math.min(Math.max(asked, 1), questions.length)
      if (index - 1 !== saved.current_idx) await attempts.saveProgress(core, user, { ...saved, current_idx: index - 1 }, device)
      const tutor = await tutorState(user.id, attempt.id, questions[index - 1]!.id)
      return html(LearningPlayer({ ctx, user, quiz, attempt, questions, answers: saved.answers, index, tutor }), { headers })
    }, { signedIn: true, params: AttemptParams, query: PlayQuery })
    // The timed player's autosave (views/static/player.js): the answers so far; the timer stays the server's.
    .post('/attempts/:attempt_id/progress', async ({ request, user, params, body }) => {
      const { device, headers } = deviceOf(request)
      const f = formFields(body)
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      const saved = await core.kv.get<SavedProgress>(attempts.progressKey(user.id, attempt.quiz_id))
      const quiz = await quizOf(user, attempt.quiz_id)
      const current = saved && saved.attempt_id === attempt.id ? saved : firstProgress(quiz, attempt)
      const index = /^\d{1,4}$/.test(f.current_idx ?? '') ? Number(f.current_idx) : current.current_idx
      await attempts.saveProgress(core, user, { ...current, answers: formAnswers(f), current_idx: index }, device)
      return new Response(null, { status: 204, headers })
    }, { signedIn: true, params: AttemptParams, body: FormBody })
    // Learning mode: one answer, checked at once (the page shows right or wrong and the explanation).
    .post('/attempts/:attempt_id/answer', async ({ request, user, params, body }) => {
      const { device, headers } = deviceOf(request)
      const f = formFields(body)
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      if (attempt.completed_at) return redirect(`${base}/attempts/${attempt.id}`, headers)
      const { questions, ...quiz } = await quizOf(user, attempt.quiz_id)
      const index = Math.min(Math.max(/^\d{1,4}$/.test(f.q ?? '') ? Number(f.q) : 1, 1), questions.length)
      const question = questions.find((q) => String(q.id) === f.question_id)
      if (!question) throw HttpError.badRequest('question_not_in_quiz', 'That question is not part of this quiz')
      const saved = await openProgress(user, quiz, attempt, device, headers)
      if (saved instanceof Response) return saved
      const answer = formAnswers(f)[String(question.id)]
      if (answer === undefined || !question.options.includes(answer)) {
        const tutor = await tutorState(user.id, attempt.id, question.id)
        return html(LearningPlayer({
          ctx, user, quiz, attempt, questions, answers: saved.answers, index: questions.indexOf(question) + 1, tutor,
          flash: { kind: 'error', text: 'Choose one of the answers, then check it.' },
        }), { status: 422, headers })
      }
      // a checked answer stays: the first answer is the one that counts
      const answers = saved.answers[String(question.id)] === undefined ? { ...saved.answers, [String(question.id)]: answer } : saved.answers
      await attempts.saveProgress(core, user, { ...saved, answers, current_idx: questions.indexOf(question) }, device)
      return redirect(`${playUrl(attempt.id)}?q=${questions.indexOf(question) + 1}#feedback`, headers)
    }, { signedIn: true, params: AttemptParams, body: FormBody })
    // Submit: the form's answers (timed) over the saved ones (learning keeps them there); then the results.
    .post('/attempts/:attempt_id/submit', async ({ user, params, body }) => {
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      if (attempt.completed_at) return redirect(`${base}/attempts/${attempt.id}`)
      const { questions } = await quizOf(user, attempt.quiz_id)
      const saved = await core.kv.get<SavedProgress>(attempts.progressKey(user.id, attempt.quiz_id))
      const given = { ...(saved && saved.attempt_id === attempt.id ? saved.answers : {}), ...formAnswers(formFields(body)) }
      const answers = questions.filter((q) => given[String(q.id)] !== undefined).map((q) => ({ question_id: q.id, user_answer: given[String(q.id)]! }))
      try {
        await attempts.submitAttempt(core, user, attempt.id, answers)
      } catch (err) {
        if (!(err instanceof HttpError && err.code === 'attempt_completed')) throw err
      }
      return redirect(`${base}/attempts/${attempt.id}`)
    }, { signedIn: true, params: AttemptParams, body: FormBody })
    // The tutor beside a learning question: the conversation is kept a day (per attempt and question).
    .post('/attempts/:attempt_id/tutor', async ({ request, user, params, body }) => {
      const f = formFields(body)
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      const { questions } = await quizOf(user, attempt.quiz_id)
      const question = questions.find((q) => String(q.id) === f.question_id)
      if (!question) throw HttpError.badRequest('question_not_in_quiz', 'That question is not part of this quiz')
      const index = questions.indexOf(question) + 1
      const key = tutorKey(user.id, attempt.id, question.id)
      const message = (f.message ?? '').trim().slice(0, TUTOR_MESSAGE_MAX)
      let error: string | undefined
      if (!message) error = 'Write your question for the tutor first.'
      else {
        const stored = (await core.kv.get<StoredChat>(key)) ?? { messages: [], suggestions: [] }
        const messages: TutorMessage[] = [...stored.messages, { role: 'user' as const, content: message }].slice(-(TUTOR_MESSAGES_MAX - 1))
        if (messages[0]?.role === 'assistant') messages.shift()
        try {
          const answer = await chat(core, user, { question_id: question.id, messages })
          await core.kv.set(key, { messages: [...messages, { role: 'assistant', content: answer.reply }], suggestions: answer.suggestions }, TUTOR_CHAT_TTL_S)
        } catch (err) {
          // the tutor unavailable, busy or refusing is said in its panel; the question page stays usable
          if (!(err instanceof HttpError)) throw err
          const retryAfter = Number(err.headers?.['retry-after'] ?? 0)
          error = retryAfter > 0 ? `${err.message}. You can ask again in ${Math.ceil(retryAfter / 60)} minutes.` : err.message
        }
      }
      if (isFragment(request)) return html(TutorPanel({ base, attemptId: attempt.id, questionId: question.id, index, tutor: await tutorState(user.id, attempt.id, question.id, error) }))
      if (error) {
        const { questions: qs, ...quiz } = await quizOf(user, attempt.quiz_id)
        const saved = await core.kv.get<SavedProgress>(attempts.progressKey(user.id, attempt.quiz_id))
        const answers = saved && saved.attempt_id === attempt.id ? saved.answers : {}
        return html(LearningPlayer({ ctx, user, quiz, attempt, questions: qs, answers, index, tutor: await tutorState(user.id, attempt.id, question.id, error) }), { status: 422 })
      }
      return redirect(`${playUrl(attempt.id)}?q=${index}#tutor`)
    }, { signedIn: true, params: AttemptParams, body: FormBody })
    // The question read aloud (the API's speech: a cloud voice, or the built-in offline one).
    .get('/attempts/:attempt_id/questions/:question_id/speech', async ({ user, params }) => {
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      const { questions } = await quizOf(user, attempt.quiz_id)
      const question = questions.find((q) => q.id === params.question_id)
      if (!question) throw HttpError.notFound('question_not_found', 'That question is not part of this quiz')
      const text = [question.question_text, ...question.options.map((o, i) => `Option ${i + 1}: ${o}`)].join('. ').slice(0, SPEECH_TEXT_MAX)
      const audio = await speak(core, user, { text })
      return new Response(audio as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'audio/mpeg', 'cache-control': 'private, max-age=3600' } })
    }, { signedIn: true, params: t.Object({ attempt_id: RowId(), question_id: RowId() }) })
    .get('/attempts/:attempt_id', async ({ user, params, query }) => {
      const attempt = await attempts.getAttempt(core, user, params.attempt_id)
      if (!attempt.completed_at) return redirect(playUrl(attempt.id))
      const quiz = await quizOf(user, attempt.quiz_id).catch((err) => {
        if (err instanceof HttpError && err.status === 404) return null
        throw err
      })
      return html(AttemptReviewPage({ ctx, user, quiz: quiz && { id: quiz.id, title: quiz.title }, attempt, expired: query.expired === '1' }))
    }, { signedIn: true, params: AttemptParams, query: PlayQuery })
    // A reload after a boosted form post asks for the post's path: the player or the results, never a 404.
    .get('/attempts/:attempt_id/:action', ({ params }) => redirect(playUrl(params.attempt_id)), {
      signedIn: true, params: t.Object({ attempt_id: RowId(), action: t.Union([t.Literal('answer'), t.Literal('submit'), t.Literal('tutor'), t.Literal('progress')]) }),
    })
    // The due-review player: the most overdue question, checked at once; the answer moves its schedule.
    .get('/reviews/play', async ({ user, query }) => {
      return html(DueReviewPage({ ctx, user, ...(await dueReview(user, query.answered)) }))
    }, { signedIn: true, query: t.Object({ answered: t.Optional(t.String({ maxLength: 12 })) }) })
    .post('/reviews/answer', async ({ user, body }) => {
      const f = formFields(body)
      const questionId = /^[1-9]\d{0,9}$/.test(f.question_id ?? '') ? Number(f.question_id) : NaN
      if (!Number.isSafeInteger(questionId)) throw HttpError.badRequest('invalid_input', 'Which question was answered is missing')
      const answer = f.dont_know === '1' ? null : formAnswers(f)[String(questionId)]
      if (answer === undefined) {
        return html(DueReviewPage({ ctx, user, ...(await dueReview(user)), flash: { kind: 'error', text: 'Choose an answer, or press "I don\'t know".' } }), { status: 422 })
      }
      const result = await answerReview(core, user.id, { question_id: questionId, answer })
      const [q] = await core.db.sql<{ question_text: string }>`select question_text from quiz.questions where id = ${questionId}`
      await core.kv.set(reviewResultKey(user.id), { ...result, answer, question_text: q?.question_text ?? '' }, REVIEW_RESULT_TTL_S)
      return redirect(`${base}/reviews/play?answered=${questionId}#feedback`)
    }, { signedIn: true, body: FormBody })
    .get('/reviews/answer', () => redirect(`${base}/reviews/play`), { signedIn: true })
}

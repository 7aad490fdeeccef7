// Spaced-repetition reminders (beyond the API's spec): one FSRS card per (user, question), moved by every submit
// (a wrong or unanswered question is rated Again, a right one Good), and the caller's due questions.
import { createEmptyCard, fsrs, Rating, type Card, type State } from 'ts-fsrs'
import { publicOrigin } from '../../../src/config'
import { mailQuote } from '../../../src/core/mail'
import type { Core } from '../../../src/plugin'
import { HttpError } from '../../../src/core/errors'
import type { DueResponse, ReviewAnswerBody, ReviewAnswerResponse, ReviewQuiz } from '../models/reminders'
import { optionsOf } from './question-index'

/** ts-fsrs with its default parameters (request_retention 0.9, maximum_interval 36500 days, no fuzz). */
const scheduler = fsrs()

interface CardRow {
  question_id: number; due: Date; stability: number; difficulty: number; elapsed_days: number; scheduled_days: number
  learning_steps: number; reps: number; lapses: number; state: number; last_review: Date | null
}

const toCard = (r: CardRow): Card => ({
  due: r.due, stability: Number(r.stability), difficulty: Number(r.difficulty), elapsed_days: r.elapsed_days,
  scheduled_days: r.scheduled_days, learning_steps: r.learning_steps, reps: r.reps, lapses: r.lapses, state: r.state as State,
  ...(r.last_review ? { last_review: r.last_review } : {}),
})

/**
 * Moves the user's card of each graded question: Again when wrong or unanswered, Good when right. Call it inside
 * the submit's transaction; the cards are locked while they move.
 */
export async function scheduleReviews(core: Core, userId: number, graded: { questionId: number; correct: boolean }[], now: Date): Promise<void> {
  if (graded.length === 0) return
  const ids = graded.map((g) => g.questionId)
  const rows = await core.db.sql<CardRow>`
    select question_id, due, stability, difficulty, elapsed_days, scheduled_days, learning_steps, reps, lapses, state, last_review
    from quiz.review_cards
    where user_id = ${userId} and question_id in (select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int)
    for update`
  const existing = new Map(rows.map((r) => [r.question_id, toCard(r)]))
  const next = graded.map((g) => {
    const card = scheduler.next(existing.get(g.questionId) ?? createEmptyCard(now), now, g.correct ? Rating.Good : Rating.Again).card
    return {
      question_id: g.questionId, due: card.due.toISOString(), stability: card.stability, difficulty: card.difficulty,
      elapsed_days: card.elapsed_days, scheduled_days: card.scheduled_days, learning_steps: card.learning_steps, reps: card.reps,
      lapses: card.lapses, state: card.state, last_review: card.last_review ? card.last_review.toISOString() : null,
    }
  })
  await core.db.sql`
    insert into quiz.review_cards (user_id, question_id, due, stability, difficulty, elapsed_days, scheduled_days, learning_steps, reps, lapses, state, last_review)
    select ${userId}, r.question_id, r.due, r.stability, r.difficulty, r.elapsed_days, r.scheduled_days, r.learning_steps, r.reps, r.lapses, r.state, r.last_review
    from jsonb_to_recordset(${{ value: next }}::jsonb -> 'value') as r(question_id int, due timestamptz, stability float8, difficulty float8,
      elapsed_days int, scheduled_days int, learning_steps int, reps int, lapses int, state smallint, last_review timestamptz)
    on conflict (user_id, question_id) do update set due = excluded.due, stability = excluded.stability, difficulty = excluded.difficulty,
      elapsed_days = excluded.elapsed_days, scheduled_days = excluded.scheduled_days, learning_steps = excluded.learning_steps,
      reps = excluded.reps, lapses = excluded.lapses, state = excluded.state, last_review = excluded.last_review`
}

interface DueRow {
  question_id: number; question_text: string; due: Date; quiz_id: number | null
  question_type: string; options: unknown; image_path: string | null; correct_answer: string; explanation: string
}

async function dueRows(core: Core, userId: number, limit: number, now = new Date(core.now()).toISOString()): Promise<DueRow[]> {
  return core.db.sql<DueRow>`
    select c.question_id, q.question_text, c.due, q.question_type, q.options, q.image_path, q.correct_answer, q.explanation,
      (select a.quiz_id from quiz.attempt_answers aa join quiz.attempts a on a.id = aa.attempt_id
       where aa.question_id = c.question_id and a.user_id = ${userId}
       order by a.completed_at desc nulls last, a.id desc limit 1) as quiz_id
    from quiz.review_cards c join quiz.questions q on q.id = c.question_id
    where c.user_id = ${userId} and c.due <= ${now}
    order by c.due, c.question_id limit ${limit}`
}

/** GET /api/reminders/due: how many of the caller's questions are due, the earliest due time, and the first `limit`. */
export async function dueReminders(core: Core, userId: number, limit: number): Promise<DueResponse> {
  const now = new Date(core.now()).toISOString()
  const [summary] = await core.db.sql<{ count: number; next_due: Date | null }>`
    select count(*) filter (where due <= ${now})::int as count, min(due) as next_due from quiz.review_cards where user_id = ${userId}`
  const rows = await dueRows(core, userId, limit)
  return {
    count: summary!.count,
    next_due: summary!.next_due ? summary!.next_due.toISOString() : null,
    questions: rows.map((r) => ({ question_id: r.question_id, question_text: r.question_text, due: r.due.toISOString(), quiz_id: r.quiz_id })),
  }
}

/** POST /api/reminders/review-quiz: the due questions as a learning view; nothing is stored. */
export async function reviewQuiz(core: Core, userId: number, limit: number): Promise<ReviewQuiz> {
  const rows = await dueRows(core, userId, limit)
  return {
    title: 'Due for review',
    mode: 'learning',
    questions_count: rows.length,
    questions: rows.map((r, i) => ({
      id: r.question_id, position: i + 1, question_text: r.question_text, question_type: r.question_type, options: optionsOf(r.options),
      image_path: r.image_path, correct_answer: r.correct_answer, explanation: r.explanation,
    })),
  }
}

/**
 * POST /api/reminders/answer: grades the caller's answer to one question on their schedule (404 when it is not on
 * it) and moves its card, Again or Good as a submit does, in one transaction; early answers count too (FSRS takes the
 * elapsed time into account). Nothing else is stored: no attempt is made.
 */
export async function answerReview(core: Core, userId: number, body: ReviewAnswerBody): Promise<ReviewAnswerResponse> {
  return core.transaction(async (tx) => {
    const [row] = await tx.db.sql<{ correct_answer: string; explanation: string }>`
      select q.correct_answer, q.explanation from quiz.review_cards c join quiz.questions q on q.id = c.question_id
      where c.user_id = ${userId} and c.question_id = ${body.question_id} for update of c`
    if (!row) throw HttpError.notFound('review_not_found', 'This question is not on your review schedule')
    const isCorrect = body.answer !== null && body.answer === row.correct_answer
    await scheduleReviews(tx, userId, [{ questionId: body.question_id, correct: isCorrect }], new Date(tx.now()))
    const [card] = await tx.db.sql<{ due: Date }>`select due from quiz.review_cards where user_id = ${userId} and question_id = ${body.question_id}`
    return { question_id: body.question_id, is_correct: isCorrect, correct_answer: row.correct_answer, explanation: row.explanation, next_due: card!.due.toISOString() }
  })
}

/** The user setting (PUT /api/auth/me/settings) that asks for the daily email of due questions. */
export const DIGEST_SETTING = 'reminder_digest'
/** Questions named in one digest; the count says how many more are due. */
export const DIGEST_QUESTIONS_MAX = 10

/**
 * The daily schedule: one email to each verified user who set `reminder_digest: true` and has questions due. A
 * claim in the temporary store per user and day (set only when absent, kept two days) comes first, so a user gets
 * at most one digest a day, however many processes run the schedule and however often it is restarted. A failed
 * send drops its claim, so the next run tries again. Answers how many digests were sent.
 */
export async function sendDueDigests(core: Core, now = new Date(core.now())): Promise<number> {
  const at = now.toISOString()
  const day = at.slice(0, 10)
  const users = await core.db.sql<{ id: number; email: string; name: string; due: number }>`
    select u.id, u.email, u.name, count(*)::int as due
    from quiz.users u
    join core.kv k on k.key = 'quiz:user:' || u.id || ':settings' and k.value ->> ${DIGEST_SETTING} = 'true'
    join quiz.review_cards c on c.user_id = u.id and c.due <= ${at}
    where u.is_verified
    group by u.id, u.email, u.name
    order by u.id`
  let sent = 0
  for (const user of users) {
    const claim = `quiz:digest:${user.id}:${day}`
    if (!(await core.kv.setIfAbsent(claim, true, 2 * 24 * 3600))) continue
    try {
      const rows = await dueRows(core, user.id, DIGEST_QUESTIONS_MAX, at)
      await core.mail.send(digestMail(core, user, rows.map((r) => r.question_text)))
      sent++
    } catch (err) {
      await core.kv.delete(claim)
      core.log.warn({ err, user: user.id }, 'reminder digest not sent; the next run tries again')
    }
  }
  return sent
}

function digestMail(core: Core, user: { email: string; name: string; due: number }, questions: string[]) {
  const link = `${publicOrigin(core.config)}${core.config.quizBasePath}/`
  const more = user.due - questions.length
  const lines = [
    `Hello ${user.name},`,
    '',
    `${user.due} ${user.due === 1 ? 'question is' : 'questions are'} due for review today:`,
    ...questions.map((q) => `- ${mailQuote(q)}`),
    ...(more > 0 ? [`and ${more} more.`] : []),
    '',
    `Review them: ${link}`,
    '',
    `You get this email because daily review reminders are on in your settings (${DIGEST_SETTING}).`,
  ]
  return { to: user.email, subject: `${user.due} ${user.due === 1 ? 'question' : 'questions'} due for review`, text: lines.join('\n') }
}

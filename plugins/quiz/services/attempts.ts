// Attempts and saved progress: start or resume, submit and grade, list, detail, delete, the in-progress lists,
// the dashboard and history, and the saved progress of an attempt under way (core kv, 7 days) with its device
// lock (30 s). A submit updates the caller's FSRS schedule (services/reminders.ts) in the same transaction.
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import type { Role } from '../models/accounts'
import type {
  AttemptAnswer, AttemptDetail, AttemptResponse, Dashboard, HistoryEntry, InProgressItem, SavedProgress, SubmitBody,
} from '../models/attempts'
import { hasRole } from './accounts'
import { optionsOf } from './question-index'
import { scheduleReviews } from './reminders'

type Caller = { id: number; role: Role }

/** Saved progress lives 7 days from its last save. */
export const PROGRESS_TTL_S = 7 * 24 * 60 * 60
/** A device's lock on a quiz's saved progress lives 30 s from its last save or read. */
export const LOCK_TTL_S = 30

export const progressKey = (userId: number, quizId: number) => `quiz.progress:${userId}:${quizId}`
export const progressLockKey = (userId: number, quizId: number) => `quiz.progress-lock:${userId}:${quizId}`

interface AttemptRow {
  id: number; user_id: number; quiz_id: number; score: number; total_questions: number; percentage: number
  started_at: Date; completed_at: Date | null
}

const toAttempt = (a: AttemptRow): AttemptResponse => ({
  id: a.id, quiz_id: a.quiz_id, score: a.score, total_questions: a.total_questions, percentage: Number(a.percentage),
  started_at: a.started_at.toISOString(), completed_at: a.completed_at ? a.completed_at.toISOString() : null,
})

const attemptNotFound = () => HttpError.notFound('attempt_not_found', 'Attempt not found')
const quizNotFound = () => HttpError.notFound('quiz_not_found', 'Quiz not found')

export const percentageOf = (score: number, total: number) => (total > 0 ? Math.round((1000 * score) / total) / 10 : 0)

interface QuizInfo { id: number; title: string; mode: 'timed' | 'learning'; questions_count: number }

/** A quiz the caller may take: out of the trash, and published unless the caller is a moderator (404 otherwise). */
async function visibleQuiz(core: Core, user: Caller, quizId: number): Promise<QuizInfo> {
  const [quiz] = await core.db.sql<QuizInfo & { is_published: boolean; deleted: boolean }>`
    select q.id, q.title, q.mode, q.is_published, q.deleted_at is not null as deleted,
      (select count(*) from quiz.quiz_questions qq where qq.quiz_id = q.id)::int as questions_count
    from quiz.quizzes q where q.id = ${quizId}`
  if (!quiz || quiz.deleted) throw quizNotFound()
  if (!quiz.is_published && !hasRole(user, 'moderator')) throw quizNotFound()
  return quiz
}

/** The caller's attempt: 404 unknown, 403 another user's. `lock` takes the row lock (inside a transaction). */
async function ownAttempt(core: Core, user: Caller, attemptId: number, lock = false): Promise<AttemptRow> {
  const [row] = lock
    ? await core.db.sql<AttemptRow>`select a.id, a.user_id, a.quiz_id, a.score, a.total_questions, a.percentage::float8 as percentage,
        a.started_at, a.completed_at from quiz.attempts a where a.id = ${attemptId} for update`
    : await core.db.sql<AttemptRow>`select a.id, a.user_id, a.quiz_id, a.score, a.total_questions, a.percentage::float8 as percentage,
        a.started_at, a.completed_at from quiz.attempts a where a.id = ${attemptId}`
  if (!row) throw attemptNotFound()
  if (row.user_id !== user.id) throw HttpError.forbidden('not_attempt_owner', 'This attempt belongs to another user')
  return row
}

async function latestIncomplete(core: Core, userId: number, quizId: number): Promise<AttemptRow | null> {
  const [row] = await core.db.sql<AttemptRow>`
    select a.id, a.user_id, a.quiz_id, a.score, a.total_questions, a.percentage::float8 as percentage, a.started_at, a.completed_at
    from quiz.attempts a where a.user_id = ${userId} and a.quiz_id = ${quizId} and a.completed_at is null
    order by a.started_at desc, a.id desc limit 1`
  return row ?? null
}

/**
 * POST /api/attempts/start: the caller's most recent incomplete attempt on the quiz, or (none, or fresh=true) a new
 * one. An advisory lock per (user, quiz) makes parallel starts resume one attempt instead of creating two.
 * fresh=true leaves earlier incomplete attempts as they are (resumable no more unless they are the latest).
 */
export async function startAttempt(core: Core, user: Caller, quizId: number, fresh: boolean): Promise<AttemptResponse> {
  return core.transaction(async (tx) => {
    const quiz = await visibleQuiz(tx, user, quizId)
    await tx.db.sql`select pg_advisory_xact_lock(hashtext(${`quiz.attempt-start:${user.id}:${quizId}`}))`
    if (!fresh) {
      const current = await latestIncomplete(tx, user.id, quizId)
      if (current) return toAttempt(current)
    }
    const [row] = await tx.db.sql<AttemptRow>`
      insert into quiz.attempts (user_id, quiz_id, total_questions, started_at)
      values (${user.id}, ${quizId}, ${quiz.questions_count}, ${new Date(core.now()).toISOString()})
      returning id, user_id, quiz_id, score, total_questions, percentage, started_at, completed_at`
    return toAttempt(row!)
  })
}

interface GradedQuestion { id: number; position: number; question_text: string; options: unknown; correct_answer: string; explanation: string }

async function answersOf(core: Core, attemptId: number): Promise<AttemptAnswer[]> {
  const rows = await core.db.sql<Omit<AttemptAnswer, 'options'> & { options: unknown }>`
    select aa.question_id, q.question_text, q.options, aa.user_answer, q.correct_answer, aa.is_correct, q.explanation
    from quiz.attempt_answers aa join quiz.questions q on q.id = aa.question_id
    where aa.attempt_id = ${attemptId} order by aa.position, aa.question_id`
  return rows.map((r) => ({ ...r, options: optionsOf(r.options) }))
}

export interface SubmitOptions {
  /** The automatic submit of an expired timer: answers outside the quiz are dropped, and a completed attempt gives null. */
  automatic?: boolean
}

/**
 * POST /api/attempts/{id}/submit, in one transaction under the attempt's row lock (so of two racing submits exactly
 * one completes): grade every question of the quiz (unanswered = incorrect), store the answers, complete the
 * attempt, clear the saved progress (and its device lock), and update the FSRS card of every question.
 */
export async function submitAttempt(core: Core, user: Caller, attemptId: number, answers: SubmitBody['answers'], opts: SubmitOptions = {}): Promise<AttemptDetail | null> {
  return core.transaction(async (tx) => {
    const attempt = await ownAttempt(tx, user, attemptId, true)
    if (attempt.completed_at) {
      if (opts.automatic) return null
      throw HttpError.conflict('attempt_completed', 'This attempt is already submitted; start a new one to answer again')
    }
    const questions = await tx.db.sql<GradedQuestion>`
      select q.id, qq.position, q.question_text, q.options, q.correct_answer, q.explanation
      from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
      where qq.quiz_id = ${attempt.quiz_id} order by qq.position, q.id`
    const inQuiz = new Set(questions.map((q) => q.id))
    const given = new Map<number, string | null>()
    const duplicates = new Set<number>()
    const foreign: number[] = []
    for (const a of answers) {
      if (!inQuiz.has(a.question_id)) {
        foreign.push(a.question_id)
        continue
      }
      if (given.has(a.question_id)) duplicates.add(a.question_id)
      given.set(a.question_id, a.user_answer ?? null)
    }
    if (!opts.automatic) {
      if (foreign.length > 0) {
        throw HttpError.badRequest('question_not_in_quiz', `Not a question of this quiz: ${[...new Set(foreign)].slice(0, 20).join(', ')}`)
      }
      if (duplicates.size > 0) throw HttpError.badRequest('duplicate_answer', `More than one answer for question ${[...duplicates].slice(0, 20).join(', ')}`)
    }
    const graded = questions.map((q, i) => {
      const userAnswer = given.get(q.id) ?? null
      return { question_id: q.id, user_answer: userAnswer, is_correct: userAnswer !== null && userAnswer === q.correct_answer, position: i + 1 }
    })
    const score = graded.filter((g) => g.is_correct).length
    const total = graded.length
    const percentage = percentageOf(score, total)
    const now = new Date(core.now())
    if (graded.length > 0) {
      await tx.db.sql`
        insert into quiz.attempt_answers (attempt_id, question_id, user_answer, is_correct, position)
        select ${attemptId}, r.question_id, r.user_answer, r.is_correct, r.position
        from jsonb_to_recordset(${{ value: graded }}::jsonb -> 'value') as r(question_id int, user_answer text, is_correct boolean, position int)`
    }
    const [done] = await tx.db.sql<AttemptRow>`
      update quiz.attempts set score = ${score}, total_questions = ${total}, percentage = ${percentage}, completed_at = ${now.toISOString()}
      where id = ${attemptId}
      returning id, user_id, quiz_id, score, total_questions, percentage::float8 as percentage, started_at, completed_at`
    await tx.kv.delete(progressKey(user.id, attempt.quiz_id))
    await tx.kv.delete(progressLockKey(user.id, attempt.quiz_id))
    await scheduleReviews(tx, user.id, graded.map((g) => ({ questionId: g.question_id, correct: g.is_correct })), now)
    const byId = new Map(questions.map((q) => [q.id, q]))
    return {
      ...toAttempt(done!),
      answers: graded.map((g) => {
        const q = byId.get(g.question_id)!
        return {
          question_id: g.question_id, question_text: q.question_text, options: optionsOf(q.options), user_answer: g.user_answer,
          correct_answer: q.correct_answer, is_correct: g.is_correct, explanation: q.explanation,
        }
      }),
    }
  })
}

/** GET /api/attempts/{id}: the attempt with its graded answers ([] while incomplete). */
export async function getAttempt(core: Core, user: Caller, attemptId: number): Promise<AttemptDetail> {
  const attempt = await ownAttempt(core, user, attemptId)
  return { ...toAttempt(attempt), answers: attempt.completed_at ? await answersOf(core, attemptId) : [] }
}

/** GET /api/attempts/: the caller's attempts (complete or not), newest first, optionally on one quiz. */
export async function listAttempts(core: Core, user: Caller, quizId: number | null): Promise<AttemptResponse[]> {
  const rows = await core.db.sql<AttemptRow>`
    select a.id, a.user_id, a.quiz_id, a.score, a.total_questions, a.percentage::float8 as percentage, a.started_at, a.completed_at
    from quiz.attempts a where a.user_id = ${user.id} and (${quizId}::int is null or a.quiz_id = ${quizId}::int)
    order by a.started_at desc, a.id desc`
  return rows.map(toAttempt)
}

/**
 * DELETE /api/attempts/{id}: the attempt, its answers, and the caller's FSRS cards of the questions it answered
 * (the schedule is per user and question, so those cards go even when another attempt also graded them). Saved
 * progress of this attempt goes too.
 */
export async function deleteAttempt(core: Core, user: Caller, attemptId: number): Promise<void> {
  await core.transaction(async (tx) => {
    const attempt = await ownAttempt(tx, user, attemptId, true)
    await tx.db.sql`
      delete from quiz.review_cards where user_id = ${user.id}
        and question_id in (select question_id from quiz.attempt_answers where attempt_id = ${attemptId})`
    await tx.db.sql`delete from quiz.attempts where id = ${attemptId}`
    const saved = await tx.kv.get<SavedProgress>(progressKey(user.id, attempt.quiz_id))
    if (saved && saved.attempt_id === attemptId) await tx.kv.delete(progressKey(user.id, attempt.quiz_id))
  })
}

/** GET /api/attempts/in-progress: per quiz out of the trash, the caller's most recent incomplete attempt; newest first. */
export async function inProgress(core: Core, user: Caller): Promise<InProgressItem[]> {
  const rows = await core.db.sql<Omit<InProgressItem, 'started_at'> & { started_at: Date }>`
    select * from (
      select distinct on (a.quiz_id) a.id as attempt_id, a.quiz_id, q.title as quiz_title, a.total_questions, a.started_at
      from quiz.attempts a join quiz.quizzes q on q.id = a.quiz_id
      where a.user_id = ${user.id} and a.completed_at is null and q.deleted_at is null
      order by a.quiz_id, a.started_at desc, a.id desc) latest
    order by started_at desc, attempt_id desc`
  return rows.map((r) => ({ ...r, started_at: r.started_at.toISOString() }))
}

/** GET /api/attempts/{attempt_id}/in-progress: the caller's latest incomplete attempt on the quiz, or null. */
export async function latestInProgress(core: Core, user: Caller, quizId: number): Promise<AttemptResponse | null> {
  const row = await latestIncomplete(core, user.id, quizId)
  return row ? toAttempt(row) : null
}

/** True when the user has a completed attempt on the quiz (the review right of regular users). */
export async function hasCompletedAttempt(core: Core, userId: number, quizId: number): Promise<boolean> {
  const rows = await core.db.sql`
    select 1 from quiz.attempts where user_id = ${userId} and quiz_id = ${quizId} and completed_at is not null limit 1`
  return rows.length > 0
}

const round1 = (n: number) => Math.round(n * 10) / 10

/** GET /api/attempts/stats/dashboard: over the caller's completed attempts; quizzes by latest attempt, newest first. */
export async function dashboard(core: Core, user: Caller): Promise<Dashboard> {
  const all = hasRole(user, 'moderator')
  const [docs] = await core.db.sql<{ n: number }>`
    select count(*)::int as n from quiz.documents where ${all}::boolean or user_id = ${user.id}`
  const stats = await core.db.sql<{ quiz_id: number; quiz_title: string; attempts_count: number; best_score: number; latest_score: number; average_score: number }>`
    select a.quiz_id, q.title as quiz_title, count(*)::int as attempts_count,
      max(a.percentage)::float8 as best_score,
      (array_agg(a.percentage order by a.completed_at desc, a.id desc))[1]::float8 as latest_score,
      round(avg(a.percentage), 1)::float8 as average_score
    from quiz.attempts a join quiz.quizzes q on q.id = a.quiz_id
    where a.user_id = ${user.id} and a.completed_at is not null
    group by a.quiz_id, q.title
    order by max(a.completed_at) desc, a.quiz_id desc`
  const [overall] = await core.db.sql<{ n: number; avg: number | null }>`
    select count(*)::int as n, round(avg(percentage), 1)::float8 as avg from quiz.attempts where user_id = ${user.id} and completed_at is not null`
  return {
    total_documents: docs!.n,
    total_quizzes: stats.length,
    total_attempts: overall!.n,
    average_score: overall!.avg === null ? 0 : round1(Number(overall!.avg)),
    quiz_stats: stats.map((s) => ({
      quiz_id: s.quiz_id, quiz_title: s.quiz_title, attempts_count: s.attempts_count,
      best_score: round1(Number(s.best_score)), latest_score: round1(Number(s.latest_score)), average_score: round1(Number(s.average_score)),
    })),
  }
}

/** GET /api/attempts/history: per quiz (latest activity first), the caller's completed attempts, oldest first. */
export async function history(core: Core, user: Caller): Promise<HistoryEntry[]> {
  const rows = await core.db.sql<{ quiz_id: number; title: string; attempt_id: number; completed_at: Date; percentage: number; score: number; total: number }>`
    select a.quiz_id, q.title, a.id as attempt_id, a.completed_at, a.percentage::float8 as percentage, a.score, a.total_questions as total
    from quiz.attempts a join quiz.quizzes q on q.id = a.quiz_id
    where a.user_id = ${user.id} and a.completed_at is not null
    order by a.completed_at, a.id`
  const byQuiz = new Map<number, HistoryEntry & { last: number }>()
  for (const r of rows) {
    const entry = byQuiz.get(r.quiz_id) ?? { quiz_id: r.quiz_id, title: r.title, attempts: [], last: 0 }
    entry.attempts.push({ attempt_id: r.attempt_id, date: r.completed_at.toISOString(), percentage: Number(r.percentage), score: r.score, total: r.total })
    entry.last = r.completed_at.getTime()
    byQuiz.set(r.quiz_id, entry)
  }
  return [...byQuiz.values()].sort((a, b) => b.last - a.last || b.quiz_id - a.quiz_id).map(({ last: _, ...e }) => e)
}

// Saved progress ---------------------------------------------------------------------------------------------------

/**
 * The device lock of (user, quiz): without a session id nothing is taken or checked. A free (or expired) lock is
 * taken; the holder renews it for another 30 s; any other device gets 409.
 */
async function holdLock(core: Core, userId: number, quizId: number, session: string | undefined): Promise<void> {
  if (!session) return
  const key = progressLockKey(userId, quizId)
  if (await core.kv.setIfAbsent(key, session, LOCK_TTL_S)) return
  const holder = await core.kv.get<string>(key)
  if (holder !== null && holder !== session) {
    throw HttpError.conflict('progress_locked', 'This quiz is open on another device; close it there or wait 30 seconds, then try again')
  }
  await core.kv.set(key, session, LOCK_TTL_S)
}

/** POST /api/attempts/progress: stores the progress of the caller's incomplete attempt for 7 days (refreshed). */
export async function saveProgress(core: Core, user: Caller, progress: SavedProgress, session: string | undefined): Promise<{ saved: true }> {
  const attempt = await ownAttempt(core, user, progress.attempt_id)
  if (attempt.quiz_id !== progress.quiz_id) {
    throw HttpError.badRequest('attempt_quiz_mismatch', `Attempt ${attempt.id} is an attempt on quiz ${attempt.quiz_id}, not on quiz ${progress.quiz_id}`)
  }
  if (attempt.completed_at) throw HttpError.conflict('attempt_completed', 'This attempt is already submitted; its progress can no longer be saved')
  await holdLock(core, user.id, progress.quiz_id, session)
  await core.kv.set(progressKey(user.id, progress.quiz_id), progress, PROGRESS_TTL_S)
  return { saved: true }
}

/** True when the saved timer has run out: started_at + total_time when both are saved, else time_left <= 0. */
export function timerExpired(p: SavedProgress, now: number): boolean {
  if (p.started_at !== null && p.total_time !== null) {
    const started = Date.parse(p.started_at)
    if (!Number.isNaN(started)) return started + p.total_time * 1000 <= now
  }
  return p.time_left !== null && p.time_left <= 0
}

/**
 * GET /api/attempts/progress: the saved progress, or null. Another device's live lock gives 409. Progress of an
 * attempt that is gone or already submitted is cleared (null). On a timed quiz whose saved timer ran out, the attempt
 * is submitted with the saved answers (exactly once, under the submit's row lock) and the answer is null.
 */
export async function readProgress(core: Core, user: Caller, quizId: number, session: string | undefined): Promise<SavedProgress | null> {
  await holdLock(core, user.id, quizId, session)
  const key = progressKey(user.id, quizId)
  const saved = await core.kv.get<SavedProgress>(key)
  if (!saved) return null
  const [attempt] = await core.db.sql<{ user_id: number; completed_at: Date | null; mode: string }>`
    select a.user_id, a.completed_at, q.mode from quiz.attempts a join quiz.quizzes q on q.id = a.quiz_id
    where a.id = ${saved.attempt_id} and a.quiz_id = ${quizId}`
  if (!attempt || attempt.user_id !== user.id || attempt.completed_at) {
    await core.kv.delete(key)
    return null
  }
  if (attempt.mode === 'timed' && timerExpired(saved, core.now())) {
    const answers = Object.entries(saved.answers).map(([id, answer]) => ({ question_id: Number(id), user_answer: answer }))
    await submitAttempt(core, user, saved.attempt_id, answers, { automatic: true })
    return null
  }
  return saved
}

/** DELETE /api/attempts/progress/{attempt_id}: clears the saved progress of the caller's attempt (and its lock). */
export async function clearProgress(core: Core, user: Caller, attemptId: number): Promise<void> {
  const attempt = await ownAttempt(core, user, attemptId)
  const key = progressKey(user.id, attempt.quiz_id)
  const saved = await core.kv.get<SavedProgress>(key)
  if (saved && saved.attempt_id === attemptId) {
    await core.kv.delete(key)
    await core.kv.delete(progressLockKey(user.id, attempt.quiz_id))
  }
}

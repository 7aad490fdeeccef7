// Saved progress of an attempt: save, read, delete, the 7-day lifetime, the 30-second device lock (x-quiz-session),
// the checks of the body's attempt, and the automatic submit of a timed quiz whose saved timer ran out (exactly once
// under parallel reads).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { progressKey, progressLockKey } from '../plugins/quiz/services/attempts'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface StudyQuestion { id: number; correct_answer: string; options: string[] }
interface AttemptBody { id: number; quiz_id: number; score: number; total_questions: number; percentage: number; completed_at: string | null }

for (const target of databaseTargets()) {
  describe(`saved progress [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let user: Account
    let other: Account

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
      user = await createAccount(t, admin, 'user')
      other = await createAccount(t, admin, 'user', 'other')
    })
    afterAll(() => t.close())

    async function quizAndAttempt(mode: 'timed' | 'learning' = 'timed', n = 3, who: Account = user) {
      const { quizId } = await makeRegexQuiz(t, moderator, { n, mode })
      await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })
      const questions = ((await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }).questions
      const attempt = (await (await t.post(`${API}/attempts/start?quiz_id=${quizId}`, undefined, { token: who.token })).json()) as AttemptBody
      return { quizId, questions, attemptId: attempt.id }
    }
    const progress = (quizId: number, attemptId: number, extra: Record<string, unknown> = {}) => ({
      quiz_id: quizId, attempt_id: attemptId, answers: {}, current_idx: 0, mode: 'timed', voice: null,
      time_left: 600, started_at: new Date().toISOString(), total_time: 1200, ...extra,
    })
    const save = (body: unknown, session?: string, who: Account = user) =>
      t.post(`${API}/attempts/progress`, body, { token: who.token, headers: session ? { 'x-quiz-session': session } : {} })
    const read = (quizId: number, session?: string, who: Account = user) =>
      t.get(`${API}/attempts/progress?quiz_id=${quizId}`, { token: who.token, headers: session ? { 'x-quiz-session': session } : {} })
    const kvRow = async (key: string) => {
      const [row] = await t.db.sql<{ value: unknown; expires_at: Date | null }>`select value, expires_at from core.kv where key = ${key}`
      return row ?? null
    }

    it('saves {saved: true}, reads the object back, deletes with 204; null when nothing is saved', async () => {
      const { quizId, questions, attemptId } = await quizAndAttempt('learning')
      expect(await (await read(quizId)).text()).toBe('null')
      const body = progress(quizId, attemptId, { answers: { [questions[0]!.id]: questions[0]!.correct_answer }, current_idx: 1, mode: 'learning', voice: 'alloy' })
      const res = await save(body)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ saved: true })
      const got = await read(quizId)
      expect(got.status).toBe(200)
      expect(await got.json()).toEqual(body)
      // another user's progress of the same quiz is theirs
      expect(await (await read(quizId, undefined, other)).text()).toBe('null')
      expect((await t.delete(`${API}/attempts/progress/${attemptId}`, { token: user.token })).status).toBe(204)
      expect(await (await read(quizId)).text()).toBe('null')
      await expectDetail(await t.delete(`${API}/attempts/progress/${attemptId}`, { token: other.token }), 403)
      await expectDetail(await t.delete(`${API}/attempts/progress/999999`, { token: user.token }), 404)
    })

    it('lives 7 days from the last save', async () => {
      const { quizId, attemptId } = await quizAndAttempt('learning')
      const before = Date.now()
      await save(progress(quizId, attemptId))
      const row = await kvRow(progressKey(user.id, quizId))
      const week = 7 * 24 * 3600 * 1000
      expect(row!.expires_at!.getTime()).toBeGreaterThanOrEqual(before + week - 2000)
      expect(row!.expires_at!.getTime()).toBeLessThanOrEqual(Date.now() + week + 2000)
      // expired: gone for reads
      await t.db.sql`update core.kv set expires_at = now() - interval '1 second' where key = ${progressKey(user.id, quizId)}`
      expect(await (await read(quizId)).text()).toBe('null')
    })

    it('checks the attempt: another user\'s 403, unknown 404, another quiz 400, submitted 409; bad bodies 422', async () => {
      const { quizId, attemptId } = await quizAndAttempt('learning')
      const { quizId: quiz2, attemptId: attempt2 } = await quizAndAttempt('learning')
      await expectDetail(await save(progress(quizId, attemptId), undefined, other), 403)
      await expectDetail(await save(progress(quizId, 999999)), 404)
      await expectDetail(await save(progress(quiz2, attemptId)), 400)
      expect((await save({ ...progress(quizId, attemptId), answers: { abc: 'x' } })).status).toBe(422)
      expect((await save({ ...progress(quizId, attemptId), current_idx: -1 })).status).toBe(422)
      expect((await save({ quiz_id: quizId })).status).toBe(422)
      expect((await t.post(`${API}/attempts/${attempt2}/submit`, { answers: [] }, { token: user.token })).status).toBe(200)
      await expectDetail(await save(progress(quiz2, attempt2)), 409)
      expect((await kvRow(progressKey(user.id, quiz2)))).toBeNull()
    })

    it('submit clears the saved progress', async () => {
      const { quizId, attemptId } = await quizAndAttempt('learning')
      await save(progress(quizId, attemptId), 'dev-a')
      expect(await kvRow(progressKey(user.id, quizId))).not.toBeNull()
      expect((await t.post(`${API}/attempts/${attemptId}/submit`, { answers: [] }, { token: user.token })).status).toBe(200)
      expect(await kvRow(progressKey(user.id, quizId))).toBeNull()
      expect(await kvRow(progressLockKey(user.id, quizId))).toBeNull()
    })

    it('device lock: a second device gets 409 on read and save, the holder renews it, and it frees after 30 s', async () => {
      const { quizId, attemptId } = await quizAndAttempt('learning')
      const body = progress(quizId, attemptId)
      expect((await save(body, 'dev-a')).status).toBe(200)
      const lock = await kvRow(progressLockKey(user.id, quizId))
      expect(lock!.value).toBe('dev-a')
      const ttl = lock!.expires_at!.getTime() - Date.now()
      expect(ttl).toBeGreaterThan(25_000)
      expect(ttl).toBeLessThanOrEqual(31_000)
      const detail = await expectDetail(await read(quizId, 'dev-b'), 409)
      expect(detail).toContain('another device')
      await expectDetail(await save(body, 'dev-b'), 409)
      // without the header no lock is checked
      expect((await read(quizId)).status).toBe(200)
      // the holder's read renews the lock
      await t.db.sql`update core.kv set expires_at = now() + interval '5 seconds' where key = ${progressLockKey(user.id, quizId)}`
      expect((await read(quizId, 'dev-a')).status).toBe(200)
      expect((await kvRow(progressLockKey(user.id, quizId)))!.expires_at!.getTime() - Date.now()).toBeGreaterThan(25_000)
      // an expired lock is free for the next device
      await t.db.sql`update core.kv set expires_at = now() - interval '1 second' where key = ${progressLockKey(user.id, quizId)}`
      const res = await read(quizId, 'dev-b')
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual(body)
      expect((await kvRow(progressLockKey(user.id, quizId)))!.value).toBe('dev-b')
      await expectDetail(await read(quizId, 'dev-a'), 409)
    })

    it('a timed quiz whose saved timer ran out is submitted with the saved answers on read; a running timer is not', async () => {
      const { quizId, questions, attemptId } = await quizAndAttempt('timed', 3)
      const answers = { [questions[0]!.id]: questions[0]!.correct_answer, [questions[1]!.id]: 'wrong' }
      await save(progress(quizId, attemptId, { answers, started_at: new Date(Date.now() - 60_000).toISOString(), total_time: 120, time_left: 60 }))
      expect(((await (await read(quizId)).json()) as { attempt_id: number }).attempt_id).toBe(attemptId)
      await save(progress(quizId, attemptId, { answers, started_at: new Date(Date.now() - 121_000).toISOString(), total_time: 120, time_left: 1 }))
      const res = await read(quizId)
      expect(res.status).toBe(200)
      expect(await res.text()).toBe('null')
      const attempt = (await (await t.get(`${API}/attempts/${attemptId}`, { token: user.token })).json()) as AttemptBody & { answers: Array<{ is_correct: boolean; user_answer: string | null }> }
      expect(attempt.completed_at).not.toBeNull()
      expect(attempt).toMatchObject({ score: 1, total_questions: 3, percentage: 33.3 })
      expect(attempt.answers.map((a) => a.user_answer)).toEqual([questions[0]!.correct_answer, 'wrong', null])
      expect(await kvRow(progressKey(user.id, quizId))).toBeNull()
    })

    it('time_left <= 0 (no start time saved) also ends it; a learning quiz is never submitted automatically', async () => {
      const timed = await quizAndAttempt('timed', 2)
      await save(progress(timed.quizId, timed.attemptId, { started_at: null, total_time: null, time_left: 0 }))
      expect(await (await read(timed.quizId)).text()).toBe('null')
      const [row] = await t.db.sql<{ completed_at: Date | null }>`select completed_at from quiz.attempts where id = ${timed.attemptId}`
      expect(row!.completed_at).not.toBeNull()
      const learning = await quizAndAttempt('learning', 2)
      await save(progress(learning.quizId, learning.attemptId, { started_at: null, total_time: null, time_left: 0 }))
      expect(((await (await read(learning.quizId)).json()) as { attempt_id: number }).attempt_id).toBe(learning.attemptId)
    })

    it('parallel reads of an expired timer submit exactly once', async () => {
      const { quizId, questions, attemptId } = await quizAndAttempt('timed', 3)
      const answers = Object.fromEntries(questions.map((q) => [q.id, q.correct_answer]))
      await save(progress(quizId, attemptId, { answers, started_at: new Date(Date.now() - 3_600_000).toISOString(), total_time: 60 }))
      const results = await Promise.all(Array.from({ length: 8 }, () => read(quizId)))
      for (const r of results) {
        expect(r.status).toBe(200)
        expect(await r.text()).toBe('null')
      }
      const [row] = await t.db.sql<{ n: number; score: number }>`
        select (select count(*)::int from quiz.attempt_answers where attempt_id = ${attemptId}) as n, score from quiz.attempts where id = ${attemptId}`
      expect(row).toEqual({ n: 3, score: 3 })
      const [cards] = await t.db.sql<{ reps: number }>`
        select max(reps)::int as reps from quiz.review_cards where user_id = ${user.id} and question_id = ${questions[0]!.id}`
      expect(cards!.reps).toBe(1)
    })
  })
}

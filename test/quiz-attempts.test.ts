// Attempts: start or resume (fresh, parallel starts), submit and grading (unanswered incorrect, resubmit refused,
// foreign and repeated questions refused), owner checks, list and detail, delete (answers and schedule go), the
// in-progress lists, the dashboard and history shapes, and the review right a completed attempt gives a user.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

const ATTEMPT_KEYS = ['completed_at', 'id', 'percentage', 'quiz_id', 'score', 'started_at', 'total_questions']
const ANSWER_KEYS = ['correct_answer', 'explanation', 'is_correct', 'options', 'question_id', 'question_text', 'user_answer']

interface AttemptBody { id: number; quiz_id: number; score: number; total_questions: number; percentage: number; started_at: string; completed_at: string | null }
interface AnswerBody { question_id: number; question_text: string; options: string[]; user_answer: string | null; correct_answer: string; is_correct: boolean; explanation: string }
interface DetailBody extends AttemptBody { answers: AnswerBody[] }
interface StudyQuestion { id: number; correct_answer: string; options: string[] }

for (const target of databaseTargets()) {
  describe(`attempts [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account
    let user: Account
    let other: Account

    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
      user = await createAccount(t, admin, 'user')
      other = await createAccount(t, admin, 'user', 'other')
    })
    afterAll(() => t.close())

    /** A published quiz of n questions: its id and its questions with answers, in order. */
    async function publishedQuiz(n = 3, mode: 'timed' | 'learning' = 'learning') {
      const { quizId } = await makeRegexQuiz(t, moderator, { n, mode })
      expect((await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })).status).toBe(200)
      const quiz = (await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }
      return { quizId, questions: quiz.questions }
    }
    const start = async (quizId: number, who: Account = user, fresh = false) => {
      const res = await t.post(`${API}/attempts/start?quiz_id=${quizId}${fresh ? '&fresh=true' : ''}`, undefined, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as AttemptBody
    }
    const submit = (attemptId: number, answers: { question_id: number; user_answer: string | null }[], who: Account = user) =>
      t.post(`${API}/attempts/${attemptId}/submit`, { answers }, { token: who.token })
    const wrong = (q: StudyQuestion) => q.options.find((o) => o !== q.correct_answer)!

    describe('POST /api/attempts/start', () => {
      it('starts an AttemptResponse, resumes it, and fresh=true starts another that later starts resume', async () => {
        const { quizId } = await publishedQuiz(4)
        const first = await start(quizId)
        expect(Object.keys(first).sort()).toEqual(ATTEMPT_KEYS)
        expect(first).toMatchObject({ quiz_id: quizId, score: 0, total_questions: 4, percentage: 0, completed_at: null })
        expect(Number.isNaN(Date.parse(first.started_at))).toBe(false)
        expect((await start(quizId)).id).toBe(first.id)
        const fresh = await start(quizId, user, true)
        expect(fresh.id).not.toBe(first.id)
        expect((await start(quizId)).id).toBe(fresh.id)
        // the earlier one stays incomplete
        const [row] = await t.db.sql<{ completed_at: Date | null }>`select completed_at from quiz.attempts where id = ${first.id}`
        expect(row!.completed_at).toBeNull()
      })

      it('parallel starts create one incomplete attempt', async () => {
        const { quizId } = await publishedQuiz(2)
        const results = await Promise.all(Array.from({ length: 6 }, () => start(quizId)))
        expect(new Set(results.map((r) => r.id)).size).toBe(1)
        const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.attempts where user_id = ${user.id} and quiz_id = ${quizId}`
        expect(row!.n).toBe(1)
      })

      it('a user cannot start an unpublished or trashed quiz (404); a moderator can start an unpublished one; bad ids 422', async () => {
        const { quizId } = await makeRegexQuiz(t, moderator, { n: 2 })
        await expectDetail(await t.post(`${API}/attempts/start?quiz_id=${quizId}`, undefined, { token: user.token }), 404)
        expect((await start(quizId, moderator)).quiz_id).toBe(quizId)
        await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })
        await t.delete(`${API}/quizzes/${quizId}`, { token: moderator.token })
        await expectDetail(await t.post(`${API}/attempts/start?quiz_id=${quizId}`, undefined, { token: user.token }), 404)
        await expectDetail(await t.post(`${API}/attempts/start?quiz_id=999999`, undefined, { token: user.token }), 404)
        expect((await t.post(`${API}/attempts/start?quiz_id=0`, undefined, { token: user.token })).status).toBe(422)
        expect((await t.post(`${API}/attempts/start?quiz_id=2147483648`, undefined, { token: user.token })).status).toBe(422)
        expect((await t.post(`${API}/attempts/start`, undefined, { token: user.token })).status).toBe(422)
        expect((await t.post(`${API}/attempts/start?quiz_id=${quizId}`)).status).toBe(401)
      })
    })

    describe('POST /api/attempts/{attempt_id}/submit', () => {
      it('grades in quiz order: right, wrong and unanswered; score and percentage; AttemptDetail shape', async () => {
        const { quizId, questions } = await publishedQuiz(3)
        const attempt = await start(quizId)
        const res = await submit(attempt.id, [
          { question_id: questions[2]!.id, user_answer: wrong(questions[2]!) },
          { question_id: questions[0]!.id, user_answer: questions[0]!.correct_answer },
        ])
        expect(res.status).toBe(200)
        const detail = (await res.json()) as DetailBody
        expect(Object.keys(detail).sort()).toEqual([...ATTEMPT_KEYS, 'answers'].sort())
        expect(detail).toMatchObject({ id: attempt.id, quiz_id: quizId, score: 1, total_questions: 3, percentage: 33.3 })
        expect(detail.completed_at).not.toBeNull()
        expect(detail.answers.map((a) => a.question_id)).toEqual(questions.map((q) => q.id))
        for (const a of detail.answers) expect(Object.keys(a).sort()).toEqual(ANSWER_KEYS)
        expect(detail.answers.map((a) => a.is_correct)).toEqual([true, false, false])
        expect(detail.answers[1]!.user_answer).toBeNull()
        expect(detail.answers[0]!.correct_answer).toBe(questions[0]!.correct_answer)
        expect(detail.answers[0]!.explanation).toStartWith('Because')
        expect(detail.answers[0]!.options).toEqual(questions[0]!.options)
        // GET gives the same
        const got = (await (await t.get(`${API}/attempts/${attempt.id}`, { token: user.token })).json()) as DetailBody
        expect(got).toEqual(detail)
      })

      it('all right is 100, none answered is 0; percentage rounds to one decimal', async () => {
        const { quizId, questions } = await publishedQuiz(3)
        const a = await start(quizId)
        const all = (await (await submit(a.id, questions.map((q) => ({ question_id: q.id, user_answer: q.correct_answer })))).json()) as DetailBody
        expect(all).toMatchObject({ score: 3, percentage: 100 })
        const b = await start(quizId)
        expect(b.id).not.toBe(a.id)
        const none = (await (await submit(b.id, [])).json()) as DetailBody
        expect(none).toMatchObject({ score: 0, percentage: 0, total_questions: 3 })
        expect(none.answers.every((x) => !x.is_correct && x.user_answer === null)).toBe(true)
        const c = await start(quizId)
        const two = (await (await submit(c.id, questions.slice(0, 2).map((q) => ({ question_id: q.id, user_answer: q.correct_answer })))).json()) as DetailBody
        expect(two.percentage).toBe(66.7)
      })

      it('a completed attempt is refused (409) and unchanged; a foreign or repeated question is 400 and changes nothing', async () => {
        const { quizId, questions } = await publishedQuiz(2)
        const { questions: others } = await publishedQuiz(1)
        const a = await start(quizId)
        await expectDetail(await submit(a.id, [{ question_id: others[0]!.id, user_answer: 'x' }]), 400).then((d) => expect(d).toContain(String(others[0]!.id)))
        await expectDetail(await submit(a.id, [
          { question_id: questions[0]!.id, user_answer: 'x' }, { question_id: questions[0]!.id, user_answer: 'y' },
        ]), 400)
        const [still] = await t.db.sql<{ completed_at: Date | null; n: number }>`
          select completed_at, (select count(*)::int from quiz.attempt_answers where attempt_id = ${a.id}) as n from quiz.attempts where id = ${a.id}`
        expect(still).toMatchObject({ completed_at: null, n: 0 })
        expect((await submit(a.id, [{ question_id: questions[0]!.id, user_answer: questions[0]!.correct_answer }])).status).toBe(200)
        await expectDetail(await submit(a.id, questions.map((q) => ({ question_id: q.id, user_answer: q.correct_answer }))), 409)
        const after = (await (await t.get(`${API}/attempts/${a.id}`, { token: user.token })).json()) as DetailBody
        expect(after.score).toBe(1)
      })

      it('two racing submits: exactly one completes', async () => {
        const { quizId, questions } = await publishedQuiz(2)
        const a = await start(quizId)
        const answers = questions.map((q) => ({ question_id: q.id, user_answer: q.correct_answer }))
        const statuses = (await Promise.all([submit(a.id, answers), submit(a.id, answers), submit(a.id, answers)])).map((r) => r.status).sort()
        expect(statuses).toEqual([200, 409, 409])
        const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.attempt_answers where attempt_id = ${a.id}`
        expect(row!.n).toBe(2)
      })

      it('only the owner: 403 for another user, 404 unknown, 422 bad body', async () => {
        const { quizId, questions } = await publishedQuiz(1)
        const a = await start(quizId)
        await expectDetail(await submit(a.id, [], other), 403)
        await expectDetail(await t.get(`${API}/attempts/${a.id}`, { token: other.token }), 403)
        await expectDetail(await t.delete(`${API}/attempts/${a.id}`, { token: other.token }), 403)
        await expectDetail(await submit(999999, []), 404)
        expect((await t.post(`${API}/attempts/${a.id}/submit`, { answers: [{ question_id: 'x' }] }, { token: user.token })).status).toBe(422)
        expect((await t.post(`${API}/attempts/${a.id}/submit`, {}, { token: user.token })).status).toBe(422)
        expect((await submit(a.id, [{ question_id: questions[0]!.id, user_answer: questions[0]!.correct_answer }])).status).toBe(200)
      })
    })

    describe('list, detail, delete', () => {
      it('lists the caller\'s attempts newest first, by quiz; an incomplete attempt has no answers', async () => {
        const { quizId } = await publishedQuiz(2)
        const { quizId: quiz2 } = await publishedQuiz(1)
        const a = await start(quizId)
        await submit(a.id, [])
        const b = await start(quizId)
        const c = await start(quiz2)
        await start(quizId, other)
        const mine = (await (await t.get(`${API}/attempts?quiz_id=${quizId}`, { token: user.token })).json()) as AttemptBody[]
        expect(mine.map((x) => x.id)).toEqual([b.id, a.id])
        for (const x of mine) expect(Object.keys(x).sort()).toEqual(ATTEMPT_KEYS)
        const all = (await (await t.get(`${API}/attempts/`, { token: user.token })).json()) as AttemptBody[]
        expect(all.map((x) => x.id)).toContain(c.id)
        expect(all.every((x) => x.id !== undefined)).toBe(true)
        const detail = (await (await t.get(`${API}/attempts/${b.id}`, { token: user.token })).json()) as DetailBody
        expect(detail).toMatchObject({ id: b.id, completed_at: null, answers: [] })
        await expectDetail(await t.get(`${API}/attempts/999999`, { token: user.token }), 404)
      })

      it('delete removes the attempt, its answers and the caller\'s cards of its questions, not other users\'', async () => {
        const { quizId, questions } = await publishedQuiz(2)
        const a = await start(quizId)
        await submit(a.id, [{ question_id: questions[0]!.id, user_answer: questions[0]!.correct_answer }])
        const b = await start(quizId, other)
        await submit(b.id, [], other)
        const cards = (who: number) => t.db.sql<{ question_id: number }>`
          select question_id from quiz.review_cards where user_id = ${who} and question_id in (${questions[0]!.id}, ${questions[1]!.id})`
        expect((await cards(user.id)).length).toBe(2)
        expect((await t.delete(`${API}/attempts/${a.id}`, { token: user.token })).status).toBe(204)
        expect((await t.get(`${API}/attempts/${a.id}`, { token: user.token })).status).toBe(404)
        expect((await t.db.sql`select 1 from quiz.attempt_answers where attempt_id = ${a.id}`).length).toBe(0)
        expect((await cards(user.id)).length).toBe(0)
        expect((await cards(other.id)).length).toBe(2)
        await expectDetail(await t.delete(`${API}/attempts/${a.id}`, { token: user.token }), 404)
      })

      it('attempts stay while the quiz is in the trash and go when it is deleted for good', async () => {
        const { quizId } = await publishedQuiz(1)
        const a = await start(quizId)
        await submit(a.id, [])
        await t.delete(`${API}/quizzes/${quizId}`, { token: moderator.token })
        expect((await t.get(`${API}/attempts/${a.id}`, { token: user.token })).status).toBe(200)
        await t.delete(`${API}/quizzes/${quizId}/permanent`, { token: moderator.token })
        expect((await t.get(`${API}/attempts/${a.id}`, { token: user.token })).status).toBe(404)
      })
    })

    describe('in-progress', () => {
      it('lists the latest incomplete attempt per quiz; the per-quiz lookup answers it or null', async () => {
        const fresh = await createAccount(t, admin, 'user', 'learner')
        const { quizId } = await publishedQuiz(2)
        const { quizId: quiz2 } = await publishedQuiz(3)
        await start(quizId, fresh)
        const latest = await start(quizId, fresh, true)
        const other2 = await start(quiz2, fresh)
        await submit(other2.id, [], fresh)
        const list = (await (await t.get(`${API}/attempts/in-progress`, { token: fresh.token })).json()) as Array<Record<string, unknown>>
        expect(list).toEqual([{ attempt_id: latest.id, quiz_id: quizId, quiz_title: expect.any(String), total_questions: 2, started_at: latest.started_at }])
        const one = await t.get(`${API}/attempts/1/in-progress?quiz_id=${quizId}`, { token: fresh.token })
        expect(one.status).toBe(200)
        expect(((await one.json()) as AttemptBody).id).toBe(latest.id)
        const none = await t.get(`${API}/attempts/1/in-progress?quiz_id=${quiz2}`, { token: fresh.token })
        expect(none.status).toBe(200)
        expect(await none.text()).toBe('null')
        expect((await t.get(`${API}/attempts/1/in-progress`, { token: fresh.token })).status).toBe(422)
      })
    })

    describe('dashboard and history', () => {
      it('have exactly the documented shapes and numbers', async () => {
        const learner = await createAccount(t, admin, 'user', 'dash')
        const empty = (await (await t.get(`${API}/attempts/stats/dashboard`, { token: learner.token })).json()) as Record<string, unknown>
        expect(empty).toEqual({ total_documents: 0, total_quizzes: 0, total_attempts: 0, average_score: 0, quiz_stats: [] })
        expect(await (await t.get(`${API}/attempts/history`, { token: learner.token })).json()).toEqual([])

        const { quizId, questions } = await publishedQuiz(3)
        const { quizId: quiz2, questions: q2 } = await publishedQuiz(2)
        const right = (qs: StudyQuestion[], n: number) => qs.slice(0, n).map((q) => ({ question_id: q.id, user_answer: q.correct_answer }))
        const a1 = await start(quizId, learner)
        await submit(a1.id, right(questions, 1), learner) // 33.3
        const a2 = await start(quizId, learner)
        await submit(a2.id, right(questions, 3), learner) // 100
        const b1 = await start(quiz2, learner)
        await submit(b1.id, right(q2, 1), learner) // 50
        await start(quizId, learner) // incomplete: not counted

        const dash = (await (await t.get(`${API}/attempts/stats/dashboard`, { token: learner.token })).json()) as {
          quiz_stats: Array<Record<string, unknown>>; [k: string]: unknown
        }
        expect(Object.keys(dash).sort()).toEqual(['average_score', 'quiz_stats', 'total_attempts', 'total_documents', 'total_quizzes'])
        expect(dash).toMatchObject({ total_documents: 0, total_quizzes: 2, total_attempts: 3, average_score: 61.1 })
        expect(dash.quiz_stats).toEqual([
          { quiz_id: quiz2, quiz_title: expect.any(String), attempts_count: 1, best_score: 50, latest_score: 50, average_score: 50 },
          { quiz_id: quizId, quiz_title: expect.any(String), attempts_count: 2, best_score: 100, latest_score: 100, average_score: 66.7 },
        ])
        const modDash = (await (await t.get(`${API}/attempts/stats/dashboard`, { token: moderator.token })).json()) as { total_documents: number }
        expect(modDash.total_documents).toBeGreaterThan(0)

        const hist = (await (await t.get(`${API}/attempts/history`, { token: learner.token })).json()) as Array<{ quiz_id: number; title: string; attempts: Array<Record<string, unknown>> }>
        expect(hist).toEqual([
          { quiz_id: quiz2, title: expect.any(String), attempts: [{ attempt_id: b1.id, date: expect.any(String), percentage: 50, score: 1, total: 2 }] },
          {
            quiz_id: quizId, title: expect.any(String), attempts: [
              { attempt_id: a1.id, date: expect.any(String), percentage: 33.3, score: 1, total: 3 },
              { attempt_id: a2.id, date: expect.any(String), percentage: 100, score: 3, total: 3 },
            ],
          },
        ])
        for (const e of hist) for (const x of e.attempts) expect(Number.isNaN(Date.parse(x.date as string))).toBe(false)
      })
    })

    describe('GET /api/quizzes/{quiz_id}/review for users', () => {
      it('403 until the user completes an attempt, then the review', async () => {
        const { quizId } = await publishedQuiz(2, 'timed')
        const a = await start(quizId)
        await expectDetail(await t.get(`${API}/quizzes/${quizId}/review`, { token: user.token }), 403)
        await submit(a.id, [])
        const res = await t.get(`${API}/quizzes/${quizId}/review`, { token: user.token })
        expect(res.status).toBe(200)
        const review = (await res.json()) as { questions: StudyQuestion[] }
        expect(review.questions.every((q) => q.options.includes(q.correct_answer))).toBe(true)
        await expectDetail(await t.get(`${API}/quizzes/${quizId}/review`, { token: other.token }), 403)
      })
    })
  })
}

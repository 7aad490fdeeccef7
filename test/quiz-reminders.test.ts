// Spaced-repetition reminders: the FSRS card each submit moves (Again for wrong or unanswered, Good for right, as
// ts-fsrs with default parameters computes it), the due list with count and next_due, and the review quiz.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { createEmptyCard, fsrs, Rating } from 'ts-fsrs'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { DIGEST_SETTING, sendDueDigests } from '../plugins/quiz/services/reminders'
import { API, createAccount, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'
import { startSmtpSink, type SmtpSink } from './support/smtp'

setDefaultTimeout(30_000)

interface StudyQuestion { id: number; question_text: string; correct_answer: string; options: string[] }
interface CardRow { question_id: number; due: Date; reps: number; lapses: number; state: number; last_review: Date; stability: number }
interface DueBody { count: number; next_due: string | null; questions: Array<{ question_id: number; question_text: string; due: string; quiz_id: number | null }> }

for (const target of databaseTargets()) {
  describe(`reminders [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account

    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
    })
    afterAll(() => t.close())

    async function publishedQuiz(n: number) {
      const { quizId } = await makeRegexQuiz(t, moderator, { n })
      await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })
      const questions = ((await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }).questions
      return { quizId, questions }
    }
    async function takeQuiz(who: Account, quizId: number, answers: { question_id: number; user_answer: string | null }[]) {
      const attempt = (await (await t.post(`${API}/attempts/start?quiz_id=${quizId}`, undefined, { token: who.token })).json()) as { id: number }
      const res = await t.post(`${API}/attempts/${attempt.id}/submit`, { answers }, { token: who.token })
      expect(res.status).toBe(200)
      return attempt.id
    }
    const cards = (userId: number) => t.db.sql<CardRow>`
      select question_id, due, reps, lapses, state, last_review, stability from quiz.review_cards where user_id = ${userId} order by question_id`
    const due = async (who: Account, query = '') => {
      const res = await t.get(`${API}/reminders/due${query}`, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as DueBody
    }

    it('a submit rates right answers Good and wrong or unanswered ones Again, exactly as ts-fsrs defaults do', async () => {
      const user = await createAccount(t, admin, 'user', 'fsrs')
      const { quizId, questions } = await publishedQuiz(3)
      const [q0, q1, q2] = questions as [StudyQuestion, StudyQuestion, StudyQuestion]
      await takeQuiz(user, quizId, [{ question_id: q0.id, user_answer: q0.correct_answer }, { question_id: q1.id, user_answer: 'wrong' }])
      const [good, again, unanswered] = await cards(user.id) as [CardRow, CardRow, CardRow]
      expect([good.question_id, again.question_id, unanswered.question_id]).toEqual([q0.id, q1.id, q2.id])
      // Again is due earlier than Good
      expect(again.due.getTime()).toBeLessThan(good.due.getTime())
      expect(unanswered.due.getTime()).toBe(again.due.getTime() - again.last_review.getTime() + unanswered.last_review.getTime())
      const f = fsrs()
      const now = good.last_review
      const expectedGood = f.next(createEmptyCard(now), now, Rating.Good).card
      const expectedAgain = f.next(createEmptyCard(now), now, Rating.Again).card
      expect(good.due.getTime()).toBe(expectedGood.due.getTime())
      expect(again.due.getTime()).toBe(expectedAgain.due.getTime())
      expect(good.stability).toBeCloseTo(expectedGood.stability, 6)
      expect([good.reps, again.reps]).toEqual([1, 1])
      expect(good.state).toBe(expectedGood.state)

      // a second submit moves the same cards on
      await takeQuiz(user, quizId, questions.map((q) => ({ question_id: q.id, user_answer: q.correct_answer })))
      const after = await cards(user.id)
      expect(after.map((c) => c.reps)).toEqual([2, 2, 2])
      expect(after[0]!.due.getTime()).toBeGreaterThan(good.due.getTime())
    })

    it('GET /api/reminders/due: count of due questions, next_due, most overdue first, limit', async () => {
      const user = await createAccount(t, admin, 'user', 'due')
      const empty = await due(user)
      expect(empty).toEqual({ count: 0, next_due: null, questions: [] })

      const { quizId, questions } = await publishedQuiz(3)
      await takeQuiz(user, quizId, [{ question_id: questions[0]!.id, user_answer: questions[0]!.correct_answer }])
      const notYet = await due(user)
      expect(notYet.count).toBe(0)
      expect(notYet.questions).toEqual([])
      const earliest = (await cards(user.id)).map((c) => c.due.getTime()).sort((a, b) => a - b)[0]!
      expect(Date.parse(notYet.next_due!)).toBe(earliest)

      // time passes: q2 most overdue, then q1; q0 not yet due
      await t.db.sql`update quiz.review_cards set due = now() - interval '2 days' where user_id = ${user.id} and question_id = ${questions[2]!.id}`
      await t.db.sql`update quiz.review_cards set due = now() - interval '1 day' where user_id = ${user.id} and question_id = ${questions[1]!.id}`
      const body = await due(user)
      expect(Object.keys(body).sort()).toEqual(['count', 'next_due', 'questions'])
      expect(body.count).toBe(2)
      expect(body.questions.map((q) => q.question_id)).toEqual([questions[2]!.id, questions[1]!.id])
      expect(body.questions[0]).toEqual({ question_id: questions[2]!.id, question_text: questions[2]!.question_text, due: expect.any(String), quiz_id: quizId })
      expect(Date.parse(body.next_due!)).toBe(Date.parse(body.questions[0]!.due))
      const limited = await due(user, '?limit=1')
      expect(limited.count).toBe(2)
      expect(limited.questions.length).toBe(1)
      for (const bad of ['?limit=0', '?limit=201', '?limit=x']) expect((await t.get(`${API}/reminders/due${bad}`, { token: user.token })).status).toBe(422)
      // another user's schedule is separate
      const other = await createAccount(t, admin, 'user', 'other')
      expect((await due(other)).count).toBe(0)
      expect((await t.get(`${API}/reminders/due`)).status).toBe(401)
    })

    it('POST /api/reminders/review-quiz: the due questions as a learning view with answers; nothing stored', async () => {
      const user = await createAccount(t, admin, 'user', 'review')
      const { quizId, questions } = await publishedQuiz(2)
      await takeQuiz(user, quizId, [])
      const quizzesBefore = (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.quizzes`)[0]!.n
      const none = (await (await t.post(`${API}/reminders/review-quiz`, undefined, { token: user.token })).json()) as { questions_count: number; questions: unknown[] }
      expect(none.questions_count).toBe(0)
      await t.db.sql`update quiz.review_cards set due = now() - interval '1 hour' where user_id = ${user.id}`
      const res = await t.post(`${API}/reminders/review-quiz`, undefined, { token: user.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { title: string; mode: string; questions_count: number; questions: Array<StudyQuestion & { position: number; explanation: string }> }
      expect(body.mode).toBe('learning')
      expect(body.questions_count).toBe(2)
      expect(body.questions.map((q) => q.id).sort((a, b) => a - b)).toEqual(questions.map((q) => q.id).sort((a, b) => a - b))
      expect(body.questions.map((q) => q.position)).toEqual([1, 2])
      for (const q of body.questions) {
        expect(q.options).toContain(q.correct_answer)
        expect(q.explanation).toStartWith('Because')
      }
      expect((await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.quizzes`)[0]!.n).toBe(quizzesBefore)
    })
  })
}

for (const target of databaseTargets()) {
  describe(`the daily reminder digest [${target}]`, () => {
    let t: TestApp
    let sink: SmtpSink
    let admin: Account
    let moderator: Account

    beforeAll(async () => {
      sink = await startSmtpSink()
      t = await startTestApp({ target, env: sink.env })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
    })
    afterAll(async () => {
      await t?.close()
      await sink?.close()
    })

    it('mails each opted-in user with due questions once a day, names the questions, and never twice', async () => {
      const { quizId } = await makeRegexQuiz(t, moderator, { n: 2 })
      await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })
      const questions = ((await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }).questions
      const learner = await createAccount(t, admin, 'user', 'digest-on')
      const quiet = await createAccount(t, admin, 'user', 'digest-off')
      for (const who of [learner, quiet]) {
        const attempt = (await (await t.post(`${API}/attempts/start?quiz_id=${quizId}`, undefined, { token: who.token })).json()) as { id: number }
        const res = await t.post(`${API}/attempts/${attempt.id}/submit`, { answers: [] }, { token: who.token })
        expect(res.status).toBe(200)
      }
      expect((await t.put(`${API}/auth/me/settings`, { [DIGEST_SETTING]: true }, { token: learner.token })).status).toBe(200)
      expect((await t.put(`${API}/auth/me/settings`, { [DIGEST_SETTING]: false }, { token: quiet.token })).status).toBe(200)

      // a day later every card rated Again is due
      const tomorrow = new Date(Date.now() + 24 * 3600 * 1000)
      expect(await sendDueDigests(t.booted.core, tomorrow)).toBe(1)
      const mail = await sink.waitFor((m) => m.to.includes(learner.email.toLowerCase()))
      expect(mail.subject).toBe('2 questions due for review')
      for (const q of questions) expect(mail.text).toContain(q.question_text)
      // the same day again (a second process, a restart): nothing
      expect(await sendDueDigests(t.booted.core, tomorrow)).toBe(0)
      await Bun.sleep(300)
      expect(sink.to(learner.email)).toHaveLength(1)
      expect(sink.to(quiet.email)).toHaveLength(0)
    })
  })
}

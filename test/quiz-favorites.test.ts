// Spec 1, Favorites: a user stars bank questions for themselves. POST is idempotent (201 with the same favorite),
// DELETE too (204 either way), GET lists the caller's own ids, through the real app on each database target.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { INT4_MAX } from '../src/core/schema'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, expectValidation, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface FavoriteBody { id: number; user_id: number; question_id: number; created_at: string }
const BAD_IDS = ['0', '-1', 'abc', '1.5', String(INT4_MAX + 1)]

for (const target of databaseTargets()) {
  describe(`favorites [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let user: Account
    let other: Account
    let questions: number[] = []

    const as = (who: Account) => ({ token: who.token })
    const star = (who: Account, questionId: unknown) => t.post(`${API}/favorites`, { question_id: questionId }, as(who))
    const ids = async (who: Account) => {
      const res = await t.get(`${API}/favorites`, as(who))
      expect(res.status).toBe(200)
      return (await res.json()) as number[]
    }
    const stored = async (who: Account) =>
      (await t.db.sql<{ question_id: number }>`select question_id from quiz.favorites where user_id = ${who.id} order by question_id`).map((r) => r.question_id)

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'favmod')
      user = await createAccount(t, admin, 'user', 'favuser')
      other = await createAccount(t, admin, 'user', 'favother')
      const { quizId } = await makeRegexQuiz(t, moderator, { n: 4 })
      questions = (await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`)
        .map((r) => r.question_id)
    })
    afterAll(() => t?.close())

    it('POST answers 201 with {id, user_id, question_id, created_at}; a repeat answers 201 with the same favorite and adds none', async () => {
      const res = await star(user, questions[0])
      expect(res.status).toBe(201)
      const favorite = (await res.json()) as FavoriteBody
      expect(Object.keys(favorite).sort()).toEqual(['created_at', 'id', 'question_id', 'user_id'])
      expect(favorite).toMatchObject({ user_id: user.id, question_id: questions[0] })
      expect(Number.isNaN(Date.parse(favorite.created_at))).toBe(false)
      const again = await star(user, questions[0])
      expect(again.status).toBe(201)
      expect(await again.json()).toEqual(favorite)
      // the trailing-slash path is the same call
      const slash = await t.post(`${API}/favorites/`, { question_id: questions[0] }, as(user))
      expect(slash.status).toBe(201)
      expect(((await slash.json()) as FavoriteBody).id).toBe(favorite.id)
      expect(await stored(user)).toEqual([questions[0]!])
    })

    it('GET lists the caller\'s own favorite ids, most recently starred first; another user\'s are not shown', async () => {
      await star(other, questions[1])
      await star(other, questions[2])
      await star(other, questions[3])
      expect(await ids(other)).toEqual([questions[3]!, questions[2]!, questions[1]!])
      expect(await ids(user)).toEqual([questions[0]!])
      expect((await (await t.get(`${API}/favorites/`, as(other))).json()) as number[]).toEqual(await ids(other))
    })

    it('DELETE removes the star (204) and is idempotent: 204 again, and for a question that was never a favorite', async () => {
      await star(other, questions[0])
      expect((await t.delete(`${API}/favorites/${questions[2]}`, as(other))).status).toBe(204)
      expect(await ids(other)).not.toContain(questions[2]!)
      expect((await t.delete(`${API}/favorites/${questions[2]}`, as(other))).status).toBe(204)
      expect((await t.delete(`${API}/favorites/${INT4_MAX}`, as(other))).status).toBe(204)
      // one user's unstar leaves another's star alone
      expect((await t.delete(`${API}/favorites/${questions[0]}`, as(other))).status).toBe(204)
      expect(await ids(user)).toEqual([questions[0]!])
      // starred again later: a new favorite
      const before = (await (await star(other, questions[2])).json()) as FavoriteBody
      expect((await ids(other))[0]).toBe(questions[2]!)
      expect(before.question_id).toBe(questions[2]!)
    })

    it('an unknown question: 404 and nothing stored; bad ids: 422 (body and path); a missing body field: 422', async () => {
      const before = await stored(user)
      await expectDetail(await star(user, INT4_MAX), 404)
      for (const bad of [0, -1, 1.5, INT4_MAX + 1, 'abc', null]) await expectValidation(await star(user, bad), 'question_id')
      await expectValidation(await t.post(`${API}/favorites`, {}, as(user)), 'question_id')
      for (const bad of BAD_IDS) expect((await t.delete(`${API}/favorites/${bad}`, as(user))).status).toBe(422)
      expect(await stored(user)).toEqual(before)
    })

    it('every call needs a signed-in caller: 401 without a token', async () => {
      await expectDetail(await t.post(`${API}/favorites`, { question_id: questions[1] }), 401)
      await expectDetail(await t.get(`${API}/favorites`), 401)
      await expectDetail(await t.delete(`${API}/favorites/${questions[0]}`), 401)
      expect(await ids(user)).toEqual([questions[0]!])
    })

    it('a question deleted from the bank leaves the favorites list', async () => {
      const { quizId } = await makeRegexQuiz(t, moderator, { n: 2 })
      const [q] = await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position limit 1`
      expect((await star(user, q!.question_id)).status).toBe(201)
      expect(await ids(user)).toContain(q!.question_id)
      expect((await t.delete(`${API}/quizzes/${quizId}/questions/${q!.question_id}`, as(moderator))).status).toBe(204)
      expect(await ids(user)).not.toContain(q!.question_id)
    })
  })
}

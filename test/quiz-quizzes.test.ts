// Spec 1, Quizzes: the list, a quiz's views (timed, learning, study, shuffle, review), rename, publish, the trash
// (move, restore, permanent deletion), and the shared questions (edit seen in every quiz, the removal rule), through
// the real app on each database target. Quizzes are made by extraction in `regex` mode, which needs no AI.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { INT4_MAX } from '../src/core/schema'
import { TITLE_MAX } from '../plugins/quiz/models/extraction'
import { OPTIONS_MIN } from '../plugins/quiz/models/quizzes'
import { QUESTIONS_COLLECTION, questionText, quizEmbedder } from '../plugins/quiz/services/question-index'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, expectValidation, makeRegexQuiz, registerAdmin, type Account, type RegexQuizOptions } from './support/quiz'

setDefaultTimeout(30_000)

const QUIZ_KEYS = ['category_id', 'created_at', 'id', 'is_published', 'mode', 'questions_count', 'section_id', 'time_limit_minutes', 'title', 'user_id']
const QUESTION_KEYS = ['id', 'image_path', 'options', 'position', 'question_text', 'question_type']
const ITEM_KEYS = ['correct_answer', 'explanation', 'id', 'options', 'question_text', 'question_type']

interface QuizBody {
  id: number; section_id: number | null; user_id: number; title: string; questions_count: number; mode: string
  time_limit_minutes: number | null; is_published: 0 | 1; category_id: number | null; created_at: string
}
interface QuestionBody {
  id: number; position: number; question_text: string; question_type: string; options: string[]; image_path: string | null
  correct_answer?: string; explanation?: string
}
interface DetailBody extends QuizBody { questions: QuestionBody[] }
interface ItemBody { id: number; question_text: string; question_type: string; options: string[]; correct_answer: string; explanation: string }

let seq = 0

for (const target of databaseTargets()) {
  describe(`quizzes [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account
    let user: Account

    /** A quiz made by regex extraction over a fresh section: its id. */
    const makeQuiz = async (opts: RegexQuizOptions = {}): Promise<number> => (await makeRegexQuiz(t, moderator, opts)).quizId

    /** A second quiz referencing the same bank questions (as from-bank will make), in the given order. */
    async function quizFromQuestions(questionIds: number[]): Promise<number> {
      const [quiz] = await t.db.sql<{ id: number }>`
        insert into quiz.quizzes (user_id, title, mode) values (${moderator.id}, ${`Bank quiz ${++seq}`}, 'learning') returning id`
      for (const [i, id] of questionIds.entries()) {
        await t.db.sql`insert into quiz.quiz_questions (quiz_id, question_id, position) values (${quiz!.id}, ${id}, ${i + 1})`
      }
      return quiz!.id
    }

    const get = async <T>(path: string, who: Account = moderator): Promise<T> => {
      const res = await t.get(`${API}${path}`, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as T
    }
    const links = (quizId: number) => t.db.sql<{ question_id: number; position: number }>`
      select question_id, position from quiz.quiz_questions where quiz_id = ${quizId} order by position`
    const bankHas = async (questionId: number) => (await t.db.sql`select id from quiz.questions where id = ${questionId}`).length === 1
    /** The index's nearest record to a question's own text: itself when its embedding is current. */
    const nearest = async (q: { id: number; question_text: string; options: string[] }) => {
      const core = t.booted.core
      const [vector] = await (await quizEmbedder(core)).embed([questionText(q)])
      const [match] = await core.vectors.search(QUESTIONS_COLLECTION, vector!, { topK: 1 })
      return match
    }
    const indexedIds = async (q: { id: number; question_text: string; options: string[] }) => {
      const core = t.booted.core
      const [vector] = await (await quizEmbedder(core)).embed([questionText(q)])
      return (await core.vectors.search(QUESTIONS_COLLECTION, vector!, { topK: 50 })).map((m) => m.id)
    }

    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
      user = await createAccount(t, admin, 'user', 'user')
    })
    afterAll(() => t?.close())

    describe('GET /api/quizzes/', () => {
      it('moderators see every quiz out of the trash, newest first, as QuizResponse with questions_count; users only published ones', async () => {
        const older = await makeQuiz({ n: 2 })
        const newer = await makeQuiz({ n: 4, mode: 'timed' })
        const list = await get<QuizBody[]>('/quizzes')
        const mine = list.filter((q) => q.id === older || q.id === newer)
        expect(mine.map((q) => q.id)).toEqual([newer, older])
        expect(Object.keys(mine[0]!).sort()).toEqual(QUIZ_KEYS)
        expect(mine[0]).toMatchObject({ id: newer, questions_count: 4, mode: 'timed', time_limit_minutes: 20, is_published: 0, user_id: moderator.id, category_id: null })
        expect(mine[1]).toMatchObject({ questions_count: 2, mode: 'learning', time_limit_minutes: null })
        expect(Number.isNaN(Date.parse(mine[0]!.created_at))).toBe(false)
        // the trailing-slash path answers the same
        expect((await get<QuizBody[]>('/quizzes/')).map((q) => q.id)).toEqual(list.map((q) => q.id))

        expect((await get<QuizBody[]>('/quizzes', user)).some((q) => q.id === newer || q.id === older)).toBe(false)
        expect((await t.patch(`${API}/quizzes/${newer}/publish`, undefined, { token: moderator.token })).status).toBe(200)
        const seen = await get<QuizBody[]>('/quizzes', user)
        expect(seen.find((q) => q.id === newer)).toMatchObject({ is_published: 1, questions_count: 4 })
        expect(seen.some((q) => q.id === older)).toBe(false)
        expect(seen.every((q) => q.is_published === 1)).toBe(true)
      })

      it('needs a signed-in caller: 401 without a token', async () => {
        await expectDetail(await t.get(`${API}/quizzes`), 401)
      })
    })

    describe('GET /api/quizzes/{quiz_id}', () => {
      it('a timed quiz is QuizDetail without answers; study=true is QuizLearningDetail with correct_answer and explanation', async () => {
        const id = await makeQuiz({ mode: 'timed', n: 3 })
        const timed = await get<DetailBody>(`/quizzes/${id}`)
        expect(Object.keys(timed).sort()).toEqual([...QUIZ_KEYS, 'questions'].sort())
        expect(timed.questions.map((q) => q.position)).toEqual([1, 2, 3])
        for (const q of timed.questions) expect(Object.keys(q).sort()).toEqual(QUESTION_KEYS)
        expect(timed.questions[0]!.options).toHaveLength(4)
        const study = await get<DetailBody>(`/quizzes/${id}?study=true`)
        for (const q of study.questions) expect(Object.keys(q).sort()).toEqual([...QUESTION_KEYS, 'correct_answer', 'explanation'].sort())
        expect(study.questions[0]!.correct_answer).toBe(study.questions[0]!.options[1]!)
        expect(study.questions[0]!.explanation).toStartWith('Because')
        expect((await get<DetailBody>(`/quizzes/${id}?study=false`)).questions[0]!.correct_answer).toBeUndefined()
      })

      it('a learning quiz carries answers and explanations without study', async () => {
        const id = await makeQuiz({ mode: 'learning' })
        const body = await get<DetailBody>(`/quizzes/${id}`)
        expect(body.mode).toBe('learning')
        for (const q of body.questions) {
          expect(q.options).toContain(q.correct_answer!)
          expect(typeof q.explanation).toBe('string')
        }
      })

      it('a user cannot see an unpublished quiz (404) and sees a published one', async () => {
        const id = await makeQuiz({ mode: 'timed' })
        await expectDetail(await t.get(`${API}/quizzes/${id}`, { token: user.token }), 404)
        await t.patch(`${API}/quizzes/${id}/publish?published=true`, undefined, { token: moderator.token })
        const body = await get<DetailBody>(`/quizzes/${id}`, user)
        expect(body.questions[0]!.correct_answer).toBeUndefined()
        expect((await get<DetailBody>(`/quizzes/${id}?study=true`, user)).questions[0]!.correct_answer).toBeDefined()
      })

      it('unknown quiz: 404; ids out of range or not numbers: 422', async () => {
        await expectDetail(await t.get(`${API}/quizzes/${INT4_MAX}`, { token: moderator.token }), 404)
        for (const bad of [String(INT4_MAX + 1), '0', '-1', 'abc', '1.5', '99999999999999999999']) {
          const res = await t.get(`${API}/quizzes/${bad}`, { token: moderator.token })
          expect(res.status).toBe(422)
          const body = (await res.json()) as { detail: Array<{ loc: unknown[]; msg: string }> }
          expect(body.detail.length).toBeGreaterThan(0)
          expect(typeof body.detail[0]!.msg).toBe('string')
        }
        expect((await t.get(`${API}/quizzes/1?study=maybe`, { token: moderator.token })).status).toBe(422)
      })
    })

    describe('PATCH /api/quizzes/{quiz_id}', () => {
      it('renames (trimmed) and answers QuizResponse; blank or too long: 422; users: 403', async () => {
        const id = await makeQuiz()
        const res = await t.patch(`${API}/quizzes/${id}`, { title: '  Renamed <b>quiz</b>  ' }, { token: moderator.token })
        expect(res.status).toBe(200)
        const body = (await res.json()) as QuizBody
        expect(Object.keys(body).sort()).toEqual(QUIZ_KEYS)
        expect(body).toMatchObject({ id, title: 'Renamed <b>quiz</b>', questions_count: 3 })
        await expectValidation(await t.patch(`${API}/quizzes/${id}`, { title: '   ' }, { token: moderator.token }), 'title')
        await expectValidation(await t.patch(`${API}/quizzes/${id}`, { title: 'x'.repeat(TITLE_MAX + 1) }, { token: moderator.token }), 'title')
        await expectValidation(await t.patch(`${API}/quizzes/${id}`, {}, { token: moderator.token }), 'title')
        await expectDetail(await t.patch(`${API}/quizzes/${id}`, { title: 'Mine' }, { token: user.token }), 403)
        await expectDetail(await t.patch(`${API}/quizzes/${INT4_MAX}`, { title: 'Nobody' }, { token: moderator.token }), 404)
        expect((await get<DetailBody>(`/quizzes/${id}`)).title).toBe('Renamed <b>quiz</b>')
      })
    })

    describe('POST /api/quizzes/{quiz_id}/shuffle', () => {
      it('answers QuizDetail in a random question and option order, and stores nothing', async () => {
        const id = await makeQuiz({ mode: 'learning', n: 6 })
        await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: moderator.token })
        const before = await links(id)
        const stored = await get<DetailBody>(`/quizzes/${id}`)
        let questionOrderChanged = false
        let optionOrderChanged = false
        for (let i = 0; i < 15; i++) {
          const res = await t.post(`${API}/quizzes/${id}/shuffle`, undefined, { token: user.token })
          expect(res.status).toBe(200)
          const body = (await res.json()) as DetailBody
          expect(body.questions.map((q) => q.id).sort()).toEqual(stored.questions.map((q) => q.id).sort())
          for (const q of body.questions) {
            expect(Object.keys(q).sort()).toEqual(QUESTION_KEYS)
            const own = stored.questions.find((s) => s.id === q.id)!
            expect([...q.options].sort()).toEqual([...own.options].sort())
            if (q.options.join() !== own.options.join()) optionOrderChanged = true
          }
          if (body.questions.map((q) => q.id).join() !== stored.questions.map((q) => q.id).join()) questionOrderChanged = true
        }
        expect(questionOrderChanged).toBe(true)
        expect(optionOrderChanged).toBe(true)
        const kept = (await (await t.post(`${API}/quizzes/${id}/shuffle?shuffle_options=false`, undefined, { token: user.token })).json()) as DetailBody
        for (const q of kept.questions) expect(q.options).toEqual(stored.questions.find((s) => s.id === q.id)!.options)
        expect(await links(id)).toEqual(before)
        expect((await get<DetailBody>(`/quizzes/${id}`)).questions).toEqual(stored.questions)
      })

      it('same visibility as the quiz: a user gets 404 for an unpublished one', async () => {
        const id = await makeQuiz()
        await expectDetail(await t.post(`${API}/quizzes/${id}/shuffle`, undefined, { token: user.token }), 404)
        expect((await t.post(`${API}/quizzes/${id}/shuffle`, undefined, { token: moderator.token })).status).toBe(200)
      })
    })

    describe('GET /api/quizzes/{quiz_id}/review', () => {
      it('moderators get QuizReview with full answers; a user without a completed attempt gets 403; unpublished: 404', async () => {
        const id = await makeQuiz({ mode: 'timed' })
        const review = await get<DetailBody>(`/quizzes/${id}/review`)
        for (const q of review.questions) {
          expect(q.options).toContain(q.correct_answer!)
          expect(q.explanation).toStartWith('Because')
        }
        await expectDetail(await t.get(`${API}/quizzes/${id}/review`, { token: user.token }), 404)
        await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: moderator.token })
        const detail = await expectDetail(await t.get(`${API}/quizzes/${id}/review`, { token: user.token }), 403)
        expect(detail).toContain('attempt')
      })
    })

    describe('GET /api/quizzes/{quiz_id}/questions', () => {
      it('moderators get {id, question_text, question_type, options, correct_answer, explanation} in order; users 403', async () => {
        const id = await makeQuiz({ n: 2 })
        const items = await get<ItemBody[]>(`/quizzes/${id}/questions`)
        expect(items).toHaveLength(2)
        for (const q of items) expect(Object.keys(q).sort()).toEqual(ITEM_KEYS)
        expect(items[0]).toMatchObject({ question_type: 'multiple_choice', correct_answer: items[0]!.options[1] })
        expect(items.map((q) => q.id)).toEqual((await links(id)).map((l) => l.question_id))
        await expectDetail(await t.get(`${API}/quizzes/${id}/questions`, { token: user.token }), 403)
        await expectDetail(await t.get(`${API}/quizzes/${INT4_MAX}/questions`, { token: moderator.token }), 404)
      })
    })

    describe('PATCH /api/quizzes/{quiz_id}/questions/{question_id}', () => {
      it('the edit is shared: made through quiz A, it shows through quiz B; the embedding follows', async () => {
        const a = await makeQuiz({ n: 3 })
        const items = await get<ItemBody[]>(`/quizzes/${a}/questions`)
        const b = await quizFromQuestions([items[2]!.id, items[0]!.id])
        const target = items[0]!
        const res = await t.patch(`${API}/quizzes/${a}/questions/${target.id}`, {
          question_text: '  Which chamber pumps blood to the aorta?  ',
          options: ['Left ventricle', 'Right atrium', 'Left atrium'],
          correct_answer: 'Left ventricle',
          explanation: 'It ejects into the aorta.',
        }, { token: moderator.token })
        expect(res.status).toBe(200)
        const edited = (await res.json()) as ItemBody
        expect(Object.keys(edited).sort()).toEqual(ITEM_KEYS)
        expect(edited).toEqual({
          id: target.id, question_text: 'Which chamber pumps blood to the aorta?', question_type: 'multiple_choice',
          options: ['Left ventricle', 'Right atrium', 'Left atrium'], correct_answer: 'Left ventricle', explanation: 'It ejects into the aorta.',
        })
        const throughB = await get<DetailBody>(`/quizzes/${b}?study=true`)
        expect(throughB.questions[1]).toMatchObject({ id: target.id, position: 2, question_text: edited.question_text, options: edited.options, correct_answer: 'Left ventricle' })
        const match = await nearest(edited)
        expect(match?.id).toBe(String(target.id))
        expect(match?.text).toBe(edited.question_text)
        expect(match!.score).toBeGreaterThan(0.99)

        // one field alone; question_type too
        const typed = await t.patch(`${API}/quizzes/${b}/questions/${target.id}`, { question_type: 'single_best_answer' }, { token: moderator.token })
        expect(((await typed.json()) as ItemBody)).toMatchObject({ question_type: 'single_best_answer', question_text: edited.question_text })
        expect((await get<ItemBody[]>(`/quizzes/${a}/questions`))[0]!.question_type).toBe('single_best_answer')
      })

      it('400 when correct_answer matches none of the options, also after an options change; nothing changes', async () => {
        const a = await makeQuiz({ n: 1 })
        const [q] = await get<ItemBody[]>(`/quizzes/${a}/questions`)
        await expectDetail(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { correct_answer: 'Not an option' }, { token: moderator.token }), 400)
        await expectDetail(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { options: ['One', 'Two'] }, { token: moderator.token }), 400)
        await expectDetail(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { options: ['Same', 'Same'], correct_answer: 'Same' }, { token: moderator.token }), 400)
        await expectDetail(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { question_text: '   ' }, { token: moderator.token }), 400)
        await expectValidation(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { options: ['Only'.repeat(1)].slice(0, OPTIONS_MIN - 1) }, { token: moderator.token }), 'options')
        await expectValidation(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { question_text: 5 }, { token: moderator.token }), 'question_text')
        expect((await get<ItemBody[]>(`/quizzes/${a}/questions`))[0]).toEqual(q!)
        const ok = await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { options: ['One', 'Two'], correct_answer: 'Two' }, { token: moderator.token })
        expect(ok.status).toBe(200)
      })

      it('404 for a question not in this quiz; 403 for users; 422 for out-of-range ids', async () => {
        const a = await makeQuiz({ n: 1 })
        const other = await makeQuiz({ n: 1 })
        const [q] = await get<ItemBody[]>(`/quizzes/${other}/questions`)
        await expectDetail(await t.patch(`${API}/quizzes/${a}/questions/${q!.id}`, { explanation: 'x' }, { token: moderator.token }), 404)
        await expectDetail(await t.patch(`${API}/quizzes/${other}/questions/${q!.id}`, { explanation: 'x' }, { token: user.token }), 403)
        const res = await t.patch(`${API}/quizzes/${other}/questions/${INT4_MAX + 1}`, { explanation: 'x' }, { token: moderator.token })
        expect(res.status).toBe(422)
        expect(((await res.json()) as { detail: unknown[] }).detail.length).toBeGreaterThan(0)
      })
    })

    describe('DELETE /api/quizzes/{quiz_id}/questions/{question_id} (question removal)', () => {
      it('a question another quiz references: only this link goes; the bank question and its embedding stay', async () => {
        const a = await makeQuiz({ n: 3 })
        const items = await get<ItemBody[]>(`/quizzes/${a}/questions`)
        const shared = items[0]!
        const b = await quizFromQuestions([shared.id])
        const res = await t.delete(`${API}/quizzes/${a}/questions/${shared.id}`, { token: moderator.token })
        expect(res.status).toBe(204)
        expect(await bankHas(shared.id)).toBe(true)
        expect((await links(a))).toEqual([{ question_id: items[1]!.id, position: 1 }, { question_id: items[2]!.id, position: 2 }])
        expect((await links(b)).map((l) => l.question_id)).toEqual([shared.id])
        expect(await indexedIds(shared)).toContain(String(shared.id))
        expect((await get<QuizBody[]>('/quizzes')).find((q) => q.id === a)!.questions_count).toBe(2)
      })

      it('a question used only by this quiz is deleted from the bank, with its embedding; positions are renumbered', async () => {
        const a = await makeQuiz({ n: 3 })
        const items = await get<ItemBody[]>(`/quizzes/${a}/questions`)
        const own = items[1]!
        expect(await indexedIds(own)).toContain(String(own.id))
        expect((await t.delete(`${API}/quizzes/${a}/questions/${own.id}`, { token: moderator.token })).status).toBe(204)
        expect(await bankHas(own.id)).toBe(false)
        expect(await indexedIds(own)).not.toContain(String(own.id))
        expect(await links(a)).toEqual([{ question_id: items[0]!.id, position: 1 }, { question_id: items[2]!.id, position: 2 }])
        expect((await get<DetailBody>(`/quizzes/${a}`)).questions.map((q) => q.position)).toEqual([1, 2])
      })

      it('a trashed quiz still counts as a reference (it can come back)', async () => {
        const a = await makeQuiz({ n: 1 })
        const [q] = await get<ItemBody[]>(`/quizzes/${a}/questions`)
        const b = await quizFromQuestions([q!.id])
        expect((await t.delete(`${API}/quizzes/${b}`, { token: moderator.token })).status).toBe(204)
        expect((await t.delete(`${API}/quizzes/${a}/questions/${q!.id}`, { token: moderator.token })).status).toBe(204)
        expect(await bankHas(q!.id)).toBe(true)
      })

      it('404 when the question is not in the quiz (or already removed); 403 for users', async () => {
        const a = await makeQuiz({ n: 2 })
        const [q] = await get<ItemBody[]>(`/quizzes/${a}/questions`)
        await expectDetail(await t.delete(`${API}/quizzes/${a}/questions/${q!.id}`, { token: user.token }), 403)
        expect((await t.delete(`${API}/quizzes/${a}/questions/${q!.id}`, { token: moderator.token })).status).toBe(204)
        await expectDetail(await t.delete(`${API}/quizzes/${a}/questions/${q!.id}`, { token: moderator.token }), 404)
      })
    })

    describe('PATCH /api/quizzes/{quiz_id}/publish', () => {
      it('sets the flag to `published` (default true) and answers {quiz_id, is_published} as 0 or 1', async () => {
        const id = await makeQuiz()
        const on = await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: moderator.token })
        expect(await on.json()).toEqual({ quiz_id: id, is_published: 1 })
        const off = await t.patch(`${API}/quizzes/${id}/publish?published=false`, undefined, { token: moderator.token })
        expect(await off.json()).toEqual({ quiz_id: id, is_published: 0 })
        expect((await get<QuizBody[]>('/quizzes')).find((q) => q.id === id)!.is_published).toBe(0)
        const again = await t.patch(`${API}/quizzes/${id}/publish?published=true`, undefined, { token: moderator.token })
        expect(await again.json()).toEqual({ quiz_id: id, is_published: 1 })
        await expectDetail(await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: user.token }), 403)
        await expectDetail(await t.patch(`${API}/quizzes/${INT4_MAX}/publish`, undefined, { token: moderator.token }), 404)
        expect((await t.patch(`${API}/quizzes/${id}/publish?published=perhaps`, undefined, { token: moderator.token })).status).toBe(422)
      })
    })

    describe('the trash', () => {
      it('DELETE moves to the trash (204): hidden from every normal read, listed in the trash; restore brings it back', async () => {
        const id = await makeQuiz({ n: 2 })
        await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: moderator.token })
        expect((await t.delete(`${API}/quizzes/${id}`, { token: moderator.token })).status).toBe(204)
        expect((await get<QuizBody[]>('/quizzes')).some((q) => q.id === id)).toBe(false)
        expect((await get<QuizBody[]>('/quizzes', user)).some((q) => q.id === id)).toBe(false)
        for (const path of [`/quizzes/${id}`, `/quizzes/${id}/questions`, `/quizzes/${id}/review`]) {
          await expectDetail(await t.get(`${API}${path}`, { token: moderator.token }), 404)
        }
        await expectDetail(await t.post(`${API}/quizzes/${id}/shuffle`, undefined, { token: moderator.token }), 404)
        await expectDetail(await t.patch(`${API}/quizzes/${id}`, { title: 'x' }, { token: moderator.token }), 404)
        await expectDetail(await t.delete(`${API}/quizzes/${id}`, { token: moderator.token }), 404)
        const trash = await get<QuizBody[]>('/quizzes/trash')
        expect(trash[0]).toMatchObject({ id, questions_count: 2 })
        expect(Object.keys(trash[0]!).sort()).toEqual(QUIZ_KEYS)

        const restored = await t.patch(`${API}/quizzes/${id}/restore`, undefined, { token: moderator.token })
        expect(restored.status).toBe(200)
        expect(await restored.json()).toMatchObject({ id, questions_count: 2, is_published: 1 })
        expect((await get<QuizBody[]>('/quizzes/trash')).some((q) => q.id === id)).toBe(false)
        expect((await get<DetailBody>(`/quizzes/${id}`, user)).questions).toHaveLength(2)
        await expectDetail(await t.patch(`${API}/quizzes/${id}/restore`, undefined, { token: moderator.token }), 400)
      })

      it('permanent deletion: 400 while not in the trash; from the trash 204, and its questions stay in the bank, detached', async () => {
        const id = await makeQuiz({ n: 2 })
        const items = await get<ItemBody[]>(`/quizzes/${id}/questions`)
        await expectDetail(await t.delete(`${API}/quizzes/${id}/permanent`, { token: moderator.token }), 400)
        expect((await get<DetailBody>(`/quizzes/${id}`)).id).toBe(id)
        expect((await t.delete(`${API}/quizzes/${id}`, { token: moderator.token })).status).toBe(204)
        expect((await t.delete(`${API}/quizzes/${id}/permanent`, { token: moderator.token })).status).toBe(204)
        const rows = await t.db.sql<{ id: number; source_quiz_id: number | null }>`
          select id, source_quiz_id from quiz.questions where id in (${items[0]!.id}, ${items[1]!.id}) order by id`
        expect(rows).toEqual(items.map((q) => ({ id: q.id, source_quiz_id: null })).sort((x, y) => x.id - y.id))
        expect(await t.db.sql`select 1 from quiz.quizzes where id = ${id}`).toHaveLength(0)
        expect(await indexedIds(items[0]!)).toContain(String(items[0]!.id))
        await expectDetail(await t.delete(`${API}/quizzes/${id}/permanent`, { token: moderator.token }), 404)
        await expectDetail(await t.patch(`${API}/quizzes/${id}/restore`, undefined, { token: moderator.token }), 404)
      })

      it('publish works on a quiz in the trash (any state), and the trash stays moderators\' only', async () => {
        const id = await makeQuiz()
        await t.delete(`${API}/quizzes/${id}`, { token: moderator.token })
        expect(await (await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: moderator.token })).json()).toEqual({ quiz_id: id, is_published: 1 })
        expect((await get<QuizBody[]>('/quizzes', user)).some((q) => q.id === id)).toBe(false)
        await expectDetail(await t.get(`${API}/quizzes/trash`, { token: user.token }), 403)
        await expectDetail(await t.delete(`${API}/quizzes/${id}/permanent`, { token: user.token }), 403)
        await expectDetail(await t.patch(`${API}/quizzes/${id}/restore`, undefined, { token: user.token }), 403)
        await expectDetail(await t.delete(`${API}/quizzes/${id}`, { token: user.token }), 403)
      })

      it('admins may do what moderators may', async () => {
        const id = await makeQuiz()
        expect((await t.delete(`${API}/quizzes/${id}`, { token: admin.token })).status).toBe(204)
        expect((await t.get(`${API}/quizzes/trash`, { token: admin.token })).status).toBe(200)
        expect((await t.patch(`${API}/quizzes/${id}/restore`, undefined, { token: admin.token })).status).toBe(200)
      })

      it('out-of-range ids are 422 on every quiz route', async () => {
        const big = INT4_MAX + 1
        const calls = [
          t.delete(`${API}/quizzes/${big}`, { token: moderator.token }),
          t.delete(`${API}/quizzes/${big}/permanent`, { token: moderator.token }),
          t.patch(`${API}/quizzes/${big}/restore`, undefined, { token: moderator.token }),
          t.patch(`${API}/quizzes/${big}/publish`, undefined, { token: moderator.token }),
          t.post(`${API}/quizzes/${big}/shuffle`, undefined, { token: moderator.token }),
          t.get(`${API}/quizzes/${big}/review`, { token: moderator.token }),
          t.get(`${API}/quizzes/${big}/questions`, { token: moderator.token }),
          t.delete(`${API}/quizzes/1/questions/${big}`, { token: moderator.token }),
        ]
        for (const res of await Promise.all(calls)) expect(res.status).toBe(422)
      })
    })
  })
}

// Spec 1, Quiz categories and Question categories: the lists and their counts, creation (409 on a name taken in any
// letter case), a quiz's category and the quiz list's category filter, deletion (quizzes uncategorized; questions
// moved with move_to or uncategorized, in one step), and a quiz made from a question category, through the real app
// on each database target. Quizzes are made by extraction in `regex` mode, which needs no AI.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { CATEGORY_DESCRIPTION_MAX, CATEGORY_NAME_MAX } from '../plugins/quiz/models/categories'
import { TIME_LIMIT_MAX_MINUTES, TITLE_MAX } from '../plugins/quiz/models/extraction'
import { INT4_MAX } from '../src/core/schema'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, expectValidation, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface QuizCategoryBody { id: number; name: string; quiz_count: number }
interface QuestionCategoryBody { id: number; name: string; description: string | null; question_count: number }
interface QuizBody { id: number; title: string; category_id: number | null; is_published: 0 | 1; mode: string; time_limit_minutes: number | null; questions_count: number }
interface DetailBody extends QuizBody { questions: Array<{ id: number; position: number }> }

const BAD_IDS = ['0', '-1', 'abc', '1.5', String(INT4_MAX + 1)]
let seq = 0
const unique = (tag: string) => `${tag} ${++seq}${crypto.randomUUID().slice(0, 6)}`

for (const target of databaseTargets()) {
  describe(`categories [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let user: Account

    const as = (who: Account) => ({ token: who.token })
    const json = async <T>(res: Response, status = 200): Promise<T> => {
      expect(res.status).toBe(status)
      return (await res.json()) as T
    }
    const makeQuiz = async (opts: Parameters<typeof makeRegexQuiz>[2] = {}) => (await makeRegexQuiz(t, moderator, opts)).quizId
    const newQuizCategory = async (name = unique('Quiz cat')) =>
      json<QuizCategoryBody>(await t.post(`${API}/categories/`, { name }, as(moderator)))
    const newQuestionCategory = async (name = unique('Question cat'), description: string | null = null) =>
      json<QuestionCategoryBody>(await t.post(`${API}/question-categories/`, { name, description }, as(moderator)))
    const assign = (quizId: number, categoryId: number | 'null' | null) =>
      t.patch(`${API}/categories/quizzes/${quizId}${categoryId === null ? '' : `?category_id=${categoryId}`}`, undefined, as(moderator))
    const quizCategories = async (who = user) => json<QuizCategoryBody[]>(await t.get(`${API}/categories`, as(who)))
    const questionCategories = async (who = user) => json<QuestionCategoryBody[]>(await t.get(`${API}/question-categories`, as(who)))
    const quizCategoryOf = async (quizId: number) =>
      (await t.db.sql<{ category_id: number | null }>`select category_id from quiz.quizzes where id = ${quizId}`)[0]!.category_id
    const questionsOf = async (categoryId: number) =>
      (await t.db.sql<{ id: number }>`select id from quiz.questions where question_category_id = ${categoryId} order by id`).map((r) => r.id)
    const questionIdsOfQuiz = async (quizId: number) =>
      (await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`).map((r) => r.question_id)

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'catmod')
      user = await createAccount(t, admin, 'user', 'catuser')
    })
    afterAll(() => t?.close())

    describe('quiz categories: list and create', () => {
      it('POST answers CategoryResponse {id, name, quiz_count}, the name trimmed; GET lists it by name for any user, with and without a trailing slash', async () => {
        const name = unique('Cardiology')
        const created = await json<QuizCategoryBody>(await t.post(`${API}/categories`, { name: `  ${name}  ` }, as(moderator)))
        expect(Object.keys(created).sort()).toEqual(['id', 'name', 'quiz_count'])
        expect(created).toMatchObject({ name, quiz_count: 0 })
        const list = await quizCategories()
        expect(list.find((c) => c.id === created.id)).toEqual({ id: created.id, name, quiz_count: 0 })
        const names = list.map((c) => c.name.toLowerCase())
        expect(names).toEqual([...names].sort())
        expect((await json<QuizCategoryBody[]>(await t.get(`${API}/categories/`, as(user)))).map((c) => c.id)).toEqual(list.map((c) => c.id))
      })

      it('a name already used, in any letter case, is 409 with a message, and nothing is added', async () => {
        const name = unique('Neurology')
        await newQuizCategory(name)
        const before = (await quizCategories()).length
        const detail = await expectDetail(await t.post(`${API}/categories/`, { name: ` ${name.toUpperCase()} ` }, as(moderator)), 409)
        expect(detail).toContain('already exists')
        expect((await quizCategories()).length).toBe(before)
      })

      it(`the name: blank or over ${CATEGORY_NAME_MAX} characters or missing is 422; exactly ${CATEGORY_NAME_MAX} is fine`, async () => {
        await expectValidation(await t.post(`${API}/categories/`, { name: '   ' }, as(moderator)), 'name')
        await expectValidation(await t.post(`${API}/categories/`, { name: 'x'.repeat(CATEGORY_NAME_MAX + 1) }, as(moderator)), 'name')
        await expectValidation(await t.post(`${API}/categories/`, {}, as(moderator)), 'name')
        await expectValidation(await t.post(`${API}/categories/`, { name: 7 }, as(moderator)), 'name')
        const longest = `${++seq}`.padEnd(CATEGORY_NAME_MAX, 'n')
        expect((await newQuizCategory(longest)).name).toBe(longest)
      })

      it('roles: listing needs a signed-in caller (401); creating needs a moderator (403 for a user)', async () => {
        await expectDetail(await t.get(`${API}/categories/`), 401)
        await expectDetail(await t.post(`${API}/categories/`, { name: unique('Nope') }), 401)
        const name = unique('User made')
        await expectDetail(await t.post(`${API}/categories/`, { name }, as(user)), 403)
        expect((await quizCategories()).some((c) => c.name === name)).toBe(false)
      })
    })

    describe('a quiz\'s category', () => {
      it('PATCH /categories/quizzes/{quiz_id} sets {quiz_id, category_id}; QuizResponse shows it; null or no value uncategorizes', async () => {
        const category = await newQuizCategory()
        const quiz = await makeQuiz()
        expect(await json<unknown>(await assign(quiz, category.id))).toEqual({ quiz_id: quiz, category_id: category.id })
        expect(await quizCategoryOf(quiz)).toBe(category.id)
        const listed = (await json<QuizBody[]>(await t.get(`${API}/quizzes`, as(moderator)))).find((q) => q.id === quiz)
        expect(listed!.category_id).toBe(category.id)
        expect((await json<QuizBody>(await t.get(`${API}/quizzes/${quiz}`, as(moderator)))).category_id).toBe(category.id)
        expect(await json<unknown>(await assign(quiz, 'null'))).toEqual({ quiz_id: quiz, category_id: null })
        expect(await quizCategoryOf(quiz)).toBeNull()
        await assign(quiz, category.id)
        expect(await json<unknown>(await assign(quiz, null))).toEqual({ quiz_id: quiz, category_id: null })
        expect(await quizCategoryOf(quiz)).toBeNull()
      })

      it('quiz_count counts the category\'s quizzes out of the trash', async () => {
        const category = await newQuizCategory()
        const [a, b, c] = [await makeQuiz(), await makeQuiz(), await makeQuiz()]
        for (const q of [a, b, c]) expect((await assign(q, category.id)).status).toBe(200)
        expect((await quizCategories()).find((x) => x.id === category.id)!.quiz_count).toBe(3)
        expect((await t.delete(`${API}/quizzes/${c}`, as(moderator))).status).toBe(204)
        expect((await quizCategories()).find((x) => x.id === category.id)!.quiz_count).toBe(2)
        await assign(b, null)
        expect((await quizCategories()).find((x) => x.id === category.id)!.quiz_count).toBe(1)
      })

      it('404 for an unknown quiz, a quiz in the trash or an unknown category, and the quiz keeps its category', async () => {
        const category = await newQuizCategory()
        const quiz = await makeQuiz()
        await assign(quiz, category.id)
        await expectDetail(await assign(INT4_MAX, category.id), 404)
        await expectDetail(await assign(quiz, INT4_MAX), 404)
        expect(await quizCategoryOf(quiz)).toBe(category.id)
        await t.delete(`${API}/quizzes/${quiz}`, as(moderator))
        await expectDetail(await assign(quiz, null), 404)
        expect(await quizCategoryOf(quiz)).toBe(category.id)
      })

      it('bad ids are 422 (path and query), and users get 403', async () => {
        const category = await newQuizCategory()
        const quiz = await makeQuiz()
        for (const bad of BAD_IDS) {
          expect((await t.patch(`${API}/categories/quizzes/${bad}?category_id=${category.id}`, undefined, as(moderator))).status).toBe(422)
          expect((await t.patch(`${API}/categories/quizzes/${quiz}?category_id=${bad}`, undefined, as(moderator))).status).toBe(422)
        }
        expect(await quizCategoryOf(quiz)).toBeNull()
        await expectDetail(await t.patch(`${API}/categories/quizzes/${quiz}?category_id=${category.id}`, undefined, as(user)), 403)
        await expectDetail(await t.patch(`${API}/categories/quizzes/${quiz}?category_id=${category.id}`), 401)
        expect(await quizCategoryOf(quiz)).toBeNull()
      })
    })

    describe('GET /api/quizzes filtered by category', () => {
      it('category_id keeps one category\'s quizzes; uncategorized=true the ones in none; both together: 400; bad values: 422', async () => {
        const cat = await newQuizCategory()
        const other = await newQuizCategory()
        const [inCat, inOther, none] = [await makeQuiz(), await makeQuiz(), await makeQuiz()]
        await assign(inCat, cat.id)
        await assign(inOther, other.id)
        const ids = async (query: string, who = moderator) => (await json<QuizBody[]>(await t.get(`${API}/quizzes${query}`, as(who)))).map((q) => q.id)
        expect(await ids(`?category_id=${cat.id}`)).toEqual([inCat])
        expect(await ids(`/?category_id=${other.id}`)).toEqual([inOther])
        const uncategorized = await ids('?uncategorized=true')
        expect(uncategorized).toContain(none)
        expect(uncategorized).not.toContain(inCat)
        expect(uncategorized).not.toContain(inOther)
        for (const id of uncategorized) expect(await quizCategoryOf(id)).toBeNull()
        const all = await ids('?uncategorized=false')
        expect(all).toEqual(expect.arrayContaining([inCat, inOther, none]))
        expect(await ids(`?category_id=${INT4_MAX}`)).toEqual([])
        // a regular user: published quizzes only, in the filter too
        expect(await ids(`?category_id=${cat.id}`, user)).toEqual([])
        await t.patch(`${API}/quizzes/${inCat}/publish`, undefined, as(moderator))
        expect(await ids(`?category_id=${cat.id}`, user)).toEqual([inCat])
        await expectDetail(await t.get(`${API}/quizzes?category_id=${cat.id}&uncategorized=true`, as(moderator)), 400)
        for (const bad of BAD_IDS) expect((await t.get(`${API}/quizzes?category_id=${bad}`, as(moderator))).status).toBe(422)
        expect((await t.get(`${API}/quizzes?uncategorized=maybe`, as(moderator))).status).toBe(422)
      })
    })

    describe('DELETE /api/categories/{category_id}', () => {
      it('204; its quizzes (in the trash too) become uncategorized and stay; the category is gone; again: 404', async () => {
        const category = await newQuizCategory()
        const [a, b] = [await makeQuiz(), await makeQuiz()]
        await assign(a, category.id)
        await assign(b, category.id)
        await t.delete(`${API}/quizzes/${b}`, as(moderator))
        expect((await t.delete(`${API}/categories/${category.id}`, as(moderator))).status).toBe(204)
        expect(await quizCategoryOf(a)).toBeNull()
        expect(await quizCategoryOf(b)).toBeNull()
        expect((await json<QuizBody>(await t.get(`${API}/quizzes/${a}`, as(moderator)))).category_id).toBeNull()
        expect((await quizCategories()).some((c) => c.id === category.id)).toBe(false)
        await expectDetail(await t.delete(`${API}/categories/${category.id}`, as(moderator)), 404)
      })

      it('users get 403 and the category stays; bad ids: 422', async () => {
        const category = await newQuizCategory()
        await expectDetail(await t.delete(`${API}/categories/${category.id}`, as(user)), 403)
        await expectDetail(await t.delete(`${API}/categories/${category.id}`), 401)
        expect((await quizCategories()).some((c) => c.id === category.id)).toBe(true)
        for (const bad of BAD_IDS) expect((await t.delete(`${API}/categories/${bad}`, as(moderator))).status).toBe(422)
      })
    })

    describe('question categories: list, create, update', () => {
      it('POST answers QCatResponse {id, name, description, question_count}; description trimmed, blank or absent: null', async () => {
        const name = unique('Pharmacology')
        const created = await json<QuestionCategoryBody>(await t.post(`${API}/question-categories`, { name: ` ${name} `, description: '  Drugs  ' }, as(moderator)))
        expect(Object.keys(created).sort()).toEqual(['description', 'id', 'name', 'question_count'])
        expect(created).toMatchObject({ name, description: 'Drugs', question_count: 0 })
        expect((await newQuestionCategory(unique('Blank'), '   ')).description).toBeNull()
        const bare = await json<QuestionCategoryBody>(await t.post(`${API}/question-categories/`, { name: unique('Bare') }, as(moderator)))
        expect(bare.description).toBeNull()
        expect((await questionCategories()).find((c) => c.id === created.id)).toEqual(created)
      })

      it('question_count counts the category\'s bank questions', async () => {
        const category = await newQuestionCategory()
        await makeQuiz({ n: 3, question_category_id: category.id })
        await makeQuiz({ n: 2, question_category_id: category.id })
        const listed = (await questionCategories()).find((c) => c.id === category.id)!
        expect(listed.question_count).toBe(5)
        expect((await questionsOf(category.id)).length).toBe(5)
      })

      it('409 for a name already used in any letter case (create and rename); 422 for a blank or too long name or description', async () => {
        const name = unique('Anatomy')
        const first = await newQuestionCategory(name)
        await expectDetail(await t.post(`${API}/question-categories/`, { name: name.toLowerCase() }, as(moderator)), 409)
        const second = await newQuestionCategory()
        const detail = await expectDetail(await t.patch(`${API}/question-categories/${second.id}`, { name: name.toUpperCase() }, as(moderator)), 409)
        expect(detail).toContain('already exists')
        expect((await questionCategories()).find((c) => c.id === second.id)!.name).toBe(second.name)
        // a category may change the letter case of its own name
        expect((await json<QuestionCategoryBody>(await t.patch(`${API}/question-categories/${first.id}`, { name: name.toUpperCase() }, as(moderator)))).name).toBe(name.toUpperCase())
        await expectValidation(await t.post(`${API}/question-categories/`, { name: ' ' }, as(moderator)), 'name')
        await expectValidation(await t.post(`${API}/question-categories/`, { name: 'x'.repeat(CATEGORY_NAME_MAX + 1) }, as(moderator)), 'name')
        await expectValidation(await t.post(`${API}/question-categories/`, { name: unique('Long'), description: 'd'.repeat(CATEGORY_DESCRIPTION_MAX + 1) }, as(moderator)), 'description')
        await expectValidation(await t.patch(`${API}/question-categories/${first.id}`, { name: '' }, as(moderator)), 'name')
        await expectValidation(await t.patch(`${API}/question-categories/${first.id}`, { description: 'no name' }, as(moderator)), 'name')
      })

      it('PATCH renames and sets, keeps (absent) or clears (null) the description; answers QCatResponse with the count', async () => {
        const category = await newQuestionCategory(unique('Old'), 'Kept')
        await makeQuiz({ n: 2, question_category_id: category.id })
        const newName = unique('New')
        const renamed = await json<QuestionCategoryBody>(await t.patch(`${API}/question-categories/${category.id}`, { name: ` ${newName} ` }, as(moderator)))
        expect(renamed).toEqual({ id: category.id, name: newName, description: 'Kept', question_count: 2 })
        const described = await json<QuestionCategoryBody>(await t.patch(`${API}/question-categories/${category.id}`, { name: newName, description: 'Changed' }, as(moderator)))
        expect(described.description).toBe('Changed')
        const cleared = await json<QuestionCategoryBody>(await t.patch(`${API}/question-categories/${category.id}`, { name: newName, description: null }, as(moderator)))
        expect(cleared.description).toBeNull()
        await expectDetail(await t.patch(`${API}/question-categories/${INT4_MAX}`, { name: unique('Ghost') }, as(moderator)), 404)
        for (const bad of BAD_IDS) expect((await t.patch(`${API}/question-categories/${bad}`, { name: unique('Bad') }, as(moderator))).status).toBe(422)
      })

      it('roles: users may list (401 without a token) but not create, update or delete (403)', async () => {
        const category = await newQuestionCategory()
        await expectDetail(await t.get(`${API}/question-categories/`), 401)
        await expectDetail(await t.post(`${API}/question-categories/`, { name: unique('U') }, as(user)), 403)
        await expectDetail(await t.patch(`${API}/question-categories/${category.id}`, { name: unique('U') }, as(user)), 403)
        await expectDetail(await t.delete(`${API}/question-categories/${category.id}`, as(user)), 403)
        await expectDetail(await t.post(`${API}/question-categories/${category.id}/create-quiz?title=x`, undefined, as(user)), 403)
        expect((await questionCategories()).find((c) => c.id === category.id)).toEqual(category)
      })
    })

    describe('DELETE /api/question-categories/{cat_id}', () => {
      it('move_to: the questions move to that category (counts follow) and the category goes', async () => {
        const from = await newQuestionCategory()
        const to = await newQuestionCategory()
        await makeQuiz({ n: 3, question_category_id: from.id })
        await makeQuiz({ n: 1, question_category_id: to.id })
        const moving = await questionsOf(from.id)
        expect((await t.delete(`${API}/question-categories/${from.id}?move_to=${to.id}`, as(moderator))).status).toBe(204)
        const list = await questionCategories()
        expect(list.some((c) => c.id === from.id)).toBe(false)
        expect(list.find((c) => c.id === to.id)!.question_count).toBe(4)
        expect(await questionsOf(to.id)).toEqual(expect.arrayContaining(moving))
        await expectDetail(await t.delete(`${API}/question-categories/${from.id}`, as(moderator)), 404)
      })

      it('no move_to, or move_to=null: the questions stay in the bank, uncategorized', async () => {
        for (const query of ['', '?move_to=null', '?move_to=']) {
          const category = await newQuestionCategory()
          await makeQuiz({ n: 2, question_category_id: category.id })
          const ids = await questionsOf(category.id)
          expect((await t.delete(`${API}/question-categories/${category.id}${query}`, as(moderator))).status).toBe(204)
          const rows = await t.db.sql<{ id: number; question_category_id: number | null }>`
            select id, question_category_id from quiz.questions where id in (${ids[0]!}, ${ids[1]!})`
          expect(rows).toHaveLength(2)
          for (const row of rows) expect(row.question_category_id).toBeNull()
        }
      })

      it('move_to the category itself: 400; an unknown move_to: 404; either way nothing changes', async () => {
        const category = await newQuestionCategory()
        await makeQuiz({ n: 2, question_category_id: category.id })
        const ids = await questionsOf(category.id)
        await expectDetail(await t.delete(`${API}/question-categories/${category.id}?move_to=${category.id}`, as(moderator)), 400)
        await expectDetail(await t.delete(`${API}/question-categories/${category.id}?move_to=${INT4_MAX}`, as(moderator)), 404)
        expect(await questionsOf(category.id)).toEqual(ids)
        expect((await questionCategories()).some((c) => c.id === category.id)).toBe(true)
        await expectDetail(await t.delete(`${API}/question-categories/${INT4_MAX}?move_to=${category.id}`, as(moderator)), 404)
        for (const bad of BAD_IDS) {
          expect((await t.delete(`${API}/question-categories/${category.id}?move_to=${bad}`, as(moderator))).status).toBe(422)
          expect((await t.delete(`${API}/question-categories/${bad}`, as(moderator))).status).toBe(422)
        }
        expect(await questionsOf(category.id)).toEqual(ids)
      })
    })

    describe('POST /api/question-categories/{cat_id}/create-quiz', () => {
      it('a quiz referencing every question of the category in id order; {id, title, questions_count}; timed by default', async () => {
        const category = await newQuestionCategory()
        const first = await makeQuiz({ n: 2, question_category_id: category.id })
        await makeQuiz({ n: 3, question_category_id: category.id })
        await makeQuiz({ n: 2 }) // not in the category
        const ids = await questionsOf(category.id)
        expect(ids).toHaveLength(5)
        const title = unique('From category')
        const created = await json<{ id: number; title: string; questions_count: number }>(
          await t.post(`${API}/question-categories/${category.id}/create-quiz?title=${encodeURIComponent(` ${title} `)}`, undefined, as(moderator)))
        expect(created).toEqual({ id: created.id, title, questions_count: 5 })
        expect(created.id).not.toBe(first)
        expect(await questionIdsOfQuiz(created.id)).toEqual(ids)
        const quiz = await json<DetailBody>(await t.get(`${API}/quizzes/${created.id}`, as(moderator)))
        expect(quiz).toMatchObject({ title, mode: 'timed', time_limit_minutes: null, questions_count: 5, is_published: 0, category_id: null })
        expect(quiz.questions.map((q) => q.id)).toEqual(ids)
        // referenced, not copied: the bank did not grow
        expect(await questionsOf(category.id)).toEqual(ids)
      })

      it('mode and time_limit_minutes are taken; bad title, mode or time limit: 422', async () => {
        const category = await newQuestionCategory()
        await makeQuiz({ n: 1, question_category_id: category.id })
        const created = await json<{ id: number }>(await t.post(
          `${API}/question-categories/${category.id}/create-quiz?title=Learning&mode=learning&time_limit_minutes=15`, undefined, as(moderator)))
        expect(await json<QuizBody>(await t.get(`${API}/quizzes/${created.id}`, as(moderator)))).toMatchObject({ mode: 'learning', time_limit_minutes: 15 })
        const timed = await json<{ id: number }>(await t.post(
          `${API}/question-categories/${category.id}/create-quiz?title=Timed&mode=timed&time_limit_minutes=null`, undefined, as(moderator)))
        expect((await json<QuizBody>(await t.get(`${API}/quizzes/${timed.id}`, as(moderator)))).time_limit_minutes).toBeNull()
        const url = `${API}/question-categories/${category.id}/create-quiz`
        for (const query of ['', '?title=', `?title=${'x'.repeat(TITLE_MAX + 1)}`, '?title=T&mode=exam', '?title=T&time_limit_minutes=0',
          `?title=T&time_limit_minutes=${TIME_LIMIT_MAX_MINUTES + 1}`, '?title=T&time_limit_minutes=ten']) {
          expect((await t.post(`${url}${query}`, undefined, as(moderator))).status).toBe(422)
        }
        expect((await t.post(`${url}?title=%20%20`, undefined, as(moderator))).status).toBe(422)
      })

      it('an empty category: 400, no quiz made; an unknown one: 404; bad ids: 422', async () => {
        const empty = await newQuestionCategory()
        const quizCount = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.quizzes`)[0]!.n
        const before = await quizCount()
        await expectDetail(await t.post(`${API}/question-categories/${empty.id}/create-quiz?title=Empty`, undefined, as(moderator)), 400)
        await expectDetail(await t.post(`${API}/question-categories/${INT4_MAX}/create-quiz?title=Ghost`, undefined, as(moderator)), 404)
        expect(await quizCount()).toBe(before)
        for (const bad of BAD_IDS) expect((await t.post(`${API}/question-categories/${bad}/create-quiz?title=Bad`, undefined, as(moderator))).status).toBe(422)
      })
    })
  })
}

// The quiz service's staff pages for categories: the categories page (quiz and question categories: add, edit,
// delete with a place for the questions, a quiz made from a question category), the quiz list's category filter and
// column, and the quiz page's category select. Every form works without JavaScript (plain posts, 303 redirects, 422
// re-renders with the messages next to the fields) and htmx requests get the fragment they swap; regular users 403.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''
let seq = 0
const unique = (tag: string) => `${tag} ${++seq}${crypto.randomUUID().slice(0, 6)}`

for (const target of databaseTargets()) {
  describe(`quiz pages: categories [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let modCookie = ''
    let userCookie = ''

    const pageCookie = async (email: string) => {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const mod = (extra: Record<string, string> = {}) => ({ headers: { cookie: modCookie, ...extra } })
    const htmx = (extra: Record<string, string> = {}) => mod({ 'hx-request': 'true', ...extra })
    const getPage = async (path: string, cookie = modCookie) => t.get(path, { headers: { ...html, cookie } })
    const quizCategory = async (name = unique('Quiz cat')) => {
      const res = await t.post(`${API}/categories/`, { name }, { token: moderator.token })
      expect(res.status).toBe(200)
      return (await res.json()) as { id: number; name: string }
    }
    const questionCategory = async (name = unique('Question cat'), description: string | null = null) => {
      const res = await t.post(`${API}/question-categories/`, { name, description }, { token: moderator.token })
      expect(res.status).toBe(200)
      return (await res.json()) as { id: number; name: string }
    }
    const makeQuiz = async (opts: Parameters<typeof makeRegexQuiz>[2] = {}) => (await makeRegexQuiz(t, moderator, opts)).quizId
    const quizCategoryRows = async (name: string) => t.db.sql<{ id: number }>`select id from quiz.quiz_categories where name = ${name}`
    const questionCategoryRow = async (id: number) =>
      (await t.db.sql<{ name: string; description: string | null }>`select name, description from quiz.question_categories where id = ${id}`)[0]
    const questionsOf = async (categoryId: number) =>
      (await t.db.sql<{ id: number }>`select id from quiz.questions where question_category_id = ${categoryId} order by id`).map((r) => r.id)
    const categoryOfQuiz = async (quizId: number) =>
      (await t.db.sql<{ category_id: number | null }>`select category_id from quiz.quizzes where id = ${quizId}`)[0]!.category_id
    const setCategory = (quizId: number, categoryId: number) =>
      t.patch(`${API}/categories/quizzes/${quizId}?category_id=${categoryId}`, undefined, { token: moderator.token })

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'catpagemod')
      const user = await createAccount(t, admin, 'user', 'catpageuser')
      modCookie = await pageCookie(moderator.email)
      userCookie = await pageCookie(user.email)
    })
    afterAll(() => t?.close())

    describe('the categories page', () => {
      it('signed out: sent to sign in; a regular user: 403 on the page and its forms, and nothing changes', async () => {
        const out = await t.get('/quiz/categories', { headers: html })
        expect(out.status).toBe(303)
        expect(out.headers.get('location')).toBe('/quiz/login')
        expect((await getPage('/quiz/categories', userCookie)).status).toBe(403)
        const name = unique('By a user')
        expect((await t.form('/quiz/categories/quiz', { name }, { headers: { cookie: userCookie } })).status).toBe(403)
        expect(await quizCategoryRows(name)).toHaveLength(0)
        const category = await questionCategory()
        expect((await t.form(`/quiz/categories/question/${category.id}/delete`, {}, { headers: { cookie: userCookie } })).status).toBe(403)
        expect(await questionCategoryRow(category.id)).toBeDefined()
      })

      it('lists both kinds with their counts, names escaped, in the house frame; htmx gets the sections', async () => {
        const quizCat = await quizCategory(unique('Cardio "<b>x</b>"'))
        await setCategory(await makeQuiz(), quizCat.id)
        const questionCat = await questionCategory(unique('Drugs <i>y</i>'), 'About <em>doses</em>')
        await makeQuiz({ n: 3, question_category_id: questionCat.id })
        const res = await getPage('/quiz/categories')
        expect(res.status).toBe(200)
        const page = await res.text()
        expect(page).toContain('<html')
        expect(page).toContain('<h1>Categories</h1>')
        expect(page).toContain('<h2 id="quiz-categories-title">Quiz categories</h2>')
        expect(page).toContain('<h2 id="question-categories-title">Question categories</h2>')
        // text is escaped; attribute values (labels, prefilled titles) keep their quotes escaped
        expect(page).not.toContain('<td>Cardio "<b>')
        expect(page).not.toContain('"<b>x</b>" ')
        expect(page).not.toContain('<em>doses</em></span>')
        const quizRow = page.slice(page.indexOf(`id="quiz-category-${quizCat.id}"`))
        expect(quizRow).toContain('<td>Cardio &quot;&lt;b&gt;x&lt;/b&gt;&quot;')
        expect(quizRow).toContain('<td>1</td>')
        const questionRow = page.slice(page.indexOf(`id="qcat-${questionCat.id}"`))
        expect(questionRow).toContain('About &lt;em&gt;doses&lt;/em&gt;')
        expect(questionRow).toContain('<td>3</td>')
        expect(page).toContain('<th scope="col">Questions</th>')
        expect(page).toContain('keeps its quizzes')
        const both = await (await t.get('/quiz/categories', htmx())).text()
        expect(both).toStartWith('<div id="categories">')
        expect(both).not.toContain('<html')
        expect(await (await t.get('/quiz/categories', htmx({ 'hx-target': 'quiz-categories' }))).text()).toStartWith('<section id="quiz-categories"')
        expect(await (await t.get('/quiz/categories', htmx({ 'hx-target': 'question-categories' }))).text()).toStartWith('<section id="question-categories"')
      })

      it('adding a quiz category: a plain post redirects (303); a taken or blank name re-renders with the message at the field (422); htmx swaps the section', async () => {
        const name = unique('Surgery')
        const res = await t.form('/quiz/categories/quiz', { name: ` ${name} ` }, mod())
        expect(res.status).toBe(303)
        const [row] = await quizCategoryRows(name)
        expect(res.headers.get('location')).toBe(`/quiz/categories#quiz-category-${row!.id}`)
        const taken = await t.form('/quiz/categories/quiz', { name: name.toUpperCase() }, mod())
        expect(taken.status).toBe(422)
        const takenPage = await taken.text()
        expect(takenPage).toContain('<html')
        expect(takenPage).toContain('id="quiz-category-name-error"')
        expect(takenPage).toContain('already exists')
        expect(takenPage).toContain(`value="${name.toUpperCase()}"`)
        const fragment = await t.form('/quiz/categories/quiz', { name: unique('Ortho') }, htmx())
        expect(fragment.status).toBe(200)
        const body = await fragment.text()
        expect(body).toStartWith('<section id="quiz-categories"')
        expect(body).toContain('Added the quiz category')
        const blank = await t.form('/quiz/categories/quiz', { name: '   ' }, htmx())
        expect(blank.status).toBe(422)
        const blankBody = await blank.text()
        expect(blankBody).toStartWith('<section id="quiz-categories"')
        expect(blankBody).toContain('Required')
        expect(blankBody).toContain('aria-invalid="true"')
      })

      it('deleting a quiz category: its quizzes stay, uncategorized; plain post 303, htmx the section; unknown: 404', async () => {
        const category = await quizCategory()
        const quiz = await makeQuiz()
        await setCategory(quiz, category.id)
        const page = await (await getPage('/quiz/categories')).text()
        expect(page).toContain(`action="/quiz/categories/quiz/${category.id}/delete"`)
        const res = await t.form(`/quiz/categories/quiz/${category.id}/delete`, {}, mod())
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe('/quiz/categories')
        expect(await quizCategoryRows(category.name)).toHaveLength(0)
        expect(await categoryOfQuiz(quiz)).toBeNull()
        const other = await quizCategory()
        const fragment = await (await t.form(`/quiz/categories/quiz/${other.id}/delete`, {}, htmx())).text()
        expect(fragment).toStartWith('<section id="quiz-categories"')
        expect(fragment).not.toContain(`id="quiz-category-${other.id}"`)
        expect((await t.form(`/quiz/categories/quiz/${other.id}/delete`, {}, mod())).status).toBe(404)
        expect((await t.form('/quiz/categories/quiz/2147483648/delete', {}, mod())).status).toBe(422)
      })

      it('adding a question category with a description; a taken name: 422 with the message; htmx swaps the section', async () => {
        const name = unique('Renal')
        const res = await t.form('/quiz/categories/question', { name, description: ' Kidneys ' }, mod())
        expect(res.status).toBe(303)
        const [row] = await t.db.sql<{ id: number; description: string }>`select id, description from quiz.question_categories where name = ${name}`
        expect(row!.description).toBe('Kidneys')
        expect(res.headers.get('location')).toBe(`/quiz/categories#qcat-${row!.id}`)
        const taken = await t.form('/quiz/categories/question', { name: name.toLowerCase(), description: 'again' }, mod())
        expect(taken.status).toBe(422)
        const takenPage = await taken.text()
        expect(takenPage).toContain('id="question-category-name-error"')
        expect(takenPage).toContain('already exists')
        const fragment = await t.form('/quiz/categories/question', { name: unique('Hepatic'), description: '' }, htmx())
        expect(await fragment.text()).toStartWith('<section id="question-categories"')
        const bad = await t.form('/quiz/categories/question', { name: '' }, htmx())
        expect(bad.status).toBe(422)
        expect(await bad.text()).toContain('Required')
      })

      it('click-to-edit a question category: the edit row (fragment or page), save (303 or the section), a clash: 422 in the row, cancel', async () => {
        const category = await questionCategory(unique('Editable'), 'Before')
        const clash = await questionCategory()
        const editRow = await (await t.get(`/quiz/categories/question/${category.id}/edit`, htmx())).text()
        expect(editRow).toStartWith(`<tr id="qcat-${category.id}"`)
        expect(editRow).toContain(`action="/quiz/categories/question/${category.id}"`)
        expect(editRow).toContain('>Before</textarea>')
        const editPage = await (await getPage(`/quiz/categories/question/${category.id}/edit`)).text()
        expect(editPage).toContain('<html')
        expect(editPage).toContain(`id="qcat-${category.id}-name"`)

        const newName = unique('Edited')
        const plain = await t.form(`/quiz/categories/question/${category.id}`, { name: newName, description: 'After' }, mod())
        expect(plain.status).toBe(303)
        expect(plain.headers.get('location')).toBe(`/quiz/categories#qcat-${category.id}`)
        expect(await questionCategoryRow(category.id)).toEqual({ name: newName, description: 'After' })

        const saved = await t.form(`/quiz/categories/question/${category.id}`, { name: newName, description: '' }, htmx())
        const savedBody = await saved.text()
        expect(savedBody).toStartWith('<section id="question-categories"')
        expect(savedBody).toContain('Saved the question category')
        expect((await questionCategoryRow(category.id))!.description).toBeNull()

        const refused = await t.form(`/quiz/categories/question/${category.id}`, { name: clash.name.toUpperCase(), description: 'x' }, htmx())
        expect(refused.status).toBe(422)
        const refusedBody = await refused.text()
        expect(refusedBody).toStartWith(`<tr id="qcat-${category.id}"`)
        expect(refusedBody).toContain('already exists')
        const refusedPage = await t.form(`/quiz/categories/question/${category.id}`, { name: '', description: 'x' }, mod())
        expect(refusedPage.status).toBe(422)
        expect(await refusedPage.text()).toContain('<html')
        expect((await questionCategoryRow(category.id))!.name).toBe(newName)

        const row = await (await t.get(`/quiz/categories/question/${category.id}`, htmx())).text()
        expect(row).toStartWith(`<tr id="qcat-${category.id}"`)
        expect(row).toContain(`/quiz/categories/question/${category.id}/edit`)
        const back = await getPage(`/quiz/categories/question/${category.id}`)
        expect(back.status).toBe(303)
        expect((await getPage('/quiz/categories/question/2147483647/edit')).status).toBe(404)
        expect((await getPage('/quiz/categories/question/2147483648/edit')).status).toBe(422)
      })

      it('deleting a question category moves its questions to the chosen one, or leaves them uncategorized; moving to itself is refused (422)', async () => {
        const from = await questionCategory()
        const to = await questionCategory()
        await makeQuiz({ n: 2, question_category_id: from.id })
        const moving = await questionsOf(from.id)
        const page = await (await getPage('/quiz/categories')).text()
        const row = page.slice(page.indexOf(`id="qcat-${from.id}"`), page.indexOf('</tr>', page.indexOf(`id="qcat-${from.id}"`)))
        expect(row).toContain(`<label for="qcat-${from.id}-move">`)
        expect(row).toContain(`<option value="${to.id}">`)
        expect(row).not.toContain(`<option value="${from.id}">`)

        const self = await t.form(`/quiz/categories/question/${from.id}/delete`, { move_to: String(from.id) }, htmx())
        expect(self.status).toBe(422)
        expect(await self.text()).toStartWith('<section id="question-categories"')
        expect(await questionsOf(from.id)).toEqual(moving)

        const res = await t.form(`/quiz/categories/question/${from.id}/delete`, { move_to: String(to.id) }, mod())
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe('/quiz/categories')
        expect(await questionCategoryRow(from.id)).toBeUndefined()
        expect(await questionsOf(to.id)).toEqual(moving)

        const fragment = await t.form(`/quiz/categories/question/${to.id}/delete`, { move_to: '' }, htmx())
        expect(fragment.status).toBe(200)
        expect(await fragment.text()).toStartWith('<section id="question-categories"')
        const rows = await t.db.sql<{ question_category_id: number | null }>`
          select question_category_id from quiz.questions where id in (${moving[0]!}, ${moving[1]!})`
        expect(rows.map((r) => r.question_category_id)).toEqual([null, null])
        expect((await t.form(`/quiz/categories/question/${to.id}/delete`, {}, mod())).status).toBe(404)
      })

      it('making a quiz from a question category: a plain post lands on the new quiz\'s page; errors re-render at the fields (422)', async () => {
        const category = await questionCategory()
        await makeQuiz({ n: 3, question_category_id: category.id })
        const ids = await questionsOf(category.id)
        const page = await (await getPage('/quiz/categories')).text()
        expect(page).toContain(`action="/quiz/categories/question/${category.id}/create-quiz"`)
        expect(page).toContain('Make a quiz from this category')

        const title = unique('Made here')
        const res = await t.form(`/quiz/categories/question/${category.id}/create-quiz`, { title, mode: 'learning', time_limit_minutes: '' }, mod())
        expect(res.status).toBe(303)
        const location = res.headers.get('location')!
        expect(location).toMatch(/^\/quiz\/quizzes\/\d+$/)
        const quizId = Number(location.split('/').pop())
        const [quiz] = await t.db.sql<{ title: string; mode: string; time_limit_minutes: number | null }>`
          select title, mode, time_limit_minutes from quiz.quizzes where id = ${quizId}`
        expect(quiz).toEqual({ title, mode: 'learning', time_limit_minutes: null })
        const linked = await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`
        expect(linked.map((r) => r.question_id)).toEqual(ids)
        expect((await getPage(location)).status).toBe(200)

        const timed = await t.form(`/quiz/categories/question/${category.id}/create-quiz`, { title: 'Timed one', mode: 'timed', time_limit_minutes: '25' }, mod())
        const timedId = Number(timed.headers.get('location')!.split('/').pop())
        expect((await t.db.sql<{ time_limit_minutes: number }>`select time_limit_minutes from quiz.quizzes where id = ${timedId}`)[0]!.time_limit_minutes).toBe(25)

        const bad = await t.form(`/quiz/categories/question/${category.id}/create-quiz`, { title: ' ', mode: 'exam', time_limit_minutes: 'soon' }, mod())
        expect(bad.status).toBe(422)
        const badPage = await bad.text()
        expect(badPage).toContain('<html')
        expect(badPage).toContain(`id="qcat-${category.id}-title-error"`)
        expect(badPage).toContain(`id="qcat-${category.id}-mode-error"`)
        expect(badPage).toContain(`id="qcat-${category.id}-time-error"`)
        expect(badPage).toContain('value="soon"')

        const empty = await questionCategory()
        const none = await t.form(`/quiz/categories/question/${empty.id}/create-quiz`, { title: 'Nothing', mode: 'timed' }, mod())
        expect(none.status).toBe(422)
        expect(await none.text()).toContain('no questions')
        expect((await t.form('/quiz/categories/question/2147483647/create-quiz', { title: 'Ghost', mode: 'timed' }, mod())).status).toBe(404)
        // a reload of a boosted post's address lands on the page
        expect((await getPage(`/quiz/categories/question/${category.id}/create-quiz`)).status).toBe(303)
      })

      it('cookie-authenticated posts from another origin are refused and change nothing', async () => {
        const name = unique('Cross')
        const res = await t.form('/quiz/categories/quiz', { name }, { headers: { cookie: modCookie, origin: 'https://evil.example' } })
        expect(res.status).toBe(403)
        expect(await quizCategoryRows(name)).toHaveLength(0)
      })
    })

    describe('the quiz list\'s category filter and the quiz page\'s category', () => {
      it('the list has a category column and a GET filter form; the filter keeps one category (or none); htmx gets the table', async () => {
        const category = await quizCategory(unique('Filter <me>'))
        const inside = await makeQuiz({ title: unique('Inside quiz') })
        const outside = await makeQuiz({ title: unique('Outside quiz') })
        await setCategory(inside, category.id)
        const all = await (await getPage('/quiz/quizzes')).text()
        expect(all).toContain('<form id="quiz-filter"')
        expect(all).toContain('method="get"')
        expect(all).toContain('<label for="filter-category">')
        expect(all).toContain('<th scope="col">Category</th>')
        const insideRow = all.slice(all.indexOf(`id="quiz-${inside}"`), all.indexOf('</tr>', all.indexOf(`id="quiz-${inside}"`)))
        expect(insideRow).toContain('Filter &lt;me&gt;')
        expect(all).toContain(`id="quiz-${outside}"`)

        const filtered = await (await getPage(`/quiz/quizzes?category_id=${category.id}`)).text()
        expect(filtered).toContain(`id="quiz-${inside}"`)
        expect(filtered).not.toContain(`id="quiz-${outside}"`)
        expect(filtered).toContain(`<option value="${category.id}" selected>`)
        const none = await (await getPage('/quiz/quizzes?category_id=none')).text()
        expect(none).toContain(`id="quiz-${outside}"`)
        expect(none).not.toContain(`id="quiz-${inside}"`)
        const fragment = await (await t.get(`/quiz/quizzes?category_id=${category.id}`, htmx())).text()
        expect(fragment).toStartWith('<div id="quizzes">')
        expect(fragment).toContain(`id="quiz-${inside}"`)
        expect(fragment).not.toContain(`id="quiz-${outside}"`)
        expect((await getPage('/quiz/quizzes?category_id=abc')).status).toBe(422)

        // a list action keeps the filter: the htmx table and the redirect
        const published = await (await t.form(`/quiz/quizzes/${inside}/publish`, { published: '1', back: 'list', category_id: String(category.id) },
          htmx({ 'hx-target': 'quizzes' }))).text()
        expect(published).toContain(`id="quiz-${inside}"`)
        expect(published).not.toContain(`id="quiz-${outside}"`)
        const plain = await t.form(`/quiz/quizzes/${inside}/publish`, { published: '0', back: 'list', category_id: String(category.id) }, mod())
        expect(plain.headers.get('location')).toBe(`/quiz/quizzes?category_id=${category.id}`)
      })

      it('a regular user filters the published quizzes too', async () => {
        const category = await quizCategory()
        const shown = await makeQuiz({ title: unique('Shown to users') })
        const other = await makeQuiz({ title: unique('Other published') })
        for (const q of [shown, other]) await t.patch(`${API}/quizzes/${q}/publish`, undefined, { token: moderator.token })
        await setCategory(shown, category.id)
        const page = await (await getPage(`/quiz/quizzes?category_id=${category.id}`, userCookie)).text()
        expect(page).toContain('<form id="quiz-filter"')
        const [shownTitle, otherTitle] = await Promise.all([shown, other].map(async (id) =>
          (await t.db.sql<{ title: string }>`select title from quiz.quizzes where id = ${id}`)[0]!.title))
        expect(page).toContain(shownTitle!)
        expect(page).not.toContain(otherTitle!)
      })

      it('the quiz page sets the category: plain post 303, htmx the form; a category gone meanwhile: 422 with the message; users: 403', async () => {
        const category = await quizCategory(unique('Chosen'))
        const quiz = await makeQuiz()
        const page = await (await getPage(`/quiz/quizzes/${quiz}`)).text()
        expect(page).toContain('<form id="quiz-category"')
        expect(page).toContain('<label for="quiz-category-select">')
        expect(page).toContain(`<option value="${category.id}">`)
        const res = await t.form(`/quiz/quizzes/${quiz}/category`, { category_id: String(category.id) }, mod())
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe(`/quiz/quizzes/${quiz}`)
        expect(await categoryOfQuiz(quiz)).toBe(category.id)
        const after = await (await getPage(`/quiz/quizzes/${quiz}`)).text()
        expect(after).toContain(`<option value="${category.id}" selected>`)
        expect(after).toContain('<dt>Category</dt>')

        const fragment = await t.form(`/quiz/quizzes/${quiz}/category`, { category_id: '' }, htmx())
        expect(fragment.status).toBe(200)
        const body = await fragment.text()
        expect(body).toStartWith('<form id="quiz-category"')
        expect(body).toContain('Saved.')
        expect(await categoryOfQuiz(quiz)).toBeNull()

        const gone = await t.form(`/quiz/quizzes/${quiz}/category`, { category_id: '2147483647' }, htmx())
        expect(gone.status).toBe(422)
        expect(await gone.text()).toContain('no longer exists')
        const forged = await t.form(`/quiz/quizzes/${quiz}/category`, { category_id: 'abc' }, mod())
        expect(forged.status).toBe(422)
        expect(await forged.text()).toContain('<html')
        expect(await categoryOfQuiz(quiz)).toBeNull()

        expect((await t.form(`/quiz/quizzes/${quiz}/category`, { category_id: String(category.id) }, { headers: { cookie: userCookie } })).status).toBe(403)
        expect(await categoryOfQuiz(quiz)).toBeNull()
        expect((await t.form('/quiz/quizzes/2147483647/category', { category_id: '' }, mod())).status).toBe(404)
        // a reload of a boosted post's address lands on the quiz page
        expect((await getPage(`/quiz/quizzes/${quiz}/category`)).headers.get('location')).toBe(`/quiz/quizzes/${quiz}`)
      })
    })
  })
}

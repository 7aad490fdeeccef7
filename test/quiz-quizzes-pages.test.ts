// The quiz service's staff pages for quizzes: every form works without JavaScript (plain posts, 303 redirects, 422
// re-renders) and htmx requests get the fragment they swap; regular users get a read-only list of published quizzes.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

let seq = 0
function questionsText(tag: string, n: number): string {
  return Array.from({ length: n }, (_, k) => {
    const i = k + 1
    return [`${i}. Is <b>${tag}</b> question ${i} & true?`, `A) Alpha ${i}`, `B) Beta ${i}`, `C) Gamma ${i}`, 'Answer: B', `Explanation: Because ${i}.`].join('\n')
  }).join('\n\n')
}

for (const target of databaseTargets()) {
  describe(`quiz pages: quizzes [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let modCookie = ''
    let userCookie = ''

    async function pageCookie(email: string) {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }

    async function makeQuiz(title: string, n = 3): Promise<number> {
      const tag = `t${++seq}`
      const [doc] = await t.db.sql<{ id: number }>`
        insert into quiz.documents (user_id, filename, original_filename, status, total_pages, storage_key, size_bytes)
        values (${moderator.id}, 'test.pdf', 'q.pdf', 'ready', 2, 'test/none.pdf', 0) returning id`
      await t.db.sql`insert into quiz.document_pages (document_id, page_number, text) values (${doc!.id}, 1, ${questionsText(tag, n)}), (${doc!.id}, 2, '')`
      const [section] = await t.db.sql<{ id: number }>`
        insert into quiz.sections (document_id, name, start_page, end_page) values (${doc!.id}, 'All', 1, 2) returning id`
      const res = await t.post(`${API}/quizzes/`, { section_id: section!.id, title, mode: 'learning', extraction_mode: 'regex' }, { token: moderator.token })
      const { job_id } = (await res.json()) as { job_id: string }
      const job = (await (await t.get(`${API}/quizzes/job/${job_id}`, { token: moderator.token })).json()) as { quiz_id: number }
      return job.quiz_id
    }
    const questionIds = async (quizId: number) =>
      (await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`).map((r) => r.question_id)
    const quizRow = async (id: number) =>
      (await t.db.sql<{ title: string; is_published: boolean; in_trash: boolean }>`
        select title, is_published, deleted_at is not null as in_trash from quiz.quizzes where id = ${id}`)[0]
    const mod = (extra: Record<string, string> = {}) => ({ headers: { cookie: modCookie, ...extra } })
    const htmx = (extra: Record<string, string> = {}) => mod({ 'hx-request': 'true', ...extra })

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'pagemod')
      const user = await createAccount(t, admin, 'user', 'pageuser')
      modCookie = await pageCookie(moderator.email)
      userCookie = await pageCookie(user.email)
    })
    afterAll(() => t?.close())

    it('signed out, the quizzes page sends the browser to sign in', async () => {
      const res = await t.get('/quiz/quizzes', { headers: html })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/login')
    })

    it('a moderator\'s list: titles escaped, question counts, published flag, links; htmx gets the table fragment', async () => {
      const id = await makeQuiz('Cardio <script>alert(1)</script>', 3)
      const res = await t.get('/quiz/quizzes', { headers: { ...html, cookie: modCookie } })
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(page).toContain('<html')
      expect(page).toContain(`href="/quiz/quizzes/${id}">Cardio &lt;script&gt;alert(1)&lt;/script&gt;</a>`)
      expect(page).not.toContain('<script>alert(1)')
      expect(page).toContain('<a href="/quiz/quizzes">Quizzes</a>')
      expect(page).toContain('href="/quiz/quizzes/trash"')
      const row = page.slice(page.indexOf(`id="quiz-${id}"`))
      expect(row).toContain('<td>3</td>')
      expect(row).toContain('<td>No</td>')
      expect(row).toContain(`action="/quiz/quizzes/${id}/publish"`)
      const fragment = await (await t.get('/quiz/quizzes', htmx())).text()
      expect(fragment).toStartWith('<div id="quizzes">')
      expect(fragment).not.toContain('<html')
    })

    it('a user gets the published quizzes read only, no staff link, and 403 on the staff pages', async () => {
      const hidden = await makeQuiz('Unpublished for users')
      const shown = await makeQuiz('Published for users')
      await t.patch(`${API}/quizzes/${shown}/publish`, undefined, { token: moderator.token })
      const page = await (await t.get('/quiz/quizzes', { headers: { ...html, cookie: userCookie } })).text()
      expect(page).toContain('Published for users')
      expect(page).not.toContain('Unpublished for users')
      expect(page).not.toContain('/publish"')
      // the nav names the quizzes for everyone; the staff links (trash, categories) are the moderators'
      expect(page).not.toContain('href="/quiz/quizzes/trash"')
      expect(page).not.toContain('href="/quiz/categories"')
      for (const path of [`/quiz/quizzes/${hidden}`, '/quiz/quizzes/trash']) {
        expect((await t.get(path, { headers: { ...html, cookie: userCookie } })).status).toBe(403)
      }
      const post = await t.form(`/quiz/quizzes/${shown}/trash`, {}, { headers: { cookie: userCookie } })
      expect(post.status).toBe(403)
      expect((await quizRow(shown))!.in_trash).toBe(false)
    })

    it('publish and unpublish: a plain post redirects (303) back; htmx gets the updated table', async () => {
      const id = await makeQuiz('Publish me')
      const res = await t.form(`/quiz/quizzes/${id}/publish`, { published: '1', back: 'list' }, mod())
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/quizzes')
      expect((await quizRow(id))!.is_published).toBe(true)
      const fragment = await t.form(`/quiz/quizzes/${id}/publish`, { published: '0', back: 'list' }, htmx({ 'hx-target': 'quizzes' }))
      expect(fragment.status).toBe(200)
      const body = await fragment.text()
      expect(body).toStartWith('<div id="quizzes">')
      expect(body.slice(body.indexOf(`id="quiz-${id}"`))).toContain('>Publish</button>')
      expect((await quizRow(id))!.is_published).toBe(false)
      const fromQuiz = await t.form(`/quiz/quizzes/${id}/publish`, { published: '1', back: 'quiz' }, mod())
      expect(fromQuiz.headers.get('location')).toBe(`/quiz/quizzes/${id}`)
      // a reload of a boosted post's address lands on the quiz page
      expect((await t.get(`/quiz/quizzes/${id}/publish`, { headers: { ...html, cookie: modCookie } })).headers.get('location')).toBe(`/quiz/quizzes/${id}`)
    })

    it('trash, restore and delete permanently, with and without htmx; permanent deletion outside the trash is refused', async () => {
      const id = await makeQuiz('Trash me', 2)
      const questions = await questionIds(id)
      const refused = await t.form(`/quiz/quizzes/${id}/delete-permanently`, {}, mod())
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain('trash')
      const trashed = await t.form(`/quiz/quizzes/${id}/trash`, { back: 'list' }, mod())
      expect(trashed.status).toBe(303)
      expect((await quizRow(id))!.in_trash).toBe(true)
      expect(await (await t.get('/quiz/quizzes', { headers: { ...html, cookie: modCookie } })).text()).not.toContain('Trash me')
      const trashPage = await (await t.get('/quiz/quizzes/trash', { headers: { ...html, cookie: modCookie } })).text()
      expect(trashPage).toContain('Trash me')
      expect(trashPage).toContain('Delete permanently')
      expect(trashPage).toContain(`action="/quiz/quizzes/${id}/restore"`)
      expect(await (await t.get('/quiz/quizzes/trash', htmx())).text()).toStartWith('<div id="trash">')

      const restored = await t.form(`/quiz/quizzes/${id}/restore`, { back: 'trash' }, htmx({ 'hx-target': 'trash' }))
      const fragment = await restored.text()
      expect(fragment).toStartWith('<div id="trash">')
      expect(fragment).not.toContain('Trash me')
      expect((await quizRow(id))!.in_trash).toBe(false)

      await t.form(`/quiz/quizzes/${id}/trash`, { back: 'list' }, htmx({ 'hx-target': 'quizzes' }))
      const gone = await t.form(`/quiz/quizzes/${id}/delete-permanently`, { back: 'trash' }, mod())
      expect(gone.status).toBe(303)
      expect(gone.headers.get('location')).toBe('/quiz/quizzes/trash')
      expect(await quizRow(id)).toBeUndefined()
      expect(await t.db.sql`select id from quiz.questions where id in (${questions[0]!}, ${questions[1]!})`).toHaveLength(2)
    })

    it('rename: plain post redirects to the quiz page; a blank title re-renders with 422; htmx swaps the form', async () => {
      const id = await makeQuiz('Old name')
      const res = await t.form(`/quiz/quizzes/${id}/rename`, { title: 'New <name>' }, mod())
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/quiz/quizzes/${id}`)
      const page = await (await t.get(`/quiz/quizzes/${id}`, { headers: { ...html, cookie: modCookie } })).text()
      expect(page).toContain('<h1>New &lt;name&gt;</h1>')
      const blank = await t.form(`/quiz/quizzes/${id}/rename`, { title: '   ' }, mod())
      expect(blank.status).toBe(422)
      expect(await blank.text()).toContain('<html')
      const fragment = await t.form(`/quiz/quizzes/${id}/rename`, { title: 'Newer' }, htmx())
      const body = await fragment.text()
      expect(body).toStartWith('<form id="rename"')
      expect(body).toContain('Saved.')
      expect((await quizRow(id))!.title).toBe('Newer')
      const bad = await t.form(`/quiz/quizzes/${id}/rename`, { title: '' }, htmx())
      expect(bad.status).toBe(422)
      expect(await bad.text()).toStartWith('<form id="rename"')
    })

    it('the quiz page lists its questions escaped; click-to-edit: the edit form (fragment or page) says the change is shared', async () => {
      const id = await makeQuiz('Edit me', 2)
      const [first] = await questionIds(id)
      const page = await (await t.get(`/quiz/quizzes/${id}`, { headers: { ...html, cookie: modCookie } })).text()
      expect(page).toContain('Is &lt;b&gt;')
      expect(page).toContain(`id="question-${first}"`)
      expect(page).toContain(`href="/quiz/quizzes/${id}/questions/${first}/edit"`)
      const form = await (await t.get(`/quiz/quizzes/${id}/questions/${first}/edit`, htmx())).text()
      expect(form).toStartWith(`<li id="question-${first}"`)
      expect(form).toContain('applies to every quiz that uses it')
      expect(form).toContain(`action="/quiz/quizzes/${id}/questions/${first}"`)
      const fullEdit = await (await t.get(`/quiz/quizzes/${id}/questions/${first}/edit`, { headers: { ...html, cookie: modCookie } })).text()
      expect(fullEdit).toContain('<html')
      expect(fullEdit).toContain('applies to every quiz that uses it')
      const row = await (await t.get(`/quiz/quizzes/${id}/questions/${first}`, htmx())).text()
      expect(row).toStartWith(`<li id="question-${first}"`)
      const back = await t.get(`/quiz/quizzes/${id}/questions/${first}`, { headers: { ...html, cookie: modCookie } })
      expect(back.status).toBe(303)
      expect((await t.get(`/quiz/quizzes/${id}`, htmx())).status).toBe(200)
    })

    it('saving a question: plain post 303, htmx the row; the edit shows in another quiz using it; a wrong answer is 422 with the message', async () => {
      const a = await makeQuiz('Shared A', 2)
      const [first, second] = await questionIds(a)
      const [b] = await t.db.sql<{ id: number }>`insert into quiz.quizzes (user_id, title, mode) values (${moderator.id}, 'Shared B', 'learning') returning id`
      await t.db.sql`insert into quiz.quiz_questions (quiz_id, question_id, position) values (${b!.id}, ${first!}, 1)`

      const fields = { question_text: 'Edited <i>stem</i>', options: 'One\r\nTwo\n\nThree', correct_answer: 'Two', explanation: 'Why', question_type: 'multiple_choice' }
      const plain = await t.form(`/quiz/quizzes/${a}/questions/${first}`, fields, mod())
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe(`/quiz/quizzes/${a}#question-${first}`)
      const viaB = (await (await t.get(`${API}/quizzes/${b!.id}`, { token: moderator.token })).json()) as { questions: Array<{ question_text: string; options: string[]; correct_answer: string }> }
      expect(viaB.questions[0]).toMatchObject({ question_text: 'Edited <i>stem</i>', options: ['One', 'Two', 'Three'], correct_answer: 'Two' })

      const row = await t.form(`/quiz/quizzes/${a}/questions/${first}`, { ...fields, explanation: 'Because' }, htmx())
      const rowBody = await row.text()
      expect(row.status).toBe(200)
      expect(rowBody).toStartWith(`<li id="question-${first}"`)
      expect(rowBody).toContain('Edited &lt;i&gt;stem&lt;/i&gt;')
      expect(rowBody).toContain('Saved.')

      const wrong = await t.form(`/quiz/quizzes/${a}/questions/${second}`, { ...fields, correct_answer: 'Four' }, htmx())
      expect(wrong.status).toBe(422)
      const wrongBody = await wrong.text()
      expect(wrongBody).toContain('Must equal one of the options')
      expect(wrongBody).toContain('value="Four"')
      const wrongPage = await t.form(`/quiz/quizzes/${a}/questions/${second}`, { ...fields, options: 'Only' }, mod())
      expect(wrongPage.status).toBe(422)
      expect(await wrongPage.text()).toContain('<html')
      const [unchanged] = await t.db.sql<{ question_text: string }>`select question_text from quiz.questions where id = ${second!}`
      expect(unchanged!.question_text).not.toContain('Edited')
    })

    it('removing a question: htmx gets the renumbered list, a plain post redirects; the removal rule applies', async () => {
      const a = await makeQuiz('Remove from me', 3)
      const [first, second, third] = await questionIds(a)
      const fragment = await t.form(`/quiz/quizzes/${a}/questions/${second}/remove`, {}, htmx())
      const body = await fragment.text()
      expect(body).toStartWith('<div id="questions">')
      expect(body).not.toContain(`id="question-${second}"`)
      expect(await t.db.sql`select id from quiz.questions where id = ${second!}`).toHaveLength(0)
      const plain = await t.form(`/quiz/quizzes/${a}/questions/${first}/remove`, {}, mod())
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe(`/quiz/quizzes/${a}`)
      expect(await t.db.sql`select question_id, position from quiz.quiz_questions where quiz_id = ${a}`).toEqual([{ question_id: third!, position: 1 }])
    })

    it('cookie-authenticated posts from another origin are refused and change nothing', async () => {
      const id = await makeQuiz('Cross origin')
      const res = await t.form(`/quiz/quizzes/${id}/trash`, {}, { headers: { cookie: modCookie, origin: 'https://evil.example' } })
      expect(res.status).toBe(403)
      expect((await quizRow(id))!.in_trash).toBe(false)
    })

    it('unknown quiz or question: 404 page; an id out of range: 422, not 500', async () => {
      expect((await t.get('/quiz/quizzes/2147483647', { headers: { ...html, cookie: modCookie } })).status).toBe(404)
      expect((await t.get('/quiz/quizzes/2147483648', { headers: { ...html, cookie: modCookie } })).status).toBe(422)
      const id = await makeQuiz('Missing question')
      expect((await t.form(`/quiz/quizzes/${id}/questions/2147483647`, { question_text: 'x', options: 'a\nb', correct_answer: 'a' }, mod())).status).toBe(404)
    })
  })
}

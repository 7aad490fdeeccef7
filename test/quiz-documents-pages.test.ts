// The quiz service's staff pages for documents and extraction: upload through the page form (a real PDF), the
// document's status and steps (polling only while processing), sections, "make a quiz" (regex mode, no AI), the job
// page (polling only while the job works, cancel), delete. Every form works without JavaScript (plain posts, 303
// redirects, refusals re-rendered with their status) and htmx requests get the fragment they swap.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { MESSAGES, MULTIPART_OVERHEAD_BYTES } from '../plugins/quiz/services/documents'
import { POLL_TRIGGER } from '../plugins/quiz/views/documents'
import { sizeInWords } from '../views/layout'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { makePdf } from './support/pdf'
import { API, createAccount, PASSWORD, questionsText, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

// Small, so the limit is reached with small files (the page and the API share it).
const MAX_UPLOAD_SIZE = 200_000
const POLLING = `hx-trigger="${POLL_TRIGGER}"`
const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

let seq = 0
const questionPages = (tag: string) => [questionsText(tag, 3).split('\n'), ['The end of the questions.']]

for (const target of databaseTargets()) {
  describe(`quiz pages: documents and extraction [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account
    let otherModerator: Account
    let modCookie = ''
    let otherCookie = ''
    let userCookie = ''

    async function pageCookie(email: string) {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const get = (path: string, cookie = modCookie, extra: Record<string, string> = {}) => t.get(path, { headers: { ...html, cookie, ...extra } })
    const htmx = (path: string, cookie = modCookie) => get(path, cookie, { 'hx-request': 'true' })
    const post = (path: string, fields: Record<string, string>, cookie = modCookie, extra: Record<string, string> = {}) =>
      t.form(path, fields, { headers: { cookie, ...extra } })

    /** The page's upload form, as a browser sends it (multipart, field `file`). */
    function uploadForm(bytes: Uint8Array<ArrayBuffer>, name: string, opts: { cookie?: string; headers?: Record<string, string> } = {}) {
      const form = new FormData()
      form.append('file', new File([bytes], name, { type: 'application/pdf' }))
      return t.request('/quiz/documents/upload', { method: 'POST', body: form, headers: { ...html, cookie: opts.cookie ?? modCookie, ...opts.headers } })
    }
    const documentCount = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.documents`)[0]!.n

    /** Uploads a questions PDF through the page; returns the new document's id (the redirect names it). */
    async function uploadQuestions(name = 'questions.pdf'): Promise<number> {
      const res = await uploadForm(await makePdf(questionPages(`d${++seq}`)), name)
      expect(res.status).toBe(303)
      const m = /^\/quiz\/documents\/(\d+)\?done=uploaded$/.exec(res.headers.get('location') ?? '')
      expect(m).not.toBeNull()
      return Number(m![1])
    }
    async function addSection(documentId: number, name = 'All', start = '1', end = '2'): Promise<number> {
      const res = await post(`/quiz/documents/${documentId}/sections`, { name, start_page: start, end_page: end })
      expect(res.status).toBe(303)
      const [row] = await t.db.sql<{ id: number }>`select id from quiz.sections where document_id = ${documentId} and name = ${name}`
      return row!.id
    }
    const jobIdOf = (res: Response) => {
      const m = /^\/quiz\/documents\/jobs\/([0-9a-f-]{36})$/.exec(res.headers.get('location') ?? res.headers.get('hx-redirect') ?? '')
      expect(m).not.toBeNull()
      return m![1]!
    }
    async function insertJob(owner: Account, status: 'pending' | 'running' | 'failed', title: string, sectionId: number, error: string | null = null): Promise<string> {
      const id = crypto.randomUUID()
      const payload = { section_id: sectionId, title, mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex' }
      const steps = [{ message: 'Reading pages 1-2 of section "All"', at: new Date().toISOString() }]
      // Objects go in as JSON on both drivers (as the services pass them); the array rides in one.
      await t.db.sql`
        insert into core.jobs (id, kind, service, owner_id, title, status, payload, steps, error)
        values (${id}, 'quiz.extract', 'quiz', ${owner.id}, ${title}, ${status}, ${payload}::jsonb, ${{ value: steps }}::jsonb -> 'value', ${error})`
      return id
    }

    beforeAll(async () => {
      t = await startTestApp({ target, env: { MAX_UPLOAD_SIZE: String(MAX_UPLOAD_SIZE) } })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'docmod')
      otherModerator = await createAccount(t, admin, 'moderator', 'docmod2')
      const user = await createAccount(t, admin, 'user', 'docuser')
      modCookie = await pageCookie(moderator.email)
      otherCookie = await pageCookie(otherModerator.email)
      userCookie = await pageCookie(user.email)
    })
    afterAll(() => t?.close())

    it('signed out, every page sends the browser to sign in', async () => {
      for (const path of ['/quiz/documents', '/quiz/documents/1', `/quiz/documents/jobs/${crypto.randomUUID()}`]) {
        const res = await t.get(path, { headers: html })
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe('/quiz/login')
      }
    })

    it('a regular user gets 403 on every page and form, and nothing is stored', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id)
      const { jobId } = { jobId: await insertJob(moderator, 'pending', 'Not for users', sectionId) }
      for (const path of ['/quiz/documents', `/quiz/documents/${id}`, `/quiz/documents/${id}/delete`, `/quiz/documents/jobs/${jobId}`]) {
        const res = await get(path, userCookie)
        expect(res.status).toBe(403)
        expect(await res.text()).toContain('Not allowed')
      }
      const before = await documentCount()
      expect((await uploadForm(await makePdf([['x']]), 'user.pdf', { cookie: userCookie })).status).toBe(403)
      expect(await documentCount()).toBe(before)
      expect((await post(`/quiz/documents/${id}/delete`, {}, userCookie)).status).toBe(403)
      expect((await post(`/quiz/documents/${id}/sections`, { name: 'X', start_page: '1', end_page: '2' }, userCookie)).status).toBe(403)
      expect((await post(`/quiz/documents/jobs/${jobId}/cancel`, {}, userCookie)).status).toBe(403)
      expect(await t.db.sql`select id from quiz.documents where id = ${id}`).toHaveLength(1)
      expect(await t.db.sql`select id from quiz.sections where document_id = ${id}`).toHaveLength(1)
      expect((await t.db.sql<{ status: string }>`select status from core.jobs where id = ${jobId}`)[0]!.status).toBe('pending')
    })

    it('the documents page: the upload form (PDF only, the limit in words), the table escaped, recent jobs; htmx gets the table', async () => {
      const id = await uploadQuestions('Cardio <b>notes.pdf')
      const jobId = await insertJob(moderator, 'pending', 'Listed <job>', await addSection(id))
      const res = await get('/quiz/documents')
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(page).toContain('<h1>Documents</h1>')
      expect(page).toContain('<a href="/quiz/documents">Documents</a>')
      expect(page).toContain('enctype="multipart/form-data"')
      expect(page).toContain('action="/quiz/documents/upload"')
      expect(page).toContain('accept="application/pdf"')
      expect(page).toContain(`at most ${sizeInWords(MAX_UPLOAD_SIZE)}`)
      expect(sizeInWords(MAX_UPLOAD_SIZE)).toBe('195.3 KB')
      expect(sizeInWords(50 * 1024 * 1024)).toBe('50 MB')
      expect(page).toContain('<label for="file">')
      const row = page.slice(page.indexOf(`id="document-${id}"`))
      expect(row).toContain(`href="/quiz/documents/${id}">Cardio &lt;b&gt;notes.pdf</a>`)
      expect(row).toContain('<td>Ready</td>')
      expect(row).toContain('<td>2</td>')
      expect(row).toContain(`action="/quiz/documents/${id}/delete"`)
      expect(page).not.toContain('Cardio <b>notes.pdf</a>')
      expect(page).toContain('Your recent extraction jobs')
      const jobRow = page.slice(page.indexOf(`href="/quiz/documents/jobs/${jobId}"`))
      expect(jobRow).toContain('>Listed &lt;job&gt;</a>')
      expect(jobRow).toContain('<td>Waiting to start</td>')
      expect(jobRow).toContain('Reading pages 1-2 of section &quot;All&quot;')
      const fragment = await (await htmx('/quiz/documents')).text()
      expect(fragment).toStartWith('<div id="documents">')
      expect(fragment).not.toContain('<html')
    })

    it('upload through the page: 303 to the document page, which shows it ready with its processing steps and no polling', async () => {
      const id = await uploadQuestions('ready.pdf')
      const res = await get(`/quiz/documents/${id}?done=uploaded`)
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(page).toContain('<h1>ready.pdf</h1>')
      expect(page).toContain('The file was uploaded.')
      expect(page).toContain('<dd>Ready</dd>')
      expect(page).toContain('Read 2 pages')
      expect(page).toContain('Document ready')
      expect(page).not.toContain(POLLING)
      expect(page).not.toContain('refresh</a>')
      expect(page).toContain(`action="/quiz/documents/${id}/sections"`)
      expect(page).toContain('<label for="section-start">')
      const [row] = await t.db.sql<{ user_id: number; status: string }>`select user_id, status from quiz.documents where id = ${id}`
      expect(row).toEqual({ user_id: moderator.id, status: 'ready' })
    })

    it('upload refusals are shown on the page with their status: not a PDF 415, empty 400, no file 400, too large 413', async () => {
      const before = await documentCount()
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, ...new Array(64).fill(0)])
      const notPdf = await uploadForm(png, 'scan.pdf')
      expect(notPdf.status).toBe(415)
      const notPdfPage = await notPdf.text()
      expect(notPdfPage).toContain('<h1>Documents</h1>')
      expect(notPdfPage).toContain(`<span class="field-error" id="file-error">${MESSAGES.notPdf}</span>`)
      expect(notPdfPage).toContain('aria-invalid="true"')

      const empty = await uploadForm(new Uint8Array(0), 'empty.pdf')
      expect(empty.status).toBe(400)
      expect(await empty.text()).toContain(MESSAGES.empty)
      const noFile = await post('/quiz/documents/upload', { other: 'x' })
      expect(noFile.status).toBe(400)
      expect(await noFile.text()).toContain('Choose a PDF file to upload')

      const valid = await makePdf([['Padded document']])
      const big = new Uint8Array(MAX_UPLOAD_SIZE + 1)
      big.set(valid)
      big.fill(0x20, valid.length)
      const tooLarge = await uploadForm(big, 'big.pdf')
      expect(tooLarge.status).toBe(413)
      const tooLargePage = await tooLarge.text()
      expect(tooLargePage).toContain(MESSAGES.tooLarge(MAX_UPLOAD_SIZE))
      expect(tooLargePage).toContain('<h1>Documents</h1>')
      // htmx swaps only 422 of the 4xx: an htmx request gets the same page with 422
      expect((await uploadForm(png, 'scan.pdf', { headers: { 'hx-request': 'true', 'hx-boosted': 'true' } })).status).toBe(422)
      expect(await documentCount()).toBe(before)
    })

    it('the page upload has the API upload\'s body limit: a declared length over it is 413 before reading; a file at the limit is accepted', async () => {
      const before = await documentCount()
      // Over the page's own limit yet under the service's 2 MiB default: the route's limit is the one that applies.
      const declared = MAX_UPLOAD_SIZE + MULTIPART_OVERHEAD_BYTES + 1
      const refused = await uploadForm(await makePdf([['small']]), 'small.pdf', { headers: { 'content-length': String(declared) } })
      expect(refused.status).toBe(413)
      expect(await refused.text()).toContain(MESSAGES.tooLarge(MAX_UPLOAD_SIZE))
      expect(await documentCount()).toBe(before)

      const valid = await makePdf([['At the limit']])
      const file = new Uint8Array(MAX_UPLOAD_SIZE)
      file.set(valid)
      file.fill(0x20, valid.length)
      const accepted = await uploadForm(file, 'limit.pdf')
      expect(accepted.status).toBe(303)
      expect(await documentCount()).toBe(before + 1)
    })

    it('sections: add (303, listed), an invalid range (400, the rule next to its field), not a number (422); htmx swaps the block', async () => {
      const id = await uploadQuestions()
      const added = await post(`/quiz/documents/${id}/sections`, { name: 'Part <one>', start_page: '1', end_page: '2' })
      expect(added.status).toBe(303)
      expect(added.headers.get('location')).toBe(`/quiz/documents/${id}?done=section-added#sections`)
      const page = await (await get(`/quiz/documents/${id}?done=section-added`)).text()
      expect(page).toContain('The section was added.')
      expect(page).toContain('<td>Part &lt;one&gt;</td>')
      expect(page).toContain('<td>1 to 2</td>')

      const backwards = await post(`/quiz/documents/${id}/sections`, { name: 'Backwards', start_page: '2', end_page: '2' })
      expect(backwards.status).toBe(400)
      const backwardsPage = await backwards.text()
      expect(backwardsPage).toContain(`<span class="field-error" id="section-end-error">${MESSAGES.endAfterStart}</span>`)
      expect(backwardsPage).toContain('value="Backwards"')
      const beyond = await post(`/quiz/documents/${id}/sections`, { name: 'Beyond', start_page: '1', end_page: '3' })
      expect(beyond.status).toBe(400)
      expect(await beyond.text()).toContain(MESSAGES.endWithinDocument(2).replaceAll("'", '&#x27;'))
      const zero = await post(`/quiz/documents/${id}/sections`, { name: 'Zero', start_page: '0', end_page: '2' })
      expect(zero.status).toBe(400)
      expect(await zero.text()).toContain(`id="section-start-error">${MESSAGES.startPage}</span>`)
      const words = await post(`/quiz/documents/${id}/sections`, { name: '', start_page: 'one', end_page: '2' })
      expect(words.status).toBe(422)
      const wordsPage = await words.text()
      expect(wordsPage).toContain('id="section-start-error">Enter a page number</span>')
      expect(wordsPage).toContain('id="section-name-error">Enter a name for the section</span>')
      expect(await t.db.sql`select id from quiz.sections where document_id = ${id}`).toHaveLength(1)

      const fragment = await post(`/quiz/documents/${id}/sections`, { name: 'Second', start_page: '1', end_page: '2' }, modCookie, { 'hx-request': 'true' })
      expect(fragment.status).toBe(200)
      const body = await fragment.text()
      expect(body).toStartWith('<section id="sections"')
      expect(body).toContain('<td>Second</td>')
      const bad = await post(`/quiz/documents/${id}/sections`, { name: 'Bad', start_page: '2', end_page: '1' }, modCookie, { 'hx-request': 'true' })
      expect(bad.status).toBe(422)
      const badBody = await bad.text()
      expect(badBody).toStartWith('<section id="sections"')
      expect(badBody).toContain(MESSAGES.endAfterStart)
      expect(badBody).not.toContain('<html')
    })

    it('deleting a section: htmx gets the block without it, a plain post redirects back', async () => {
      const id = await uploadQuestions()
      const first = await addSection(id, 'First')
      const second = await addSection(id, 'Second')
      const fragment = await post(`/quiz/documents/${id}/sections/${first}/delete`, {}, modCookie, { 'hx-request': 'true' })
      const body = await fragment.text()
      expect(body).toStartWith('<section id="sections"')
      expect(body).not.toContain(`id="section-${first}"`)
      expect(body).toContain(`id="section-${second}"`)
      const plain = await post(`/quiz/documents/${id}/sections/${second}/delete`, {})
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe(`/quiz/documents/${id}?done=section-deleted#sections`)
      expect(await t.db.sql`select id from quiz.sections where document_id = ${id}`).toHaveLength(0)
      expect((await post(`/quiz/documents/${id}/sections/${second}/delete`, {})).status).toBe(404)
    })

    it('make a quiz (regex): 303 to the job page, which shows it completed with a link to the quiz and stops polling', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id, 'Questions')
      const page = await (await get(`/quiz/documents/${id}`)).text()
      // No AI model in the test app: only pattern matching can be chosen, and it is chosen
      expect(page).toContain('only pattern matching is available')
      expect(page).toMatch(new RegExp(`id="s${sectionId}-x-standard" name="extraction_mode" value="standard"[^>]*disabled`))
      expect(page).toMatch(new RegExp(`id="s${sectionId}-x-regex" name="extraction_mode" value="regex" checked`))
      expect(page).not.toContain('name="model_id"')
      expect(page).toContain(`action="/quiz/documents/${id}/sections/${sectionId}/quiz"`)
      for (const hint of ['answer key', 'works out the answers itself', 'writes new questions']) expect(page).toContain(hint)

      const [category] = await t.db.sql<{ id: number }>`insert into quiz.question_categories (name) values ('Cardiology <pages>') returning id`
      const withCategory = await (await get(`/quiz/documents/${id}`)).text()
      expect(withCategory).toContain(`<option value="${category!.id}">Cardiology &lt;pages&gt;</option>`)
      const res = await post(`/quiz/documents/${id}/sections/${sectionId}/quiz`, {
        title: 'Page <quiz>', mode: 'timed', time_limit_minutes: '15', extraction_mode: 'regex', model_id: '', question_category_id: String(category!.id),
      })
      expect(res.status).toBe(303)
      const jobId = jobIdOf(res)
      const [quiz] = await t.db.sql<{ id: number; title: string; mode: string; time_limit_minutes: number; section_id: number }>`
        select id, title, mode, time_limit_minutes, section_id from quiz.quizzes where title = 'Page <quiz>'`
      expect(quiz).toMatchObject({ mode: 'timed', time_limit_minutes: 15, section_id: sectionId })
      const questions = await t.db.sql<{ question_category_id: number }>`
        select q.question_category_id from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id where qq.quiz_id = ${quiz!.id}`
      expect(questions.map((q) => q.question_category_id)).toEqual([category!.id, category!.id, category!.id])

      const jobPage = await get(`/quiz/documents/jobs/${jobId}`)
      expect(jobPage.status).toBe(200)
      const body = await jobPage.text()
      expect(body).toContain('<h1>Page &lt;quiz&gt;</h1>')
      expect(body).toContain('<dd>Completed</dd>')
      expect(body).toContain(`href="/quiz/quizzes/${quiz!.id}"`)
      expect(body).toContain('Found 3 questions')
      expect(body).toContain(`href="/quiz/documents/${id}">Back to the document</a>`)
      expect(body).not.toContain(POLLING)
      expect(body).not.toContain('/cancel"')
      const fragment = await (await htmx(`/quiz/documents/jobs/${jobId}`)).text()
      expect(fragment).toStartWith('<section id="job"')
      expect(fragment).toContain(`href="/quiz/quizzes/${quiz!.id}"`)

      const list = await (await get('/quiz/documents')).text()
      expect(list).toContain(`href="/quiz/documents/jobs/${jobId}">Page &lt;quiz&gt;</a>`)

      // htmx (a boosted form): the browser is sent to the job page with HX-Redirect
      const boosted = await post(`/quiz/documents/${id}/sections/${sectionId}/quiz`, { title: 'Boosted quiz', mode: 'learning', extraction_mode: 'regex' },
        modCookie, { 'hx-request': 'true', 'hx-boosted': 'true' })
      expect(boosted.status).toBe(200)
      jobIdOf(boosted)
    })

    it('make a quiz refusals: a blank title 422, an unknown category 404 next to its field, a section of another document 404', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id, 'Refusals')
      const url = `/quiz/documents/${id}/sections/${sectionId}/quiz`
      const quizzes = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.quizzes`)[0]!.n
      const before = await quizzes()
      const blank = await post(url, { title: '  ', mode: 'learning', extraction_mode: 'regex' })
      expect(blank.status).toBe(422)
      const blankPage = await blank.text()
      expect(blankPage).toContain(`id="s${sectionId}-title-error">Required</span>`)
      expect(blankPage).toContain(`<details id="s${sectionId}-make-quiz" open>`)
      const time = await post(url, { title: 'T', mode: 'timed', time_limit_minutes: '0', extraction_mode: 'regex' })
      expect(time.status).toBe(422)
      expect(await time.text()).toContain('Enter a whole number of minutes from 1 to')
      const category = await post(url, { title: 'T', mode: 'learning', extraction_mode: 'regex', question_category_id: '2147483647' })
      expect(category.status).toBe(404)
      const categoryPage = await category.text()
      expect(categoryPage).toContain(`id="s${sectionId}-category-error">Question category not found</span>`)
      expect(categoryPage).toContain('value="T"')
      const other = await uploadQuestions()
      expect((await post(`/quiz/documents/${other}/sections/${sectionId}/quiz`, { title: 'T', mode: 'learning', extraction_mode: 'regex' })).status).toBe(404)
      const htmxBlank = await post(url, { title: '', mode: 'learning', extraction_mode: 'regex' }, modCookie, { 'hx-request': 'true', 'hx-boosted': 'true' })
      expect(htmxBlank.status).toBe(422)
      expect(await quizzes()).toBe(before)
    })

    it('cancel on a finished job shows the plain message (400; 422 for htmx) and changes nothing', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id)
      const jobId = jobIdOf(await post(`/quiz/documents/${id}/sections/${sectionId}/quiz`, { title: 'Finished', mode: 'learning', extraction_mode: 'regex' }))
      const res = await post(`/quiz/documents/jobs/${jobId}/cancel`, {})
      expect(res.status).toBe(400)
      const page = await res.text()
      expect(page).toContain('This extraction has already ended (completed), so there is nothing to cancel.')
      expect(page).toContain('<dd>Completed</dd>')
      const fragment = await post(`/quiz/documents/jobs/${jobId}/cancel`, {}, modCookie, { 'hx-request': 'true' })
      expect(fragment.status).toBe(422)
      const body = await fragment.text()
      expect(body).toStartWith('<section id="job"')
      expect(body).toContain('nothing to cancel')
      expect((await t.db.sql<{ status: string }>`select status from core.jobs where id = ${jobId}`)[0]!.status).toBe('completed')
    })

    it('a job in progress polls every 2 s and offers Cancel to its owner only; cancelling stops the polling', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id)
      const running = await insertJob(moderator, 'running', 'Still running', sectionId)
      const page = await (await get(`/quiz/documents/jobs/${running}`)).text()
      expect(page).toContain('<dd>Running</dd>')
      expect(page).toContain(POLLING)
      expect(page).toContain(`hx-get="/quiz/documents/jobs/${running}"`)
      expect(page).toContain(`action="/quiz/documents/jobs/${running}/cancel"`)
      expect(page).toContain(`href="/quiz/documents/jobs/${running}">Refresh</a>`)
      // another moderator sees the job but no Cancel button; the service's 403 is shown if they post anyway
      const other = await (await get(`/quiz/documents/jobs/${running}`, otherCookie)).text()
      expect(other).toContain(POLLING)
      expect(other).not.toContain('/cancel"')
      const refused = await post(`/quiz/documents/jobs/${running}/cancel`, {}, otherCookie)
      expect(refused.status).toBe(403)
      expect(await refused.text()).toContain('Only the moderator who started this extraction can cancel it.')

      const cancelled = await post(`/quiz/documents/jobs/${running}/cancel`, {}, modCookie, { 'hx-request': 'true' })
      expect(cancelled.status).toBe(200)
      const body = await cancelled.text()
      expect(body).toStartWith('<section id="job"')
      expect(body).toContain('<dd>Cancelled</dd>')
      expect(body).toContain('The extraction was cancelled.')
      expect(body).not.toContain(POLLING)
      expect((await t.db.sql<{ status: string }>`select status from core.jobs where id = ${running}`)[0]!.status).toBe('cancelled')

      const failed = await insertJob(moderator, 'failed', 'Broken', sectionId, 'No questions found in section "All" <here>')
      const failedPage = await (await get(`/quiz/documents/jobs/${failed}`)).text()
      expect(failedPage).toContain('<dd>Failed</dd>')
      expect(failedPage).toContain('The extraction failed: No questions found in section &quot;All&quot; &lt;here&gt;')
      expect(failedPage).not.toContain(POLLING)
      expect(failedPage).not.toContain('/cancel"')

      const pending = await insertJob(moderator, 'pending', 'Waiting', sectionId)
      expect(await (await get(`/quiz/documents/jobs/${pending}`)).text()).toContain('<dd>Waiting to start</dd>')
      const plain = await post(`/quiz/documents/jobs/${pending}/cancel`, {})
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe(`/quiz/documents/jobs/${pending}?done=cancelled`)
      const after = await (await get(`/quiz/documents/jobs/${pending}?done=cancelled`)).text()
      expect(after).toContain('The extraction was cancelled.')
      expect(after).not.toContain(POLLING)
    })

    it('the document page polls only while processing: the fragment carries the trigger, and once ready brings the sections along', async () => {
      const id = await uploadQuestions()
      await t.db.sql`update quiz.documents set status = 'processing' where id = ${id}`
      const page = await (await get(`/quiz/documents/${id}`)).text()
      expect(page).toContain('<dd>Being processed</dd>')
      expect(page).toContain(POLLING)
      expect(page).toContain(`hx-get="/quiz/documents/${id}"`)
      expect(page).toContain(`href="/quiz/documents/${id}">Refresh</a>`)
      expect(page).toContain('Sections can be added once the document is ready.')
      expect(page).not.toContain(`action="/quiz/documents/${id}/sections"`)
      const polling = await (await htmx(`/quiz/documents/${id}`)).text()
      expect(polling).toStartWith('<section id="document-status"')
      expect(polling).toContain(POLLING)
      expect(polling).not.toContain('id="sections"')

      await t.db.sql`update quiz.documents set status = 'ready' where id = ${id}`
      const done = await (await htmx(`/quiz/documents/${id}`)).text()
      expect(done).toStartWith('<section id="document-status"')
      expect(done).not.toContain(POLLING)
      expect(done).toContain('<section id="sections" hx-swap-oob="true">')
      expect(done).toContain(`action="/quiz/documents/${id}/sections"`)

      await t.db.sql`update quiz.documents set status = 'failed', error_message = 'The PDF is <damaged>' where id = ${id}`
      const failed = await (await get(`/quiz/documents/${id}`)).text()
      expect(failed).toContain('<dd>Failed</dd>')
      expect(failed).toContain('Processing failed: The PDF is &lt;damaged&gt;')
      expect(failed).not.toContain(POLLING)
    })

    it('delete a document: a plain-words confirmation page, then 303 to the list; its quizzes stay', async () => {
      const id = await uploadQuestions('to-delete.pdf')
      const sectionId = await addSection(id)
      jobIdOf(await post(`/quiz/documents/${id}/sections/${sectionId}/quiz`, { title: 'Survivor', mode: 'learning', extraction_mode: 'regex' }))
      const confirm = await get(`/quiz/documents/${id}/delete`)
      expect(confirm.status).toBe(200)
      const page = await confirm.text()
      expect(page).toContain('<h1>Delete a document</h1>')
      expect(page).toContain('Delete &quot;to-delete.pdf&quot;?')
      expect(page).toContain('Quizzes already made from it stay')
      expect(page).toContain(`<form class="actions" action="/quiz/documents/${id}/delete" method="post">`)
      expect(await t.db.sql`select id from quiz.documents where id = ${id}`).toHaveLength(1)

      const res = await post(`/quiz/documents/${id}/delete`, {})
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/documents?done=deleted')
      expect(await t.db.sql`select id from quiz.documents where id = ${id}`).toHaveLength(0)
      expect(await t.db.sql`select id from quiz.quizzes where title = 'Survivor'`).toHaveLength(1)
      const list = await (await get('/quiz/documents?done=deleted')).text()
      expect(list).toContain('The document was deleted.')
      expect(list).not.toContain(`id="document-${id}"`)
      expect((await get(`/quiz/documents/${id}`)).status).toBe(404)

      const other = await uploadQuestions()
      const boosted = await post(`/quiz/documents/${other}/delete`, {}, modCookie, { 'hx-request': 'true', 'hx-boosted': 'true' })
      expect(boosted.headers.get('hx-redirect')).toBe('/quiz/documents?done=deleted')
      expect(await t.db.sql`select id from quiz.documents where id = ${other}`).toHaveLength(0)
    })

    it('with an extraction model configured, the form offers the AI modes (standard first chosen) and a model select', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id, 'With AI')
      const [model] = await t.db.sql<{ id: number }>`
        insert into quiz.ai_models (name, model_id, task, is_active, is_default) values ('Extractor <1>', 'gpt-test', 'extraction', true, true) returning id`
      try {
        const page = await (await get(`/quiz/documents/${id}`)).text()
        expect(page).not.toContain('only pattern matching is available')
        expect(page).toMatch(new RegExp(`id="s${sectionId}-x-standard" name="extraction_mode" value="standard" checked`))
        expect(page).not.toMatch(new RegExp(`id="s${sectionId}-x-generate"[^>]*disabled`))
        expect(page).toContain(`<label for="s${sectionId}-model">`)
        expect(page).toContain(`<option value="${model!.id}">Extractor &lt;1&gt; (gpt-test), the default</option>`)
        // a model that does not exist is refused next to its field, before any job starts
        const res = await post(`/quiz/documents/${id}/sections/${sectionId}/quiz`, { title: 'AI', mode: 'learning', extraction_mode: 'standard', model_id: '2147483647' })
        expect(res.status).toBe(404)
        expect(await res.text()).toContain(`id="s${sectionId}-model-error">AI model configuration not found</span>`)
      } finally {
        await t.db.sql`delete from quiz.ai_models where id = ${model!.id}`
      }
    })

    it('form actions answer a GET (a reload after a boosted post); unknown ids 404, out-of-range ids 422; other origins 403', async () => {
      const id = await uploadQuestions()
      const sectionId = await addSection(id)
      expect((await get('/quiz/documents/upload')).headers.get('location')).toBe('/quiz/documents')
      expect((await get(`/quiz/documents/${id}/sections`)).headers.get('location')).toBe(`/quiz/documents/${id}#sections`)
      for (const action of ['quiz', 'delete']) {
        const res = await get(`/quiz/documents/${id}/sections/${sectionId}/${action}`)
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe(`/quiz/documents/${id}#sections`)
      }
      const job = await insertJob(moderator, 'pending', 'Reload', sectionId)
      expect((await get(`/quiz/documents/jobs/${job}/cancel`)).headers.get('location')).toBe(`/quiz/documents/jobs/${job}`)
      expect((await get('/quiz/documents/2147483647')).status).toBe(404)
      expect((await get('/quiz/documents/2147483648')).status).toBe(422)
      expect((await get(`/quiz/documents/jobs/${crypto.randomUUID()}`)).status).toBe(404)
      expect((await get('/quiz/documents/jobs/not-a-uuid')).status).toBe(422)
      const cross = await post(`/quiz/documents/${id}/delete`, {}, modCookie, { origin: 'https://evil.example' })
      expect(cross.status).toBe(403)
      expect(await t.db.sql`select id from quiz.documents where id = ${id}`).toHaveLength(1)
      // the API sees what the pages made
      const api = await t.get(`${API}/documents/${id}`, { token: moderator.token })
      expect(((await api.json()) as { status: string }).status).toBe('ready')
    })
  })
}

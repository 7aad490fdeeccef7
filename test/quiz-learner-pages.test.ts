// The learner's read-only pages: /quiz/progress (dashboard figures, scores by quiz, history), /quiz/reviews (the
// questions due for review) and /quiz/favorites (starred questions with their answers), after a real quiz taken
// through the API; empty states for a new user, sign-in redirects, htmx fragments, and user text escaped.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''
const TITLE = 'Anatomy <script>alert(1)</script>'

interface StudyQuestion { id: number; question_text: string; options: string[]; correct_answer: string }

/** Four questions whose texts, options and explanations carry markup that must come out escaped. */
const pageText = (tag: string) => Array.from({ length: 4 }, (_, k) => {
  const i = k + 1
  return [`${i}. Is <i>${tag}</i> question ${i} & true?`, `A) Alpha <u>${i}</u>`, `B) Beta <u>${i}</u>`, `C) Gamma ${i}`, 'Answer: B',
    `Explanation: Because <em>${i}</em>.`].join('\n')
}).join('\n\n')

for (const target of databaseTargets()) {
  describe(`quiz pages: learner [${target}]`, () => {
    let t: TestApp
    let learner: Account
    let fresh: Account
    let learnerCookie = ''
    let freshCookie = ''
    let quizId = 0
    let questions: StudyQuestion[] = []
    const attemptIds: number[] = []

    async function pageCookie(email: string) {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const page = async (path: string, cookie: string, extra: Record<string, string> = {}) => {
      const res = await t.get(path, { headers: { ...html, cookie, ...extra } })
      expect(res.status).toBe(200)
      return res.text()
    }
    const takeQuiz = async (correct: number, freshStart: boolean) => {
      const start = await t.post(`${API}/attempts/start?quiz_id=${quizId}${freshStart ? '&fresh=true' : ''}`, undefined, { token: learner.token })
      expect(start.status).toBe(200)
      const { id } = (await start.json()) as { id: number }
      const answers = questions.map((q, i) => ({ question_id: q.id, user_answer: i < correct ? q.correct_answer : q.options.find((o) => o !== q.correct_answer)! }))
      const res = await t.post(`${API}/attempts/${id}/submit`, { answers }, { token: learner.token })
      expect(res.status).toBe(200)
      attemptIds.push(id)
    }

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      const moderator = await createAccount(t, admin, 'moderator', 'learnmod')
      learner = await createAccount(t, admin, 'user', 'learner')
      fresh = await createAccount(t, admin, 'user', 'newlearner')
      learnerCookie = await pageCookie(learner.email)
      freshCookie = await pageCookie(fresh.email)
      quizId = (await makeRegexQuiz(t, moderator, { title: TITLE, text: pageText('lrn') })).quizId
      expect((await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })).status).toBe(200)
      const quiz = (await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }
      questions = quiz.questions
      expect(questions.length).toBe(4)
      await takeQuiz(3, false) // 3 of 4: 75%
      await takeQuiz(4, true) // 4 of 4: 100%
    })
    afterAll(() => t?.close())

    it('signed out, every learner page sends the browser to sign in', async () => {
      for (const path of ['/quiz/progress', '/quiz/reviews', '/quiz/favorites']) {
        const res = await t.get(path, { headers: html })
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe('/quiz/login')
      }
    })

    it('progress: the figures, the table per quiz, the history with dates in UTC; the title escaped', async () => {
      const body = await page('/quiz/progress', learnerCookie)
      expect(body).toContain('<html')
      expect(body).toContain('<h1>My progress</h1>')
      expect(body).toContain('<dt>Quizzes attempted</dt><dd id="total-quizzes">1</dd>')
      expect(body).toContain('<dt>Attempts completed</dt><dd id="total-attempts">2</dd>')
      expect(body).toContain('<dt>Average score</dt><dd id="average-score">87.5%</dd>')
      expect(body).not.toContain('<script>alert(1)')
      const row = body.slice(body.indexOf(`id="quiz-stat-${quizId}"`), body.indexOf('</tr>', body.indexOf(`id="quiz-stat-${quizId}"`)))
      expect(row).toContain('<th scope="row">Anatomy &lt;script&gt;alert(1)&lt;/script&gt;</th>')
      expect(row).toContain('<td>2</td><td>100%</td><td>100%</td><td>87.5%</td>')
      const rows = await t.db.sql<{ id: number; completed_at: Date }>`select id, completed_at from quiz.attempts where user_id = ${learner.id} order by id`
      expect(rows.map((r) => r.id)).toEqual(attemptIds)
      const [first, second] = rows.map((r) => r.completed_at.toISOString())
      const history = body.slice(body.indexOf(`id="history-${quizId}"`))
      expect(history).toContain('Anatomy &lt;script&gt;alert(1)&lt;/script&gt;</h3>')
      expect(history).toContain(`<tr id="attempt-${attemptIds[0]}"><td><time datetime="${first}">${first!.slice(0, 10)} ${first!.slice(11, 16)} UTC</time></td><td>3 of 4</td><td>75%</td><td><a href="/quiz/attempts/${attemptIds[0]}">Review the attempt of ${first!.slice(0, 10)}</a></td></tr>`)
      expect(history).toContain(`<tr id="attempt-${attemptIds[1]}"><td><time datetime="${second}">${second!.slice(0, 10)} ${second!.slice(11, 16)} UTC</time></td><td>4 of 4</td><td>100%</td><td><a href="/quiz/attempts/${attemptIds[1]}">Review the attempt of ${second!.slice(0, 10)}</a></td></tr>`)
      // oldest first
      expect(history.indexOf(`attempt-${attemptIds[0]}`)).toBeLessThan(history.indexOf(`attempt-${attemptIds[1]}`))
      expect(body).not.toContain('No attempts yet')
    })

    it('progress: htmx gets the content fragment only', async () => {
      const body = await page('/quiz/progress', learnerCookie, { 'hx-request': 'true' })
      expect(body).not.toContain('<html')
      expect(body.startsWith('<div id="progress">')).toBe(true)
      expect(body).toContain('<dd id="total-attempts">2</dd>')
    })

    it('reviews: the count, the next due time, the due questions escaped and linked; the explanation of the daily email', async () => {
      const before = await page('/quiz/reviews', learnerCookie)
      expect(before).toContain('<h1>Due for review</h1>')
      expect(before).toContain('<dd id="due-count">0</dd>')
      expect(before).toContain('Nothing is due right now')
      expect(before).toContain('Turn the daily email on')
      expect(before).toContain('spaced repetition')
      const q = questions[0]!
      await t.db.sql`update quiz.review_cards set due = '2020-01-02T03:04:05Z' where user_id = ${learner.id} and question_id = ${q.id}`
      const body = await page('/quiz/reviews', learnerCookie)
      expect(body).toContain('<dd id="due-count">1</dd>')
      expect(body).toContain('<time datetime="2020-01-02T03:04:05.000Z">2020-01-02 03:04 UTC</time>')
      expect(body).toContain('<th scope="col">Question</th>')
      expect(body).toContain(`<a href="/quiz/bank?question=${q.id}#question-${q.id}">Is &lt;i&gt;lrn&lt;/i&gt; question 1 &amp; true?</a>`)
      expect(body).not.toContain('<i>lrn</i>')
      for (const other of questions.slice(1)) expect(body).not.toContain(`id="due-${other.id}"`)
      const fragment = await page('/quiz/reviews', learnerCookie, { 'hx-request': 'true' })
      expect(fragment).not.toContain('<html')
      expect(fragment).toContain('<dd id="due-count">1</dd>')
    })

    it('reviews: the daily email is turned on and off by a plain form (and by htmx), in the same setting the API reads', async () => {
      const settings = async () => (await (await t.get(`${API}/auth/me/settings`, { token: fresh.token })).json()) as Record<string, unknown>
      expect((await t.put(`${API}/auth/me/settings`, { theme: 'dark' }, { token: fresh.token })).status).toBe(200)
      const on = await t.form('/quiz/reviews/digest', { on: '1' }, { headers: { cookie: freshCookie } })
      expect(on.status).toBe(303)
      expect(on.headers.get('location')).toBe('/quiz/reviews#digest')
      expect(await settings()).toEqual({ theme: 'dark', reminder_digest: true })
      expect(await page('/quiz/reviews', freshCookie)).toContain('Turn the daily email off')
      const off = await t.form('/quiz/reviews/digest', { on: '0' }, { headers: { cookie: freshCookie, 'hx-request': 'true' } })
      expect(off.status).toBe(200)
      const fragment = await off.text()
      expect(fragment).toContain('<section id="digest"')
      expect(fragment).toContain('Turn the daily email on')
      expect(fragment).toContain('Saved.')
      expect(await settings()).toEqual({ theme: 'dark', reminder_digest: false })
      // signed out, the form sends the browser to sign in and changes nothing
      const anonymous = await t.form('/quiz/reviews/digest', { on: '1' })
      expect(anonymous.status).toBe(303)
      expect(anonymous.headers.get('location')).toContain('/quiz/login')
      expect(await settings()).toEqual({ theme: 'dark', reminder_digest: false })
    })

    it('favorites: text and options escaped, the correct one marked in words, a link to the bank', async () => {
      const q = questions[1]!
      expect((await t.post(`${API}/favorites`, { question_id: q.id }, { token: learner.token })).status).toBe(201)
      const body = await page('/quiz/favorites', learnerCookie)
      expect(body).toContain('<h1>My favorite questions</h1>')
      const item = body.slice(body.indexOf(`id="favorite-${q.id}"`))
      expect(item).toContain(`<a href="/quiz/bank?question=${q.id}#question-${q.id}">Is &lt;i&gt;lrn&lt;/i&gt; question 2 &amp; true?</a>`)
      expect(item).toContain('<li><strong>Beta &lt;u&gt;2&lt;/u&gt;</strong> <span class="muted">(correct answer)</span></li>')
      expect(item).toContain('<li>Alpha &lt;u&gt;2&lt;/u&gt;</li>')
      expect(item).toContain('Because &lt;em&gt;2&lt;/em&gt;.')
      expect(body).not.toContain('<u>2</u>')
      expect(body).not.toContain(`id="favorite-${questions[0]!.id}"`)
      expect(body).toContain('1 question, the most recently starred first.')
    })

    it('a new user sees the empty states in plain words', async () => {
      const progress = await page('/quiz/progress', freshCookie)
      expect(progress).toContain('<dd id="total-quizzes">0</dd>')
      expect(progress).toContain('<dd id="total-attempts">0</dd>')
      expect(progress).toContain('<dd id="average-score">None yet</dd>')
      expect(progress).toContain('No attempts yet: open a quiz from <a href="/quiz/quizzes">Quizzes</a> to start.')
      expect(progress).not.toContain('<table')
      const reviews = await page('/quiz/reviews', freshCookie)
      expect(reviews).toContain('<dd id="due-count">0</dd>')
      expect(reviews).toContain('Nothing scheduled yet')
      expect(reviews).toContain('Nothing to review yet')
      const favorites = await page('/quiz/favorites', freshCookie)
      expect(favorites).toContain('No favorite questions yet')
      expect(favorites).not.toContain('id="favorite-')
    })
  })
}

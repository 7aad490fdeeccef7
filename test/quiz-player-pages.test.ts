// The quiz player's pages, driven as a browser without JavaScript would: a quiz's start page, a timed attempt (the
// timer kept by the server, the autosave the script makes, answers and time restored on reload, another browser
// refused by the device lock, the automatic submit once the time ran out), a learning attempt (each answer checked
// at once, the tutor beside it with the project's AI test server, the question read aloud), the results page, and
// the due-review player with the answer API that moves the schedule.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { startAiServer, type AiServer } from './support/ai-server'
import { API, createAccount, makeRegexQuiz, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

const html = { accept: 'text/html' }
const htmx = { ...html, 'hx-request': 'true' }
const cookieOf = (res: Response, name: string) =>
  res.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith(`${name}=`)) ?? ''

interface Question { id: number; question_text: string; options: string[]; correct_answer: string; explanation: string }

const TEXT = [
  '1. Which valve separates the <left> atrium from the left ventricle?\nA) Tricuspid\nB) Mitral\nC) Aortic\nAnswer: B\nExplanation: The mitral valve has two cusps.',
  '2. Which chamber pumps blood into the aorta?\nA) Right atrium\nB) Right ventricle\nC) Left ventricle\nAnswer: C\nExplanation: The left ventricle.',
  '3. Where does the pulmonary artery carry blood?\nA) To the lungs\nB) To the brain\nC) To the liver\nAnswer: A\nExplanation: Deoxygenated blood to the lungs.',
].join('\n\n')

for (const target of databaseTargets()) {
  describe(`quiz pages: the player [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    let moderator: Account
    let learner: Account
    let other: Account
    let session = ''
    let otherSession = ''
    let timedId = 0
    let learningId = 0
    let timedQs: Question[] = []
    let learningQs: Question[] = []

    const signIn = async (email: string) => {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res, 'quiz_auth')
    }
    const get = (path: string, cookie: string, extra: Record<string, string> = {}) => t.get(path, { headers: { ...html, cookie, ...extra } })
    const post = (path: string, fields: Record<string, string>, cookie: string, extra: Record<string, string> = {}) =>
      t.form(path, fields, { headers: { cookie, ...extra } })
    const questionsOf = async (quizId: number) =>
      ((await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: Question[] }).questions
    /** Starts (or continues) through the start page's form: the attempt id and this browser's device cookie. */
    const start = async (quizId: number, cookie: string, fields: Record<string, string> = {}) => {
      const res = await post(`/quiz/play/${quizId}`, fields, cookie)
      expect(res.status).toBe(303)
      const m = /^\/quiz\/attempts\/(\d+)\/play$/.exec(res.headers.get('location') ?? '')
      expect(m).not.toBeNull()
      const device = cookieOf(res, 'quiz_device')
      return { attemptId: Number(m![1]), cookie: device ? `${cookie}; ${device}` : cookie }
    }
    const attemptRow = async (id: number) =>
      (await t.db.sql<{ completed_at: Date | null; score: number }>`select completed_at, score from quiz.attempts where id = ${id}`)[0]!
    const wrongOf = (q: Question) => q.options.find((o) => o !== q.correct_answer)!

    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: ai.env })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'playmod')
      learner = await createAccount(t, admin, 'user', 'player')
      other = await createAccount(t, admin, 'user', 'otherplayer')
      session = await signIn(learner.email)
      otherSession = await signIn(other.email)
      timedId = (await makeRegexQuiz(t, moderator, { title: 'Heart <b>timed</b>', mode: 'timed', text: TEXT })).quizId
      // other wording: identical questions would be the same bank questions in both quizzes
      learningId = (await makeRegexQuiz(t, moderator, { title: 'Heart learning', mode: 'learning', text: TEXT.replaceAll('?\n', ', in adults?\n') })).quizId
      for (const id of [timedId, learningId]) expect((await t.patch(`${API}/quizzes/${id}/publish`, undefined, { token: moderator.token })).status).toBe(200)
      timedQs = await questionsOf(timedId)
      learningQs = await questionsOf(learningId)
      expect(timedQs.length).toBe(3)
    }, 120_000)
    afterAll(async () => {
      await t?.close()
      await ai?.close().catch(() => {})
    })

    it('the start page says how the quiz works; signed out it asks to sign in, an unpublished quiz is not found', async () => {
      const res = await get(`/quiz/play/${timedId}`, session)
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(page).toContain('Heart &lt;b&gt;timed&lt;/b&gt;')
      expect(page).not.toContain('<b>timed</b>')
      expect(page).toContain('Timed: 20 minutes')
      expect(page).toContain('Start the quiz')
      expect((await t.get(`/quiz/play/${timedId}`, { headers: html })).status).toBe(303)
      const hidden = (await makeRegexQuiz(t, moderator, { title: 'Not published', text: TEXT })).quizId
      expect((await get(`/quiz/play/${hidden}`, session)).status).toBe(404)
      expect((await post(`/quiz/play/${hidden}`, {}, session)).status).toBe(404)
    })

    it('timed: the server keeps the clock; the autosave restores answers and time on reload; another browser is refused', async () => {
      const { attemptId, cookie } = await start(timedId, session)
      expect(cookie).toContain('quiz_device=')
      let res = await get(`/quiz/attempts/${attemptId}/play`, cookie)
      expect(res.status).toBe(200)
      let page = await res.text()
      const remaining = Number(/data-remaining="(\d+)"/.exec(page)?.[1])
      expect(remaining).toBeGreaterThan(1190)
      expect(remaining).toBeLessThanOrEqual(1200)
      expect(page).toContain('/quiz/static/player.js')
      for (const q of timedQs) expect(page).toContain(`name="q_${q.id}"`)
      expect(page).not.toContain('Explanation') // a timed quiz shows no answers while it runs

      // the script's autosave: the answers so far
      const q0 = timedQs[0]!
      const q1 = timedQs[1]!
      res = await post(`/quiz/attempts/${attemptId}/progress`, { [`q_${q0.id}`]: q0.correct_answer, [`q_${q1.id}`]: wrongOf(q1), current_idx: '1' }, cookie)
      expect(res.status).toBe(204)
      // a reload: the same answers checked, the clock where it was (not restarted)
      await Bun.sleep(1100)
      page = await (await get(`/quiz/attempts/${attemptId}/play`, cookie)).text()
      expect(page).toMatch(new RegExp(`name="q_${q0.id}" value="[^"]*" checked`))
      expect((page.match(/ checked/g) ?? []).length).toBe(2)
      const later = Number(/data-remaining="(\d+)"/.exec(page)?.[1])
      expect(later).toBeLessThan(remaining)
      expect(later).toBeGreaterThan(1180)

      // the same account in another browser (no device cookie of this one): the lock's message, and no save
      res = await get(`/quiz/attempts/${attemptId}/play`, session)
      expect(res.status).toBe(409)
      expect(await res.text()).toContain('This quiz is open on another device or browser')
      const elsewhere = cookieOf(res, 'quiz_device')
      res = await post(`/quiz/attempts/${attemptId}/progress`, { [`q_${q0.id}`]: wrongOf(q0) }, `${session}; ${elsewhere}`)
      expect(res.status).toBe(409)
      expect((await post(`/quiz/play/${timedId}`, {}, `${session}; ${elsewhere}`)).status).toBe(409)

      // another user: not their attempt
      expect((await get(`/quiz/attempts/${attemptId}/play`, otherSession)).status).toBe(403)
      expect((await post(`/quiz/attempts/${attemptId}/submit`, {}, otherSession)).status).toBe(403)

      // submit: the form's answers (the third one added now); the results page
      res = await post(`/quiz/attempts/${attemptId}/submit`, {
        [`q_${q0.id}`]: q0.correct_answer, [`q_${q1.id}`]: wrongOf(q1), [`q_${timedQs[2]!.id}`]: timedQs[2]!.correct_answer,
      }, cookie)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/quiz/attempts/${attemptId}`)
      expect((await attemptRow(attemptId)).score).toBe(2)
      page = await (await get(`/quiz/attempts/${attemptId}`, cookie)).text()
      expect(page).toContain('2 of 3 (66.7%)')
      expect(page).toContain('Wrong')
      expect(page).toContain(`The answer is <strong>${q1.correct_answer}</strong>`)
      expect(page).toContain('The mitral valve has two cusps.')
      expect(page).toContain('Which valve separates the &lt;left&gt;')
      // submitting again changes nothing: the results again
      res = await post(`/quiz/attempts/${attemptId}/submit`, {}, cookie)
      expect(res.status).toBe(303)
      expect((await attemptRow(attemptId)).score).toBe(2)
      // the player of a finished attempt is its results; a reload of a boosted post's path too
      expect((await get(`/quiz/attempts/${attemptId}/play`, cookie)).headers.get('location')).toBe(`/quiz/attempts/${attemptId}`)
      expect((await get(`/quiz/attempts/${attemptId}/submit`, cookie)).status).toBe(303)
    })

    it('timed: once the saved time ran out, opening the player submits the saved answers, exactly once', async () => {
      const { attemptId, cookie } = await start(timedId, session, { fresh: '1' })
      const q0 = timedQs[0]!
      expect((await post(`/quiz/attempts/${attemptId}/progress`, { [`q_${q0.id}`]: q0.correct_answer }, cookie)).status).toBe(204)
      // 21 minutes ago: past the 20-minute limit
      await t.db.sql`update core.kv set value = jsonb_set(value, '{started_at}', to_jsonb(${new Date(Date.now() - 21 * 60_000).toISOString()}::text))
        where key = ${`quiz.progress:${learner.id}:${timedId}`}`
      const [a, b] = await Promise.all([get(`/quiz/attempts/${attemptId}/play`, cookie), get(`/quiz/attempts/${attemptId}/play`, cookie)])
      // whichever read submits it, both end on the results
      for (const res of [a, b]) {
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toMatch(new RegExp(`^/quiz/attempts/${attemptId}(\\?expired=1)?$`))
      }
      const row = await attemptRow(attemptId)
      expect(row.completed_at).not.toBeNull()
      expect(row.score).toBe(1)
      const answers = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.attempt_answers where attempt_id = ${attemptId}`
      expect(answers[0]!.n).toBe(3)
      const page = await (await get(`/quiz/attempts/${attemptId}?expired=1`, cookie)).text()
      expect(page).toContain('Time ran out')
    })

    it('learning: each answer is checked at once with its explanation; the tutor answers beside it; the question is read aloud', async () => {
      const { attemptId, cookie } = await start(learningId, session)
      let page = await (await get(`/quiz/attempts/${attemptId}/play`, cookie)).text()
      const [q0, q1] = [learningQs[0]!, learningQs[1]!]
      expect(page).toContain('Check my answer')
      expect(page).toContain(`/quiz/attempts/${attemptId}/questions/${q0.id}/speech`)
      expect(page).not.toContain('The mitral valve has two cusps.') // not before answering

      // no choice: the same question with a message
      let res = await post(`/quiz/attempts/${attemptId}/answer`, { question_id: String(q0.id), q: '1' }, cookie)
      expect(res.status).toBe(422)
      expect(await res.text()).toContain('Choose one of the answers')
      // a wrong answer: "Not quite", the right one and the explanation
      res = await post(`/quiz/attempts/${attemptId}/answer`, { question_id: String(q0.id), q: '1', [`q_${q0.id}`]: wrongOf(q0) }, cookie)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/quiz/attempts/${attemptId}/play?q=1#feedback`)
      page = await (await get(`/quiz/attempts/${attemptId}/play?q=1`, cookie)).text()
      expect(page).toContain('Not quite.')
      expect(page).toContain(`The answer is <strong>${q0.correct_answer}</strong>`)
      expect(page).toContain('The mitral valve has two cusps.')
      // the first answer counts: a second post does not change it
      await post(`/quiz/attempts/${attemptId}/answer`, { question_id: String(q0.id), q: '1', [`q_${q0.id}`]: q0.correct_answer }, cookie)
      expect(await (await get(`/quiz/attempts/${attemptId}/play?q=1`, cookie)).text()).toContain('Not quite.')
      // a right answer
      await post(`/quiz/attempts/${attemptId}/answer`, { question_id: String(q1.id), q: '2', [`q_${q1.id}`]: q1.correct_answer }, cookie)
      page = await (await get(`/quiz/attempts/${attemptId}/play?q=2`, cookie)).text()
      expect(page).toContain('Correct.')
      // a question of another quiz is refused
      res = await post(`/quiz/attempts/${attemptId}/answer`, { question_id: String(timedQs[2]!.id), q: '3', [`q_${timedQs[2]!.id}`]: 'x' }, cookie)
      expect(res.status).toBe(400)

      // the tutor: the gateway gets the question; the reply and three suggestions come back in the panel
      ai.reply(() => 'The mitral valve sits between the left chambers.\n> What does the tricuspid do?\n> How many cusps?\n> Where is the aortic valve?')
      res = await post(`/quiz/attempts/${attemptId}/tutor`, { question_id: String(q0.id), q: '1', message: 'Why <mitral>?' }, cookie, htmx)
      expect(res.status).toBe(200)
      const panel = await res.text()
      expect(panel).toStartWith('<aside id="tutor"')
      expect(panel).toContain('The mitral valve sits between the left chambers.')
      expect(panel).toContain('Why &lt;mitral&gt;?')
      expect(panel).toContain('How many cusps?')
      expect(panel).not.toContain('&gt; How many cusps')
      const asked = ai.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!
      expect(JSON.stringify(asked.body)).toContain('Which valve separates the <left> atrium from the left ventricle, in adults?')
      // without htmx: back to the question, the conversation kept
      res = await post(`/quiz/attempts/${attemptId}/tutor`, { question_id: String(q0.id), q: '1', message: 'How many cusps?' }, cookie)
      expect(res.status).toBe(303)
      page = await (await get(`/quiz/attempts/${attemptId}/play?q=1`, cookie)).text()
      expect((page.match(/The mitral valve sits between the left chambers\./g) ?? []).length).toBe(2)
      // a failing gateway is said in the panel, not an error page
      ai.failNext(500, 3)
      res = await post(`/quiz/attempts/${attemptId}/tutor`, { question_id: String(q0.id), q: '1', message: 'And then?' }, cookie, htmx)
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('class="flash error"')
      ai.reset()

      // the question read aloud: MP3
      res = await get(`/quiz/attempts/${attemptId}/questions/${q0.id}/speech`, cookie)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('audio/mpeg')
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100)
      expect((await get(`/quiz/attempts/${attemptId}/questions/${timedQs[0]!.id}/speech`, cookie)).status).toBe(404)

      // finish: the saved answers are graded (1 right, 1 wrong, 1 unanswered)
      res = await post(`/quiz/attempts/${attemptId}/submit`, {}, cookie)
      expect(res.status).toBe(303)
      expect((await attemptRow(attemptId)).score).toBe(1)
      page = await (await get(`/quiz/attempts/${attemptId}`, cookie)).text()
      expect(page).toContain('1 of 3 (33.3%)')
      expect(page).toContain('Not answered')
    })

    it('due reviews: the most overdue question, checked at once, moves its schedule; the answer API too', async () => {
      await t.db.sql`update quiz.review_cards set due = now() - interval '1 day' where user_id = ${learner.id}`
      let page = await (await get('/quiz/reviews/play', session)).text()
      const shown = /name="question_id" value="(\d+)"/.exec(page)
      expect(shown).not.toBeNull()
      const qid = Number(shown![1])
      const q = [...timedQs, ...learningQs].find((x) => x.id === qid)!
      let res = await post('/quiz/reviews/answer', { question_id: String(qid) }, session)
      expect(res.status).toBe(422)
      expect(await res.text()).toContain('Choose an answer')
      res = await post('/quiz/reviews/answer', { question_id: String(qid), [`q_${qid}`]: q.correct_answer }, session)
      expect(res.status).toBe(303)
      page = await (await get(res.headers.get('location')!.replace(/#.*/, ''), session)).text()
      expect(page).toContain('Correct.')
      expect(page).toContain('Next review of this question')
      const [card] = await t.db.sql<{ due: Date }>`select due from quiz.review_cards where user_id = ${learner.id} and question_id = ${qid}`
      expect(card!.due.getTime()).toBeGreaterThan(Date.now())
      expect(page).not.toContain(`name="question_id" value="${qid}"`)

      // "I don't know" is a wrong answer: due again soon
      const next = Number(/name="question_id" value="(\d+)"/.exec(page)![1])
      res = await post('/quiz/reviews/answer', { question_id: String(next), dont_know: '1' }, session)
      page = await (await get(res.headers.get('location')!.replace(/#.*/, ''), session)).text()
      expect(page).toContain('Not quite.')

      // the API: 404 for a question not on the caller's schedule, the new due time otherwise
      expect((await t.post(`${API}/reminders/answer`, { question_id: qid, answer: q.correct_answer }, { token: other.token })).status).toBe(404)
      res = await t.post(`${API}/reminders/answer`, { question_id: qid, answer: wrongOf(q) }, { token: learner.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { is_correct: boolean; correct_answer: string; next_due: string }
      expect(body.is_correct).toBe(false)
      expect(body.correct_answer).toBe(q.correct_answer)
      expect(Date.parse(body.next_due)).toBeGreaterThan(Date.now() - 1000)
      expect((await t.post(`${API}/reminders/answer`, { question_id: qid }, { token: learner.token })).status).toBe(422)
    })

    it('forms from another site are refused', async () => {
      const res = await t.request(`/quiz/play/${learningId}`, {
        method: 'POST', body: new URLSearchParams({}), headers: { cookie: session, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      })
      expect(res.status).toBe(403)
    })
  })
}

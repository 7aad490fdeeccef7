// The quiz list learners pick a quiz from (/quiz/quizzes): published quizzes only, each linked to its start page
// (/quiz/play/{id}) with its mode in words, question count, category and the learner's own state (in progress, best
// score) after attempts made through the API; the category filter; the search box (title and question text, plain
// GET and htmx fragment, combined with the category), which never finds an unpublished quiz for a regular user; a
// too-short search is a message, not an error; user text escaped; the moderators' table gets a Take link.
// Made-up words keep each search apart from the others.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { MATCHING_QUESTIONS_MAX, SEARCH_Q_MAX } from '../plugins/quiz/models/search'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

const LEARNING_TITLE = 'Zephyrine <b>valves</b> review'
const TIMED_TITLE = 'Plimbert timed drill'
const HIDDEN_TITLE = 'Zephyrine draft not for learners'
const CATEGORY = 'Cardio <i>care</i>'

/** Page text the regex extractor reads: n questions with this stem (markup included), options A-D, answer B. */
const pageText = (stem: (i: number) => string, n: number) => Array.from({ length: n }, (_, k) => {
  const i = k + 1
  return [`${i}. ${stem(i)}`, `A) Alpha ${i}`, `B) Beta ${i}`, `C) Gamma ${i}`, `D) Delta ${i}`, 'Answer: B', `Explanation: Because ${i}.`].join('\n')
}).join('\n\n')

interface StudyQuestion { id: number; options: string[]; correct_answer: string }

/** The part of a page from an element's id to the end of its table row (or list item). */
function rowOf(page: string, id: string, end = '</tr>'): string {
  const at = page.indexOf(`id="${id}"`)
  expect(at).toBeGreaterThan(-1)
  return page.slice(at, page.indexOf(end, at))
}

/** A search result from its id to the next result (or the end of the list). */
function resultOf(page: string, quizId: number): string {
  const at = page.indexOf(`id="result-${quizId}"`)
  expect(at).toBeGreaterThan(-1)
  const next = page.indexOf('id="result-', at + 1)
  return page.slice(at, next === -1 ? page.indexOf('</ol>', at) : next)
}

for (const target of databaseTargets()) {
  describe(`quiz pages: the quiz list and its search [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let learner: Account
    let newcomer: Account
    let modCookie = ''
    let learnerCookie = ''
    let newcomerCookie = ''
    let learning = 0
    let timed = 0
    let hidden = 0
    let categoryId = 0

    async function pageCookie(email: string) {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const page = async (path: string, cookie = learnerCookie) => {
      const res = await t.get(path, { headers: { ...html, cookie } })
      expect(res.status).toBe(200)
      return res.text()
    }
    const fragment = async (path: string, cookie = learnerCookie) => {
      const res = await t.get(path, { headers: { cookie, 'hx-request': 'true' } })
      expect(res.status).toBe(200)
      return res.text()
    }
    const studyQuestions = async (quizId: number) =>
      ((await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }).questions
    const start = async (who: Account, quizId: number, fresh = false) => {
      const res = await t.post(`${API}/attempts/start?quiz_id=${quizId}${fresh ? '&fresh=true' : ''}`, undefined, { token: who.token })
      expect(res.status).toBe(200)
      return ((await res.json()) as { id: number }).id
    }
    const submit = async (who: Account, attemptId: number, questions: StudyQuestion[], correct: number) => {
      const answers = questions.map((q, i) => ({ question_id: q.id, user_answer: i < correct ? q.correct_answer : q.options.find((o) => o !== q.correct_answer)! }))
      expect((await t.post(`${API}/attempts/${attemptId}/submit`, { answers }, { token: who.token })).status).toBe(200)
    }
    const publish = async (quizId: number) =>
      expect((await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })).status).toBe(200)

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'listmod')
      learner = await createAccount(t, admin, 'user', 'listlearner')
      newcomer = await createAccount(t, admin, 'user', 'listnewcomer')
      modCookie = await pageCookie(moderator.email)
      learnerCookie = await pageCookie(learner.email)
      newcomerCookie = await pageCookie(newcomer.email)

      learning = (await makeRegexQuiz(t, moderator, { title: LEARNING_TITLE, n: 4, text: pageText((i) => `Which valve closes in phase ${i}?`, 4) })).quizId
      timed = (await makeRegexQuiz(t, moderator, {
        title: TIMED_TITLE, mode: 'timed', text: pageText((i) => `Is <i>quillbrack</i> rule ${i} & true?`, MATCHING_QUESTIONS_MAX + 1),
      })).quizId
      hidden = (await makeRegexQuiz(t, moderator, { title: HIDDEN_TITLE, text: pageText((i) => `Hidden quillbrack item ${i}?`, 2) })).quizId
      await publish(learning)
      await publish(timed)
      const res = await t.post(`${API}/categories/`, { name: CATEGORY }, { token: moderator.token })
      expect(res.status).toBe(200)
      categoryId = ((await res.json()) as { id: number }).id
      expect((await t.patch(`${API}/categories/quizzes/${learning}?category_id=${categoryId}`, undefined, { token: moderator.token })).status).toBe(200)
    })
    afterAll(() => t?.close())

    it('a regular user sees the published quizzes only, each linked to its start page with its mode in words, questions and category', async () => {
      const list = await page('/quiz/quizzes', newcomerCookie)
      expect(list).toContain('<html')
      expect(list).not.toContain(HIDDEN_TITLE)
      expect(list).not.toContain(`/quiz/play/${hidden}`)
      expect(list).not.toContain('/publish"')

      const learningRow = rowOf(list, `quiz-${learning}`)
      expect(learningRow).toContain(`<a href="/quiz/play/${learning}">Zephyrine &lt;b&gt;valves&lt;/b&gt; review</a>`)
      expect(learningRow).toContain('Learning: answers shown as you go')
      expect(learningRow).toContain('<td>4</td>')
      expect(learningRow).toContain('Cardio &lt;i&gt;care&lt;/i&gt;')
      expect(learningRow).toContain('Not taken yet')
      const timedRow = rowOf(list, `quiz-${timed}`)
      expect(timedRow).toContain(`<a href="/quiz/play/${timed}">${TIMED_TITLE}</a>`)
      expect(timedRow).toContain('Timed, 20 minutes')
      expect(timedRow).toContain(`<td>${MATCHING_QUESTIONS_MAX + 1}</td>`)
      expect(list).not.toContain('<b>valves')
      expect(list).toContain('<th scope="col">Your results</th>')

      // the search box: a GET form with a search role and a label
      expect(list).toContain('<form id="quiz-filter"')
      expect(list).toContain('role="search"')
      expect(list).toContain('<label for="quiz-q"><span>Search quizzes</span>')
      expect(list).toContain('hx-push-url="true"')
    })

    it('the learner\'s own state: "In progress" for an incomplete attempt, the best score of completed ones; another user sees neither', async () => {
      await start(learner, learning)
      const questions = await studyQuestions(timed)
      await submit(learner, await start(learner, timed), questions, 3) // 3 of 6: 50%
      await submit(learner, await start(learner, timed, true), questions, 6) // 100%
      await submit(learner, await start(learner, timed, true), questions, 0) // 0%: the best stays

      let list = await page('/quiz/quizzes')
      expect(rowOf(list, `quiz-${learning}`)).toContain('In progress')
      expect(rowOf(list, `quiz-${learning}`)).not.toContain('Best score')
      expect(rowOf(list, `quiz-${timed}`)).toContain('Best score 100%')
      expect(rowOf(list, `quiz-${timed}`)).not.toContain('In progress')

      await start(learner, timed)
      list = await page('/quiz/quizzes')
      expect(rowOf(list, `quiz-${timed}`)).toContain('In progress · Best score 100%')

      const theirs = await page('/quiz/quizzes', newcomerCookie)
      expect(rowOf(theirs, `quiz-${learning}`)).toContain('Not taken yet')
      expect(rowOf(theirs, `quiz-${timed}`)).toContain('Not taken yet')
    })

    it('the category filter keeps one category (or none); htmx gets the results element only', async () => {
      const inCategory = await page(`/quiz/quizzes?category_id=${categoryId}`)
      expect(inCategory).toContain(`id="quiz-${learning}"`)
      expect(inCategory).not.toContain(`id="quiz-${timed}"`)
      expect(inCategory).toContain(`<option value="${categoryId}" selected>`)
      const uncategorized = await page('/quiz/quizzes?category_id=none')
      expect(uncategorized).toContain(`id="quiz-${timed}"`)
      expect(uncategorized).not.toContain(`id="quiz-${learning}"`)
      const swapped = await fragment(`/quiz/quizzes?category_id=${categoryId}`)
      expect(swapped).toStartWith('<div id="quizzes">')
      expect(swapped).not.toContain('<html')
      expect(swapped).toContain(`href="/quiz/play/${learning}"`)
      expect(swapped).not.toContain(`id="quiz-${timed}"`)
    })

    it('search by title: a plain GET gives the page with the results, htmx the results only; an unpublished quiz is never found by a user', async () => {
      const results = await page('/quiz/quizzes?q=zephyrine')
      expect(results).toContain('<html')
      expect(results).toContain('value="zephyrine"')
      const hit = resultOf(results, learning)
      expect(hit).toContain(`<a href="/quiz/play/${learning}">Zephyrine &lt;b&gt;valves&lt;/b&gt; review</a>`)
      expect(hit).toContain('Found in the title')
      expect(hit).toContain('Learning: answers shown as you go')
      expect(hit).toContain('In progress')
      expect(results).not.toContain(HIDDEN_TITLE)
      expect(results).not.toContain(`id="result-${hidden}"`)
      expect(results).toContain('<a href="/quiz/quizzes">Clear the search</a>')

      const swapped = await fragment('/quiz/quizzes?q=zephyrine')
      expect(swapped).toStartWith('<div id="quizzes" class="wide">')
      expect(swapped).not.toContain('<html')
      expect(swapped).toContain(`id="result-${learning}"`)
      expect(swapped).not.toContain(HIDDEN_TITLE)

      // the same search by a moderator finds the unpublished quiz: the filter above is the visibility rule
      const theirs = await page('/quiz/quizzes?q=zephyrine', modCookie)
      expect(resultOf(theirs, hidden)).toContain('Not published.')
      expect(resultOf(theirs, hidden)).toContain(`href="/quiz/quizzes/${hidden}"`)
    })

    it(`search by question text: the matching questions listed (at most ${MATCHING_QUESTIONS_MAX}), escaped; never an unpublished quiz's`, async () => {
      for (const body of [await page('/quiz/quizzes?q=QUILLBRACK'), await fragment('/quiz/quizzes?q=QUILLBRACK')]) {
        const hit = resultOf(body, timed)
        expect(hit).toContain(`<a href="/quiz/play/${timed}">${TIMED_TITLE}</a>`)
        expect(hit).toContain('Found in its questions')
        expect(hit).toContain('Timed, 20 minutes')
        expect(hit).toContain('<li>Is &lt;i&gt;quillbrack&lt;/i&gt; rule 1 &amp; true?</li>')
        expect(hit).not.toContain('<i>quillbrack')
        expect(hit.match(/<li>Is &lt;i&gt;quillbrack/g)).toHaveLength(MATCHING_QUESTIONS_MAX)
        expect(body).not.toContain('Hidden quillbrack')
        expect(body).not.toContain(`id="result-${hidden}"`)
      }
      expect(await page('/quiz/quizzes?q=quillbrack', modCookie)).toContain('Hidden quillbrack item 1?')
    })

    it('search and category combine: the search looks only within the chosen category, with a way to search every category', async () => {
      const within = await page(`/quiz/quizzes?q=zephyrine&category_id=${categoryId}`)
      expect(within).toContain(`id="result-${learning}"`)
      expect(within).toContain(' in the category “Cardio &lt;i&gt;care&lt;/i&gt;”')
      expect(within).toContain(`<option value="${categoryId}" selected>`)
      const elsewhere = await page('/quiz/quizzes?q=zephyrine&category_id=none')
      expect(elsewhere).not.toContain(`id="result-${learning}"`)
      expect(elsewhere).toContain('among the quizzes with no category')
      expect(elsewhere).toContain('<a href="/quiz/quizzes?q=zephyrine">Search every category</a>')
      expect(elsewhere).toContain('<a href="/quiz/quizzes?category_id=none">Clear the search</a>')
    })

    it('a one-character search is a message above the list, not an error; blank is the plain list; too long is a message too', async () => {
      const short = await t.get('/quiz/quizzes?q=z', { headers: { ...html, cookie: learnerCookie } })
      expect(short.status).toBe(200)
      const body = await short.text()
      expect(body).toContain('Type at least 2 characters to search.')
      expect(body).toContain(`id="quiz-${learning}"`)
      expect(body).not.toContain('id="result-')
      const swapped = await fragment('/quiz/quizzes?q=%20z%20')
      expect(swapped).toStartWith('<div id="quizzes">')
      expect(swapped).toContain('Type at least 2 characters to search.')
      expect(swapped).toContain(`id="quiz-${timed}"`)

      const blank = await page('/quiz/quizzes?q=%20%20')
      expect(blank).not.toContain('Type at least')
      expect(blank).toContain(`id="quiz-${learning}"`)
      const long = await t.get(`/quiz/quizzes?q=${'z'.repeat(SEARCH_Q_MAX + 1)}`, { headers: { ...html, cookie: learnerCookie } })
      expect(long.status).toBe(200)
      expect(await long.text()).toContain(`at most ${SEARCH_Q_MAX} characters`)
      expect((await t.get(`/quiz/quizzes?q=${'z'.repeat(SEARCH_Q_MAX)}`, { headers: { ...html, cookie: learnerCookie } })).status).toBe(200)
    })

    it('the search text is escaped wherever it is shown', async () => {
      // attribute values are quoted, so there only a quote could break out; text must have its < > & escaped
      const outsideAttributes = (body: string) => body.replace(/="[^"]*"/g, '=""')
      const body = await page(`/quiz/quizzes?q=${encodeURIComponent('<b>valves')}`)
      expect(body).toContain('<h2>1 quiz matches “&lt;b&gt;valves”</h2>')
      expect(resultOf(body, learning)).toContain('Found in the title')
      expect(outsideAttributes(body)).not.toContain('<b>valves')
      const none = await page(`/quiz/quizzes?q=${encodeURIComponent('<script>x</script>')}`)
      expect(none).toContain('<h2>No quizzes match “&lt;script&gt;x&lt;/script&gt;”</h2>')
      expect(outsideAttributes(none)).not.toContain('<script>x')
      const quoted = await page(`/quiz/quizzes?q=${encodeURIComponent('zz" autofocus onfocus="alert(1)')}`)
      expect(quoted).not.toContain('onfocus="alert(1)')
      expect(quoted).toMatch(/value="zz(&#34;|&quot;) autofocus onfocus=(&#34;|&quot;)alert\(1\)"/)
    })

    it('a moderator keeps the table with its actions and gets a Take link per published quiz', async () => {
      const table = await page('/quiz/quizzes', modCookie)
      const row = rowOf(table, `quiz-${learning}`)
      expect(row).toContain(`href="/quiz/quizzes/${learning}"`)
      // the link's accessible name says which quiz (an attribute: its quotes are escaped, its < > need not be)
      expect(row).toContain(`<a href="/quiz/play/${learning}" aria-label="Take ${LEARNING_TITLE}">Take</a>`)
      expect(row).toContain(`action="/quiz/quizzes/${learning}/publish"`)
      const hiddenRow = rowOf(table, `quiz-${hidden}`)
      expect(hiddenRow).not.toContain('/quiz/play/')
      expect(hiddenRow).toContain('>Publish</button>')
      const swapped = await fragment('/quiz/quizzes', modCookie)
      expect(swapped).toStartWith('<div id="quizzes">')
      expect(swapped).toContain(`href="/quiz/play/${timed}"`)
    })
  })
}

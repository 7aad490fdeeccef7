// The question bank page (/quiz/bank): filters in the URL (text and mode, category, favorites, tags, quiz), pages of
// 50 with links that keep the filters, the favorite star (plain post and htmx), and the moderators' near-duplicate
// flags and selection actions (a new quiz, a category for many), which regular users neither see nor may post.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''
const html = { accept: 'text/html' }

interface PlainQuestion { text: string; options: string[] }
const quizText = (questions: PlainQuestion[]) =>
  questions.map((q, k) => [`${k + 1}. ${q.text}`, ...q.options.map((o, i) => `${'ABCDEFGH'[i]}) ${o}`), 'Answer: B'].join('\n')).join('\n\n')

/** The part of a page from an element's id to the end of its row. */
const rowOf = (page: string, questionId: number) => {
  const start = page.indexOf(`id="question-${questionId}"`)
  expect(start).toBeGreaterThan(-1)
  return page.slice(start, page.indexOf('</tr>', start))
}

for (const target of databaseTargets()) {
  describe(`quiz pages: question bank [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let user: Account
    let modCookie = ''
    let userCookie = ''
    let quiz = 0
    let ids: number[] = []

    async function pageCookie(email: string) {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const get = (path: string, cookie: string, extra: Record<string, string> = {}) => t.get(path, { headers: { ...html, cookie, ...extra } })
    const page = async (path: string, cookie = modCookie) => {
      const res = await get(path, cookie)
      expect(res.status).toBe(200)
      return res.text()
    }
    /** A form post with repeated fields (question_ids), as a browser sends ticked checkboxes. */
    const post = (path: string, fields: Array<[string, string]>, cookie = modCookie, extra: Record<string, string> = {}) =>
      t.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: 'http://localhost', cookie, ...extra },
        body: new URLSearchParams(fields).toString(),
      })
    const questionIds = async (quizId: number) =>
      (await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`).map((r) => r.question_id)
    const isFavorite = async (userId: number, questionId: number) =>
      (await t.db.sql`select 1 from quiz.favorites where user_id = ${userId} and question_id = ${questionId}`).length === 1

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'bankpagemod')
      user = await createAccount(t, admin, 'user', 'bankpageuser')
      modCookie = await pageCookie(moderator.email)
      userCookie = await pageCookie(user.email)
      quiz = (await makeRegexQuiz(t, moderator, {
        title: 'Bank page <quiz>',
        text: quizText([
          { text: 'Is <b>vexilla</b> & co escaped?', options: ['Yes', 'No <i>really</i>', 'Maybe'] },
          { text: 'Which vexilla flag is red?', options: ['Blue one', 'Red one'] },
          { text: 'Where do tundrix birds nest?', options: ['Cliffs', 'Trees'] },
        ]),
      })).quizId
      ids = await questionIds(quiz)
      expect((await t.patch(`${API}/quizzes/${quiz}/publish`, undefined, { token: moderator.token })).status).toBe(200)
    })
    afterAll(() => t?.close())

    it('signed out, the page sends the browser to sign in', async () => {
      const res = await t.get('/quiz/bank', { headers: html })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/login')
    })

    it('a user gets the page: escaped text, the answer marked in words, filters with labels; no selection controls', async () => {
      const body = await page(`/quiz/bank?quiz_id=${quiz}`, userCookie)
      expect(body).toContain('<html')
      expect(body).toContain('<h1>Question bank</h1>')
      expect(body).toContain('Is &lt;b&gt;vexilla&lt;/b&gt; &amp; co escaped?')
      expect(body).not.toContain('<b>vexilla</b>')
      expect(body).toContain('No &lt;i&gt;really&lt;/i&gt;')
      const row = rowOf(body, ids[0]!)
      expect(row).toContain('<strong>No &lt;i&gt;really&lt;/i&gt;</strong> <span>(correct answer)</span>')
      expect(row).toContain('Uncategorized')
      // the filter form: GET, every input labelled, htmx on top
      expect(body).toContain('<form id="bank-filters" class="stack" action="/quiz/bank" method="get"')
      expect(body).toContain('hx-get="/quiz/bank" hx-target="#bank-results"')
      expect(body).toContain('hx-push-url="true"')
      for (const id of ['bank-q', 'mode-hybrid', 'mode-keyword', 'mode-semantic', 'bank-category', 'bank-quiz', 'bank-favorites']) {
        expect(body).toContain(`for="${id}"`)
        expect(body).toContain(`id="${id}"`)
      }
      expect(body).toContain('<th scope="col">')
      // read only plus favorites
      expect(body).not.toContain('id="bank-selection"')
      expect(body).not.toContain('name="question_ids"')
      expect(body).toContain(`action="/quiz/bank/questions/${ids[0]}/favorite"`)
      expect(body).not.toContain('Near duplicate')
    })

    it('htmx gets the results block only; a plain GET gets the whole page', async () => {
      const res = await get(`/quiz/bank?q=vexilla&search_mode=keyword`, userCookie, { 'hx-request': 'true' })
      expect(res.status).toBe(200)
      const fragment = await res.text()
      expect(fragment).toStartWith('<div id="bank-results">')
      expect(fragment).not.toContain('<html')
      expect(fragment).toContain('2 questions match')
      // history restore asks with HX-Request too, and needs the page
      const restore = await (await get('/quiz/bank?q=vexilla', userCookie, { 'hx-request': 'true', 'hx-history-restore-request': 'true' })).text()
      expect(restore).toContain('<html')
    })

    it('filters: text and mode, category, uncategorized, favorites, tags and quiz narrow the results', async () => {
      const keyword = await page('/quiz/bank?q=VEXILLA&search_mode=keyword', userCookie)
      expect(keyword).toContain(`id="question-${ids[0]}"`)
      expect(keyword).toContain(`id="question-${ids[1]}"`)
      expect(keyword).not.toContain(`id="question-${ids[2]}"`)
      expect(keyword).toContain('id="mode-keyword" name="search_mode" value="keyword" checked')
      expect(keyword).toContain('value="VEXILLA"')
      const [cat] = await t.db.sql<{ id: number }>`insert into quiz.question_categories (name) values ('Flags & banners') returning id`
      await t.db.sql`update quiz.questions set question_category_id = ${cat!.id} where id = ${ids[1]!}`
      const inCategory = await page(`/quiz/bank?category=${cat!.id}`, userCookie)
      expect(inCategory).toContain(`id="question-${ids[1]}"`)
      expect(inCategory).not.toContain(`id="question-${ids[0]}"`)
      expect(inCategory).toContain('Flags &amp; banners')
      expect(inCategory).toContain(`<option value="${cat!.id}" selected>`)
      const uncategorized = await page(`/quiz/bank?category=none&quiz_id=${quiz}`, userCookie)
      expect(uncategorized).not.toContain(`id="question-${ids[1]}"`)
      expect(uncategorized).toContain(`id="question-${ids[2]}"`)
      await t.db.sql`insert into quiz.favorites (user_id, question_id) values (${user.id}, ${ids[2]!})`
      const favorites = await page('/quiz/bank?favorites_only=true', userCookie)
      expect(favorites).toContain(`id="question-${ids[2]}"`)
      expect(favorites).not.toContain(`id="question-${ids[0]}"`)
      expect(favorites).toContain('1 question matches')
      const [t1] = await t.db.sql<{ id: number }>`insert into quiz.tags (kind, name) values ('subject', 'Vexillology') returning id`
      const [t2] = await t.db.sql<{ id: number }>`insert into quiz.tags (kind, name) values ('keyword', 'Red <flag>') returning id`
      await t.db.sql`insert into quiz.question_tags (question_id, tag_id) values (${ids[0]!}, ${t1!.id}), (${ids[1]!}, ${t1!.id}), (${ids[1]!}, ${t2!.id})`
      const oneTag = await page(`/quiz/bank?tag_ids=${t1!.id}`, userCookie)
      expect(oneTag).toContain(`id="question-${ids[0]}"`)
      expect(oneTag).toContain(`id="question-${ids[1]}"`)
      expect(oneTag).toContain(`id="tag-${t1!.id}" name="tag_ids" value="${t1!.id}" checked`)
      const twoTags = await page(`/quiz/bank?tag_ids=${t1!.id}&tag_ids=${t2!.id}`, userCookie)
      expect(twoTags).not.toContain(`id="question-${ids[0]}"`)
      expect(rowOf(twoTags, ids[1]!)).toContain('<li class="chip"><span>Red &lt;flag&gt;</span> <span class="muted">keyword</span></li>')
      // a link is never refused: junk values are left out
      expect((await get('/quiz/bank?page=abc&category=x&tag_ids=y&search_mode=z&quiz_id=-1', userCookie)).status).toBe(200)
    })

    it('pages of 50: previous and next links keep the filters', async () => {
      const big = (await makeRegexQuiz(t, moderator, { n: 55, title: 'Paging quiz' })).quizId
      const first = await page(`/quiz/bank?quiz_id=${big}&category=none`)
      expect(first).toContain('55 questions match; page 1 of 2.')
      expect((first.match(/<tr id="question-/g) ?? []).length).toBe(50)
      expect(first).toContain(`href="/quiz/bank?category=none&quiz_id=${big}&page=2" rel="next">Next page</a>`)
      const second = await page(`/quiz/bank?category=none&quiz_id=${big}&page=2`)
      expect((second.match(/<tr id="question-/g) ?? []).length).toBe(5)
      expect(second).toContain(`href="/quiz/bank?category=none&quiz_id=${big}" rel="prev">Previous page</a>`)
      const all = await questionIds(big)
      const shown = [...first.matchAll(/<tr id="question-(\d+)"/g), ...second.matchAll(/<tr id="question-(\d+)"/g)].map((m) => Number(m[1]))
      expect(shown.sort((x, y) => x - y)).toEqual([...all].sort((x, y) => x - y))
    })

    it('the favorite star: a plain post redirects back; htmx swaps just the button; the label says what it does', async () => {
      const id = ids[0]!
      const before = await page(`/quiz/bank?quiz_id=${quiz}`, userCookie)
      expect(rowOf(before, id)).toContain(`aria-label="Add question ${id} to favorites"`)
      expect(rowOf(before, id)).toContain('aria-pressed="false"')
      const back = `/quiz/bank?quiz_id=${quiz}`
      const res = await post(`/quiz/bank/questions/${id}/favorite`, [['favorite', '1'], ['back', back]], userCookie)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`${back}#question-${id}`)
      expect(await isFavorite(user.id, id)).toBe(true)
      const after = await page(back, userCookie)
      expect(rowOf(after, id)).toContain(`aria-label="Remove question ${id} from favorites"`)
      expect(rowOf(after, id)).toContain('aria-pressed="true"')
      const fragment = await post(`/quiz/bank/questions/${id}/favorite`, [['favorite', '0'], ['back', back]], userCookie, { 'hx-request': 'true' })
      expect(fragment.status).toBe(200)
      const button = await fragment.text()
      expect(button).toStartWith(`<form id="favorite-${id}"`)
      expect(button).toContain('aria-pressed="false"')
      expect(button).not.toContain('<html')
      expect(await isFavorite(user.id, id)).toBe(false)
      // another site's address is never a place to go back to
      const away = await post(`/quiz/bank/questions/${id}/favorite`, [['favorite', '1'], ['back', 'https://evil.example/quiz/bank']], userCookie)
      expect(away.headers.get('location')).toBe(`/quiz/bank#question-${id}`)
      expect((await post('/quiz/bank/questions/2147483647/favorite', [['favorite', '1']], userCookie)).status).toBe(404)
      // a form from another site is refused
      const cross = await post(`/quiz/bank/questions/${id}/favorite`, [['favorite', '0']], userCookie, { origin: 'https://evil.example' })
      expect(cross.status).toBe(403)
      expect(await isFavorite(user.id, id)).toBe(true)
    })

    it('moderators: selection checkboxes, the two actions, and near-duplicate flags linking both ways', async () => {
      const [a, b] = [ids[1]!, ids[2]!]
      await t.db.sql`insert into quiz.near_duplicates (low_id, high_id, similarity) values (${a}, ${b}, 0.97) on conflict do nothing`
      const body = await page(`/quiz/bank?quiz_id=${quiz}`)
      expect(body).toContain(`<input type="checkbox" id="select-${a}" name="question_ids" value="${a}" form="bank-selection"`)
      expect(body).toContain(`for="select-${a}"`)
      expect(body).toContain('<form id="bank-selection" class="stack" action="/quiz/bank/selection" method="post">')
      expect(body).toContain('name="do" value="new_quiz">New quiz from selected</button>')
      expect(body).toContain('name="do" value="set_category" class="secondary">Set category</button>')
      expect(rowOf(body, a)).toContain(`<a href="/quiz/bank?question=${b}#question-${b}">Near duplicate of #${b}</a>`)
      expect(rowOf(body, b)).toContain(`<a href="/quiz/bank?question=${a}#question-${a}">Near duplicate of #${a}</a>`)
      expect(rowOf(body, ids[0]!)).not.toContain('Near duplicate')
      const one = await page(`/quiz/bank?question=${b}`)
      expect(one).toContain(`id="question-${b}"`)
      expect(one).not.toContain(`id="question-${a}"`)
      // a user sees no flag
      expect(await page(`/quiz/bank?quiz_id=${quiz}`, userCookie)).not.toContain('Near duplicate')
    })

    it('set category for the selected questions: Post/Redirect/Get with a notice; the API agrees', async () => {
      const [cat] = await t.db.sql<{ id: number }>`insert into quiz.question_categories (name) values ('Bulk from page') returning id`
      const back = `/quiz/bank?quiz_id=${quiz}`
      const res = await post('/quiz/bank/selection', [['question_ids', String(ids[0])], ['question_ids', String(ids[2])], ['do', 'set_category'], ['category', String(cat!.id)], ['back', back]])
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/quiz/bank?quiz_id=${quiz}&notice=category-set&count=2`)
      const rows = await t.db.sql<{ id: number }>`select id from quiz.questions where question_category_id = ${cat!.id} order by id`
      expect(rows.map((r) => r.id)).toEqual([ids[0]!, ids[2]!].sort((x, y) => x - y))
      expect(await page(res.headers.get('location')!)).toContain('Category set for 2 questions.')
      // "no category" for every match of the current filters
      const all = await post('/quiz/bank/selection', [['all_matches', 'true'], ['do', 'set_category'], ['category', 'none'], ['back', `/quiz/bank?category=${cat!.id}`]])
      expect(all.status).toBe(303)
      expect(all.headers.get('location')).toContain('count=2')
      expect((await t.db.sql`select id from quiz.questions where question_category_id = ${cat!.id}`).length).toBe(0)
    })

    it('new quiz from the selected questions: redirects to the new quiz; a refused form is re-rendered with 422', async () => {
      const res = await post('/quiz/bank/selection', [
        ['question_ids', String(ids[2])], ['question_ids', String(ids[0])], ['do', 'new_quiz'], ['title', 'Picked from the bank'],
        ['mode', 'timed'], ['time_limit_minutes', '12'], ['back', '/quiz/bank'],
      ])
      expect(res.status).toBe(303)
      const location = res.headers.get('location')!
      expect(location).toMatch(/^\/quiz\/quizzes\/\d+$/)
      const newId = Number(location.split('/').pop())
      expect(await questionIds(newId)).toEqual([ids[2]!, ids[0]!])
      const [row] = await t.db.sql<{ title: string; mode: string; time_limit_minutes: number }>`select title, mode, time_limit_minutes from quiz.quizzes where id = ${newId}`
      expect(row).toEqual({ title: 'Picked from the bank', mode: 'timed', time_limit_minutes: 12 })

      const count = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.quizzes`)[0]!.n
      const before = await count()
      const blank = await post('/quiz/bank/selection', [['question_ids', String(ids[0])], ['do', 'new_quiz'], ['title', '  '], ['mode', 'learning'], ['back', `/quiz/bank?quiz_id=${quiz}`]])
      expect(blank.status).toBe(422)
      const page422 = await blank.text()
      expect(page422).toContain('<html')
      expect(page422).toContain('id="selection-title-error"')
      expect(page422).toContain(`id="select-${ids[0]}" name="question_ids" value="${ids[0]}" form="bank-selection" checked`)
      const none = await post('/quiz/bank/selection', [['do', 'new_quiz'], ['title', 'Nothing picked'], ['mode', 'learning'], ['back', '/quiz/bank']])
      expect(none.status).toBe(422)
      expect(await none.text()).toContain('Select at least one question')
      const badLimit = await post('/quiz/bank/selection', [['question_ids', String(ids[0])], ['do', 'new_quiz'], ['title', 'x'], ['mode', 'timed'], ['time_limit_minutes', '0']])
      expect(badLimit.status).toBe(422)
      expect(await count()).toBe(before)
      // a reload of the boosted post's address lands on the bank page
      expect((await get('/quiz/bank/selection', modCookie)).headers.get('location')).toBe('/quiz/bank')
    })

    it('regular users may not post a selection (403), and nothing changes', async () => {
      const res = await post('/quiz/bank/selection', [['question_ids', String(ids[1])], ['do', 'set_category'], ['category', 'none']], userCookie)
      expect(res.status).toBe(403)
      const quizRes = await post('/quiz/bank/selection', [['question_ids', String(ids[1])], ['do', 'new_quiz'], ['title', 'Sneaky'], ['mode', 'learning']], userCookie)
      expect(quizRes.status).toBe(403)
      expect((await t.db.sql`select id from quiz.quizzes where title = 'Sneaky'`).length).toBe(0)
    })
  })
}

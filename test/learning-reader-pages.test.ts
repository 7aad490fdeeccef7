// The learning hub's reader pages: the hub (published content only, categories with counts, search as you type and
// without JavaScript, keyword results when the embedding model fails, the feed paged), a category and its 404, the
// article (markdown rendered with headings one level down, user text escaped, no javascript: link, safe external
// links), the quiz as a form (radio or checkboxes) answered without JavaScript (the score and each question in words,
// progress recorded) and with htmx (the section), a 422 in words, the slides inside the page, 404 for unpublished,
// unknown or slide-less content, and cross-site posts refused.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import type { ContentInput, QuestionInput } from '../plugins/learning/model'
import { createCategory, createContent } from '../plugins/learning/service'
import { readContent } from '../plugins/learning/service-reader'
import { startAiServer, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { EVIL, HTMX, outsideAttributes, pageClinician, type PageClinician as Clinician, XSS, XSS_ESCAPED } from './support/clinical'

setDefaultTimeout(60_000)

let seq = 0
const unique = (base: string) => `${base}-${Date.now().toString(36)}-${++seq}`

/** A single-answer question (option 2 correct) and a multi-answer one (options 4 and 6 correct). */
const QUIZ: QuestionInput[] = [
  { text: `First-line reliever? ${XSS}`, options: [{ text: 'Montelukast', correct: false }, { text: `Salbutamol ${XSS}`, correct: true }, { text: 'Prednisolone', correct: false }] },
  { text: 'Which help inhaler technique?', options: [{ text: 'A spacer', correct: true }, { text: 'Shaking after the puff', correct: false }, { text: 'One puff at a time', correct: true }] },
]
const DECK = '---\nmarp: true\n---\n\n# Inhalers\n\n---\n\n## The spacer\n\n---\n\n## Questions'

describe.each(databaseTargets())('learning hub reader pages [%s]', (target) => {
  let ai: AiServer
  let t: TestApp
  let reader: Clinician
  let categoryId: number
  let categorySlug: string

  const get = (path: string, who: Clinician | null, headers: Record<string, string> = {}) =>
    t.get(path, { headers: { accept: 'text/html', ...(who ? { cookie: who.cookie } : {}), ...headers } })
  const page = async (path: string, who: Clinician = reader, headers: Record<string, string> = {}) => {
    const res = await get(path, who, headers)
    expect(res.status, path).toBe(200)
    return res.text()
  }
  const form = (path: string, fields: Record<string, string> | URLSearchParams, who: Clinician, headers: Record<string, string> = {}) =>
    t.request(path, {
      method: 'POST',
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: 'http://localhost', cookie: who.cookie, ...headers },
    })
  const make = async (over: Partial<ContentInput> = {}) => {
    const input: ContentInput = { title: 'Asthma inhaler technique', slug: unique('asthma'), body: '# Inhalers\n\nUse a **spacer**.', categoryId, ...over }
    const { id } = await createContent(t.booted.core, input, null)
    return { id, slug: input.slug, title: input.title }
  }
  const quizOf = async (slug: string, who: Clinician = reader) => readContent(t.booted.core, who.id, slug)

  beforeAll(async () => {
    ai = await startAiServer()
    t = await startTestApp({ target, env: { ...ai.env, EMBEDDING_MODEL: 'test-embedding' } })
    reader = await pageClinician(t, 'learn-reader', 'Reader')
    categorySlug = unique('respiratory')
    ;({ id: categoryId } = await createCategory(t.booted.core, { name: `Respiratory ${XSS}`, slug: categorySlug, description: `Airways & <lungs>` }))
  })
  afterAll(async () => {
    await t.close()
    await ai.close()
  })

  it('signed out: a plain request goes to the sign-in page, an htmx one gets 401, a quiz post is not scored', async () => {
    for (const path of ['/learning', `/learning/category/${categorySlug}`, '/learning/read/anything', '/learning/read/anything/slides']) {
      const plain = await get(path, null)
      expect(plain.status, path).toBe(303)
      expect(plain.headers.get('location')).toBe('/')
      expect((await get(path, null, HTMX)).status, path).toBe(401)
    }
    const post = await t.form('/learning/read/anything/quiz', { 'answer-1': '1' })
    expect(post.status).toBe(303)
    expect(post.headers.get('location')).toBe('/')
  })

  it('the hub lists published content (title, type in words, category, summary, date) and the categories with counts; unpublished stays hidden', async () => {
    const shown = await make({ title: `Peak flow ${XSS}`, summary: `How to read it ${XSS}` })
    const deck = await make({ title: 'Spacer slides', type: 'presentation', body: DECK })
    const hidden = await make({ title: 'Draft never shown', published: false })
    const body = await page('/learning')
    expect(body).toContain('<h1>Learning hub</h1>')
    expect(body).toContain(`<a href="/learning/read/${shown.slug}">Peak flow ${XSS_ESCAPED}</a>`)
    expect(body).toContain(`How to read it ${XSS_ESCAPED}`)
    expect(body).toContain(`<a href="/learning/read/${deck.slug}">Spacer slides</a>`)
    expect(body).toMatch(new RegExp(`${deck.slug}">Spacer slides</a></h3><p class="learn-meta muted"><span>Slides</span>`))
    expect(body).toMatch(new RegExp(`${shown.slug}">Peak flow [^<]*</a></h3><p class="learn-meta muted"><span>Article</span> · <a href="/learning/category/${categorySlug}">`))
    expect(body).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/)
    expect(body).not.toContain('Draft never shown')
    expect(body).not.toContain(hidden.slug)
    const count = (await t.db.sql<{ n: number }>`
      select count(*)::int as n from clinical.learning_content where category_id = ${categoryId} and published`)[0]!.n
    expect(body).toContain(`<a href="/learning/category/${categorySlug}">Respiratory ${XSS_ESCAPED}</a> <span class="muted">${count} items</span>`)
    expect(outsideAttributes(body)).not.toContain(XSS)
    // the search works without JavaScript (form action + method) and as you type (htmx on the same URL)
    expect(body).toContain('<form class="actions learn-search" action="/learning" method="get" role="search">')
    expect(body).toContain('<label for="learn-q" class="visually-hidden">Search the learning hub</label>')
    expect(body).toContain('hx-get="/learning" hx-trigger="input changed delay:300ms, search" hx-target="#learn-results"')
  })

  it('searches as you type (the results fragment) and without JavaScript (the whole page); an empty search is the feed', async () => {
    const hit = await make({ title: 'Bronchiolitis oxygen thresholds', body: 'Saturation targets for infants with bronchiolitis.' })
    const plain = await page('/learning?q=bronchiolitis')
    expect(plain).toContain('<html')
    expect(plain).toContain('<h2>Search results</h2>')
    expect(plain).toContain(`href="/learning/read/${hit.slug}"`)
    expect(plain).toContain('value="bronchiolitis"')
    const res = await get('/learning?q=bronchiolitis', reader, HTMX)
    expect(res.status).toBe(200)
    expect(res.headers.get('vary')).toContain('HX-Request')
    const fragment = await res.text()
    expect(fragment).toStartWith('<div id="learn-results">')
    expect(fragment).not.toContain('<html')
    expect(fragment).toContain(`href="/learning/read/${hit.slug}"`)
    expect(fragment).toMatch(/\d+ results? for “bronchiolitis”\./)
    expect(fragment).not.toContain('Matching words only')
    expect(await (await get(`/learning?q=${encodeURIComponent(XSS)}`, reader, HTMX)).text()).toContain(`“${XSS_ESCAPED}”`)
    const cleared = await (await get('/learning?q=', reader, HTMX)).text()
    expect(cleared).toStartWith('<div id="learn-results">')
    expect(cleared).toContain('<h2>Latest content</h2>')
  })

  it('falls back to keyword results with a quiet note when the embedding model fails', async () => {
    const hit = await make({ title: 'Croup steroid dosing', body: 'Dexamethasone for croup.' })
    ai.failNext(500, 5)
    try {
      const fragment = await (await get('/learning?q=croup', reader, HTMX)).text()
      expect(fragment).toContain('Matching words only: the search by meaning is not available just now.')
      expect(fragment).toContain(`href="/learning/read/${hit.slug}"`)
    } finally {
      ai.reset()
    }
  })

  it('pages the feed newest first with Newer and Older links', async () => {
    const [a, b, c] = [await make({ title: 'Paging one' }), await make({ title: 'Paging two' }), await make({ title: 'Paging three' })]
    const first = await page('/learning?limit=2')
    expect(first).toContain(`/learning/read/${c!.slug}"`)
    expect(first).toContain(`/learning/read/${b!.slug}"`)
    expect(first).not.toContain(`/learning/read/${a!.slug}"`)
    expect(first).toContain('<a href="/learning?offset=2&limit=2" rel="next">Older</a>')
    expect(first).not.toContain('>Newer</a>')
    const second = await page('/learning?limit=2&offset=2')
    expect(second).toContain(`/learning/read/${a!.slug}"`)
    expect(second).not.toContain(`/learning/read/${c!.slug}"`)
    expect(second).toContain('<a href="/learning?limit=2" rel="prev">Newer</a>')
    expect(second).toContain('Newest first: items 3 to 4.')
    // numbers out of range are brought into range, not refused
    expect((await get('/learning?limit=100000&offset=-4', reader)).status).toBe(200)
    expect((await get('/learning?limit=abc', reader)).status).toBe(200)
  })

  it('shows a category with its description and content; an unknown category is the 404 page', async () => {
    const slug = unique('cardio')
    const { id } = await createCategory(t.booted.core, { name: 'Cardiology', slug, description: `Hearts ${XSS}` })
    const item = await make({ title: 'Murmurs in children', categoryId: id })
    await make({ title: 'Hidden cardiology draft', categoryId: id, published: false })
    const body = await page(`/learning/category/${slug}`)
    expect(body).toContain('<h1>Cardiology</h1>')
    expect(body).toContain(`Hearts ${XSS_ESCAPED}`)
    expect(body).toContain(`<a href="/learning/read/${item.slug}">Murmurs in children</a>`)
    expect(body).toContain('1 item, newest first.')
    expect(body).not.toContain('Hidden cardiology draft')
    expect(outsideAttributes(body)).not.toContain(XSS)
    const missing = await get('/learning/category/no-such-category', reader)
    expect(missing.status).toBe(404)
    const text = await missing.text()
    expect(text).toContain('<h1>Page not found</h1>')
    expect(text).toContain('Category not found')
  })

  it('renders the article: markdown as elements, headings one level down, text escaped, no javascript: link, safe web links', async () => {
    const item = await make({
      title: `Spacers ${XSS}`,
      body: [
        '# Why a spacer', '', `Text with ${XSS} inside.`, '', '## Steps', '', '- Shake', '- Breathe **slowly**', '',
        '[evil](javascript:alert(1)) and [guide](https://example.org/guide) and www.example.com', '', '![chart](https://example.org/c.png)',
      ].join('\n'),
    })
    const body = await page(`/learning/read/${item.slug}`)
    expect(body).toContain(`<h1>Spacers ${XSS_ESCAPED}</h1>`)
    expect(body).toContain('<h2>Why a spacer</h2>')
    expect(body).toContain('<h3>Steps</h3>')
    expect(body).toContain('<li>Breathe <strong>slowly</strong></li>')
    expect(body).toContain(`Text with ${XSS_ESCAPED} inside.`)
    expect(outsideAttributes(body)).not.toContain(XSS)
    expect(body).not.toMatch(/href="javascript:/i)
    expect(body).toContain('[evil](javascript:alert(1))')
    expect(body).toContain('<a href="https://example.org/guide" target="_blank" rel="noopener noreferrer">guide<span class="visually-hidden"> (opens in a new tab)</span></a>')
    expect(body).toContain('<a href="http://www.example.com" target="_blank" rel="noopener noreferrer">www.example.com')
    expect(body).not.toContain('<img')
    expect(body).toContain('>Image: chart<')
    expect(body).toContain(`<a href="/learning/category/${categorySlug}">Respiratory ${XSS_ESCAPED}</a>`)
    expect(body).not.toContain('View the slides')
    expect(body).not.toContain('id="learn-quiz"')
    // unknown and unpublished content: the 404 page
    const draft = await make({ published: false })
    for (const path of ['/learning/read/no-such-content', `/learning/read/${draft.slug}`, `/learning/read/${draft.slug}/slides`]) {
      const res = await get(path, reader)
      expect(res.status, path).toBe(404)
      expect(await res.text(), path).toContain('<h1>Page not found</h1>')
    }
    expect((await form(`/learning/read/${draft.slug}/quiz`, { 'answer-1': '1' }, reader)).status).toBe(404)
  })

  it('shows the quiz as a form: fieldset and legend per question, radio buttons for one answer, checkboxes when several', async () => {
    const item = await make({ questions: QUIZ })
    const body = await page(`/learning/read/${item.slug}`)
    const action = `/learning/read/${item.slug}/quiz`
    expect(body).toContain(`<form class="stack" action="${action}" method="post" hx-post="${action}" hx-target="#learn-quiz" hx-swap="outerHTML">`)
    expect(body).toContain(`<legend><span>1. First-line reliever? ${XSS_ESCAPED}</span></legend>`)
    expect(body).toContain('<legend><span>2. Which help inhaler technique?</span> <span class="learn-hint">Choose all that apply.</span></legend>')
    const q = await quizOf(item.slug)
    const [one, two] = q.questions
    expect(body).toContain(`<input type="radio" id="learn-q1-o${one!.options[1]!.id}" name="answer-1" value="${one!.options[1]!.id}"/>`)
    expect(body).toContain(`<input type="checkbox" id="learn-q2-o${two!.options[0]!.id}" name="answer-2" value="${two!.options[0]!.id}"/>`)
    expect(body).toContain(`<label class="option" for="learn-q1-o${one!.options[1]!.id}">`)
    expect(body).toContain(`Salbutamol ${XSS_ESCAPED}`)
    expect(outsideAttributes(body)).not.toContain(XSS)
    expect(body).toContain('You have not taken this quiz yet.')
  })

  it('answers a quiz without JavaScript: the page with the score, each question in words, and the progress recorded', async () => {
    const item = await make({ questions: QUIZ })
    const who = await pageClinician(t, 'learn-quiz', 'Quiz Taker')
    const [one, two] = (await quizOf(item.slug, who)).questions
    const answers = new URLSearchParams([
      ['answer-1', String(one!.options[1]!.id)], // right
      ['answer-2', String(two!.options[0]!.id)], // one of the two correct: wrong
    ])
    const res = await form(`/learning/read/${item.slug}/quiz`, answers, who)
    expect(res.status).toBe(200)
    const body = await res.text()
    expect(body).toContain('<html')
    expect(body).toContain('You answered 1 of 2 correctly.')
    expect(body).toMatch(/id="learn-q1">[\s\S]*?<p class="learn-verdict right"><span aria-hidden="true">✓<\/span> Correct<\/p>/)
    expect(body).toMatch(/id="learn-q2">[\s\S]*?<p class="learn-verdict wrong"><span aria-hidden="true">✗<\/span> Not correct<\/p>/)
    expect(body).toContain(`value="${one!.options[1]!.id}" checked/>`)
    expect(body).toContain('<dt>Best score</dt><dd>1 of 2</dd>')
    expect(body).toContain('<dt>Attempts</dt><dd>1</dd>')

    // the second try, all right, through htmx: the quiz section only
    const all = new URLSearchParams([
      ['answer-1', String(one!.options[1]!.id)], ['answer-2', String(two!.options[0]!.id)], ['answer-2', String(two!.options[2]!.id)],
    ])
    const viaHtmx = await form(`/learning/read/${item.slug}/quiz`, all, who, HTMX)
    expect(viaHtmx.status).toBe(200)
    const fragment = await viaHtmx.text()
    expect(fragment).toStartWith('<section id="learn-quiz"')
    expect(fragment).not.toContain('<html')
    expect(fragment).toContain('You answered 2 of 2 correctly.')
    expect(fragment).toContain('<dt>Best score</dt><dd>2 of 2</dd>')
    expect(fragment).toContain('<dt>Latest score</dt><dd>2 of 2</dd>')
    expect(fragment).toContain('<dt>Attempts</dt><dd>2</dd>')
    expect((await quizOf(item.slug, who)).progress).toMatchObject({ completed: true, score: 2, total: 2, latest_score: 2, attempts: 2 })
    // the reader's progress shows on the article afterwards
    expect(await page(`/learning/read/${item.slug}`, who)).toContain('<dt>Attempts</dt><dd>2</dd>')
  })

  it('shows a refused answer (an option of no question) in words with 422, and records nothing', async () => {
    const item = await make({ questions: QUIZ })
    const who = await pageClinician(t, 'learn-bad', 'Bad Answer')
    const res = await form(`/learning/read/${item.slug}/quiz`, { 'answer-1': '999999' }, who)
    expect(res.status).toBe(422)
    const body = await res.text()
    expect(body).toContain('<html')
    expect(body).toContain('Question 1: the answer sent is not one of its options.')
    const viaHtmx = await form(`/learning/read/${item.slug}/quiz`, { 'answer-2': 'x' }, who, HTMX)
    expect(viaHtmx.status).toBe(422)
    expect(await viaHtmx.text()).toContain('Question 2: the answer sent is not one of its options.')
    const unknown = await form(`/learning/read/${item.slug}/quiz`, { 'answer-7': '1' }, who)
    expect(unknown.status).toBe(422)
    expect(await unknown.text()).toContain('this quiz does not have')
    expect((await quizOf(item.slug, who)).progress.attempts).toBe(0)
    const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_quiz_submissions where user_id = ${who.id}`
    expect(row!.n).toBe(0)
  })

  it('refuses a quiz posted from another site (403) and records nothing', async () => {
    const item = await make({ questions: QUIZ })
    const who = await pageClinician(t, 'learn-csrf', 'Cross Site')
    const res = await form(`/learning/read/${item.slug}/quiz`, { 'answer-1': '1' }, who, EVIL)
    expect(res.status).toBe(403)
    expect((await quizOf(item.slug, who)).progress.attempts).toBe(0)
  })

  it('shows the slides inside the page: the css and one svg per slide, with slides.js; content without slides is the 404 page', async () => {
    const item = await make({ title: `Deck ${XSS}`, slides: DECK })
    const article = await page(`/learning/read/${item.slug}`)
    expect(article).toContain(`<a class="button" href="/learning/read/${item.slug}/slides">View the slides</a>`)
    const body = await page(`/learning/read/${item.slug}/slides`)
    expect(body).toContain(`<h1>Deck ${XSS_ESCAPED}: slides</h1>`)
    expect(body.match(/<svg data-marpit-svg/g)).toHaveLength(3)
    expect(body).toMatch(/<style>[^<]*div\.marpit/)
    expect(body).toContain('<div class="learn-deck-bar" hidden>')
    expect(body).toContain('<script src="/static/slides.js" defer></script>')
    expect(outsideAttributes(body)).not.toContain(XSS)
    const script = await t.get('/static/slides.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
    expect(await script.text()).toContain('learningSlides')
    // a presentation without a separate deck shows its body as slides
    const presentation = await make({ type: 'presentation', body: DECK })
    expect((await page(`/learning/read/${presentation.slug}/slides`)).match(/<svg data-marpit-svg/g)).toHaveLength(3)

    const plain = await make({ title: 'No deck here' })
    const res = await get(`/learning/read/${plain.slug}/slides`, reader)
    expect(res.status).toBe(404)
    const text = await res.text()
    expect(text).toContain('<h1>Page not found</h1>')
    expect(text).toContain('This content has no slides')
  })
})

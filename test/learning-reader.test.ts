// The learning hub as readers use it: categories, the feed (limit/offset), a category's content, one content with its
// quiz (no answers) and the caller's progress, rendered slides (markdown HTML escaped, no script, strict CSP), quiz
// submission (single and multi-answer, all-or-nothing, missing answers, bad ids refused with nothing recorded,
// progress best and latest, parallel submissions), unpublished content invisible everywhere, 401 without a session;
// and the authoring services' rules the routes will rely on (unique slugs, also in parallel; categories in use).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, SUMMARY_AUTO_CHARS, type ContentInput, type QuestionInput } from '../plugins/learning/model'
import {
  createCategory, createContent, deleteCategory, deleteContent, getContentForAuthor, learningStats, listCategories, listContentForAuthors,
  updateCategory, updateContent,
} from '../plugins/learning/service'
import { HttpError } from '../src/core/errors'
import type { Core } from '../src/plugin'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(60_000)

interface ErrorBody { success: false; error: string; code: string; fields?: Record<string, string> }
interface FeedItem { id: number; title: string; slug: string; summary: string; type: string; category: string; category_slug: string; created_at: string }
interface Progress { completed: boolean; score: number | null; total: number | null; latest_score: number | null; latest_total: number | null; attempts: number; last_submitted_at: string | null }
interface ContentBody {
  id: number; title: string; slug: string; type: string; summary: string; body: string; has_slides: boolean
  category: { id: number; name: string; slug: string; description: string }
  questions: Array<{ id: number; text: string; multiple: boolean; options: Array<{ id: number; text: string }> }>
  progress: Progress; created_at: string; updated_at: string
}
interface QuizBody { success: boolean; score: number; total: number; results: Array<{ questionId: number; correct: boolean }> }

let seq = 0
const unique = (base: string) => `${base}-${Date.now().toString(36)}-${++seq}`

/** A single-answer question (option 2 correct of three) and a multi-answer one (options 1 and 3 correct of four). */
const QUIZ: QuestionInput[] = [
  { text: 'First-line reliever?', options: [{ text: 'Montelukast', correct: false }, { text: 'Salbutamol', correct: true }, { text: 'Prednisolone', correct: false }] },
  {
    text: 'Which help inhaler technique?',
    options: [{ text: 'A spacer', correct: true }, { text: 'Holding the breath for a minute', correct: false }, { text: 'One puff at a time', correct: true }, { text: 'Shaking after the puff', correct: false }],
  },
]

describe.each(databaseTargets())('learning hub, reader API (%s)', (target) => {
  let app: TestApp
  let core: Core
  let reader: SignedIn
  let other: SignedIn
  let author: SignedIn
  let categoryId: number
  let categorySlug: string

  beforeAll(async () => {
    app = await startTestApp({ target })
    core = app.booted.core
    reader = await userWithSession(app, 'user', 'reader')
    other = await userWithSession(app, 'user', 'other')
    author = await userWithSession(app, 'moderator', 'author')
    categorySlug = unique('respiratory')
    ;({ id: categoryId } = await createCategory(core, { name: 'Respiratory', slug: categorySlug, description: 'Airways & <lungs>' }))
  })
  afterAll(() => app.close())

  const content = (over: Partial<ContentInput> = {}): ContentInput => ({
    title: 'Asthma inhaler technique', slug: unique('asthma'), body: '# Inhalers\n\nUse a **spacer** with a metered dose inhaler.', categoryId, ...over,
  })
  const make = async (over: Partial<ContentInput> = {}) => {
    const input = content(over)
    const { id } = await createContent(core, input, author.user.id)
    return { id, slug: input.slug }
  }
  const ok = async <T>(res: Response): Promise<T> => {
    const text = await res.text()
    expect(res.status, text).toBe(200)
    return JSON.parse(text) as T
  }
  const failure = async (res: Response, status: number, code?: string): Promise<ErrorBody> => {
    const json = (await res.json()) as ErrorBody
    expect(res.status, JSON.stringify(json)).toBe(status)
    expect(json.success).toBe(false)
    if (code) expect(json.code).toBe(code)
    return json
  }
  const refused = async (p: Promise<unknown>, status: number, code: string) => {
    const err = await p.then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(HttpError)
    expect((err as HttpError).status).toBe(status)
    expect((err as HttpError).code).toBe(code)
  }
  const read = (slug: string, who: SignedIn = reader) => app.get(`/api/learning/content/${slug}`, asUser(who))
  const submit = (body: unknown, who: SignedIn = reader) => app.post('/api/learning/submit-quiz', body, asUser(who))
  const submissions = async (contentId: number) =>
    (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_quiz_submissions where content_id = ${contentId}`)[0]!.n

  it('refuses every reader route without a session (401)', async () => {
    const { id, slug } = await make({ questions: QUIZ, type: 'presentation' })
    for (const res of [
      await app.get('/api/learning/categories', asUser(null)),
      await app.get('/api/learning/feed', asUser(null)),
      await app.get(`/api/learning/category/${categorySlug}`, asUser(null)),
      await app.get(`/api/learning/content/${slug}`, asUser(null)),
      await app.get(`/api/learning/content/${slug}/slides`, asUser(null)),
      await app.post('/api/learning/submit-quiz', { contentId: id, answers: [] }, asUser(null)),
      await app.get('/api/learning/search?q=inhaler', asUser(null)),
      await app.get('/api/learning/search/semantic?q=inhaler', asUser(null)),
      await app.get('/api/learning/search/hybrid?q=inhaler', asUser(null)),
    ]) await failure(res, 401)
    expect(await submissions(id)).toBe(0)
  })

  it('lists the categories by name with their count of published content', async () => {
    const slug = unique('a-cardiology')
    const { id } = await createCategory(core, { name: 'Cardiology', slug })
    await make({ categoryId: id })
    await make({ categoryId: id })
    await make({ categoryId: id, published: false })
    const list = await ok<Array<{ id: number; name: string; slug: string; description: string; content_count: number }>>(
      await app.get('/api/learning/categories', asUser(reader)))
    expect(list.find((c) => c.id === id)).toEqual({ id, name: 'Cardiology', slug, description: '', content_count: 2 })
    expect(list.find((c) => c.id === categoryId)?.description).toBe('Airways & <lungs>')
    const names = list.map((c) => c.name.toLowerCase())
    expect(names).toEqual([...names].sort())
  })

  it('pages the feed newest first: limit default 20, offset default 0, published only, limit above the maximum refused', async () => {
    const { id: feedCategory } = await createCategory(core, { name: 'Feed test', slug: unique('feed') })
    const made: number[] = []
    for (let i = 0; i < FEED_LIMIT_DEFAULT + 5; i++) made.push((await make({ categoryId: feedCategory, title: `Feed item ${i}` })).id)
    const hidden = await make({ categoryId: feedCategory, title: 'Held back', published: false })
    const first = await ok<FeedItem[]>(await app.get('/api/learning/feed', asUser(reader)))
    expect(first.length).toBe(FEED_LIMIT_DEFAULT)
    // The newest is the last one made; ids of the page run newest first.
    expect(first.slice(0, 5).map((e) => e.id)).toEqual(made.slice(-5).reverse())
    expect(first[0]).toEqual({
      id: made.at(-1)!, title: `Feed item ${FEED_LIMIT_DEFAULT + 4}`, slug: expect.any(String), summary: 'Inhalers Use a spacer with a metered dose inhaler.',
      type: 'article', category: 'Feed test', category_slug: expect.stringMatching(/^feed-/), created_at: expect.any(String),
    })
    expect(first.some((e) => e.id === hidden.id)).toBe(false)
    const second = await ok<FeedItem[]>(await app.get('/api/learning/feed?limit=5&offset=5', asUser(reader)))
    expect(second.map((e) => e.id)).toEqual(first.slice(5, 10).map((e) => e.id))
    expect(await ok<FeedItem[]>(await app.get('/api/learning/feed?offset=100000', asUser(reader)))).toEqual([])
    await failure(await app.get(`/api/learning/feed?limit=${FEED_LIMIT_MAX + 1}`, asUser(reader)), 400, 'invalid_input')
    await failure(await app.get('/api/learning/feed?offset=-1', asUser(reader)), 400, 'invalid_input')
    const published = (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content where published`)[0]!.n
    expect(published).toBeLessThan(FEED_LIMIT_MAX)
    expect((await ok<FeedItem[]>(await app.get(`/api/learning/feed?limit=${FEED_LIMIT_MAX}`, asUser(reader)))).length).toBe(published)
  })

  it('lists one category\'s published content by its slug; an unknown slug is 404', async () => {
    const slug = unique('derm')
    const { id } = await createCategory(core, { name: 'Dermatology', slug })
    const a = await make({ categoryId: id, title: 'Eczema' })
    const b = await make({ categoryId: id, title: 'Sunburn' })
    await make({ categoryId: id, title: 'Draft', published: false })
    await make({ title: 'Elsewhere' })
    const list = await ok<FeedItem[]>(await app.get(`/api/learning/category/${slug}`, asUser(reader)))
    expect(list.map((e) => [e.id, e.title, e.category, e.category_slug])).toEqual([[b.id, 'Sunburn', 'Dermatology', slug], [a.id, 'Eczema', 'Dermatology', slug]])
    await failure(await app.get(`/api/learning/category/${unique('nope')}`, asUser(reader)), 404, 'category_not_found')
  })

  it('reads content by slug with its category, the quiz without the answers, and no progress yet', async () => {
    const { id, slug } = await make({ questions: QUIZ, summary: 'How to use a spacer' })
    const res = await read(slug)
    const raw = await res.clone().text()
    const body = await ok<ContentBody>(res)
    expect(body).toEqual({
      id, title: 'Asthma inhaler technique', slug, type: 'article', summary: 'How to use a spacer',
      category: { id: categoryId, name: 'Respiratory', slug: categorySlug, description: 'Airways & <lungs>' },
      body: '# Inhalers\n\nUse a **spacer** with a metered dose inhaler.', has_slides: false,
      questions: [
        { id: 1, text: 'First-line reliever?', multiple: false, options: [{ id: 1, text: 'Montelukast' }, { id: 2, text: 'Salbutamol' }, { id: 3, text: 'Prednisolone' }] },
        {
          id: 2, text: 'Which help inhaler technique?', multiple: true,
          options: [{ id: 4, text: 'A spacer' }, { id: 5, text: 'Holding the breath for a minute' }, { id: 6, text: 'One puff at a time' }, { id: 7, text: 'Shaking after the puff' }],
        },
      ],
      progress: { completed: false, score: null, total: null, latest_score: null, latest_total: null, attempts: 0, last_submitted_at: null },
      created_at: expect.any(String), updated_at: expect.any(String),
    })
    expect(raw).not.toContain('correct')
    await failure(await read(unique('missing')), 404, 'content_not_found')
  })

  it('makes a summary from the body when the author gives none', async () => {
    const long = `## Heading\n\nSome *emphasis* and a [link](https://example.org) and \`code\`.\n\n${'word '.repeat(100)}`
    const { slug } = await make({ body: long })
    const body = await ok<ContentBody>(await read(slug))
    expect(body.summary.startsWith('Heading Some emphasis and a link and code. word word')).toBe(true)
    expect(body.summary.endsWith('…')).toBe(true)
    expect(body.summary.length).toBeLessThanOrEqual(SUMMARY_AUTO_CHARS + 1)
  })

  it('hides unpublished content from every reader route (404), and shows it once published', async () => {
    const slugOfCategory = unique('hidden-cat')
    const { id: hiddenCategory } = await createCategory(core, { name: 'Hidden things', slug: slugOfCategory })
    const input = content({ categoryId: hiddenCategory, title: 'Zygomatic xylophone quiz', body: 'Zygomatic xylophone body', questions: QUIZ, slides: '# Slide', published: false })
    const { id } = await createContent(core, input, author.user.id)
    await failure(await read(input.slug), 404, 'content_not_found')
    await failure(await app.get(`/api/learning/content/${input.slug}/slides`, asUser(reader)), 404, 'content_not_found')
    await failure(await submit({ contentId: id, answers: [{ questionId: 1, optionIds: [2] }] }), 404, 'content_not_found')
    expect(await submissions(id)).toBe(0)
    expect(await ok<FeedItem[]>(await app.get(`/api/learning/category/${slugOfCategory}`, asUser(reader)))).toEqual([])
    expect((await ok<FeedItem[]>(await app.get(`/api/learning/feed?limit=${FEED_LIMIT_MAX}`, asUser(reader)))).some((e) => e.id === id)).toBe(false)
    for (const mode of ['', '/semantic', '/hybrid']) {
      expect(await ok<FeedItem[]>(await app.get(`/api/learning/search${mode}?q=zygomatic%20xylophone`, asUser(reader)))).toEqual([])
    }
    // Even a moderator reads only published content through the reader routes.
    await failure(await read(input.slug, author), 404, 'content_not_found')

    await updateContent(core, id, { ...input, published: true })
    expect((await ok<ContentBody>(await read(input.slug))).id).toBe(id)
    expect((await ok<FeedItem[]>(await app.get(`/api/learning/category/${slugOfCategory}`, asUser(reader)))).map((e) => e.id)).toEqual([id])
    expect((await ok<FeedItem[]>(await app.get('/api/learning/search?q=zygomatic%20xylophone', asUser(reader)))).map((e) => e.id)).toEqual([id])
    expect((await ok<FeedItem[]>(await app.get(`/api/learning/feed?limit=1`, asUser(reader)))).map((e) => e.id)).toEqual([id])
  })

  describe('slides', () => {
    const hostile = [
      '# Safe title <script>alert(1)</script>',
      '',
      '<img src=x onerror="alert(2)">',
      '',
      '<iframe src="https://evil.example"></iframe>',
      '',
      '[click](javascript:alert(3))',
      '',
      '---',
      '',
      '# Second slide',
      '',
      '- point one',
      '- point two',
      '',
      '<style>section { color: red } </style><script>alert(4)</script>',
    ].join('\n')

    it('renders the slide markdown as a full HTML page with no script, HTML from the markdown shown as text', async () => {
      const { slug } = await make({ title: 'Deck <b>bold</b>', slides: hostile })
      expect((await ok<ContentBody>(await read(slug))).has_slides).toBe(true)
      const res = await app.get(`/api/learning/content/${slug}/slides`, asUser(reader))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const csp = res.headers.get('content-security-policy') ?? ''
      expect(csp).toContain("script-src 'none'")
      expect(csp).toContain("default-src 'none'")
      const html = await res.text()
      expect(html.startsWith('<!doctype html>')).toBe(true)
      expect(html).toContain('<title>Deck &lt;b&gt;bold&lt;/b&gt;</title>')
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
      expect(html).toContain('&lt;img src=x onerror=&quot;alert(2)&quot;&gt;')
      expect(html).toContain('&lt;iframe')
      expect(html).toContain('point two')
      expect(html.toLowerCase()).not.toContain('<script')
      expect(html.toLowerCase()).not.toContain('<iframe')
      expect(html).not.toMatch(/<img[^>]*onerror/i)
      expect(html).not.toContain('href="javascript:')
      // Two slides: two <svg> slide containers.
      expect(html.match(/<svg data-marpit-svg/g)?.length).toBe(2)
    })

    it('answers {success, title, css, slides} to a client that asks for JSON', async () => {
      const { slug } = await make({ title: 'JSON deck', slides: hostile })
      const res = await app.get(`/api/learning/content/${slug}/slides`, { ...asUser(reader), headers: { accept: 'application/json' } })
      const body = await ok<{ success: boolean; title: string; css: string; slides: string[] }>(res)
      expect(body.success).toBe(true)
      expect(body.title).toBe('JSON deck')
      expect(body.slides.length).toBe(2)
      expect(body.css).toContain('div.marpit')
      expect(body.css).not.toContain('<')
      expect(body.slides.join('').toLowerCase()).not.toContain('<script')
      expect(body.slides[0]).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    })

    it('shows a presentation\'s body as its deck; an article without slides is 404 no_slides', async () => {
      const deck = await make({ type: 'presentation', body: '# One\n\n---\n\n# Two\n\n---\n\n# Three' })
      const html = await (await app.get(`/api/learning/content/${deck.slug}/slides`, asUser(reader))).text()
      expect(html.match(/<svg data-marpit-svg/g)?.length).toBe(3)
      const article = await make()
      await failure(await app.get(`/api/learning/content/${article.slug}/slides`, asUser(reader)), 404, 'no_slides')
      await failure(await app.get(`/api/learning/content/${unique('none')}/slides`, asUser(reader)), 404, 'content_not_found')
    })
  })

  describe('quiz submission', () => {
    it('scores a single-answer question and a multi-answer one all-or-nothing', async () => {
      const { id } = await make({ questions: QUIZ })
      const cases: Array<[number[], number[], boolean[]]> = [
        [[2], [4, 6], [true, true]],
        [[1], [4, 6], [false, true]],
        [[2], [4], [true, false]], // one of the two correct options: wrong
        [[2], [4, 5, 6], [true, false]], // both correct plus a wrong one: wrong
        [[2, 3], [6, 4], [false, true]], // two options on a single-answer question: wrong
        [[], [], [false, false]],
      ]
      for (const [first, second, expected] of cases) {
        const body = await ok<QuizBody>(await submit({ contentId: id, answers: [{ questionId: 1, optionIds: first }, { questionId: 2, optionIds: second }] }, other))
        expect(body).toEqual({
          success: true, score: expected.filter(Boolean).length, total: 2,
          results: [{ questionId: 1, correct: expected[0]! }, { questionId: 2, correct: expected[1]! }],
        })
      }
    })

    it('counts a question left out as wrong, and answers results in the quiz\'s order', async () => {
      const { id } = await make({ questions: QUIZ })
      expect(await ok<QuizBody>(await submit({ contentId: id, answers: [{ questionId: 2, optionIds: [6, 4] }] }, other))).toEqual({
        success: true, score: 1, total: 2, results: [{ questionId: 1, correct: false }, { questionId: 2, correct: true }],
      })
      expect(await ok<QuizBody>(await submit({ contentId: id, answers: [] }, other))).toMatchObject({ score: 0, total: 2 })
    })

    it('refuses unknown questions, options of another question, unknown options and repeated questions (422), recording nothing', async () => {
      const { id } = await make({ questions: QUIZ })
      const bad: Array<[unknown[], string, string]> = [
        [[{ questionId: 3, optionIds: [1] }], 'unknown_question', 'answers.0.questionId'],
        [[{ questionId: 1, optionIds: [2] }, { questionId: 2, optionIds: [2] }], 'unknown_option', 'answers.1.optionIds'],
        [[{ questionId: 1, optionIds: [99] }], 'unknown_option', 'answers.0.optionIds'],
        [[{ questionId: 1, optionIds: [2] }, { questionId: 1, optionIds: [2] }], 'duplicate_answer', 'answers.1.questionId'],
      ]
      for (const [answers, code, field] of bad) {
        const err = await failure(await submit({ contentId: id, answers }), 422, code)
        expect(Object.keys(err.fields ?? {})).toEqual([field])
      }
      await failure(await submit({ contentId: id, answers: [{ questionId: 1, optionIds: ['two'] }] }), 400, 'invalid_input')
      await failure(await submit({ contentId: id }), 400, 'invalid_input')
      await failure(await submit({ contentId: 2_147_483_647, answers: [] }), 404, 'content_not_found')
      const plain = await make()
      await failure(await submit({ contentId: plain.id, answers: [] }), 422, 'no_questions')
      expect(await submissions(id)).toBe(0)
      expect(await submissions(plain.id)).toBe(0)
    })

    it('records progress per reader and content: attempts, the best submission and the latest', async () => {
      const { id, slug } = await make({ questions: QUIZ })
      const answer = (first: number[], second: number[]) =>
        submit({ contentId: id, answers: [{ questionId: 1, optionIds: first }, { questionId: 2, optionIds: second }] })
      await ok(await answer([2], [4]))
      let progress = (await ok<ContentBody>(await read(slug))).progress
      expect(progress).toEqual({ completed: true, score: 1, total: 2, latest_score: 1, latest_total: 2, attempts: 1, last_submitted_at: expect.any(String) })
      await ok(await answer([2], [4, 6]))
      await ok(await answer([1], [5]))
      progress = (await ok<ContentBody>(await read(slug))).progress
      expect(progress).toMatchObject({ completed: true, score: 2, total: 2, latest_score: 0, latest_total: 2, attempts: 3 })
      // Another reader's progress is their own.
      expect((await ok<ContentBody>(await read(slug, other))).progress).toMatchObject({ completed: false, score: null, attempts: 0 })
      expect(await submissions(id)).toBe(3)
    })

    it('counts every one of parallel submissions and keeps the best', async () => {
      const { id, slug } = await make({ questions: QUIZ })
      const n = 8
      const results = await Promise.all(Array.from({ length: n }, (_, i) =>
        submit({ contentId: id, answers: [{ questionId: 1, optionIds: [i === 5 ? 2 : 1] }, { questionId: 2, optionIds: [4, 6] }] }, other)))
      for (const res of results) expect(res.status).toBe(200)
      expect((await ok<ContentBody>(await read(slug, other))).progress).toMatchObject({ completed: true, score: 2, total: 2, attempts: n })
      expect(await submissions(id)).toBe(n)
    })
  })

  describe('authoring services', () => {
    it('keeps content and category slugs unique (409 slug_taken), also when created at the same time', async () => {
      const slug = unique('twin')
      const settled = await Promise.allSettled(Array.from({ length: 4 }, () => createContent(core, content({ slug }), author.user.id)))
      expect(settled.filter((s) => s.status === 'fulfilled').length).toBe(1)
      for (const s of settled.filter((s) => s.status === 'rejected')) {
        expect((s as PromiseRejectedResult).reason).toBeInstanceOf(HttpError)
        expect(((s as PromiseRejectedResult).reason as HttpError).code).toBe('slug_taken')
        expect(((s as PromiseRejectedResult).reason as HttpError).status).toBe(409)
      }
      expect((await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content where slug = ${slug}`)[0]!.n).toBe(1)
      const other = await make()
      await refused(updateContent(core, other.id, content({ slug })), 409, 'slug_taken')
      await refused(createCategory(core, { name: 'Again', slug: categorySlug }), 409, 'slug_taken')
      const { id } = await createCategory(core, { name: 'Moved', slug: unique('moved') })
      await refused(updateCategory(core, id, { name: 'Moved', slug: categorySlug }), 409, 'slug_taken')
      // A content slug may equal a category slug: each kind has its own.
      await make({ slug: categorySlug })
    })

    it('refuses bad slugs, unknown categories and questions without a correct option (422), storing nothing', async () => {
      const before = (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content`)[0]!.n
      await refused(createContent(core, content({ slug: 'Not A Slug' }), null), 422, 'invalid_slug')
      await refused(createContent(core, content({ categoryId: 2_000_000_000 }), null), 422, 'unknown_category')
      await refused(createContent(core, content({
        questions: [{ text: 'No answer', options: [{ text: 'a', correct: false }, { text: 'b', correct: false }] }],
      }), null), 422, 'no_correct_option')
      await refused(createContent(core, content({ title: '   ' }), null), 422, 'blank_field')
      expect((await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content`)[0]!.n).toBe(before)
      await refused(updateContent(core, 2_000_000_000, content()), 404, 'content_not_found')
      await refused(deleteContent(core, 2_000_000_000), 404, 'content_not_found')
    })

    it('deletes a category only when no content is in it (409 category_in_use)', async () => {
      const { id } = await createCategory(core, { name: 'Short-lived', slug: unique('short') })
      const c = await make({ categoryId: id, published: false })
      await refused(deleteCategory(core, id), 409, 'category_in_use')
      await deleteContent(core, c.id)
      await deleteCategory(core, id)
      expect((await listCategories(core)).some((k) => k.id === id)).toBe(false)
      await refused(deleteCategory(core, id), 404, 'category_not_found')
    })

    it('shows authors their content with the answers, unpublished too, and the hub\'s figures', async () => {
      const { id, slug } = await make({ questions: QUIZ, published: false, slides: '# Deck' })
      const full = await getContentForAuthor(core, id)
      expect(full).toMatchObject({
        id, slug, published: false, published_at: null, categoryId, category: 'Respiratory', slides: '# Deck', author_id: author.user.id,
      })
      expect(full.questions[1]!.options.map((o) => [o.id, o.correct])).toEqual([[4, true], [5, false], [6, true], [7, false]])
      expect((await listContentForAuthors(core)).find((c) => c.id === id)).toMatchObject({ published: false, question_count: 2 })
      await refused(getContentForAuthor(core, 2_000_000_000), 404, 'content_not_found')

      const before = await learningStats(core)
      await updateContent(core, id, content({ slug, questions: QUIZ }))
      expect((await getContentForAuthor(core, id)).published_at).not.toBeNull()
      await ok(await submit({ contentId: id, answers: [{ questionId: 1, optionIds: [2] }] }))
      const after = await learningStats(core)
      expect(after.totalQuizSubmissions).toBe(before.totalQuizSubmissions + 1)
      expect(after.totalContent).toBe((await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content`)[0]!.n)
      const [avg] = await app.db.sql<{ a: number }>`select avg(100.0 * score / total)::float8 as a from clinical.learning_quiz_submissions`
      expect(after.averageScore).toBeCloseTo(avg!.a, 1)
    })

    it('keeps a reader\'s progress when the content is updated, and drops it with the content', async () => {
      const { id, slug } = await make({ questions: QUIZ })
      await ok(await submit({ contentId: id, answers: [{ questionId: 1, optionIds: [2] }] }))
      await updateContent(core, id, content({ slug, title: 'Renamed' }))
      const body = await ok<ContentBody>(await read(slug))
      expect(body.title).toBe('Renamed')
      expect(body.questions.length).toBe(2) // absent questions are kept
      expect(body.progress.attempts).toBe(1)
      await deleteContent(core, id)
      await failure(await read(slug), 404, 'content_not_found')
      expect((await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_progress where content_id = ${id}`)[0]!.n).toBe(0)
    })
  })
})

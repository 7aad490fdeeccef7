// The author's studio pages through the real app: moderators and admins only (403 for a plain user, the sign-in
// page signed out); the content list with held-back content; the editor as a plain form (create with a quiz, blank
// rows ignored, a question without a correct option and a slug clash re-rendered with the message by the field,
// edit, delete with its confirm step); categories (add, click-to-edit, delete with its confirm step, refused while in
// use); the slide preview as an htmx fragment and as the page without JavaScript; writing and refining with AI
// against the project's OpenAI-compatible test server (and its failures, the author's text kept); the PowerPoint
// download; cross-site posts refused; user text escaped.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { CATEGORY_NAME_MAX, OPTIONS_MIN, REFERENCE_FILES_MAX, TITLE_MAX } from '../plugins/learning/model'
import * as learning from '../plugins/learning/service'
import { listFeed, readContent } from '../plugins/learning/service-reader'
import { HttpError } from '../src/core/errors'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  CLINICAL_PASSWORD, cookieValue, EVIL, flushAudit, freshIp, HTMX, insertUser, outsideAttributes, type PageClinician as Clinician,
  textareaOf, unescapeHtml, uniqueEmail, XSS, XSS_ESCAPED,
} from './support/clinical'

setDefaultTimeout(60_000)

function inputValue(page: string, id: string): string {
  const m = new RegExp(`<input id="${id}"[^>]*value="([^"]*)"`).exec(page)
  if (!m) throw new Error(`no input ${id}`)
  return unescapeHtml(m[1]!)
}
const fieldError = (page: string, id: string) => unescapeHtml(new RegExp(`<span class="field-error" id="${id}-error"[^>]*>([^<]*)</span>`).exec(page)?.[1] ?? '')
const flashOf = (page: string) => unescapeHtml(/<div id="flash" class="flash (?:ok|error)" role="status"><span>([^<]*)<\/span>/.exec(page)?.[1] ?? '')

let seq = 0
const unique = (base: string) => `${base}-${Date.now().toString(36)}-${++seq}`

describe.each(databaseTargets())('learning studio pages [%s]', (target) => {
  let ai: AiServer
  let t: TestApp
  let mod: Clinician
  let reader: Clinician
  let categoryId: number

  const signInAs = async (role: 'user' | 'moderator' | 'admin', tag: string): Promise<Clinician> => {
    const email = uniqueEmail(tag)
    const id = await insertUser(t, { email, name: `Studio ${role}`, role })
    const res = await t.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
    expect(res.status).toBe(303)
    return { id, cookie: `app_auth=${cookieValue(res)}` }
  }
  const get = (path: string, who: Clinician, headers: Record<string, string> = {}) =>
    t.get(path, { headers: { accept: 'text/html', cookie: who.cookie, ...headers } })
  const page = async (path: string, who: Clinician = mod, headers: Record<string, string> = {}) => {
    const res = await get(path, who, headers)
    expect(res.status, path).toBe(200)
    return res.text()
  }
  const post = (path: string, fields: Record<string, string>, who: Clinician = mod, headers: Record<string, string> = {}) =>
    t.form(path, fields, { headers: { cookie: who.cookie, ...headers }, ip: freshIp() })
  const multipart = (path: string, fields: Record<string, string>, files: File[] = [], who: Clinician = mod) => {
    const body = new FormData()
    for (const [k, v] of Object.entries(fields)) body.append(k, v)
    for (const f of files) body.append('files', f)
    return t.request(path, { method: 'POST', body, headers: { accept: 'text/html', cookie: who.cookie }, ip: freshIp() })
  }
  const auditActions = async (userId: number) => {
    await flushAudit(t)
    return (await t.db.sql<{ action: string }>`select action from clinical.audit_log where user_id = ${userId} order by id`).map((r) => r.action)
  }
  /** The editor's form of an article as the browser posts it; `over` replaces or adds fields. */
  const articleForm = (over: Record<string, string> = {}) => ({
    id: '', title: 'Inhaler technique', slug: unique('inhaler'), categoryId: String(categoryId), type: 'article', summary: '',
    published: 'true', body: '# Inhalers\n\nUse a spacer.', slides: '', instructions: '', refine_target: 'body', model: TEST_MODEL, ...over,
  })
  /** Two questions (the second multi-answer) and a blank third one with blank option rows, as the page posts them. */
  const quizFields = {
    'questions.0.text': 'First-line reliever?',
    'questions.0.options.0.text': 'Montelukast', 'questions.0.options.1.text': 'Salbutamol', 'questions.0.options.1.correct': 'true',
    'questions.0.options.2.text': '', 'questions.0.options.3.text': '',
    'questions.1.text': 'Which help inhaler technique?',
    'questions.1.options.0.text': 'A spacer', 'questions.1.options.0.correct': 'true', 'questions.1.options.1.text': 'Shaking after the puff',
    'questions.1.options.2.text': 'One puff at a time', 'questions.1.options.2.correct': 'true', 'questions.1.options.3.text': '',
    'questions.2.text': '', 'questions.2.options.0.text': '', 'questions.2.options.1.text': '', 'questions.2.options.2.text': '',
    'questions.2.options.3.text': '',
  }
  const create = async (over: Record<string, string> = {}, fields: Record<string, string> = articleForm(over)) => {
    const res = await post('/studio/new', fields)
    expect(res.status, await res.clone().text()).toBe(303)
    const location = res.headers.get('location')!
    const id = Number(/^\/studio\/(\d+)\?notice=created$/.exec(location)?.[1])
    expect(id).toBeGreaterThan(0)
    return { id, location }
  }
  const notFound = (promise: Promise<unknown>) => promise.then(() => null, (e: unknown) => (e instanceof HttpError ? e.status : e))

  beforeAll(async () => {
    ai = await startAiServer()
    t = await startTestApp({ target, env: { ...ai.env, AI_TIMEOUT_MS: '1500' } })
    mod = await signInAs('moderator', 'studio-mod')
    reader = await signInAs('user', 'studio-reader')
    ;({ id: categoryId } = await learning.createCategory(t.booted.core, { name: 'Respiratory', slug: unique('respiratory') }))
  })
  afterAll(async () => {
    await t.close()
    await ai.close()
  })

  describe('who may enter', () => {
    it('signed out: the sign-in page; a plain user: the 403 page on every page and form; moderators and admins: the studio', async () => {
      const out = await t.get('/studio', { headers: { accept: 'text/html' } })
      expect(out.status).toBe(303)
      expect(out.headers.get('location')).toBe('/')
      for (const path of ['/studio', '/studio/categories', '/studio/new?type=article']) {
        const res = await get(path, reader)
        expect(res.status, path).toBe(403)
        expect(await res.text()).toContain('The studio is for moderators and admins.')
      }
      expect((await post('/studio/new', articleForm(), reader)).status).toBe(403)
      expect((await post('/studio/categories', { name: 'X', slug: unique('x') }, reader)).status).toBe(403)
      expect(await page('/studio', await signInAs('admin', 'studio-admin'))).toContain('<h1>Studio</h1>')
      const body = await page('/studio')
      expect(body).toContain('href="/studio/new?type=article"')
      expect(body).toContain('href="/studio/new?type=presentation"')
      expect(body).toContain('<script src="/static/studio.js" defer></script>')
      expect((await t.get('/static/studio.js')).status).toBe(200)
    })

    it('refuses a form posted from another site (403), and changes nothing', async () => {
      const slug = unique('evil')
      const res = await post('/studio/new', articleForm({ slug }), mod, EVIL)
      expect(res.status).toBe(403)
      expect((await learning.listContentForAuthors(t.booted.core)).some((c) => c.slug === slug)).toBe(false)
      expect((await post('/studio/categories', { name: 'Evil', slug: unique('evil') }, mod, EVIL)).status).toBe(403)
    })
  })

  describe('the studio', () => {
    it('lists every content, held back too, with its type, category, status, questions and last change; the figures in words', async () => {
      const slug = unique('held')
      await learning.createContent(t.booted.core, {
        title: 'Held back deck', slug, body: '', categoryId, type: 'presentation', published: false, slides: '# One',
        questions: [{ text: 'Q?', options: [{ text: 'a', correct: true }, { text: 'b', correct: false }] }],
      }, mod.id)
      const body = await page('/studio')
      const row = new RegExp(`<tr id="content-\\d+"><th scope="row"><a href="/studio/\\d+">Held back deck</a></th><td>Presentation</td><td>Respiratory</td>`
        + '<td><span class="studio-status studio-held">Held back</span></td><td>1</td><td><time datetime=')
      expect(body).toMatch(row)
      expect(body).toContain('<dt>Content, published or held back</dt>')
      expect(body).toContain('No quiz submitted yet')
    })
  })

  describe('the editor', () => {
    it('new content: the form with the published box ticked, one blank question with blank option rows, and the hint', async () => {
      const body = await page('/studio/new?type=presentation')
      expect(body).toContain('<h1>New presentation</h1>')
      expect(body).toMatch(/<input type="checkbox" id="studio-published" name="published" value="true" checked/)
      expect(body).toContain('<option value="presentation" selected>Presentation</option>')
      expect(body).toContain('name="questions.0.text"')
      expect(body).toContain('name="questions.0.options.3.text"')
      expect(body).not.toContain('name="questions.1.text"')
      expect(body).toContain('Blank questions and blank options are ignored when you save.')
      expect(body).toContain('<template data-studio-question-template>')
      expect(body).toContain('action="/studio/new" method="post" hx-boost="false"')
    })

    it('creates an article with a quiz without JavaScript: 303 to the editor, the quiz stored with its correct options, blank rows ignored', async () => {
      const { id, location } = await create(quizFields)
      const c = await learning.getContentForAuthor(t.booted.core, id)
      expect(c.questions.map((q) => q.text)).toEqual(['First-line reliever?', 'Which help inhaler technique?'])
      expect(c.questions[0]!.options.map((o) => [o.text, o.correct])).toEqual([['Montelukast', false], ['Salbutamol', true]])
      expect(c.questions[1]!.options.map((o) => [o.text, o.correct])).toEqual([['A spacer', true], ['Shaking after the puff', false], ['One puff at a time', true]])
      expect(c.published).toBe(true)
      expect((await readContent(t.booted.core, reader.id, c.slug)).questions[1]!.multiple).toBe(true)
      const editor = await page(location)
      expect(flashOf(editor)).toBe('The content is saved.')
      expect(inputValue(editor, 'studio-title')).toBe('Inhaler technique')
      expect(textareaOf(editor, 'studio-q-1-text')).toBe('Which help inhaler technique?')
      expect(editor).toMatch(/id="studio-q-1-o-2-correct" name="questions.1.options.2.correct" type="checkbox" value="true" checked/)
      expect(editor).toContain(`href="/learning/read/${c.slug}"`)
      // the summary the service made from the text stays the service's: blank in the form
      expect(c.summary).toBe('Inhalers Use a spacer.')
      expect(textareaOf(editor, 'studio-summary')).toBe('')
      expect(await auditActions(mod.id)).toContain('learning_content_created')
    })

    it('published unticked: saved but held back, so readers do not see it', async () => {
      const { published: _, ...unticked } = articleForm()
      const { id } = await create({}, unticked)
      const c = await learning.getContentForAuthor(t.booted.core, id)
      expect(c.published).toBe(false)
      expect(await notFound(readContent(t.booted.core, reader.id, c.slug))).toBe(404)
      expect((await listFeed(t.booted.core, 100)).some((f) => f.id === id)).toBe(false)
      const editor = await page(`/studio/${id}`)
      expect(editor).toContain('Held back: readers do not see it yet.')
      expect(editor).not.toContain('View as a reader')
    })

    it('a question without a correct option: 422, the message by that question\'s options, everything kept, nothing saved', async () => {
      const slug = unique('no-correct')
      const res = await post('/studio/new', articleForm({
        slug, ...quizFields, 'questions.1.options.0.correct': '', 'questions.1.options.2.correct': '',
      }))
      expect(res.status).toBe(422)
      const body = await res.text()
      expect(fieldError(body, 'studio-q-1-options')).toBe('Mark at least one option correct')
      expect(body).toContain('aria-describedby="studio-q-1-options-error"')
      expect(body).toContain('Not saved. Check the fields marked below.')
      expect(body).toContain('<li><a href="#studio-q-1-options">Question 2, options: Mark at least one option correct</a></li>')
      expect(textareaOf(body, 'studio-body')).toBe('# Inhalers\n\nUse a spacer.')
      expect(inputValue(body, 'studio-q-1-o-2-text')).toBe('One puff at a time')
      expect((await learning.listContentForAuthors(t.booted.core)).some((c) => c.slug === slug)).toBe(false)

      const few = await post('/studio/new', articleForm({ 'questions.0.text': 'Alone?', 'questions.0.options.0.text': 'Yes', 'questions.0.options.0.correct': 'true' }))
      expect(few.status).toBe(422)
      expect(fieldError(await few.text(), 'studio-q-0-options')).toBe(`Give at least ${OPTIONS_MIN} options`)
    })

    // A slug clash (the API's 409 slug_taken) re-renders the form with 422, like every refused form of the studio:
    // htmx swaps 422 only, and the page shows the message by the slug field.
    it('a slug clash: 422 with the message by the slug field, the text kept', async () => {
      const { id } = await create()
      const taken = (await learning.getContentForAuthor(t.booted.core, id)).slug
      const res = await post('/studio/new', articleForm({ slug: taken, title: 'Another one' }))
      expect(res.status).toBe(422)
      const body = await res.text()
      expect(fieldError(body, 'studio-slug')).toBe('Other content already has this slug: choose another.')
      expect(body).toMatch(/id="studio-slug"[^>]*aria-invalid="true"/)
      expect(inputValue(body, 'studio-title')).toBe('Another one')
      const bad = await post('/studio/new', articleForm({ slug: 'Not A Slug', categoryId: '' }))
      expect(bad.status).toBe(422)
      const badBody = await bad.text()
      expect(fieldError(badBody, 'studio-category')).toBe('Choose a category')
      const long = await post('/studio/new', articleForm({ title: 't'.repeat(TITLE_MAX + 1) }))
      expect(long.status).toBe(422)
      expect(fieldError(await long.text(), 'studio-title')).toBe(`At most ${TITLE_MAX} characters`)
    })

    it('edits and saves (303 with a notice), then deletes after the confirm step', async () => {
      const { id } = await create(quizFields)
      const slug = unique('edited')
      const saved = await post(`/studio/${id}`, articleForm({ id: String(id), title: 'Edited title', slug, ...quizFields, 'questions.0.text': 'Reliever?' }))
      expect(saved.status).toBe(303)
      expect(saved.headers.get('location')).toBe(`/studio/${id}?notice=saved`)
      const c = await learning.getContentForAuthor(t.booted.core, id)
      expect([c.title, c.slug, c.questions[0]!.text]).toEqual(['Edited title', slug, 'Reliever?'])
      expect(flashOf(await page(`/studio/${id}?notice=saved`))).toBe('Saved.')

      const confirm = await page(`/studio/${id}/delete`)
      expect(confirm).toContain('Delete the article “Edited title” with its quiz and its readers&#x27; progress?')
      expect(confirm).toContain(`action="/studio/${id}/delete" method="post"`)
      const deleted = await post(`/studio/${id}/delete`, {})
      expect(deleted.status).toBe(303)
      expect(deleted.headers.get('location')).toBe('/studio?notice=deleted')
      expect(await notFound(learning.getContentForAuthor(t.booted.core, id))).toBe(404)
      expect((await get(`/studio/${id}`, mod)).status).toBe(404)
      expect(await auditActions(mod.id)).toEqual(expect.arrayContaining(['learning_content_updated', 'learning_content_deleted']))
    })

    it('escapes user text: a <script> title and question arrive as text', async () => {
      const { id } = await create({ title: `Title ${XSS}`, 'questions.0.text': `Question ${XSS}`, 'questions.0.options.0.text': `Option ${XSS}`,
        'questions.0.options.0.correct': 'true', 'questions.0.options.1.text': 'B' })
      const editor = await page(`/studio/${id}`)
      expect(editor).toContain(`<h1>Edit “Title ${XSS_ESCAPED}”</h1>`)
      expect(editor).toContain(`Question ${XSS_ESCAPED}</textarea>`)
      expect(outsideAttributes(editor)).not.toContain(XSS)
      const list = await page('/studio')
      expect(list).toContain(`Title ${XSS_ESCAPED}</a>`)
      expect(outsideAttributes(list)).not.toContain(XSS)
    })
  })

  describe('categories', () => {
    it('adds (303, or the fragment with htmx), refuses a taken slug by its field, edits in place, deletes after the confirm step', async () => {
      const slug = unique('cardio')
      const added = await post('/studio/categories', { name: 'Cardiology', slug, description: 'Hearts' })
      expect(added.status).toBe(303)
      expect(added.headers.get('location')).toBe('/studio/categories?notice=added')
      const c = (await learning.listCategories(t.booted.core)).find((k) => k.slug === slug)!
      expect(await page('/studio/categories?notice=added')).toContain(`<tr id="category-${c.id}"><th scope="row">Cardiology</th>`)

      const clash = await post('/studio/categories', { name: 'Again', slug }, mod, HTMX)
      expect(clash.status).toBe(422)
      const clashBody = await clash.text()
      expect(clashBody).toStartWith('<div id="studio-categories">')
      expect(fieldError(clashBody, 'category-new-slug')).toBe('Another category already has this slug: choose another.')
      expect(inputValue(clashBody, 'category-new-name')).toBe('Again')

      const viaHtmx = await post('/studio/categories', { name: 'Neuro', slug: unique('neuro') }, mod, HTMX)
      expect(viaHtmx.status).toBe(200)
      expect(await viaHtmx.text()).toContain('The category was added.')

      const edit = await (await get(`/studio/categories/${c.id}/edit`, mod, HTMX)).text()
      expect(edit).toStartWith(`<tr id="category-${c.id}">`)
      expect(edit).toContain(`hx-post="/studio/categories/${c.id}" hx-target="#category-${c.id}" hx-swap="outerHTML"`)
      const saved = await post(`/studio/categories/${c.id}`, { name: 'Cardiology & vessels', slug, description: '' }, mod, HTMX)
      expect(saved.status).toBe(200)
      expect(await saved.text()).toContain('<th scope="row">Cardiology &amp; vessels</th>')
      expect((await post(`/studio/categories/${c.id}`, { name: ' ', slug }, mod)).status).toBe(422)
      const long = await post(`/studio/categories/${c.id}`, { name: 'n'.repeat(CATEGORY_NAME_MAX + 1), slug }, mod, HTMX)
      expect(long.status).toBe(422)
      expect(fieldError(await long.text(), `category-${c.id}-name`)).toBe(`At most ${CATEGORY_NAME_MAX} characters`)

      const confirmRow = await (await get(`/studio/categories/${c.id}/delete`, mod, HTMX)).text()
      expect(confirmRow).toContain('Delete the category “Cardiology &amp; vessels”?')
      expect(await page(`/studio/categories/${c.id}/delete`)).toContain('<h1>Delete a category</h1>')
      const gone = await post(`/studio/categories/${c.id}/delete`, {})
      expect(gone.status).toBe(303)
      expect(gone.headers.get('location')).toBe('/studio/categories?notice=category-deleted')
      expect((await learning.listCategories(t.booted.core)).some((k) => k.id === c.id)).toBe(false)
      expect(await auditActions(mod.id)).toEqual(expect.arrayContaining(['learning_category_created', 'learning_category_updated', 'learning_category_deleted']))
    })

    it('a category with content (held back too) is not deleted: the message in words by the confirm step', async () => {
      const { id } = await learning.createCategory(t.booted.core, { name: 'In use', slug: unique('in-use') })
      const { published: _, ...heldBack } = articleForm({ categoryId: String(id) })
      await create({}, heldBack)
      const plain = await post(`/studio/categories/${id}/delete`, {})
      expect(plain.status).toBe(422)
      expect(await plain.text()).toContain('Move or delete the content of this category first: it still holds content, published or held back.')
      const viaHtmx = await post(`/studio/categories/${id}/delete`, {}, mod, HTMX)
      expect(viaHtmx.status).toBe(422)
      expect(fieldError(await viaHtmx.text(), `category-${id}-delete`)).toContain('Move or delete the content of this category first')
      expect((await learning.listCategories(t.booted.core)).some((k) => k.id === id)).toBe(true)
    })
  })

  describe('slides', () => {
    const deck = '---\nmarp: true\n---\n\n# One\n\n- a\n\n---\n\n# Two <b>bold</b>\n'

    it('previews the deck: the fragment for htmx (one svg per slide), the editor with the preview without JavaScript', async () => {
      const res = await post('/studio/preview', { slides: deck }, mod, HTMX)
      expect(res.status).toBe(200)
      const fragment = await res.text()
      expect(fragment).toStartWith('<style>div.marpit')
      expect(fragment.match(/<svg /g)).toHaveLength(2)
      expect(fragment).toContain('&lt;b&gt;bold&lt;/b&gt;')
      expect(fragment).not.toContain('<html')
      expect(await (await post('/studio/preview', { slides: '  ' }, mod, HTMX)).text()).toContain('No slides yet')

      const full = await post('/studio/preview', articleForm({ type: 'presentation', title: 'My deck', slides: deck }))
      expect(full.status).toBe(200)
      const body = await full.text()
      expect(body).toContain('<html')
      expect(inputValue(body, 'studio-title')).toBe('My deck')
      expect(textareaOf(body, 'studio-slides')).toBe(deck)
      expect(body.match(/<svg /g)).toHaveLength(2)
      expect(body).toContain('action="/studio/new"')
      expect(body).toContain('hx-post="/studio/preview" hx-trigger="input changed delay:600ms" hx-target="#studio-preview"')
    })

    it('downloads the deck as PowerPoint; an empty deck is the editor with a message', async () => {
      const res = await post('/studio/pptx', articleForm({ title: 'Asthma: the basics', slides: deck }))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.presentationml.presentation')
      expect(res.headers.get('content-disposition')).toStartWith('attachment; filename="Asthma the basics.pptx"')
      const bytes = new Uint8Array(await res.arrayBuffer())
      expect(String.fromCharCode(bytes[0]!, bytes[1]!)).toBe('PK')

      const empty = await post('/studio/pptx', articleForm({ slides: '' }))
      expect(empty.status).toBe(422)
      const body = await empty.text()
      expect(fieldError(body, 'studio-slides')).toBe('There are no slides to download yet: write the slide text first.')
      expect(inputValue(body, 'studio-title')).toBe('Inhaler technique')
    })
  })

  describe('writing with AI', () => {
    it('writes an article: the editor with the markdown in the text box, title and slug suggested, nothing saved', async () => {
      ai.reset()
      ai.reply(() => '# Spacer use\n\nShake, attach, breathe.')
      const before = (await learning.listContentForAuthors(t.booted.core)).length
      const res = await multipart('/studio/generate', { topic: 'Spacers for children', type: 'article', model: TEST_MODEL }, [
        new File(['Spacers help small children.'], 'notes.txt', { type: 'text/plain' }),
        new File(['Masks fit under two years.'], 'masks.md', { type: 'text/markdown' }),
      ])
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(textareaOf(body, 'studio-body')).toBe('# Spacer use\n\nShake, attach, breathe.')
      expect(inputValue(body, 'studio-title')).toBe('Spacer use')
      expect(inputValue(body, 'studio-slug')).toBe('spacer-use')
      expect(flashOf(body)).toBe('Written with AI and not saved yet: check the text, choose a category, then save.')
      expect((await learning.listContentForAuthors(t.booted.core)).length).toBe(before)
      const prompt = JSON.stringify(ai.requests.at(-1)?.body)
      expect(prompt).toContain('Spacers help small children.')
      expect(prompt).toContain('Masks fit under two years.')
      expect(await auditActions(mod.id)).toContain('learning_content_generated')
    })

    it('writes a presentation into the slide text', async () => {
      ai.reset()
      ai.reply(() => '---\nmarp: true\n---\n\n# Asthma\n\n---\n\n# Triggers\n')
      // a browser sends an empty, nameless file part when no file is chosen
      const res = await multipart('/studio/generate', { topic: 'Asthma', type: 'presentation', model: TEST_MODEL }, [new File([], '')])
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(textareaOf(body, 'studio-slides')).toContain('# Triggers')
      expect(textareaOf(body, 'studio-body')).toBe('')
      expect(body.match(/<svg /g)).toHaveLength(2)
    })

    it('the gateway failing, an unknown model, a blank topic: the message in words, the topic kept, nothing written', async () => {
      ai.reset()
      ai.failNext(500, 5)
      const failed = await multipart('/studio/generate', { topic: 'Croup', type: 'article', model: TEST_MODEL })
      expect(failed.status).toBe(422)
      const body = await failed.text()
      expect(body).toContain('Nothing was written. The AI service could not be reached or answered with an error. Try again in a moment.')
      expect(textareaOf(body, 'gen-topic')).toBe('Croup')
      ai.reset()
      const unknown = await multipart('/studio/generate', { topic: 'Croup', type: 'article', model: 'no-such-model' })
      expect(unknown.status).toBe(422)
      expect(fieldError(await unknown.text(), 'gen-model')).toContain('no-such-model')
      const tooMany = Array.from({ length: REFERENCE_FILES_MAX + 1 }, (_, i) => new File([`note ${i}`], `note-${i}.txt`, { type: 'text/plain' }))
      const many = await multipart('/studio/generate', { topic: 'Croup', type: 'article', model: TEST_MODEL }, tooMany)
      expect(many.status).toBe(422)
      const manyBody = await many.text()
      expect(fieldError(manyBody, 'gen-files')).toBe(`At most ${REFERENCE_FILES_MAX} files`)
      expect(manyBody).toContain('Choose the reference files again.')
      expect(ai.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0)
      const exe = await multipart('/studio/generate', { topic: 'Croup', type: 'article', model: TEST_MODEL }, [new File(['MZ'], 'tool.exe')])
      expect(exe.status).toBe(422)
      expect(fieldError(await exe.text(), 'gen-files')).toContain('tool.exe')
      const blank = await multipart('/studio/generate', { topic: ' ', type: 'article', model: TEST_MODEL })
      expect(blank.status).toBe(422)
      expect(fieldError(await blank.text(), 'gen-topic')).toBe('Write the topic')
    })

    it('refines the chosen text: the editor again without JavaScript, the text field swapped with htmx; a failure keeps the text', async () => {
      ai.reset()
      ai.reply(() => '# Inhalers\n\nUse a spacer, always.')
      const fields = articleForm({ instructions: 'Be firmer', refine_target: 'body', ...quizFields })
      const plain = await post('/studio/refine', fields)
      expect(plain.status).toBe(200)
      const body = await plain.text()
      expect(textareaOf(body, 'studio-body')).toBe('# Inhalers\n\nUse a spacer, always.')
      expect(textareaOf(body, 'studio-q-1-text')).toBe('Which help inhaler technique?')
      expect(flashOf(body)).toBe('The text is refined: check the changes, then save.')

      const { id } = await create()
      const viaHtmx = await post(`/studio/${id}/refine`, { ...fields, id: String(id) }, mod, HTMX)
      expect(viaHtmx.status).toBe(200)
      const fragment = await viaHtmx.text()
      expect(fragment).toStartWith('<div id="studio-refine"')
      expect(fragment).toContain('<div id="studio-body-field" hx-swap-oob="true">')
      expect(textareaOf(fragment, 'studio-body')).toBe('# Inhalers\n\nUse a spacer, always.')
      expect(await auditActions(mod.id)).toContain('learning_content_refined')

      ai.failNext(504, 5)
      const failed = await post('/studio/refine', fields, mod, HTMX)
      expect(failed.status).toBe(422)
      const failedBody = await failed.text()
      expect(failedBody).toStartWith('<div id="studio-refine"')
      expect(failedBody).not.toContain('studio-body-field')
      expect(failedBody).toContain('Not refined.')
      ai.reset()
      const noInstructions = await post('/studio/refine', { ...fields, instructions: '' })
      expect(noInstructions.status).toBe(422)
      const noBody = await noInstructions.text()
      expect(fieldError(noBody, 'studio-instructions')).toBe('Write what to change')
      expect(textareaOf(noBody, 'studio-body')).toBe('# Inhalers\n\nUse a spacer.')
    })
  })
})

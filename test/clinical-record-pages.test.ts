// The clinician's record pages (/encounters, /memories, /documents, /preferences): each page and its htmx fragment
// for a signed-in user (a redirect to sign in, or 401 for htmx, without a session); every form plain (303, or 422
// with the message next to its field) and with htmx (the fragment, 422 swapped); deletes with their confirm step;
// user text escaped; another user's records 404 and untouched; cross-origin posts refused; the document download
// through a fresh signed address; the voice sample as audio/mpeg; the WebDAV connection against a real WebDAV
// server, with the password never in any page.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { DOCUMENT_MAX_BYTES } from '../plugins/clinical/models/files'
import { ENCOUNTER_LIFETIME_DAYS, MEMORY_LIST_MAX } from '../plugins/clinical/models/records'
import { ENCOUNTER_PAGE_SIZE } from '../plugins/clinical/views/records'
import { MESSAGES as DOCUMENT_MESSAGES, MULTIPART_OVERHEAD_BYTES } from '../plugins/clinical/services/documents'
import * as encounters from '../plugins/clinical/services/encounters'
import * as memories from '../plugins/clinical/services/memories'
import { getPreferences } from '../plugins/clinical/services/preferences'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { EVIL, HTMX, outsideAttributes, pageClinician, type PageClinician as Clinician, XSS, XSS_ESCAPED } from './support/clinical'
import { startAiServer, type AiServer } from './support/ai-server'
import { startWebDavServer, WEBDAV_PASSWORD, WEBDAV_USER, type WebDavServer } from './support/webdav'

setDefaultTimeout(60_000)

const enc = new TextEncoder()
const PDF = enc.encode('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n')
/** A Windows program's first bytes. */
const EXE = new Uint8Array([...enc.encode('MZ'), ...new Uint8Array(126), ...enc.encode('PE\0\0'), ...new Uint8Array(64)])

describe.each(databaseTargets())('clinical record pages [%s]', (target) => {
  let t: TestApp
  let dav: WebDavServer
  let alice: Clinician
  let bob: Clinician
  /** Every page body a signed-in user got, for the check that the WebDAV password is never in one. */
  const seen: string[] = []

  const signInPage = (tag: string, name = 'Record Pages User') => pageClinician(t, tag, name)
  const get = async (path: string, who: Clinician, headers: Record<string, string> = {}) => {
    const res = await t.get(path, { headers: { accept: 'text/html', cookie: who.cookie, ...headers } })
    const body = await res.clone().text()
    seen.push(body)
    return res
  }
  const page = async (path: string, who: Clinician, headers: Record<string, string> = {}) => {
    const res = await get(path, who, headers)
    expect(res.status).toBe(200)
    return res.text()
  }
  const form = async (path: string, fields: Record<string, string>, who: Clinician, headers: Record<string, string> = {}) => {
    const res = await t.form(path, fields, { headers: { cookie: who.cookie, ...headers } })
    seen.push(await res.clone().text())
    return res
  }
  const upload = (who: Clinician, file: File | null, description = '', headers: Record<string, string> = {}) => {
    const body = new FormData()
    if (file) body.append('file', file)
    else body.append('file', new File([], ''), '')
    body.append('description', description)
    return t.request('/documents/upload', { method: 'POST', body, headers: { accept: 'text/html', cookie: who.cookie, ...headers } })
  }
  const saveEncounter = (who: Clinician, label: string, extra: Partial<Parameters<typeof encounters.saveEncounter>[2]> = {}) =>
    encounters.saveEncounter(t.booted.core, who.id, { label, enc_type: 'soap', transcript: 'Cough for three days.', generated_note: 'S: cough. O: clear chest.', ...extra })
  const encounterExists = async (id: number) => (await t.db.sql`select id from clinical.saved_encounters where id = ${id}`).length === 1
  const memoryExists = async (id: number) => (await t.db.sql`select id from clinical.memories where id = ${id}`).length === 1
  const documentExists = async (id: number) => (await t.db.sql`select id from clinical.documents where id = ${id}`).length === 1

  beforeAll(async () => {
    dav = await startWebDavServer({ 'Notes/': '' })
    t = await startTestApp({ target, env: { WEBDAV_ALLOWED_HOSTS: `127.0.0.1:${dav.port}` } })
    alice = await signInPage('records-alice', 'Alice')
    bob = await signInPage('records-bob', 'Bob')
  })
  afterAll(async () => {
    await t.close()
    await dav.close()
  })

  describe('signed out', () => {
    it('each page sends a plain request to the sign-in page and answers an htmx request 401', async () => {
      for (const path of ['/encounters', '/memories', '/documents', '/preferences', '/preferences/voice-sample', '/documents/1/download']) {
        const plain = await t.get(path, { headers: { accept: 'text/html' } })
        expect(plain.status, path).toBe(303)
        expect(plain.headers.get('location')).toBe('/')
        expect((await t.get(path, { headers: HTMX })).status, path).toBe(401)
      }
      const post = await t.form('/memories', { category: 'custom', name: 'x', content: 'y' })
      expect(post.status).toBe(303)
      expect(post.headers.get('location')).toBe('/')
    })
  })

  describe('saved encounters', () => {
    it('lists label, type, status in words, dates, previews and an Open link to the workspace; says how long they are kept', async () => {
      const draft = await saveEncounter(alice, `Follow-up ${XSS}`, { transcript: `Mother says ${XSS}` })
      const reviewed = await saveEncounter(alice, 'Well child', { enc_type: 'hpi', status: 'reviewed' })
      await saveEncounter(bob, 'Bob only encounter')
      const body = await page('/encounters', alice)
      expect(body).toContain('<h1>Saved encounters</h1>')
      expect(body).toContain(`kept for ${ENCOUNTER_LIFETIME_DAYS} days`)
      expect(body).toContain(`<th scope="row">Follow-up ${XSS_ESCAPED}</th>`)
      expect(outsideAttributes(body)).not.toContain(XSS)
      expect(body).toContain('<th scope="col">Status</th>')
      expect(body).toContain('>SOAP note</td>')
      expect(body).toContain('>HPI</td>')
      expect(body).toMatch(new RegExp(`id="encounter-${draft.id}"[\\s\\S]*?>Draft</span>`))
      expect(body).toMatch(new RegExp(`id="encounter-${reviewed.id}"[\\s\\S]*?>Reviewed</span>`))
      expect(body).toContain(`Mother says ${XSS_ESCAPED}`)
      expect(body).toContain('S: cough. O: clear chest.')
      expect(body).toContain(`href="/workspace?encounter=${draft.id}"`)
      expect(body).toContain('<time datetime=')
      expect(body).not.toContain('Bob only encounter')
    })

    it('the htmx fragment is the list alone; with nothing saved it points to the workspace', async () => {
      const fragment = await page('/encounters', alice, HTMX)
      expect(fragment).toStartWith('<div id="encounters"')
      expect(fragment).not.toContain('<html')
      const carol = await signInPage('records-carol')
      const empty = await page('/encounters', carol)
      expect(empty).toContain('id="encounters-empty"')
      expect(empty).toContain('<a href="/workspace">workspace</a>')
    })

    it('delete without JavaScript: a confirm page, then a post that redirects with a notice', async () => {
      const { id } = await saveEncounter(alice, 'To delete plainly')
      const confirm = await page(`/encounters/${id}/delete`, alice)
      expect(confirm).toContain('<h1>Delete a saved encounter</h1>')
      expect(confirm).toContain(`<form class="actions" action="/encounters/${id}/delete" method="post">`)
      expect(confirm).toContain('Delete “To delete plainly”')
      expect(await encounterExists(id)).toBe(true)
      const res = await form(`/encounters/${id}/delete`, {}, alice)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/encounters?notice=encounter-deleted')
      expect(await encounterExists(id)).toBe(false)
      const after = await page('/encounters?notice=encounter-deleted', alice)
      expect(after).toContain('The saved encounter was deleted.')
      expect(after).not.toContain('To delete plainly')
      // a notice the page does not know is not shown, and never echoed
      expect(await page(`/encounters?notice=${encodeURIComponent('<b>made-up-notice</b>')}`, alice)).not.toContain('made-up-notice')
    })

    it('delete with htmx: the row turns into its confirm form, Keep it brings the row back, the post answers the list', async () => {
      const { id } = await saveEncounter(alice, 'To delete with htmx')
      const row = await page(`/encounters/${id}/delete`, alice, HTMX)
      expect(row).toStartWith(`<tr id="encounter-${id}">`)
      expect(row).toContain(`hx-post="/encounters/${id}/delete" hx-target="#encounters"`)
      const keep = await page(`/encounters/${id}`, alice, HTMX)
      expect(keep).toStartWith(`<tr id="encounter-${id}">`)
      expect(keep).toContain(`href="/encounters/${id}/delete"`)
      const plainRow = await get(`/encounters/${id}`, alice)
      expect(plainRow.status).toBe(303)
      expect(plainRow.headers.get('location')).toBe(`/encounters#encounter-${id}`)
      const res = await form(`/encounters/${id}/delete`, {}, alice, HTMX)
      expect(res.status).toBe(200)
      const list = await res.text()
      expect(list).toStartWith('<div id="encounters"')
      expect(list).toContain('The saved encounter was deleted.')
      expect(list).not.toContain(`id="encounter-${id}"`)
      expect(await encounterExists(id)).toBe(false)
    })

    it(`pages through the list ${ENCOUNTER_PAGE_SIZE} at a time; an htmx delete answers the page it was on`, async () => {
      const erin = await signInPage('records-erin')
      const ids: number[] = []
      for (let i = 0; i <= ENCOUNTER_PAGE_SIZE; i++) ids.push((await saveEncounter(erin, `Visit ${i}`)).id)
      const first = await page('/encounters', erin)
      expect(first.match(/<tr id="encounter-/g)).toHaveLength(ENCOUNTER_PAGE_SIZE)
      expect(first).toContain('<a href="/encounters?page=2" rel="next">Older encounters</a>')
      expect(first).not.toContain('>Visit 0<')
      const second = await page('/encounters?page=2', erin)
      expect(second.match(/<tr id="encounter-/g)).toHaveLength(1)
      expect(second).toContain('<th scope="row">Visit 0</th>')
      expect(second).toContain('<a href="/encounters" rel="prev">Newer encounters</a>')
      const confirm = await page(`/encounters/${ids[0]}/delete?page=2`, erin, HTMX)
      expect(confirm).toContain('<input type="hidden" name="page" value="2"/>')
      const res = await form(`/encounters/${ids[0]}/delete`, { page: '2' }, erin, HTMX)
      const list = await res.text()
      expect(list).toContain('No more saved encounters.')
      expect(list).toContain('rel="prev">Newer encounters</a>')
      expect((await get('/encounters?page=0', erin)).status).toBeGreaterThanOrEqual(400)
    })

    it('another user\'s encounter is 404 on every route and stays; a cross-origin post is refused', async () => {
      const { id } = await saveEncounter(bob, 'Bob private')
      expect((await get(`/encounters/${id}/delete`, alice)).status).toBe(404)
      expect((await get(`/encounters/${id}`, alice, HTMX)).status).toBe(404)
      expect((await form(`/encounters/${id}/delete`, {}, alice)).status).toBe(404)
      expect(await encounterExists(id)).toBe(true)
      const cross = await form(`/encounters/${id}/delete`, {}, bob, EVIL)
      expect(cross.status).toBe(403)
      expect(await encounterExists(id)).toBe(true)
    })
  })

  describe('memories', () => {
    it('the page explains which categories the AI uses and which it does not; the htmx fragment is the form and the list', async () => {
      const body = await page('/memories', alice)
      expect(body).toContain('<h1>Memories</h1>')
      expect(body).toContain('<option value="note_style" selected>Note style (used by the AI)</option>')
      expect(body).toContain('<option value="custom">Private note (not sent to the AI)</option>')
      expect(body).toMatch(/<dt>Private note<\/dt>\s*<dd>[^<]*Never sent to the AI\.<\/dd>/)
      expect(body).toMatch(/<dt>Templates<\/dt>\s*<dd>[^<]*Added to what the AI is told for every note\.<\/dd>/)
      expect(body).toContain('<label for="memory-new-content">')
      const fragment = await page('/memories', alice, HTMX)
      expect(fragment).toStartWith('<div id="memories-content">')
    })

    it('adds a memory without JavaScript (303, then listed with an escaped name and a preview); 422 with messages next to the fields', async () => {
      const res = await form('/memories', { category: 'abbreviations', name: `Abbr ${XSS}`, content: 'URTI: upper respiratory tract infection' }, alice)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/memories?notice=memory-added')
      const body = await page('/memories?notice=memory-added', alice)
      expect(body).toContain('The memory was added.')
      expect(body).toContain(`<th scope="row">Abbr ${XSS_ESCAPED}</th>`)
      expect(outsideAttributes(body)).not.toContain(XSS)
      expect(body).toContain('URTI: upper respiratory tract infection')

      const blank = await form('/memories', { category: 'custom', name: '', content: 'kept on the form' }, alice)
      expect(blank.status).toBe(422)
      const again = await blank.text()
      expect(again).toContain('<span class="field-error" id="memory-new-name-error">Required</span>')
      expect(again).toContain('>kept on the form</textarea>')
      expect(again).toContain('<option value="custom" selected>')

      const bad = await form('/memories', { category: 'billing', name: 'Bad', content: 'x' }, alice)
      expect(bad.status).toBe(422)
      expect(await bad.text()).toContain('<span class="field-error" id="memory-new-category-error">Category must be one of')
      const [count] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.memories where user_id = ${alice.id} and name in ('Bad', '')`
      expect(count!.n).toBe(0)
    })

    it('adds a memory with htmx: the fragment with the notice and a blank form; a refusal is the fragment with 422', async () => {
      const res = await form('/memories', { category: 'templates', name: 'Normal exam', content: 'Chest clear, heart sounds normal.' }, alice, HTMX)
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(body).toStartWith('<div id="memories-content">')
      expect(body).toContain('The memory was added.')
      expect(body).toContain('<th scope="row">Normal exam</th>')
      expect(body).toContain('<input id="memory-new-name" name="name" type="text" value=""')
      const refused = await form('/memories', { category: 'templates', name: 'No content', content: '' }, alice, HTMX)
      expect(refused.status).toBe(422)
      const again = await refused.text()
      expect(again).toStartWith('<div id="memories-content">')
      expect(again).toContain('id="memory-new-content-error"')
    })

    it('edits a memory: its row becomes the form (htmx) or the page shows it (plain); saving answers the row or redirects', async () => {
      const { id } = await memories.createMemory(t.booted.core, alice.id, { category: 'note_style', name: 'Style', content: 'Short sentences.' })
      const editRow = await page(`/memories/${id}/edit`, alice, HTMX)
      expect(editRow).toStartWith(`<tr id="memory-${id}">`)
      expect(editRow).toContain(`<form class="stack" action="/memories/${id}" method="post" hx-post="/memories/${id}"`)
      expect(editRow).toContain('>Short sentences.</textarea>')
      const editPage = await page(`/memories/${id}/edit`, alice)
      expect(editPage).toContain('<h1>Memories</h1>')
      expect(editPage).toContain(`id="memory-${id}-content"`)

      const saved = await form(`/memories/${id}`, { category: 'note_style', name: 'Style', content: 'Bullet points.' }, alice, HTMX)
      expect(saved.status).toBe(200)
      const row = await saved.text()
      expect(row).toStartWith(`<tr id="memory-${id}">`)
      expect(row).toContain('Bullet points.')
      expect(row).toContain('Saved.')

      const plain = await form(`/memories/${id}`, { category: 'custom', name: 'Style, private', content: 'Bullet points, always.' }, alice)
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe(`/memories?notice=memory-saved#memory-${id}`)
      const [stored] = await memories.listMemories(t.booted.core, alice.id).then((l) => l.filter((m) => m.id === id))
      expect(stored).toMatchObject({ category: 'custom', name: 'Style, private', content: 'Bullet points, always.' })

      const refused = await form(`/memories/${id}`, { category: 'custom', name: 'Style, private', content: '' }, alice)
      expect(refused.status).toBe(422)
      expect(await refused.text()).toContain(`<span class="field-error" id="memory-${id}-content-error">Required</span>`)
      const refusedHtmx = await form(`/memories/${id}`, { category: 'nope', name: 'Style', content: 'x' }, alice, HTMX)
      expect(refusedHtmx.status).toBe(422)
      expect(await refusedHtmx.text()).toContain(`id="memory-${id}-category-error"`)
      expect((await memories.listMemories(t.booted.core, alice.id)).find((m) => m.id === id)!.content).toBe('Bullet points, always.')
    })

    it('deletes a memory after its confirm step, plain and with htmx', async () => {
      const one = await memories.createMemory(t.booted.core, alice.id, { category: 'custom', name: 'Delete me plainly', content: 'x' })
      const two = await memories.createMemory(t.booted.core, alice.id, { category: 'custom', name: 'Delete me with htmx', content: 'y' })
      const confirm = await page(`/memories/${one.id}/delete`, alice)
      expect(confirm).toContain(`action="/memories/${one.id}/delete" method="post"`)
      const res = await form(`/memories/${one.id}/delete`, {}, alice)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/memories?notice=memory-deleted')
      expect(await memoryExists(one.id)).toBe(false)

      const row = await page(`/memories/${two.id}/delete`, alice, HTMX)
      expect(row).toContain(`hx-post="/memories/${two.id}/delete" hx-target="#memories-list"`)
      const list = await form(`/memories/${two.id}/delete`, {}, alice, HTMX)
      expect(list.status).toBe(200)
      const body = await list.text()
      expect(body).toStartWith('<div id="memories-list">')
      expect(body).toContain('The memory was deleted.')
      expect(body).not.toContain('Delete me with htmx')
      expect(await memoryExists(two.id)).toBe(false)
    })

    it('another user\'s memory is 404 (edit, row, save, delete) and stays unchanged; a cross-origin add is refused', async () => {
      const { id } = await memories.createMemory(t.booted.core, bob.id, { category: 'custom', name: 'Bob memory', content: 'Bob text' })
      expect((await get(`/memories/${id}/edit`, alice)).status).toBe(404)
      expect((await get(`/memories/${id}`, alice, HTMX)).status).toBe(404)
      expect((await get(`/memories/${id}/delete`, alice)).status).toBe(404)
      expect((await form(`/memories/${id}`, { category: 'custom', name: 'Taken', content: 'over' }, alice)).status).toBe(404)
      expect((await form(`/memories/${id}/delete`, {}, alice)).status).toBe(404)
      const [mine] = (await memories.listMemories(t.booted.core, bob.id)).filter((m) => m.id === id)
      expect(mine).toMatchObject({ name: 'Bob memory', content: 'Bob text' })
      const cross = await form('/memories', { category: 'custom', name: 'Cross-site', content: 'x' }, alice, EVIL)
      expect(cross.status).toBe(403)
      expect((await memories.listMemories(t.booted.core, alice.id)).some((m) => m.name === 'Cross-site')).toBe(false)
    })

    it('a memory of a legacy correction_ category is listed as not sent to the AI, and its edit form can keep the category', async () => {
      const sealed = memories.packText(t.booted.core, 'Say "otitis media", not "ear infection".').sealed
      const [row] = await t.db.sql<{ id: number }>`
        insert into clinical.memories (user_id, category, name, content, created_at, updated_at)
        values (${alice.id}, 'correction_terms', 'Old correction', ${sealed}, now(), now()) returning id`
      const id = row!.id
      const body = await page('/memories', alice)
      expect(body).toMatch(new RegExp(`<tr id="memory-${id}"><th scope="row">Old correction</th><td><span>Older correction</span><br/><span class="muted">not sent to the AI</span>`))
      const edit = await page(`/memories/${id}/edit`, alice, HTMX)
      expect(edit).toContain('<option value="correction_terms" selected>Older correction (not sent to the AI)</option>')
      const saved = await form(`/memories/${id}`, { category: 'correction_terms', name: 'Old correction', content: 'Say "AOM".' }, alice)
      expect(saved.status).toBe(303)
      expect((await memories.listMemories(t.booted.core, alice.id)).find((m) => m.id === id)).toMatchObject({ category: 'correction_terms', content: 'Say "AOM".' })
    })

    it(`says when the list is at its limit of ${MEMORY_LIST_MAX}`, async () => {
      const dave = await signInPage('records-dave')
      for (let i = 0; i < MEMORY_LIST_MAX - 1; i++) {
        await memories.createMemory(t.booted.core, dave.id, { category: 'custom', name: `Memory ${i}`, content: 'x' })
      }
      expect(await page('/memories', dave)).not.toContain('id="memories-limit"')
      await memories.createMemory(t.booted.core, dave.id, { category: 'custom', name: 'The last one', content: 'x' })
      const body = await page('/memories', dave)
      expect(body).toContain('id="memories-limit"')
      expect(body).toContain(`You have reached ${MEMORY_LIST_MAX} memories`)
    })
  })

  describe('documents', () => {
    it('the page says the allowed types, the 10 MB limit and where files are kept; the fragment is the list', async () => {
      const body = await page('/documents', alice)
      expect(body).toContain('<h1>Documents</h1>')
      expect(body).toContain('enctype="multipart/form-data"')
      expect(body).toContain('PDF, JPEG, PNG or GIF images, Word documents (.doc, .docx), text (.txt) or CSV (.csv), at most 10 MB.')
      expect(DOCUMENT_MAX_BYTES).toBe(10 * 1024 * 1024)
      expect(body).toContain('kept on this server&#x27;s own disk')
      expect(body).toContain('<label for="document-description">')
      expect(await page('/documents', alice, HTMX)).toStartWith('<div id="documents">')
    })

    it('uploads without JavaScript; the list shows name (escaped), type and size in words; Download redirects to a fresh signed address', async () => {
      const name = '<img src=x onerror=alert(1)>letter.pdf'
      const res = await upload(alice, new File([PDF], name, { type: 'application/pdf' }), 'From the <b>clinic</b>')
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/documents?notice=document-uploaded')
      const body = await page('/documents?notice=document-uploaded', alice)
      expect(body).toContain('The document was uploaded.')
      expect(body).toContain('<span>&lt;img src=x onerror=alert(1)&gt;letter.pdf</span>')
      expect(body).toContain('From the &lt;b&gt;clinic&lt;/b&gt;')
      expect(outsideAttributes(body)).not.toContain('<img')
      expect(body).toContain('<td>PDF</td>')
      expect(body).toContain(`<td>${PDF.length} bytes</td>`)
      const id = (await t.db.sql<{ id: number }>`select id from clinical.documents where user_id = ${alice.id} order by id desc limit 1`)[0]!.id
      expect(body).toContain(`href="/documents/${id}/download" hx-boost="false"`)
      // the page holds no signed address: only the route that makes one
      expect(body).not.toContain('signature=')

      const first = await get(`/documents/${id}/download`, alice)
      expect(first.status).toBe(303)
      const location = first.headers.get('location')!
      expect(location).toMatch(new RegExp(`^/api/documents/${id}/file\\?expires=\\d+&signature=`))
      const file = await t.get(location)
      expect(file.status).toBe(200)
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(PDF)
    })

    it('refusals are shown next to the file input with 422: no file, a type not allowed, a program named .pdf', async () => {
      const none = await upload(alice, null, 'kept description')
      expect(none.status).toBe(422)
      const noneBody = await none.text()
      expect(noneBody).toContain('<span class="field-error" id="document-file-error">Choose a file to upload</span>')
      expect(noneBody).toContain('>kept description</textarea>')

      const exe = await upload(alice, new File([EXE], 'setup.exe', { type: 'application/x-msdownload' }))
      expect(exe.status).toBe(422)
      expect(await exe.text()).toContain(`<span class="field-error" id="document-file-error">${DOCUMENT_MESSAGES.unsupported}</span>`)

      const disguised = await upload(alice, new File([EXE], 'results.pdf', { type: 'application/pdf' }))
      expect(disguised.status).toBe(422)
      expect(await disguised.text()).toContain('<span class="field-error" id="document-file-error">The file&#x27;s content is not a PDF')
      const [count] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.documents where user_id = ${alice.id} and filename in ('setup.exe', 'results.pdf')`
      expect(count!.n).toBe(0)
    })

    it('an upload over the limit is refused with 413 before the body is read', async () => {
      const res = await t.request('/documents/upload', {
        method: 'POST',
        headers: { accept: 'text/html', cookie: alice.cookie, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(DOCUMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES + 1) },
        body: 'x',
      })
      expect(res.status).toBe(413)
    })

    it('deletes a document after its confirm step, plain and with htmx', async () => {
      await upload(alice, new File([PDF], 'delete-plain.pdf', { type: 'application/pdf' }))
      await upload(alice, new File([PDF], 'delete-htmx.pdf', { type: 'application/pdf' }))
      const rows = await t.db.sql<{ id: number; filename: string }>`
        select id, filename from clinical.documents where user_id = ${alice.id} and filename like 'delete-%'`
      const plainId = rows.find((r) => r.filename === 'delete-plain.pdf')!.id
      const htmxId = rows.find((r) => r.filename === 'delete-htmx.pdf')!.id

      expect(await page(`/documents/${plainId}/delete`, alice)).toContain('<h1>Delete a document</h1>')
      const res = await form(`/documents/${plainId}/delete`, {}, alice)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/documents?notice=document-deleted')
      expect(await documentExists(plainId)).toBe(false)

      expect(await page(`/documents/${htmxId}/delete`, alice, HTMX)).toStartWith(`<tr id="document-${htmxId}">`)
      expect(await page(`/documents/${htmxId}`, alice, HTMX)).toContain(`/documents/${htmxId}/download`)
      const list = await form(`/documents/${htmxId}/delete`, {}, alice, HTMX)
      expect(list.status).toBe(200)
      const body = await list.text()
      expect(body).toStartWith('<div id="documents">')
      expect(body).toContain('The document was deleted.')
      expect(await documentExists(htmxId)).toBe(false)
    })

    it('another user\'s document is 404 (download, confirm, delete) and stays; a cross-origin upload is refused', async () => {
      await upload(bob, new File([PDF], 'bob.pdf', { type: 'application/pdf' }))
      const id = (await t.db.sql<{ id: number }>`select id from clinical.documents where user_id = ${bob.id} order by id desc limit 1`)[0]!.id
      expect((await get(`/documents/${id}/download`, alice)).status).toBe(404)
      expect((await get(`/documents/${id}/delete`, alice)).status).toBe(404)
      expect((await form(`/documents/${id}/delete`, {}, alice)).status).toBe(404)
      expect(await documentExists(id)).toBe(true)
      const before = await t.db.sql`select id from clinical.documents where user_id = ${alice.id}`
      const cross = await upload(alice, new File([PDF], 'cross.pdf', { type: 'application/pdf' }), '', EVIL)
      expect(cross.status).toBe(403)
      expect((await t.db.sql`select id from clinical.documents where user_id = ${alice.id}`).length).toBe(before.length)
    })
  })

  describe('preferences', () => {
    it('offers the voices and says transcription is unavailable without a gateway; the sample is audio/mpeg of the chosen voice', async () => {
      const body = await page('/preferences', alice)
      expect(body).toContain('<h1>Preferences</h1>')
      expect(body).toContain('id="stt-unavailable"')
      expect(body).toContain('<label for="tts-voice">')
      expect(body).toContain('<option value="offline:en" selected>Built-in voice (offline)</option>')
      expect(body).toContain('<audio controls="" preload="none" aria-labelledby="voice-sample-label" src="/preferences/voice-sample?voice=offline%3Aen">')
      expect(await page('/preferences', alice, HTMX)).toStartWith('<div id="preferences-content">')

      const sample = await get('/preferences/voice-sample?voice=offline%3Aen', alice)
      expect(sample.status).toBe(200)
      expect(sample.headers.get('content-type')).toBe('audio/mpeg')
      const bytes = new Uint8Array(await sample.arrayBuffer())
      expect(bytes.length).toBeGreaterThan(1000)
      // an MP3: an ID3 tag or a frame sync
      expect(bytes[0] === 0x49 || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0)).toBe(true)
      expect((await get('/preferences/voice-sample?voice=nobody', alice)).status).toBe(422)
    })

    it('saves the voice without JavaScript and with htmx; an unknown voice is 422 next to the select, nothing stored', async () => {
      const res = await form('/preferences', { tts_voice: 'offline:de' }, alice)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/preferences?notice=speech-saved')
      expect((await getPreferences(t.booted.core, alice.id)).tts_voice).toBe('offline:de')
      const body = await page('/preferences?notice=speech-saved', alice)
      expect(body).toContain('Your speech settings were saved.')
      expect(body).toContain('<option value="offline:de" selected>')
      expect(body).toContain('src="/preferences/voice-sample?voice=offline%3Ade"')

      const fragment = await form('/preferences', { tts_voice: 'offline:fr' }, alice, HTMX)
      expect(fragment.status).toBe(200)
      const text = await fragment.text()
      expect(text).toStartWith('<div id="speech-preferences">')
      expect(text).toContain('Saved.')
      expect((await getPreferences(t.booted.core, alice.id)).tts_voice).toBe('offline:fr')

      const bad = await form('/preferences', { tts_voice: `<b>${XSS}</b>` }, alice)
      expect(bad.status).toBe(422)
      const badBody = await bad.text()
      expect(badBody).toContain('<span class="field-error" id="tts-voice-error">')
      expect(outsideAttributes(badBody)).not.toContain(XSS)
      const badHtmx = await form('/preferences', { tts_voice: 'nobody' }, alice, HTMX)
      expect(badHtmx.status).toBe(422)
      expect(await badHtmx.text()).toStartWith('<div id="speech-preferences">')
      expect((await getPreferences(t.booted.core, alice.id)).tts_voice).toBe('offline:fr')
    })

    it('connects the file server: refused credentials next to the password (not echoed), then connected, folder, disconnect', async () => {
      const connection = async () => (await t.db.sql<{ nextcloud_url: string | null; nextcloud_token: string | null; webdav_path: string | null }>`
        select nextcloud_url, nextcloud_token, webdav_path from clinical.users where id = ${alice.id}`)[0]!

      const wrong = await form('/preferences/webdav/connect', { url: dav.url, username: WEBDAV_USER, password: 'wrong-password-typed' }, alice)
      expect(wrong.status).toBe(422)
      const wrongBody = await wrong.text()
      expect(wrongBody).toContain('<span class="field-error" id="webdav-password-error">The file server refused the username or password</span>')
      expect(wrongBody).toContain(`value="${WEBDAV_USER}"`)
      expect(wrongBody).not.toContain('wrong-password-typed')
      expect((await connection()).nextcloud_url).toBeNull()

      const notAllowed = await form('/preferences/webdav/connect', { url: 'http://10.1.2.3/dav', username: 'x', password: 'y' }, alice, HTMX)
      expect(notAllowed.status).toBe(422)
      const notAllowedBody = await notAllowed.text()
      expect(notAllowedBody).toStartWith('<div id="webdav">')
      expect(notAllowedBody).toContain('id="webdav-url-error"')

      const missing = await form('/preferences/webdav/connect', { url: dav.url, username: '', password: '' }, alice)
      expect(missing.status).toBe(422)
      expect(await missing.text()).toContain('<span class="field-error" id="webdav-username-error">Required</span>')

      const ok = await form('/preferences/webdav/connect', { url: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD }, alice)
      expect(ok.status).toBe(303)
      expect(ok.headers.get('location')).toBe('/preferences?notice=webdav-connected#webdav')
      const stored = await connection()
      expect(stored.nextcloud_url).toBe(dav.url)
      expect(stored.nextcloud_token).not.toContain(WEBDAV_PASSWORD)
      const connected = await page('/preferences?notice=webdav-connected', alice)
      expect(connected).toContain('The file server is connected.')
      expect(connected).toMatch(new RegExp(`<dt>Server</dt>\\s*<dd>${dav.url}</dd>\\s*<dt>User</dt>\\s*<dd>${WEBDAV_USER}</dd>\\s*<dt>Export folder</dt>\\s*<dd>/</dd>`))
      expect(connected).toContain('action="/preferences/webdav/disconnect"')
      expect(connected).not.toContain('id="webdav-password"')

      const traversal = await form('/preferences/webdav/path', { path: '../../etc' }, alice)
      expect(traversal.status).toBe(422)
      const traversalBody = await traversal.text()
      expect(traversalBody).toMatch(/<span class="field-error" id="webdav-path-error">[^<]*&quot;\.\.&quot;[^<]*<\/span>/)
      expect((await connection()).webdav_path).toBeNull()

      const folder = await form('/preferences/webdav/path', { path: 'Notes//Clinic/' }, alice, HTMX)
      expect(folder.status).toBe(200)
      const folderBody = await folder.text()
      expect(folderBody).toStartWith('<div id="webdav">')
      expect(folderBody).toContain('The export folder was saved.')
      expect(folderBody).toContain('<dd>/Notes/Clinic</dd>')
      expect((await connection()).webdav_path).toBe('/Notes/Clinic')

      const gone = await form('/preferences/webdav/disconnect', {}, alice)
      expect(gone.status).toBe(303)
      expect(gone.headers.get('location')).toBe('/preferences?notice=webdav-disconnected#webdav')
      expect((await connection()).nextcloud_token).toBeNull()
      const after = await page('/preferences?notice=webdav-disconnected', alice)
      expect(after).toContain('id="webdav-connect"')
      expect(after).toContain('value="/Notes/Clinic"')

      const htmxConnect = await form('/preferences/webdav/connect', { url: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD }, alice, HTMX)
      expect(htmxConnect.status).toBe(200)
      const htmxBody = await htmxConnect.text()
      expect(htmxBody).toStartWith('<div id="webdav">')
      expect(htmxBody).toContain('<dt>Server</dt>')
      // a reload of a boosted post's address lands on the page
      const reload = await get('/preferences/webdav/connect', alice)
      expect(reload.status).toBe(303)
      expect(reload.headers.get('location')).toBe('/preferences#webdav')
    })

    it('every preferences form refuses a cross-origin post and changes nothing', async () => {
      const before = await getPreferences(t.booted.core, bob.id)
      expect((await form('/preferences', { tts_voice: 'offline:it' }, bob, EVIL)).status).toBe(403)
      expect((await form('/preferences/webdav/connect', { url: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD }, bob, EVIL)).status).toBe(403)
      expect((await form('/preferences/webdav/path', { path: 'Evil' }, bob, EVIL)).status).toBe(403)
      expect((await form('/preferences/webdav/disconnect', {}, bob, EVIL)).status).toBe(403)
      expect(await getPreferences(t.booted.core, bob.id)).toEqual(before)
      const [row] = await t.db.sql<{ nextcloud_url: string | null; webdav_path: string | null }>`
        select nextcloud_url, webdav_path from clinical.users where id = ${bob.id}`
      expect(row).toEqual({ nextcloud_url: null, webdav_path: null })
    })

    it('the file server password is in no page any user was shown', () => {
      expect(seen.length).toBeGreaterThan(30)
      for (const body of seen) expect(body).not.toContain(WEBDAV_PASSWORD)
    })
  })

  describe('preferences with an AI gateway', () => {
    let ai: AiServer
    let g: TestApp
    let who: Clinician

    beforeAll(async () => {
      ai = await startAiServer()
      g = await startTestApp({ target, env: { ...ai.env, STT_MODEL: 'whisper-test', TTS_MODEL: 'tts-test' } })
      who = await pageClinician(g, 'records-gateway', 'Record Pages User')
    })
    afterAll(async () => {
      await g.close()
      await ai.close()
    })

    it('offers the transcription model and the gateway\'s voices; saves both; the sample is spoken by the chosen gateway voice', async () => {
      const body = await (await g.get('/preferences', { headers: { accept: 'text/html', cookie: who.cookie } })).text()
      expect(body).not.toContain('id="stt-unavailable"')
      expect(body).toContain('<label for="stt-model">')
      expect(body).toContain('<option value="whisper-test" selected>whisper-test (default)</option>')
      expect(body).toContain('<option value="tts-test:alloy" selected>Alloy (tts-test)</option>')
      expect(body).toContain('<option value="offline:en">Built-in voice (offline)</option>')

      const res = await g.form('/preferences', { stt_model: 'whisper-test', tts_voice: 'tts-test:nova' }, { headers: { cookie: who.cookie } })
      expect(res.status).toBe(303)
      expect(await getPreferences(g.booted.core, who.id)).toEqual({ stt_model: 'whisper-test', tts_voice: 'tts-test:nova' })
      const refused = await g.form('/preferences', { stt_model: 'whisper-unknown', tts_voice: 'tts-test:nova' }, { headers: { cookie: who.cookie } })
      expect(refused.status).toBe(422)
      expect(await refused.text()).toContain('<span class="field-error" id="stt-model-error">Not one of the transcription models offered')

      ai.reset()
      const sample = await g.get('/preferences/voice-sample?voice=tts-test%3Anova', { headers: { cookie: who.cookie } })
      expect(sample.status).toBe(200)
      expect(sample.headers.get('content-type')).toBe('audio/mpeg')
      const spoken = ai.requests.filter((r) => r.path.endsWith('/audio/speech'))
      expect(spoken).toHaveLength(1)
      expect(spoken[0]!.body).toMatchObject({ model: 'tts-test', voice: 'nova' })
    })
  })
})

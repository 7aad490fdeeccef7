// The phone directory pages: /directory (search plain and as you type, add, click-to-edit, move to the trash,
// export), /directory/trash (restore, delete for good with its confirm step) and the import flow (upload, preview
// summary, the two options, import once). Each page and its htmx fragment; every form plain (303, or 422 with the
// message next to its field) and with htmx; user text escaped; another user's entries 404 and untouched;
// cross-origin posts refused.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate'
import { EXPORT_FILE_NAME, EXPORT_FORMAT, IMPORT_MAX_BYTES } from '../plugins/directory/model'
import * as directory from '../plugins/directory/service'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { EVIL, HTMX, outsideAttributes, pageClinician, type PageClinician as Clinician, XSS, XSS_ESCAPED } from './support/clinical'

setDefaultTimeout(60_000)


describe.each(databaseTargets())('phone directory pages [%s]', (target) => {
  let t: TestApp
  let alice: Clinician
  let bob: Clinician

  const signInPage = (tag: string, name: string) => pageClinician(t, tag, name)
  const fresh = () => signInPage('dir-pages', 'Directory User')
  const get = (path: string, who: Clinician, headers: Record<string, string> = {}) =>
    t.get(path, { headers: { accept: 'text/html', cookie: who.cookie, ...headers } })
  const page = async (path: string, who: Clinician, headers: Record<string, string> = {}) => {
    const res = await get(path, who, headers)
    expect(res.status, path).toBe(200)
    return res.text()
  }
  const form = (path: string, fields: Record<string, string>, who: Clinician, headers: Record<string, string> = {}) =>
    t.form(path, fields, { headers: { cookie: who.cookie, ...headers } })
  const add = (who: Clinician, e: { location?: string; name?: string; number: string; type?: 'extension' | 'pager'; notes?: string }) =>
    directory.createEntry(t.booted.core, who.id, e).then((r) => r.id)
  const entries = (who: Clinician, trash = false) => directory.listEntries(t.booted.core, who.id, { trash: trash ? '1' : undefined })
  const upload = (who: Clinician, bytes: Uint8Array | string, name = 'app-extensions.zip') => {
    const body = new FormData()
    body.append('file', new File([bytes as BlobPart], name))
    return t.request('/directory/import', { method: 'POST', body, headers: { accept: 'text/html', cookie: who.cookie } })
  }
  const exportFile = (items: unknown[]) => JSON.stringify({ format: EXPORT_FORMAT, version: 1, exported_at: '2026-01-01T00:00:00Z', items })

  beforeAll(async () => {
    t = await startTestApp({ target })
    alice = await signInPage('dir-alice', 'Alice')
    bob = await signInPage('dir-bob', 'Bob')
  })
  afterAll(() => t.close())

  it('signed out: a plain request goes to the sign-in page, an htmx one gets 401', async () => {
    for (const path of ['/directory', '/directory/trash', '/directory/import', '/directory/export', '/directory/1/edit']) {
      const plain = await t.get(path, { headers: { accept: 'text/html' } })
      expect(plain.status, path).toBe(303)
      expect(plain.headers.get('location')).toBe('/')
      expect((await t.get(path, { headers: HTMX })).status, path).toBe(401)
    }
    const post = await t.form('/directory', { name: 'x', number: '1' })
    expect(post.status).toBe(303)
    expect(post.headers.get('location')).toBe('/')
  })

  describe('the directory', () => {
    it('shows the table with its headers, escaped text, the search form (htmx on top), export, import and trash links', async () => {
      const u = await fresh()
      await add(u, { location: `Ward ${XSS}`, name: 'Charge nurse', number: '4401', type: 'pager', notes: `Note ${XSS}` })
      await add(bob, { location: 'Bob ward', name: 'Bob only', number: '9999' })
      const body = await page('/directory', u)
      expect(body).toContain('<h1>Phone directory</h1>')
      expect(body).toContain(`<th scope="row">Ward ${XSS_ESCAPED}</th>`)
      expect(body).toContain(`Note ${XSS_ESCAPED}`)
      expect(outsideAttributes(body)).not.toContain(XSS)
      expect(body).not.toContain('Bob only')
      for (const col of ['Location', 'Name', 'Number', 'Type', 'Notes', 'Actions']) expect(body).toContain(`<th scope="col">${col}</th>`)
      expect(body).toContain('<td>Pager</td>')
      expect(body).toMatch(/<form class="actions dir-search" action="\/directory" method="get" role="search">/)
      expect(body).toContain('<label for="dir-q" class="visually-hidden">Search the directory</label>')
      expect(body).toContain('hx-get="/directory" hx-trigger="input changed delay:200ms, search" hx-target="#dir-results"')
      expect(body).toContain('href="/directory/export" hx-boost="false"')
      expect(body).toContain('href="/directory/import"')
      expect(body).toContain('href="/directory/trash"')
      expect(body).toContain('1 entry.')
    })

    it('shows a notice only for the page\'s own keys: `?notice=constructor` or `__proto__` is a plain page, not a 500', async () => {
      const u = await fresh()
      expect(await page('/directory?notice=added', u)).toContain('The entry was added.')
      for (const key of ['constructor', '__proto__', 'toString']) {
        const body = await page(`/directory?notice=${key}`, u)
        expect(body).toContain('<div id="flash" class="" role="status"></div>')
      }
    })

    it('searches without JavaScript (the full page) and as you type (the results fragment)', async () => {
      const u = await fresh()
      await add(u, { location: 'Cardiology', name: 'Desk', number: '1000' })
      await add(u, { location: 'ED', name: 'Registrar', number: '2000', notes: 'on call' })
      const plain = await page('/directory?q=CARDIO', u)
      expect(plain).toContain('<html')
      expect(plain).toContain('<th scope="row">Cardiology</th>')
      expect(plain).not.toContain('Registrar')
      expect(plain).toContain('value="CARDIO"')
      expect(plain).toContain('1 entry matches “CARDIO”.')
      const res = await get('/directory?q=on%20call', u, HTMX)
      expect(res.status).toBe(200)
      expect(res.headers.get('vary')).toContain('HX-Request')
      const fragment = await res.text()
      expect(fragment).toStartWith('<div id="dir-results">')
      expect(fragment).not.toContain('<html')
      expect(fragment).toContain('Registrar')
      expect(fragment).not.toContain('Cardiology')
      expect(await (await get(`/directory?q=${encodeURIComponent(XSS)}`, u, HTMX)).text()).toContain(`“${XSS_ESCAPED}”`)
      expect(await (await get('/directory?q=nothing', u, HTMX)).text()).toContain('Nothing found')
    })

    it('adds an entry: 303 without JavaScript; 422 with the message next to the field and the values kept; the fragment with htmx', async () => {
      const u = await fresh()
      const ok = await form('/directory', { location: 'Theatres', name: 'Recovery', number: '3030', type: 'extension', notes: '' }, u)
      expect(ok.status).toBe(303)
      expect(ok.headers.get('location')).toBe('/directory?notice=added')
      expect((await page('/directory?notice=added', u))).toContain('The entry was added.')
      expect((await entries(u)).map((e) => e.name)).toEqual(['Recovery'])

      const bad = await form('/directory', { location: `Lab ${XSS}`, name: '', number: ' ', type: 'extension', notes: '' }, u)
      expect(bad.status).toBe(422)
      const badBody = await bad.text()
      expect(badBody).toContain('<html')
      expect(badBody).toMatch(/id="dir-new-number"[^>]*aria-invalid="true"/)
      expect(badBody).toContain('<span class="field-error" id="dir-new-number-error">Enter the number</span>')
      expect(badBody).toContain(`value="Lab ${XSS}"`)
      expect(outsideAttributes(badBody)).not.toContain(XSS)
      const badType = await form('/directory', { name: 'X', number: '1', type: 'fax' }, u)
      expect(badType.status).toBe(422)
      expect(await badType.text()).toContain('id="dir-new-type-error"')

      const viaHtmx = await form('/directory', { location: 'Pharmacy', name: 'Dispensary', number: '2200', type: 'pager' }, u, HTMX)
      expect(viaHtmx.status).toBe(200)
      const fragment = await viaHtmx.text()
      expect(fragment).toStartWith('<div id="dir-content">')
      expect(fragment).toContain('The entry was added.')
      expect(fragment).toContain('Dispensary')
      const htmxBad = await form('/directory', { location: 'Pharmacy', number: '' }, u, HTMX)
      expect(htmxBad.status).toBe(422)
      expect(await htmxBad.text()).toContain('id="dir-new-number-error"')
      expect(await entries(u)).toHaveLength(2)
    })

    it('edits a row in place (click to edit) with htmx, and as a page without JavaScript', async () => {
      const u = await fresh()
      const id = await add(u, { location: 'Ward 1', name: 'Desk', number: '1111' })
      const edit = await get(`/directory/${id}/edit`, u, HTMX)
      const editRow = await edit.text()
      expect(editRow).toStartWith(`<tr id="entry-${id}">`)
      expect(editRow).toContain(`hx-post="/directory/${id}" hx-target="#entry-${id}" hx-swap="outerHTML"`)
      expect(editRow).toContain(`action="/directory/${id}" method="post"`)
      expect(editRow).toContain('value="Ward 1"')
      const plainEdit = await page(`/directory/${id}/edit`, u)
      expect(plainEdit).toContain('<html')
      expect(plainEdit).toContain(`id="entry-${id}-number"`)

      const saved = await form(`/directory/${id}`, { location: 'Ward 2', name: 'Sister', number: '2222', type: 'pager', notes: 'days', q: '' }, u, HTMX)
      expect(saved.status).toBe(200)
      const row = await saved.text()
      expect(row).toStartWith(`<tr id="entry-${id}">`)
      expect(row).toContain('Saved.')
      expect(row).toContain('<th scope="row">Ward 2</th>')
      const bad = await form(`/directory/${id}`, { location: 'Ward 3', name: 'X', number: '', type: 'pager' }, u, HTMX)
      expect(bad.status).toBe(422)
      expect(await bad.text()).toContain(`id="entry-${id}-number-error"`)

      const plain = await form(`/directory/${id}`, { location: 'Ward 4', name: 'Sister', number: '4444', type: 'extension', q: 'ward' }, u)
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe(`/directory?notice=saved&q=ward#entry-${id}`)
      const plainBad = await form(`/directory/${id}`, { location: 'Ward 5', name: 'X', number: '5'.repeat(51) }, u)
      expect(plainBad.status).toBe(422)
      const plainBadBody = await plainBad.text()
      expect(plainBadBody).toContain('<html')
      expect(plainBadBody).toContain(`id="entry-${id}-number-error">Must be at most 50 characters</span>`)
      expect((await entries(u))[0]).toMatchObject({ location: 'Ward 4', number: '4444', type: 'extension' })
      // cancel: the row again (htmx), or back to the table
      expect(await (await get(`/directory/${id}`, u, HTMX)).text()).toStartWith(`<tr id="entry-${id}">`)
      expect((await get(`/directory/${id}`, u)).headers.get('location')).toBe(`/directory#entry-${id}`)
    })

    it('moves a row to the trash (303, or the results with a notice), restores it, and deletes for good only after a confirm step', async () => {
      const u = await fresh()
      const a = await add(u, { location: 'Ward A', name: `Alpha ${XSS}`, number: '1' })
      const b = await add(u, { location: 'Ward B', name: 'Beta', number: '2' })
      const plain = await form(`/directory/${a}/trash`, { q: 'ward' }, u)
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe('/directory?notice=trashed&q=ward')
      const viaHtmx = await form(`/directory/${b}/trash`, { q: '' }, u, HTMX)
      const results = await viaHtmx.text()
      expect(results).toStartWith('<div id="dir-results">')
      expect(results).toContain('moved to the trash')
      expect(await entries(u)).toEqual([])

      const trashPage = await page('/directory/trash', u)
      expect(trashPage).toContain('<h1>Directory trash</h1>')
      expect(trashPage).toContain(`Alpha ${XSS_ESCAPED}`)
      expect(outsideAttributes(trashPage)).not.toContain(XSS)
      expect(trashPage).toContain('<th scope="col">Moved to trash</th>')
      expect(await (await get('/directory/trash', u, HTMX)).text()).toStartWith('<div id="dir-trash-list">')

      const restored = await form(`/directory/${b}/restore`, {}, u)
      expect(restored.status).toBe(303)
      expect(restored.headers.get('location')).toBe('/directory/trash?notice=restored')
      expect((await entries(u)).map((e) => e.id)).toEqual([b])

      // delete for good: the confirm step (a page without JavaScript, the row with htmx), then the post
      const confirmPage = await page(`/directory/${a}/purge`, u)
      expect(confirmPage).toContain(`Delete “Alpha ${XSS_ESCAPED}” (1) for good?`)
      expect(confirmPage).toContain(`action="/directory/${a}/purge" method="post"`)
      const confirmRow = await (await get(`/directory/${a}/purge`, u, HTMX)).text()
      expect(confirmRow).toStartWith(`<tr id="entry-${a}">`)
      expect(confirmRow).toContain('Delete for good</button>')
      expect(await (await get(`/directory/${a}`, u, HTMX)).text()).toContain('Restore</button>')
      const purged = await form(`/directory/${a}/purge`, {}, u, HTMX)
      expect(await purged.text()).toContain('The entry was deleted for good.')
      expect(await entries(u, true)).toEqual([])
      // an active entry is not purged: 409, still there
      const refused = await form(`/directory/${b}/purge`, {}, u)
      expect(refused.status).toBe(409)
      expect((await entries(u)).map((e) => e.id)).toEqual([b])
    })

    it('answers 404 for another user\'s entry on every page and form, and leaves it as it was', async () => {
      const id = await add(alice, { location: 'Alice ward', name: 'Alice desk', number: '7777' })
      const trashed = await add(alice, { location: 'Alice ward', name: 'Alice old', number: '7778' })
      await directory.trashEntry(t.booted.core, alice.id, trashed)
      for (const path of [`/directory/${id}`, `/directory/${id}/edit`, `/directory/${trashed}/purge`]) {
        expect((await get(path, bob)).status, path).toBe(404)
        expect((await get(path, bob, HTMX)).status, path).toBe(404)
      }
      const posts: Array<[string, Record<string, string>]> = [
        [`/directory/${id}`, { location: 'Bob', name: 'Bob', number: '1' }], [`/directory/${id}/trash`, {}],
        [`/directory/${trashed}/restore`, {}], [`/directory/${trashed}/purge`, {}],
      ]
      for (const [path, fields] of posts) expect((await form(path, fields, bob)).status, path).toBe(404)
      expect((await entries(alice)).find((e) => e.id === id)).toMatchObject({ name: 'Alice desk', trashed_at: null })
      expect((await entries(alice, true)).map((e) => e.id)).toContain(trashed)
      expect(await page('/directory', bob)).not.toContain('Alice desk')
    })

    it('refuses a form posted from another site (403) and stores nothing', async () => {
      const u = await fresh()
      const id = await add(u, { location: 'Ward', name: 'Kept', number: '1' })
      expect((await form('/directory', { name: 'X', number: '1' }, u, EVIL)).status).toBe(403)
      expect((await form(`/directory/${id}/trash`, {}, u, EVIL)).status).toBe(403)
      expect((await form(`/directory/${id}`, { name: 'Changed', number: '2' }, u, EVIL)).status).toBe(403)
      expect((await entries(u)).map((e) => e.name)).toEqual(['Kept'])
    })

    it('downloads the export zip from the page', async () => {
      const u = await fresh()
      await add(u, { location: 'Ward', name: 'Desk', number: '1' })
      const res = await get('/directory/export', u)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/zip')
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="app-extensions.zip"')
      expect(res.headers.get('x-export-count')).toBe('1')
      const file = JSON.parse(strFromU8(unzipSync(new Uint8Array(await res.arrayBuffer()))[EXPORT_FILE_NAME]!))
      expect(file.items).toEqual([{ location: 'Ward', name: 'Desk', number: '1', type: 'extension', notes: '' }])
    })
  })

  describe('import', () => {
    it('uploads a file, shows the preview summary, imports with the options chosen, once', async () => {
      const u = await fresh()
      await add(u, { location: 'Ward 1', name: 'Desk', number: '1001' })
      const old = await add(u, { location: 'Ward 2', name: 'Old', number: '2002' })
      await directory.trashEntry(t.booted.core, u.id, old)
      const items = [
        { location: 'Ward 1', name: 'Desk', number: '1001', type: 'extension', notes: '' }, // already there
        { location: 'Ward 2', name: 'Old', number: '2002', type: 'extension', notes: '' }, // in the trash
        { location: 'Ward 1', name: 'Clerk', number: '1001', type: 'pager', notes: '' }, // possible duplicate
        { location: 'Lab', name: `New ${XSS}`, number: '3003', type: 'extension', notes: '' }, // new
        { location: 'Lab', number: '' }, // invalid
      ]
      const importPage = await page('/directory/import', u)
      expect(importPage).toContain('enctype="multipart/form-data" hx-boost="false"')
      expect(importPage).toContain('<label for="dir-file">')

      const res = await upload(u, zipSync({ [EXPORT_FILE_NAME]: strToU8(exportFile(items)) }))
      expect(res.status).toBe(303)
      const location = res.headers.get('location')!
      expect(location).toMatch(/^\/directory\/import\/[A-Za-z0-9_-]+$/)
      const preview = await page(location, u)
      const dd = (label: string) => new RegExp(`<dt>${label.replace(/[()]/g, '\\$&')}</dt><dd>(\\d+)</dd>`).exec(preview)?.[1]
      expect(dd('Entries in the file')).toBe('5')
      expect(dd('New')).toBe('1')
      expect(dd('Already in your directory (skipped)')).toBe('1')
      expect(dd('The same as an entry in your trash')).toBe('1')
      expect(dd('Possible duplicates (same location and number, or same number and type)')).toBe('1')
      expect(dd('Cannot be imported (a rule is not met)')).toBe('1')
      expect(preview).toContain('<input type="checkbox" id="dir-restore" name="restoreTrashed" value="true"/>')
      expect(preview).toContain('<input type="checkbox" id="dir-possible" name="importPossibleDuplicates" value="true"/>')
      expect(preview).toContain(`action="${location}" method="post"`)
      expect(preview).toContain(`New ${XSS_ESCAPED}`)
      expect(outsideAttributes(preview)).not.toContain(XSS)
      expect(await entries(u)).toHaveLength(1) // nothing imported yet

      // another user cannot see or use it
      expect((await get(location, bob)).status).toBe(404)
      expect((await form(location, { restoreTrashed: 'true' }, bob)).status).toBe(404)

      const done = await form(location, { restoreTrashed: 'true' }, u)
      expect(done.status).toBe(303)
      expect(done.headers.get('location')).toBe(location)
      const result = await page(location, u)
      expect(result).toContain('<h1>Import done</h1>')
      const rd = (label: string) => new RegExp(`<dt>${label}</dt><dd>(\\d+)</dd>`).exec(result)?.[1]
      expect([rd('Imported'), rd('Restored from the trash'), rd('Skipped as duplicates'), rd('Possible duplicates skipped'), rd('Could not be imported')])
        .toEqual(['1', '1', '1', '1', '1'])
      expect((await entries(u)).map((e) => e.name).sort()).toEqual(['Desk', `New ${XSS}`, 'Old'])
      // sent again (a second click): the same result, nothing more stored
      expect((await form(location, { restoreTrashed: 'true', importPossibleDuplicates: 'true' }, u)).status).toBe(303)
      expect(await entries(u)).toHaveLength(3)
    })

    it('shows a refused file next to the file input (422), stages nothing; a file over 1 MB is 413; an unknown import 404', async () => {
      const u = await fresh()
      const bad = await upload(u, '{"items": [', 'app-extensions.json')
      expect(bad.status).toBe(422)
      const body = await bad.text()
      expect(body).toContain('<html')
      expect(body).toContain('<span class="field-error" id="dir-file-error">The file is not valid JSON</span>')
      const bomb = zipSync({ [EXPORT_FILE_NAME]: new Uint8Array(20 * 1024 * 1024).fill(0x20) })
      const bombRes = await upload(u, bomb)
      expect(bombRes.status).toBe(413)
      expect(await bombRes.text()).toContain('id="dir-file-error"')
      const path = await upload(u, zipSync({ [`../${EXPORT_FILE_NAME}`]: strToU8('[]') }))
      expect(path.status).toBe(422)
      const none = new FormData()
      none.append('file', new File([], ''), '')
      const noFile = await t.request('/directory/import', { method: 'POST', body: none, headers: { accept: 'text/html', cookie: u.cookie } })
      expect(noFile.status).toBe(422)
      expect(await noFile.text()).toContain('Choose a file to import')
      const big = await upload(u, `[${' '.repeat(2 * IMPORT_MAX_BYTES)}]`, 'app-extensions.json')
      expect(big.status).toBe(413)
      expect(await big.text()).toContain('<html')
      const staged = await t.db.sql`select key from core.kv where key like ${`directory.import:${u.id}:%`}`
      expect(staged).toEqual([])
      expect((await get('/directory/import/abcdefghijklmnopqrstuvwx', u)).status).toBe(404)
      expect((await form('/directory/import/abcdefghijklmnopqrstuvwx', {}, u)).status).toBe(404)
    })
  })
})

// The phone directory API: entries (create, list, search, replace), the trash (move, restore, purge only from the
// trash), own entries only (another user's are 404 and untouched), the zip export, and the import from JSON bodies
// (three shapes) and files (the JSON export or the zip) with its preview: the four duplicate rules each alone and
// together, invalid entries counted, the 1000-entry and 1 MB limits; the untrusted zip (bomb, entry count, path
// names, nested archives) and malformed JSON refused with nothing imported; parallel imports; cross-origin writes.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { strToU8, strFromU8, unzipSync, Zip, ZipDeflate, zipSync } from 'fflate'
import {
  DIRECTORY_ENTRIES_MAX, EXPORT_FILE_NAME, EXPORT_FORMAT, EXPORT_ZIP_NAME, IMPORT_MAX_BYTES, IMPORT_VALID_MAX, LOCATION_MAX, NAME_MAX,
  NOTES_MAX, NUMBER_MAX, ZIP_UNCOMPRESSED_MAX_BYTES,
} from '../plugins/directory/model'
import { databaseTargets, type TestApp } from './support/app'
import { appWithTwoUsers, asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(60_000)

const API = '/api/extensions'

interface EntryBody {
  id: number; location: string; name: string; number: string; type: string; notes: string
  trashed_at: string | null; created_at: string; updated_at: string
}
interface ImportResult { success: true; imported: number; restored: number; skipped: number; possibleSkipped: number; total: number; invalid: number; overLimit: number }
interface PreviewEntry { index: number; status: string; action: string; entry: Record<string, string> | null; matchId: number | null; error: string | null }
interface Preview { success: true; preview: { summary: Record<string, number>; entries: PreviewEntry[] } }
interface ErrorBody { success: false; error: string; code: string; fields?: Record<string, string> }

type Item = { location?: string; name?: string; number?: string; type?: string; notes?: string }

const zipOf = (files: Record<string, Uint8Array>) => zipSync(files)
const exportJson = (items: unknown[]) => JSON.stringify({ format: EXPORT_FORMAT, version: 1, exported_at: '2026-01-01T00:00:00.000Z', items })

/** A zip written as a stream: the sizes are not in the entry's header, so only inflating tells them. */
function streamedZip(name: string, data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = []
  const zip = new Zip((err, chunk) => {
    if (err) throw err
    parts.push(chunk)
  })
  const file = new ZipDeflate(name, { level: 9 })
  zip.add(file)
  file.push(data, true)
  zip.end()
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

describe.each(databaseTargets())('phone directory API [%s]', (target) => {
  let app: TestApp
  let clock: { now: number }
  let alice: SignedIn
  let bob: SignedIn

  beforeAll(async () => {
    ;({ app, clock, alice, bob } = await appWithTwoUsers(target, '2026-03-02T08:00:00Z'))
  })
  afterAll(() => app.close())

  const fresh = () => userWithSession(app, 'user', 'dir')
  const failure = async (res: Response, status: number): Promise<ErrorBody> => {
    const json = (await res.json()) as ErrorBody
    expect(res.status, JSON.stringify(json)).toBe(status)
    expect(json.success).toBe(false)
    return json
  }
  const create = async (s: SignedIn, body: Item): Promise<number> => {
    const res = await app.post(API, body, asUser(s))
    const json = (await res.json()) as { success: boolean; id: number }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    expect(typeof json.id).toBe('number')
    return json.id
  }
  const list = async (s: SignedIn, query = ''): Promise<EntryBody[]> => {
    const res = await app.get(`${API}${query}`, asUser(s))
    const json = (await res.json()) as { success: boolean; items: EntryBody[] }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.items
  }
  const trash = (s: SignedIn, id: number) => app.delete(`${API}/${id}`, asUser(s))
  const importJson = async (s: SignedIn, body: unknown, path = '/import'): Promise<ImportResult> => {
    const res = await app.post(`${API}${path}`, body, asUser(s))
    const json = (await res.json()) as ImportResult
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json
  }
  const preview = async (s: SignedIn, body: unknown): Promise<Preview['preview']> => {
    const res = await app.post(`${API}/import/preview`, body, asUser(s))
    const json = (await res.json()) as Preview
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.preview
  }
  const uploadFile = (s: SignedIn, bytes: Uint8Array | string, opts: { name?: string; path?: string; fields?: Record<string, string> } = {}) => {
    const form = new FormData()
    form.append('file', new File([bytes as BlobPart], opts.name ?? EXPORT_ZIP_NAME))
    for (const [k, v] of Object.entries(opts.fields ?? {})) form.append(k, v)
    return app.request(`${API}${opts.path ?? '/import-file'}`, { method: 'POST', body: form, ...asUser(s) })
  }
  const stored = async (userId: number) =>
    (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.phone_directory where user_id = ${userId}`)[0]!.n

  describe('entries', () => {
    it('refuses every route without a session (401)', async () => {
      const calls: Array<[string, string]> = [
        ['GET', API], ['POST', API], ['PUT', `${API}/1`], ['DELETE', `${API}/1`], ['POST', `${API}/1/restore`], ['DELETE', `${API}/1/purge`],
        ['GET', `${API}/export`], ['POST', `${API}/import`], ['POST', `${API}/import/preview`], ['POST', `${API}/import-file`],
        ['POST', `${API}/import-file/preview`],
      ]
      const entry = JSON.stringify({ name: 'X', number: '1' })
      const form = () => {
        const f = new FormData()
        f.append('file', new File(['[]'], EXPORT_FILE_NAME))
        return f
      }
      for (const [method, path] of calls) {
        const body = method === 'GET' || method === 'DELETE' ? undefined : path.includes('import-file') ? form() : path.includes('import') ? '[]' : entry
        const headers: Record<string, string> = typeof body === 'string' ? { 'content-type': 'application/json' } : {}
        const res = await app.request(path, { method, headers, body, ...asUser(null) })
        expect(res.status, `${method} ${path}`).toBe(401)
      }
    })

    it('creates an entry and lists it with every field; texts trimmed, type in any case, the default type extension', async () => {
      const u = await fresh()
      const id = await create(u, { location: '  Ward 4  ', name: 'Charge nurse', number: ' 4401 ', type: 'Pager', notes: ' nights ' })
      const other = await create(u, { name: 'Pharmacy', number: '2200' })
      const items = await list(u)
      expect(items.map((e) => e.id)).toEqual([other, id]) // by location ('' first), then name
      const e = items.find((x) => x.id === id)!
      expect(e).toEqual({
        id, location: 'Ward 4', name: 'Charge nurse', number: '4401', type: 'pager', notes: 'nights', trashed_at: null,
        created_at: '2026-03-02T08:00:00.000Z', updated_at: '2026-03-02T08:00:00.000Z',
      })
      expect(items.find((x) => x.id === other)).toMatchObject({ location: '', type: 'extension', notes: '' })
    })

    it('refuses an entry that breaks a rule with 422 naming the field, and stores nothing', async () => {
      const u = await fresh()
      const cases: Array<[Item, string]> = [
        [{ name: 'X', number: '   ' }, 'number'],
        [{ number: '1234' }, 'location'],
        [{ location: ' ', name: '', number: '1234' }, 'location'],
        [{ name: 'X', number: '1', type: 'fax' }, 'type'],
        [{ location: 'x'.repeat(LOCATION_MAX + 1), number: '1' }, 'location'],
        [{ name: 'x'.repeat(NAME_MAX + 1), number: '1' }, 'name'],
        [{ name: 'X', number: '1'.repeat(NUMBER_MAX + 1) }, 'number'],
        [{ name: 'X', number: '1', notes: 'n'.repeat(NOTES_MAX + 1) }, 'notes'],
      ]
      for (const [body, field] of cases) {
        const err = await failure(await app.post(API, body, asUser(u)), 422)
        expect(err.fields?.[field], JSON.stringify(body)).toBeString()
      }
      // at the limits: accepted
      await create(u, { location: 'x'.repeat(LOCATION_MAX), name: 'y'.repeat(NAME_MAX), number: '1'.repeat(NUMBER_MAX), notes: 'n'.repeat(NOTES_MAX) })
      // not the schema: 400
      await failure(await app.post(API, { name: 'X' }, asUser(u)), 400)
      await failure(await app.post(API, { name: 'X', number: 1234 }, asUser(u)), 400)
      expect(await stored(u.user.id)).toBe(1)
    })

    it('searches location, name, number and notes, ignoring letter case; % and _ are plain characters', async () => {
      const u = await fresh()
      const ward = await create(u, { location: 'Cardiology Ward', name: 'Desk', number: '1000' })
      const reg = await create(u, { location: 'ED', name: 'Registrar on CALL', number: '2000' })
      const bleep = await create(u, { location: 'ICU', name: 'Outreach', number: '7788', type: 'pager' })
      const note = await create(u, { location: 'Lab', name: 'Bloods', number: '3000', notes: 'Ask for 100% urgent_only' })
      await create(bob, { location: 'Cardiology Ward', name: 'Bob desk', number: '1000' })
      const ids = async (q: string) => (await list(u, `?q=${encodeURIComponent(q)}`)).map((e) => e.id).sort()
      expect(await ids('cardio')).toEqual([ward])
      expect(await ids('registrar on call')).toEqual([reg])
      expect(await ids('778')).toEqual([bleep])
      expect(await ids('URGENT')).toEqual([note])
      expect(await ids('100%')).toEqual([note])
      expect(await ids('%')).toEqual([note])
      expect(await ids('_')).toEqual([note])
      expect(await ids('nothing like it')).toEqual([])
      // a match never spans two fields
      expect(await ids('ward desk')).toEqual([])
      expect(await ids('  ')).toHaveLength(4)
      await failure(await app.get(`${API}?q=${'q'.repeat(201)}`, asUser(u)), 400)
    })

    it('replaces an entry (PUT); a trashed entry is 409 until restored', async () => {
      const u = await fresh()
      const id = await create(u, { location: 'Ward 1', name: 'Desk', number: '1111', notes: 'old' })
      clock.now += 60_000
      const res = await app.put(`${API}/${id}`, { location: 'Ward 2', name: 'Sister', number: '2222', type: 'pager' }, asUser(u))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true })
      const [e] = await list(u)
      expect(e).toMatchObject({ id, location: 'Ward 2', name: 'Sister', number: '2222', type: 'pager', notes: '' })
      expect(Date.parse(e!.updated_at)).toBeGreaterThan(Date.parse(e!.created_at))
      await failure(await app.put(`${API}/${id}`, { name: 'X', number: ' ' }, asUser(u)), 422)
      expect((await trash(u, id)).status).toBe(200)
      expect((await failure(await app.put(`${API}/${id}`, { name: 'X', number: '1' }, asUser(u)), 409)).code).toBe('entry_trashed')
    })

    it('moves to the trash, restores, and purges only from the trash', async () => {
      const u = await fresh()
      const id = await create(u, { location: 'Theatre', name: 'Recovery', number: '5050' })
      clock.now += 3_600_000
      const moved = await trash(u, id)
      expect(moved.status).toBe(200)
      expect(await moved.json()).toEqual({ success: true })
      expect(await list(u)).toEqual([])
      for (const flag of ['1', 'true', 'TRUE']) {
        const items = await list(u, `?trash=${flag}`)
        expect(items.map((e) => e.id)).toEqual([id])
        expect(items[0]!.trashed_at).toBe(new Date(clock.now).toISOString())
      }
      expect(await list(u, '?trash=0')).toEqual([])
      expect(await list(u, '?trash=false')).toEqual([])
      expect((await failure(await trash(u, id), 409)).code).toBe('entry_trashed')

      const restored = await app.post(`${API}/${id}/restore`, undefined, asUser(u))
      expect(restored.status).toBe(200)
      expect((await list(u)).map((e) => ({ id: e.id, trashed_at: e.trashed_at }))).toEqual([{ id, trashed_at: null }])
      expect((await failure(await app.post(`${API}/${id}/restore`, undefined, asUser(u)), 409)).code).toBe('entry_not_trashed')

      // purge of an active entry: refused, still there
      expect((await failure(await app.delete(`${API}/${id}/purge`, asUser(u)), 409)).code).toBe('entry_not_trashed')
      expect(await stored(u.user.id)).toBe(1)
      await trash(u, id)
      const purged = await app.delete(`${API}/${id}/purge`, asUser(u))
      expect(purged.status).toBe(200)
      expect(await stored(u.user.id)).toBe(0)
      expect((await failure(await app.delete(`${API}/${id}/purge`, asUser(u)), 404)).code).toBe('entry_not_found')
    })

    it('keeps entries to their user: another user\'s entry is 404 on every route and stays as it was', async () => {
      const mine = await create(alice, { location: 'Alice ward', name: 'Alice', number: '9001' })
      const trashed = await create(alice, { location: 'Alice ward', name: 'Old', number: '9002' })
      await trash(alice, trashed)
      expect((await list(bob)).map((e) => e.id)).not.toContain(mine)
      expect((await list(bob, '?trash=1')).map((e) => e.id)).not.toContain(trashed)
      expect((await list(bob, '?q=alice')).length).toBe(0)
      const attempts = [
        app.put(`${API}/${mine}`, { name: 'Bob', number: '1' }, asUser(bob)),
        app.delete(`${API}/${mine}`, asUser(bob)),
        app.post(`${API}/${trashed}/restore`, undefined, asUser(bob)),
        app.delete(`${API}/${trashed}/purge`, asUser(bob)),
        app.delete(`${API}/999999/purge`, asUser(bob)),
      ]
      for (const res of await Promise.all(attempts)) {
        const err = await failure(res, 404)
        expect(err).toMatchObject({ code: 'entry_not_found', error: 'Entry not found' })
      }
      const rows = await app.db.sql<{ id: number; name: string; trashed: boolean }>`
        select id, name, trashed_at is not null as trashed from clinical.phone_directory where id in (${mine}, ${trashed}) order by id`
      expect(rows).toEqual([{ id: mine, name: 'Alice', trashed: false }, { id: trashed, name: 'Old', trashed: true }])
      await failure(await app.delete(`${API}/0`, asUser(bob)), 400)
      await failure(await app.delete(`${API}/abc`, asUser(bob)), 400)
    })

    it('refuses a write from another site (403) and stores nothing', async () => {
      const u = await fresh()
      const res = await app.post(API, { name: 'X', number: '1' }, { ...asUser(u), headers: { origin: 'https://evil.example' } })
      expect((await failure(res, 403)).code).toBe('origin_not_allowed')
      const imp = await app.post(`${API}/import`, [{ name: 'X', number: '1' }], { ...asUser(u), headers: { origin: 'https://evil.example' } })
      await failure(imp, 403)
      expect(await stored(u.user.id)).toBe(0)
    })

    it(`holds at most ${DIRECTORY_ENTRIES_MAX} entries, the trash included: 409 past that, for a create and an import`, async () => {
      const u = await fresh()
      const now = new Date(clock.now)
      await app.db.sql`
        insert into clinical.phone_directory (user_id, location, name, number, type, notes, trashed_at, created_at, updated_at)
        select ${u.user.id}, 'Bulk', 'Entry ' || g, g::text, 'extension', '', case when g % 2 = 0 then ${now}::timestamptz end, ${now}, ${now}
        from generate_series(1, ${DIRECTORY_ENTRIES_MAX - 1}) g`
      await create(u, { name: 'The last one', number: 'last' })
      expect((await failure(await app.post(API, { name: 'One more', number: 'more' }, asUser(u)), 409)).code).toBe('directory_full')
      expect((await failure(await app.post(`${API}/import`, [{ name: 'Imported', number: 'imp' }], asUser(u)), 409)).code).toBe('directory_full')
      expect(await stored(u.user.id)).toBe(DIRECTORY_ENTRIES_MAX)
      // an import of exact duplicates only adds nothing, so it still answers
      expect((await importJson(u, [{ name: 'The last one', number: 'last' }])).skipped).toBe(1)
    })
  })

  describe('export', () => {
    it('is a zip holding exactly app-extensions.json with the active entries, no ids; Content-Disposition and X-Export-Count', async () => {
      const u = await fresh()
      await create(u, { location: 'B ward', name: 'Desk', number: '200', notes: 'Day <b>only</b>' })
      await create(u, { location: 'A ward', name: 'Bleep', number: '100', type: 'pager' })
      const gone = await create(u, { location: 'C ward', name: 'Closed', number: '300' })
      await trash(u, gone)
      await create(bob, { location: 'Bob ward', name: 'Bob', number: '999' })
      const res = await app.get(`${API}/export`, asUser(u))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/zip')
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${EXPORT_ZIP_NAME}"`)
      expect(res.headers.get('x-export-count')).toBe('2')
      const files = unzipSync(new Uint8Array(await res.arrayBuffer()))
      expect(Object.keys(files)).toEqual([EXPORT_FILE_NAME])
      const file = JSON.parse(strFromU8(files[EXPORT_FILE_NAME]!))
      expect(Object.keys(file).sort()).toEqual(['exported_at', 'format', 'items', 'version'])
      expect(file.format).toBe(EXPORT_FORMAT)
      expect(file.version).toBe(1)
      expect(file.exported_at).toBe(new Date(clock.now).toISOString())
      expect(file.items).toEqual([
        { location: 'A ward', name: 'Bleep', number: '100', type: 'pager', notes: '' },
        { location: 'B ward', name: 'Desk', number: '200', type: 'extension', notes: 'Day <b>only</b>' },
      ])
    })

    it('of an empty directory holds no items (X-Export-Count 0)', async () => {
      const u = await fresh()
      const res = await app.get(`${API}/export`, asUser(u))
      expect(res.headers.get('x-export-count')).toBe('0')
      expect(JSON.parse(strFromU8(unzipSync(new Uint8Array(await res.arrayBuffer()))[EXPORT_FILE_NAME]!)).items).toEqual([])
    })

    it('round-trips: another user imports it whole; the same user skips it all', async () => {
      const u = await fresh()
      await create(u, { location: 'Ward 7', name: 'Desk', number: '7000' })
      await create(u, { location: 'Ward 8', name: 'Bleep', number: '8000', type: 'pager', notes: 'after 5pm' })
      const zip = new Uint8Array(await (await app.get(`${API}/export`, asUser(u))).arrayBuffer())
      const v = await fresh()
      const res = await uploadFile(v, zip)
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true, imported: 2, restored: 0, skipped: 0, possibleSkipped: 0, total: 2, invalid: 0, overLimit: 0 })
      expect((await list(v)).map(({ location, name, number, type, notes }) => ({ location, name, number, type, notes }))).toEqual([
        { location: 'Ward 7', name: 'Desk', number: '7000', type: 'extension', notes: '' },
        { location: 'Ward 8', name: 'Bleep', number: '8000', type: 'pager', notes: 'after 5pm' },
      ])
      expect(await (await uploadFile(u, zip)).json()).toMatchObject({ imported: 0, skipped: 2, total: 2 })
    })
  })

  describe('import rules', () => {
    const base = { location: 'Ward 5', name: 'Nurse station', number: '5500', type: 'extension', notes: 'front desk' }

    it('rule 1: an exact duplicate of an active entry is skipped (letter case and spaces ignored)', async () => {
      const u = await fresh()
      const id = await create(u, base)
      const r = await importJson(u, [{ ...base, location: ' ward  5 ', name: 'NURSE station', number: '55-00' }])
      expect(r).toEqual({ success: true, imported: 0, restored: 0, skipped: 1, possibleSkipped: 0, total: 1, invalid: 0, overLimit: 0 })
      expect((await list(u)).map((e) => e.id)).toEqual([id])
    })

    it('rule 2: an exact match of a trashed entry is restored when restoreTrashed is true, else skipped', async () => {
      const u = await fresh()
      const id = await create(u, base)
      await trash(u, id)
      const kept = await importJson(u, { items: [base], options: { restoreTrashed: false } })
      expect(kept).toMatchObject({ imported: 0, restored: 0, skipped: 1, total: 1 })
      expect(await list(u)).toEqual([])
      const restored = await importJson(u, { items: [base], options: { restoreTrashed: true } })
      expect(restored).toMatchObject({ imported: 0, restored: 1, skipped: 0, total: 1 })
      expect((await list(u)).map((e) => ({ id: e.id, trashed_at: e.trashed_at }))).toEqual([{ id, trashed_at: null }])
      expect(await stored(u.user.id)).toBe(1)
    })

    it('rule 3: a possible duplicate (same location and number, or same number and type) is skipped unless importPossibleDuplicates', async () => {
      const u = await fresh()
      await create(u, base)
      const sameLocationNumber = { ...base, name: 'Ward clerk', type: 'pager' }
      const sameNumberType = { ...base, location: 'Ward 6', name: 'Other' }
      const differentType = { ...base, location: 'Ward 6', name: 'Other', type: 'pager' }
      const skipped = await importJson(u, { items: [sameLocationNumber, sameNumberType, differentType] })
      expect(skipped).toMatchObject({ imported: 1, possibleSkipped: 2, skipped: 0, total: 3 })
      const taken = await importJson(u, { items: [sameLocationNumber, sameNumberType], options: { importPossibleDuplicates: true } })
      expect(taken).toMatchObject({ imported: 2, possibleSkipped: 0, total: 2 })
      expect(await stored(u.user.id)).toBe(4)
    })

    it(`rule 4: at most ${IMPORT_VALID_MAX} valid entries are processed; invalid entries are counted, not fatal`, async () => {
      const u = await fresh()
      const items: unknown[] = [{ name: 'No number' }, 'not an entry', { name: 'Bad type', number: '1', type: 'fax' }]
      for (let i = 0; i < IMPORT_VALID_MAX + 5; i++) items.push({ location: 'Bulk', name: `Entry ${i}`, number: `${10000 + i}` })
      const r = await importJson(u, items)
      expect(r).toEqual({ success: true, imported: IMPORT_VALID_MAX, restored: 0, skipped: 0, possibleSkipped: 0, total: items.length, invalid: 3, overLimit: 5 })
      expect(await stored(u.user.id)).toBe(IMPORT_VALID_MAX)
      const names = await app.db.sql<{ name: string }>`select name from clinical.phone_directory where user_id = ${u.user.id} order by id desc limit 1`
      expect(names[0]!.name).toBe(`Entry ${IMPORT_VALID_MAX - 1}`)
    })

    it('all rules together, in order; entries earlier in the import count for the later ones; preview says the same and stores nothing', async () => {
      const u = await fresh()
      const active = await create(u, base)
      const trashedId = await create(u, { location: 'Ward 9', name: 'Old desk', number: '9900' })
      await trash(u, trashedId)
      const items = [
        base, // exact active
        { location: 'Ward 9', name: 'Old desk', number: '9900' }, // exact trashed
        { location: 'Ward 9', name: 'Old desk', number: '9900' }, // exact trashed again: active once the first is restored
        { location: 'Ward 5', name: 'Someone else', number: '5500', type: 'pager' }, // possible (location + number)
        { location: 'Lab', name: 'Bloods', number: '3100' }, // new
        { location: 'Lab', name: 'bloods', number: '31 00' }, // exact duplicate of the new one just before
        { location: 'Lab 2', name: 'Other', number: '3100' }, // possible: same number and type as the new one
        { number: '' }, // invalid
      ]
      const options = { restoreTrashed: true, importPossibleDuplicates: false }
      const p = await preview(u, { items, options })
      expect(p.summary).toEqual({ total: 8, new: 1, exactActive: 3, exactTrashed: 1, possible: 2, invalid: 1, overLimit: 0 })
      expect(p.entries.map((e) => [e.index, e.status, e.action])).toEqual([
        [0, 'exactActive', 'skip'], [1, 'exactTrashed', 'restore'], [2, 'exactActive', 'skip'], [3, 'possible', 'skip'],
        [4, 'new', 'import'], [5, 'exactActive', 'skip'], [6, 'possible', 'skip'], [7, 'invalid', 'skip'],
      ])
      expect(p.entries[0]!.matchId).toBe(active)
      expect(p.entries[1]!.matchId).toBe(trashedId)
      expect(p.entries[3]!.matchId).toBe(active)
      expect(p.entries[4]).toMatchObject({ entry: { location: 'Lab', name: 'Bloods', number: '3100', type: 'extension', notes: '' }, matchId: null, error: null })
      expect(p.entries[7]).toMatchObject({ entry: null, error: expect.stringContaining('number') })
      // a dry run: nothing changed
      expect(await stored(u.user.id)).toBe(2)
      expect((await list(u, '?trash=1')).map((e) => e.id)).toEqual([trashedId])

      const r = await importJson(u, { items, options })
      expect(r).toEqual({ success: true, imported: 1, restored: 1, skipped: 3, possibleSkipped: 2, total: 8, invalid: 1, overLimit: 0 })
      expect((await list(u)).map((e) => e.name).sort()).toEqual(['Bloods', 'Nurse station', 'Old desk'])

      // the same, without restoring: the trashed match is skipped both times
      const v = await fresh()
      await create(v, base)
      const t2 = await create(v, { location: 'Ward 9', name: 'Old desk', number: '9900' })
      await trash(v, t2)
      expect(await importJson(v, { items })).toEqual({ success: true, imported: 1, restored: 0, skipped: 4, possibleSkipped: 2, total: 8, invalid: 1, overLimit: 0 })
    })

    it('takes the three body shapes: an export payload, an array, an object with items and options', async () => {
      const u = await fresh()
      const payload = JSON.parse(exportJson([{ location: 'A', name: 'One', number: '1', type: 'extension', notes: '' }]))
      expect(await importJson(u, payload)).toMatchObject({ imported: 1, total: 1 })
      expect(await importJson(u, [{ location: 'B', name: 'Two', number: '2' }])).toMatchObject({ imported: 1, total: 1 })
      expect(await importJson(u, { items: [{ location: 'C', name: 'Three', number: '3' }], options: {} })).toMatchObject({ imported: 1, total: 1 })
      expect(await importJson(u, [])).toMatchObject({ imported: 0, total: 0 })
      expect(await stored(u.user.id)).toBe(3)
    })

    it('refuses a body that is not an import (400), another format or version, and malformed JSON; nothing imported', async () => {
      const u = await fresh()
      const item = { name: 'X', number: '1' }
      for (const path of ['/import', '/import/preview']) {
        await failure(await app.post(`${API}${path}`, {}, asUser(u)), 400)
        await failure(await app.post(`${API}${path}`, { items: 'no' }, asUser(u)), 400)
        await failure(await app.post(`${API}${path}`, 'text', asUser(u)), 400)
        expect((await failure(await app.post(`${API}${path}`, { format: 'other-app', items: [item] }, asUser(u)), 400)).code).toBe('unsupported_format')
        expect((await failure(await app.post(`${API}${path}`, { format: EXPORT_FORMAT, version: 2, items: [item] }, asUser(u)), 400)).code).toBe('unsupported_version')
        const broken = await app.request(`${API}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[{"name": "X", "number": "1"}', ...asUser(u) })
        const err = await failure(broken, 400)
        expect(err.error).toBeString()
      }
      expect(await stored(u.user.id)).toBe(0)
    })

    it(`refuses a JSON body over ${IMPORT_MAX_BYTES} bytes (413) and imports nothing`, async () => {
      const u = await fresh()
      const items = [{ name: 'X', number: '1', notes: 'n'.repeat(IMPORT_MAX_BYTES) }]
      expect((await app.post(`${API}/import`, items, asUser(u))).status).toBe(413)
      expect(await stored(u.user.id)).toBe(0)
    })

    it('imports once when the same import is sent twice at the same time', async () => {
      const u = await fresh()
      const items = Array.from({ length: 50 }, (_, i) => ({ location: 'Parallel', name: `P${i}`, number: `${600 + i}` }))
      const results = await Promise.all([1, 2, 3].map(() => importJson(u, items)))
      expect(results.map((r) => r.imported).sort()).toEqual([0, 0, 50])
      expect(results.map((r) => r.skipped).sort()).toEqual([0, 50, 50])
      expect(await stored(u.user.id)).toBe(50)
    })
  })

  describe('file import', () => {
    const items = [
      { location: 'Ward 1', name: 'Desk', number: '1001', type: 'extension', notes: '' },
      { location: 'Ward 2', name: 'Bleep', number: '2002', type: 'pager', notes: 'nights' },
    ]

    it('takes the JSON export file and the zip; the preview stores nothing; the form fields set the options', async () => {
      const u = await fresh()
      const pre = await uploadFile(u, zipOf({ [EXPORT_FILE_NAME]: strToU8(exportJson(items)) }), { path: '/import-file/preview' })
      expect(pre.status).toBe(200)
      const p = (await pre.json()) as Preview
      expect(p.preview.summary).toEqual({ total: 2, new: 2, exactActive: 0, exactTrashed: 0, possible: 0, invalid: 0, overLimit: 0 })
      expect(await stored(u.user.id)).toBe(0)

      const json = await uploadFile(u, exportJson(items), { name: EXPORT_FILE_NAME })
      expect(await json.json()).toMatchObject({ imported: 2, total: 2 })
      const [first] = await list(u)
      await trash(u, first!.id)
      // from the zip, with restoreTrashed and importPossibleDuplicates as form fields (`true` enables)
      const more = [...items, { location: 'Ward 2', name: 'Someone', number: '2002', type: 'extension', notes: '' }]
      const zip = zipOf({ [EXPORT_FILE_NAME]: strToU8(exportJson(more)) })
      expect(await (await uploadFile(u, zip, { path: '/import-file/preview' })).json()).toMatchObject({
        preview: { summary: { total: 3, new: 0, exactActive: 1, exactTrashed: 1, possible: 1 } },
      })
      const r = await uploadFile(u, zip, { fields: { restoreTrashed: 'true', importPossibleDuplicates: 'true' } })
      expect(await r.json()).toEqual({ success: true, imported: 1, restored: 1, skipped: 1, possibleSkipped: 0, total: 3, invalid: 0, overLimit: 0 })
      expect(await stored(u.user.id)).toBe(3)
    })

    it('refuses each unsafe or unreadable file with a clear 4xx and imports nothing', async () => {
      const u = await fresh()
      const good = strToU8(exportJson(items))
      const bomb = new Uint8Array(ZIP_UNCOMPRESSED_MAX_BYTES * 8).fill(0x20)
      const cases: Array<[string, Uint8Array | string, number, string]> = [
        ['zip bomb (sizes in the header)', zipOf({ [EXPORT_FILE_NAME]: bomb }), 413, 'zip_too_large'],
        ['zip bomb (streamed: no sizes in the header)', streamedZip(EXPORT_FILE_NAME, bomb), 413, 'zip_too_large'],
        ['two files', zipOf({ [EXPORT_FILE_NAME]: good, 'extra.json': good }), 400, 'zip_too_many_entries'],
        ['a path up', zipOf({ [`../${EXPORT_FILE_NAME}`]: good }), 400, 'zip_unsafe_path'],
        ['an absolute path', zipOf({ [`/${EXPORT_FILE_NAME}`]: good }), 400, 'zip_unsafe_path'],
        ['a folder', zipOf({ [`export/${EXPORT_FILE_NAME}`]: good }), 400, 'zip_unsafe_path'],
        ['a Windows path', zipOf({ [`..\\${EXPORT_FILE_NAME}`]: good }), 400, 'zip_unsafe_path'],
        ['a nested zip', zipOf({ 'inner.zip': zipOf({ [EXPORT_FILE_NAME]: good }) }), 400, 'zip_nested_archive'],
        ['a zip disguised as the JSON file', zipOf({ [EXPORT_FILE_NAME]: zipOf({ [EXPORT_FILE_NAME]: good }) }), 400, 'zip_nested_archive'],
        ['a gzip disguised as the JSON file', zipOf({ [EXPORT_FILE_NAME]: Bun.gzipSync(good) }), 400, 'zip_nested_archive'],
        ['another file', zipOf({ 'notes.txt': good }), 400, 'zip_unexpected_file'],
        ['an empty zip', zipOf({}), 400, 'zip_missing_file'],
        ['a damaged zip', zipOf({ [EXPORT_FILE_NAME]: good }).subarray(0, 40), 400, 'invalid_zip'],
        ['malformed JSON', '{"format": "app-phone-directory", "items": [', 400, 'invalid_json'],
        ['malformed JSON in the zip', zipOf({ [EXPORT_FILE_NAME]: strToU8('{"items": [}') }), 400, 'invalid_json'],
        ['not UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 400, 'invalid_encoding'],
        ['not an export', '{"hello": 1}', 400, 'invalid_import'],
        ['an empty file', '', 400, 'empty_file'],
      ]
      for (const [label, bytes, status, code] of cases) {
        for (const path of ['/import-file', '/import-file/preview']) {
          const err = await failure(await uploadFile(u, bytes, { path }), status)
          expect(err.code, `${label} ${path}`).toBe(code)
          expect(err.error.length, label).toBeGreaterThan(10)
        }
      }
      expect(await stored(u.user.id)).toBe(0)
    })

    it(`refuses a file over ${IMPORT_MAX_BYTES} bytes (413): a body over the limit before it is read, a file just over it too`, async () => {
      const u = await fresh()
      const justOver = `[${' '.repeat(IMPORT_MAX_BYTES - 1)}]`
      expect(justOver.length).toBe(IMPORT_MAX_BYTES + 1)
      const err = await failure(await uploadFile(u, justOver, { name: EXPORT_FILE_NAME }), 413)
      expect(err.code).toBe('file_too_large')
      const big = await failure(await uploadFile(u, 'x'.repeat(2 * IMPORT_MAX_BYTES), { name: EXPORT_FILE_NAME }), 413)
      expect(big.code).toBe('file_too_large')
      // declared length over the limit: refused without reading the body (which never ends here)
      const endless = new ReadableStream({ pull: () => new Promise(() => {}) })
      const res = await app.request(`${API}/import-file`, {
        method: 'POST', body: endless, headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(3 * IMPORT_MAX_BYTES) },
        ...asUser(u),
      })
      expect(res.status).toBe(413)
      expect(await stored(u.user.id)).toBe(0)
    })

    it('refuses a form without a file (400)', async () => {
      const u = await fresh()
      const form = new FormData()
      form.append('restoreTrashed', 'true')
      await failure(await app.request(`${API}/import-file`, { method: 'POST', body: form, ...asUser(u) }), 400)
    })
  })
})

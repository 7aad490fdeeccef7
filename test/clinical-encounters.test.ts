// Saved encounters: list (previews only), read (partial_data as a JSON string), create and update by POST,
// delete; idempotent creates (also in parallel), optimistic locking, the draft/reviewed status, expiry and the
// sweep on a moved clock, encryption of every patient text at rest, other users' encounters, sessions, limits.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import {
  ENCOUNTER_LIFETIME_DAYS, ENCOUNTER_TEXT_MAX, LABEL_MAX, PARTIAL_DATA_MAX, PREVIEW_CHARS,
} from '../plugins/clinical/models/records'
import { ENCOUNTER_BODY_LIMIT } from '../plugins/clinical/routes/records'
import { MESSAGES, preview, sweepExpiredEncounters } from '../plugins/clinical/services/encounters'
import { unpackText } from '../plugins/clinical/services/memories'
import { databaseTargets, type TestApp } from './support/app'
import { appWithTwoUsers, asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(60_000)

const DAY = 24 * 3600 * 1000
const PATH = '/api/encounters/saved'

interface Listing {
  id: number; label: string; enc_type: string; status: string; version: number
  transcript_preview: string; note_preview: string; created_at: string; updated_at: string; expires_at: string
  [k: string]: unknown
}
interface Full {
  id: number; label: string; enc_type: string; status: string; version: number; transcript: string; generated_note: string
  partial_data: string | null; created_at: string; updated_at: string; expires_at: string
}
interface Saved { success: boolean; id: number; version: number }
interface ErrorBody { success: false; error: string; code: string; fields?: Record<string, string>; current_version?: number }

const TRANSCRIPT = 'Mother reports three days of fever to 39.4 C and a barking cough, worse at night. No stridor at rest. '
  + 'Drinking well, four wet diapers today. Sibling at home with a cold. '.repeat(3)
const NOTE = 'S: 3-year-old with 3 days of fever and barking cough.\nO: T 38.9, RR 28, no stridor at rest, lungs clear.\n'
  + 'A: Croup, mild.\nP: Dexamethasone 0.6 mg/kg once; return precautions given.'

describe.each(databaseTargets())('saved encounters (%s)', (target) => {
  let app: TestApp
  let clock: { now: number }
  let alice: SignedIn
  let bob: SignedIn

  beforeAll(async () => {
    ;({ app, clock, alice, bob } = await appWithTwoUsers(target, '2026-04-01T08:00:00Z'))
  })
  afterAll(() => app.close())

  const as = asUser
  const save = (s: SignedIn, body: Record<string, unknown>) => app.post(PATH, body, as(s))
  const create = async (s: SignedIn, body: Record<string, unknown> = {}): Promise<Saved> => {
    const res = await save(s, { label: 'Bed 4, croup', enc_type: 'soap', transcript: TRANSCRIPT, generated_note: NOTE, ...body })
    const json = (await res.json()) as Saved
    expect(res.status, JSON.stringify(json)).toBe(200)
    return json
  }
  const read = async (s: SignedIn, id: number): Promise<Full> => {
    const res = await app.get(`${PATH}/${id}`, as(s))
    const json = (await res.json()) as { success: boolean; encounter: Full }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.encounter
  }
  const list = async (s: SignedIn, query = ''): Promise<Listing[]> => {
    const res = await app.get(`${PATH}${query}`, as(s))
    const json = (await res.json()) as { success: boolean; encounters: Listing[] }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.encounters
  }
  const rowCount = async (userId: number) =>
    (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.saved_encounters where user_id = ${userId}`)[0]!.n
  const failure = async (res: Response, status: number): Promise<ErrorBody> => {
    const json = (await res.json()) as ErrorBody
    expect(res.status, JSON.stringify(json)).toBe(status)
    expect(json.success).toBe(false)
    expect(typeof json.error).toBe('string')
    return json
  }

  it('refuses every route without a session (401)', async () => {
    const { id } = await create(alice)
    for (const res of [
      await app.get(PATH, as(null)),
      await app.get(`${PATH}/${id}`, as(null)),
      await app.post(PATH, { label: 'x', enc_type: 'soap' }, as(null)),
      await app.delete(`${PATH}/${id}`, as(null)),
    ]) await failure(res, 401)
    expect((await read(alice, id)).id).toBe(id)
  })

  it('creates a draft and reads it back whole, partial_data as a JSON string', async () => {
    const partial = { step: 'review', vitals: { temp: 38.9, rr: 28 }, flags: ['croup'] }
    const saved = await create(alice, { partial_data: partial })
    expect(saved).toEqual({ success: true, id: expect.any(Number), version: 1 })
    const e = await read(alice, saved.id)
    expect(e).toMatchObject({ id: saved.id, label: 'Bed 4, croup', enc_type: 'soap', status: 'draft', version: 1, transcript: TRANSCRIPT, generated_note: NOTE })
    expect(typeof e.partial_data).toBe('string')
    expect(JSON.parse(e.partial_data!)).toEqual(partial)
    expect(e.created_at).toBe(new Date(clock.now).toISOString())
    expect(e.updated_at).toBe(e.created_at)
    expect(e.expires_at).toBe(new Date(clock.now + ENCOUNTER_LIFETIME_DAYS * DAY).toISOString())
    // without partial_data: null; texts default to empty
    const bare = await create(alice, { transcript: undefined, generated_note: undefined })
    expect(await read(alice, bare.id)).toMatchObject({ partial_data: null, transcript: '', generated_note: '' })
  })

  it('lists own encounters newest first with previews, never the full texts', async () => {
    const user = await userWithSession(app)
    const first = await create(user, { label: 'First' })
    clock.now += 1000
    const long = 'word '.repeat(400)
    const second = await create(user, { label: 'Second', transcript: long, generated_note: 'Short\n\n  note' })
    const entries = await list(user)
    expect(entries.map((e) => e.id)).toEqual([second.id, first.id])
    const [top] = entries
    expect(top).toMatchObject({ label: 'Second', enc_type: 'soap', status: 'draft', version: 1, note_preview: 'Short note' })
    expect(top!.transcript_preview).toBe(preview(long))
    expect(Array.from(top!.transcript_preview).length).toBeLessThanOrEqual(PREVIEW_CHARS + 1)
    expect(top!.transcript_preview.length).toBeGreaterThan(PREVIEW_CHARS - 5)
    expect(top!.transcript_preview).toMatch(/^word word .*word…$/)
    for (const e of entries) {
      expect(e).not.toHaveProperty('transcript')
      expect(e).not.toHaveProperty('generated_note')
      expect(e).not.toHaveProperty('partial_data')
      expect(Object.keys(e).sort()).toEqual(['created_at', 'enc_type', 'expires_at', 'id', 'label', 'note_preview', 'status', 'transcript_preview', 'updated_at', 'version'])
    }
    expect(entries[1]!.transcript_preview).toBe(preview(TRANSCRIPT))
    // limit and offset page through them
    expect((await list(user, '?limit=1')).map((e) => e.id)).toEqual([second.id])
    expect((await list(user, '?limit=1&offset=1')).map((e) => e.id)).toEqual([first.id])
    await failure(await app.get(`${PATH}?limit=0`, as(user)), 400)
  })

  it('previews cut at PREVIEW_CHARS characters with white space collapsed', () => {
    expect(preview('  a\n\tb  ')).toBe('a b')
    expect(preview('x'.repeat(PREVIEW_CHARS))).toBe('x'.repeat(PREVIEW_CHARS))
    expect(preview('x'.repeat(PREVIEW_CHARS + 1))).toBe(`${'x'.repeat(PREVIEW_CHARS)}…`)
    // characters, not UTF-16 units: an emoji is not split
    expect(preview('😀'.repeat(PREVIEW_CHARS + 5))).toBe(`${'😀'.repeat(PREVIEW_CHARS)}…`)
  })

  it('the same idempotency_key answers the same encounter and stores one row', async () => {
    const user = await userWithSession(app)
    const first = await create(user, { idempotency_key: 'draft-1' })
    const again = await create(user, { idempotency_key: 'draft-1', label: 'Different label' })
    expect(again.id).toBe(first.id)
    expect(await rowCount(user.user.id)).toBe(1)
    expect((await read(user, first.id)).label).toBe('Bed 4, croup')
    // the key is per user: another user's same key makes their own encounter
    const other = await create(bob, { idempotency_key: 'draft-1' })
    expect(other.id).not.toBe(first.id)
    // after an update, the replayed create answers the current version
    await create(user, { id: first.id, label: 'Renamed' })
    expect(await create(user, { idempotency_key: 'draft-1' })).toEqual({ success: true, id: first.id, version: 2 })
  })

  it('parallel creates with one idempotency_key make one row and all answer its id', async () => {
    const user = await userWithSession(app)
    const answers = await Promise.all(Array.from({ length: 12 }, () => save(user, {
      label: 'Parallel', enc_type: 'hpi', transcript: TRANSCRIPT, idempotency_key: 'tap-tap-tap',
    })))
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: (await r.json()) as Saved })))
    expect(bodies.map((b) => b.status)).toEqual(Array(12).fill(200))
    expect(new Set(bodies.map((b) => b.body.id)).size).toBe(1)
    expect(await rowCount(user.user.id)).toBe(1)
    // without a key, parallel creates are separate encounters
    await Promise.all(Array.from({ length: 3 }, () => create(user, { label: 'No key' })))
    expect(await rowCount(user.user.id)).toBe(4)
  })

  it('an update answers the new version; a stale expected_version is 409 with the current version and writes nothing', async () => {
    const { id } = await create(alice, { partial_data: { step: 1 } })
    const v2 = await save(alice, { id, expected_version: 1, generated_note: 'Edited note', partial_data: { step: 2 } })
    expect(await v2.json()).toEqual({ success: true, id, version: 2 })
    const after = await read(alice, id)
    expect(after).toMatchObject({ version: 2, generated_note: 'Edited note', transcript: TRANSCRIPT, label: 'Bed 4, croup' })
    expect(JSON.parse(after.partial_data!)).toEqual({ step: 2 })

    const stale = await failure(await save(alice, { id, expected_version: 1, generated_note: 'Overwrite', label: 'Nope' }), 409)
    expect(stale.code).toBe('version_conflict')
    expect(stale.current_version).toBe(2)
    expect(stale.error).toBe(MESSAGES.conflict(2))
    const unchanged = await read(alice, id)
    expect(unchanged).toEqual(after)
    // a version from the future is as stale
    expect((await failure(await save(alice, { id, expected_version: 7, label: 'x' }), 409)).current_version).toBe(2)
    // without expected_version the save applies
    expect(await (await save(alice, { id, label: 'Last write' })).json()).toEqual({ success: true, id, version: 3 })
    // partial_data: null clears it
    await save(alice, { id, partial_data: null })
    expect((await read(alice, id)).partial_data).toBeNull()
  })

  it('parallel updates on one version: exactly one wins, the others are 409', async () => {
    const { id } = await create(alice)
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      save(alice, { id, expected_version: 1, generated_note: `Note from tab ${i}` })))
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409])
    const winner = answers.find((r) => r.status === 200)!
    expect(((await winner.json()) as Saved).version).toBe(2)
    const e = await read(alice, id)
    expect(e.version).toBe(2)
    expect(e.generated_note).toMatch(/^Note from tab \d$/)
  })

  it('status is draft or reviewed; anything else is 422 and nothing is stored; a changed note goes back to draft', async () => {
    const before = await rowCount(alice.user.id)
    const bad = await failure(await save(alice, { label: 'x', enc_type: 'soap', status: 'final' }), 422)
    expect(bad.code).toBe('invalid_status')
    expect(bad.fields?.status).toBe(MESSAGES.status)
    expect(await rowCount(alice.user.id)).toBe(before)

    const { id } = await create(alice)
    await failure(await save(alice, { id, status: 'signed', generated_note: 'changed' }), 422)
    expect(await read(alice, id)).toMatchObject({ status: 'draft', version: 1, generated_note: NOTE })

    await save(alice, { id, status: 'reviewed' })
    expect((await read(alice, id)).status).toBe('reviewed')
    // the same note again, or other fields: still reviewed
    await save(alice, { id, generated_note: NOTE, label: 'Relabelled' })
    expect((await read(alice, id)).status).toBe('reviewed')
    // a new note without a status: back to draft
    await save(alice, { id, generated_note: 'Regenerated note' })
    expect((await read(alice, id)).status).toBe('draft')
    // a new note sent as reviewed stays reviewed
    await save(alice, { id, generated_note: 'Checked note', status: 'reviewed' })
    expect((await read(alice, id)).status).toBe('reviewed')
    // a create may say reviewed
    const reviewed = await create(alice, { status: 'reviewed' })
    expect((await read(alice, reviewed.id)).status).toBe('reviewed')
  })

  it('a create needs a label and an enc_type (422 naming them); blank ones are refused too', async () => {
    const before = await rowCount(alice.user.id)
    const missing = await failure(await save(alice, { transcript: 'text' }), 422)
    expect(missing.fields).toEqual({ label: MESSAGES.labelRequired, enc_type: MESSAGES.encTypeRequired })
    expect((await failure(await save(alice, { label: '   ', enc_type: 'soap' }), 422)).fields).toEqual({ label: MESSAGES.blankLabel })
    expect((await failure(await save(alice, { label: 'x', enc_type: ' ' }), 422)).fields).toEqual({ enc_type: MESSAGES.blankEncType })
    expect(await rowCount(alice.user.id)).toBe(before)
  })

  it('limits: label, enc_type and texts are 400 above their length, partial_data 422 (too large, not an object), the body 413', async () => {
    const before = await rowCount(alice.user.id)
    await failure(await save(alice, { label: 'x'.repeat(LABEL_MAX + 1), enc_type: 'soap' }), 400)
    await failure(await save(alice, { label: 'x', enc_type: 'y'.repeat(51) }), 400)
    const tooLong = await failure(await save(alice, { label: 'x', enc_type: 'soap', transcript: 'a'.repeat(ENCOUNTER_TEXT_MAX + 1) }), 400)
    expect(tooLong.fields).toHaveProperty('transcript')
    await failure(await save(alice, { label: 'x', enc_type: 'soap', generated_note: 'a'.repeat(ENCOUNTER_TEXT_MAX + 1) }), 400)
    const big = await failure(await save(alice, { label: 'x', enc_type: 'soap', partial_data: { blob: 'p'.repeat(PARTIAL_DATA_MAX) } }), 422)
    expect(big.code).toBe('partial_data_too_large')
    expect((await failure(await save(alice, { label: 'x', enc_type: 'soap', partial_data: ['not', 'an', 'object'] }), 422)).code).toBe('invalid_partial_data')
    await failure(await save(alice, { label: 'x', enc_type: 'soap', partial_data: 'text' }), 422)
    await failure(await save(alice, { label: 'x', enc_type: 'soap', partial_data: 42 }), 422)
    await failure(await save(alice, { label: 'x', enc_type: 'soap', expected_version: 'one' }), 400)
    await failure(await app.request(PATH, {
      method: 'POST', ...as(alice), headers: { 'content-type': 'application/json', 'content-length': String(ENCOUNTER_BODY_LIMIT + 1) },
      body: JSON.stringify({ label: 'x' }),
    }), 413)
    expect(await rowCount(alice.user.id)).toBe(before)
    // texts at the limit are accepted and read back whole
    const atLimit = await create(alice, { transcript: 't'.repeat(ENCOUNTER_TEXT_MAX), generated_note: 'n'.repeat(ENCOUNTER_TEXT_MAX) })
    const e = await read(alice, atLimit.id)
    expect(e.transcript.length).toBe(ENCOUNTER_TEXT_MAX)
    expect(e.generated_note.length).toBe(ENCOUNTER_TEXT_MAX)
  })

  it('another user\'s encounter is 404 to read, update and delete, and missing from their listing', async () => {
    const { id } = await create(alice, { label: 'Alice only' })
    expect((await failure(await app.get(`${PATH}/${id}`, as(bob)), 404)).error).toBe(MESSAGES.notFound)
    await failure(await save(bob, { id, label: 'Hijack' }), 404)
    await failure(await save(bob, { id, expected_version: 1, generated_note: 'x' }), 404)
    await failure(await app.delete(`${PATH}/${id}`, as(bob)), 404)
    expect((await list(bob)).some((e) => e.id === id)).toBe(false)
    expect(await read(alice, id)).toMatchObject({ label: 'Alice only', version: 1 })
    // unknown and out-of-range ids
    await failure(await app.get(`${PATH}/999999`, as(alice)), 404)
    await failure(await app.get(`${PATH}/99999999999`, as(alice)), 400)
    await failure(await app.get(`${PATH}/abc`, as(alice)), 400)
  })

  it('delete removes the encounter', async () => {
    const { id } = await create(alice)
    const res = await app.delete(`${PATH}/${id}`, as(alice))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    await failure(await app.get(`${PATH}/${id}`, as(alice)), 404)
    await failure(await app.delete(`${PATH}/${id}`, as(alice)), 404)
    expect((await app.db.sql`select 1 from clinical.saved_encounters where id = ${id}`).length).toBe(0)
  })

  it('label, transcript, note, partial data and previews are encrypted at rest', async () => {
    const secret = 'Zebulon Quartermaine, MRN 8675309'
    const { id } = await create(alice, {
      label: `Bed 9 ${secret}`, transcript: `Patient ${secret} reports wheeze`, generated_note: `Assessment for ${secret}`,
      partial_data: { patient: secret },
    })
    const [row] = await app.db.sql<Record<string, Uint8Array>>`
      select summary, transcript, generated_note, partial_data from clinical.saved_encounters where id = ${id}`
    for (const [column, value] of Object.entries(row!)) {
      const bytes = Buffer.from(value)
      expect(bytes[0], column).toBe(0x01)
      expect(bytes.includes(Buffer.from('Zebulon')), column).toBe(false)
      expect(bytes.includes(Buffer.from('8675309')), column).toBe(false)
    }
    // what is stored is the gzipped text sealed with the service's key
    const core = app.booted.core
    expect(unpackText(core, row!.transcript!)).toBe(`Patient ${secret} reports wheeze`)
    expect(Bun.gunzipSync(core.crypto.open(row!.generated_note!) as Uint8Array<ArrayBuffer>)).toEqual(new TextEncoder().encode(`Assessment for ${secret}`))
    expect(JSON.parse(unpackText(core, row!.partial_data!))).toEqual({ patient: secret })
    expect(JSON.parse(unpackText(core, row!.summary!)).label).toBe(`Bed 9 ${secret}`)
    // the plaintext columns hold nothing of the patient
    const [plain] = await app.db.sql<{ text: string }>`
      select concat_ws(' ', enc_type, status, idempotency_key) as text from clinical.saved_encounters where id = ${id}`
    expect(plain!.text).not.toContain('Zebulon')
  })

  it('expires 30 days after the last save: hidden from reads and listings, then swept; saves slide the expiry', async () => {
    const user = await userWithSession(app)
    const start = clock.now
    try {
      const kept = await create(user, { label: 'Kept alive' })
      const left = await create(user, { label: 'Left alone', idempotency_key: 'expiring-key' })
      clock.now += 20 * DAY
      // a save moves kept's expiry to 30 days from now
      await save(user, { id: kept.id, generated_note: 'touched' })
      expect((await read(user, kept.id)).expires_at).toBe(new Date(clock.now + ENCOUNTER_LIFETIME_DAYS * DAY).toISOString())
      clock.now = start + ENCOUNTER_LIFETIME_DAYS * DAY - 1
      await sweepExpiredEncounters(app.booted.core)
      expect(await rowCount(user.user.id)).toBe(2)
      expect((await list(user)).map((e) => e.id).sort()).toEqual([kept.id, left.id].sort())

      clock.now = start + ENCOUNTER_LIFETIME_DAYS * DAY
      // expired, not yet swept: hidden everywhere
      expect((await list(user)).map((e) => e.id)).toEqual([kept.id])
      await failure(await app.get(`${PATH}/${left.id}`, as(user)), 404)
      await failure(await save(user, { id: left.id, label: 'revive' }), 404)
      expect((await app.db.sql`select 1 from clinical.saved_encounters where id = ${left.id}`).length).toBe(1)

      const swept = await sweepExpiredEncounters(app.booted.core)
      expect(swept).toBeGreaterThanOrEqual(1)
      expect((await app.db.sql`select 1 from clinical.saved_encounters where id = ${left.id}`).length).toBe(0)
      expect((await read(user, kept.id)).label).toBe('Kept alive')
      // the expired encounter's idempotency key is free again: a new encounter
      const reused = await create(user, { idempotency_key: 'expiring-key' })
      expect(reused.id).not.toBe(left.id)
    } finally {
      clock.now = start
    }
  })

  it('an expired encounter whose key is sent again before the sweep makes a new one', async () => {
    const user = await userWithSession(app)
    const start = clock.now
    try {
      const old = await create(user, { idempotency_key: 'late-retry' })
      clock.now += ENCOUNTER_LIFETIME_DAYS * DAY + 1
      const fresh = await create(user, { idempotency_key: 'late-retry' })
      expect(fresh.id).not.toBe(old.id)
      expect(await rowCount(user.user.id)).toBe(1)
      expect((await read(user, fresh.id)).version).toBe(1)
    } finally {
      clock.now = start
    }
  })

  it('the OpenAPI document describes the routes', async () => {
    const doc = (await (await app.get('/docs/json')).json()) as { paths: Record<string, Record<string, { description?: string }>> }
    const post = doc.paths['/api/encounters/saved']?.post
    expect(post?.description).toContain('`draft`')
    expect(post?.description).toContain('`reviewed`')
    expect(post?.description).toContain(`${ENCOUNTER_LIFETIME_DAYS} days`)
    expect(doc.paths['/api/encounters/saved']?.get?.description).toContain(`first ${PREVIEW_CHARS} characters`)
    expect(doc.paths['/api/encounters/saved/{id}']?.delete).toBeDefined()
  })
})

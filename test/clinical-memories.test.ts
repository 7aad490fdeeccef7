// Memories: create (sizes answered), list (own, newest first, at most 200), replace, delete; the categories and the
// legacy correction_* ones; the prompt context (custom and correction_* never in it, the same text memoryContext
// gives the generation); content gzipped and encrypted at rest; other users' memories; sessions; limits.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { MEMORY_CONTENT_MAX, MEMORY_CONTEXT_MAX, MEMORY_LIST_MAX, MEMORY_NAME_MAX } from '../plugins/clinical/models/records'
import { MEMORY_BODY_LIMIT } from '../plugins/clinical/routes/records'
import { memoryContext, unpackText } from '../plugins/clinical/services/memories'
import { databaseTargets, type TestApp } from './support/app'
import { appWithTwoUsers, asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(60_000)

const PATH = '/api/memories'

interface MemoryBody { id: number; category: string; name: string; content: string; created_at: string; updated_at: string }
interface Created { success: boolean; id: number; originalSize: number; compressedSize: number }
interface ErrorBody { success: false; error: string; code: string; fields?: Record<string, string> }

describe.each(databaseTargets())('memories (%s)', (target) => {
  let app: TestApp
  let clock: { now: number }
  let alice: SignedIn
  let bob: SignedIn

  beforeAll(async () => {
    ;({ app, clock, alice, bob } = await appWithTwoUsers(target, '2026-05-04T09:00:00Z'))
  })
  afterAll(() => app.close())

  const as = asUser
  const create = async (s: SignedIn, body: Record<string, unknown>): Promise<Created> => {
    const res = await app.post(PATH, body, as(s))
    const json = (await res.json()) as Created
    expect(res.status, JSON.stringify(json)).toBe(200)
    return json
  }
  const list = async (s: SignedIn): Promise<MemoryBody[]> => {
    const res = await app.get(PATH, as(s))
    const json = (await res.json()) as { success: boolean; memories: MemoryBody[] }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.memories
  }
  const context = async (s: SignedIn): Promise<string> => {
    const res = await app.get(`${PATH}/context`, as(s))
    const json = (await res.json()) as { success: boolean; context: string }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.context
  }
  const failure = async (res: Response, status: number): Promise<ErrorBody> => {
    const json = (await res.json()) as ErrorBody
    expect(res.status, JSON.stringify(json)).toBe(status)
    expect(json.success).toBe(false)
    return json
  }
  const count = async (userId: number) =>
    (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.memories where user_id = ${userId}`)[0]!.n

  it('refuses every route without a session (401)', async () => {
    const { id } = await create(alice, { category: 'custom', name: 'n', content: 'c' })
    for (const res of [
      await app.get(PATH, as(null)),
      await app.get(`${PATH}/context`, as(null)),
      await app.post(PATH, { category: 'custom', name: 'n', content: 'c' }, as(null)),
      await app.put(`${PATH}/${id}`, { category: 'custom', name: 'n', content: 'changed' }, as(null)),
      await app.delete(`${PATH}/${id}`, as(null)),
    ]) await failure(res, 401)
    expect((await list(alice)).find((m) => m.id === id)?.content).toBe('c')
  })

  it('creates a memory and answers its original and compressed sizes in bytes', async () => {
    const content = 'Use "pt" for patient. Write the HPI in one paragraph, past tense. '.repeat(20) + 'Ünïcödé ✓'
    const created = await create(alice, { category: 'note_style', name: 'HPI style', content })
    expect(created.success).toBe(true)
    expect(created.originalSize).toBe(new TextEncoder().encode(content).length)
    expect(created.compressedSize).toBe(Bun.gzipSync(new TextEncoder().encode(content)).length)
    expect(created.compressedSize).toBeLessThan(created.originalSize)
    const [row] = (await list(alice)).filter((m) => m.id === created.id)
    expect(row).toEqual({
      id: created.id, category: 'note_style', name: 'HPI style', content,
      created_at: new Date(clock.now).toISOString(), updated_at: new Date(clock.now).toISOString(),
    })
  })

  it('content is gzipped, then encrypted at rest: no plaintext in the raw column', async () => {
    const content = 'Practice: Riverside Pediatrics, Dr. Okonkwo-Vasquez prefers metric units'
    const { id } = await create(alice, { category: 'ai_context', name: 'Practice', content })
    const [row] = await app.db.sql<{ content: Uint8Array }>`select content from clinical.memories where id = ${id}`
    const raw = Buffer.from(row!.content)
    expect(raw[0]).toBe(0x01)
    expect(raw.includes(Buffer.from('Okonkwo'))).toBe(false)
    expect(raw.includes(Buffer.from('Riverside'))).toBe(false)
    const core = app.booted.core
    const opened = core.crypto.open(raw)
    expect(opened[0]).toBe(0x1f) // gzip
    expect(opened[1]).toBe(0x8b)
    expect(unpackText(core, raw)).toBe(content)
  })

  it('lists own memories only, newest first', async () => {
    const user = await userWithSession(app)
    const a = await create(user, { category: 'templates', name: 'A', content: 'first' })
    clock.now += 1000
    const b = await create(user, { category: 'custom', name: 'B', content: 'second' })
    const mine = await list(user)
    expect(mine.map((m) => m.id)).toEqual([b.id, a.id])
    expect((await list(bob)).some((m) => m.id === a.id || m.id === b.id)).toBe(false)
  })

  it(`a listing holds at most ${MEMORY_LIST_MAX}, the newest`, async () => {
    const user = await userWithSession(app)
    const total = MEMORY_LIST_MAX + 3
    const packed = (i: number) => Buffer.from(app.booted.core.crypto.seal(Bun.gzipSync(new TextEncoder().encode(`memory ${i}`))))
    for (let i = 0; i < total; i++) {
      const at = new Date(clock.now + i * 1000).toISOString()
      await app.db.sql`
        insert into clinical.memories (user_id, category, name, content, created_at, updated_at)
        values (${user.user.id}, 'custom', ${`m${i}`}, ${packed(i)}, ${at}, ${at})`
    }
    const memories = await list(user)
    expect(memories.length).toBe(MEMORY_LIST_MAX)
    expect(memories[0]!.name).toBe(`m${total - 1}`)
    expect(memories.at(-1)!.name).toBe(`m${total - MEMORY_LIST_MAX}`)
    expect(memories[0]!.content).toBe(`memory ${total - 1}`)
  })

  it('replaces a memory with PUT; another user\'s memory is 404 to replace and delete', async () => {
    const { id } = await create(alice, { category: 'abbreviations', name: 'Abbr', content: 'SOB = shortness of breath' })
    clock.now += 5000
    const res = await app.put(`${PATH}/${id}`, { category: 'templates', name: 'Renamed', content: 'New content' }, as(alice))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    const m = (await list(alice)).find((x) => x.id === id)!
    expect(m).toMatchObject({ category: 'templates', name: 'Renamed', content: 'New content', updated_at: new Date(clock.now).toISOString() })
    expect(m.created_at).not.toBe(m.updated_at)

    await failure(await app.put(`${PATH}/${id}`, { category: 'custom', name: 'Hijack', content: 'x' }, as(bob)), 404)
    await failure(await app.delete(`${PATH}/${id}`, as(bob)), 404)
    await failure(await app.put(`${PATH}/999999`, { category: 'custom', name: 'x', content: 'x' }, as(alice)), 404)
    await failure(await app.put(`${PATH}/99999999999`, { category: 'custom', name: 'x', content: 'x' }, as(alice)), 400)
    expect((await list(alice)).find((x) => x.id === id)?.content).toBe('New content')
  })

  it('deletes a memory', async () => {
    const { id } = await create(alice, { category: 'custom', name: 'Temp', content: 'temp' })
    const res = await app.delete(`${PATH}/${id}`, as(alice))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    expect((await list(alice)).some((m) => m.id === id)).toBe(false)
    await failure(await app.delete(`${PATH}/${id}`, as(alice)), 404)
  })

  it('categories: the documented set; correction_* only kept by legacy rows; others 422 and nothing stored', async () => {
    const before = await count(alice.user.id)
    for (const category of ['note_style', 'abbreviations', 'templates', 'ai_context', 'custom']) {
      await create(alice, { category, name: `cat ${category}`, content: 'x' })
    }
    for (const category of ['correction_hpi', 'style', 'NOTE_STYLE']) {
      const refused = await failure(await app.post(PATH, { category, name: 'x', content: 'x' }, as(alice)), 422)
      expect(refused.code).toBe('invalid_category')
      expect(refused.fields).toHaveProperty('category')
    }
    await failure(await app.post(PATH, { category: '', name: 'x', content: 'x' }, as(alice)), 400)
    expect(await count(alice.user.id)).toBe(before + 5)

    // a legacy row: listed as it is, editable keeping its category, not movable into another correction_ one
    const legacy = Buffer.from(app.booted.core.crypto.seal(Bun.gzipSync(new TextEncoder().encode('Say "otitis media", not "OM"'))))
    const [{ id }] = (await app.db.sql<{ id: number }>`
      insert into clinical.memories (user_id, category, name, content, created_at, updated_at)
      values (${alice.user.id}, 'correction_terms', 'Old correction', ${legacy}, ${new Date(clock.now).toISOString()}, ${new Date(clock.now).toISOString()})
      returning id`) as [{ id: number }]
    expect((await list(alice)).find((m) => m.id === id)).toMatchObject({ category: 'correction_terms', content: 'Say "otitis media", not "OM"' })
    expect((await app.put(`${PATH}/${id}`, { category: 'correction_terms', name: 'Old correction', content: 'edited' }, as(alice))).status).toBe(200)
    expect((await failure(await app.put(`${PATH}/${id}`, { category: 'correction_other', name: 'x', content: 'x' }, as(alice)), 422)).code).toBe('invalid_category')
    // and it can move to a current category
    expect((await app.put(`${PATH}/${id}`, { category: 'custom', name: 'Old correction', content: 'edited' }, as(alice))).status).toBe(200)
  })

  it('limits: name and content lengths (400), blank names (422), the body (413)', async () => {
    const before = await count(alice.user.id)
    await failure(await app.post(PATH, { category: 'custom', name: 'n'.repeat(MEMORY_NAME_MAX + 1), content: 'x' }, as(alice)), 400)
    await failure(await app.post(PATH, { category: 'custom', name: 'n', content: 'c'.repeat(MEMORY_CONTENT_MAX + 1) }, as(alice)), 400)
    await failure(await app.post(PATH, { category: 'custom', name: 'n', content: '' }, as(alice)), 400)
    await failure(await app.post(PATH, { category: 'custom', name: '', content: 'x' }, as(alice)), 400)
    expect((await failure(await app.post(PATH, { category: 'custom', name: '   ', content: 'x' }, as(alice)), 422)).fields).toHaveProperty('name')
    await failure(await app.post(PATH, { category: 'custom', name: 'n' }, as(alice)), 400)
    await failure(await app.request(PATH, {
      method: 'POST', ...as(alice), headers: { 'content-type': 'application/json', 'content-length': String(MEMORY_BODY_LIMIT + 1) },
      body: JSON.stringify({ category: 'custom', name: 'n', content: 'x' }),
    }), 413)
    expect(await count(alice.user.id)).toBe(before)
    const atLimit = await create(alice, { category: 'custom', name: 'n'.repeat(MEMORY_NAME_MAX), content: 'c'.repeat(MEMORY_CONTENT_MAX) })
    expect(atLimit.originalSize).toBe(MEMORY_CONTENT_MAX)
  })

  it('context: the AI-context categories formatted for a prompt, custom and correction_* left out', async () => {
    const user = await userWithSession(app)
    expect(await context(user)).toBe('')
    await create(user, { category: 'custom', name: 'Private', content: 'call my sister on friday' })
    expect(await context(user)).toBe('')
    await create(user, { category: 'templates', name: 'Well visit', content: 'Growth:\nDevelopment:\nPlan:' })
    clock.now += 1
    await create(user, { category: 'note_style', name: 'Tone', content: 'Plain language, short sentences.' })
    clock.now += 1
    await create(user, { category: 'note_style', name: 'Units', content: 'Metric units only.' })
    clock.now += 1
    await create(user, { category: 'ai_context', name: 'Clinic', content: 'Rural family practice, many farm injuries.' })
    await create(user, { category: 'abbreviations', name: 'BID', content: 'twice daily' })
    const legacy = Buffer.from(app.booted.core.crypto.seal(Bun.gzipSync(new TextEncoder().encode('never send me'))))
    await app.db.sql`
      insert into clinical.memories (user_id, category, name, content, created_at, updated_at)
      values (${user.user.id}, 'correction_hpi', 'Legacy', ${legacy}, ${new Date(clock.now).toISOString()}, ${new Date(clock.now).toISOString()})`

    const text = await context(user)
    expect(text).toBe([
      'The clinician\'s saved preferences (follow them unless the request says otherwise):',
      '',
      'Note style:',
      '- Tone: Plain language, short sentences.',
      '- Units: Metric units only.',
      '',
      'Abbreviations:',
      '- BID: twice daily',
      '',
      'Templates:',
      '- Well visit: Growth:',
      '  Development:',
      '  Plan:',
      '',
      'Practice context:',
      '- Clinic: Rural family practice, many farm injuries.',
    ].join('\n'))
    expect(text).not.toContain('sister')
    expect(text).not.toContain('never send me')
    // the generation's helper gives the same text
    expect(await memoryContext(app.booted.core, user.user.id)).toBe(text)
    // and another user's memories are not in it
    expect(await context(bob)).not.toContain('Rural family practice')
  })

  it(`context stays within ${MEMORY_CONTEXT_MAX} characters: memories that would pass it are left out`, async () => {
    const user = await userWithSession(app)
    for (let i = 0; i < 3; i++) {
      await create(user, { category: 'templates', name: `Big ${i}`, content: `${i}`.repeat(MEMORY_CONTENT_MAX) })
      clock.now += 1
    }
    await create(user, { category: 'ai_context', name: 'Small', content: 'small clinic' })
    const text = await context(user)
    expect(text.length).toBeLessThanOrEqual(MEMORY_CONTEXT_MAX)
    expect(text).toContain('- Big 0: ')
    expect(text).not.toContain('- Big 1: ')
    expect(text).toContain('- Small: small clinic')
  })

  it('/api/memories/context is not taken for an id', async () => {
    const res = await app.delete(`${PATH}/context`, as(alice))
    expect(res.status).toBe(400)
  })
})

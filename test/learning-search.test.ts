// Learning hub search in its three modes: keyword (words with stemming, substrings, any case), semantic (the vector
// index, kept in step with every create, update and delete), hybrid (reciprocal-rank fusion); published content
// only; the query rules; the index rebuilt from the database; an embedding model at the gateway, and its failure
// (502: nothing stored, keyword search still answers).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { LOCAL_EMBEDDING_MODEL } from '../src/core/embedder'
import { HttpError } from '../src/core/errors'
import type { Core } from '../src/plugin'
import type { ContentInput, SearchResult } from '../plugins/learning/model'
import { createCategory, createContent, deleteContent, updateContent } from '../plugins/learning/service'
import { CHUNKS_MAX, contentCollection, fuseRankings, HYBRID_CANDIDATES, reindexAllContent, RRF_K, SEMANTIC_MIN_SCORE } from '../plugins/learning/service-search'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { startAiServer, type AiServer } from './support/ai-server'
import { asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(60_000)

let seq = 0
const unique = (base: string) => `${base}-${Date.now().toString(36)}-${++seq}`

const ASTHMA = {
  title: 'Asthma inhaler technique',
  body: 'Use a spacer with every metered dose inhaler. Shake the inhaler, give one puff at a time and let the child take five tidal breaths.',
}
const BRONCHIOLITIS = {
  title: 'Bronchiolitis in infants',
  body: 'Bronchiolitis is a viral infection of the small airways. Most babies recover at home; watch feeding, breathing effort and oxygen saturation.',
}
const FEVER = {
  title: 'Fever in children',
  body: 'Fever is common in childhood. Dose paracetamol by weight every four to six hours; ibuprofen may be added. An inhaler is not needed.',
}

const ids = (list: SearchResult[]) => list.map((r) => r.id)

describe.each(databaseTargets())('learning hub search (%s)', (target) => {
  let app: TestApp
  let core: Core
  let reader: SignedIn
  let categoryId: number
  const made: Record<string, { id: number; input: ContentInput }> = {}

  beforeAll(async () => {
    app = await startTestApp({ target })
    core = app.booted.core
    reader = await userWithSession(app, 'user', 'reader')
    ;({ id: categoryId } = await createCategory(core, { name: 'Paediatrics', slug: unique('paeds') }))
    for (const [key, c] of Object.entries({ asthma: ASTHMA, bronchiolitis: BRONCHIOLITIS, fever: FEVER })) {
      const input: ContentInput = { ...c, slug: unique(key), categoryId }
      made[key] = { id: (await createContent(core, input, null)).id, input }
    }
  })
  afterAll(() => app.close())

  const search = async (mode: '' | '/semantic' | '/hybrid', q: string): Promise<SearchResult[]> => {
    const res = await app.get(`/api/learning/search${mode}?q=${encodeURIComponent(q)}`, asUser(reader))
    const text = await res.text()
    expect(res.status, text).toBe(200)
    return JSON.parse(text) as SearchResult[]
  }
  const collection = contentCollection(LOCAL_EMBEDDING_MODEL)
  const vectorsOf = async (contentId: number) => {
    // The chunks of one content: count what a search by its own text finds under its ids.
    const all = await core.vectors.search(collection, new Array(384).fill(1 / Math.sqrt(384)), { topK: 10_000, exact: true })
    return all.filter((m) => m.id.startsWith(`${contentId}:`)).length
  }

  it('keyword: matches words with stemming, substrings and any case; the title match ranks first; feed fields plus score', async () => {
    const stemmed = await search('', 'inhalers')
    expect(ids(stemmed)).toEqual([made.asthma!.id, made.fever!.id])
    expect(stemmed[0]).toEqual({
      id: made.asthma!.id, title: ASTHMA.title, slug: made.asthma!.input.slug, summary: ASTHMA.body,
      type: 'article', category: 'Paediatrics', category_slug: expect.stringMatching(/^paeds-/), created_at: expect.any(String),
      score: expect.any(Number),
    })
    expect(stemmed[0]!.score).toBeGreaterThan(1)
    expect(stemmed[1]!.score).toBeLessThan(1)
    expect(ids(await search('', 'BRONCHIOL'))).toEqual([made.bronchiolitis!.id])
    expect(ids(await search('', 'paracetamol weight'))).toEqual([made.fever!.id])
    expect(ids(await search('', 'paracetamol -ibuprofen'))).toEqual([])
    // Nothing matches a misspelling by keyword.
    expect(await search('', 'inhaller spaser')).toEqual([])
    // `%` and `_` are matched as themselves.
    expect(await search('', '%')).toEqual([])
  })

  it('semantic: ranks by embedding similarity and finds what keyword search misses', async () => {
    const typo = await search('/semantic', 'inhaller spaser')
    expect(typo[0]?.id).toBe(made.asthma!.id)
    expect(typo[0]!.score).toBeGreaterThanOrEqual(SEMANTIC_MIN_SCORE)
    expect(typo[0]!.score).toBeLessThanOrEqual(1)
    const babies = await search('/semantic', 'babies oxygen saturation')
    expect(babies[0]?.id).toBe(made.bronchiolitis!.id)
    for (let i = 1; i < babies.length; i++) expect(babies[i]!.score).toBeLessThanOrEqual(babies[i - 1]!.score)
    // A query without a word has no direction: nothing, not everything.
    expect(await search('/semantic', '!!!')).toEqual([])
  })

  it('hybrid: fuses the two rankings, keeping what either alone finds', async () => {
    const both = await search('/hybrid', 'inhaler')
    expect(both[0]?.id).toBe(made.asthma!.id)
    // Found by both rankings at rank 1: 2 / (k + 1).
    expect(both[0]!.score).toBeCloseTo(2 / (RRF_K + 1), 6)
    const typo = await search('/hybrid', 'inhaller spaser')
    expect(typo[0]?.id).toBe(made.asthma!.id)
    expect(typo[0]!.score).toBeCloseTo(1 / (RRF_K + 1), 6)
  })

  it('refuses a blank query (422) and a missing one (400)', async () => {
    for (const mode of ['', '/semantic', '/hybrid']) {
      const blank = await app.get(`/api/learning/search${mode}?q=%20%20`, asUser(reader))
      expect(blank.status).toBe(422)
      expect(await blank.json()).toMatchObject({ success: false, code: 'invalid_query', fields: { q: expect.any(String) } })
      expect((await app.get(`/api/learning/search${mode}`, asUser(reader))).status).toBe(400)
      expect((await app.get(`/api/learning/search${mode}?q=${'a'.repeat(201)}`, asUser(reader))).status).toBe(400)
    }
  })

  it('keeps the index in step with an update and a delete, in all three modes', async () => {
    const input: ContentInput = { title: 'Asthma action plans', slug: unique('plans'), body: 'Green, amber and red zones for the preventer and reliever inhaler.', categoryId }
    const { id } = await createContent(core, input, null)
    expect(await vectorsOf(id)).toBeGreaterThanOrEqual(2)
    expect(ids(await search('/semantic', 'amber zones preventer'))).toContain(id)

    await updateContent(core, id, { ...input, title: 'Sun safety', body: 'Sunscreen, hats and shade stop sunburn in toddlers.' })
    for (const mode of ['', '/semantic', '/hybrid'] as const) {
      expect(ids(await search(mode, 'sunscreen sunburn'))).toContain(id)
      expect(ids(await search(mode, 'amber zones preventer'))).not.toContain(id)
    }
    const twoChunks = await vectorsOf(id)

    // A longer text takes more chunks; a shorter one again leaves none of the old ones behind.
    await updateContent(core, id, { ...input, title: 'Sun safety', body: Array.from({ length: 20 }, (_, i) => `Paragraph ${i} about sunscreen. ${'shade '.repeat(80)}`).join('\n\n') })
    expect(await vectorsOf(id)).toBeGreaterThan(twoChunks)
    expect(await vectorsOf(id)).toBeLessThanOrEqual(CHUNKS_MAX)
    await updateContent(core, id, { ...input, title: 'Sun safety', body: 'Sunscreen, hats and shade stop sunburn in toddlers.' })
    expect(await vectorsOf(id)).toBe(twoChunks)

    await deleteContent(core, id)
    expect(await vectorsOf(id)).toBe(0)
    for (const mode of ['', '/semantic', '/hybrid'] as const) expect(ids(await search(mode, 'sunscreen sunburn'))).not.toContain(id)
  })

  it('rebuilds the index from the database', async () => {
    await core.vectors.drop(collection)
    expect(await search('/semantic', 'inhaller spaser')).toEqual([])
    const count = (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content`)[0]!.n
    expect(await reindexAllContent(core)).toBe(count)
    expect((await search('/semantic', 'inhaller spaser'))[0]?.id).toBe(made.asthma!.id)
  })
})

describe('reciprocal-rank fusion', () => {
  const item = (id: number): SearchResult => ({ id, title: `t${id}`, slug: `s${id}`, summary: '', type: 'article', category: 'c', category_slug: 'c', created_at: '', score: 0 })
  it('sums 1 / (k + rank) over both rankings; ties go to the better keyword rank', () => {
    const fused = fuseRankings([item(1), item(2), item(3)], [item(3), item(4), item(1)])
    expect(fused.map((r) => r.id)).toEqual([1, 3, 2, 4])
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 1) + 1 / (RRF_K + 3), 6)
    expect(fused[1]!.score).toBeCloseTo(1 / (RRF_K + 3) + 1 / (RRF_K + 1), 6)
    expect(fused[2]!.score).toBeCloseTo(1 / (RRF_K + 2), 6)
    expect(fuseRankings([], [])).toEqual([])
  })
  it('ranks a content found by both rankings, even last in each, above every content found by only one', () => {
    const keyword = Array.from({ length: HYBRID_CANDIDATES }, (_, i) => item(100 + i))
    const semantic = [...Array.from({ length: HYBRID_CANDIDATES - 1 }, (_, i) => item(200 + i)), item(100 + HYBRID_CANDIDATES - 1)]
    expect(fuseRankings(keyword, semantic)[0]!.id).toBe(100 + HYBRID_CANDIDATES - 1)
  })
})

describe.each(databaseTargets())('learning hub search with the gateway\'s embedding model (%s)', (target) => {
  let ai: AiServer
  let app: TestApp
  let core: Core
  let reader: SignedIn
  let categoryId: number

  beforeAll(async () => {
    ai = await startAiServer()
    app = await startTestApp({ target, env: { ...ai.env, EMBEDDING_MODEL: 'test-embedding' } })
    core = app.booted.core
    reader = await userWithSession(app, 'user', 'reader')
    ;({ id: categoryId } = await createCategory(core, { name: 'Gateway', slug: unique('gw') }))
  })
  afterAll(async () => {
    await app.close()
    await ai.close()
  })

  it('fills an empty collection from the database at the first semantic search (a new model, a wiped index)', async () => {
    const { id } = await createContent(core, { ...BRONCHIOLITIS, slug: unique('gw-bronch'), categoryId }, null)
    await core.vectors.drop(contentCollection('test-embedding'))
    const res = await app.get('/api/learning/search/semantic?q=babies%20oxygen%20saturation', asUser(reader))
    expect(res.status).toBe(200)
    expect(((await res.json()) as SearchResult[])[0]?.id).toBe(id)
    expect(await core.vectors.count(contentCollection('test-embedding'))).toBeGreaterThan(0)
  })

  it('embeds content and queries with the gateway model, in its own collection', async () => {
    ai.reset()
    const { id } = await createContent(core, { ...ASTHMA, slug: unique('gw-asthma'), categoryId }, null)
    expect(ai.requests.some((r) => r.path === '/v1/embeddings' && r.body.model === 'test-embedding')).toBe(true)
    expect(await core.vectors.count(contentCollection('test-embedding'))).toBeGreaterThan(0)
    const res = await app.get('/api/learning/search/semantic?q=inhaler%20spacer', asUser(reader))
    expect(res.status).toBe(200)
    expect(((await res.json()) as SearchResult[]).map((r) => r.id)).toContain(id)
  })

  it('stores nothing when the model fails (502), and still answers keyword search while semantic search is 502', async () => {
    const before = (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content`)[0]!.n
    ai.failNext(500)
    const slug = unique('gw-fail')
    const err = await createContent(core, { ...FEVER, slug, categoryId }, null).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(HttpError)
    expect((err as HttpError).status).toBe(502)
    expect((await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.learning_content`)[0]!.n).toBe(before)

    ai.failNext(500, 2)
    const semantic = await app.get('/api/learning/search/semantic?q=inhaler', asUser(reader))
    expect(semantic.status).toBe(502)
    expect(await semantic.json()).toMatchObject({ success: false, error: 'Request failed' })
    const hybrid = await app.get('/api/learning/search/hybrid?q=inhaler', asUser(reader))
    expect(hybrid.status).toBe(502)
    ai.failNext(500)
    const keyword = await app.get('/api/learning/search?q=inhaler', asUser(reader))
    expect(keyword.status).toBe(200)
    expect(((await keyword.json()) as SearchResult[]).length).toBeGreaterThan(0)
    ai.reset()
  })
})

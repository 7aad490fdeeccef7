// The vector index on a real LanceDB folder, and the embedders: the built-in local one and a gateway model
// (against the test AI server).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createAi } from '../src/core/ai'
import { embedderFor, LOCAL_DIMENSIONS, LOCAL_EMBEDDING_MODEL, localEmbedder, localEmbedding } from '../src/core/embedder'
import { createLogger } from '../src/core/log'
import { openVectors, VectorDimensionMismatch, type Vectors } from '../src/core/vectors'
import { startAiServer, type AiServer } from './support/ai-server'
import { rejection } from './support/wait'

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0)
const norm = (a: number[]) => Math.sqrt(a.reduce((s, x) => s + x * x, 0))

let dir: string
let vectors: Vectors
let n = 0
/** A collection name no other test uses. */
const fresh = () => `c_${++n}`
const record = (id: string, text: string) => ({ id, text, vector: localEmbedding(text) })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vectors-test-'))
  vectors = await openVectors(dir)
})
afterAll(() => {
  vectors.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('vector index', () => {
  it('upsert then search finds the closest record first, with its text and a cosine score', async () => {
    const c = fresh()
    await vectors.upsert(c, [
      record('q1', 'What is the first-line treatment of heart failure?'),
      record('q2', 'Which bone is the longest in the human body?'),
      record('q3', 'What causes kidney stones?'),
    ])
    const matches = await vectors.search(c, localEmbedding('treatment of heart failure'), { topK: 3 })
    expect(matches).toHaveLength(3)
    expect(matches[0]!.id).toBe('q1')
    expect(matches[0]!.text).toBe('What is the first-line treatment of heart failure?')
    expect(matches[0]!.score).toBeGreaterThan(matches[1]!.score)
    expect(matches[0]!.score).toBeLessThanOrEqual(1.000001)
  })

  it('an identical vector scores 1', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('a', 'asthma inhaler'), record('b', 'fractured femur')])
    const [best] = await vectors.search(c, localEmbedding('asthma inhaler'), { topK: 1 })
    expect(best!.id).toBe('a')
    expect(best!.score).toBeCloseTo(1, 5)
  })

  it('topK caps the number of matches', async () => {
    const c = fresh()
    await vectors.upsert(c, Array.from({ length: 8 }, (_, i) => record(`q${i}`, `question number ${i} about anatomy`)))
    expect(await vectors.search(c, localEmbedding('anatomy'), { topK: 3 })).toHaveLength(3)
  })

  it('minScore leaves out matches below the similarity threshold', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('near', 'myocardial infarction symptoms'), record('far', 'tax returns for freelancers')])
    const query = localEmbedding('symptoms of myocardial infarction')
    const all = await vectors.search(c, query, { topK: 10 })
    expect(all.map((m) => m.id)).toEqual(['near', 'far'])
    const threshold = (all[0]!.score + all[1]!.score) / 2
    const close = await vectors.search(c, query, { topK: 10, minScore: threshold })
    expect(close.map((m) => m.id)).toEqual(['near'])
    for (const m of close) expect(m.score).toBeGreaterThanOrEqual(threshold)
  })

  it('upsert replaces a record with the same id instead of adding one', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'old text about the liver')])
    await vectors.upsert(c, [record('q1', 'new text about the spleen'), record('q2', 'the pancreas')])
    expect(await vectors.count(c)).toBe(2)
    const [best] = await vectors.search(c, localEmbedding('new text about the spleen'), { topK: 1 })
    expect(best).toMatchObject({ id: 'q1', text: 'new text about the spleen' })
  })

  it('concurrent upserts to one collection all land', async () => {
    const c = fresh()
    await Promise.all(Array.from({ length: 5 }, (_, i) => vectors.upsert(c, [record(`q${i}`, `parallel question ${i}`)])))
    expect(await vectors.count(c)).toBe(5)
  })

  it('delete removes only the given ids', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one'), record('q2', 'two'), record('q3', 'three')])
    await vectors.delete(c, ['q1', 'q3'])
    expect(await vectors.count(c)).toBe(1)
    const ids = (await vectors.search(c, localEmbedding('one two three'), { topK: 10 })).map((m) => m.id)
    expect(ids).toEqual(['q2'])
  })

  it('drop removes the whole collection; dropping a missing one is no error', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one')])
    await vectors.drop(c)
    expect(await vectors.count(c)).toBe(0)
    expect(await vectors.search(c, localEmbedding('one'), { topK: 5 })).toEqual([])
    await vectors.drop(c)
    await vectors.drop('never_created')
  })

  it('a missing collection: search is [], count is 0, delete is no error', async () => {
    expect(await vectors.search('missing_collection', localEmbedding('anything'), { topK: 5 })).toEqual([])
    expect(await vectors.count('missing_collection')).toBe(0)
    await vectors.delete('missing_collection', ['q1'])
  })

  it('collections are kept apart, however many there are', async () => {
    const names = Array.from({ length: 14 }, () => fresh())
    for (const [i, c] of names.entries()) await vectors.upsert(c, [record(`only_${i}`, `collection ${i}`)])
    for (const [i, c] of names.entries()) {
      expect(await vectors.count(c)).toBe(1)
      const matches = await vectors.search(c, localEmbedding(`collection ${i}`), { topK: 5 })
      expect(matches.map((m) => m.id)).toEqual([`only_${i}`])
    }
  })

  it('the index survives reopening the folder (a restart)', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('kept', 'persisted question')])
    const again = await openVectors(dir)
    try {
      expect(await again.count(c)).toBe(1)
    } finally {
      again.close()
    }
  })

  it('ids are checked before they reach a LanceDB filter: a quote is refused', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one')])
    expect((await rejection(vectors.upsert(c, [record("x' OR '1'='1", 'evil')]))).message).toContain('invalid vector id')
    expect((await rejection(vectors.delete(c, ["q1' OR '1'='1"]))).message).toContain('invalid vector id')
    expect((await rejection(vectors.delete('missing_collection', ["q1' OR '1'='1"]))).message).toContain('invalid vector id')
    expect(await vectors.count(c)).toBe(1)
  })

  it('collection names are checked too', async () => {
    expect((await rejection(vectors.upsert('bad name; drop', [record('q1', 'one')]))).message).toContain('invalid vector collection name')
    expect((await rejection(vectors.search('../escape', localEmbedding('x'), { topK: 1 }))).message).toContain('invalid vector collection name')
  })

  it('the ids the app generates are accepted (numbers, prefixes, uuids)', async () => {
    const c = fresh()
    const ids = ['42', 'question:17', 'doc-3_page.4', '0f8fad5b-d9cb-469f-a165-70867728950e']
    await vectors.upsert(c, ids.map((id) => record(id, `text ${id}`)))
    expect(await vectors.count(c)).toBe(ids.length)
    await vectors.delete(c, ids.slice(0, 2))
    expect(await vectors.count(c)).toBe(2)
  })

  it('a vector of another length than the collection holds is refused, not stored padded', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one')])
    const short = { id: 'q2', text: 'two', vector: localEmbedding('two', 64) }
    expect(await rejection(vectors.upsert(c, [short]))).toBeInstanceOf(VectorDimensionMismatch)
    expect(await rejection(vectors.upsert(fresh(), [record('a', 'one'), short]))).toBeInstanceOf(VectorDimensionMismatch)
    expect(await vectors.count(c)).toBe(1)
  })

  it('a query of another length (index not yet re-embedded after a model change) finds nothing instead of failing', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one')])
    expect(await vectors.search(c, localEmbedding('one', 1536), { topK: 5 })).toEqual([])
  })

  it('a query with no words (the zero vector) finds nothing, and zero-vector records never match', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('empty', ''), record('word', 'pneumonia')])
    expect(await vectors.search(c, localEmbedding(''), { topK: 5 })).toEqual([])
    expect((await vectors.search(c, localEmbedding('pneumonia'), { topK: 5 })).map((m) => m.id)).toEqual(['word'])
  })

  it('an empty upsert or delete does nothing', async () => {
    const c = fresh()
    await vectors.upsert(c, [])
    expect(await vectors.count(c)).toBe(0)
    await vectors.upsert(c, [record('q1', 'one')])
    await vectors.delete(c, [])
    expect(await vectors.count(c)).toBe(1)
  })
})

describe('the approximate-nearest-neighbour index', () => {
  const N = 1_200
  const words = Array.from({ length: 400 }, (_, i) => `w${((i * 7919) % 100_003).toString(36)}`)
  const text = (n: number) => Array.from({ length: 10 }, (_, k) => words[(n * 31 + k * 97 + ((n * k) % 13)) % words.length]).join(' ')
  let annDir: string
  let ann: Vectors

  beforeAll(async () => {
    annDir = mkdtempSync(join(tmpdir(), 'vectors-ann-'))
    // A small threshold so the test builds the index on a little data; production's is ANN_INDEX_MIN_ROWS.
    ann = await openVectors(annDir, { annIndexMinRows: 1_000 })
  })
  afterAll(() => {
    ann.close()
    rmSync(annDir, { recursive: true, force: true })
  })

  it('is built by maintain() once a collection reaches the threshold, and answers as the exact scan does', async () => {
    const records = Array.from({ length: N }, (_, i) => record(`q${i}`, text(i)))
    await ann.upsert('big', records.slice(0, 900))
    expect(await ann.maintain('big')).toBe('unchanged')
    expect(await ann.hasAnnIndex('big')).toBe(false)
    await ann.upsert('big', records.slice(900))
    // writes never build it (that can take a minute): the schedule's maintain() does
    expect(await ann.hasAnnIndex('big')).toBe(false)
    expect(await ann.maintain('big')).toBe('built')
    expect(await ann.hasAnnIndex('big')).toBe(true)
    expect(await ann.maintain('big')).toBe('unchanged')
    expect(await ann.count('big')).toBe(N)

    let hits = 0
    for (let i = 0; i < 20; i++) {
      const query = localEmbedding(text(i * 53).split(' ').slice(0, 5).join(' '))
      const exact = await ann.search('big', query, { topK: 10, exact: true })
      const approximate = await ann.search('big', query, { topK: 10 })
      expect(exact).toHaveLength(10)
      const truth = new Set(exact.map((m) => m.id))
      hits += approximate.filter((m) => truth.has(m.id)).length
    }
    // recall@10 of the index against the scan
    expect(hits / 200).toBeGreaterThanOrEqual(0.9)
  })

  it('the index is built again once the rows it does not cover pass the share; every collection is looked after', async () => {
    const more = Array.from({ length: 1_100 }, (_, i) => record(`late${i}`, text(N + i)))
    await ann.upsert('big', more)
    expect(await ann.maintain('big')).toBe('built')
    const [top] = await ann.search('big', localEmbedding(text(N + 7)), { topK: 1 })
    expect(top!.id).toBe('late7')
    expect(await ann.maintain('big')).toBe('unchanged')
    await ann.upsert('other', Array.from({ length: 1_000 }, (_, i) => record(`o${i}`, text(i * 3))))
    await ann.maintainAll()
    expect(await ann.hasAnnIndex('other')).toBe(true)
  })

  it('rows written after the index was built are found too, and a replaced record is found by its new vector', async () => {
    await ann.upsert('big', [record('late', 'zebra quartz violin harbour lantern')])
    const [top] = await ann.search('big', localEmbedding('zebra quartz violin harbour lantern'), { topK: 1 })
    expect(top).toMatchObject({ id: 'late' })
    await ann.upsert('big', [record('q5', 'marble pelican saxophone glacier')])
    const [moved] = await ann.search('big', localEmbedding('marble pelican saxophone glacier'), { topK: 1 })
    expect(moved!.id).toBe('q5')
    expect(moved!.score).toBeCloseTo(1, 3)
  })

  it('a collection under the threshold has no index (a scan answers)', async () => {
    await ann.upsert('small', [record('a', 'alpha beta')])
    expect(await ann.hasAnnIndex('small')).toBe(false)
    expect(await ann.hasAnnIndex('missing')).toBe(false)
  })
})

describe('local embedder', () => {
  it('is deterministic: the same text gives the same vector', () => {
    expect(localEmbedding('Acute kidney injury')).toEqual(localEmbedding('Acute kidney injury'))
  })

  it('gives unit-length vectors of LOCAL_DIMENSIONS', () => {
    const v = localEmbedding('Which nerve supplies the diaphragm?')
    expect(v).toHaveLength(LOCAL_DIMENSIONS)
    expect(norm(v)).toBeCloseTo(1, 6)
  })

  it('ignores case and punctuation', () => {
    expect(cosine(localEmbedding('Heart failure!'), localEmbedding('heart failure'))).toBeCloseTo(1, 6)
  })

  it('puts similar texts closer than unrelated ones', () => {
    const query = localEmbedding('treatment of chronic heart failure')
    const similar = localEmbedding('how is heart failure treated')
    const unrelated = localEmbedding('the capital city of Australia')
    expect(cosine(query, similar)).toBeGreaterThan(cosine(query, unrelated) + 0.2)
  })

  it('an empty text, or one with no words, gives the zero vector', () => {
    for (const text of ['', '   ', '?!-']) {
      const v = localEmbedding(text)
      expect(v).toHaveLength(LOCAL_DIMENSIONS)
      expect(v.every((x) => x === 0)).toBe(true)
    }
  })

  it('takes another dimension when asked', () => {
    expect(localEmbedding('x ray', 64)).toHaveLength(64)
  })
})

describe('embedderFor', () => {
  let server: AiServer
  beforeAll(async () => {
    server = await startAiServer({ apiKey: 'k', dimensions: 32 })
  })
  afterAll(() => server.close())
  const ai = () => createAi(loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEY: '0'.repeat(64), ...server.env }), createLogger('silent'))

  it("'local', empty or no model name is the built-in embedder, with no gateway call", async () => {
    for (const name of [LOCAL_EMBEDDING_MODEL, '', null, undefined]) {
      const embedder = embedderFor(ai(), name)
      expect(embedder).toBe(localEmbedder)
      expect(embedder.model).toBe('local')
    }
    const before = server.requests.length
    expect(await localEmbedder.embed(['a', 'b'])).toEqual([localEmbedding('a'), localEmbedding('b')])
    expect(server.requests.length).toBe(before)
  })

  it('any other name is that model at the gateway', async () => {
    const embedder = embedderFor(ai(), 'text-embedding-3-small')
    expect(embedder.model).toBe('text-embedding-3-small')
    const out = await embedder.embed(['first', 'second'])
    expect(out).toHaveLength(2)
    expect(out[0]).toHaveLength(32)
    const last = server.requests.at(-1)!
    expect(last.path).toBe('/v1/embeddings')
    expect(last.body.model).toBe('text-embedding-3-small')
  })

  it('a gateway model with no gateway configured is 503, not a silent fallback', async () => {
    const none = createAi(loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEY: '0'.repeat(64) }), createLogger('silent'))
    expect(await rejection(embedderFor(none, 'text-embedding-3-small').embed(['x']))).toMatchObject({ status: 503 })
  })
})

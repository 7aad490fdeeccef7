// Both vector backends under the same behaviour tests: LanceDB in a temp folder, pgvector on PGlite (always), and
// pgvector on the PostgreSQL server of TEST_DATABASE_URL where that server has the extension. Then what only
// pgvector can do: a write through a transaction-bound index commits or rolls back with the rows; and which backend
// the app chooses at start, saying so in its log.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { boot } from '../src/app'
import { loadConfig } from '../src/config'
import { openDb, type Db } from '../src/core/db'
import { localEmbedding } from '../src/core/embedder'
import { openVectors, VectorDimensionMismatch, type Vectors } from '../src/core/vectors'
import { openPgVectors, PgvectorUnavailable } from '../src/core/vectors-pg'
import { plugins } from '../plugins'
import type { ContentInput } from '../plugins/learning/model'
import { createCategory, createContent } from '../plugins/learning/service'
import { contentCollection } from '../plugins/learning/service-search'
import { createThrowawayDatabase, type ThrowawayDatabase } from './support/database'
import { startTestApp } from './support/app'
import { rejection } from './support/wait'

setDefaultTimeout(120_000)

interface Backend {
  name: string
  open(opts?: { annIndexMinRows?: number }): Promise<Vectors>
  /** The database under a pgvector backend, for transactions. */
  db?: Db
  close(): Promise<void>
}

const lanceBackend = (): Backend => {
  const dir = mkdtempSync(join(tmpdir(), 'vectors-backends-'))
  let n = 0
  return {
    name: 'lancedb',
    // One folder per open(opts), so the ANN tests' small threshold does not meet the other tests' collections.
    open: (opts) => openVectors(opts ? join(dir, `ann${++n}`) : dir, opts),
    close: async () => rmSync(dir, { recursive: true, force: true }),
  }
}
const pgBackend = (name: string, db: Db, after: () => Promise<void>): Backend => ({
  name,
  db,
  open: (opts) => openPgVectors(db, opts),
  close: async () => {
    await db.close()
    await after()
  },
})

/** The server target, or why it is skipped: it needs TEST_DATABASE_URL and `create extension vector` to work there. */
async function serverBackend(): Promise<Backend | string> {
  const url = process.env.TEST_DATABASE_URL
  if (!url) return 'TEST_DATABASE_URL is not set: pgvector on a PostgreSQL server is not tested'
  const server: ThrowawayDatabase = await createThrowawayDatabase(url, 'vec')
  const db = await openDb({ url: server.url, dataDir: tmpdir(), poolSize: 4 })
  try {
    await db.sql`create extension if not exists vector`
    return pgBackend('pgvector on the server', db, () => server.drop())
  } catch (err) {
    await db.close()
    await server.drop()
    return `pgvector (the vector extension) is not installed on the PostgreSQL server of TEST_DATABASE_URL (${(err as Error).message}): its pgvector tests are skipped`
  }
}

const server = await serverBackend()
if (typeof server === 'string') console.warn(server)
const backends: Array<[string, () => Promise<Backend>]> = [
  ['lancedb', async () => lanceBackend()],
  ['pgvector on PGlite', async () => pgBackend('pgvector on PGlite', await openDb({ url: 'memory://', dataDir: tmpdir(), vector: true }), async () => {})],
  ...(typeof server === 'string' ? [] : [[server.name, async () => server] as [string, () => Promise<Backend>]]),
]
if (typeof server === 'string') it.skip(server, () => {})

const record = (id: string, text: string) => ({ id, text, vector: localEmbedding(text) })
let n = 0
const fresh = () => `c_${++n}`

describe.each(backends)('the vector index: %s', (_, make) => {
  let backend: Backend
  let vectors: Vectors
  beforeAll(async () => {
    backend = await make()
    vectors = await backend.open()
  })
  afterAll(async () => {
    vectors.close()
    await backend.close()
  })

  it('names its backend', () => {
    expect(vectors.backend).toBe(backend.name === 'lancedb' ? 'lancedb' : 'pgvector')
  })

  it('upsert then search: the closest first, with its text and a cosine score; an identical vector scores 1', async () => {
    const c = fresh()
    await vectors.upsert(c, [
      record('q1', 'What is the first-line treatment of heart failure?'),
      record('q2', 'Which bone is the longest in the human body?'),
      record('q3', 'What causes kidney stones?'),
    ])
    const matches = await vectors.search(c, localEmbedding('treatment of heart failure'), { topK: 3 })
    expect(matches.map((m) => m.id)[0]).toBe('q1')
    expect(matches).toHaveLength(3)
    expect(matches[0]!.text).toBe('What is the first-line treatment of heart failure?')
    expect(matches[0]!.score).toBeGreaterThan(matches[1]!.score)
    const [same] = await vectors.search(c, localEmbedding('What causes kidney stones?'), { topK: 1 })
    expect(same!.id).toBe('q3')
    expect(same!.score).toBeCloseTo(1, 5)
  })

  it('topK caps the matches; minScore leaves out those below it', async () => {
    const c = fresh()
    await vectors.upsert(c, Array.from({ length: 8 }, (_, i) => record(`q${i}`, `question number ${i} about anatomy`)))
    expect(await vectors.search(c, localEmbedding('anatomy'), { topK: 3 })).toHaveLength(3)
    const d = fresh()
    await vectors.upsert(d, [record('near', 'myocardial infarction symptoms'), record('far', 'tax returns for freelancers')])
    const query = localEmbedding('symptoms of myocardial infarction')
    const all = await vectors.search(d, query, { topK: 10 })
    expect(all.map((m) => m.id)).toEqual(['near', 'far'])
    const threshold = (all[0]!.score + all[1]!.score) / 2
    expect((await vectors.search(d, query, { topK: 10, minScore: threshold })).map((m) => m.id)).toEqual(['near'])
  })

  it('upsert replaces by id; concurrent upserts all land; delete removes only the given ids', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'old text about the liver')])
    await vectors.upsert(c, [record('q1', 'new text about the spleen'), record('q2', 'the pancreas')])
    expect(await vectors.count(c)).toBe(2)
    expect((await vectors.search(c, localEmbedding('new text about the spleen'), { topK: 1 }))[0]).toMatchObject({ id: 'q1', text: 'new text about the spleen' })
    const p = fresh()
    await Promise.all(Array.from({ length: 5 }, (_, i) => vectors.upsert(p, [record(`q${i}`, `parallel question ${i}`)])))
    expect(await vectors.count(p)).toBe(5)
    await vectors.delete(p, ['q1', 'q3'])
    expect((await vectors.search(p, localEmbedding('parallel question'), { topK: 10 })).map((m) => m.id).sort()).toEqual(['q0', 'q2', 'q4'])
  })

  it('drop removes a collection; a missing one: search [], count 0, delete and drop no error; collections kept apart', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one')])
    await vectors.drop(c)
    expect(await vectors.count(c)).toBe(0)
    expect(await vectors.search(c, localEmbedding('one'), { topK: 5 })).toEqual([])
    await vectors.drop(c)
    await vectors.delete('missing_collection', ['q1'])
    const names = Array.from({ length: 6 }, () => fresh())
    for (const [i, name] of names.entries()) await vectors.upsert(name, [record(`only_${i}`, `collection ${i}`)])
    for (const [i, name] of names.entries()) {
      expect((await vectors.search(name, localEmbedding(`collection ${i}`), { topK: 5 })).map((m) => m.id)).toEqual([`only_${i}`])
    }
  })

  it('the index survives reopening (a restart)', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('kept', 'persisted question')])
    const again = await backend.open()
    try {
      expect(await again.count(c)).toBe(1)
    } finally {
      again.close()
    }
  })

  it('ids and collection names are checked: a quote is refused; the ids the app generates are accepted', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one')])
    expect((await rejection(vectors.upsert(c, [record("x' OR '1'='1", 'evil')]))).message).toContain('invalid vector id')
    expect((await rejection(vectors.delete(c, ["q1' OR '1'='1"]))).message).toContain('invalid vector id')
    expect((await rejection(vectors.upsert('bad name; drop', [record('q1', 'one')]))).message).toContain('invalid vector collection name')
    expect((await rejection(vectors.search('../escape', localEmbedding('x'), { topK: 1 }))).message).toContain('invalid vector collection name')
    const ids = ['42', 'question:17', 'doc-3_page.4', '0f8fad5b-d9cb-469f-a165-70867728950e']
    await vectors.upsert(c, ids.map((id) => record(id, `text ${id}`)))
    await vectors.delete(c, ids.slice(0, 2))
    expect(await vectors.count(c)).toBe(3)
  })

  it('another length: refused on upsert, finds nothing on search; the zero vector matches nothing; empty writes do nothing', async () => {
    const c = fresh()
    await vectors.upsert(c, [record('q1', 'one'), record('empty', '')])
    const short = { id: 'q2', text: 'two', vector: localEmbedding('two', 64) }
    expect(await rejection(vectors.upsert(c, [short]))).toBeInstanceOf(VectorDimensionMismatch)
    expect(await rejection(vectors.upsert(fresh(), [record('a', 'one'), short]))).toBeInstanceOf(VectorDimensionMismatch)
    expect(await vectors.search(c, localEmbedding('one', 1536), { topK: 5 })).toEqual([])
    expect(await vectors.search(c, localEmbedding(''), { topK: 5 })).toEqual([])
    expect((await vectors.search(c, localEmbedding('one'), { topK: 5 })).map((m) => m.id)).toEqual(['q1'])
    await vectors.upsert(c, [])
    await vectors.delete(c, [])
    expect(await vectors.count(c)).toBe(2)
  })

  it('gives the answers a plain cosine scan gives: the same ids in the same order, the same scores', async () => {
    let seed = 7 // a fixed pseudo-random sequence: continuous values, so no two scores tie
    const random = () => ((seed = (Math.imul(seed, 48271) >>> 0) % 2147483647) / 2147483647) * 2 - 1
    const vectorOf = () => Array.from({ length: 64 }, random)
    const cosine = (a: number[], b: number[]) => {
      let dot = 0, na = 0, nb = 0
      a.forEach((x, k) => { dot += x * b[k]!; na += x * x; nb += b[k]! * b[k]! })
      return dot / Math.sqrt(na * nb)
    }
    const c = fresh()
    const stored = Array.from({ length: 300 }, (_, i) => ({ id: `r${i}`, text: `r${i}`, vector: vectorOf() }))
    await vectors.upsert(c, stored)
    for (let q = 0; q < 5; q++) {
      const v = vectorOf()
      const truth = stored.map((r) => ({ id: r.id, score: cosine(r.vector, v) })).sort((a, b) => b.score - a.score)
      const found = await vectors.search(c, v, { topK: 10, minScore: truth[7]!.score - 1e-6 })
      expect(found.map((m) => m.id)).toEqual(truth.slice(0, 8).map((t) => t.id))
      found.forEach((m, i) => expect(m.score).toBeCloseTo(truth[i]!.score, 5))
    }
  })

  describe('the approximate-nearest-neighbour index', () => {
    const N = 1_200
    const words = Array.from({ length: 400 }, (_, i) => `w${((i * 7919) % 100_003).toString(36)}`)
    const text = (i: number) => Array.from({ length: 10 }, (_, k) => words[(i * 31 + k * 97 + ((i * k) % 13)) % words.length]).join(' ')
    let ann: Vectors
    beforeAll(async () => {
      ann = await backend.open({ annIndexMinRows: 1_000 })
    })
    afterAll(() => ann.close())

    it('is built by maintain() at the threshold and answers as the exact scan does (recall@10 >= 0.9)', async () => {
      const records = Array.from({ length: N }, (_, i) => record(`q${i}`, text(i)))
      await ann.upsert('big', records.slice(0, 900))
      expect(await ann.maintain('big')).toBe('unchanged')
      await ann.upsert('big', records.slice(900))
      expect(await ann.hasAnnIndex('big')).toBe(false)
      expect(await ann.maintain('big')).toBe('built')
      expect(await ann.hasAnnIndex('big')).toBe(true)
      expect(await ann.maintain('big')).toBe('unchanged')
      let hits = 0
      for (let i = 0; i < 20; i++) {
        const query = localEmbedding(text(i * 53).split(' ').slice(0, 5).join(' '))
        const exact = await ann.search('big', query, { topK: 10, exact: true })
        expect(exact).toHaveLength(10)
        const truth = new Set(exact.map((m) => m.id))
        hits += (await ann.search('big', query, { topK: 10 })).filter((m) => truth.has(m.id)).length
      }
      expect(hits / 200).toBeGreaterThanOrEqual(0.9)
    })

    it('rows written after the build are found, a replaced record by its new vector; maintainAll looks after every collection', async () => {
      await ann.upsert('big', Array.from({ length: 1_100 }, (_, i) => record(`late${i}`, text(N + i))))
      // LanceDB searches rows its index does not cover by a scan, until a build takes them in; pgvector's HNSW
      // index takes every row in as it is written, so it is never built again.
      expect(await ann.maintain('big')).toBe(backend.name === 'lancedb' ? 'built' : 'unchanged')
      expect((await ann.search('big', localEmbedding(text(N + 7)), { topK: 1 }))[0]!.id).toBe('late7')
      await ann.upsert('big', [record('q5', 'marble pelican saxophone glacier')])
      const [moved] = await ann.search('big', localEmbedding('marble pelican saxophone glacier'), { topK: 1 })
      expect(moved!.id).toBe('q5')
      expect(moved!.score).toBeCloseTo(1, 3)
      await ann.upsert('other', Array.from({ length: 1_000 }, (_, i) => record(`o${i}`, text(i * 3))))
      await ann.upsert('small', [record('a', 'alpha beta')])
      await ann.maintainAll()
      expect(await ann.hasAnnIndex('other')).toBe(true)
      expect(await ann.hasAnnIndex('small')).toBe(false)
      expect(await ann.hasAnnIndex('missing')).toBe(false)
    })

    it('indexes vectors longer than pgvector indexes as `vector` (2,500 dimensions: half precision)', async () => {
      await ann.upsert('long', Array.from({ length: 1_000 }, (_, i) => ({ id: `l${i}`, text: text(i), vector: localEmbedding(text(i), 2_500) })))
      expect(await ann.maintain('long')).toBe('built')
      const [top] = await ann.search('long', localEmbedding(text(321), 2_500), { topK: 3 })
      expect(top!.id).toBe('l321')
      expect(top!.score).toBeCloseTo(1, 5)
    })
  })

  describe('inside a database transaction', () => {
    it('a bound pgvector index writes in the transaction, so a rollback drops the vectors with the rows (LanceDB binds to itself)', async () => {
      if (!backend.db) return expect(vectors.bind(null as unknown as Db)).toBe(vectors)
      const db = backend.db
      const c = fresh()
      expect((await rejection(db.transaction(async (tx) => {
        await vectors.bind(tx).upsert(c, [record('q1', 'rolled back')])
        expect(await vectors.bind(tx).count(c)).toBe(1)
        throw new Error('rollback')
      }))).message).toContain('rollback')
      expect(await vectors.count(c)).toBe(0)
      await db.transaction(async (tx) => {
        await vectors.bind(tx).upsert(c, [record('q1', 'committed'), record('q2', 'gone again')])
        await vectors.bind(tx).delete(c, ['q2'])
      })
      expect((await vectors.search(c, localEmbedding('committed'), { topK: 5 })).map((m) => m.id)).toEqual(['q1'])
      expect((await rejection(db.transaction(async (tx) => {
        await vectors.bind(tx).drop(c)
        throw new Error('rollback')
      }))).message).toContain('rollback')
      expect(await vectors.count(c)).toBe(1)
    })
  })
})

describe('the app chooses its vector backend at start and says which', () => {
  const startLogged = async (env: Record<string, string>, target: 'pglite' | 'postgres' = 'pglite') => {
    const lines: Array<{ msg: string; backend?: string; reason?: string }> = []
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const app = await startTestApp({ target, env, boot: { log } })
    return { app, line: lines.find((l) => l.msg.startsWith('vector index')) }
  }

  it('embedded PGlite: LanceDB unless VECTOR_BACKEND=pgvector; with pgvector a rolled-back unit of work leaves no vectors', async () => {
    const auto = await startLogged({})
    expect(auto.line).toMatchObject({ backend: 'lancedb', reason: 'the embedded database (PGlite)' })
    expect(auto.app.booted.core.vectors.backend).toBe('lancedb')
    await auto.app.close()

    const { app, line } = await startLogged({ VECTOR_BACKEND: 'pgvector' })
    try {
      expect(line).toMatchObject({ backend: 'pgvector' })
      const core = app.booted.core
      const { id: categoryId } = await createCategory(core, { name: 'Wards', slug: `wards-${Date.now()}` })
      const input: ContentInput = { title: 'Sepsis bundle', body: 'Oxygen, cultures and antibiotics within the hour.', slug: `sepsis-${Date.now()}`, categoryId }
      await createContent(core, input, null)
      const collection = contentCollection('local')
      const stored = await core.vectors.count(collection)
      expect(stored).toBeGreaterThan(0)
      // The content and its vectors are written in the caller's unit of work, which then fails.
      expect((await rejection(core.transaction(async (tx) => {
        await createContent(tx, { ...input, slug: `${input.slug}-2` }, null)
        expect(await tx.vectors.count(collection)).toBeGreaterThan(stored)
        throw new Error('rollback')
      }))).message).toContain('rollback')
      expect(await core.vectors.count(collection)).toBe(stored)
      expect(await core.db.sql`select id from clinical.learning_content where slug = ${`${input.slug}-2`}`).toEqual([])
    } finally {
      await app.close()
    }
  })

  it.skipIf(!process.env.TEST_DATABASE_URL)('a PostgreSQL server: pgvector when it has the extension, else LanceDB with the reason, and VECTOR_BACKEND=pgvector refuses to start', async () => {
    const { app, line } = await startLogged({}, 'postgres')
    await app.close()
    if (typeof server !== 'string') return expect(line).toMatchObject({ backend: 'pgvector' })
    expect(line).toMatchObject({ backend: 'lancedb', reason: expect.stringContaining('not installed') })
    const throwaway = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!)
    const dataDir = mkdtempSync(join(tmpdir(), 'vectors-backends-app-'))
    try {
      const config = loadConfig({
        DATA_DIR: dataDir, DATABASE_URL: throwaway.url, VECTOR_BACKEND: 'pgvector', WORKERS: '0',
        JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789', DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1',
      })
      expect(await rejection(boot(config, plugins, { log: pino({ level: 'silent' }) }))).toBeInstanceOf(PgvectorUnavailable)
    } finally {
      await throwaway.drop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

// The vector index alone, on each backend: LanceDB in a folder, pgvector on PGlite, and pgvector on the PostgreSQL
// server of BENCH_DATABASE_URL when that server has the extension. SIZE vectors of the built-in local embedder (384
// dimensions) are upserted in batches, maintain() builds the ANN index, then QUERIES searches: p50/p95 of the exact
// scan and of the index, recall@10 of the index against the scan (and how often its first match is the scan's), and
// the cost of writing into a collection that has its index. Prints figures, asserts nothing.
//
//   bun scripts/bench/vectors.ts   SIZE=100000 QUERIES=200 BATCH=1000 TARGETS=lancedb,pglite,postgres
import { rmSync } from 'node:fs'
import { openDb, rawSql, type Db } from '../../src/core/db'
import { localEmbedding } from '../../src/core/embedder'
import { openVectors, type Vectors } from '../../src/core/vectors'
import { openPgVectors } from '../../src/core/vectors-pg'
import { formatMs, freshDataDir, freshServerDatabase, redact, SERVER_URL, serverAvailable, timed } from './support'

const SIZE = Number(process.env.SIZE ?? 100_000)
const QUERIES = Number(process.env.QUERIES ?? 200)
const BATCH = Number(process.env.BATCH ?? 1_000)
const TARGETS = (process.env.TARGETS ?? 'lancedb,pglite,postgres').split(',')
const LATE = 1_000
const COLLECTION = 'bench_vectors'

// A deterministic vocabulary and texts (mulberry32), so every run and every backend indexes the same vectors.
function rng(seed: number) {
  return () => {
    seed |= 0
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = rng(42)
const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
const VOCABULARY = Array.from({ length: 5_000 }, () => Array.from({ length: 4 + Math.floor(random() * 7) }, () => LETTERS[Math.floor(random() * 26)]).join(''))
const words = (n: number) => Array.from({ length: n }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]).join(' ')
const texts = Array.from({ length: SIZE + LATE }, () => words(8 + Math.floor(random() * 10)))
// A stored text with every fourth word left out: a reworded question, with a clear best match.
const queries = Array.from({ length: QUERIES }, (_, i) => texts[Math.floor(rng(i + 7)() * SIZE)]!.split(' ').filter((_, k) => k % 4 !== 3).join(' '))


interface Target {
  name: string
  open(): Promise<{ vectors: Vectors; db?: Db; close(): Promise<void> }>
}
const lancedb: Target = {
  name: 'lancedb',
  async open() {
    const dir = freshDataDir('bench-vectors')
    const vectors = await openVectors(dir)
    return { vectors, close: async () => (vectors.close(), rmSync(dir, { recursive: true, force: true })) }
  },
}
const pglite: Target = {
  name: 'pgvector (PGlite)',
  async open() {
    const db = await openDb({ url: 'memory://', dataDir: freshDataDir('bench-vectors'), vector: true })
    return { vectors: await openPgVectors(db), db, close: () => db.close() }
  },
}
const postgres: Target = {
  name: 'pgvector (server)',
  async open() {
    const server = await freshServerDatabase('bench_vectors')
    const db = await openDb({ url: server.url, dataDir: freshDataDir('bench-vectors') })
    return { vectors: await openPgVectors(db), db, close: async () => (await db.close(), await server.drop()) }
  },
}

/** Why the server cannot be benchmarked, or null when it can (it answers and has pgvector). */
async function serverProblem(): Promise<string | null> {
  if (!(await serverAvailable())) return `PostgreSQL at ${redact(SERVER_URL)} does not answer`
  const server = await freshServerDatabase('bench_vectors')
  const db = await openDb({ url: server.url, dataDir: freshDataDir('bench-vectors') })
  try {
    await db.sql`create extension if not exists vector`
    return null
  } catch (err) {
    return `pgvector (the vector extension) is not installed on PostgreSQL at ${redact(SERVER_URL)} (${(err as Error).message})`
  } finally {
    await db.close()
    await server.drop()
  }
}

const summary: string[] = []
async function run(target: Target) {
  const { vectors, db, close } = await target.open()
  try {
    const insertStart = performance.now()
    for (let done = 0; done < SIZE; done += BATCH) {
      const ids = Array.from({ length: Math.min(BATCH, SIZE - done) }, (_, k) => done + k)
      await vectors.upsert(COLLECTION, ids.map((i) => ({ id: `q${i}`, text: texts[i]!, vector: localEmbedding(texts[i]!) })))
    }
    const insertS = (performance.now() - insertStart) / 1000
    const buildStart = performance.now()
    await vectors.maintain(COLLECTION)
    const buildS = (performance.now() - buildStart) / 1000
    console.log(`${target.name}: ${SIZE} vectors upserted in ${insertS.toFixed(1)} s (${Math.round(SIZE / insertS)}/s); `
      + `ANN index ${(await vectors.hasAnnIndex(COLLECTION)) ? `built in ${buildS.toFixed(1)} s` : 'not built'}`)
    if (db) {
      // The plan of the index search, to see that the HNSW index serves it.
      const [c] = await db.sql<{ number: number }>`select number from vectors.collections where name = ${COLLECTION}`
      const plan = await db.sql<{ 'QUERY PLAN': string }>`
        explain select id from ${rawSql(`vectors.collection_${c!.number}`)}
        order by embedding <=> ${JSON.stringify(localEmbedding(queries[0]!))}::vector(384) limit 10`
      console.log(`  plan: ${plan.map((r) => r['QUERY PLAN'].replace(/'\[[^\]]*\]'/g, "'[...]'").trim()).join(' / ')}`)
    }

    const vectorsOf = queries.map((q) => localEmbedding(q))
    const truth: string[][] = []
    const exact = await timed(QUERIES, async (i) => {
      truth[i % QUERIES] = (await vectors.search(COLLECTION, vectorsOf[i % QUERIES]!, { topK: 10, exact: true })).map((m) => m.id)
    })
    let hits = 0
    let asked = 0
    let firsts = 0
    const ann = await timed(QUERIES, async (i) => {
      const found = await vectors.search(COLLECTION, vectorsOf[i % QUERIES]!, { topK: 10 })
      const expected = new Set(truth[i % QUERIES])
      hits += found.filter((m) => expected.has(m.id)).length
      asked += expected.size
      if (found[0]?.id === truth[i % QUERIES]![0]) firsts++
    })
    const lateStart = performance.now()
    for (let done = 0; done < LATE; done += 100) {
      const ids = Array.from({ length: 100 }, (_, k) => SIZE + done + k)
      await vectors.upsert(COLLECTION, ids.map((i) => ({ id: `q${i}`, text: texts[i]!, vector: localEmbedding(texts[i]!) })))
    }
    const lateMs = (performance.now() - lateStart) / LATE
    const recall = hits / asked
    const first = firsts / (QUERIES + 5)
    const line = `| ${target.name} | ${SIZE.toLocaleString('en')} | ${insertS.toFixed(1)} s | ${buildS.toFixed(1)} s | ${formatMs(exact.p50)} / ${formatMs(exact.p95)} | `
      + `${formatMs(ann.p50)} / ${formatMs(ann.p95)} | ${recall.toFixed(3)} | ${first.toFixed(3)} | ${formatMs(lateMs)} |`
    console.log(line)
    summary.push(line)
  } finally {
    await close()
  }
}

const targets: Target[] = []
if (TARGETS.includes('lancedb')) targets.push(lancedb)
if (TARGETS.includes('pglite')) targets.push(pglite)
if (TARGETS.includes('postgres')) {
  const problem = await serverProblem()
  if (problem) console.log(`${problem}: the server is skipped`)
  else targets.push(postgres)
}
console.log(`vectors: ${SIZE} x 384 dimensions, batches of ${BATCH}; ${QUERIES} queries per figure; ${targets.map((t) => t.name).join(', ')}`)
for (const target of targets) await run(target)
console.log('\n| backend | vectors | upsert | index build | exact scan p50 / p95 ms | index p50 / p95 ms | recall@10 | best match | upsert after build, ms per vector |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const line of summary) console.log(line)

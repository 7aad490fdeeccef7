// The question bank's search at scale: GET /quiz/api/questions/bank in keyword, semantic and hybrid mode through the
// real app, on PostgreSQL and PGlite, at each size of SIZES questions; and the vector index alone: LanceDB's ANN
// index (HNSW, built once a collection passes ANN_INDEX_MIN_ROWS) against an exact scan of the same vectors, with
// recall@10 of the index against the scan. Prints figures, asserts nothing.
//
//   bun scripts/bench/bank-search.ts   SIZES=10000,100000 QUERIES=200 TARGETS=postgres,pglite MODES=keyword,semantic,hybrid
import { rmSync } from 'node:fs'
import { localEmbedding } from '../../src/core/embedder'
import { ANN_INDEX_MIN_ROWS } from '../../src/core/vectors'
import { QUESTIONS_COLLECTION, questionText } from '../../plugins/quiz/services/question-index'
import { bootForBench, formatMs, freshDataDir, freshServerDatabase, redact, SERVER_URL, serverAvailable, timed } from './support'

const SIZES = (process.env.SIZES ?? '10000,100000').split(',').map(Number)
const QUERIES = Number(process.env.QUERIES ?? 200)
const TARGETS = (process.env.TARGETS ?? 'postgres,pglite').split(',')
const BATCH = 5_000

// A deterministic vocabulary and question generator (mulberry32), so every run searches the same bank.
function rng(seed: number) {
  return () => {
    seed |= 0
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
const random = rng(42)
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!
// Words of 4 to 10 letters: about as many distinct trigrams as medical prose has (a vocabulary built from a few
// syllables would share trigrams everywhere and make any substring index look worse than it is on real text).
const VOCABULARY = Array.from({ length: 5_000 }, () => Array.from({ length: 4 + Math.floor(random() * 7) }, () => pick([...LETTERS])).join(''))
const STEMS = ['Which finding is most typical of', 'What is the first-line treatment for', 'Which test best confirms', 'What is the commonest cause of', 'Which complication follows']
const words = (n: number) => Array.from({ length: n }, () => pick(VOCABULARY)).join(' ')
const makeQuestion = () => {
  const options = Array.from({ length: 4 }, () => words(3))
  return { question_text: `${pick(STEMS)} ${words(6 + Math.floor(random() * 6))}?`, options, correct_answer: options[0]!, explanation: words(12) }
}


interface Row { target: string; size: number; what: string; p50: number; p95: number; note?: string }
const rows: Row[] = []
const print = (r: Row) => {
  rows.push(r)
  console.log(`${r.target.padEnd(9)} ${String(r.size).padStart(7)}  ${r.what.padEnd(28)} p50 ${formatMs(r.p50).padStart(7)} ms  p95 ${formatMs(r.p95).padStart(7)} ms${r.note ? `  ${r.note}` : ''}`)
}

async function run(target: string, size: number) {
  const dataDir = freshDataDir('bench-bank')
  const server = target === 'postgres' ? await freshServerDatabase('bench_bank') : null
  const booted = await bootForBench({ DATA_DIR: dataDir, DATABASE_URL: server?.url ?? 'memory://' })
  const { core } = booted
  try {
    const register = await booted.fetch(new Request('http://localhost/quiz/api/auth/register', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.test', password: 'bench-password-1', name: 'Bench' }),
    }))
    const { access_token: token } = (await register.json()) as { access_token: string }

    // Seed: rows in batches (one statement each), and their vectors into the bank's collection.
    const seedStart = performance.now()
    const texts: string[] = []
    for (let done = 0; done < size; done += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, size - done) }, makeQuestion)
      const ids = await core.db.sql<{ id: number }>`
        insert into quiz.questions (question_text, options, correct_answer, explanation)
        select e.q ->> 'question_text', e.q -> 'options', e.q ->> 'correct_answer', e.q ->> 'explanation'
        from jsonb_array_elements(${{ value: batch }}::jsonb -> 'value') with ordinality as e(q, n) order by e.n
        returning id`
      await core.vectors.upsert(QUESTIONS_COLLECTION, ids.map((r, i) => ({
        id: String(r.id), text: batch[i]!.question_text, vector: localEmbedding(questionText({ id: r.id, ...batch[i]! })),
      })))
      texts.push(...batch.map((q) => q.question_text))
    }
    // A bank at rest: autovacuum has run (it also empties the trigram index's pending list of fresh entries).
    await core.db.sql`vacuum analyze quiz.questions`
    const seeded = performance.now()
    // What the core.vectors.maintain schedule does when it next runs.
    await core.vectors.maintain(QUESTIONS_COLLECTION)
    const indexed = await core.vectors.hasAnnIndex(QUESTIONS_COLLECTION)
    console.log(`${target} ${size}: seeded in ${((seeded - seedStart) / 1000).toFixed(1)} s; ANN index: ` +
      (indexed ? `built in ${((performance.now() - seeded) / 1000).toFixed(1)} s` : `none (under ${ANN_INDEX_MIN_ROWS} vectors)`))

    // Queries: three consecutive words of a stored question (what a keyword search is for), and a stored question
    // with every fourth word left out (a reworded one: what a semantic search is for; it has a clear best match).
    const source = (i: number) => texts[Math.floor(rng(i + 7)() * texts.length)]!.replace(/\?$/, '').split(' ')
    const keywordQuery = (i: number) => source(i).slice(-4, -1).join(' ')
    const meaningQuery = (i: number) => source(i).filter((_, k) => k % 4 !== 3).join(' ')
    const queryOf = (mode: string, i: number) => (mode === 'keyword' ? keywordQuery(i) : meaningQuery(i))
    for (const mode of (process.env.MODES ?? 'keyword,semantic,hybrid').split(',') as Array<'keyword' | 'semantic' | 'hybrid'>) {
      let total = 0
      const figures = await timed(QUERIES, async (i) => {
        const q = encodeURIComponent(queryOf(mode, i))
        const res = await booted.fetch(new Request(`http://localhost/quiz/api/questions/bank?q=${q}&search_mode=${mode}&limit=50`, {
          headers: { authorization: `Bearer ${token}` },
        }))
        if (res.status !== 200) throw new Error(`bank search ${mode} answered ${res.status}: ${await res.text()}`)
        total += ((await res.json()) as { total: number }).total
      })
      print({ target, size, what: `bank ${mode}`, ...figures, note: `mean total ${Math.round(total / (QUERIES + 5))}` })
    }

    // The vector index alone (the same collection): ANN vs an exact scan, recall@10 of the index.
    const queryVectors = Array.from({ length: QUERIES }, (_, i) => localEmbedding(meaningQuery(i)))
    let hits = 0
    const exactIds: string[][] = []
    const exact = await timed(QUERIES, async (i) => {
      const found = await core.vectors.search(QUESTIONS_COLLECTION, queryVectors[i % QUERIES]!, { topK: 10, exact: true })
      exactIds[i % QUERIES] = found.map((m) => m.id)
    })
    const ann = await timed(QUERIES, async (i) => {
      const found = await core.vectors.search(QUESTIONS_COLLECTION, queryVectors[i % QUERIES]!, { topK: 10 })
      const truth = new Set(exactIds[i % QUERIES])
      hits += found.filter((m) => truth.has(m.id)).length
    })
    print({ target, size, what: 'vectors exact scan top10', ...exact })
    print({ target, size, what: `vectors ${indexed ? 'ANN index' : 'no index'} top10`, ...ann, note: `recall@10 ${(hits / ((QUERIES + 5) * 10)).toFixed(3)}` })
  } finally {
    await booted.shutdown()
    await server?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const targets = TARGETS.filter((t) => t !== 'postgres') as string[]
if (TARGETS.includes('postgres')) {
  if (await serverAvailable()) targets.unshift('postgres')
  else console.log(`PostgreSQL at ${redact(SERVER_URL)} does not answer: PGlite only`)
}
console.log(`bank search: sizes ${SIZES.join(', ')}; ${QUERIES} queries per figure; targets ${targets.join(', ')}`)
for (const size of SIZES) for (const target of targets) await run(target, size)

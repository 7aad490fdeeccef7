// The learning hub's search: keyword (PostgreSQL full-text words plus case-insensitive substrings), semantic
// (embeddings in the vector index) and hybrid (reciprocal-rank fusion of the two). The database is the source of
// truth; the vector index holds each content's text in chunks and is kept in step by every create, update and
// delete (service.ts), and rebuilt from the database when it is found empty (a new embedding model, a wiped index).
import { fragment } from '../../src/core/db'
import { embedderFor, type Embedder } from '../../src/core/embedder'
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import { SEARCH_LIMIT_DEFAULT, type SearchResult } from './model'

// ---- the vector index --------------------------------------------------------------------------------------

/** A content's text is embedded in at most this many chunks: the first is its title and summary, then the text. */
export const CHUNKS_MAX = 48
/** A chunk of the text holds about this many characters (more when the text would need more chunks). */
export const CHUNK_CHARS = 1_200
/** Semantic matches need at least this cosine similarity between the query and a chunk. */
export const SEMANTIC_MIN_SCORE = 0.1
/** Chunks the vector index is asked for per semantic search (several may belong to one content). */
export const SEMANTIC_CANDIDATES = 200
/** Candidates each ranking hands the hybrid fusion. */
export const HYBRID_CANDIDATES = 50
/** The k of reciprocal-rank fusion: score = sum over both rankings of 1 / (k + rank), rank 1 first. */
export const RRF_K = 60

/** The embedding model: EMBEDDING_MODEL at the gateway, or the built-in local embedder. */
export const learningEmbedder = (core: Core): Embedder => embedderFor(core.ai, core.config.ai.embeddingModel)

// FNV-1a, for a short stable tag of the model name.
function fnv(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16)
}

/**
 * One collection per embedding model: vectors of two models never mix, and a new model starts an empty
 * collection that the first semantic search fills from the database.
 */
export function contentCollection(model: string): string {
  const readable = model.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 40)
  return `learning_content_${readable}_${fnv(model)}`
}

const chunkId = (contentId: number, n: number) => `${contentId}:${n}`
const ALL_CHUNK_NUMBERS = Array.from({ length: CHUNKS_MAX }, (_, n) => n)

interface IndexableContent {
  id: number
  title: string
  summary: string
  body: string
  slides: string | null
}

/** Paragraph-aligned pieces of about `size` characters (a paragraph longer than that is cut). */
function piecesOf(text: string, size: number): string[] {
  const pieces: string[] = []
  let current = ''
  for (const paragraph of text.split(/\n\s*\n/)) {
    const p = paragraph.trim()
    if (!p) continue
    if (current && current.length + p.length + 2 > size) {
      pieces.push(current)
      current = ''
    }
    current = current ? `${current}\n\n${p}` : p
    while (current.length > size) {
      pieces.push(current.slice(0, size))
      current = current.slice(size)
    }
  }
  if (current) pieces.push(current)
  return pieces
}

/** The texts a content is embedded by: its title and summary, then its body and slides in pieces. */
export function contentChunks(c: Omit<IndexableContent, 'id'>): string[] {
  const text = [c.body, c.slides ?? ''].filter((s) => s.trim() !== '').join('\n\n')
  const size = Math.max(CHUNK_CHARS, Math.ceil(text.length / (CHUNKS_MAX - 1)) + 1)
  return [`${c.title}\n${c.summary}`, ...piecesOf(text, size).map((p) => `${c.title}\n${p}`)].slice(0, CHUNKS_MAX)
}

export interface EmbeddedContent {
  collection: string
  chunks: string[]
  vectors: number[][]
}

/** Embeds a content's chunks (before it is written, so a failing model stores nothing). 502/503 from the gateway. */
export async function embedContent(core: Core, c: Omit<IndexableContent, 'id'>): Promise<EmbeddedContent> {
  const embedder = learningEmbedder(core)
  const chunks = contentChunks(c)
  return { collection: contentCollection(embedder.model), chunks, vectors: await embedWith(embedder, chunks) }
}

async function embedWith(embedder: Embedder, texts: string[]): Promise<number[][]> {
  try {
    return await embedder.embed(texts)
  } catch (err) {
    if (err instanceof HttpError) throw err
    throw HttpError.upstream('embedding_unavailable', err, 'The embedding model could not be reached')
  }
}

/** Writes a content's embedded chunks under its id and removes the chunks it had beyond them. */
export async function storeContentVectors(core: Core, id: number, embedded: EmbeddedContent): Promise<void> {
  await core.vectors.upsert(embedded.collection, embedded.chunks.map((text, n) => ({ id: chunkId(id, n), vector: embedded.vectors[n]!, text })))
  await core.vectors.delete(embedded.collection, ALL_CHUNK_NUMBERS.slice(embedded.chunks.length).map((n) => chunkId(id, n)))
}

/**
 * Brings one content's vectors in step with its row: embeds and writes them, or removes them when the row is gone.
 * The create, update and delete services do this themselves; this is for rebuilding and for other writers.
 */
export async function indexContent(core: Core, id: number): Promise<void> {
  const [row] = await core.db.sql<IndexableContent>`
    select id, title, summary, body, slides from clinical.learning_content where id = ${id}`
  if (!row) return unindexContent(core, id)
  await storeContentVectors(core, id, await embedContent(core, row))
}

/** Removes a content's vectors. */
export async function unindexContent(core: Core, id: number): Promise<void> {
  await core.vectors.delete(contentCollection(learningEmbedder(core).model), ALL_CHUNK_NUMBERS.map((n) => chunkId(id, n)))
}

/** Rebuilds the current model's collection from the database: every content, published or not. */
export async function reindexAllContent(core: Core): Promise<number> {
  const collection = contentCollection(learningEmbedder(core).model)
  await core.vectors.drop(collection)
  const ids = await core.db.sql<{ id: number }>`select id from clinical.learning_content order by id`
  for (const { id } of ids) await indexContent(core, id)
  return ids.length
}

/** Collections checked (and filled when found empty) by this process. */
const checked = new Map<string, Promise<void>>()

async function ensureIndexed(core: Core, collection: string): Promise<void> {
  const key = `${core.id}:${collection}`
  let done = checked.get(key)
  if (!done) {
    done = (async () => {
      if ((await core.vectors.count(collection)) > 0) return
      const [any] = await core.db.sql`select 1 from clinical.learning_content limit 1`
      if (any) await reindexAllContent(core)
    })()
    checked.set(key, done)
    done.catch(() => checked.delete(key))
  }
  await done
}

// ---- searching -------------------------------------------------------------------------------------------

/** ILIKE's pattern for a substring: `%`, `_` and `\` in the text match themselves. */
const substringPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** The text the trigram index covers; the expression must stay the index's (sql/001_learning.sql). */
const SEARCHED_TEXT = fragment`(c.title || ' ' || c.summary || ' ' || c.body || ' ' || coalesce(c.slides, ''))`

const RESULT_COLUMNS = fragment`
  c.id, c.title, c.slug, c.summary, c.type, k.name as category, k.slug as category_slug, c.created_at`

interface ResultRow {
  id: number
  title: string
  slug: string
  summary: string
  type: 'article' | 'presentation'
  category: string
  category_slug: string
  created_at: Date
}

const toResult = (r: ResultRow, score: number): SearchResult => ({
  id: r.id, title: r.title, slug: r.slug, summary: r.summary, type: r.type, category: r.category, category_slug: r.category_slug,
  created_at: r.created_at.toISOString(), score,
})

export type SearchMode = 'keyword' | 'semantic' | 'hybrid'

function queryText(q: string): string {
  const text = q.trim()
  if (!text) throw HttpError.unprocessable('invalid_query', 'q: enter a word to search for', { q: 'Enter a word to search for' })
  return text
}

/**
 * Keyword search over published content: a content matches when its words match the query's (English stemming,
 * every word; `"a phrase"`, `or` and `-word` work as in web searches) or when its text contains the query as typed,
 * ignoring case. Score: 1 for a title containing the query, plus the full-text rank (title words weigh most, then
 * summary, body, slides). Ties: newest first.
 */
export async function keywordSearch(core: Core, q: string, limit = SEARCH_LIMIT_DEFAULT): Promise<SearchResult[]> {
  const text = queryText(q)
  const pattern = substringPattern(text)
  // A parameterised pattern gets a plan that can use the trigram index only when planned for its value.
  const rows = await core.transaction(async (tx) => {
    await tx.db.sql`set local plan_cache_mode = force_custom_plan`
    return tx.db.sql<ResultRow & { score: number }>`
      select ${RESULT_COLUMNS},
        (case when c.title ilike ${pattern} then 1 else 0 end) + ts_rank_cd(c.search_vector, w.query) as score
      from clinical.learning_content c
      join clinical.learning_categories k on k.id = c.category_id
      cross join websearch_to_tsquery('english', ${text}) as w(query)
      where c.published and (c.search_vector @@ w.query or ${SEARCHED_TEXT} ilike ${pattern})
      order by score desc, c.published_at desc, c.id desc
      limit ${limit}`
  })
  return rows.map((r) => toResult(r, Math.round(Number(r.score) * 10_000) / 10_000))
}

/** The closest published contents to the query by embedding, each scored by its best chunk's cosine similarity. */
export async function semanticSearch(core: Core, q: string, limit = SEARCH_LIMIT_DEFAULT): Promise<SearchResult[]> {
  const text = queryText(q)
  const embedder = learningEmbedder(core)
  const collection = contentCollection(embedder.model)
  const [vector] = await embedWith(embedder, [text])
  // A query without a word embeds (locally) to the zero vector, which has no direction to compare.
  if (!vector || vector.every((x) => x === 0)) return []
  await ensureIndexed(core, collection)
  const matches = await core.vectors.search(collection, vector, { topK: SEMANTIC_CANDIDATES, minScore: SEMANTIC_MIN_SCORE })
  const best = new Map<number, number>()
  for (const m of matches) {
    const id = Number(m.id.split(':')[0])
    if (Number.isSafeInteger(id) && id > 0 && (best.get(id) ?? -Infinity) < m.score) best.set(id, m.score)
  }
  if (best.size === 0) return []
  const rows = await core.db.sql<ResultRow & { published_at: Date }>`
    select ${RESULT_COLUMNS}, c.published_at
    from clinical.learning_content c
    join clinical.learning_categories k on k.id = c.category_id
    where c.published and c.id = any(${[...best.keys()]}::int[])`
  return rows
    .map((r) => ({ r, score: Math.round(best.get(r.id)! * 10_000) / 10_000 }))
    .sort((a, b) => b.score - a.score || b.r.published_at.getTime() - a.r.published_at.getTime() || b.r.id - a.r.id)
    .slice(0, limit)
    .map(({ r, score }) => toResult(r, score))
}

/**
 * Reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009) of the keyword and the semantic rankings, each cut to
 * its best HYBRID_CANDIDATES: score = sum of 1 / (RRF_K + rank) over the rankings that hold the content. Rank-based,
 * so the two scales need no calibration; as 2 / (RRF_K + HYBRID_CANDIDATES) > 1 / (RRF_K + 1), a content found by
 * both ranks above every content found by only one. Ties: the better keyword rank, then the better semantic rank.
 */
export async function hybridSearch(core: Core, q: string, limit = SEARCH_LIMIT_DEFAULT): Promise<SearchResult[]> {
  const [keyword, semantic] = await Promise.all([
    keywordSearch(core, q, HYBRID_CANDIDATES),
    semanticSearch(core, q, HYBRID_CANDIDATES),
  ])
  return fuseRankings(keyword, semantic).slice(0, limit)
}

/** The fusion of hybridSearch on two rankings, best first (exported for its tests). */
export function fuseRankings(keyword: SearchResult[], semantic: SearchResult[]): SearchResult[] {
  const fused = new Map<number, { item: SearchResult; score: number; k: number; s: number }>()
  const add = (list: SearchResult[], which: 'k' | 's') =>
    list.forEach((item, i) => {
      const entry = fused.get(item.id) ?? { item, score: 0, k: Infinity, s: Infinity }
      entry.score += 1 / (RRF_K + i + 1)
      entry[which] = i + 1
      fused.set(item.id, entry)
    })
  add(keyword, 'k')
  add(semantic, 's')
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.k - b.k || a.s - b.s)
    .map(({ item, score }) => ({ ...item, score: Math.round(score * 1e6) / 1e6 }))
}

export const searchLearning = (core: Core, mode: SearchMode, q: string, limit?: number): Promise<SearchResult[]> =>
  mode === 'keyword' ? keywordSearch(core, q, limit) : mode === 'semantic' ? semanticSearch(core, q, limit) : hybridSearch(core, q, limit)

// The question bank's vector index: one LanceDB collection for every question, embedded with the system
// setting's embedding model. The database stays the source of truth; the regenerate job rebuilds this.
// Indexing a question also finds its near-duplicates (embeddings with cosine >= NEAR_DUPLICATE_MIN) and records
// the pairs in quiz.near_duplicates for moderators to look at; nothing is ever merged automatically.
import { embedderFor, type Embedder } from '../../../src/core/embedder'
import type { Core } from '../../../src/plugin'
import { getSystemSettings } from './settings'

export const QUESTIONS_COLLECTION = 'quiz_questions'

/** Two questions whose embeddings are at least this similar (cosine) are recorded as near-duplicates. */
export const NEAR_DUPLICATE_MIN = 0.95
/** Near-duplicates looked for per indexed question (the closest ones). */
export const NEAR_DUPLICATE_NEIGHBOURS = 5

export interface IndexableQuestion {
  id: number
  question_text: string
  options: string[]
}

export interface NearDuplicate {
  /** The other question's id. */
  id: number
  /** Cosine similarity of the two embeddings, NEAR_DUPLICATE_MIN..1. */
  similarity: number
}

/** A question's options as a jsonb column reads: an array of strings (anything else counts as none). */
export const optionsOf = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : [])

/** The text a question is embedded by: its stem and its options. */
export const questionText = (q: IndexableQuestion) => `${q.question_text}\n${q.options.join('\n')}`

export async function quizEmbedder(core: Core): Promise<Embedder> {
  return embedderFor(core.ai, (await getSystemSettings(core)).embedding_model)
}

/**
 * Embeds and upserts questions into the bank's collection, then records their near-duplicates, replacing the pairs
 * they had (an edit may end one). The pairs are written with `core`: on a transaction-bound Core they commit or roll
 * back with the caller's edit.
 */
export async function indexQuestions(core: Core, questions: IndexableQuestion[], embedder?: Embedder): Promise<void> {
  if (questions.length === 0) return
  const e = embedder ?? (await quizEmbedder(core))
  const vectors = await e.embed(questions.map(questionText))
  await core.vectors.upsert(QUESTIONS_COLLECTION, questions.map((q, i) => ({ id: String(q.id), vector: vectors[i]!, text: q.question_text })))
  await recordNearDuplicates(core, questions.map((q) => q.id), vectors)
}

export async function unindexQuestions(core: Core, ids: number[]): Promise<void> {
  await core.vectors.delete(QUESTIONS_COLLECTION, ids.map(String))
}

const isZero = (v: number[]) => v.every((x) => x === 0)

/**
 * Looks up each question's closest neighbours in the collection (itself excluded) and stores every pair at or above
 * NEAR_DUPLICATE_MIN once, as (low_id, high_id). A neighbour that is no longer in the bank (an index not yet rebuilt)
 * is left out. Identical questions have similarity 1.
 */
async function recordNearDuplicates(core: Core, ids: number[], vectors: number[][]): Promise<void> {
  const found = await Promise.all(ids.map((id, i) => {
    const vector = vectors[i]!
    // A text with no words embeds to the zero vector, which has no direction to compare.
    if (isZero(vector)) return []
    return core.vectors.search(QUESTIONS_COLLECTION, vector, { topK: NEAR_DUPLICATE_NEIGHBOURS + 1, minScore: NEAR_DUPLICATE_MIN })
  }))
  const pairs = new Map<string, { low_id: number; high_id: number; similarity: number }>()
  ids.forEach((id, i) => {
    for (const match of found[i]!) {
      const other = Number(match.id)
      if (!Number.isSafeInteger(other) || other === id || !(match.score >= NEAR_DUPLICATE_MIN)) continue
      const [low_id, high_id] = id < other ? [id, other] : [other, id]
      const similarity = Math.min(1, Math.round(match.score * 10_000) / 10_000)
      const key = `${low_id}:${high_id}`
      if ((pairs.get(key)?.similarity ?? -1) < similarity) pairs.set(key, { low_id, high_id, similarity })
    }
  })
  const idList = { value: ids }
  await core.db.transaction(async (tx) => {
    await tx.sql`
      delete from quiz.near_duplicates
      where low_id in (select jsonb_array_elements_text(${idList}::jsonb -> 'value')::int)
         or high_id in (select jsonb_array_elements_text(${idList}::jsonb -> 'value')::int)`
    if (pairs.size === 0) return
    await tx.sql`
      insert into quiz.near_duplicates (low_id, high_id, similarity)
      select p.low_id, p.high_id, p.similarity
      from jsonb_to_recordset(${{ value: [...pairs.values()] }}::jsonb -> 'value') as p(low_id integer, high_id integer, similarity real)
      where exists (select 1 from quiz.questions q where q.id = p.low_id)
        and exists (select 1 from quiz.questions q where q.id = p.high_id)
      on conflict (low_id, high_id) do update set similarity = excluded.similarity`
  })
}

/**
 * The recorded near-duplicates of these questions, for the bank page: every asked id is a key (an empty list when
 * it has none), each pair shows from both sides, most similar first.
 */
export async function nearDuplicatesOf(core: Core, questionIds: number[]): Promise<Map<number, NearDuplicate[]>> {
  const ids = [...new Set(questionIds)]
  const result = new Map<number, NearDuplicate[]>(ids.map((id) => [id, []]))
  if (ids.length === 0) return result
  const idList = { value: ids }
  const rows = await core.db.sql<{ question_id: number; other_id: number; similarity: number }>`
    select low_id as question_id, high_id as other_id, similarity from quiz.near_duplicates
    where low_id in (select jsonb_array_elements_text(${idList}::jsonb -> 'value')::int)
    union all
    select high_id, low_id, similarity from quiz.near_duplicates
    where high_id in (select jsonb_array_elements_text(${idList}::jsonb -> 'value')::int)
    order by question_id, similarity desc, other_id`
  for (const r of rows) result.get(r.question_id)?.push({ id: r.other_id, similarity: Math.round(Number(r.similarity) * 10_000) / 10_000 })
  return result
}

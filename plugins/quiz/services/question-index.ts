// The question bank's vector index: one LanceDB collection for every question, embedded with the system
// setting's embedding model. The database stays the source of truth; the regenerate job rebuilds this.
import { embedderFor, type Embedder } from '../../../src/core/embedder'
import type { Core } from '../../../src/plugin'
import { getSystemSettings } from './settings'

export const QUESTIONS_COLLECTION = 'quiz_questions'

export interface IndexableQuestion {
  id: number
  question_text: string
  options: string[]
}

/** A question's options as a jsonb column reads: an array of strings (anything else counts as none). */
export const optionsOf = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : [])

/** The text a question is embedded by: its stem and its options. */
export const questionText = (q: IndexableQuestion) => `${q.question_text}\n${q.options.join('\n')}`

export async function quizEmbedder(core: Core): Promise<Embedder> {
  return embedderFor(core.ai, (await getSystemSettings(core)).embedding_model)
}

/** Embeds and upserts questions into the bank's collection. */
export async function indexQuestions(core: Core, questions: IndexableQuestion[], embedder?: Embedder): Promise<void> {
  if (questions.length === 0) return
  const e = embedder ?? (await quizEmbedder(core))
  const vectors = await e.embed(questions.map(questionText))
  await core.vectors.upsert(QUESTIONS_COLLECTION, questions.map((q, i) => ({ id: String(q.id), vector: vectors[i]!, text: q.question_text })))
}

export async function unindexQuestions(core: Core, ids: number[]): Promise<void> {
  await core.vectors.delete(QUESTIONS_COLLECTION, ids.map(String))
}

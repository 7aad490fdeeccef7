// Text -> vector. The gateway's embedding model when one is named, otherwise the built-in local embedder:
// offline and deterministic (hashed words, word pairs and character trigrams into a normalised vector), so
// semantic search works with no AI gateway at all, if less well than a real model.
import type { Ai } from './ai'

export interface Embedder {
  /** The model name reported to admins: `local` for the built-in one. */
  readonly model: string
  embed(texts: string[]): Promise<number[][]>
}

export const LOCAL_EMBEDDING_MODEL = 'local'
export const LOCAL_DIMENSIONS = 384

// FNV-1a, 32 bit: fast and stable across runs and platforms.
function hash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

const WORD = /[\p{L}\p{N}]+/gu

/** One text as a unit-length vector of LOCAL_DIMENSIONS; a text with no words gives the zero vector. */
export function localEmbedding(text: string, dimensions = LOCAL_DIMENSIONS): number[] {
  const v = new Float64Array(dimensions)
  const add = (feature: string, weight: number) => {
    const h = hash(feature)
    v[h % dimensions]! += (h & 0x80000000) !== 0 ? -weight : weight // the sign spreads collisions out
  }
  const words = text.toLowerCase().normalize('NFKC').match(WORD) ?? []
  words.forEach((w, i) => {
    add(`w:${w}`, 1)
    if (i > 0) add(`p:${words[i - 1]} ${w}`, 0.5)
    const padded = `#${w}#`
    for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.3)
  })
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  return Array.from(v, (x) => (norm > 0 ? x / norm : 0))
}

export const localEmbedder: Embedder = {
  model: LOCAL_EMBEDDING_MODEL,
  embed: async (texts) => texts.map((t) => localEmbedding(t)),
}

/** The embedder for a model name: `local` (or none) is built in; any other name is the gateway's model. */
export function embedderFor(ai: Ai, model: string | null | undefined): Embedder {
  if (!model || model === LOCAL_EMBEDDING_MODEL) return localEmbedder
  return { model, embed: (texts) => ai.embed({ model }, texts) }
}

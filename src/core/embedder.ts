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

// FNV-1a, 32 bit, over UTF-16 code units: fast and stable across runs and platforms. Features are hashed as the
// strings `w:<word>`, `p:<previous word> <word>` and `c:<trigram of #word#>`, carried on from the hash of the prefix
// rather than built as strings (most of the embedder's time went to building them).
const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
const fnv = (h: number, text: string, from = 0, to = text.length): number => {
  for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME)
  return h
}
const fnvChar = (h: number, code: number) => Math.imul(h ^ code, FNV_PRIME)
const WORD_PREFIX = fnv(FNV_OFFSET, 'w:')
const PAIR_PREFIX = fnv(FNV_OFFSET, 'p:')
const TRIGRAM_PREFIX = fnv(FNV_OFFSET, 'c:')
const SPACE = 0x20
const EDGE = 0x23 // '#', around each word for its trigrams

const WORD = /[\p{L}\p{N}]+/gu

/** One text as a unit-length vector of LOCAL_DIMENSIONS; a text with no words gives the zero vector. */
export function localEmbedding(text: string, dimensions = LOCAL_DIMENSIONS): number[] {
  const v = new Float64Array(dimensions)
  const add = (hash: number, weight: number) => {
    const h = hash >>> 0
    v[h % dimensions]! += (h & 0x80000000) !== 0 ? -weight : weight // the sign spreads collisions out
  }
  const words = text.toLowerCase().normalize('NFKC').match(WORD) ?? []
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    add(fnv(WORD_PREFIX, w), 1)
    if (i > 0) add(fnv(fnvChar(fnv(PAIR_PREFIX, words[i - 1]!), SPACE), w), 0.5)
    // The trigrams of `#w#`: code units -1 and w.length stand for the two edges.
    for (let j = -1; j + 2 <= w.length; j++) {
      let h = TRIGRAM_PREFIX
      for (let k = j; k < j + 3; k++) h = fnvChar(h, k < 0 || k >= w.length ? EDGE : w.charCodeAt(k))
      add(h, 0.3)
    }
  }
  let norm = 0
  for (let i = 0; i < dimensions; i++) norm += v[i]! * v[i]!
  norm = Math.sqrt(norm)
  const out = new Array<number>(dimensions)
  for (let i = 0; i < dimensions; i++) out[i] = norm > 0 ? v[i]! / norm : 0
  return out
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

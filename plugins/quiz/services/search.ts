// Spec 1, Quizzes: the quiz search, hybrid semantic plus keyword matching over the titles and the questions of the
// quizzes the caller may see (out of the trash; published for a regular user). A keyword match is a case-insensitive
// substring (trigram indexes serve both); a semantic match has a cosine similarity of at least 0.30. Titles are
// embedded on the fly (cached), questions are looked up in the bank's vector index.
import type { Embedder } from '../../../src/core/embedder'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import {
  KEYWORD_SCORE, MATCHING_QUESTIONS_MAX, SEARCH_MIN_SCORE, SEARCH_QUESTION_CANDIDATES, SEARCH_RESULTS_MAX, SEARCH_TITLE_CANDIDATES,
  type MatchType, type QuizSearchResult, type SearchScope,
} from '../models/search'
import { hasRole } from './accounts'
import { embedQuery, idSet, substringPattern, visibleQuiz, withPatternPlans, type Caller } from './bank'
import { QUESTIONS_COLLECTION, quizEmbedder } from './question-index'

/** Title vectors by embedding model and title: titles change rarely, and a search compares many of them. */
const TITLE_CACHE_MAX = 10_000
const titleVectors = new Map<string, number[]>()

async function titleEmbeddings(embedder: Embedder, titles: string[]): Promise<number[][]> {
  const key = (title: string) => `${embedder.model}\u0000${title}`
  const missing = [...new Set(titles.filter((title) => !titleVectors.has(key(title))))]
  if (missing.length > 0) {
    const vectors = await embedder.embed(missing)
    missing.forEach((title, i) => titleVectors.set(key(title), vectors[i]!))
    // Oldest entries out first (a Map keeps insertion order).
    for (const k of titleVectors.keys()) {
      if (titleVectors.size <= TITLE_CACHE_MAX) break
      titleVectors.delete(k)
    }
  }
  return titles.map((title) => titleVectors.get(key(title)) ?? [])
}

function cosine(a: number[], b: number[]): number {
  if (a.length === 0 || a.length !== b.length) return 0
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0
}

interface Hit {
  quizId: number
  title: string
  titleScore: number
  questions: Map<number, { text: string; score: number }>
}

/**
 * GET /api/quizzes/search. Each quiz's score is its best match: a keyword match counts KEYWORD_SCORE, a semantic
 * one its similarity. Results are ordered by that score, then the newest quiz first; at most SEARCH_RESULTS_MAX.
 */
export async function searchQuizzes(core: Core, caller: Caller, text: string, scope: SearchScope): Promise<QuizSearchResult[]> {
  const q = text.trim()
  const moderator = hasRole(caller, 'moderator')
  const pattern = substringPattern(q)
  const vector = await embedQuery(core, q)
  const hits = new Map<number, Hit>()
  const hit = (quizId: number, title: string) => {
    let h = hits.get(quizId)
    if (!h) hits.set(quizId, (h = { quizId, title, titleScore: 0, questions: new Map() }))
    return h
  }

  if (scope !== 'questions') {
    const keyword = await withPatternPlans(core, (tx) => tx.db.sql<{ id: number; title: string }>`
      select z.id, z.title from quiz.quizzes z where ${visibleQuiz(moderator)} and z.title ilike ${pattern}`)
    for (const z of keyword) hit(z.id, z.title).titleScore = KEYWORD_SCORE
    const recent = await core.db.sql<{ id: number; title: string }>`
      select z.id, z.title from quiz.quizzes z where ${visibleQuiz(moderator)}
      order by z.created_at desc, z.id desc limit ${SEARCH_TITLE_CANDIDATES}`
    let vectors: number[][]
    try {
      vectors = await titleEmbeddings(await quizEmbedder(core), recent.map((z) => z.title))
    } catch (err) {
      if (err instanceof HttpError) throw err
      throw HttpError.upstream('embedding_unavailable', err, 'Semantic search is unavailable: the embedding model could not be reached')
    }
    recent.forEach((z, i) => {
      const score = cosine(vector, vectors[i]!)
      if (score >= SEARCH_MIN_SCORE) {
        const h = hit(z.id, z.title)
        h.titleScore = Math.max(h.titleScore, score)
      }
    })
  }

  if (scope !== 'title') {
    const add = (r: { quiz_id: number; title: string; id: number; question_text: string }, score: number) => {
      const questions = hit(r.quiz_id, r.title).questions
      const seen = questions.get(r.id)
      if (!seen || seen.score < score) questions.set(r.id, { text: r.question_text, score })
    }
    // Keyword: a few matching questions per quiz is all a result shows.
    const keyword = await withPatternPlans(core, (tx) => tx.db.sql<{ quiz_id: number; title: string; id: number; question_text: string }>`
      select m.quiz_id, m.title, m.id, m.question_text from (
        select qq.quiz_id, z.title, q.id, q.question_text, row_number() over (partition by qq.quiz_id order by q.id) as n
        from quiz.questions q
        join quiz.quiz_questions qq on qq.question_id = q.id
        join quiz.quizzes z on z.id = qq.quiz_id
        where q.question_text ilike ${pattern} and ${visibleQuiz(moderator)}
      ) m where m.n <= ${MATCHING_QUESTIONS_MAX}`)
    for (const r of keyword) add(r, KEYWORD_SCORE)
    const matches = await core.vectors.search(QUESTIONS_COLLECTION, vector, { topK: SEARCH_QUESTION_CANDIDATES, minScore: SEARCH_MIN_SCORE })
    const score = new Map<number, number>()
    for (const m of matches) {
      const id = Number(m.id)
      if (Number.isSafeInteger(id) && !score.has(id)) score.set(id, m.score)
    }
    if (score.size > 0) {
      const semantic = await core.db.sql<{ quiz_id: number; title: string; id: number; question_text: string }>`
        select qq.quiz_id, z.title, q.id, q.question_text
        from quiz.questions q
        join quiz.quiz_questions qq on qq.question_id = q.id
        join quiz.quizzes z on z.id = qq.quiz_id
        where q.id in ${idSet([...score.keys()])} and ${visibleQuiz(moderator)}`
      for (const r of semantic) add(r, score.get(r.id)!)
    }
  }

  const results = [...hits.values()].map((h) => {
    const questions = [...h.questions.entries()].sort(([ia, a], [ib, b]) => b.score - a.score || ia - ib)
    const questionScore = questions[0]?.[1].score ?? 0
    const matchType: MatchType = h.titleScore > 0 && questions.length > 0 ? 'title_and_question' : h.titleScore > 0 ? 'title' : 'question'
    return {
      score: Math.max(h.titleScore, questionScore),
      result: {
        quiz_id: h.quizId,
        quiz_title: h.title,
        match_type: matchType,
        matching_questions: questions.slice(0, MATCHING_QUESTIONS_MAX).map(([id, m]) => ({ id, question_text: m.text })),
      },
    }
  })
  results.sort((a, b) => b.score - a.score || b.result.quiz_id - a.result.quiz_id)
  return results.slice(0, SEARCH_RESULTS_MAX).map((r) => r.result)
}

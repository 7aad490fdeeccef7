// Spec 1, Questions: the shared question bank. Listing with filters (every filter ANDed) and keyword, semantic or
// hybrid matching, the ids of every match, a question's category (one or many at once), and a quiz built from bank
// questions. Every caller may read the whole bank (the listing is role User); what a regular user may not see is
// the quizzes that are not published: they name no source quiz and cannot be used as the quiz filter.
import { fragment, joinFragments, type Fragment } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import { INT4_MAX } from '../../../src/core/schema'
import type { Core } from '../../../src/plugin'
import type { Role } from '../models/accounts'
import {
  BANK_SEMANTIC_CANDIDATES, BANK_SEMANTIC_CANDIDATES_MIN, BANK_SEMANTIC_MIN_SCORE, ID_LIST_MAX, type BankPage, type BankQuestion, type BankTag, type SearchMode,
} from '../models/bank'
import { hasRole } from './accounts'
import { optionsOf, QUESTIONS_COLLECTION, quizEmbedder } from './question-index'
import { createQuizFromQuestions } from './quizzes'

export interface Caller { id: number; role: Role }

export interface BankFilters {
  /** Trimmed; null or '' means no text filter. */
  q: string | null
  quizId: number | null
  categoryId: number | null
  /** Any of these categories (OR). */
  categoryIds: number[] | null
  uncategorized: boolean
  favoritesOnly: boolean
  /** Every one of these tags (AND). */
  tagIds: number[] | null
  /** Only these questions (the bank page's link to one question; not an API filter). */
  questionIds?: number[] | null
}

export const NO_FILTERS: BankFilters = {
  q: null, quizId: null, categoryId: null, categoryIds: null, uncategorized: false, favoritesOnly: false, tagIds: null,
}

const ID_ITEM = /^\d{1,10}$/

/**
 * A comma-separated id list (`3, 7`): the distinct ids, [] for a blank value, null when malformed (an item that is
 * not a whole number from 1 to INT4_MAX, an empty item, or more than ID_LIST_MAX items).
 */
export function parseIdList(value: string | undefined | null): number[] | null {
  if (value == null || value.trim() === '') return []
  const items = value.split(',').map((s) => s.trim())
  if (items.length > ID_LIST_MAX) return null
  const ids: number[] = []
  for (const item of items) {
    if (!ID_ITEM.test(item)) return null
    const id = Number(item)
    if (id < 1 || id > INT4_MAX) return null
    ids.push(id)
  }
  return [...new Set(ids)]
}

const isModerator = (caller: Caller) => hasRole(caller, 'moderator')

/** A quiz the caller may see: out of the trash, and published for a regular user. */
export const visibleQuiz = (moderator: boolean) => fragment`z.deleted_at is null and (${moderator}::boolean or z.is_published)`

/** An int list as a subquery (one jsonb parameter: the same on both drivers). */
export const idSet = (ids: number[]) => fragment`(select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int)`

/**
 * Runs `fn` (substring searches) with plans made for each query's own pattern. On PostgreSQL a prepared statement
 * is planned for any parameter value after a few runs (a generic plan), and for `ilike $1` such a plan cannot know
 * that the pattern is selective: it walks the primary key instead of the trigram index, 150 ms instead of 5 at
 * 100,000 questions (scripts/bench/bank-search.ts). One transaction for `set local`.
 */
export const withPatternPlans = <T>(core: Core, fn: (tx: Core) => Promise<T>): Promise<T> =>
  core.transaction(async (tx) => {
    await tx.db.sql`set local plan_cache_mode = force_custom_plan`
    return fn(tx)
  })

/** ILIKE's pattern for a substring: `%`, `_` and `\` in the text match themselves. */
export const substringPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const hasText = (f: BankFilters) => (f.q ?? '').trim() !== ''

async function checkQuizVisible(core: Core, caller: Caller, quizId: number) {
  const [row] = await core.db.sql`select z.id from quiz.quizzes z where z.id = ${quizId} and ${visibleQuiz(isModerator(caller))}`
  if (!row) throw HttpError.notFound('quiz_not_found', 'Quiz not found')
}

/** The SQL conditions of the filters on `quiz.questions q`, text matching left out. */
function filterWhere(caller: Caller, f: BankFilters): Fragment {
  const parts: Fragment[] = []
  if (f.quizId != null) parts.push(fragment`exists (select 1 from quiz.quiz_questions fq where fq.quiz_id = ${f.quizId} and fq.question_id = q.id)`)
  if (f.categoryId != null) parts.push(fragment`q.question_category_id = ${f.categoryId}`)
  if (f.categoryIds && f.categoryIds.length > 0) parts.push(fragment`q.question_category_id in ${idSet(f.categoryIds)}`)
  if (f.uncategorized) parts.push(fragment`q.question_category_id is null`)
  if (f.favoritesOnly) parts.push(fragment`exists (select 1 from quiz.favorites fv where fv.user_id = ${caller.id} and fv.question_id = q.id)`)
  if (f.tagIds && f.tagIds.length > 0) {
    const tags = [...new Set(f.tagIds)]
    parts.push(fragment`q.id in (select qt.question_id from quiz.question_tags qt where qt.tag_id in ${idSet(tags)}
      group by qt.question_id having count(*) = ${tags.length})`)
  }
  if (f.questionIds) parts.push(fragment`q.id in ${idSet(f.questionIds)}`)
  return joinFragments(parts, 'and')
}

/** Case-insensitive substring on the question text; the trigram index quiz.questions_text_trgm serves it. */
const keywordWhere = (q: string) => fragment`q.question_text ilike ${substringPattern(q)}`

export async function embedQuery(core: Core, text: string): Promise<number[]> {
  const embedder = await quizEmbedder(core)
  try {
    const [vector] = await embedder.embed([text])
    return vector ?? []
  } catch (err) {
    if (err instanceof HttpError) throw err
    throw HttpError.upstream('embedding_unavailable', err, 'Semantic search is unavailable: the embedding model could not be reached')
  }
}

/**
 * The nearest bank questions to the text, with their similarity (at least 0.55), among the first `candidates`:
 * the embedding and the vector search, which need no database connection held.
 */
async function nearestScores(core: Core, q: string, candidates: number): Promise<Map<number, number>> {
  const vector = await embedQuery(core, q)
  const topK = Math.min(BANK_SEMANTIC_CANDIDATES, Math.max(BANK_SEMANTIC_CANDIDATES_MIN, candidates))
  const matches = await core.vectors.search(QUESTIONS_COLLECTION, vector, { topK, minScore: BANK_SEMANTIC_MIN_SCORE })
  const score = new Map<number, number>()
  for (const m of matches) {
    const id = Number(m.id)
    if (Number.isSafeInteger(id) && !score.has(id)) score.set(id, m.score)
  }
  return score
}

/**
 * Where a search starts: the quiz filter's quiz must be one the caller may see (404 first), then the semantic
 * candidates when the mode wants them (null otherwise).
 */
async function searchStart(core: Core, caller: Caller, f: BankFilters, mode: SearchMode, candidates: number): Promise<Map<number, number> | null> {
  if (f.quizId != null) await checkQuizVisible(core, caller, f.quizId)
  return hasText(f) && mode !== 'keyword' ? nearestScores(core, f.q!.trim(), candidates) : null
}

/** Ids of the semantic matches under the filters, best first (similarity desc, then id desc). */
async function semanticIds(core: Core, caller: Caller, f: BankFilters, score: Map<number, number>): Promise<number[]> {
  if (score.size === 0) return []
  const rows = await core.db.sql<{ id: number }>`
    select q.id from quiz.questions q where q.id in ${idSet([...score.keys()])} and ${filterWhere(caller, f)}`
  return rows.map((r) => r.id).sort((a, b) => score.get(b)! - score.get(a)! || b - a)
}

/**
 * The ranked part of a search: the semantic matches (ordered), and the SQL condition of the rest (ordered by id
 * desc): the keyword matches not already listed, or every filtered question when there is no text; null for none.
 */
async function plan(core: Core, caller: Caller, f: BankFilters, mode: SearchMode, scores: Map<number, number> | null): Promise<{ ranked: number[]; rest: Fragment | null }> {
  const where = filterWhere(caller, f)
  if (!hasText(f)) return { ranked: [], rest: where }
  const q = f.q!.trim()
  const ranked = scores ? await semanticIds(core, caller, f, scores) : []
  if (mode === 'semantic') return { ranked, rest: null }
  const notRanked = ranked.length > 0 ? fragment`and q.id not in ${idSet(ranked)}` : fragment``
  return { ranked, rest: fragment`${where} and ${keywordWhere(q)} ${notRanked}` }
}

/**
 * The bank's question rows of `ids` (any order): also the SQL of the bare baseline in scripts/bench/bare-server.ts.
 * Set-based: each question's tags and source quiz are gathered for the whole page in one pass each, not in a subplan
 * run per row, and the tags are built as `json` (no binary jsonb made only to be printed): about 30% less database
 * time for a page of 50 on PostgreSQL and on PGlite (scripts/bench/README.md, "The bank page's rows").
 */
export const QUESTION_ROWS = (moderator: boolean, ids: number[]) => fragment`
  with ids(id) as ${idSet(ids)},
  tag_lists as (
    select qt.question_id, json_agg(json_build_object('id', t.id, 'name', t.name, 'kind', t.kind) order by t.kind, lower(t.name), t.id) as tags
    from quiz.question_tags qt join quiz.tags t on t.id = qt.tag_id
    where qt.question_id in (select id from ids)
    group by qt.question_id),
  sources as (
    -- A question's source quiz when it is visible, else the first visible quiz that holds it.
    select distinct on (cand.question_id) cand.question_id, z.id, z.title
    from (select q.id as question_id, q.source_quiz_id as quiz_id, 0 as rank from quiz.questions q where q.id in (select id from ids)
          union all
          select zq.question_id, zq.quiz_id, 1 from quiz.quiz_questions zq where zq.question_id in (select id from ids)) cand
    join quiz.quizzes z on z.id = cand.quiz_id
    where ${visibleQuiz(moderator)}
    order by cand.question_id, cand.rank, z.id)
  select q.id, src.id as quiz_id, src.title as quiz_title, q.question_category_id, c.name as question_category_name,
    q.question_text, q.question_type, q.options, q.correct_answer, q.explanation, q.image_path,
    coalesce(tl.tags, '[]'::json) as tags
  from quiz.questions q
  left join quiz.question_categories c on c.id = q.question_category_id
  left join sources src on src.question_id = q.id
  left join tag_lists tl on tl.question_id = q.id
  where q.id in (select id from ids)`

/** Full question objects, in the order of `ids`. */
export async function bankQuestions(core: Core, caller: Caller, ids: number[]): Promise<BankQuestion[]> {
  if (ids.length === 0) return []
  const rows = await core.db.sql<BankQuestion>`${QUESTION_ROWS(isModerator(caller), ids)}`
  // The rows are this query's own: each is completed in place rather than copied (50 copies of 12 fields a page).
  const byId = new Map<number, BankQuestion>()
  for (const r of rows) {
    r.options = optionsOf(r.options)
    r.tags = (r.tags ?? []) as BankTag[]
    byId.set(r.id, r)
  }
  return ids.map((id) => byId.get(id)).filter((r): r is BankQuestion => r !== undefined)
}

/**
 * GET /api/questions/bank. Without text: newest first (id desc). keyword: substring matches, id desc. semantic:
 * matches of similarity >= 0.55 among the nearest max(100, offset + limit) (at most 1000), best first. hybrid: the semantic
 * matches first, then the keyword matches not already listed (id desc). `total` counts that whole list.
 */
export async function listBank(core: Core, caller: Caller, f: BankFilters, mode: SearchMode, limit: number, offset: number): Promise<BankPage> {
  const scores = await searchStart(core, caller, f, mode, offset + limit)
  // Without text there is no pattern to plan for: the page needs no transaction (begin, set local, commit).
  if (!hasText(f)) return listBankIn(core, caller, f, mode, scores, limit, offset)
  return withPatternPlans(core, (tx) => listBankIn(tx, caller, f, mode, scores, limit, offset))
}

async function listBankIn(
  core: Core, caller: Caller, f: BankFilters, mode: SearchMode, scores: Map<number, number> | null, limit: number, offset: number,
): Promise<BankPage> {
  const { ranked, rest } = await plan(core, caller, f, mode, scores)
  const ids = ranked.slice(offset, offset + limit)
  let restTotal = 0
  if (rest) {
    // The page's rows and the count of every match in one scan (a window over the whole match, before the limit);
    // a page past the end has no row to carry the count, so it is counted on its own (from the start, none is none).
    const restOffset = Math.max(0, offset - ranked.length)
    const more = await core.db.sql<{ id: number; total: number }>`
      select q.id, count(*) over ()::int as total from quiz.questions q where ${rest}
      order by q.id desc limit ${Math.max(1, limit - ids.length)} offset ${restOffset}`
    if (more.length > 0) restTotal = more[0]!.total
    else if (restOffset > 0) {
      const [row] = await core.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions q where ${rest}`
      restTotal = row?.n ?? 0
    }
    if (ids.length < limit) ids.push(...more.map((r) => r.id))
  }
  return { total: ranked.length + restTotal, questions: await bankQuestions(core, caller, ids) }
}

/** GET /api/questions/bank/ids: every match in the listing's order; text is matched in hybrid mode. */
export async function bankIds(core: Core, caller: Caller, f: BankFilters): Promise<number[]> {
  const scores = await searchStart(core, caller, f, 'hybrid', BANK_SEMANTIC_CANDIDATES)
  return withPatternPlans(core, async (tx) => {
    const { ranked, rest } = await plan(tx, caller, f, 'hybrid', scores)
    if (!rest) return ranked
    const more = await tx.db.sql<{ id: number }>`select q.id from quiz.questions q where ${rest} order by q.id desc`
    return [...ranked, ...more.map((r) => r.id)]
  })
}

async function checkCategory(core: Core, categoryId: number | null) {
  if (categoryId === null) return
  const [row] = await core.db.sql`select id from quiz.question_categories where id = ${categoryId}`
  if (!row) throw HttpError.notFound('category_not_found', 'Question category not found')
}

/** PATCH /api/questions/{id}/category: null removes the category. 404 unknown question or category. */
export async function setQuestionCategory(core: Core, questionId: number, categoryId: number | null) {
  await checkCategory(core, categoryId)
  const [row] = await core.db.sql<{ id: number }>`
    update quiz.questions set question_category_id = ${categoryId}, updated_at = now() where id = ${questionId} returning id`
  if (!row) throw HttpError.notFound('question_not_found', 'Question not found')
  return { question_id: questionId, question_category_id: categoryId }
}

/** POST /api/questions/bulk-category: ids not in the bank are skipped; `updated` counts the ones that are. 404 unknown category. */
export async function setCategoryOfMany(core: Core, questionIds: number[], categoryId: number | null) {
  await checkCategory(core, categoryId)
  const ids = [...new Set(questionIds)]
  const rows = await core.db.sql<{ id: number }>`
    update quiz.questions set question_category_id = ${categoryId}, updated_at = now() where id in ${idSet(ids)} returning id`
  return { updated: rows.length, question_category_id: categoryId }
}

/** POST /api/questions/from-bank: a new, unpublished quiz that references the questions in the given order. */
export function quizFromBank(core: Core, userId: number, input: { title: string; question_ids: number[]; mode: 'timed' | 'learning'; time_limit_minutes?: number | null }) {
  return createQuizFromQuestions(core, userId, {
    title: input.title, mode: input.mode, time_limit_minutes: input.time_limit_minutes ?? null, questionIds: input.question_ids,
  })
}

/** The tags a bank filter offers, by kind then name. */
export function listTags(core: Core): Promise<BankTag[]> {
  return core.db.sql<BankTag>`select id, name, kind from quiz.tags order by kind, lower(name), id`
}

/** For moderators: each question's near duplicates (both directions of quiz.near_duplicates), most similar first. */
export async function nearDuplicates(core: Core, ids: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>()
  if (ids.length === 0) return out
  const rows = await core.db.sql<{ id: number; other: number }>`
    select d.low_id as id, d.high_id as other, d.similarity from quiz.near_duplicates d where d.low_id in ${idSet(ids)}
    union all
    select d.high_id, d.low_id, d.similarity from quiz.near_duplicates d where d.high_id in ${idSet(ids)}
    order by similarity desc, other`
  for (const r of rows) out.set(r.id, [...(out.get(r.id) ?? []), r.other])
  return out
}

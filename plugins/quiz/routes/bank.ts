// Spec 1, Questions: the shared question bank, the JSON API. Routing, guards, validation and response shaping only;
// the rules are in services/bank.ts.
import { Elysia, t } from 'elysia'
import { errorBody } from '../../../src/core/errors'
import { INT4_MAX, Int } from '../../../src/core/schema'
import {
  BANK_LIMIT_DEFAULT, BANK_LIMIT_MAX, BANK_SEMANTIC_CANDIDATES, BANK_SEMANTIC_CANDIDATES_MIN, BANK_SEMANTIC_MIN_SCORE, BankIdsQuery, BankPage, BankQuery,
  BULK_CATEGORY_MAX, BulkCategoryBody, BulkCategoryResponse, CategoryQuery, FROM_BANK_MAX, FromBankBody, FromBankResponse,
  QueryProblem, QuestionCategoryResponse, QuestionParams,
} from '../models/bank'
import * as bank from '../services/bank'
import type { QuizState } from '../state'

const tags = ['Questions']

/** The body of a 422 naming a query parameter, in the same shape as the validator's own answers. */
export const queryProblem = (field: string, message: string) =>
  errorBody('quiz', 422, 'invalid_input', `${field}: ${message}`, [{ location: 'query', field, message }]) as QueryProblem

const ID_LIST_PROBLEM = `must be comma-separated whole numbers from 1 to ${INT4_MAX}`

/** The filters of a bank query, or the 422 body of a malformed id list. */
function filtersOf(query: typeof BankIdsQuery.static): { filters: bank.BankFilters } | { problem: QueryProblem } {
  const categoryIds = bank.parseIdList(query.category_ids)
  if (categoryIds === null) return { problem: queryProblem('category_ids', ID_LIST_PROBLEM) }
  const tagIds = bank.parseIdList(query.tag_ids)
  if (tagIds === null) return { problem: queryProblem('tag_ids', ID_LIST_PROBLEM) }
  return { filters: {
    q: query.q?.trim() || null,
    quizId: query.quiz_id ?? null,
    categoryId: query.category_id ?? null,
    categoryIds,
    uncategorized: query.uncategorized ?? false,
    favoritesOnly: query.favorites_only ?? false,
    tagIds,
  } }
}

const FILTERS = [
  'Every filter given narrows the list (they combine with AND): `q` (see below), `quiz_id` (questions referenced by that',
  'quiz; 404 when it is unknown, in the trash, or, for a regular user, not published), `category_id`, `category_ids` (in any',
  'of them), `uncategorized`, `favorites_only` (the caller\'s favorites) and `tag_ids` (the question has every one of these',
  'tags). An unknown category or tag id simply matches nothing. Booleans are `true` or `false`. A malformed id list is',
  'refused with 422 naming the parameter. Every user may read the whole bank; only moderators see quizzes that are not',
  'published as a question\'s source quiz.',
].join(' ')

const MATCHING = [
  `Text matching: \`keyword\` is a case-insensitive substring of the question text (\`%\`, \`_\` and \`\\\` match themselves);`,
  `\`semantic\` compares the embedding of \`q\` with each question's (text and options) and keeps a cosine similarity of at`,
  `least ${BANK_SEMANTIC_MIN_SCORE}, among the nearest questions in the index (offset + limit of them, at least ${BANK_SEMANTIC_CANDIDATES_MIN}, at most ${BANK_SEMANTIC_CANDIDATES}; bank/ids looks at ${BANK_SEMANTIC_CANDIDATES}), so \`total\` counts the semantic matches among those; \`hybrid\` lists the semantic`,
  'matches first, then the keyword matches not already listed (no question twice). 502 when semantic matching is asked',
  'for and the embedding model cannot be reached.',
].join(' ')

export const bankRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/questions' })
    .use(auth)
    .get('/bank', async ({ user, query, status }) => {
      const parsed = filtersOf(query)
      if ('problem' in parsed) return status(422, parsed.problem)
      return bank.listBank(core, user, parsed.filters, query.search_mode ?? 'hybrid', query.limit ?? BANK_LIMIT_DEFAULT, query.offset ?? 0)
    }, {
      role: 'user', query: BankQuery, response: { 200: BankPage, 422: QueryProblem },
      detail: {
        tags, summary: 'List and search the question bank',
        description: [
          `One page (\`limit\` 1 to ${BANK_LIMIT_MAX}, default ${BANK_LIMIT_DEFAULT}; \`offset\` default 0) of bank questions and the \`total\``,
          'of matches under the same filters. Each question carries its source quiz, its question category and its `tags`',
          '(`[{id, name, kind}]`, kind `subject`, `disease` or `keyword`).',
          FILTERS,
          'Order: without `q`, newest first (id descending). With `q` and `search_mode` `keyword`: id descending. `semantic`:',
          'most similar first (ties: id descending). `hybrid` (the default): the semantic matches most similar first, then',
          'the remaining keyword matches by id descending; `total` counts both groups.',
          MATCHING,
        ].join(' '),
      },
    })
    .get('/bank/ids', async ({ user, query, status }) => {
      const parsed = filtersOf(query)
      if ('problem' in parsed) return status(422, parsed.problem)
      return bank.bankIds(core, user, parsed.filters)
    }, {
      role: 'user', query: BankIdsQuery, response: { 200: t.Array(Int()), 422: QueryProblem },
      detail: {
        tags, summary: 'Ids of every matching bank question',
        description: [
          `The ids of all matches of GET ${api}/questions/bank with the same filters, unpaged, in the listing's order (for`,
          '"select all" before a bulk action). `q` is matched as in `hybrid` mode.',
          FILTERS,
          MATCHING,
        ].join(' '),
      },
    })
    .patch('/:question_id/category', async ({ params, query, status }) => {
      const raw = query.category_id?.trim() ?? ''
      let categoryId: number | null = null
      if (raw !== '' && raw !== 'null') {
        const [id] = bank.parseIdList(raw) ?? []
        if (id === undefined || raw.includes(',')) return status(422, queryProblem('category_id', `must be a question category id from 1 to ${INT4_MAX}, or null`))
        categoryId = id
      }
      return bank.setQuestionCategory(core, params.question_id, categoryId)
    }, {
      role: 'moderator', params: QuestionParams, query: CategoryQuery, response: { 200: QuestionCategoryResponse, 422: QueryProblem },
      detail: {
        tags, summary: 'Set or remove a question\'s category',
        description: [
          'Puts the bank question in the question category `category_id`; `category_id=null` (or empty, or absent) leaves it',
          'uncategorized. The question is shared, so every quiz that references it shows the change. 404 when the question or',
          'the category does not exist; 422 when `category_id` is neither an id nor null.',
        ].join(' '),
      },
    })
    .post('/from-bank', ({ user, body }) => bank.quizFromBank(core, user.id, body), {
      role: 'moderator', body: FromBankBody, response: { 200: FromBankResponse },
      detail: {
        tags, summary: 'Make a quiz from bank questions',
        description: [
          `A new quiz that references the questions (1 to ${FROM_BANK_MAX} ids) in the order given; nothing is copied, so an`,
          'edit of a question shows in every quiz that uses it. A repeated id counts once. The quiz starts unpublished, with',
          `no section, owned by the caller; publish it with PATCH ${api}/quizzes/{quiz_id}/publish. 404 naming the ids that are`,
          'not in the bank (no quiz is made); 422 for a blank title.',
        ].join(' '),
      },
    })
    .post('/bulk-category', ({ body }) => bank.setCategoryOfMany(core, body.question_ids, body.category_id), {
      role: 'moderator', body: BulkCategoryBody, response: { 200: BulkCategoryResponse },
      detail: {
        tags, summary: 'Set or remove the category of many questions',
        description: [
          `Puts every listed question (1 to ${BULK_CATEGORY_MAX} ids) in the question category \`category_id\`, or leaves them`,
          'uncategorized when it is null (the field is required). Ids that are not in the bank are skipped: `updated` counts the',
          'questions that exist, whether or not their category was already that one. 404 when the category does not exist',
          '(nothing changes).',
        ].join(' '),
      },
    })
}

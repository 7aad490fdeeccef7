// TypeBox models of spec 1's Questions area: the shared question bank's listing and its filters, a question's
// category (one or many at once), and a quiz built from bank questions. The OpenAPI docs come from them.
import { t } from 'elysia'
import { INT4_MAX, Int, RowId } from '../../../src/core/schema'
import { QuizMode, TIME_LIMIT_MAX_MINUTES, TITLE_MAX } from './extraction'

export const BANK_LIMIT_DEFAULT = 50 // spec 1, limits: question bank page default
export const BANK_LIMIT_MAX = 200 // spec 1, limits: question bank page maximum
export const BANK_QUERY_MAX = 1_000
/** spec 1, Questions: semantic matches have a cosine similarity of at least 0.55. */
export const BANK_SEMANTIC_MIN_SCORE = 0.55
/**
 * The nearest questions the vector index is asked for (the filters then apply to these): offset + limit of the page,
 * at least BANK_SEMANTIC_CANDIDATES_MIN and at most BANK_SEMANTIC_CANDIDATES (also what bank/ids asks for). A page
 * near the top asks for few, which keeps the index walk short (100 candidates: about 10 ms at 100,000 questions).
 */
export const BANK_SEMANTIC_CANDIDATES = 1_000
export const BANK_SEMANTIC_CANDIDATES_MIN = 100
/** Ids in one comma-separated filter (category_ids, tag_ids). */
export const ID_LIST_MAX = 100
export const FROM_BANK_MAX = 500
export const BULK_CATEGORY_MAX = 5_000

export const SearchMode = t.Union([t.Literal('keyword'), t.Literal('semantic'), t.Literal('hybrid')], {
  description: '`keyword`, `semantic` or `hybrid` (default)',
})
export type SearchMode = typeof SearchMode.static

const idList = (what: string) => t.String({
  maxLength: ID_LIST_MAX * 11,
  description: `Comma-separated ${what} ids (whole numbers from 1 to ${INT4_MAX}, at most ${ID_LIST_MAX}), e.g. \`3,7\`; empty means no filter. Anything else is refused (422 naming the field).`,
})

const filterFields = {
  q: t.Optional(t.String({ maxLength: BANK_QUERY_MAX, description: 'Text to look for; trimmed, and blank means no text filter' })),
  quiz_id: t.Optional(RowId('Only questions referenced by this quiz (404 when the caller may not see the quiz)')),
  category_id: t.Optional(RowId('Only questions in this question category')),
  category_ids: t.Optional(idList('question category')),
  uncategorized: t.Optional(t.Boolean({ default: false, description: 'Only questions without a question category' })),
  favorites_only: t.Optional(t.Boolean({ default: false, description: 'Only the caller\'s favorite questions' })),
  tag_ids: t.Optional(idList('tag')),
}

export const BankIdsQuery = t.Object(filterFields)
export const BankQuery = t.Object({
  ...filterFields,
  search_mode: t.Optional(SearchMode),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: BANK_LIMIT_MAX, default: BANK_LIMIT_DEFAULT, description: `Page size, 1 to ${BANK_LIMIT_MAX} (default ${BANK_LIMIT_DEFAULT})` })),
  offset: t.Optional(t.Integer({ minimum: 0, maximum: INT4_MAX, default: 0, description: 'Matches skipped before the page (default 0)' })),
})
export type BankQuery = typeof BankQuery.static

export const TagKind = t.Union([t.Literal('subject'), t.Literal('disease'), t.Literal('keyword')])
export const BankTag = t.Object({ id: Int(), name: t.String(), kind: TagKind })
export type BankTag = typeof BankTag.static

export const BankQuestion = t.Object({
  id: Int(),
  quiz_id: t.Nullable(Int({
    description: 'The source quiz: the quiz the question was extracted for, or else the oldest quiz that references it; only a quiz the caller may see (out of the trash, and published for regular users); null when there is none',
  })),
  quiz_title: t.Nullable(t.String({ description: 'The title of that quiz' })),
  question_category_id: t.Nullable(Int()),
  question_category_name: t.Nullable(t.String()),
  question_text: t.String(),
  question_type: t.String(),
  options: t.Array(t.String()),
  correct_answer: t.String({ description: 'Equals one of the options' }),
  explanation: t.String(),
  image_path: t.Nullable(t.String()),
  tags: t.Array(BankTag, { description: 'The question\'s tags, by kind then name' }),
}, { title: 'BankQuestion' })
export type BankQuestion = typeof BankQuestion.static

export const BankPage = t.Object({
  total: Int({ description: 'Every match under the same filters, across all pages' }),
  questions: t.Array(BankQuestion),
})
export type BankPage = typeof BankPage.static

export const QuestionParams = t.Object({ question_id: RowId() })
export const CategoryQuery = t.Object({
  category_id: t.Optional(t.String({
    maxLength: 20,
    description: `A question category id (1 to ${INT4_MAX}); \`null\`, empty or absent removes the question's category`,
  })),
})
export const QuestionCategoryResponse = t.Object({ question_id: Int(), question_category_id: t.Nullable(Int()) })

export const FromBankBody = t.Object({
  title: t.String({ minLength: 1, maxLength: TITLE_MAX, description: 'Trimmed; must not be blank' }),
  question_ids: t.Array(RowId(), {
    minItems: 1, maxItems: FROM_BANK_MAX,
    description: `1 to ${FROM_BANK_MAX} bank question ids, in the quiz's order; a repeated id counts once`,
  }),
  mode: QuizMode,
  time_limit_minutes: t.Optional(t.Nullable(t.Integer({ minimum: 1, maximum: TIME_LIMIT_MAX_MINUTES, description: 'For timed quizzes; absent means null' }))),
})
export type FromBankBody = typeof FromBankBody.static
export const FromBankResponse = t.Object({ id: Int(), title: t.String(), questions_count: Int() })

export const BulkCategoryBody = t.Object({
  question_ids: t.Array(RowId(), { minItems: 1, maxItems: BULK_CATEGORY_MAX, description: `1 to ${BULK_CATEGORY_MAX} bank question ids` }),
  category_id: t.Nullable(RowId('The question category to set; null removes the category')),
})
export type BulkCategoryBody = typeof BulkCategoryBody.static
export const BulkCategoryResponse = t.Object({
  updated: Int({ description: 'How many of the given questions exist in the bank and now have that category' }),
  question_category_id: t.Nullable(Int()),
})

/** A refused query parameter, in the validator's own shape: `loc` is `["query", <name>]`. */
export const QueryProblem = t.Object({
  detail: t.Array(t.Object({ loc: t.Array(t.String()), msg: t.String(), type: t.String() })),
}, { description: 'A query parameter was refused; `loc` names it' })
export type QueryProblem = typeof QueryProblem.static

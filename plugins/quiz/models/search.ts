// TypeBox models of spec 1's quiz search (hybrid semantic plus keyword over quiz titles and questions).
import { t } from 'elysia'
import { Int } from '../../../src/core/schema'

export const SEARCH_Q_MIN = 2 // spec 1, limits: quiz search q
export const SEARCH_Q_MAX = 200
/** spec 1, Quizzes: semantic matches have a cosine similarity of at least 0.30. */
export const SEARCH_MIN_SCORE = 0.3
/** A keyword (substring) match ranks as this similarity: above any semantic match short of identical. */
export const KEYWORD_SCORE = 1
export const SEARCH_RESULTS_MAX = 50
export const MATCHING_QUESTIONS_MAX = 5
/** The nearest questions the vector index is asked for. */
export const SEARCH_QUESTION_CANDIDATES = 500
/** Titles compared semantically: the most recent quizzes the caller may see. */
export const SEARCH_TITLE_CANDIDATES = 2_000

export const SearchScope = t.Union([t.Literal('title'), t.Literal('questions'), t.Literal('all')], {
  description: '`title`, `questions` or `all` (default)',
})
export type SearchScope = typeof SearchScope.static

export const QuizSearchQuery = t.Object({
  q: t.String({ minLength: SEARCH_Q_MIN, maxLength: SEARCH_Q_MAX, description: `${SEARCH_Q_MIN} to ${SEARCH_Q_MAX} characters, not counting white space at either end` }),
  mode: t.Optional(SearchScope),
})

export const MatchType = t.Union([t.Literal('title'), t.Literal('question'), t.Literal('title_and_question')], {
  description: '`title`: only the title matched; `question`: only questions matched; `title_and_question`: both',
})
export type MatchType = typeof MatchType.static

export const MatchingQuestion = t.Object({ id: Int(), question_text: t.String() })
export const QuizSearchResult = t.Object({
  quiz_id: Int(),
  quiz_title: t.String(),
  match_type: MatchType,
  matching_questions: t.Array(MatchingQuestion, {
    description: `Up to ${MATCHING_QUESTIONS_MAX} of the quiz's matching questions, best first; empty for a title-only match`,
  }),
}, { title: 'QuizSearchResult' })
export type QuizSearchResult = typeof QuizSearchResult.static

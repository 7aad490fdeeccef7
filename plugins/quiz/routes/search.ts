// Spec 1, Quizzes: the quiz search (GET /api/quizzes/search), the JSON API. Mounted before the quizzes controller,
// so `search` is never read as a quiz id.
import { Elysia, t } from 'elysia'
import { QueryProblem } from '../models/bank'
import {
  KEYWORD_SCORE, MATCHING_QUESTIONS_MAX, QuizSearchQuery, QuizSearchResult, SEARCH_MIN_SCORE, SEARCH_Q_MAX, SEARCH_Q_MIN,
  SEARCH_QUESTION_CANDIDATES, SEARCH_RESULTS_MAX, SEARCH_TITLE_CANDIDATES,
} from '../models/search'
import { searchQuizzes } from '../services/search'
import type { QuizState } from '../state'
import { queryProblem } from './bank'

const tags = ['Quizzes']

export const searchRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/quizzes' })
    .use(auth)
    .get('/search', ({ user, query, status }) => {
      const q = query.q.trim()
      if (q.length < SEARCH_Q_MIN) return status(422, queryProblem('q', `must be ${SEARCH_Q_MIN} to ${SEARCH_Q_MAX} characters, not counting white space at either end`))
      return searchQuizzes(core, user, q, query.mode ?? 'all')
    }, {
      role: 'user', query: QuizSearchQuery, response: { 200: t.Array(QuizSearchResult), 422: QueryProblem },
      detail: {
        tags, summary: 'Search quizzes by title and questions',
        description: [
          `Finds the quizzes the caller may see (out of the trash; published ones only for a regular user) whose title or`,
          `questions match \`q\` (${SEARCH_Q_MIN} to ${SEARCH_Q_MAX} characters once trimmed, else 422). \`mode\`: \`title\` looks at titles only,`,
          '`questions` at questions only, `all` (the default) at both.',
          'A title matches when it contains `q` (case-insensitive substring) or when the embedding of `q` and the title\'s have',
          `a cosine similarity of at least ${SEARCH_MIN_SCORE} (the ${SEARCH_TITLE_CANDIDATES} most recent quizzes are compared). A question`,
          'matches when its text contains `q`, or when it is among the',
          `${SEARCH_QUESTION_CANDIDATES} questions nearest to \`q\` in the bank's vector index with a similarity of at least ${SEARCH_MIN_SCORE};`,
          'it then counts for every visible quiz that references it.',
          '`match_type` is `title`, `question` or `title_and_question`; `matching_questions` holds up to',
          `${MATCHING_QUESTIONS_MAX} of the quiz's matching questions (\`{id, question_text}\`), best first, and is empty for a title-only match.`,
          `Order: each quiz by its best match, a substring match counting ${KEYWORD_SCORE} and a semantic match its similarity, best`,
          `first; ties newest quiz first. At most ${SEARCH_RESULTS_MAX} results. 502 when the embedding model cannot be reached.`,
        ].join(' '),
      },
    })

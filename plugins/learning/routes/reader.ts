// The learning hub as readers use it (JSON API, any signed-in user): categories, the feed, a category's content,
// one content with its quiz and the caller's progress, its slides, quiz submission, and search in three modes.
// Routing, guards, validation and response shaping only; the rules live in service*.ts.
import { Elysia, t } from 'elysia'
import type { LearningState } from '../index'
import {
  CATEGORY_LIST_MAX, CategoryListEntry, ContentRead, FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, FeedEntry, FeedQuery, QuizResult, SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX, SEARCH_Q_MAX, SearchQuery, SearchResult, SlidesJson, SlugParams, SubmitQuizBody,
} from '../model'
import * as learning from '../service'
import * as reading from '../service-reader'
import {
  CHUNKS_MAX, HYBRID_CANDIDATES, RRF_K, SEMANTIC_MIN_SCORE, searchLearning, type SearchMode,
} from '../service-search'
import { SLIDES_CSP, slidesDocument } from '../service-slides'
import { textBody } from '../../../src/core/one-send'

const tags = ['Learning hub']
const SESSION = '401 without a session.'
const UNPUBLISHED = 'Content an author holds back (unpublished) is never shown here: it answers 404 like content that does not exist.'

const searchDescription = (mode: SearchMode) => {
  const common = [
    'Published content only. Each item is a feed entry plus `score` (higher is better; its scale depends on the mode).',
    `\`q\`: 1 to ${SEARCH_Q_MAX} characters (422 when only white space); \`limit\`: 1 to ${SEARCH_LIMIT_MAX}, default ${SEARCH_LIMIT_DEFAULT}.`,
  ]
  const keyword = 'A content matches when its words match the words of `q` (English stemming, every word must occur; `"a phrase"`, '
    + '`or` and `-word` work as in web search engines) or when its title, summary, body or slides contain `q` as typed, ignoring '
    + 'case. Score: 1 when the title contains `q`, plus the full-text rank (title words weigh most, then summary, body, '
    + 'slides). Ties: the most recently published first.'
  const semantic = `Each content is embedded in up to ${CHUNKS_MAX} chunks (its title and summary, then pieces of its body and slides) `
    + 'with the embedding model (EMBEDDING_MODEL at the AI gateway, else the built-in local embedder); a content\'s score '
    + `is the cosine similarity of \`q\` to its closest chunk, and only scores of at least ${SEMANTIC_MIN_SCORE} count. `
    + 'The index follows every create, update and delete. 502 when the embedding model cannot be reached, 503 when none is configured.'
  const hybrid = `Reciprocal-rank fusion of the keyword and the semantic rankings (each cut to its best ${HYBRID_CANDIDATES}): `
    + `score = the sum, over the rankings that hold the content, of 1 / (${RRF_K} + rank), rank 1 being the best. `
    + 'Ranks rather than scores are fused, so the two scales need no calibration; with these numbers a content found by both '
    + 'ranks above every content found by only one. Ties: the better keyword rank, then the better semantic rank. '
    + 'Errors as for semantic search.'
  const text = mode === 'keyword' ? [keyword] : mode === 'semantic' ? [semantic] : [hybrid, '', `Keyword ranking: ${keyword}`, '', `Semantic ranking: ${semantic}`]
  return [...text, '', ...common, SESSION].join('\n')
}

/** JSON when the client asks for it and not for HTML first. */
function wantsJson(request: Request): boolean {
  const accept = (request.headers.get('accept') ?? '').toLowerCase()
  const json = accept.indexOf('application/json')
  const html = accept.indexOf('text/html')
  return json >= 0 && (html < 0 || json < html)
}

export const readerRoutes = ({ core, clinical: { auth } }: LearningState) => {
  const search = (mode: SearchMode) => ({ query }: { query: { q: string; limit?: number } }) =>
    searchLearning(core, mode, query.q, query.limit)
  return new Elysia({ prefix: '/api/learning' })
    .use(auth)
    .get('/categories', () => learning.listCategories(core), {
      auth: 'user', response: t.Array(CategoryListEntry),
      detail: {
        tags, summary: 'Learning categories',
        description: `Every category by name, with \`content_count\`: how many published items it holds. ${SESSION}`,
      },
    })
    .get('/feed', ({ query }) => reading.listFeed(core, query.limit ?? FEED_LIMIT_DEFAULT, query.offset ?? 0), {
      auth: 'user', query: FeedQuery, response: t.Array(FeedEntry),
      detail: {
        tags, summary: 'The feed of learning content',
        description: [
          'Published articles and presentations, the most recently published first (content held back and published later',
          `counts from its publication). \`limit\` 1 to ${FEED_LIMIT_MAX} (default ${FEED_LIMIT_DEFAULT}), \`offset\` from 0 (default 0);`,
          `a page past the end is empty. \`category\` is the category's name, \`category_slug\` its slug. ${SESSION}`,
        ].join(' '),
      },
    })
    .get('/category/:slug', ({ params }) => reading.listCategoryContent(core, params.slug), {
      auth: 'user', params: SlugParams, response: t.Array(FeedEntry),
      detail: {
        tags, summary: 'The content of one category',
        description: `The category's published content as feed entries, the most recently published first, at most ${CATEGORY_LIST_MAX}. `
          + `404 \`category_not_found\` for an unknown slug; an empty list for a category without published content. ${SESSION}`,
      },
    })
    .get('/content/:slug', ({ params, user }) => reading.readContent(core, user.id, params.slug), {
      auth: 'user', params: SlugParams, response: ContentRead,
      detail: {
        tags, summary: 'One article or presentation with its quiz and the caller\'s progress',
        description: [
          '`category` is the category object. `questions` is the quiz without the answers: question ids are 1..n in order,',
          'option ids are unique across the quiz, and `multiple` says a question has more than one correct option (all must',
          'be chosen). `progress`: `completed` once the caller has submitted the quiz; `score`/`total` are the best submission',
          '(by share of correct answers), `latest_score`/`latest_total` the latest, `attempts` how many; null and 0 before the',
          `first. \`has_slides\` says whether the slides route has a deck. 404 \`content_not_found\`. ${UNPUBLISHED} ${SESSION}`,
        ].join(' '),
      },
    })
    .get('/content/:slug/slides', async ({ params, request }) => {
      const { title, rendered } = await reading.contentSlides(core, params.slug)
      const headers = { vary: 'Accept', 'cache-control': 'private, no-cache' }
      if (wantsJson(request)) {
        const json = JSON.stringify({ success: true, title, css: rendered.css, slides: rendered.slides })
        return new Response(textBody(json), { headers: { ...headers, 'content-type': 'application/json;charset=utf-8' } })
      }
      return new Response(textBody(slidesDocument(title, rendered)), {
        headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': SLIDES_CSP },
      })
    }, {
      auth: 'user', params: SlugParams,
      detail: {
        tags, summary: 'The slides of a presentation, rendered',
        description: [
          'The deck is the content\'s slide markdown (Marp), or the body of a presentation that has none, rendered with Marp.',
          'Answers a whole HTML page (`text/html`): the slides one below the other, each a full screen, with no script and a',
          'Content-Security-Policy that allows none (styles inline only, images and fonts from this server or `data:`).',
          'With `Accept: application/json` it answers `{success, title, css, slides}` instead: the stylesheet (scoped to',
          '`div.marpit`) and one HTML fragment per slide, for a page that shows them itself.',
          'HTML in the markdown is shown as text, never as markup; links other than web, mail and telephone addresses are dropped;',
          'emoji stay characters. Marp\'s `<style>` blocks and `style` directive stay the deck\'s CSS, scoped to its slides.',
          `404 \`content_not_found\`, or \`no_slides\` for an article without slides. ${UNPUBLISHED} ${SESSION}`,
        ].join('\n'),
        responses: {
          200: {
            description: 'The deck',
            content: {
              'text/html': { schema: { type: 'string' } },
              'application/json': { schema: SlidesJson as never },
            },
          },
        },
      },
    })
    .post('/submit-quiz', ({ body, user }) => reading.submitQuiz(core, user.id, body), {
      auth: 'user', body: SubmitQuizBody, response: QuizResult,
      detail: {
        tags, summary: 'Submit answers to a quiz',
        description: [
          '`answers` holds, per question, the chosen `optionIds`. A question counts as correct when the chosen options are',
          'exactly its correct ones: every correct option of a multi-answer question and nothing else (all-or-nothing); a',
          'question left out, or answered with no option, is wrong. `score` is the number of correct questions, `total` the',
          'number of questions, `results` one `{questionId, correct}` per question in the quiz\'s order.',
          'Each submission is recorded and updates the caller\'s progress (attempts, best and latest).',
          '422 `unknown_question` for a question the quiz does not have, `duplicate_answer` for a question answered twice,',
          '`unknown_option` for an option id that is not one of that question\'s, `no_questions` for content without a quiz;',
          `nothing is recorded then. 404 \`content_not_found\`. ${UNPUBLISHED} ${SESSION}`,
        ].join(' '),
      },
    })
    .get('/search', search('keyword'), {
      auth: 'user', query: SearchQuery, response: t.Array(SearchResult),
      detail: { tags, summary: 'Keyword search of learning content', description: searchDescription('keyword') },
    })
    .get('/search/semantic', search('semantic'), {
      auth: 'user', query: SearchQuery, response: t.Array(SearchResult),
      detail: { tags, summary: 'Semantic search of learning content', description: searchDescription('semantic') },
    })
    .get('/search/hybrid', search('hybrid'), {
      auth: 'user', query: SearchQuery, response: t.Array(SearchResult),
      detail: { tags, summary: 'Hybrid (keyword and semantic) search of learning content', description: searchDescription('hybrid') },
    })
}

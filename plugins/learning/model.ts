// TypeBox models of the learning hub: categories, content with its quiz, progress, quiz submission, search and
// slides; the OpenAPI docs come from them. Every limit is named here once; the services enforce the rules TypeBox
// cannot say (slug shape, known category, at least one correct option, ...).
import { t } from 'elysia'
import { Int, RowId } from '../../src/core/schema'

const Timestamp = (description?: string) => t.String({ format: 'date-time', ...(description ? { description } : {}) })

// ---- limits ---------------------------------------------------------------------------------------------

export const CATEGORY_NAME_MAX = 100
export const CATEGORY_DESCRIPTION_MAX = 1_000
export const TITLE_MAX = 200
export const SLUG_MAX = 100
/** Lowercase letters and digits in words joined by single hyphens, e.g. `asthma-inhalers-2`. */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$'
export const SUMMARY_MAX = 500
/** A summary made from the body is at most this many characters (then `…`). */
export const SUMMARY_AUTO_CHARS = 200
/** Characters of an article's markdown body or of a slide deck's markdown. */
export const BODY_MAX = 200_000
export const SLIDES_MAX = 200_000
export const QUESTIONS_MAX = 50
export const OPTIONS_MIN = 2
export const OPTIONS_MAX = 10
export const QUESTION_TEXT_MAX = 1_000
export const OPTION_TEXT_MAX = 500

/** The feed's page: `limit` default 20 (at most FEED_LIMIT_MAX), `offset` default 0. */
export const FEED_LIMIT_DEFAULT = 20
export const FEED_LIMIT_MAX = 100
export const FEED_OFFSET_MAX = 100_000
/** A category listing shows at most this many items, newest first. */
export const CATEGORY_LIST_MAX = 500

export const SEARCH_Q_MAX = 200
export const SEARCH_LIMIT_DEFAULT = 20
export const SEARCH_LIMIT_MAX = 50

/** Authoring with AI: the topic, the author's refine instructions. */
export const TOPIC_MAX = 500
export const INSTRUCTIONS_MAX = 2_000
/** Reference files grounding ai-generate (multipart field `files`): how many, each one's size, and the text kept of them all. */
export const REFERENCE_FILES_MAX = 5
export const REFERENCE_FILE_MAX_BYTES = 5 * 1024 * 1024
export const REFERENCE_TEXT_MAX = 60_000
/** A pptx title, and a WebDAV folder path to browse. */
export const PPTX_TITLE_MAX = 200
/** Slides of one .pptx export (a deck at SLIDES_MAX could otherwise ask for tens of thousands). */
export const PPTX_SLIDES_MAX = 500
export const WEBDAV_PATH_MAX = 1_000

export const CONTENT_TYPES = ['article', 'presentation'] as const
export type ContentType = (typeof CONTENT_TYPES)[number]
export const ContentTypeSchema = t.Union([t.Literal('article'), t.Literal('presentation')], {
  description: '`article` (markdown to read) or `presentation` (a Marp slide deck)',
})

// ---- categories ----------------------------------------------------------------------------------------

export const Category = t.Object({
  id: Int(),
  name: t.String(),
  slug: t.String(),
  description: t.String(),
}, { title: 'LearningCategory' })
export type Category = typeof Category.static

export const CategoryListEntry = t.Composite([Category, t.Object({
  content_count: Int({ minimum: 0, description: 'Published items in the category' }),
})], { title: 'LearningCategoryListEntry' })
export type CategoryListEntry = typeof CategoryListEntry.static

const Slug = (what: string) => t.String({
  minLength: 1, maxLength: SLUG_MAX,
  description: `${what}: 1 to ${SLUG_MAX} lowercase letters and digits in words joined by single hyphens (\`${SLUG_PATTERN}\`)`,
})

/** A category as authors write it. */
export const CategoryInput = t.Object({
  name: t.String({ minLength: 1, maxLength: CATEGORY_NAME_MAX }),
  slug: Slug('Unique among categories'),
  description: t.Optional(t.String({ maxLength: CATEGORY_DESCRIPTION_MAX, description: 'Empty when absent' })),
})
export type CategoryInput = typeof CategoryInput.static

// ---- content ---------------------------------------------------------------------------------------------

export const FeedEntry = t.Object({
  id: Int(),
  title: t.String(),
  slug: t.String(),
  summary: t.String({ description: `The author's summary, or the start of the body as plain text (at most ${SUMMARY_AUTO_CHARS} characters, then …)` }),
  type: ContentTypeSchema,
  category: t.String({ description: 'The category\'s name' }),
  category_slug: t.String({ description: 'The category\'s slug (GET /api/learning/category/{slug})' }),
  created_at: Timestamp(),
}, { title: 'LearningFeedEntry' })
export type FeedEntry = typeof FeedEntry.static

export const ReaderOption = t.Object({ id: Int(), text: t.String() })
export const ReaderQuestion = t.Object({
  id: Int(),
  text: t.String(),
  multiple: t.Boolean({ description: 'True when more than one option is correct (all of them must be chosen)' }),
  options: t.Array(ReaderOption),
}, { title: 'LearningQuestion' })
export type ReaderQuestion = typeof ReaderQuestion.static

export const Progress = t.Object({
  completed: t.Boolean({ description: 'True once the caller has submitted this content\'s quiz' }),
  score: t.Nullable(Int(), { description: 'The best score (correct answers), null before the first submission' }),
  total: t.Nullable(Int(), { description: 'The number of questions of that best submission' }),
  latest_score: t.Nullable(Int(), { description: 'The latest submission\'s score' }),
  latest_total: t.Nullable(Int()),
  attempts: Int({ minimum: 0 }),
  last_submitted_at: t.Nullable(Timestamp()),
}, { title: 'LearningProgress' })
export type Progress = typeof Progress.static

export const ContentRead = t.Object({
  id: Int(),
  title: t.String(),
  slug: t.String(),
  type: ContentTypeSchema,
  summary: t.String(),
  category: Category,
  body: t.String({ description: 'Markdown' }),
  has_slides: t.Boolean({ description: 'Whether GET /api/learning/content/{slug}/slides has a deck to show' }),
  questions: t.Array(ReaderQuestion, { description: 'The quiz, without which options are correct; empty when it has none' }),
  progress: Progress,
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { title: 'LearningContent' })
export type ContentRead = typeof ContentRead.static

export const SlugParams = t.Object({ slug: t.String({ minLength: 1, maxLength: 200 }) })

export const FeedQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: FEED_LIMIT_MAX, default: FEED_LIMIT_DEFAULT, description: `1 to ${FEED_LIMIT_MAX}, default ${FEED_LIMIT_DEFAULT}` })),
  offset: t.Optional(t.Integer({ minimum: 0, maximum: FEED_OFFSET_MAX, default: 0, description: 'Skip this many of the newest, default 0' })),
})

/** A quiz question as authors write it: the reader's shape plus `correct`, without ids. */
export const QuestionInput = t.Object({
  text: t.String({ minLength: 1, maxLength: QUESTION_TEXT_MAX }),
  options: t.Array(t.Object({
    text: t.String({ minLength: 1, maxLength: OPTION_TEXT_MAX }),
    correct: t.Boolean(),
  }), { minItems: OPTIONS_MIN, maxItems: OPTIONS_MAX, description: `${OPTIONS_MIN} to ${OPTIONS_MAX} options, at least one correct` }),
})
export type QuestionInput = typeof QuestionInput.static

/** Content as authors write it (create and update). */
export const ContentInput = t.Object({
  title: t.String({ minLength: 1, maxLength: TITLE_MAX }),
  slug: Slug('Unique among content'),
  body: t.String({ maxLength: BODY_MAX, description: `Markdown, at most ${BODY_MAX} characters` }),
  categoryId: RowId('The category'),
  questions: t.Optional(t.Array(QuestionInput, { maxItems: QUESTIONS_MAX, description: `At most ${QUESTIONS_MAX} questions` })),
  published: t.Optional(t.Boolean({ description: 'Readers see it at once when true (the default); false holds it back' })),
  type: t.Optional(ContentTypeSchema),
  summary: t.Optional(t.String({ maxLength: SUMMARY_MAX, description: 'Blank or absent: made from the start of the body (or of the slides)' })),
  slides: t.Optional(t.Nullable(t.String({ maxLength: SLIDES_MAX, description: 'The slide deck\'s Marp markdown' }))),
})
export type ContentInput = typeof ContentInput.static

// ---- quiz submission -------------------------------------------------------------------------------------

export const SubmitQuizBody = t.Object({
  contentId: RowId('The content whose quiz is answered'),
  answers: t.Array(t.Object({
    questionId: t.Integer({ minimum: 1 }),
    optionIds: t.Array(t.Integer({ minimum: 1 }), { maxItems: OPTIONS_MAX, description: 'The chosen options; empty: no answer' }),
  }), { maxItems: QUESTIONS_MAX }),
})
export type SubmitQuizBody = typeof SubmitQuizBody.static

export const QuizResult = t.Object({
  success: t.Literal(true),
  score: Int({ minimum: 0, description: 'Questions answered correctly' }),
  total: Int({ minimum: 1, description: 'Questions in the quiz' }),
  results: t.Array(t.Object({ questionId: Int(), correct: t.Boolean() }), { description: 'One per question, in the quiz\'s order' }),
}, { title: 'LearningQuizResult' })
export type QuizResult = typeof QuizResult.static

// ---- search ----------------------------------------------------------------------------------------------

export const SearchQuery = t.Object({
  q: t.String({ minLength: 1, maxLength: SEARCH_Q_MAX, description: `1 to ${SEARCH_Q_MAX} characters, not only white space` }),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX, default: SEARCH_LIMIT_DEFAULT, description: `1 to ${SEARCH_LIMIT_MAX}, default ${SEARCH_LIMIT_DEFAULT}` })),
})

export const SearchResult = t.Composite([FeedEntry, t.Object({
  score: t.Number({ description: 'The ranking score of the search mode (higher is better)' }),
})], { title: 'LearningSearchResult' })
export type SearchResult = typeof SearchResult.static

// ---- slides ----------------------------------------------------------------------------------------------

export const SlidesJson = t.Object({
  success: t.Literal(true),
  title: t.String(),
  css: t.String({ description: 'The deck\'s stylesheet, scoped to `div.marpit`' }),
  slides: t.Array(t.String(), { description: 'One HTML fragment (an `<svg>`) per slide; put them in a `<div class="marpit">`' }),
}, { title: 'LearningSlides' })
export type SlidesJson = typeof SlidesJson.static

// ---- authoring (moderators and admins) ---------------------------------------------------------------------

export const IdParams = t.Object({ id: RowId('The category\'s or content\'s id') })

export const Created = t.Object({ success: t.Literal(true), id: Int({ description: 'The new row\'s id' }) }, { title: 'LearningCreated' })

export const AuthorCategory = t.Composite([Category, t.Object({
  content_count: Int({ minimum: 0, description: 'Every item in the category, published or not' }),
})], { title: 'LearningAuthorCategory' })
export type AuthorCategory = typeof AuthorCategory.static

export const AuthorContentListEntry = t.Object({
  id: Int(),
  title: t.String(),
  slug: t.String(),
  type: ContentTypeSchema,
  categoryId: Int(),
  category: t.String({ description: 'The category\'s name' }),
  published: t.Boolean(),
  question_count: Int({ minimum: 0 }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { title: 'LearningAuthorContentListEntry' })

export const AuthorQuestion = t.Object({
  id: Int(),
  text: t.String(),
  options: t.Array(t.Object({ id: Int(), text: t.String(), correct: t.Boolean() })),
}, { title: 'LearningAuthorQuestion' })

export const AuthorContentRead = t.Object({
  id: Int(),
  title: t.String(),
  slug: t.String(),
  type: ContentTypeSchema,
  summary: t.String(),
  body: t.String({ description: 'Markdown' }),
  slides: t.Nullable(t.String({ description: 'The slide deck\'s Marp markdown; null: none (a presentation shows its body)' })),
  categoryId: Int(),
  category: t.String({ description: 'The category\'s name' }),
  questions: t.Array(AuthorQuestion, { description: 'The quiz with `correct` on every option; ids renumbered on every write' }),
  published: t.Boolean(),
  published_at: t.Nullable(Timestamp('When it was first published')),
  author_id: t.Nullable(Int({ description: 'The user who created it; null once that account is deleted' })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { title: 'LearningAuthorContent' })

/** A model id of the catalogue (GET /api/models), as the clinical generation routes take it. */
const ModelField = t.Optional(t.String({ maxLength: 200, description: 'A model of GET /api/models; the default model when absent or empty' }))

/** ai-generate's body: JSON, or a multipart form with the same fields plus the repeatable file field `files`. */
export const GenerateBody = t.Object({
  topic: t.String({ minLength: 1, maxLength: TOPIC_MAX, description: `What to write about: 1 to ${TOPIC_MAX} characters, not only white space` }),
  type: ContentTypeSchema,
  model: ModelField,
  files: t.Optional(t.Array(t.File(), {
    description: `Multipart only: reference files, the field repeated once per file (at most ${REFERENCE_FILES_MAX}, each at most `
      + `${REFERENCE_FILE_MAX_BYTES} bytes): PDF (.pdf) with a text layer, or UTF-8 text (.txt, .md)`,
  })),
})

/** ai-refine's `body`: an article or a slide deck, so the larger of the two limits. */
export const REFINE_BODY_MAX = Math.max(BODY_MAX, SLIDES_MAX)
export const RefineBody = t.Object({
  body: t.String({ minLength: 1, maxLength: REFINE_BODY_MAX, description: `The markdown to revise (an article or a Marp deck), 1 to ${REFINE_BODY_MAX} characters` }),
  instructions: t.String({ minLength: 1, maxLength: INSTRUCTIONS_MAX, description: `What to change, 1 to ${INSTRUCTIONS_MAX} characters` }),
  model: ModelField,
})

export const AuthoredResponse = t.Object({
  success: t.Literal(true),
  content: t.String({ description: 'Markdown: an article, or a Marp deck for `presentation`' }),
  model: t.String({ description: 'The model that wrote it' }),
}, { title: 'LearningAuthored' })

export const PreviewSlidesBody = t.Object({
  markdown: t.String({ maxLength: SLIDES_MAX, description: `Marp markdown, at most ${SLIDES_MAX} characters` }),
})
export const SlidesPreview = t.Object({
  css: t.String({ description: 'The deck\'s stylesheet, scoped to `div.marpit`' }),
  slides: t.Array(t.String(), { description: 'One HTML fragment (an `<svg>`) per slide; put them in a `<div class="marpit">`' }),
}, { title: 'LearningSlidesPreview' })

export const PptxBody = t.Object({
  markdown: t.String({ minLength: 1, maxLength: SLIDES_MAX, description: `Marp markdown, 1 to ${SLIDES_MAX} characters` }),
  title: t.String({ minLength: 1, maxLength: PPTX_TITLE_MAX, description: `The presentation's title and file name, 1 to ${PPTX_TITLE_MAX} characters` }),
})

export const WebDavBrowseQuery = t.Object({
  path: t.Optional(t.String({ maxLength: WEBDAV_PATH_MAX, description: `A folder relative to the connected server's address, default \`/\`; at most ${WEBDAV_PATH_MAX} characters` })),
})

export const WebDavEntrySchema = t.Object({
  name: t.String({ description: 'The file or folder name' }),
  path: t.String({ description: 'Its path relative to the server address (`/` and its folders), usable as the next `path` of a folder' }),
  type: t.Union([t.Literal('directory'), t.Literal('file')]),
  size: Int({ minimum: 0, description: 'Bytes; 0 for a folder' }),
  modified: t.Nullable(Timestamp('The last change (ISO 8601), null when the server does not say')),
  mime: t.Nullable(t.String({ description: 'The server\'s content type of a file; null for a folder or when the server does not say' })),
}, { title: 'LearningWebDavEntry' })

export const LearningStatsSchema = t.Object({
  totalContent: Int({ minimum: 0, description: 'Content items, published or not' }),
  totalCategories: Int({ minimum: 0 }),
  totalQuizSubmissions: Int({ minimum: 0, description: 'Every quiz submission of every reader' }),
  averageScore: t.Number({ minimum: 0, maximum: 100, description: 'The mean of the submissions\' scores as a percentage of their questions (0 to 100, one decimal); 0 without submissions' }),
}, { title: 'LearningStats' })

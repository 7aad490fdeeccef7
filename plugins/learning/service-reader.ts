// The learning hub as readers see it: published content only (anything else is 404 on every route), the quiz
// without its answers, the caller's progress, rendered slides, and quiz submission with its scoring and progress.
// Plain functions over the Core; routes translate HTTP.
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import {
  CATEGORY_LIST_MAX, FEED_LIMIT_DEFAULT, type Category, type ContentRead, type ContentType, type FeedEntry, type Progress, type QuizResult,
  type ReaderQuestion, type SubmitQuizBody,
} from './model'
import { categoryNotFound, contentNotFound, iso, storedQuestions, type StoredQuestion } from './service'
import { renderSlides, type RenderedSlides } from './service-slides'

interface FeedRow {
  id: number
  title: string
  slug: string
  summary: string
  type: ContentType
  category: string
  category_slug: string
  created_at: Date
}
const feedEntry = (r: FeedRow): FeedEntry => ({ ...r, created_at: iso(r.created_at) })

/** Published content, newest first (by first publication). */
export async function listFeed(core: Core, limit = FEED_LIMIT_DEFAULT, offset = 0): Promise<FeedEntry[]> {
  const rows = await core.db.sql<FeedRow>`
    select c.id, c.title, c.slug, c.summary, c.type, k.name as category, k.slug as category_slug, c.created_at
    from clinical.learning_content c
    join clinical.learning_categories k on k.id = c.category_id
    where c.published
    order by c.published_at desc, c.id desc
    limit ${limit} offset ${offset}`
  return rows.map(feedEntry)
}

/** A category's published content, newest first; 404 for an unknown slug. */
export async function listCategoryContent(core: Core, slug: string): Promise<FeedEntry[]> {
  const [category] = await core.db.sql<{ id: number; name: string; slug: string }>`
    select id, name, slug from clinical.learning_categories where slug = ${slug}`
  if (!category) throw categoryNotFound()
  const rows = await core.db.sql<Omit<FeedRow, 'category' | 'category_slug'>>`
    select c.id, c.title, c.slug, c.summary, c.type, c.created_at
    from clinical.learning_content c
    where c.category_id = ${category.id} and c.published
    order by c.published_at desc, c.id desc
    limit ${CATEGORY_LIST_MAX}`
  return rows.map((r) => feedEntry({ ...r, category: category.name, category_slug: category.slug }))
}

/** The quiz as readers see it: no `correct`, and whether a question wants more than one option. */
export const readerQuestions = (questions: StoredQuestion[]): ReaderQuestion[] =>
  questions.map((q) => ({
    id: q.id,
    text: q.text,
    multiple: q.options.filter((o) => o.correct).length > 1,
    options: q.options.map((o) => ({ id: o.id, text: o.text })),
  }))

interface ProgressRow {
  best_score: number | null
  best_total: number | null
  latest_score: number | null
  latest_total: number | null
  attempts: number | null
  last_submitted_at: Date | null
}
const progressOf = (p: ProgressRow): Progress => ({
  completed: p.attempts !== null,
  score: p.best_score,
  total: p.best_total,
  latest_score: p.latest_score,
  latest_total: p.latest_total,
  attempts: p.attempts ?? 0,
  last_submitted_at: p.last_submitted_at ? iso(p.last_submitted_at) : null,
})

/** One published content by slug with its category, quiz (without the answers) and the reader's progress; else 404. */
export async function readContent(core: Core, userId: number, slug: string): Promise<ContentRead> {
  const [row] = await core.db.sql<{
    id: number; title: string; slug: string; type: ContentType; summary: string; body: string; slides: string | null
    questions: unknown; created_at: Date; updated_at: Date
    category_id: number; category_name: string; category_slug: string; category_description: string
  } & ProgressRow>`
    select c.id, c.title, c.slug, c.type, c.summary, c.body, c.slides, c.questions, c.created_at, c.updated_at,
      k.id as category_id, k.name as category_name, k.slug as category_slug, k.description as category_description,
      p.best_score, p.best_total, p.latest_score, p.latest_total, p.attempts, p.last_submitted_at
    from clinical.learning_content c
    join clinical.learning_categories k on k.id = c.category_id
    left join clinical.learning_progress p on p.content_id = c.id and p.user_id = ${userId}
    where c.slug = ${slug} and c.published`
  if (!row) throw contentNotFound()
  const category: Category = { id: row.category_id, name: row.category_name, slug: row.category_slug, description: row.category_description }
  return {
    id: row.id, title: row.title, slug: row.slug, type: row.type, summary: row.summary, category, body: row.body,
    has_slides: slideMarkdown(row) !== null,
    questions: readerQuestions(storedQuestions(row.questions)),
    progress: progressOf(row),
    created_at: iso(row.created_at), updated_at: iso(row.updated_at),
  }
}

/** The deck of a content: its slide markdown, or for a presentation without one its body; null for none. */
function slideMarkdown(c: { type: ContentType; body: string; slides: string | null }): string | null {
  if (c.slides !== null && c.slides.trim() !== '') return c.slides
  return c.type === 'presentation' && c.body.trim() !== '' ? c.body : null
}

/** The rendered deck of one published content by slug; 404 `content_not_found`, or 404 `no_slides` when it has none. */
export async function contentSlides(core: Core, slug: string): Promise<{ title: string; rendered: RenderedSlides }> {
  const [row] = await core.db.sql<{ title: string; type: ContentType; body: string; slides: string | null }>`
    select title, type, body, slides from clinical.learning_content where slug = ${slug} and published`
  if (!row) throw contentNotFound()
  const markdown = slideMarkdown(row)
  if (markdown === null) throw HttpError.notFound('no_slides', 'This content has no slides')
  return { title: row.title, rendered: renderSlides(markdown) }
}

// ---- quiz submission ---------------------------------------------------------------------------------------

/**
 * Scores answers against a quiz. A question is correct when the chosen options are exactly its correct ones (all
 * of them for a multi-answer question, nothing more); an unanswered question is wrong. 422 for a question the quiz
 * does not have, a question answered twice, or an option that is not one of that question's.
 */
export function scoreQuiz(questions: StoredQuestion[], answers: SubmitQuizBody['answers']): Omit<QuizResult, 'success'> {
  const chosen = new Map<number, Set<number>>()
  answers.forEach((a, i) => {
    const question = questions.find((q) => q.id === a.questionId)
    if (!question) {
      throw HttpError.unprocessable('unknown_question', `answers.${i}.questionId: this quiz has no question ${a.questionId}`, {
        [`answers.${i}.questionId`]: 'This quiz has no such question',
      })
    }
    if (chosen.has(a.questionId)) {
      throw HttpError.unprocessable('duplicate_answer', `answers.${i}.questionId: question ${a.questionId} is answered twice`, {
        [`answers.${i}.questionId`]: 'This question is answered twice',
      })
    }
    const unknown = a.optionIds.find((o) => !question.options.some((opt) => opt.id === o))
    if (unknown !== undefined) {
      throw HttpError.unprocessable('unknown_option', `answers.${i}.optionIds: question ${a.questionId} has no option ${unknown}`, {
        [`answers.${i}.optionIds`]: 'Not an option of this question',
      })
    }
    chosen.set(a.questionId, new Set(a.optionIds))
  })
  const results = questions.map((q) => {
    const picked = chosen.get(q.id) ?? new Set<number>()
    const correct = q.options.filter((o) => o.correct).map((o) => o.id)
    return { questionId: q.id, correct: picked.size === correct.length && correct.every((id) => picked.has(id)) }
  })
  return { score: results.filter((r) => r.correct).length, total: questions.length, results }
}

/**
 * Scores a reader's answers to a published content's quiz, and records the submission and the reader's progress
 * (attempts, the best submission by share of correct answers, the latest) in one transaction. 404 for unpublished or
 * unknown content, 422 `no_questions` for content without a quiz, 422 as scoreQuiz says.
 */
export async function submitQuiz(core: Core, userId: number, body: SubmitQuizBody): Promise<QuizResult> {
  const [content] = await core.db.sql<{ id: number; questions: unknown }>`
    select id, questions from clinical.learning_content where id = ${body.contentId} and published`
  if (!content) throw contentNotFound()
  const questions = storedQuestions(content.questions)
  if (questions.length === 0) throw HttpError.unprocessable('no_questions', 'contentId: this content has no quiz', { contentId: 'This content has no quiz' })
  const { score, total, results } = scoreQuiz(questions, body.answers)
  const now = new Date(core.now())
  await core.transaction(async (tx) => {
    await tx.db.sql`
      insert into clinical.learning_quiz_submissions (user_id, content_id, score, total, submitted_at)
      values (${userId}, ${content.id}, ${score}, ${total}, ${now})`
    await tx.db.sql`
      insert into clinical.learning_progress as p
        (user_id, content_id, best_score, best_total, latest_score, latest_total, attempts, completed_at, last_submitted_at)
      values (${userId}, ${content.id}, ${score}, ${total}, ${score}, ${total}, 1, ${now}, ${now})
      on conflict (user_id, content_id) do update set
        best_score = case when excluded.best_score * p.best_total >= p.best_score * excluded.best_total then excluded.best_score else p.best_score end,
        best_total = case when excluded.best_score * p.best_total >= p.best_score * excluded.best_total then excluded.best_total else p.best_total end,
        latest_score = excluded.latest_score,
        latest_total = excluded.latest_total,
        attempts = p.attempts + 1,
        last_submitted_at = greatest(p.last_submitted_at, excluded.last_submitted_at)`
  })
  return { success: true, score, total, results }
}


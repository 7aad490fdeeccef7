// The learning hub's categories and content (with their quizzes) as authors write and read them: unique slugs,
// questions numbered with one correct option at least, the search index kept in step, the hub's figures. What readers
// see is service-reader.ts. Plain functions over the Core; routes translate HTTP.
import { isUniqueViolation } from '../../src/core/db'
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import {
  SLUG_PATTERN, SUMMARY_AUTO_CHARS, type CategoryInput, type CategoryListEntry, type ContentInput, type ContentType, type QuestionInput,
} from './model'
import { embedContent, storeContentVectors, unindexContent } from './service-search'

const SLUG = new RegExp(SLUG_PATTERN)
export const iso = (d: Date) => d.toISOString()

/** A quiz question as stored: ids numbered on every write, `correct` on each option. */
export interface StoredQuestion {
  id: number
  text: string
  options: Array<{ id: number; text: string; correct: boolean }>
}

// ---- categories ------------------------------------------------------------------------------------------

function checkSlug(slug: string): string {
  if (!SLUG.test(slug)) {
    throw HttpError.unprocessable('invalid_slug', 'slug: use lowercase letters and digits in words joined by single hyphens', {
      slug: 'Use lowercase letters and digits in words joined by single hyphens, e.g. asthma-inhalers',
    })
  }
  return slug
}

function blank(field: string, label: string): never {
  throw HttpError.unprocessable('blank_field', `${field}: ${label} must not be blank`, { [field]: `${label} must not be blank` })
}

function categoryFields(input: CategoryInput) {
  const name = input.name.trim()
  if (!name) blank('name', 'The name')
  return { name, slug: checkSlug(input.slug), description: (input.description ?? '').trim() }
}

const categorySlugTaken = () => HttpError.conflict('slug_taken', 'Another category already has this slug')
const contentSlugTaken = () => HttpError.conflict('slug_taken', 'Other content already has this slug')
export const categoryNotFound = () => HttpError.notFound('category_not_found', 'Category not found')
export const contentNotFound = () => HttpError.notFound('content_not_found', 'Content not found')

/** Creates a category; 409 `slug_taken` when another category has the slug. */
export async function createCategory(core: Core, input: CategoryInput): Promise<{ id: number }> {
  const f = categoryFields(input)
  const now = new Date(core.now())
  try {
    const [row] = await core.db.sql<{ id: number }>`
      insert into clinical.learning_categories (name, slug, description, created_at, updated_at)
      values (${f.name}, ${f.slug}, ${f.description}, ${now}, ${now})
      returning id`
    return { id: row!.id }
  } catch (err) {
    if (isUniqueViolation(err)) throw categorySlugTaken()
    throw err
  }
}

/** Replaces a category's name, slug and description; 404 unknown id, 409 `slug_taken`. */
export async function updateCategory(core: Core, id: number, input: CategoryInput): Promise<void> {
  const f = categoryFields(input)
  try {
    const rows = await core.db.sql`
      update clinical.learning_categories
      set name = ${f.name}, slug = ${f.slug}, description = ${f.description}, updated_at = ${new Date(core.now())}
      where id = ${id} returning id`
    if (rows.length === 0) throw categoryNotFound()
  } catch (err) {
    if (isUniqueViolation(err)) throw categorySlugTaken()
    throw err
  }
}

/** Deletes an empty category; 404 unknown id, 409 `category_in_use` while any content (published or not) is in it. */
export async function deleteCategory(core: Core, id: number): Promise<void> {
  await core.transaction(async (tx) => {
    const [row] = await tx.db.sql`select id from clinical.learning_categories where id = ${id} for update`
    if (!row) throw categoryNotFound()
    const [used] = await tx.db.sql`select 1 from clinical.learning_content where category_id = ${id} limit 1`
    if (used) throw HttpError.conflict('category_in_use', 'Move or delete the content of this category first')
    await tx.db.sql`delete from clinical.learning_categories where id = ${id}`
  })
}

/** Every category by name, with its count of published content. */
export async function listCategories(core: Core): Promise<CategoryListEntry[]> {
  return core.db.sql<CategoryListEntry>`
    select k.id, k.name, k.slug, k.description,
      (select count(*) from clinical.learning_content c where c.category_id = k.id and c.published)::int as content_count
    from clinical.learning_categories k
    order by lower(k.name), k.id`
}

// ---- content as authors write it -------------------------------------------------------------------------

/** Plain text of the start of some markdown, for a summary: no markup, code, front matter, comments or tags. */
export function summaryOf(markdown: string, max = SUMMARY_AUTO_CHARS): string {
  const text = markdown
    .replace(/^\uFEFF?---\r?\n[\s\S]*?\r?\n---\s*(\r?\n|$)/, '') // front matter (Marp decks)
    .replace(/<!--[\s\S]*?(-->|$)/g, ' ')
    .replace(/(```|~~~)[\s\S]*?(\1|$)/g, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]*>/g, ' ')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s{0,3}([-*_=]\s*){3,}$/gm, ' ')
    .replace(/[*_`~|]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  if (text.length <= max) return text
  const cut = text.slice(0, max)
  const space = cut.lastIndexOf(' ')
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** Checks an author's questions and numbers them: question ids 1..n, option ids 1..m across the quiz. */
export function numberQuestions(questions: QuestionInput[]): StoredQuestion[] {
  let optionId = 0
  return questions.map((q, i) => {
    const text = q.text.trim()
    if (!text) blank(`questions.${i}.text`, 'A question')
    q.options.forEach((o, j) => {
      if (!o.text.trim()) blank(`questions.${i}.options.${j}.text`, 'An option')
    })
    if (!q.options.some((o) => o.correct)) {
      throw HttpError.unprocessable('no_correct_option', `questions.${i}: mark at least one option correct`, {
        [`questions.${i}.options`]: 'Mark at least one option correct',
      })
    }
    return { id: i + 1, text, options: q.options.map((o) => ({ id: ++optionId, text: o.text.trim(), correct: o.correct })) }
  })
}

interface ContentFields {
  title: string
  slug: string
  body: string
  categoryId: number
  published: boolean
  type?: ContentType
  summary?: string
  slides?: string | null
  questions?: StoredQuestion[]
}

function contentFields(input: ContentInput): ContentFields {
  const title = input.title.trim()
  if (!title) blank('title', 'The title')
  return {
    title,
    slug: checkSlug(input.slug),
    body: input.body,
    categoryId: input.categoryId,
    published: input.published ?? true,
    type: input.type,
    summary: input.summary?.trim(),
    slides: input.slides === undefined ? undefined : input.slides?.trim() ? input.slides : null,
    questions: input.questions === undefined ? undefined : numberQuestions(input.questions),
  }
}

async function checkCategory(core: Core, categoryId: number): Promise<void> {
  const [row] = await core.db.sql`select id from clinical.learning_categories where id = ${categoryId} for share`
  if (!row) throw HttpError.unprocessable('unknown_category', 'categoryId: no such category', { categoryId: 'No such category' })
}

/**
 * Creates content (published unless `published: false`) and indexes it for search in the same unit of work: the text
 * is embedded first, so a failing embedding model (502/503) stores nothing. 409 `slug_taken`; 422 for an unknown
 * category or a question without a correct option.
 */
export async function createContent(core: Core, input: ContentInput, authorId: number | null): Promise<{ id: number }> {
  const f = contentFields(input)
  const summary = f.summary || summaryOf(f.body || f.slides || '')
  const slides = f.slides ?? null
  const embedded = await embedContent(core, { title: f.title, summary, body: f.body, slides })
  const now = new Date(core.now())
  try {
    return await core.transaction(async (tx) => {
      await checkCategory(tx, f.categoryId)
      const [row] = await tx.db.sql<{ id: number }>`
        insert into clinical.learning_content
          (category_id, title, slug, type, summary, body, slides, questions, published, published_at, author_id, created_at, updated_at)
        values (${f.categoryId}, ${f.title}, ${f.slug}, ${f.type ?? 'article'}, ${summary}, ${f.body}, ${slides},
          ${{ value: f.questions ?? [] }}::jsonb -> 'value', ${f.published}, ${f.published ? now : null}, ${authorId}, ${now}, ${now})
        returning id`
      await storeContentVectors(tx, row!.id, embedded)
      return { id: row!.id }
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw contentSlugTaken()
    throw err
  }
}

/**
 * Replaces content with an author's input and re-indexes it. `published` is true when absent, a blank or absent
 * `summary` is made from the body again; `questions`, `type` and `slides` keep their stored values when absent.
 * Readers' progress is kept. 404 unknown id, 409 `slug_taken`, 422 as for create.
 */
export async function updateContent(core: Core, id: number, input: ContentInput): Promise<void> {
  const f = contentFields(input)
  const [current] = await core.db.sql<{ slides: string | null }>`select slides from clinical.learning_content where id = ${id}`
  if (!current) throw contentNotFound()
  const slides = f.slides === undefined ? current.slides : f.slides
  const summary = f.summary || summaryOf(f.body || slides || '')
  const embedded = await embedContent(core, { title: f.title, summary, body: f.body, slides })
  const now = new Date(core.now())
  try {
    await core.transaction(async (tx) => {
      await checkCategory(tx, f.categoryId)
      const rows = await tx.db.sql`
        update clinical.learning_content set
          category_id = ${f.categoryId}, title = ${f.title}, slug = ${f.slug},
          type = coalesce(${f.type ?? null}::text, type), summary = ${summary}, body = ${f.body}, slides = ${slides},
          questions = case when ${f.questions !== undefined} then ${{ value: f.questions ?? [] }}::jsonb -> 'value' else questions end,
          published = ${f.published},
          published_at = case when ${f.published} then coalesce(published_at, ${now}) else published_at end,
          updated_at = ${now}
        where id = ${id}
        returning id`
      if (rows.length === 0) throw contentNotFound()
      await storeContentVectors(tx, id, embedded)
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw contentSlugTaken()
    throw err
  }
}

/** Deletes content with its readers' progress and submissions, and its vectors. 404 unknown id. */
export async function deleteContent(core: Core, id: number): Promise<void> {
  await core.transaction(async (tx) => {
    const rows = await tx.db.sql`delete from clinical.learning_content where id = ${id} returning id`
    if (rows.length === 0) throw contentNotFound()
    await unindexContent(tx, id)
  })
}

/** The questions column as stored (anything but an array counts as none). */
export const storedQuestions = (value: unknown): StoredQuestion[] => (Array.isArray(value) ? (value as StoredQuestion[]) : [])

// ---- what authors see (for the authoring routes) ----------------------------------------------------------

export interface AuthorContent {
  id: number
  title: string
  slug: string
  type: ContentType
  summary: string
  body: string
  slides: string | null
  categoryId: number
  category: string
  /** With `correct` on every option. */
  questions: StoredQuestion[]
  published: boolean
  published_at: string | null
  author_id: number | null
  created_at: string
  updated_at: string
}

/** One content, published or not, as its authors edit it; 404 unknown id. */
export async function getContentForAuthor(core: Core, id: number): Promise<AuthorContent> {
  const [row] = await core.db.sql<Omit<AuthorContent, 'questions' | 'published_at' | 'created_at' | 'updated_at'> & {
    questions: unknown; published_at: Date | null; created_at: Date; updated_at: Date
  }>`
    select c.id, c.title, c.slug, c.type, c.summary, c.body, c.slides, c.category_id as "categoryId", k.name as category,
      c.questions, c.published, c.published_at, c.author_id, c.created_at, c.updated_at
    from clinical.learning_content c
    join clinical.learning_categories k on k.id = c.category_id
    where c.id = ${id}`
  if (!row) throw contentNotFound()
  return {
    ...row, questions: storedQuestions(row.questions), published_at: row.published_at ? iso(row.published_at) : null,
    created_at: iso(row.created_at), updated_at: iso(row.updated_at),
  }
}

export interface AuthorContentListing {
  id: number
  title: string
  slug: string
  type: ContentType
  categoryId: number
  category: string
  published: boolean
  question_count: number
  created_at: string
  updated_at: string
}

/** Every content, published or not, the most recently changed first (no bodies). */
export async function listContentForAuthors(core: Core): Promise<AuthorContentListing[]> {
  const rows = await core.db.sql<Omit<AuthorContentListing, 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date }>`
    select c.id, c.title, c.slug, c.type, c.category_id as "categoryId", k.name as category, c.published,
      jsonb_array_length(c.questions)::int as question_count, c.created_at, c.updated_at
    from clinical.learning_content c
    join clinical.learning_categories k on k.id = c.category_id
    order by c.updated_at desc, c.id desc`
  return rows.map((r) => ({ ...r, created_at: iso(r.created_at), updated_at: iso(r.updated_at) }))
}

/**
 * The hub's figures: content (published or not), categories, quiz submissions, and the average score of those
 * submissions as a percentage of their questions (0 to 100, one decimal; 0 when there are none).
 */
export async function learningStats(core: Core): Promise<{ totalContent: number; totalCategories: number; totalQuizSubmissions: number; averageScore: number }> {
  const [row] = await core.db.sql<{ content: number; categories: number; submissions: number; average: string | null }>`
    select
      (select count(*) from clinical.learning_content)::int as content,
      (select count(*) from clinical.learning_categories)::int as categories,
      (select count(*) from clinical.learning_quiz_submissions)::int as submissions,
      (select round(avg(100.0 * score / total), 1) from clinical.learning_quiz_submissions) as average`
  return {
    totalContent: row!.content, totalCategories: row!.categories, totalQuizSubmissions: row!.submissions,
    averageScore: row!.average === null ? 0 : Number(row!.average),
  }
}

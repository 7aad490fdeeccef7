// The studio editor's form read back: the loose form body (strings, the quiz under `questions.<n>.…` names, see
// studio-questions.tsx) as the editor's values, and those values as the services' ContentInput, checked against the
// model with each message keyed as the form's fields are. Also the suggestions the page makes: a slug from a title,
// a title from generated markdown.
import type { TSchema } from '@sinclair/typebox'
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import { HttpError } from '../../../src/core/errors'
import { INT4_MAX } from '../../../src/core/schema'
import type { Errors } from '../../../views/layout'
import { CategoryInput, ContentInput, OPTIONS_MAX, OPTIONS_MIN, QUESTIONS_MAX, SLUG_MAX, TITLE_MAX } from '../model'
import { summaryOf, type AuthorContent } from '../service'
import type { EditorValues } from './studio-editor'
import type { QuestionDraft } from './studio-questions'

export const rowId = (value: string | undefined): number | null =>
  value && /^\d{1,10}$/.test(value) && Number(value) >= 1 && Number(value) <= INT4_MAX ? Number(value) : null

/** The posted quiz in order; blank options and blank questions (no text, no option) are left out. */
export function quizOf(f: Record<string, string>): QuestionDraft[] {
  const drafts = new Map<number, { text: string; options: Map<number, { text: string; correct: boolean }> }>()
  for (const [key, value] of Object.entries(f)) {
    const m = /^questions\.(\d{1,4})\.(?:text|options\.(\d{1,4})\.(text|correct))$/.exec(key)
    if (!m) continue
    const q = drafts.get(Number(m[1])) ?? { text: '', options: new Map() }
    drafts.set(Number(m[1]), q)
    if (m[2] === undefined) q.text = value
    else {
      const o = q.options.get(Number(m[2])) ?? { text: '', correct: false }
      q.options.set(Number(m[2]), o)
      if (m[3] === 'text') o.text = value
      else o.correct = value === 'true'
    }
  }
  const byKey = <T>(map: Map<number, T>) => [...map.entries()].sort(([a], [b]) => a - b).map(([, v]) => v)
  return byKey(drafts)
    .map((q) => ({ text: q.text, options: byKey(q.options).filter((o) => o.text.trim() !== '') }))
    .filter((q) => q.text.trim() !== '' || q.options.length > 0)
}

export function valuesOf(f: Record<string, string>): EditorValues {
  const type = f.type === 'presentation' ? 'presentation' : 'article'
  return {
    title: f.title ?? '', slug: f.slug ?? '', categoryId: f.categoryId ?? '', type, summary: f.summary ?? '',
    published: f.published === 'true', body: f.body ?? '', slides: f.slides ?? '', questions: quizOf(f),
    instructions: f.instructions ?? '', refineTarget: f.refine_target === 'slides' ? 'slides' : 'body', model: f.model ?? '',
  }
}

export const valuesOfContent = (c: AuthorContent, model: string): EditorValues => ({
  title: c.title, slug: c.slug, categoryId: String(c.categoryId), type: c.type, published: c.published,
  // a summary the service made from the text shows blank, so a save makes it again from the text as it is then
  summary: c.summary === summaryOf(c.body || c.slides || '') ? '' : c.summary,
  body: c.body, slides: c.slides ?? '', questions: c.questions.map((q) => ({ text: q.text, options: q.options.map((o) => ({ text: o.text, correct: o.correct })) })),
  instructions: '', refineTarget: c.type === 'presentation' ? 'slides' : 'body', model,
})

export const newValues = (type: string | undefined, model: string): EditorValues => ({
  ...valuesOf({ type: type ?? 'article', refine_target: type === 'presentation' ? 'slides' : 'body', model }), published: true,
})

/** A slug made from a title: the suggestion studio.js makes too. */
export const slugOf = (text: string) =>
  text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, SLUG_MAX).replace(/-+$/, '')

/** A message for each rule of a model the form breaks, keyed as the form's fields are (`questions.0.options`). */
function modelErrors(schema: TSchema, input: unknown): Errors {
  const errors: Errors = {}
  for (const e of Value.Errors(schema, input)) {
    const key = e.path.replace(/^\//, '').replaceAll('/', '.')
    const rule = e.schema as { maxLength?: number }
    errors[key] ??= e.type === ValueErrorType.StringMaxLength ? `At most ${rule.maxLength} characters`
      : e.type === ValueErrorType.StringMinLength ? 'Required'
        : e.type === ValueErrorType.ArrayMinItems ? `Give at least ${OPTIONS_MIN} options`
          : e.type === ValueErrorType.ArrayMaxItems ? (key === 'questions' ? `At most ${QUESTIONS_MAX} questions` : `At most ${OPTIONS_MAX} options`)
            : key === 'categoryId' ? 'Choose a category' : e.message
  }
  return errors
}

export function contentInput(v: EditorValues): ContentInput {
  const input: ContentInput = {
    title: v.title, slug: v.slug.trim(), body: v.body, categoryId: rowId(v.categoryId) ?? 0, questions: v.questions,
    published: v.published, type: v.type, summary: v.summary, slides: v.slides,
  }
  return checked(ContentInput, input)
}

/** A category as the studio's category forms post it. */
export const categoryInput = (f: Record<string, string>): CategoryInput =>
  checked(CategoryInput, { name: f.name ?? '', slug: (f.slug ?? '').trim(), description: f.description ?? '' })

function checked<T>(schema: TSchema, input: T): T {
  const errors = modelErrors(schema, input)
  if (Object.keys(errors).length > 0) throw HttpError.unprocessable('invalid_fields', 'Check the fields marked below.', errors)
  return input
}

/** The title of generated markdown: its first heading, else the topic. */
export const titleOf = (markdown: string, topic: string) =>
  (/^\s{0,3}#{1,2}\s+(.+?)[\s#]*$/m.exec(markdown)?.[1] ?? topic).replace(/[*_`]/g, '').trim().slice(0, TITLE_MAX)

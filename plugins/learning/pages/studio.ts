// The author's studio pages (moderators and admins; anyone else gets the 403 page): /studio (the hub's figures, the
// content list, "Write with AI"), /studio/categories (add, click-to-edit, delete with a confirm step), the editor at
// /studio/new and /studio/:id (save, delete with a confirm step, slide preview, refine with AI, PowerPoint download).
// Every form works without JavaScript (Post/Redirect/Get, or the page again with everything kept); htmx asks for
// fragments on top. The rules stay in the services; here the loose form body becomes their input.
//
// A refused form answers 422 with its messages by the fields, whatever the cause (a rule, a slug clash the API
// answers 409 slug_taken, a category in use, the AI service unavailable or failing): htmx swaps 422 only
// (views/layout.tsx), so the message shows with and without JavaScript, and the author's text is never lost.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { RowId } from '../../../src/core/schema'
import { bodyLimits, type BodyLimit } from '../../../src/envelope'
import { isFragment, sizeInWords, type Errors, type Flash } from '../../../views/layout'
import { FormBody, formFields, html, noticeOf, redirect } from '../../../views/page'
import { clinicalPageKit } from '../../clinical/pages/common'
import { hasRole, modelListing, type ClinicalUser } from '../../clinical/exports'
import type { LearningState } from '../index'
import {
  INSTRUCTIONS_MAX, PPTX_TITLE_MAX, REFERENCE_FILE_MAX_BYTES, REFERENCE_FILES_MAX, SLIDES_MAX, TOPIC_MAX, type CategoryListEntry,
} from '../model'
import * as learning from '../service'
import { auditAuthoring, generateContent, refineContent, type AuthoringAction } from '../service-authoring'
import { buildPptx, PPTX_CONTENT_TYPE, pptxContentDisposition } from '../service-pptx'
import { renderSlides } from '../service-slides'
import { StudioPage, editorUrl, type GenerateState, type ModelChoices, type StudioView } from '../views/studio'
import {
  CategoriesContent, CategoriesPage, CategoryConfirmRow, CategoryDeletePage, CategoryEditRow, CategoryRow, type CategoriesView, type CategoryValues,
} from '../views/studio-categories'
import {
  BodyField, DeletePage, EditorPage, PreviewOob, RefineBox, SlidePreview, SlidesField, type EditorView, type StoredContent,
} from '../views/studio-editor'
import { categoryInput, contentInput, newValues, rowId, slugOf, titleOf, valuesOf, valuesOfContent } from '../views/studio-form'

/** The editor posts two texts of up to 200,000 characters and a quiz, urlencoded (a character may take 9 bytes). */
export const STUDIO_FORM_LIMIT: BodyLimit = { bytes: 8 * 1024 * 1024, code: 'form_too_large', message: 'The form is too large to send' }
/** "Write with AI" posts its reference files with the form. */
export const GENERATE_FORM_LIMIT: BodyLimit = {
  bytes: REFERENCE_FILES_MAX * REFERENCE_FILE_MAX_BYTES + 1024 * 1024, code: 'files_too_large',
  message: `The reference files are too large: at most ${REFERENCE_FILES_MAX} files of ${sizeInWords(REFERENCE_FILE_MAX_BYTES)} each`,
}

/** Notices of the Post/Redirect/Get answers, by the `notice` query value: fixed texts, never the query's. */
const NOTICES: Record<string, string> = {
  created: 'The content is saved.',
  saved: 'Saved.',
  deleted: 'The content was deleted.',
  added: 'The category was added.',
  'category-saved': 'The category was saved.',
  'category-deleted': 'The category was deleted.',
}
const NoticeQuery = t.Object({ notice: t.Optional(t.String()), type: t.Optional(t.String()) })
const IdParams = t.Object({ id: RowId() })

/** What the AI service's failures mean to an author (their 5xx messages are written for logs). */
const AI_WORDS: Record<string, string> = {
  ai_not_configured: 'Writing with AI is not available: no AI service is configured on this server.',
  ai_unreachable: 'The AI service could not be reached or answered with an error. Try again in a moment.',
  ai_timeout: 'The AI service did not answer in time. Try again in a moment.',
  ai_invalid_output: 'The AI service gave an answer that could not be used. Try again.',
}
const SLUG_TAKEN: Record<'content' | 'category', string> = {
  content: 'Other content already has this slug: choose another.',
  category: 'Another category already has this slug: choose another.',
}

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`)

/** A refusal as a form shows it: messages by their fields, and one line for the form. Anything else propagates. */
function refusalOf(err: unknown, what: 'content' | 'category' = 'content'): { errors?: Errors; message: string } {
  if (!(err instanceof HttpError)) throw err
  if (err.code === 'slug_taken') return { errors: { slug: SLUG_TAKEN[what] }, message: SLUG_TAKEN[what] }
  if (err.code === 'unknown_model' || err.code === 'model_disabled') return { errors: { model: err.message }, message: sentence(err.message) }
  if (err.status >= 500) return { message: AI_WORDS[err.code] ?? 'The request failed. Try again in a moment.' }
  if (err.status === 404) throw err
  return { errors: err.fields, message: err.fields ? 'Check the fields marked below.' : sentence(err.message) }
}
const invalid = (errors: Errors) => HttpError.unprocessable('invalid_fields', 'Check the fields marked below.', errors)

const previewOf = (markdown: string) => (markdown.trim() && markdown.length <= SLIDES_MAX ? renderSlides(markdown) : null)

/** The files of a multipart field: one, several or none (a form sent without a file chosen has an empty, nameless part). */
const filesOf = (value: unknown): File[] =>
  (Array.isArray(value) ? value : [value]).filter((v): v is File => v instanceof File && (v.size > 0 || !!v.name))

// ---- the controller -----------------------------------------------------------------------------------------------

export const studioPages = (state: LearningState) => {
  const { core } = state
  const base = core.config.clinicalBasePath
  const home = `${base}/studio`

  const author = (user: ClinicalUser) => {
    if (!hasRole(user, 'moderator')) throw HttpError.forbidden('insufficient_role', 'The studio is for moderators and admins.')
  }
  const audit = (user: ClinicalUser, request: Request, action: AuthoringAction, details: Record<string, unknown>) =>
    auditAuthoring(state.clinical.audit, { id: user.id, ip: core.clientAddress(request) }, action, details)
  const listing = async (): Promise<ModelChoices> => {
    const l = await modelListing(core)
    return { provider: l.provider, models: l.models, defaultModel: l.defaultModel ?? l.models[0]?.id ?? null }
  }

  const studio = async (user: ClinicalUser, parts: Partial<StudioView> = {}, status = 200) => {
    const [stats, items, models] = await Promise.all([learning.learningStats(core), learning.listContentForAuthors(core), listing()])
    return html(StudioPage({ base, user, stats, items, models, ...parts }), { status })
  }

  type EditorParts = Omit<EditorView, 'base' | 'categories' | 'models'> & { flash?: Flash }
  const editor = async (user: ClinicalUser, parts: EditorParts, status = 200) => {
    const [categories, models] = await Promise.all([learning.listCategories(core), listing()])
    const preview = parts.preview !== undefined ? parts.preview : previewOf(parts.values.slides)
    return html(EditorPage({ base, user, categories, models, ...parts, preview }), { status })
  }

  const storedOf = (c: learning.AuthorContent): StoredContent => ({ id: c.id, title: c.title, slug: c.slug, published: c.published })
  /** The content a posted editor form belongs to (the URL's id, else its hidden `id`); null for new or gone content. */
  const formState = async (f: Record<string, string>, id: number | null = rowId(f.id)) => {
    const values = valuesOf(f)
    if (id === null) return { values, stored: null }
    try {
      return { values, stored: storedOf(await learning.getContentForAuthor(core, id)) }
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) return { values, stored: null }
      throw err
    }
  }

  const save = async (user: ClinicalUser, request: Request, body: unknown, id: number | null) => {
    const f = formFields(body)
    const values = valuesOf(f)
    const stored = id === null ? null : storedOf(await learning.getContentForAuthor(core, id))
    try {
      const input = contentInput(values)
      if (id !== null) {
        await learning.updateContent(core, id, input)
        audit(user, request, 'learning_content_updated', { contentId: id })
        return redirect(`${editorUrl(base, id)}?notice=saved`)
      }
      const created = await learning.createContent(core, input, user.id)
      audit(user, request, 'learning_content_created', { contentId: created.id, type: input.type })
      return redirect(`${editorUrl(base, created.id)}?notice=created`)
    } catch (err) {
      const { errors, message } = refusalOf(err)
      return editor(user, { values, stored, errors, message: `Not saved. ${message}` }, 422)
    }
  }

  const refine = async (user: ClinicalUser, request: Request, body: unknown, id: number | null) => {
    const f = formFields(body)
    const { values: v, stored } = await formState(f, id)
    const target = v.refineTarget
    const fragment = isFragment(request)
    try {
      const errors: Errors = {}
      if (!v.instructions.trim()) errors.instructions = 'Write what to change'
      else if (v.instructions.length > INSTRUCTIONS_MAX) errors.instructions = `At most ${INSTRUCTIONS_MAX} characters`
      if (!v[target].trim()) errors.refineTarget = target === 'slides' ? 'The slide text is empty: write it first' : 'The text is empty: write it first'
      if (Object.keys(errors).length > 0) throw invalid(errors)
      const { content, model } = await refineContent(core, user.id, { body: v[target], instructions: v.instructions.trim(), model: v.model || null })
      audit(user, request, 'learning_content_refined', { contentId: stored?.id ?? null, target, model })
      const values = { ...v, [target]: content }
      const notice = `${target === 'slides' ? 'The slide text' : 'The text'} is refined: check the changes, then save.`
      if (!fragment) return editor(user, { values, stored, flash: { kind: 'ok', text: notice } })
      const models = await listing()
      const box = await RefineBox({ base, values, stored, models, refine: { notice } })
      const oob = target === 'slides'
        ? [await SlidesField({ base, values, oob: true }), await PreviewOob({ preview: previewOf(content) })]
        : [await BodyField({ values, oob: true })]
      return html([box, ...oob].join(''))
    } catch (err) {
      const refusal = refusalOf(err)
      const message = refusal.message
      // the service names the text it refines `body`, whichever of the two it is
      const { body: textError, ...others } = refusal.errors ?? {}
      const errors = textError ? { ...others, refineTarget: textError } : refusal.errors
      if (fragment) return html(RefineBox({ base, values: v, stored, models: await listing(), errors, refine: { message: `Not refined. ${message}` } }), { status: 422 })
      return editor(user, { values: v, stored, errors, flash: { kind: 'error', text: `Not refined. ${message}` } }, 422)
    }
  }

  const categoriesView = async (parts: Partial<CategoriesView> = {}): Promise<CategoriesView> =>
    ({ base, categories: await learning.listCategories(core), ...parts })
  const categoryOf = async (id: number): Promise<CategoryListEntry> => {
    const c = (await learning.listCategories(core)).find((k) => k.id === id)
    if (!c) throw learning.categoryNotFound()
    return c
  }
  const categoryValues = (f: Record<string, string>): CategoryValues => ({ name: f.name ?? '', slug: f.slug ?? '', description: f.description ?? '' })
  const categoryRefusal = (values: CategoryValues, err: unknown) => {
    const { errors, message } = refusalOf(err, 'category')
    return { values, errors, message: errors ? undefined : message }
  }

  const authorRoute = { signedIn: true as const }
  const formRoute = { signedIn: true as const, body: FormBody, bodyLimit: STUDIO_FORM_LIMIT }
  const idRoute = { signedIn: true as const, params: IdParams }

  return new Elysia()
    .use(clinicalPageKit(state.clinical))
    .use(bodyLimits)

    // ---- the studio ----
    .get('/studio', ({ user, query }) => {
      author(user)
      return studio(user, { flash: noticeOf(NOTICES, query.notice) })
    }, { ...authorRoute, query: NoticeQuery })
    .post('/studio/generate', async ({ user, request, body }) => {
      author(user)
      const f = formFields(body)
      const files = filesOf((body as Record<string, unknown> | undefined)?.files)
      const generate: GenerateState = { topic: f.topic ?? '', type: f.type === 'presentation' ? 'presentation' : 'article', model: f.model ?? '' }
      const type = generate.type as 'article' | 'presentation'
      try {
        const errors: Errors = {}
        if (!generate.topic.trim()) errors.topic = 'Write the topic'
        else if (generate.topic.length > TOPIC_MAX) errors.topic = `At most ${TOPIC_MAX} characters`
        if (files.length > REFERENCE_FILES_MAX) errors.files = `At most ${REFERENCE_FILES_MAX} files`
        else if (files.some((file) => file.size > REFERENCE_FILE_MAX_BYTES)) errors.files = `Each file may be at most ${sizeInWords(REFERENCE_FILE_MAX_BYTES)}`
        if (Object.keys(errors).length > 0) throw invalid(errors)
        const { content, model } = await generateContent(core, user.id, { topic: generate.topic.trim(), type, model: generate.model || null, files })
        audit(user, request, 'learning_content_generated', { type, model, files: files.length })
        const title = titleOf(content, generate.topic.trim())
        const values = { ...newValues(type, generate.model), title, slug: slugOf(title), [type === 'presentation' ? 'slides' : 'body']: content }
        return editor(user, { values, stored: null, flash: { kind: 'ok', text: 'Written with AI and not saved yet: check the text, choose a category, then save.' } })
      } catch (err) {
        const refusal = refusalOf(err)
        // a file the service cannot use (too large, not PDF or text) is said by the file field
        const fileRefused = err instanceof HttpError && (err.status === 413 || err.status === 415)
        const errors = fileRefused ? { files: refusal.message } : refusal.errors
        const again = files.length > 0 ? ' Choose the reference files again.' : ''
        return studio(user, { generate: { ...generate, errors, message: `Nothing was written. ${refusal.message}${again}` } }, 422)
      }
    }, { signedIn: true, body: FormBody, bodyLimit: GENERATE_FORM_LIMIT })

    // ---- categories ----
    .get('/studio/categories', async ({ user, query }) => {
      author(user)
      return html(CategoriesPage({ ...(await categoriesView()), user, flash: noticeOf(NOTICES, query.notice) }))
    }, { ...authorRoute, query: NoticeQuery })
    .post('/studio/categories', async ({ user, request, body }) => {
      author(user)
      const f = formFields(body)
      const values = categoryValues(f)
      try {
        const { id } = await learning.createCategory(core, categoryInput(f))
        audit(user, request, 'learning_category_created', { categoryId: id })
        if (!isFragment(request)) return redirect(`${home}/categories?notice=added`)
        return html(CategoriesContent(await categoriesView({ notice: NOTICES.added })))
      } catch (err) {
        const view = await categoriesView({ add: categoryRefusal(values, err) })
        return html(isFragment(request) ? CategoriesContent(view) : CategoriesPage({ ...view, user }), { status: 422 })
      }
    }, { signedIn: true, body: FormBody })
    .get('/studio/categories/:id', async ({ user, request, params }) => {
      author(user)
      const c = await categoryOf(params.id)
      return isFragment(request) ? html(CategoryRow({ base, c })) : redirect(`${home}/categories#category-${c.id}`)
    }, idRoute)
    .get('/studio/categories/:id/edit', async ({ user, request, params }) => {
      author(user)
      const c = await categoryOf(params.id)
      const editState = { values: { name: c.name, slug: c.slug, description: c.description } }
      if (isFragment(request)) return html(CategoryEditRow({ base, id: c.id, state: editState }))
      return html(CategoriesPage({ ...(await categoriesView({ editing: { id: c.id, state: editState } })), user }))
    }, idRoute)
    .post('/studio/categories/:id', async ({ user, request, params, body }) => {
      author(user)
      const f = formFields(body)
      const values = categoryValues(f)
      try {
        await learning.updateCategory(core, params.id, categoryInput(f))
        audit(user, request, 'learning_category_updated', { categoryId: params.id })
        if (!isFragment(request)) return redirect(`${home}/categories?notice=category-saved#category-${params.id}`)
        return html(CategoryRow({ base, c: await categoryOf(params.id), saved: true }))
      } catch (err) {
        const editState = categoryRefusal(values, err)
        if (isFragment(request)) return html(CategoryEditRow({ base, id: params.id, state: editState }), { status: 422 })
        return html(CategoriesPage({ ...(await categoriesView({ editing: { id: params.id, state: editState } })), user }), { status: 422 })
      }
    }, { ...idRoute, body: FormBody })
    .get('/studio/categories/:id/delete', async ({ user, request, params }) => {
      author(user)
      const c = await categoryOf(params.id)
      return html(isFragment(request) ? CategoryConfirmRow({ base, c }) : CategoryDeletePage({ base, user, c }))
    }, idRoute)
    .post('/studio/categories/:id/delete', async ({ user, request, params }) => {
      author(user)
      try {
        await learning.deleteCategory(core, params.id)
        audit(user, request, 'learning_category_deleted', { categoryId: params.id })
        if (!isFragment(request)) return redirect(`${home}/categories?notice=category-deleted`)
        return html(CategoriesContent(await categoriesView({ notice: NOTICES['category-deleted'] })))
      } catch (err) {
        if (!(err instanceof HttpError) || err.code !== 'category_in_use') throw err
        const error = `${err.message}: it still holds content, published or held back.`
        if (isFragment(request)) return html(CategoriesContent(await categoriesView({ confirming: { id: params.id, error } })), { status: 422 })
        return html(CategoryDeletePage({ base, user, c: await categoryOf(params.id), error }), { status: 422 })
      }
    }, { ...idRoute, body: FormBody })

    // ---- the editor ----
    .get('/studio/new', async ({ user, query }) => {
      author(user)
      const models = await listing()
      return editor(user, { values: newValues(query.type, models.defaultModel ?? ''), stored: null })
    }, { ...authorRoute, query: NoticeQuery })
    .post('/studio/new', ({ user, request, body }) => {
      author(user)
      return save(user, request, body, null)
    }, formRoute)
    .post('/studio/preview', async ({ user, request, body }) => {
      author(user)
      const f = formFields(body)
      const preview = previewOf(f.slides ?? '')
      if (isFragment(request)) return html(SlidePreview({ preview }))
      return editor(user, { ...(await formState(f)), preview })
    }, formRoute)
    .post('/studio/refine', ({ user, request, body }) => {
      author(user)
      return refine(user, request, body, null)
    }, formRoute)
    .post('/studio/pptx', async ({ user, body }) => {
      author(user)
      const f = formFields(body)
      const v = valuesOf(f)
      const deck = v.slides.trim() ? v.slides : v.type === 'presentation' ? v.body : ''
      const problem = !deck.trim() ? 'There are no slides to download yet: write the slide text first.'
        : deck.length > SLIDES_MAX ? `The slide text is too long: at most ${SLIDES_MAX} characters.` : null
      if (problem) return editor(user, { ...(await formState(f)), errors: { slides: problem }, message: problem }, 422)
      const title = (v.title.trim() || 'Slides').slice(0, PPTX_TITLE_MAX)
      try {
        const file = await buildPptx(deck, title)
        return new Response(file as Uint8Array<ArrayBuffer>, {
          headers: {
            'content-type': PPTX_CONTENT_TYPE, 'content-disposition': pptxContentDisposition(title), 'cache-control': 'private, no-store',
          },
        })
      } catch (err) {
        const { message } = refusalOf(err)
        return editor(user, { ...(await formState(f)), errors: { slides: message }, message: `No PowerPoint file. ${message}` }, 422)
      }
    }, formRoute)
    // A form post leaves its address in the address bar: a reload (a GET) lands in the studio, never on a 404.
    .get('/studio/generate', () => redirect(home), authorRoute)
    .get('/studio/preview', () => redirect(home), authorRoute)
    .get('/studio/refine', () => redirect(`${home}/new`), authorRoute)
    .get('/studio/pptx', () => redirect(home), authorRoute)

    .get('/studio/:id', async ({ user, params, query }) => {
      author(user)
      const c = await learning.getContentForAuthor(core, params.id)
      const models = await listing()
      return editor(user, { values: valuesOfContent(c, models.defaultModel ?? ''), stored: storedOf(c), flash: noticeOf(NOTICES, query.notice) })
    }, { ...idRoute, query: NoticeQuery })
    .post('/studio/:id', ({ user, request, params, body }) => {
      author(user)
      return save(user, request, body, params.id)
    }, { ...formRoute, params: IdParams })
    .post('/studio/:id/refine', ({ user, request, params, body }) => {
      author(user)
      return refine(user, request, body, params.id)
    }, { ...formRoute, params: IdParams })
    .get('/studio/:id/refine', ({ params }) => redirect(editorUrl(base, params.id)), idRoute)
    .get('/studio/:id/delete', async ({ user, params }) => {
      author(user)
      const c = await learning.getContentForAuthor(core, params.id)
      return html(DeletePage({ base, user, stored: { ...storedOf(c), type: c.type } }))
    }, idRoute)
    .post('/studio/:id/delete', async ({ user, request, params }) => {
      author(user)
      await learning.deleteContent(core, params.id)
      audit(user, request, 'learning_content_deleted', { contentId: params.id })
      return redirect(`${home}?notice=deleted`)
    }, { ...idRoute, body: FormBody })
}

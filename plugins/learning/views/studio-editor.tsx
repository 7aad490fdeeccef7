// The studio's editor of one article or presentation: what it is (title, slug, category, type, summary, published),
// its markdown body, its slide deck beside a live preview, "Refine with AI", "Download PowerPoint" and its quiz
// (studio-questions.tsx). One plain form: every button posts it to a page route (formaction) that answers the
// editor again with everything kept, or Post/Redirect/Get after a save, so it all works without JavaScript. htmx
// adds the preview as you type and swaps only the refined text; studio.js suggests the slug and edits the quiz.
// The form is not boosted: the PowerPoint answer is a download. Every user or database string is a `safe` text child
// or an attribute; the deck's HTML and CSS are Marp's (service-slides.ts makes them safe to inline).
import { describedBy, type Errors, Field, FieldNotes, type Flash, Problem } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'
import { BODY_MAX, INSTRUCTIONS_MAX, SLIDES_MAX, SLUG_MAX, SUMMARY_MAX, TITLE_MAX, type ContentType } from '../model'
import type { RenderedSlides } from '../service-slides'
import { QuizEditor, type QuestionDraft } from './studio-questions'
import {
  editorUrl, type ModelChoices, modelChoices, modelHint, readerUrl, Select, STUDIO_SCRIPTS, TextArea, typeChoices, typeWords,
} from './studio'

export type RefineTarget = 'body' | 'slides'

/** The editor's form as it was posted (or loaded): strings as typed, the quiz as drafts. */
export interface EditorValues {
  title: string
  slug: string
  categoryId: string
  type: ContentType
  summary: string
  published: boolean
  body: string
  slides: string
  questions: QuestionDraft[]
  instructions: string
  refineTarget: RefineTarget
  model: string
}

/** What is saved of the content being edited (null for new content). */
export interface StoredContent { id: number; title: string; slug: string; published: boolean }

export interface EditorView {
  base: string
  values: EditorValues
  stored: StoredContent | null
  categories: Array<{ id: number; name: string }>
  models: ModelChoices
  errors?: Errors
  /** Why the form was refused, at its top. */
  message?: string
  preview?: RenderedSlides | null
  /** The refine box's outcome. */
  refine?: { notice?: string; message?: string }
}

const SLUG_HINT = 'The address of the content: lowercase letters and digits in words joined by hyphens, e.g. inhaler-technique'
const BODY_HINT = 'Markdown. A presentation without slide text below shows this text as its deck.'
const SLIDES_HINT = 'Marp markdown: a line with --- starts the next slide; HTML comments are speaker notes.'

/** The deck as the preview shows it (the fragment of POST /studio/preview). */
export const SlidePreview = ({ preview }: { preview: RenderedSlides | null }) => {
  if (!preview) return <p class="muted">No slides yet: write the slide text, and the preview shows here.</p>
  const safeCss = preview.css
  const safeSlides = preview.slides.join('')
  return (
    <>
      <style>{safeCss}</style>
      <div class="marpit">{safeSlides}</div>
    </>
  )
}

export const BodyField = ({ values, errors, oob }: { values: EditorValues; errors?: Errors; oob?: boolean }) => (
  <div id="studio-body-field" hx-swap-oob={oob ? 'true' : undefined}>
    <TextArea id="studio-body" name="body" label="Text (markdown)" value={values.body} rows={16} max={BODY_MAX} error={errors?.body} hint={BODY_HINT} class="studio-text" />
  </div>
)

export const SlidesField = ({ base, values, errors, oob }: { base: string; values: EditorValues; errors?: Errors; oob?: boolean }) => (
  <div id="studio-slides-field" hx-swap-oob={oob ? 'true' : undefined}>
    <TextArea
      id="studio-slides" name="slides" label="Slide text (markdown)" value={values.slides} rows={20} max={SLIDES_MAX} error={errors?.slides}
      hint={SLIDES_HINT} class="studio-text"
      attrs={{
        'hx-post': `${base}/studio/preview`, 'hx-trigger': 'input changed delay:600ms', 'hx-target': '#studio-preview', 'hx-swap': 'innerHTML',
        'hx-include': '#studio-slides', 'hx-params': 'slides', 'hx-sync': 'this:replace',
      }}
    />
  </div>
)

/** The preview box's content swapped out of band after slides are refined with htmx. */
export const PreviewOob = ({ preview }: { preview: RenderedSlides | null }) => (
  <div id="studio-preview" hx-swap-oob="innerHTML"><SlidePreview preview={preview} /></div>
)

const refineUrl = (base: string, stored: StoredContent | null) => (stored ? `${editorUrl(base, stored.id)}/refine` : `${base}/studio/refine`)

/** "Refine with AI": the instructions, which text, the model; the fragment a refine answers with htmx. */
export const RefineBox = ({ base, values, stored, models, errors, refine }: Pick<EditorView, 'base' | 'values' | 'stored' | 'models' | 'errors' | 'refine'>) => {
  const url = refineUrl(base, stored)
  return (
    <div id="studio-refine" class="stack studio-refine">
      {refine?.notice ? <p class="flash ok" role="status" safe>{refine.notice}</p> : ''}
      <Problem text={refine?.message} />
      <TextArea
        id="studio-instructions" name="instructions" label="Instructions" value={values.instructions} rows={2} max={INSTRUCTIONS_MAX}
        error={errors?.instructions} hint="What to change, e.g. simpler words for parents, or add a slide on spacers"
      />
      <fieldset class="studio-choices" aria-describedby={describedBy('studio-refine-target', undefined, errors?.refineTarget)}>
        <legend>Text to refine</legend>
        <label class="choice" for="studio-refine-body">
          <input type="radio" id="studio-refine-body" name="refine_target" value="body" checked={values.refineTarget === 'body'} />
          <span>The text</span>
        </label>
        <label class="choice" for="studio-refine-slides">
          <input type="radio" id="studio-refine-slides" name="refine_target" value="slides" checked={values.refineTarget === 'slides'} />
          <span>The slide text</span>
        </label>
        <FieldNotes id="studio-refine-target" error={errors?.refineTarget} />
      </fieldset>
      <Select id="studio-model" name="model" label="AI model" value={values.model} options={modelChoices(models)} error={errors?.model} hint={modelHint(models)} />
      <div>
        <button type="submit" class="secondary" id="studio-refine-button" formaction={url} hx-post={url} hx-target="#studio-refine" hx-swap="outerHTML">
          Refine with AI
        </button>
      </div>
      <p class="muted">The refined text replaces the chosen text in the form; nothing is saved until you save.</p>
    </div>
  )
}

const CategoryField = ({ base, view }: { base: string; view: EditorView }) => {
  const { values, errors, categories } = view
  const options = [{ value: '', label: 'Choose a category' }, ...categories.map((c) => ({ value: String(c.id), label: c.name }))]
  const hint = categories.length === 0 ? 'There are no categories yet: add one on the Categories page first.' : undefined
  return (
    <div class="studio-category">
      <Select id="studio-category" name="categoryId" label="Category" value={values.categoryId} options={options} error={errors?.categoryId} hint={hint} />
      {categories.length === 0 ? <a href={`${base}/studio/categories`}>Add a category</a> : ''}
    </div>
  )
}

/** Each field a message may name: its control, and what the summary of messages calls it. */
const FIELD_TARGETS: Record<string, [string, string]> = {
  title: ['studio-title', 'Title'], slug: ['studio-slug', 'Slug'], categoryId: ['studio-category', 'Category'], type: ['studio-type', 'Type'],
  summary: ['studio-summary', 'Summary'], published: ['studio-published', 'Published'], body: ['studio-body', 'Text'],
  slides: ['studio-slides', 'Slide text'], instructions: ['studio-instructions', 'Instructions'], refineTarget: ['studio-refine-body', 'Text to refine'],
  model: ['studio-model', 'AI model'], questions: ['studio-quiz-hint', 'Quiz'],
}

function errorTarget(key: string): [string, string] {
  const m = /^questions\.(\d+)(?:\.(text|options)(?:\.(\d+)\.text)?)?$/.exec(key)
  if (!m) return FIELD_TARGETS[key] ?? ['studio-form', key]
  const q = Number(m[1])
  if (m[3] !== undefined) return [`studio-q-${q}-o-${m[3]}-text`, `Question ${q + 1}, option ${Number(m[3]) + 1}`]
  if (m[2] === 'options') return [`studio-q-${q}-options`, `Question ${q + 1}, options`]
  return m[2] === 'text' ? [`studio-q-${q}-text`, `Question ${q + 1}`] : [`studio-q-${q}`, `Question ${q + 1}`]
}

/** Why the form was refused, with a link to each field that says why: the form is long. */
const Problems = ({ message, errors }: { message?: string; errors?: Errors }) => {
  if (!message) return ''
  const entries = Object.entries(errors ?? {})
  return (
    <div class="flash error" role="alert" id="studio-problems">
      <p safe>{message}</p>
      {entries.length > 0 ? (
        <ul>
          {entries.map(([key, text]) => {
            const [id, label] = errorTarget(key)
            return <li><a href={`#${id}`} safe>{`${label}: ${text}`}</a></li>
          })}
        </ul>
      ) : ''}
    </div>
  )
}

const titleOf = (view: EditorView) =>
  view.stored ? `Edit “${view.stored.title}”` : `New ${typeWords(view.values.type).toLowerCase()}`

export const EditorMain = (view: EditorView) => {
  const { base, values, stored, errors } = view
  const save = stored ? editorUrl(base, stored.id) : `${base}/studio/new`
  // A presentation is mostly its deck: the slides come first, its text after them.
  const isDeck = values.type === 'presentation'
  const textSection = (
    <section aria-labelledby="studio-text-title">
      <h2 id="studio-text-title">Text</h2>
      <BodyField values={values} errors={errors} />
    </section>
  )
  return (
    <div id="studio-editor" class="studio-editor">
      <h1 safe>{titleOf(view)}</h1>
      <p class="actions">
        <a href={`${base}/studio`}>Back to the studio</a>
        {stored?.published ? <a href={readerUrl(base, stored.slug)}>View as a reader</a> : ''}
        {stored && !stored.published ? <span class="muted">Held back: readers do not see it yet.</span> : ''}
      </p>
      <Problems message={view.message} errors={errors} />
      <form id="studio-form" class="studio-form" action={save} method="post" hx-boost="false" data-base={base}>
        {/* Enter in a one-line field saves (a form's first submit button is its default). */}
        <button type="submit" class="visually-hidden" tabindex="-1" aria-hidden="true">Save</button>
        <input type="hidden" name="id" value={stored ? String(stored.id) : ''} />
        <section aria-labelledby="studio-about-title">
          <h2 id="studio-about-title">About</h2>
          <div class="studio-fields">
            <Field label="Title" name="title" id="studio-title" value={values.title} error={errors?.title} maxlength={TITLE_MAX} required />
            <label for="studio-slug">
              <span>Slug</span>
              <input
                id="studio-slug" name="slug" type="text" value={values.slug} maxlength={SLUG_MAX} required autocomplete="off" data-slug-from="studio-title"
                aria-invalid={errors?.slug ? 'true' : undefined} aria-describedby={describedBy('studio-slug', SLUG_HINT, errors?.slug)}
              />
              <FieldNotes id="studio-slug" hint={SLUG_HINT} error={errors?.slug} />
            </label>
            <CategoryField base={base} view={view} />
            <Select id="studio-type" name="type" label="Type" value={values.type} options={typeChoices} error={errors?.type} />
          </div>
          <TextArea
            id="studio-summary" name="summary" label="Summary (optional)" value={values.summary} rows={2} max={SUMMARY_MAX} error={errors?.summary}
            hint="Shown in the feed. Left blank, the start of the text is used."
          />
          <label class="choice studio-published" for="studio-published">
            <input type="checkbox" id="studio-published" name="published" value="true" checked={values.published} />
            <span>Published: readers see it at once</span>
          </label>
          <FieldNotes id="studio-published" error={errors?.published} />
        </section>
        {isDeck ? '' : textSection}
        <section aria-labelledby="studio-slides-title">
          <h2 id="studio-slides-title">Slides</h2>
          <div class="studio-deck">
            <div class="stack">
              <SlidesField base={base} values={values} errors={errors} />
              <div class="actions">
                <button type="submit" class="secondary" formaction={`${base}/studio/preview`}
                  hx-post={`${base}/studio/preview`} hx-target="#studio-preview" hx-swap="innerHTML" hx-params="slides">Preview slides</button>
                <button type="submit" class="secondary" formaction={`${base}/studio/pptx`}>Download PowerPoint</button>
              </div>
            </div>
            <div class="studio-preview-box">
              <h3 id="studio-preview-title">Preview</h3>
              <div id="studio-preview" class="studio-preview" role="region" aria-labelledby="studio-preview-title" tabindex="0">
                <SlidePreview preview={view.preview ?? null} />
              </div>
            </div>
          </div>
        </section>
        {isDeck ? textSection : ''}
        <section aria-labelledby="studio-refine-title">
          <h2 id="studio-refine-title">Refine with AI</h2>
          <RefineBox {...view} />
        </section>
        <section aria-labelledby="studio-quiz-title">
          <h2 id="studio-quiz-title">Quiz</h2>
          <QuizEditor questions={values.questions} errors={errors} />
        </section>
        <div class="actions studio-save">
          <button type="submit">{stored ? 'Save' : 'Save the new content'}</button>
          {stored ? <a href={`${editorUrl(base, stored.id)}/delete`}>Delete…</a> : ''}
          <a href={`${base}/studio`}>Cancel</a>
        </div>
      </form>
    </div>
  )
}

export const EditorPage = (view: EditorView & { user: NavUser; flash?: Flash }) => (
  <ClinicalLayout title={`${titleOf(view)} · Studio`} base={view.base} user={view.user} flash={view.flash} pageScripts={STUDIO_SCRIPTS}>
    <EditorMain {...view} />
  </ClinicalLayout>
)

/** Deleting content: the confirm step. */
export const DeletePage = (p: { base: string; user: NavUser; stored: StoredContent & { type: string } }) => (
  <ClinicalLayout title="Delete content · Studio" base={p.base} user={p.user}>
    <h1>Delete content</h1>
    <p safe>{`Delete the ${typeWords(p.stored.type).toLowerCase()} “${p.stored.title}” with its quiz and its readers' progress?`}</p>
    <p class="muted">It cannot be restored afterwards. To hide it from readers only, untick Published and save.</p>
    <form class="actions" action={`${editorUrl(p.base, p.stored.id)}/delete`} method="post">
      <button type="submit" class="danger">Delete for good</button>
      <a href={editorUrl(p.base, p.stored.id)}>No, keep it</a>
    </form>
  </ClinicalLayout>
)

// The author's studio (moderators and admins): the hub's figures, every content (published or held back) with a
// link to its editor, "New article" / "New presentation", and "Write with AI". The editor is studio-editor.tsx, the
// categories studio-categories.tsx; the pieces they share are here. Every user or database string is a `safe` text
// child or an attribute.
import { describedBy, type Errors, FieldNotes, type Flash, Problem, sizeInWords, When } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'
import {
  CONTENT_TYPES, REFERENCE_FILE_MAX_BYTES, REFERENCE_FILES_MAX, TOPIC_MAX, type ContentType,
} from '../model'
import type { AuthorContentListing } from '../service'

// ---- shared pieces -------------------------------------------------------------------------------------------

export const STUDIO_SCRIPTS = ['studio.js']

const TYPE_WORDS: Record<ContentType, string> = { article: 'Article', presentation: 'Presentation' }
export const typeWords = (type: string) => TYPE_WORDS[type as ContentType] ?? type
export const statusWords = (published: boolean) => (published ? 'Published' : 'Held back')

export const studioUrl = (base: string) => `${base}/studio`
export const editorUrl = (base: string, id: number) => `${base}/studio/${id}`
export const readerUrl = (base: string, slug: string) => `${base}/learning/read/${encodeURIComponent(slug)}`

/** The enabled models of the catalogue, as the AI forms offer them. */
export interface ModelChoices {
  provider: 'litellm' | 'none'
  models: Array<{ id: string; name: string; category: string }>
  defaultModel: string | null
}

/** A textarea's text: a leading newline, because the HTML parser drops the first one of the element's content. */
export const areaText = (value: string) => `\n${value}`

export interface ControlProps {
  id: string
  name: string
  label: string
  value: string
  error?: string
  hint?: string
  max?: number
  rows?: number
  attrs?: Record<string, string>
}

export const TextArea = (p: ControlProps & { class?: string }) => (
  <label for={p.id}>
    <span safe>{p.label}</span>
    <textarea
      id={p.id} name={p.name} rows={String(p.rows ?? 4)} maxlength={p.max} class={p.class}
      aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint, p.error)} {...p.attrs}
      safe
    >{areaText(p.value)}</textarea>
    <FieldNotes id={p.id} hint={p.hint} error={p.error} />
  </label>
)

export interface Choice { value: string; label: string }

/** A select; a value that is not among the options stays selectable, so a re-render never changes it. */
export const Select = (p: ControlProps & { options: Choice[] }) => {
  const known = p.value === '' || p.options.some((o) => o.value === p.value)
  const options = known ? p.options : [...p.options, { value: p.value, label: p.value }]
  return (
    <label for={p.id}>
      <span safe>{p.label}</span>
      <select id={p.id} name={p.name} aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint, p.error)} {...p.attrs}>
        {options.map((o) => <option value={o.value} selected={o.value === p.value ? true : undefined} safe>{o.label}</option>)}
      </select>
      <FieldNotes id={p.id} hint={p.hint} error={p.error} />
    </label>
  )
}

export const typeChoices: Choice[] = CONTENT_TYPES.map((t) => ({ value: t, label: typeWords(t) }))

export const modelChoices = (m: ModelChoices): Choice[] => m.models.length === 0
  ? [{ value: '', label: 'No model available' }]
  : m.models.map((x) => ({ value: x.id, label: `${x.name} (${x.category})` }))

export const modelHint = (m: ModelChoices) =>
  m.provider === 'none' || m.models.length === 0 ? 'Writing with AI is not available: no AI service or model is configured on this server.' : undefined

// ---- the studio ------------------------------------------------------------------------------------------------

export interface LearningFigures { totalContent: number; totalCategories: number; totalQuizSubmissions: number; averageScore: number }

const Figures = ({ stats }: { stats: LearningFigures }) => (
  <dl class="facts" id="studio-figures">
    <dt>Content, published or held back</dt><dd safe>{String(stats.totalContent)}</dd>
    <dt>Categories</dt><dd safe>{String(stats.totalCategories)}</dd>
    <dt>Quiz submissions</dt><dd safe>{String(stats.totalQuizSubmissions)}</dd>
    <dt>Average quiz score</dt>
    <dd safe>{stats.totalQuizSubmissions === 0 ? 'No quiz submitted yet' : `${stats.averageScore}% of the questions answered right`}</dd>
  </dl>
)

const ContentTable = ({ base, items }: { base: string; items: AuthorContentListing[] }) => items.length === 0 ? (
  <p class="muted">No content yet: start a new article or presentation, or write one with AI.</p>
) : (
  <table id="studio-content">
    <caption class="visually-hidden">All content, published or held back, the latest changed first</caption>
    <thead>
      <tr>
        <th scope="col">Title</th><th scope="col">Type</th><th scope="col">Category</th><th scope="col">Status</th>
        <th scope="col">Questions</th><th scope="col">Last change</th>
      </tr>
    </thead>
    <tbody>
      {items.map((c) => (
        <tr id={`content-${c.id}`}>
          <th scope="row"><a href={editorUrl(base, c.id)} safe>{c.title}</a></th>
          <td safe>{typeWords(c.type)}</td>
          <td safe>{c.category}</td>
          <td><span class={`studio-status ${c.published ? 'studio-published' : 'studio-held'}`} safe>{statusWords(c.published)}</span></td>
          <td safe>{String(c.question_count)}</td>
          <td><When iso={c.updated_at} /></td>
        </tr>
      ))}
    </tbody>
  </table>
)

export interface GenerateState { topic: string; type: string; model: string; errors?: Errors; message?: string }

const FILES_HINT = `Optional: up to ${REFERENCE_FILES_MAX} PDF or text files of at most ${sizeInWords(REFERENCE_FILE_MAX_BYTES)} each; the text is written from them.`

/** "Write with AI": the topic, the type, the model and reference files; the answer is the editor, nothing saved yet. */
export const GenerateForm = ({ base, models, state }: { base: string; models: ModelChoices; state: GenerateState }) => (
  <form id="studio-generate" class="stack" action={`${base}/studio/generate`} method="post" enctype="multipart/form-data">
    <Problem text={state.message} />
    <TextArea
      id="gen-topic" name="topic" label="Topic" value={state.topic} rows={3} max={TOPIC_MAX} error={state.errors?.topic}
      hint="What the content is about and for whom, e.g. inhaler technique for parents of young children"
    />
    <div class="studio-fields">
      <Select id="gen-type" name="type" label="Type" value={state.type} options={typeChoices} error={state.errors?.type} />
      <Select id="gen-model" name="model" label="AI model" value={state.model} options={modelChoices(models)} error={state.errors?.model} hint={modelHint(models)} />
    </div>
    <label for="gen-files">
      <span>Reference files</span>
      <input
        id="gen-files" name="files" type="file" multiple accept=".pdf,.txt,.md,.markdown,application/pdf,text/plain,text/markdown"
        aria-invalid={state.errors?.files ? 'true' : undefined} aria-describedby={describedBy('gen-files', FILES_HINT, state.errors?.files)}
      />
      <FieldNotes id="gen-files" hint={FILES_HINT} error={state.errors?.files} />
    </label>
    <div>
      <button type="submit">Write with AI</button>
    </div>
    <p class="muted">The text opens in the editor, not saved yet: check it, choose a category, then save.</p>
  </form>
)

export interface StudioView {
  base: string
  user: NavUser
  stats: LearningFigures
  items: AuthorContentListing[]
  models: ModelChoices
  generate?: GenerateState
  flash?: Flash
}

export const StudioPage = (p: StudioView) => (
  <ClinicalLayout title="Studio" base={p.base} user={p.user} flash={p.flash} pageScripts={STUDIO_SCRIPTS}>
    <h1>Studio</h1>
    <p>Write and publish the learning hub's articles and presentations, with their quizzes.</p>
    <nav class="actions studio-tools" aria-label="Studio">
      <a class="button" href={`${p.base}/studio/new?type=article`}>New article</a>
      <a class="button" href={`${p.base}/studio/new?type=presentation`}>New presentation</a>
      <a href="#write-with-ai">Write with AI</a>
      <a href={`${p.base}/studio/categories`}>Categories</a>
    </nav>
    <section aria-labelledby="studio-figures-title">
      <h2 id="studio-figures-title">The hub in figures</h2>
      <Figures stats={p.stats} />
    </section>
    <section aria-labelledby="studio-content-title">
      <h2 id="studio-content-title">Content</h2>
      <p class="muted">Held back content is hidden from readers until you publish it.</p>
      <ContentTable base={p.base} items={p.items} />
    </section>
    <section id="write-with-ai" aria-labelledby="write-with-ai-title">
      <h2 id="write-with-ai-title">Write with AI</h2>
      <GenerateForm base={p.base} models={p.models} state={p.generate ?? { topic: '', type: 'article', model: p.models.defaultModel ?? '' }} />
    </section>
  </ClinicalLayout>
)

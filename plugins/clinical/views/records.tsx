// The clinician's record pages: saved encounters, memories, documents and preferences (speech and the WebDAV
// file server). Each page includes its fragments (a list, a row, a form), so one source serves the page and the
// htmx answer; every form has action + method and works without JavaScript. Every user or database string is a
// `safe` text child or an attribute.
import { describedBy, Field, FieldNotes, Notice, Problem, sizeInWords, When } from '../../../views/layout'
import { DESCRIPTION_MAX, DOCUMENT_MAX_BYTES, WEBDAV_PASSWORD_MAX, WEBDAV_PATH_MAX, WEBDAV_URL_MAX, WEBDAV_USERNAME_MAX, type StoredDocument } from '../models/files'
import {
  CONTEXT_CATEGORIES, ENCOUNTER_LIFETIME_DAYS, LEGACY_CATEGORY_PREFIX, MEMORY_CATEGORIES, MEMORY_CONTENT_MAX, MEMORY_LIST_MAX, MEMORY_NAME_MAX,
  type EncounterListing, type Memory,
} from '../models/records'
import type { Option } from '../models/speech'
import { preview } from '../services/encounters'
import { ClinicalLayout, type Errors, type Flash, type NavUser } from './common'

// ---- shared pieces ---------------------------------------------------------------------------------------------

const TextArea = (p: { id: string; name: string; label: string; value: string; error?: string; hint?: string; rows?: number; maxlength?: number; required?: boolean }) => (
  <label for={p.id}>
    <span safe>{p.label}</span>
    <textarea id={p.id} name={p.name} rows={String(p.rows ?? 4)} maxlength={p.maxlength} required={p.required}
      aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint, p.error)} safe>{p.value}</textarea>
    <FieldNotes id={p.id} hint={p.hint} error={p.error} />
  </label>
)

const Select = (p: { id: string; name: string; label: string; options: Option[]; value: string; error?: string; hint?: string }) => (
  <label for={p.id}>
    <span safe>{p.label}</span>
    <select id={p.id} name={p.name} aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint, p.error)}>
      {p.options.map((o) => <option value={o.value} selected={o.value === p.value ? true : undefined} safe>{o.label}</option>)}
    </select>
    <FieldNotes id={p.id} hint={p.hint} error={p.error} />
  </label>
)

/** Yes/no of a delete, in the row it is about: the form (works without JavaScript too) and the way back. */
const ConfirmDelete = (p: { action: string; question: string; back: string; rowTarget: string; listTarget: string; confirmLabel: string; page?: number }) => (
  <form class="rec-confirm" action={p.action} method="post" hx-post={p.action} hx-target={p.listTarget} hx-swap="outerHTML">
    {p.page && p.page > 1 ? <input type="hidden" name="page" value={String(p.page)} /> : ''}
    <span safe>{p.question}</span>{' '}
    <button type="submit" class="danger" autofocus safe>{p.confirmLabel}</button>{' '}
    <a href={p.back} hx-get={p.back} hx-target={p.rowTarget} hx-swap="outerHTML">Keep it</a>
  </form>
)

/** The confirm step as a page of its own, where a delete link lands without JavaScript. */
const ConfirmPage = (p: { base: string; user: NavUser; title: string; question: string; detail: string; action: string; back: string; confirmLabel: string }) => (
  <ClinicalLayout title={p.title} base={p.base} user={p.user}>
    <h1 safe>{p.title}</h1>
    <p safe>{p.question}</p>
    <p class="muted" safe>{p.detail}</p>
    <form class="actions" action={p.action} method="post">
      <button type="submit" class="danger" safe>{p.confirmLabel}</button>
      <a href={p.back}>No, keep it</a>
    </form>
  </ClinicalLayout>
)

// ---- saved encounters ------------------------------------------------------------------------------------------

/** The note types the workspace saves, as a clinician says them; any other value is shown as it is. */
const ENCOUNTER_TYPE_WORDS: Record<string, string> = {
  hpi: 'HPI', soap: 'SOAP note', sick_visit: 'Sick visit', well_visit: 'Well visit (SHADESS)', chart_review: 'Chart review',
  hospital_course: 'Hospital course', milestones: 'Developmental milestones', handout: 'Patient handout', dictation: 'Dictation',
}
export const encounterTypeWords = (encType: string) => ENCOUNTER_TYPE_WORDS[encType] ?? encType
const STATUS_WORDS: Record<string, string> = { draft: 'Draft', reviewed: 'Reviewed' }
export const statusWords = (status: string) => STATUS_WORDS[status] ?? status

export const KEPT_WORDS = `Saved encounters are kept for ${ENCOUNTER_LIFETIME_DAYS} days after they were last saved, then deleted for good.`

const encounterUrl = (base: string, id: number) => `${base}/encounters/${id}`
const withPage = (url: string, page: number | undefined) => (page && page > 1 ? `${url}?page=${page}` : url)

const PreviewLine = ({ what, text }: { what: string; text: string }) => (
  <p class="rec-preview">
    <span class="muted" safe>{`${what}: `}</span>
    {text ? <span safe>{text}</span> : <span class="muted">none</span>}
  </p>
)

/** A row of the list; `page` is the list's page, which a delete with htmx answers again. */
export const EncounterRow = (p: { base: string; e: EncounterListing; confirm?: boolean; page?: number }) => {
  const { e } = p
  const url = encounterUrl(p.base, e.id)
  return (
    <tr id={`encounter-${e.id}`}>
      <th scope="row" safe>{e.label}</th>
      <td safe>{encounterTypeWords(e.enc_type)}</td>
      <td><span class={`rec-status rec-${e.status === 'reviewed' ? 'reviewed' : 'draft'}`} safe>{statusWords(e.status)}</span></td>
      <td><When iso={e.updated_at} /></td>
      <td><When iso={e.expires_at} /></td>
      <td class="rec-previews">
        <PreviewLine what="Transcript" text={e.transcript_preview} />
        <PreviewLine what="Note" text={e.note_preview} />
      </td>
      <td>
        {p.confirm ? (
          <ConfirmDelete action={`${url}/delete`} question={`Delete “${e.label}”?`} back={withPage(url, p.page)} rowTarget={`#encounter-${e.id}`}
            listTarget="#encounters" confirmLabel="Delete" page={p.page} />
        ) : (
          <div class="actions">
            <a class="button" href={`${p.base}/workspace?encounter=${e.id}`} aria-label={`Open ${e.label} in the workspace`}>Open</a>
            <a href={`${url}/delete`} hx-get={withPage(`${url}/delete`, p.page)} hx-target={`#encounter-${e.id}`} hx-swap="outerHTML"
              aria-label={`Delete ${e.label}`}>Delete</a>
          </div>
        )}
      </td>
    </tr>
  )
}

/** How many encounters one page of the list shows. */
export const ENCOUNTER_PAGE_SIZE = 50

/** One page of the list, the most recently saved first; `more` when older ones follow. */
export interface EncounterPage { encounters: EncounterListing[]; page: number; more: boolean }

const encountersPageUrl = (base: string, page: number) => (page > 1 ? `${base}/encounters?page=${page}` : `${base}/encounters`)

/** The list: the fragment of GET /encounters and of a delete. */
export const EncounterList = (p: { base: string; list: EncounterPage; notice?: string | null }) => (
  <div id="encounters" class="wide">
    <Notice text={p.notice} />
    {p.list.encounters.length === 0 ? (
      p.list.page > 1 ? <p>No more saved encounters. <a href={`${p.base}/encounters`}>Back to the most recent</a></p> : (
        <p id="encounters-empty">
          No saved encounters. Notes you save in the <a href={`${p.base}/workspace`}>workspace</a> are listed here.
        </p>
      )
    ) : (
      <table>
        <caption class="visually-hidden">Your saved encounters, the most recently saved first</caption>
        <thead>
          <tr>
            <th scope="col">Label</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Last saved</th>
            <th scope="col">Expires</th><th scope="col">Transcript and note</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {p.list.encounters.map((e) => <EncounterRow base={p.base} e={e} page={p.list.page} />)}
        </tbody>
      </table>
    )}
    {p.list.page > 1 || p.list.more ? (
      <nav class="pages" aria-label="Pages of saved encounters">
        {p.list.page > 1 ? <a href={encountersPageUrl(p.base, p.list.page - 1)} rel="prev">Newer encounters</a> : <span class="muted">Newer encounters</span>}
        <span safe>{`Page ${p.list.page}`}</span>
        {p.list.more ? <a href={encountersPageUrl(p.base, p.list.page + 1)} rel="next">Older encounters</a> : <span class="muted">Older encounters</span>}
      </nav>
    ) : ''}
  </div>
)

export const EncountersPage = (p: { base: string; user: NavUser; list: EncounterPage; flash?: Flash }) => (
  <ClinicalLayout title="Saved encounters" base={p.base} user={p.user} flash={p.flash}>
    <h1>Saved encounters</h1>
    <p>
      {KEPT_WORDS} A <strong>draft</strong> is a note not yet reviewed; mark it reviewed in the{' '}
      <a href={`${p.base}/workspace`}>workspace</a> once you have checked it.
    </p>
    <EncounterList base={p.base} list={p.list} />
  </ClinicalLayout>
)

export const DeleteEncounterPage = (p: { base: string; user: NavUser; e: EncounterListing }) => (
  <ConfirmPage
    base={p.base} user={p.user} title="Delete a saved encounter" confirmLabel="Delete the encounter"
    question={`Delete “${p.e.label}” (${encounterTypeWords(p.e.enc_type)}, ${statusWords(p.e.status).toLowerCase()})?`}
    detail="Its transcript and note are removed for good." action={`${encounterUrl(p.base, p.e.id)}/delete`} back={`${p.base}/encounters`}
  />
)

// ---- memories --------------------------------------------------------------------------------------------------

interface CategoryInfo { label: string; hint: string; ai: boolean }
/** The memory categories in plain words: what each is for, and whether it goes to the AI with every note. */
export const CATEGORY_INFO: Record<(typeof MEMORY_CATEGORIES)[number], CategoryInfo> = {
  note_style: { label: 'Note style', ai: true, hint: 'How you like notes written: tone, length, headings, order.' },
  abbreviations: { label: 'Abbreviations', ai: true, hint: 'Abbreviations you use and what they stand for.' },
  templates: { label: 'Templates', ai: true, hint: 'Wording to follow for a kind of note or section, such as a normal examination.' },
  ai_context: { label: 'Practice context', ai: true, hint: 'About your practice: your setting, your patients, local services.' },
  custom: { label: 'Private note', ai: false, hint: 'For your own reference only.' },
}
const LEGACY_INFO: CategoryInfo = { label: 'Older correction', ai: false, hint: 'Kept from an earlier version of the assistant.' }

export const categoryInfo = (category: string): CategoryInfo =>
  CATEGORY_INFO[category as keyof typeof CATEGORY_INFO] ?? (category.startsWith(LEGACY_CATEGORY_PREFIX) ? LEGACY_INFO : { label: category, ai: false, hint: '' })
const aiWords = (ai: boolean) => (ai ? 'used by the AI' : 'not sent to the AI')

/** The category choices; a memory already in a legacy category may keep it. */
const categoryOptions = (current: string): Option[] => {
  const options = MEMORY_CATEGORIES.map((c) => ({ value: c, label: `${CATEGORY_INFO[c].label} (${aiWords(CATEGORY_INFO[c].ai)})` }))
  return current.startsWith(LEGACY_CATEGORY_PREFIX) ? [...options, { value: current, label: `${LEGACY_INFO.label} (${aiWords(false)})` }] : options
}

export type MemoryValues = { category: string; name: string; content: string }
export const blankMemory: MemoryValues = { category: CONTEXT_CATEGORIES[0], name: '', content: '' }
export interface MemoryFormState { values: MemoryValues; errors?: Errors; message?: string }

const MemoryFields = (p: { idPrefix: string; state: MemoryFormState }) => {
  const { values, errors } = p.state
  return (
    <>
      <Select id={`${p.idPrefix}-category`} name="category" label="Category" options={categoryOptions(values.category)} value={values.category}
        error={errors?.category} />
      <Field label="Name" name="name" id={`${p.idPrefix}-name`} value={values.name} error={errors?.name} required maxlength={MEMORY_NAME_MAX} />
      <TextArea id={`${p.idPrefix}-content`} name="content" label="Content" value={values.content} error={errors?.content}
        hint={`At most ${MEMORY_CONTENT_MAX.toLocaleString('en')} characters.`} rows={6} maxlength={MEMORY_CONTENT_MAX} required />
    </>
  )
}

const memoryUrl = (base: string, id: number) => `${base}/memories/${id}`

export const MemoryRow = (p: { base: string; m: Memory; confirm?: boolean; saved?: boolean }) => {
  const { m } = p
  const info = categoryInfo(m.category)
  const url = memoryUrl(p.base, m.id)
  return (
    <tr id={`memory-${m.id}`}>
      <th scope="row" safe>{m.name}</th>
      <td><span safe>{info.label}</span><br /><span class="muted">{aiWords(info.ai)}</span></td>
      <td><When iso={m.updated_at} /></td>
      <td class="rec-previews"><span safe>{preview(m.content)}</span></td>
      <td>
        {p.confirm ? (
          <ConfirmDelete action={`${url}/delete`} question={`Delete “${m.name}”?`} back={url} rowTarget={`#memory-${m.id}`}
            listTarget="#memories-list" confirmLabel="Delete" />
        ) : (
          <div class="actions">
            <a href={`${url}/edit`} hx-get={`${url}/edit`} hx-target={`#memory-${m.id}`} hx-swap="outerHTML" aria-label={`Edit ${m.name}`}>Edit</a>
            <a href={`${url}/delete`} hx-get={`${url}/delete`} hx-target={`#memory-${m.id}`} hx-swap="outerHTML" aria-label={`Delete ${m.name}`}>Delete</a>
            {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
          </div>
        )}
      </td>
    </tr>
  )
}

/** A memory's edit form, in place of its row (click to edit); saving swaps the row back. */
export const MemoryEditRow = (p: { base: string; id: number; state: MemoryFormState }) => {
  const url = memoryUrl(p.base, p.id)
  return (
    <tr id={`memory-${p.id}`}>
      <td colspan="5">
        <form class="stack" action={url} method="post" hx-post={url} hx-target={`#memory-${p.id}`} hx-swap="outerHTML">
          <h3 class="rec-edit-title" safe>{`Edit “${p.state.values.name || 'memory'}”`}</h3>
          <Problem text={p.state.message} />
          <MemoryFields idPrefix={`memory-${p.id}`} state={p.state} />
          <div class="actions">
            <button type="submit">Save memory</button>
            <a href={url} hx-get={url} hx-target={`#memory-${p.id}`} hx-swap="outerHTML">Cancel</a>
          </div>
        </form>
      </td>
    </tr>
  )
}

export interface MemoryEditing { id: number; state: MemoryFormState }

/** The list: its own fragment (a delete answers it), and part of the page's content. */
export const MemoryList = (p: { base: string; memories: Memory[]; editing?: MemoryEditing; notice?: string | null }) => (
  <div id="memories-list">
    <Notice text={p.notice} />
    {p.memories.length >= MEMORY_LIST_MAX ? (
      <p class="flash warning" id="memories-limit">
        {`You have reached ${MEMORY_LIST_MAX} memories, the most this list shows: only the ${MEMORY_LIST_MAX} newest are listed. `
          + 'Delete the ones you no longer need to see older ones.'}
      </p>
    ) : ''}
    {p.memories.length === 0 ? <p class="muted">No memories yet: add one above.</p> : (
      <table>
        <caption class="visually-hidden">Your memories, the newest first</caption>
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Category</th><th scope="col">Updated</th><th scope="col">Content</th><th scope="col">Actions</th></tr>
        </thead>
        <tbody>
          {p.memories.map((m) => (p.editing?.id === m.id
            ? <MemoryEditRow base={p.base} id={m.id} state={p.editing.state} />
            : <MemoryRow base={p.base} m={m} />))}
        </tbody>
      </table>
    )}
  </div>
)

export const MemoryAddForm = (p: { base: string; state: MemoryFormState }) => (
  <form id="memory-add" class="stack" action={`${p.base}/memories`} method="post" hx-post={`${p.base}/memories`} hx-target="#memories-content" hx-swap="outerHTML">
    <Problem text={p.state.message} />
    <MemoryFields idPrefix="memory-new" state={p.state} />
    <div>
      <button type="submit">Add memory</button>
    </div>
  </form>
)

export interface MemoriesView { base: string; memories: Memory[]; add?: MemoryFormState; editing?: MemoryEditing; notice?: string | null }

/** The add form and the list: the fragment of GET /memories and of an add. */
export const MemoriesContent = (p: MemoriesView) => (
  <div id="memories-content">
    <section>
      <h2>Add a memory</h2>
      <MemoryAddForm base={p.base} state={p.add ?? { values: blankMemory }} />
    </section>
    <section>
      <h2>Your memories</h2>
      <p class="muted" safe>{`${p.memories.length} listed (at most ${MEMORY_LIST_MAX}).`}</p>
      <MemoryList base={p.base} memories={p.memories} editing={p.editing} notice={p.notice} />
    </section>
  </div>
)

export const MemoriesPage = (p: MemoriesView & { user: NavUser; flash?: Flash }) => (
  <ClinicalLayout title="Memories" base={p.base} user={p.user} flash={p.flash}>
    <h1>Memories</h1>
    <p>Memories are what the assistant should know about how you work. They are stored encrypted.</p>
    <dl class="facts" id="memory-categories">
      {MEMORY_CATEGORIES.map((c) => (
        <>
          <dt safe>{CATEGORY_INFO[c].label}</dt>
          <dd safe>{`${CATEGORY_INFO[c].hint} ${CATEGORY_INFO[c].ai ? 'Added to what the AI is told for every note.' : 'Never sent to the AI.'}`}</dd>
        </>
      ))}
      <dt safe>{LEGACY_INFO.label}</dt>
      <dd safe>{`${LEGACY_INFO.hint} Never sent to the AI.`}</dd>
    </dl>
    <MemoriesContent {...p} />
  </ClinicalLayout>
)

export const DeleteMemoryPage = (p: { base: string; user: NavUser; m: Memory }) => (
  <ConfirmPage
    base={p.base} user={p.user} title="Delete a memory" confirmLabel="Delete the memory"
    question={`Delete “${p.m.name}” (${categoryInfo(p.m.category).label})?`} detail="It is removed for good."
    action={`${memoryUrl(p.base, p.m.id)}/delete`} back={`${p.base}/memories`}
  />
)

// ---- documents -------------------------------------------------------------------------------------------------

const TYPE_WORDS: Record<string, string> = {
  'application/pdf': 'PDF', 'image/jpeg': 'JPEG image', 'image/png': 'PNG image', 'image/gif': 'GIF image',
  'application/msword': 'Word document (.doc)',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word document (.docx)',
  'text/plain': 'Text', 'text/csv': 'CSV table',
}
export const typeWords = (mime: string) => TYPE_WORDS[mime] ?? mime

export const ALLOWED_WORDS = 'PDF, JPEG, PNG or GIF images, Word documents (.doc, .docx), text (.txt) or CSV (.csv)'
const ACCEPT = '.pdf,.jpg,.jpeg,.png,.gif,.doc,.docx,.txt,.csv'
const FILE_HINT = `${ALLOWED_WORDS}, at most ${sizeInWords(DOCUMENT_MAX_BYTES)}.`

const documentUrl = (base: string, id: number) => `${base}/documents/${id}`

export const DocumentRow = (p: { base: string; d: StoredDocument; confirm?: boolean }) => {
  const { d } = p
  const url = documentUrl(p.base, d.id)
  return (
    <tr id={`document-${d.id}`}>
      <th scope="row">
        <span safe>{d.filename}</span>
        {d.description ? <><br /><span class="muted" safe>{d.description}</span></> : ''}
      </th>
      <td safe>{typeWords(d.mime_type)}</td>
      <td safe>{sizeInWords(d.size_bytes)}</td>
      <td><When iso={d.created_at} /></td>
      <td>
        {p.confirm ? (
          <ConfirmDelete action={`${url}/delete`} question={`Delete “${d.filename}”?`} back={url} rowTarget={`#document-${d.id}`}
            listTarget="#documents" confirmLabel="Delete" />
        ) : (
          <div class="actions">
            {/* A file, not a page: the browser downloads it (htmx would try to swap it in). */}
            <a class="button" href={`${url}/download`} hx-boost="false" aria-label={`Download ${d.filename}`}>Download</a>
            <a href={`${url}/delete`} hx-get={`${url}/delete`} hx-target={`#document-${d.id}`} hx-swap="outerHTML" aria-label={`Delete ${d.filename}`}>Delete</a>
          </div>
        )}
      </td>
    </tr>
  )
}

export const DocumentList = (p: { base: string; documents: StoredDocument[]; notice?: string | null }) => (
  <div id="documents">
    <Notice text={p.notice} />
    {p.documents.length === 0 ? <p class="muted">No documents yet: upload one above.</p> : (
      <table>
        <caption class="visually-hidden">Your documents, the newest first</caption>
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Uploaded</th><th scope="col">Actions</th></tr>
        </thead>
        <tbody>
          {p.documents.map((d) => <DocumentRow base={p.base} d={d} />)}
        </tbody>
      </table>
    )}
  </div>
)

export interface UploadState { description?: string; errors?: Errors; message?: string }

export const UploadForm = (p: { base: string; state?: UploadState }) => (
  // A plain navigation, not boosted: a file upload is one, and every refusal (even the 413 page of a body over the
  // limit, answered before the form is read) is then shown as a page.
  <form id="document-upload" class="stack" action={`${p.base}/documents/upload`} method="post" enctype="multipart/form-data" hx-boost="false">
    <Problem text={p.state?.message} />
    <label for="document-file">
      <span>File</span>
      <input id="document-file" name="file" type="file" accept={ACCEPT} required
        aria-invalid={p.state?.errors?.file ? 'true' : undefined} aria-describedby={describedBy('document-file', FILE_HINT, p.state?.errors?.file)} />
      <FieldNotes id="document-file" hint={FILE_HINT} error={p.state?.errors?.file} />
    </label>
    <TextArea id="document-description" name="description" label="Description (optional)" value={p.state?.description ?? ''}
      error={p.state?.errors?.description} rows={2} maxlength={DESCRIPTION_MAX} hint={`At most ${DESCRIPTION_MAX.toLocaleString('en')} characters.`} />
    <div>
      <button type="submit">Upload</button>
    </div>
  </form>
)

export const storageWords = (s3: boolean) => s3
  ? 'Files are kept in the object storage this server is set up with.'
  : 'Files are kept on this server\'s own disk.'

export const DocumentsPage = (p: { base: string; user: NavUser; documents: StoredDocument[]; s3: boolean; upload?: UploadState; flash?: Flash }) => (
  <ClinicalLayout title="Documents" base={p.base} user={p.user} flash={p.flash}>
    <h1>Documents</h1>
    <p id="document-storage" safe>{`${storageWords(p.s3)} Only you can see your documents; a download link works for a few minutes.`}</p>
    <section>
      <h2>Upload a document</h2>
      <UploadForm base={p.base} state={p.upload} />
    </section>
    <section>
      <h2>Your documents</h2>
      <DocumentList base={p.base} documents={p.documents} />
    </section>
  </ClinicalLayout>
)

export const DeleteDocumentPage = (p: { base: string; user: NavUser; d: StoredDocument }) => (
  <ConfirmPage
    base={p.base} user={p.user} title="Delete a document" confirmLabel="Delete the document"
    question={`Delete “${p.d.filename}” (${typeWords(p.d.mime_type)}, ${sizeInWords(p.d.size_bytes)})?`} detail="The stored file is removed for good."
    action={`${documentUrl(p.base, p.d.id)}/delete`} back={`${p.base}/documents`}
  />
)

// ---- preferences -----------------------------------------------------------------------------------------------

export interface SpeechView {
  sttModels: Option[]
  ttsVoices: Option[]
  sttModel: string | null
  ttsVoice: string
  errors?: Errors
  message?: string
  saved?: boolean
}

export const SpeechForm = (p: { base: string; view: SpeechView }) => {
  const v = p.view
  const voice = v.ttsVoices.find((o) => o.value === v.ttsVoice)
  return (
    <div id="speech-preferences">
      <form class="stack" action={`${p.base}/preferences`} method="post" hx-post={`${p.base}/preferences`} hx-target="#speech-preferences" hx-swap="outerHTML">
        <Problem text={v.message} />
        {v.sttModels.length === 0
          ? <p class="muted" id="stt-unavailable">Transcription is not available on this server: no AI service is set up for it.</p>
          : <Select id="stt-model" name="stt_model" label="Transcription model" options={v.sttModels} value={v.sttModel ?? ''} error={v.errors?.stt_model}
            hint="Turns your dictation into text." />}
        <Select id="tts-voice" name="tts_voice" label="Voice" options={v.ttsVoices} value={v.ttsVoice} error={v.errors?.tts_voice}
          hint="Reads notes and handouts aloud." />
        <div>
          <button type="submit">Save speech settings</button> {v.saved ? <span class="muted" role="status">Saved.</span> : ''}
        </div>
      </form>
      <p class="listen">
        <span id="voice-sample-label" safe>{`Listen to ${voice?.label ?? 'the voice'}:`}</span>{' '}
        <audio controls="" preload="none" aria-labelledby="voice-sample-label"
          src={`${p.base}/preferences/voice-sample?voice=${encodeURIComponent(v.ttsVoice)}`}></audio>
      </p>
    </div>
  )
}

export interface WebDavView {
  connected: boolean
  url: string | null
  username: string | null
  path: string
  /** What the connect form shows again after a refusal: never the password. */
  connect?: { url: string; username: string; errors?: Errors }
  pathValue?: string
  pathError?: string
  message?: string
  notice?: string | null
}

export const WebDavSection = (p: { base: string; view: WebDavView }) => {
  const v = p.view
  const url = `${p.base}/preferences/webdav`
  const form = (action: string) => ({ action: `${url}/${action}`, method: 'post', 'hx-post': `${url}/${action}`, 'hx-target': '#webdav', 'hx-swap': 'outerHTML' })
  return (
    <div id="webdav">
      <Notice text={v.notice} />
      <Problem text={v.message} />
      {v.connected ? (
        <>
          <dl class="facts" id="webdav-connection">
            <dt>Server</dt>
            <dd safe>{v.url ?? ''}</dd>
            <dt>User</dt>
            <dd safe>{v.username ?? ''}</dd>
            <dt>Export folder</dt>
            <dd safe>{v.path}</dd>
          </dl>
          <form {...form('disconnect')}>
            <button type="submit" class="secondary">Disconnect</button>
          </form>
        </>
      ) : (
        <form class="stack" id="webdav-connect" {...form('connect')}>
          <p>Not connected. Connect a WebDAV file server (such as Nextcloud or ownCloud) to export notes to it as text files.</p>
          <Field label="Server address" name="url" id="webdav-url" type="url" value={v.connect?.url} error={v.connect?.errors?.url} required
            maxlength={WEBDAV_URL_MAX} autocomplete="url" hint="Its WebDAV address, for example https://cloud.example.org/remote.php/dav/files/alice" />
          <Field label="Username" name="username" id="webdav-username" value={v.connect?.username} error={v.connect?.errors?.username} required
            maxlength={WEBDAV_USERNAME_MAX} autocomplete="off" />
          <Field label="Password or app token" name="password" id="webdav-password" type="password" error={v.connect?.errors?.password} required
            maxlength={WEBDAV_PASSWORD_MAX} autocomplete="new-password"
            hint="Stored encrypted and never shown again. An app token made in your file server's security settings is safer than your password." />
          <div>
            <button type="submit">Connect</button>
          </div>
        </form>
      )}
      <form class="stack" id="webdav-folder" {...form('path')}>
        <Field label="Export folder" name="path" id="webdav-path" value={v.pathValue ?? v.path} error={v.pathError} maxlength={WEBDAV_PATH_MAX}
          hint="Where exported notes go, relative to the server address; / is its top folder." />
        <div>
          <button type="submit" class="secondary">Save folder</button>
        </div>
      </form>
    </div>
  )
}

/** Both sections: the fragment of GET /preferences. */
export const PreferencesContent = (p: { base: string; speech: SpeechView; webdav: WebDavView }) => (
  <div id="preferences-content">
    <section>
      <h2>Dictation and voice</h2>
      <SpeechForm base={p.base} view={p.speech} />
    </section>
    <section>
      <h2>File server for exports</h2>
      <WebDavSection base={p.base} view={p.webdav} />
    </section>
  </div>
)

export const PreferencesPage = (p: { base: string; user: NavUser; speech: SpeechView; webdav: WebDavView; flash?: Flash }) => (
  <ClinicalLayout title="Preferences" base={p.base} user={p.user} flash={p.flash}>
    <h1>Preferences</h1>
    <PreferencesContent base={p.base} speech={p.speech} webdav={p.webdav} />
  </ClinicalLayout>
)

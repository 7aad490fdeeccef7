// The quiz service's staff pages for documents and extraction: the documents list with the upload form and the recent
// extraction jobs, a document's page (status, processing steps, sections, "make a quiz" per section) and an extraction
// job's page. Every form has action + method and works without JavaScript; htmx polls the status blocks while work
// is in progress (and only then) and swaps the sections block in place.
import { Field, Layout, sizeInWords, When, type Errors, type Flash, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import type { AvailableModel } from '../models/ai-models'
import type { DocumentResponse, DocumentStatus, ProcessingStep, SectionResponse } from '../models/documents'
import { SECTION_NAME_MAX } from '../models/documents'
import {
  EXTRACTION_MODES, TIME_LIMIT_MAX_MINUTES, TITLE_MAX, type ExtractionMode, type JobDetail, type JobListItem, type JobStatus,
} from '../models/extraction'
import type { QuestionCategory } from '../services/categories'
import { BRAND, SignedInNav } from './accounts'

/** Where a job's quiz is now: a link only to one out of the trash. */
export type QuizState = 'active' | 'trash' | 'deleted'
type Job = typeof JobDetail.static & { quiz_state?: QuizState }
type JobItem = typeof JobListItem.static & { quiz_state?: QuizState }

/** The link to a job's quiz, or where it went. */
const QuizOfJob = ({ base, quizId, state }: { base: string; quizId: number; state: QuizState | undefined }) =>
  state === 'trash' ? <span>In the <a href={`${base}/quizzes/trash`}>trash</a></span>
    : state === 'deleted' ? <span class="muted">Deleted</span>
      : <a href={`${base}/quizzes/${quizId}`}>Open the quiz</a>
type JobState = typeof JobStatus.static

/** How often the status blocks ask for news while work is in progress. */
export const POLL_TRIGGER = 'every 2s'

interface Frame { ctx: PageContext; user: UserResponse; flash?: Flash }

// ---- words ----

const DOCUMENT_STATUS_WORDS: Record<DocumentStatus, string> = {
  processing: 'Being processed',
  ready: 'Ready',
  failed: 'Failed',
}
export const documentStatusWords = (s: DocumentStatus) => DOCUMENT_STATUS_WORDS[s] ?? s

const JOB_STATUS_WORDS: Record<JobState, string> = {
  pending: 'Waiting to start',
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
}
export const jobStatusWords = (s: JobState) => JOB_STATUS_WORDS[s] ?? s
export const jobInProgress = (s: JobState) => s === 'pending' || s === 'running'

const pagesWords = (a: number, b: number) => (a === b ? `page ${a}` : `pages ${a} to ${b}`)

interface ModeInfo { label: string; hint: string; ai: boolean }
/** The extraction modes in plain words, in the order the form lists them (the one that needs no AI first). */
export const EXTRACTION_MODE_INFO: Record<ExtractionMode, ModeInfo> = {
  regex: { label: 'Pattern matching (no AI)', ai: false, hint: 'Reads numbered questions with lettered options (A, B, C...) and an "Answer:" line or an answer key. Fast, and needs no AI model.' },
  standard: { label: 'Standard', ai: true, hint: 'The AI takes the questions written in the text, with their answers and explanations.' },
  questions_only: { label: 'Questions only', ai: true, hint: 'The AI takes the questions written in the text and works out the answers itself.' },
  two_step: { label: 'Two steps', ai: true, hint: 'The AI first finds each question, then reads it on its own. Slower; helps with untidy layouts.' },
  ai_decide: { label: 'Let the AI decide', ai: true, hint: 'The AI looks at the text first, then either takes its questions or writes new ones.' },
  generate: { label: 'Write new questions', ai: true, hint: 'The AI writes new questions from the text: for teaching material that has no questions.' },
}
const MODE_ORDER: ExtractionMode[] = ['regex', ...EXTRACTION_MODES.filter((m) => m !== 'regex')]

const docUrl = (base: string, id: number) => `${base}/documents/${id}`
export const jobUrl = (base: string, jobId: string) => `${base}/documents/jobs/${jobId}`

const BackLinks = ({ base, documentId }: { base: string; documentId?: number | null }) => (
  <p>
    <a href={`${base}/documents`}>All documents</a>
    {documentId ? <> · <a href={docUrl(base, documentId)}>Back to the document</a></> : ''}
  </p>
)

// ---- the documents list ----

/** The documents table; also the fragment an htmx GET of the list gets. */
export const DocumentTable = ({ base, documents }: { base: string; documents: DocumentResponse[] }) => (
  <div id="documents">
    {documents.length === 0 ? <p class="muted">No documents yet: upload a PDF below.</p> : (
      <table>
        <thead>
          <tr><th scope="col">File</th><th scope="col">Pages</th><th scope="col">Status</th><th scope="col">Uploaded</th><th scope="col">Actions</th></tr>
        </thead>
        <tbody>
          {documents.map((d) => (
            <tr id={`document-${d.id}`}>
              <td><a href={docUrl(base, d.id)} safe>{d.original_filename}</a></td>
              <td>{d.total_pages}</td>
              <td safe>{documentStatusWords(d.status)}</td>
              <td><When iso={d.uploaded_at} /></td>
              <td>
                {/* A GET to the confirmation page: nothing is deleted until that page's button is pressed. */}
                <form class="inline" action={`${docUrl(base, d.id)}/delete`} method="get">
                  <button type="submit" class="secondary" aria-label={`Delete ${d.original_filename}`}>Delete</button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </div>
)

export const UploadForm = (p: { base: string; maxUploadSize: number; error?: string }) => (
  // A plain navigation, not boosted: a file upload is one, and every refusal (even the 413 page of a body over the
  // limit, sent before the form is read) then shows as the browser gets it.
  <form id="upload" class="stack" action={`${p.base}/documents/upload`} method="post" enctype="multipart/form-data" hx-boost="false">
    <label for="file">
      <span>PDF file</span>
      <input id="file" name="file" type="file" accept="application/pdf" required
        aria-invalid={p.error ? 'true' : undefined} aria-describedby={p.error ? 'file-hint file-error' : 'file-hint'} />
      <span class="field-hint muted" id="file-hint" safe>{`A PDF of at most ${sizeInWords(p.maxUploadSize)}. Its text is read and indexed after the upload.`}</span>
      {p.error ? <span class="field-error" id="file-error" safe>{p.error}</span> : ''}
    </label>
    <div>
      <button type="submit">Upload</button>
    </div>
  </form>
)

export const RecentJobs = ({ base, jobs }: { base: string; jobs: JobItem[] }) => (
  <div id="recent-jobs">
    {jobs.length === 0 ? <p class="muted">You have not started an extraction yet: open a document and make a quiz from one of its sections.</p> : (
      <table>
        <thead>
          <tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Last step</th><th scope="col">Quiz</th></tr>
        </thead>
        <tbody>
          {jobs.map((j) => (
            <tr>
              <td><a href={jobUrl(base, j.job_id)} safe>{j.title || 'Untitled'}</a></td>
              <td safe>{jobStatusWords(j.status)}</td>
              <td class="muted" safe>{j.last_step}</td>
              <td>{j.quiz_id !== null ? <QuizOfJob base={base} quizId={j.quiz_id} state={j.quiz_state} /> : <span class="muted">None</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </div>
)

export const DocumentsPage = (p: Frame & { documents: DocumentResponse[]; jobs: JobItem[]; maxUploadSize: number; uploadError?: string }) => (
  <Layout title="Documents" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>Documents</h1>
    <section>
      <h2>Upload a PDF</h2>
      <UploadForm base={p.ctx.base} maxUploadSize={p.maxUploadSize} error={p.uploadError} />
    </section>
    <section>
      <h2>All documents</h2>
      <DocumentTable base={p.ctx.base} documents={p.documents} />
    </section>
    <section>
      <h2>Your recent extraction jobs</h2>
      <RecentJobs base={p.ctx.base} jobs={p.jobs} />
    </section>
  </Layout>
)

export const DeleteDocumentPage = (p: Frame & { document: DocumentResponse; sections: number }) => (
  <Layout title="Delete a document" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>Delete a document</h1>
    <p safe>{`Delete "${p.document.original_filename}"? The stored file, its page text and its ${p.sections === 1 ? '1 section' : `${p.sections} sections`} are removed for good. Quizzes already made from it stay, with their questions.`}</p>
    <form class="actions" action={`${docUrl(p.ctx.base, p.document.id)}/delete`} method="post">
      <button type="submit" class="danger">Delete the document</button>
      <a href={docUrl(p.ctx.base, p.document.id)}>No, keep it</a>
    </form>
  </Layout>
)

// ---- a document ----

const StepList = ({ steps }: { steps: ProcessingStep[] }) => (
  steps.length === 0 ? <p class="muted">No steps yet.</p> : (
    <ol class="steps">
      {steps.map((s) => (
        <li>
          <span safe>{s.message}</span>
          {s.status === 'completed' ? '' : <span class="muted" safe>{` (${s.status})`}</span>}{' '}
          <span class="muted"><When iso={s.timestamp} /></span>
        </li>
      ))}
    </ol>
  )
)

/** Status and processing steps; polls itself (every 2 s) only while the document is being processed. */
export const DocumentStatusBlock = (p: { base: string; document: DocumentResponse; steps: ProcessingStep[] }) => {
  const url = docUrl(p.base, p.document.id)
  const processing = p.document.status === 'processing'
  return (
    <section id="document-status" hx-get={processing ? url : undefined} hx-trigger={processing ? POLL_TRIGGER : undefined}
      hx-target={processing ? 'this' : undefined} hx-swap={processing ? 'outerHTML' : undefined}>
      <h2>Status</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd safe>{documentStatusWords(p.document.status)}</dd>
        <dt>Pages</dt>
        <dd>{p.document.total_pages}</dd>
        <dt>Uploaded</dt>
        <dd><When iso={p.document.uploaded_at} /></dd>
      </dl>
      {p.document.status === 'failed'
        ? <p class="flash error" safe>{`Processing failed: ${p.document.error_message ?? 'no reason was recorded'}`}</p>
        : ''}
      {processing
        ? <p>The file is being read; this part of the page updates itself every few seconds. <a href={url}>Refresh</a></p>
        : ''}
      <h3>Processing steps</h3>
      <StepList steps={p.steps} />
    </section>
  )
}

export interface SectionValues { name: string; start_page: string; end_page: string }
export interface SectionFormState { values: SectionValues; errors?: Errors; message?: string }

export interface MakeQuizValues {
  title: string; mode: string; time_limit_minutes: string; extraction_mode: string; model_id: string; question_category_id: string
}
export interface MakeQuizState { sectionId: number; values: MakeQuizValues; errors?: Errors; message?: string }

/** What a section's "make a quiz" form starts with: the AI's standard mode when an AI model is there, else pattern matching. */
export const makeQuizDefaults = (section: SectionResponse, models: AvailableModel[]): MakeQuizValues => ({
  title: section.name, mode: 'learning', time_limit_minutes: '', extraction_mode: models.length > 0 ? 'standard' : 'regex',
  model_id: '', question_category_id: '',
})

export interface SectionsData {
  document: DocumentResponse
  sections: SectionResponse[]
  models: AvailableModel[]
  categories: QuestionCategory[]
}

const ErrorText = ({ id, error }: { id: string; error?: string }) => (error ? <span class="field-error" id={id} safe>{error}</span> : '')

const MakeQuizForm = (p: { base: string; data: SectionsData; section: SectionResponse; state?: MakeQuizState }) => {
  const s = p.section
  const v = p.state?.values ?? makeQuizDefaults(s, p.data.models)
  const e = p.state?.errors ?? {}
  const id = (name: string) => `s${s.id}-${name}`
  const noAi = p.data.models.length === 0
  const action = `${docUrl(p.base, p.data.document.id)}/sections/${s.id}/quiz`
  return (
    <details id={id('make-quiz')} open={p.state ? true : undefined}>
      <summary safe>{`Make a quiz from "${s.name}" (${pagesWords(s.start_page, s.end_page)})`}</summary>
      <form class="stack" action={action} method="post">
        {p.state?.message ? <p class="flash error" role="alert" safe>{p.state.message}</p> : ''}
        <Field label="Quiz title" name="title" id={id('title')} value={v.title} error={e.title} required maxlength={TITLE_MAX} />
        <label for={id('mode')}>
          <span>Quiz mode</span>
          <select id={id('mode')} name="mode" aria-describedby={e.mode ? id('mode-error') : undefined}>
            <option value="learning" selected={v.mode !== 'timed'}>Learning: answers and explanations shown along the way</option>
            <option value="timed" selected={v.mode === 'timed'}>Timed: answers shown only after submitting</option>
          </select>
          <ErrorText id={id('mode-error')} error={e.mode} />
        </label>
        <Field label="Time limit in minutes (timed quizzes only)" name="time_limit_minutes" id={id('time')} type="number"
          value={v.time_limit_minutes} error={e.time_limit_minutes} inputmode="numeric"
          hint={`A whole number from 1 to ${TIME_LIMIT_MAX_MINUTES}; leave it empty for no limit. Learning quizzes have none.`} />
        <fieldset aria-describedby={e.extraction_mode ? id('extraction-error') : undefined}>
          <legend>How to find the questions</legend>
          {noAi ? <p class="muted" id={id('no-ai')}>No AI model is set up, so only pattern matching is available. An admin can add an extraction model under AI models.</p> : ''}
          {MODE_ORDER.map((m) => {
            const info = EXTRACTION_MODE_INFO[m]
            const disabled = noAi && info.ai
            return (
              <label for={id(`x-${m}`)}>
                <span>
                  <input type="radio" id={id(`x-${m}`)} name="extraction_mode" value={m} checked={v.extraction_mode === m ? true : undefined}
                    disabled={disabled ? true : undefined} aria-describedby={id(`x-${m}-hint`)} /> <span safe>{info.label}</span>
                </span>
                <span class="field-hint muted" id={id(`x-${m}-hint`)} safe>{info.hint}</span>
              </label>
            )
          })}
          <ErrorText id={id('extraction-error')} error={e.extraction_mode} />
        </fieldset>
        {noAi ? '' : (
          <label for={id('model')}>
            <span>AI model</span>
            <select id={id('model')} name="model_id" aria-describedby={[id('model-hint'), e.model_id ? id('model-error') : ''].filter(Boolean).join(' ')}>
              {p.data.models.map((m) => (
                <option value={m.id === null ? '' : String(m.id)} selected={v.model_id === (m.id === null ? '' : String(m.id)) ? true : undefined} safe>
                  {`${m.name} (${m.model_id})${m.is_default ? ', the default' : ''}`}
                </option>
              ))}
            </select>
            <span class="field-hint muted" id={id('model-hint')}>Used by the AI modes; pattern matching needs none.</span>
            <ErrorText id={id('model-error')} error={e.model_id} />
          </label>
        )}
        <label for={id('category')}>
          <span>Question category (optional)</span>
          <select id={id('category')} name="question_category_id" aria-describedby={e.question_category_id ? id('category-error') : undefined}>
            <option value="" selected={v.question_category_id === '' ? true : undefined}>No category</option>
            {p.data.categories.map((c) => (
              <option value={String(c.id)} selected={v.question_category_id === String(c.id) ? true : undefined} safe>{c.name}</option>
            ))}
          </select>
          <ErrorText id={id('category-error')} error={e.question_category_id} />
        </label>
        <div>
          <button type="submit">Make the quiz</button>
        </div>
      </form>
    </details>
  )
}

const AddSectionForm = (p: { base: string; document: DocumentResponse; state?: SectionFormState }) => {
  const url = `${docUrl(p.base, p.document.id)}/sections`
  const v = p.state?.values ?? { name: '', start_page: '', end_page: '' }
  const e = p.state?.errors ?? {}
  return (
    <form id="add-section" class="stack" action={url} method="post" hx-post={url} hx-target="#sections" hx-swap="outerHTML">
      {p.state?.message ? <p class="flash error" role="alert" safe>{p.state.message}</p> : ''}
      <Field label="Section name" name="name" id="section-name" value={v.name} error={e.name} required maxlength={SECTION_NAME_MAX} />
      <Field label="Start page" name="start_page" id="section-start" type="number" value={v.start_page} error={e.start_page} inputmode="numeric" required
        hint="The first page of the section, from 1." />
      <Field label="End page" name="end_page" id="section-end" type="number" value={v.end_page} error={e.end_page} inputmode="numeric" required
        hint={`After the start page, and at most ${p.document.total_pages} (the document's last page).`} />
      <div>
        <button type="submit">Add the section</button>
      </div>
    </form>
  )
}

/** The sections, the add form and a "make a quiz" form per section; also the fragment section changes swap in. */
export const SectionsBlock = (p: { base: string; data: SectionsData; add?: SectionFormState; makeQuiz?: MakeQuizState; notice?: string; oob?: boolean }) => {
  const d = p.data.document
  return (
    <section id="sections" hx-swap-oob={p.oob ? 'true' : undefined}>
      <h2>Sections</h2>
      {p.notice ? <p class="flash ok" role="status" safe>{p.notice}</p> : ''}
      {p.data.sections.length === 0 ? <p class="muted">No sections yet.</p> : (
        <table>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Pages</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            {p.data.sections.map((s) => {
              const url = `${docUrl(p.base, d.id)}/sections/${s.id}/delete`
              return (
                <tr id={`section-${s.id}`}>
                  <td safe>{s.name}</td>
                  <td safe>{`${s.start_page} to ${s.end_page}`}</td>
                  <td>
                    <form class="inline" action={url} method="post" hx-post={url} hx-target="#sections" hx-swap="outerHTML">
                      <button type="submit" class="secondary" aria-label={`Delete the section ${s.name}`}>Delete</button>
                    </form>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
      {d.status === 'ready' ? (
        <>
          <h3>Add a section</h3>
          <AddSectionForm base={p.base} document={d} state={p.add} />
          {p.data.sections.length > 0 ? (
            <>
              <h3>Make a quiz</h3>
              <p class="muted">Extraction runs in the background; you are taken to its progress page.</p>
              {p.data.sections.map((s) => (
                <MakeQuizForm base={p.base} data={p.data} section={s}
                  state={p.makeQuiz?.sectionId === s.id ? p.makeQuiz : undefined} />
              ))}
            </>
          ) : ''}
        </>
      ) : (
        <p class="muted">{d.status === 'processing'
          ? 'Sections can be added once the document is ready.'
          : 'This document could not be processed, so it cannot be divided into sections. Upload the file again, or a copy of it without a password.'}</p>
      )}
    </section>
  )
}

export const DocumentPage = (p: Frame & { data: SectionsData; steps: ProcessingStep[]; add?: SectionFormState; makeQuiz?: MakeQuizState }) => (
  <Layout title={p.data.document.original_filename} base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1 safe>{p.data.document.original_filename}</h1>
    <BackLinks base={p.ctx.base} />
    <DocumentStatusBlock base={p.ctx.base} document={p.data.document} steps={p.steps} />
    <SectionsBlock base={p.ctx.base} data={p.data} add={p.add} makeQuiz={p.makeQuiz} />
  </Layout>
)

// ---- an extraction job ----

/** The job's status and steps; polls itself (every 2 s) only while the job is waiting or running. */
export const JobBlock = (p: { base: string; job: Job; canCancel: boolean; message?: Flash }) => {
  const url = jobUrl(p.base, p.job.job_id)
  const live = jobInProgress(p.job.status)
  return (
    <section id="job" hx-get={live ? url : undefined} hx-trigger={live ? POLL_TRIGGER : undefined}
      hx-target={live ? 'this' : undefined} hx-swap={live ? 'outerHTML' : undefined}>
      <h2>Progress</h2>
      {p.message ? <p class={`flash ${p.message.kind}`} role={p.message.kind === 'error' ? 'alert' : 'status'} safe>{p.message.text}</p> : ''}
      <dl class="facts">
        <dt>Status</dt>
        <dd safe>{jobStatusWords(p.job.status)}</dd>
        <dt>Steps</dt>
        <dd>{p.job.steps.length}</dd>
      </dl>
      {p.job.quiz_id === undefined ? ''
        : p.job.quiz_state === undefined || p.job.quiz_state === 'active'
          ? <p class="flash ok">The quiz is ready: <a href={`${p.base}/quizzes/${p.job.quiz_id}`}>open the quiz</a>.</p>
          : <p>The quiz this extraction made is <QuizOfJob base={p.base} quizId={p.job.quiz_id} state={p.job.quiz_state} />.</p>}
      {p.job.status === 'failed' ? <p class="flash error" safe>{`The extraction failed: ${p.job.error ?? 'no reason was recorded'}`}</p> : ''}
      {p.job.status === 'cancelled' ? <p>This extraction was cancelled; no quiz was saved.</p> : ''}
      {live ? (
        <>
          <p>The extraction is working; this part of the page updates itself every few seconds. <a href={url}>Refresh</a></p>
          {p.canCancel ? (
            <form action={`${url}/cancel`} method="post" hx-post={`${url}/cancel`} hx-target="#job" hx-swap="outerHTML">
              <button type="submit" class="danger">Cancel the extraction</button>
            </form>
          ) : ''}
        </>
      ) : ''}
      <h3>Steps</h3>
      {p.job.steps.length === 0 ? <p class="muted">No steps yet.</p> : (
        <ol class="steps">
          {p.job.steps.map((s) => <li><span safe>{s.message}</span> <span class="muted"><When iso={s.at} /></span></li>)}
        </ol>
      )}
    </section>
  )
}

export const JobPage = (p: Frame & { job: Job; canCancel: boolean; documentId: number | null }) => (
  <Layout title={p.job.title || 'Extraction'} base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1 safe>{p.job.title || 'Extraction'}</h1>
    <BackLinks base={p.ctx.base} documentId={p.documentId} />
    <JobBlock base={p.ctx.base} job={p.job} canCancel={p.canCancel} />
  </Layout>
)

// The clinician's workspace (issue 15): one form to work in all day. Choose the note type and the model, dictate or
// upload audio (the transcript lands in its text box), write the note, refine, shorten or clarify it, save it as an
// encounter, mark it reviewed, export it to the file server, write a patient handout and listen to it.
// Every action is a submit button with its own `formaction`, so the whole page works without JavaScript (each post
// answers the page again, its inputs kept); workspace.js adds recording, streamed notes, autosave and copy on top,
// and htmx swaps the note type's fields, the export box and the audio player. Every user or database string is a
// `safe` text child or an attribute.
import { SHORT_MAX, CHIEF_COMPLAINT_MAX, DOCUMENT_MAX, INSTRUCTIONS_MAX, SECTION_MAX, TRANSCRIPT_MAX } from '../models/generation'
import { LABEL_MAX } from '../models/records'
import { GENERATIONS, type GenerationName } from '../services/generation'
import { describedBy, When } from '../../../views/layout'
import { ClinicalLayout, type Errors, type Flash, type NavUser } from './common'

// ---- note types and their fields -------------------------------------------------------------------------------

export interface Choice {
  value: string
  label: string
}

export interface NoteField {
  label: string
  kind: 'text' | 'select' | 'textarea'
  /** The request field of the generation endpoint this field fills. */
  api: string
  /** An answer of a structured request field (`responses`): the key it is sent under. */
  answer?: string
  /** A list request field: one entry per non-blank line. */
  lines?: boolean
  options?: Choice[]
  hint?: string
  max: number
  rows?: number
}

const SHADESS_DOMAINS = [
  ['shadess_strengths', 'Strengths'], ['shadess_school', 'School'], ['shadess_home', 'Home'], ['shadess_activities', 'Activities'],
  ['shadess_drugs', 'Drugs and substances'], ['shadess_emotions', 'Emotions and eating'], ['shadess_sexuality', 'Sexuality'], ['shadess_safety', 'Safety'],
] as const

const choices = (...values: Array<string | [string, string]>): Choice[] =>
  values.map((v) => (typeof v === 'string' ? { value: v, label: v.charAt(0).toUpperCase() + v.slice(1) } : { value: v[0], label: v[1] }))

/** Every field a note type may ask for, by its form name. */
export const FIELDS: Record<string, NoteField> = {
  patientAge: { label: 'Patient age', kind: 'text', api: 'patientAge', hint: 'As you would write it, e.g. 7 years or 18 months', max: SHORT_MAX },
  patientGender: {
    label: 'Patient gender', kind: 'select', api: 'patientGender', max: SHORT_MAX,
    options: choices(['', 'Not stated'], 'female', 'male', 'other'),
  },
  setting: {
    label: 'Setting', kind: 'select', api: 'setting', max: SHORT_MAX,
    options: choices('clinic', 'emergency department', 'urgent care', 'hospital ward', 'telehealth', 'home visit'),
  },
  type: {
    label: 'Visit type', kind: 'select', api: 'type', max: SHORT_MAX,
    options: choices('follow-up', 'new patient', 'urgent care', 'well visit', 'telehealth'),
  },
  chiefComplaint: { label: 'Chief complaint', kind: 'text', api: 'chiefComplaint', hint: 'The reason for the visit, e.g. fever and cough for 3 days', max: CHIEF_COMPLAINT_MAX },
  ros: { label: 'Review of systems (optional)', kind: 'textarea', api: 'ros', max: SECTION_MAX, rows: 3 },
  physicalExam: { label: 'Physical exam (optional)', kind: 'textarea', api: 'physicalExam', max: SECTION_MAX, rows: 3 },
  diagnoses: { label: 'Diagnoses (optional)', kind: 'textarea', api: 'diagnoses', max: SECTION_MAX, rows: 2 },
  visitType: {
    label: 'Type of the coming visit', kind: 'select', api: 'visitType', max: SHORT_MAX,
    options: choices('follow-up', 'annual physical', 'new patient', 'chronic care follow-up', 'pre-operative assessment', 'well-child visit'),
  },
  format: {
    label: 'Format', kind: 'select', api: 'format', max: SHORT_MAX,
    options: choices(['narrative', 'Narrative'], ['problem-based', 'By problem'], ['day-by-day', 'Day by day']),
  },
  milestones: {
    label: 'Milestones', kind: 'textarea', api: 'milestones', lines: true, max: SECTION_MAX, rows: 6,
    hint: 'One per line, with its status, e.g. walks alone: met',
  },
  ...Object.fromEntries(SHADESS_DOMAINS.map(([name, domain]) => [name, {
    label: domain, kind: 'textarea', api: 'responses', answer: domain, max: SECTION_MAX, rows: 2,
  } satisfies NoteField])),
  additionalInstructions: { label: 'Instructions for this note (optional)', kind: 'textarea', api: 'additionalInstructions', max: INSTRUCTIONS_MAX, rows: 2 },
  physicianMemories: {
    label: 'Your preferences for this note (optional)', kind: 'textarea', api: 'physicianMemories', max: INSTRUCTIONS_MAX, rows: 2,
    hint: 'Added to your saved memories, for this note only',
  },
}

export type NoteTypeId = 'soap' | 'hpi_encounter' | 'hpi_dictation' | 'sick_visit' | 'shadess' | 'milestones' | 'chart_review' | 'hospital_course'

export interface NoteType {
  id: NoteTypeId
  label: string
  generation: GenerationName
  /** The saved encounter's `enc_type` (the values models/records.ts documents). */
  encType: string
  /**
   * The request field the transcript box fills: a text field, `responses` (the SHADESS answers, under SOURCE_ANSWER),
   * or null when this note type does not read it.
   */
  source: 'transcript' | 'notes' | 'responses' | null
  fields: readonly string[]
}

/** The SHADESS answer the transcript box is sent as. */
export const SOURCE_ANSWER = 'Interview notes'
const DEMOGRAPHICS = ['patientAge', 'patientGender'] as const

export const NOTE_TYPES: readonly NoteType[] = [
  { id: 'soap', label: 'SOAP note', generation: 'soap', encType: 'soap', source: 'transcript', fields: [...DEMOGRAPHICS, 'type', 'additionalInstructions', 'physicianMemories'] },
  { id: 'hpi_encounter', label: 'HPI from the visit conversation', generation: 'hpiEncounter', encType: 'hpi', source: 'transcript', fields: [...DEMOGRAPHICS, 'setting', 'physicianMemories'] },
  { id: 'hpi_dictation', label: 'HPI from your dictation', generation: 'hpiDictation', encType: 'hpi', source: 'transcript', fields: [...DEMOGRAPHICS, 'setting', 'physicianMemories'] },
  {
    id: 'sick_visit', label: 'Pediatric sick visit', generation: 'sickVisit', encType: 'sick_visit', source: 'transcript',
    fields: ['chiefComplaint', ...DEMOGRAPHICS, 'ros', 'physicalExam', 'diagnoses', 'physicianMemories'],
  },
  { id: 'shadess', label: 'Adolescent well visit (SHADESS)', generation: 'shadess', encType: 'well_visit', source: 'responses', fields: ['patientAge', ...SHADESS_DOMAINS.map(([n]) => n)] },
  { id: 'milestones', label: 'Developmental milestones', generation: 'milestoneNarrative', encType: 'milestones', source: null, fields: [...DEMOGRAPHICS, 'milestones'] },
  { id: 'chart_review', label: 'Pre-visit chart review', generation: 'chartReview', encType: 'chart_review', source: 'notes', fields: ['visitType'] },
  { id: 'hospital_course', label: 'Hospital course', generation: 'hospitalCourse', encType: 'hospital_course', source: 'notes', fields: [...DEMOGRAPHICS, 'format', 'physicianMemories'] },
]

export const DEFAULT_NOTE_TYPE: NoteTypeId = 'soap'
export const noteTypeOf = (id: string | undefined): NoteType => NOTE_TYPES.find((n) => n.id === id) ?? NOTE_TYPES.find((n) => n.id === DEFAULT_NOTE_TYPE)!

const SOURCE_WORDS: Record<string, string> = {
  transcript: 'This note is written from the transcript: the visit conversation or your dictation.',
  notes: 'Paste the prior notes into "Transcript, dictation or notes": this note is written from them.',
  responses: 'Write the answers by domain; the transcript, if any, is added as interview notes.',
  none: 'This note is written from the milestones below; the transcript is not used.',
}

/** The note types using a field, as the page says it without JavaScript (where every field is shown). */
const usedBy = (name: string) => NOTE_TYPES.filter((n) => n.fields.includes(name)).map((n) => n.label).join(', ')

export const HANDOUT_LANGUAGES = [
  'English', 'Spanish', 'French', 'Portuguese', 'Chinese (Simplified)', 'Vietnamese', 'Arabic', 'Haitian Creole', 'Russian', 'Korean', 'German', 'Italian',
] as const
export const READING_LEVELS: Choice[] = [
  { value: '', label: 'Plain language (about 6th grade)' },
  { value: '3rd grade', label: '3rd grade' },
  { value: '5th grade', label: '5th grade' },
  { value: '8th grade', label: '8th grade' },
  { value: 'high school', label: 'High school' },
]

// ---- what the page shows ---------------------------------------------------------------------------------------

/** The clinician's work as the form carries it (and partial_data keeps it). */
export interface WorkspaceValues {
  noteType: NoteTypeId
  model: string
  /** Every note-type field by form name (those of other note types too: without JavaScript all are shown). */
  fields: Record<string, string>
  transcript: string
  note: string
  instructions: string
  label: string
  handout: string
  language: string
  readingLevel: string
}

/** The saved encounter behind the page, if any, and what the next save sends. */
export interface WorkspaceRecord {
  encounterId: number | null
  version: number | null
  /** Made when the page was first rendered: a double click creates one encounter. */
  idempotencyKey: string
  /** `reviewed` only while the note is the one the clinician marked reviewed. */
  status: 'draft' | 'reviewed'
  updatedAt: string | null
  /** Audio backups of this page's recordings, deleted once the note is saved. */
  backupIds: number[]
  /** A save's refusal, said next to the save buttons. */
  message?: string
}

export interface ModelChoices {
  provider: 'litellm' | 'none'
  models: Array<{ id: string; name: string; cost: string; category: string }>
}

export interface Conflict {
  /** The version saved elsewhere, and its note. */
  version: number
  savedNote: string
  savedLabel: string
}

export type ExportState =
  | { kind: 'confirm' }
  | { kind: 'done'; path: string }
  | { kind: 'not_connected'; text: string }
  | { kind: 'failed'; text: string }

export interface WorkspaceView {
  base: string
  values: WorkspaceValues
  record: WorkspaceRecord
  models: ModelChoices
  transcription: boolean
  errors?: Errors
  conflict?: Conflict | null
  exportState?: ExportState | null
  /** The audio address of the handout, once Listen was pressed. */
  listenUrl?: string | null
  listenError?: string | null
}

// ---- pieces ----------------------------------------------------------------------------------------------------

const FieldNotes = ({ id, hint, error, extra }: { id: string; hint?: string; error?: string; extra?: string }) => (
  <>
    {hint || extra ? (
      <span class="field-hint muted" id={`${id}-hint`}>
        {hint ? <span safe>{hint}</span> : ''}
        {extra ? <span safe>{`${hint ? ' · ' : ''}${extra}`}</span> : ''}
      </span>
    ) : ''}
    {error ? <span class="field-error" id={`${id}-error`} safe>{error}</span> : ''}
  </>
)

/** A textarea's text: a leading newline, because the HTML parser drops the first one of the element's content. */
const areaText = (value: string) => `\n${value}`

interface ControlProps {
  id: string
  /** None: a read-only copy that is not sent. */
  name?: string
  label: string
  value: string
  error?: string
  hint?: string
  /** A second hint (which note types use a field, without JavaScript). */
  extra?: string
  max?: number
  rows?: number
  attrs?: Record<string, string>
}

const TextArea = (p: ControlProps & { readonly?: boolean; class?: string }) => (
  <label for={p.id}>
    <span safe>{p.label}</span>
    <textarea
      id={p.id} name={p.name} rows={String(p.rows ?? 4)} maxlength={p.max} readonly={p.readonly} class={p.class}
      aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint || p.extra, p.error)} {...p.attrs}
      safe
    >{areaText(p.value)}</textarea>
    <FieldNotes id={p.id} hint={p.hint} error={p.error} extra={p.extra} />
  </label>
)

const TextInput = (p: ControlProps) => (
  <label for={p.id}>
    <span safe>{p.label}</span>
    <input
      id={p.id} name={p.name} type="text" value={p.value} maxlength={p.max} autocomplete="off"
      aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint || p.extra, p.error)} {...p.attrs}
    />
    <FieldNotes id={p.id} hint={p.hint} error={p.error} extra={p.extra} />
  </label>
)

/**
 * A select; a value that is not among the options (an older save, another client's) stays as an option of its own,
 * and no value at all is the first option.
 */
const Select = (p: ControlProps & { options: Choice[] }) => {
  const known = p.options.some((o) => o.value === p.value)
  const value = !known && p.value === '' ? (p.options[0]?.value ?? '') : p.value
  const options = known || p.value === '' ? p.options : [...p.options, { value: p.value, label: p.value }]
  return (
    <label for={p.id}>
      <span safe>{p.label}</span>
      <select id={p.id} name={p.name} aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, p.hint || p.extra, p.error)} {...p.attrs}>
        {options.map((o) => <option value={o.value} selected={o.value === value ? true : undefined} safe>{o.label}</option>)}
      </select>
      <FieldNotes id={p.id} hint={p.hint} error={p.error} extra={p.extra} />
    </label>
  )
}

/** One note-type field; its data attributes tell workspace.js how it goes into the generation request. */
const NoteFieldControl = ({ name, value, error, withUse }: { name: string; value: string; error?: string; withUse: boolean }) => {
  const f = FIELDS[name]!
  const attrs: Record<string, string> = { 'data-api': f.api }
  if (f.answer) attrs['data-answer'] = f.answer
  if (f.lines) attrs['data-lines'] = ''
  const props: ControlProps = {
    id: `ws-${name}`, name, label: f.label, value, error, hint: f.hint, max: f.max, rows: f.rows, attrs,
    extra: withUse ? `Used for: ${usedBy(name)}` : undefined,
  }
  if (f.kind === 'select') return <Select {...props} options={f.options ?? []} />
  if (f.kind === 'textarea') return <TextArea {...props} />
  return <TextInput {...props} />
}

/**
 * The chosen note type's fields (swapped by htmx when the note type changes). Without JavaScript the other note
 * types' fields follow in a <noscript>, each saying which note types use it, so a change of note type needs no
 * reload; with JavaScript only the chosen type's fields exist.
 */
export const NoteFields = ({ base, values, errors, withNoscript = true }: { base: string; values: WorkspaceValues; errors?: Errors; withNoscript?: boolean }) => {
  const type = noteTypeOf(values.noteType)
  const kind = GENERATIONS[type.generation]
  // An htmx swap (JavaScript is on) needs no <noscript>: htmx would parse its controls as real ones.
  const others = withNoscript ? Object.keys(FIELDS).filter((name) => !type.fields.includes(name)) : []
  return (
    <fieldset
      id="ws-fields" class="ws-fields"
      data-endpoint={`${base}${kind.endpoint}`} data-key={kind.key} data-source={type.source ?? ''} data-source-answer={SOURCE_ANSWER}
      data-enc-type={type.encType}
    >
      <legend safe>{`Details: ${type.label}`}</legend>
      <p class="muted" id="ws-source-words" safe>{SOURCE_WORDS[type.source ?? 'none']}</p>
      {type.fields.map((name) => <NoteFieldControl name={name} value={values.fields[name] ?? ''} error={errors?.[name]} withUse={false} />)}
      {others.length > 0 ? (
        <noscript>
          <p class="muted">Without JavaScript every note type's fields are shown: fill in those of the note type you chose.</p>
          {others.map((name) => <NoteFieldControl name={name} value={values.fields[name] ?? ''} error={errors?.[name]} withUse />)}
        </noscript>
      ) : ''}
    </fieldset>
  )
}

const noteTypeChoices: Choice[] = NOTE_TYPES.map((n) => ({ value: n.id, label: n.label }))

const modelChoices = (m: ModelChoices): Choice[] => m.models.length === 0
  ? [{ value: '', label: 'No model available' }]
  : m.models.map((x) => ({ value: x.id, label: `${x.name} (${x.category}, ${x.cost} cost)` }))

/**
 * What the next save sends (the encounter, its version, the idempotency key) and what was saved; workspace.js
 * swaps it after each save. `data-status` is the saved status.
 */
export const RecordState = ({ record }: { record: WorkspaceRecord }) => (
  <div
    id="ws-record" class="ws-record" data-status={record.status}
    data-encounter={record.encounterId === null ? '' : String(record.encounterId)} data-version={record.version === null ? '' : String(record.version)}
  >
    <input type="hidden" name="encounter_id" value={record.encounterId === null ? '' : String(record.encounterId)} />
    <input type="hidden" name="version" value={record.version === null ? '' : String(record.version)} />
    <input type="hidden" name="idempotency_key" value={record.idempotencyKey} />
    <p id="ws-save-state" role="status">
      {record.encounterId === null
        ? <span>Not saved yet.</span>
        : (
          <span>
            {`Saved (version ${record.version ?? 1}${record.status === 'reviewed' ? ', reviewed' : ', draft'})`}
            {record.updatedAt ? <>{' at '}<When iso={record.updatedAt} /></> : ''}.
          </span>
        )}
    </p>
    {record.message ? <p class="field-error" id="ws-save-error" role="alert" safe>{record.message}</p> : ''}
  </div>
)

/** Yours and the saved version side by side; keep one. */
export const ConflictPanel = ({ base, conflict, mine, encounterId }: { base: string; conflict: Conflict; mine: string; encounterId: number }) => (
  <section id="ws-conflict" class="ws-conflict flash warning" role="alert" aria-labelledby="ws-conflict-title">
    <h2 id="ws-conflict-title">This note was changed somewhere else</h2>
    <p>
      {`Since you opened it, the encounter was saved elsewhere (it is now at version ${conflict.version}). Nothing was overwritten. `}
      Compare the two versions and keep one.
    </p>
    <input type="hidden" name="conflict_version" value={String(conflict.version)} />
    <div class="ws-compare">
      <TextArea id="ws-mine" label="Your version" value={mine} rows={12} readonly class="ws-compare-text" />
      <TextArea id="ws-theirs" label={`Saved version (version ${conflict.version}: ${conflict.savedLabel})`} value={conflict.savedNote} rows={12} readonly class="ws-compare-text" />
    </div>
    <div class="actions">
      <button type="submit" name="keep" value="mine" formaction={`${base}/workspace/save`} data-ws-action="save">Keep my version</button>
      <a class="button secondary" href={`${base}/workspace?encounter=${encounterId}`}>Use the saved version</a>
    </div>
  </section>
)

/** Export to the connected file server: the question for an unreviewed note, the result, or why it did not happen. */
export const ExportBox = ({ base, state }: { base: string; state?: ExportState | null }) => (
  <div id="ws-export" class="ws-export">
    <div class="actions">
      <button
        type="submit" class="secondary" formaction={`${base}/workspace/export`}
        hx-post={`${base}/workspace/export`} hx-target="#ws-export" hx-swap="outerHTML"
      >Export to file server</button>
    </div>
    {state?.kind === 'confirm' ? (
      <div class="flash warning" role="alert" id="ws-export-confirm">
        <p>This note is not reviewed yet: export anyway?</p>
        <button
          type="submit" name="confirm" value="yes" formaction={`${base}/workspace/export`}
          hx-post={`${base}/workspace/export`} hx-target="#ws-export" hx-swap="outerHTML"
        >Export anyway</button>
      </div>
    ) : state?.kind === 'done' ? (
      <p class="flash ok" role="status" id="ws-export-done">Exported to the file server as <code safe>{state.path}</code>.</p>
    ) : state?.kind === 'not_connected' ? (
      <p class="flash error" role="alert" id="ws-export-problem">
        <span safe>{state.text}</span> <a href={`${base}/preferences#webdav`}>Connect a file server in Preferences</a>
      </p>
    ) : state?.kind === 'failed' ? (
      <p class="flash error" role="alert" id="ws-export-problem" safe>{state.text}</p>
    ) : ''}
  </div>
)

/** The handout read aloud (the address serves audio/mpeg), once Listen was pressed. */
export const ListenBox = ({ base, url, error }: { base: string; url?: string | null; error?: string | null }) => (
  <div id="ws-listen" class="ws-listen">
    <button
      type="submit" class="secondary" formaction={`${base}/workspace/listen`}
      hx-post={`${base}/workspace/listen`} hx-target="#ws-listen" hx-swap="outerHTML"
    >Listen</button>
    {url ? <audio controls="" autoplay preload="auto" src={url} aria-label="The handout read aloud"></audio> : ''}
    {error ? <p class="field-error" role="alert" safe>{error}</p> : ''}
  </div>
)

const showBanner = (v: WorkspaceValues, r: WorkspaceRecord) => v.note.trim() !== '' && r.status !== 'reviewed'

// ---- the page --------------------------------------------------------------------------------------------------

export const WorkspaceMain = (p: WorkspaceView) => {
  const { base, values: v, record: r, errors } = p
  const action = (name: string) => `${base}/workspace/${name}`
  const reviewed = !showBanner(v, r) && v.note.trim() !== ''
  return (
    <div id="ws-main">
      <h1>Workspace</h1>
      <p class="muted">
        Dictate or type the visit, write the note, check it, save it.{' '}
        <a href={`${base}/workspace`}>Start a new note</a> · <a href={`${base}/encounters`}>Saved encounters</a>
      </p>
      <form id="ws-form" class="ws-form" action={action('save')} method="post" data-base={base}>
        {/* Enter in a one-line field saves (the first submit button of a form is its default). */}
        <button type="submit" formaction={action('save')} data-ws-action="save" class="visually-hidden" tabindex="-1" aria-hidden="true">Save</button>
        {p.conflict && r.encounterId !== null ? <ConflictPanel base={base} conflict={p.conflict} mine={v.note} encounterId={r.encounterId} /> : <div id="ws-conflict"></div>}
        <div class="ws-grid">
          <div class="ws-col">
            <section aria-labelledby="ws-setup-title">
              <h2 id="ws-setup-title">Note setup</h2>
              <div class="stack ws-stack">
                <Select
                  id="ws-note-type" name="note_type" label="Note type" value={v.noteType} options={noteTypeChoices} error={errors?.note_type}
                  attrs={{ 'hx-post': action('fields'), 'hx-trigger': 'change', 'hx-target': '#ws-fields', 'hx-swap': 'outerHTML' }}
                />
                <Select
                  id="ws-model" name="model" label="AI model" value={v.model} options={modelChoices(p.models)} error={errors?.model}
                  hint={p.models.provider === 'none' ? 'Note writing is not available: no AI service is configured on this server.' : undefined}
                />
                <NoteFields base={base} values={v} errors={errors} />
              </div>
            </section>
            <section aria-labelledby="ws-dictation-title">
              <h2 id="ws-dictation-title">Dictation</h2>
              <div class="stack ws-stack">
                {p.transcription ? '' : <p class="flash warning" id="ws-no-transcription">Transcription is not available on this server: type or paste the text instead.</p>}
                <div class="ws-recorder" data-ws-js hidden>
                  <div class="actions">
                    <span id="ws-record-start-box"><button type="button" id="ws-record-start" disabled={!p.transcription}>Record</button></span>
                    <span id="ws-record-stop-box" hidden><button type="button" id="ws-record-stop" class="danger">Stop recording</button></span>
                    <span id="ws-rec-state" class="ws-rec-state" role="status">Not recording</span>
                    <span id="ws-rec-time" class="ws-rec-time" role="timer" aria-label="Recording time">0:00</span>
                  </div>
                </div>
                <label for="ws-audio">
                  <span>Audio file</span>
                  <input
                    id="ws-audio" name="audio" type="file" accept="audio/*,.webm,.ogg,.opus,.m4a,.mp3,.wav,.flac"
                    aria-invalid={errors?.audio ? 'true' : undefined} aria-describedby={describedBy('ws-audio', 'hint', errors?.audio)}
                  />
                  <span class="field-hint muted" id="ws-audio-hint">A recording of at most 25 MB (WAV, MP3, M4A, OGG, WebM or FLAC). Its text is added to the transcript.</span>
                  {errors?.audio ? <span class="field-error" id="ws-audio-error" safe>{errors.audio}</span> : ''}
                </label>
                <div class="actions">
                  <button
                    type="submit" class="secondary" formaction={action('transcribe')} formenctype="multipart/form-data" data-ws-action="transcribe"
                    disabled={!p.transcription}
                  >Transcribe the file</button>
                </div>
                <TextArea
                  id="ws-transcript" name="transcript" label="Transcript, dictation or notes" value={v.transcript} rows={10} max={TRANSCRIPT_MAX}
                  error={errors?.transcript} hint="Editable: correct it before you write the note."
                />
              </div>
            </section>
          </div>
          <div class="ws-col">
            <section aria-labelledby="ws-note-title">
              <h2 id="ws-note-title">Note</h2>
              <div class="stack ws-stack">
                <div class="actions">
                  <button type="submit" formaction={action('generate')} data-ws-action="generate">Write the note</button>
                  <span id="ws-stop-box" hidden><button type="button" id="ws-stop" class="danger">Stop writing</button></span>
                  <span id="ws-stream-state" class="ws-stream-state muted" role="status"></span>
                </div>
                {/* One of the three lines is always shown, in a slot of its own height: no jump when a note arrives. */}
                <div class="ws-note-status">
                  <p id="ws-no-note" class="muted ws-draft" hidden={v.note.trim() !== ''}>No note yet: write one from the transcript, or type it.</p>
                  <p id="ws-draft" class="flash warning ws-draft" hidden={!showBanner(v, r)}>
                    <strong>Draft: check this note before you use it.</strong>{' '}
                    <button type="submit" class="secondary" formaction={action('review')} data-ws-action="review">Mark as reviewed</button>
                  </p>
                  <p id="ws-reviewed" class="flash ok ws-draft" hidden={!reviewed}><strong>Reviewed.</strong> You marked this note as checked.</p>
                </div>
                <TextArea
                  id="ws-note" name="generated_note" label="Generated note" value={v.note} rows={20} max={DOCUMENT_MAX} error={errors?.generated_note}
                  class="ws-note"
                />
                <div data-ws-js hidden>
                  <div class="actions">
                    <button type="button" id="ws-copy" class="secondary">Copy note</button>
                    <span id="ws-copy-state" role="status"></span>
                  </div>
                </div>
                <div id="ws-copy-confirm" class="flash warning" role="alert" hidden>
                  <p>This note is not reviewed yet: copy anyway?</p>
                  <div class="actions">
                    <button type="button" id="ws-copy-anyway">Copy anyway</button>
                    <button type="button" id="ws-copy-cancel" class="secondary">Cancel</button>
                  </div>
                </div>
                <TextInput
                  id="ws-instructions" name="instructions" label="Refine instruction" value={v.instructions} max={INSTRUCTIONS_MAX}
                  hint="What to change, e.g. add that the parents were counselled on fever care" error={errors?.instructions}
                />
                <div class="actions">
                  <button type="submit" class="secondary" formaction={action('refine')} data-ws-action="refine">Refine</button>
                  <button type="submit" class="secondary" formaction={action('shorten')} data-ws-action="shorten">Shorten</button>
                  <button type="submit" class="secondary" formaction={action('clarify')} data-ws-action="clarify">Clarify</button>
                </div>
              </div>
            </section>
            <section aria-labelledby="ws-save-title">
              <h2 id="ws-save-title">Save</h2>
              <div class="stack ws-stack">
                <TextInput
                  id="ws-label" name="label" label="Label" value={v.label} max={LABEL_MAX} error={errors?.label}
                  hint="How you will find it among your saved encounters. Saved notes are kept 30 days after the last save."
                />
                <RecordState record={r} />
                <input type="hidden" name="backup_ids" id="ws-backup-ids" value={r.backupIds.join(',')} />
                <div class="actions">
                  <button type="submit" formaction={action('save')} data-ws-action="save">Save</button>
                  <span class="muted ws-autosave" data-ws-js hidden>Saved automatically every 10 seconds once it has a label.</span>
                </div>
                <ExportBox base={base} state={p.exportState} />
              </div>
            </section>
            <section aria-labelledby="ws-handout-title">
              <h2 id="ws-handout-title">Patient handout</h2>
              <div class="stack ws-stack">
                <Select
                  id="ws-language" name="language" label="Handout language" value={v.language}
                  options={HANDOUT_LANGUAGES.map((l) => ({ value: l, label: l }))} error={errors?.language}
                />
                <Select id="ws-reading-level" name="readingLevel" label="Reading level" value={v.readingLevel} options={READING_LEVELS} error={errors?.readingLevel} />
                <div class="actions">
                  <button type="submit" class="secondary" formaction={action('handout')} data-ws-action="handout">Write a handout</button>
                  <span id="ws-handout-stop-box" hidden><button type="button" id="ws-handout-stop" class="danger">Stop writing the handout</button></span>
                  <span id="ws-handout-state" class="ws-stream-state muted" role="status"></span>
                </div>
                <TextArea
                  id="ws-handout" name="handout" label="Handout text" value={v.handout} rows={12} max={DOCUMENT_MAX} error={errors?.handout}
                  hint="Written from the note in plain language: check it before you give it to the patient."
                />
                <ListenBox base={base} url={p.listenUrl} error={p.listenError} />
              </div>
            </section>
            <p class="muted ws-keys" data-ws-js hidden>
              Keyboard: <kbd>Ctrl</kbd>+<kbd>S</kbd> (<kbd>⌘</kbd>+<kbd>S</kbd> on a Mac) saves; <kbd>Esc</kbd> stops writing or recording.
            </p>
          </div>
        </div>
      </form>
    </div>
  )
}

export const WorkspacePage = (p: WorkspaceView & { user: NavUser; flash?: Flash }) => (
  <ClinicalLayout title="Workspace" base={p.base} user={p.user} flash={p.flash} pageScripts={['workspace.js']}>
    <WorkspaceMain {...p} />
  </ClinicalLayout>
)

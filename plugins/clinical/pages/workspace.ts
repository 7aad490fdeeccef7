// The clinician's workspace page (issue 15) at /workspace, and the posts of its form. Each action is a page route
// that works without JavaScript (it answers the page again with the form's inputs kept, or Post/Redirect/Get after a
// save); htmx asks some of them for a fragment (the note type's fields, the export box, the audio player, the save
// state), and workspace.js uses the API itself for recording, streamed notes and autosave. The rules stay in the
// services: generation, speech, encounters, audio backups, WebDAV export.
//
// A refused action answers 422 with the page (or fragment) and the reason, whatever the cause (a field, the model,
// the AI service unavailable or failing): htmx swaps 422 (views/layout.tsx), so the message shows in both modes.
// A save over a newer version answers 409 with both versions side by side.
import { Elysia, t, type TSchema } from 'elysia'
import { randomToken } from '../../../src/core/crypto'
import { HttpError } from '../../../src/core/errors'
import { INT4_MAX } from '../../../src/core/schema'
import { bodyLimits, type BodyLimit } from '../../../src/envelope'
import { isFragment } from '../../../views/layout'
import { FormBody, formErrors, formFields, hasErrors, html, redirect } from '../../../views/page'
import { CLINICAL_API_RATE_RULE } from '../envelope'
import { EXPORT_TITLE_MAX, ExportBody } from '../models/files'
import {
  ChartReviewBody, ClarifyBody, HospitalCourseBody, HpiBody, MilestoneNarrativeBody, MilestoneSummaryBody, PatientEducationBody, RefineBody, ShadessBody,
  ShortenBody, SickVisitBody, SoapBody,
} from '../models/generation'
import { SaveEncounterBody, type Encounter } from '../models/records'
import { SPEECH_TEXT_MAX, TRANSCRIBE_MAX_BYTES } from '../models/speech'
import { ENCOUNTER_BODY_LIMIT } from '../routes/records'
import * as audioBackups from '../services/audio-backups'
import * as encounters from '../services/encounters'
import { generateNote, GENERATIONS, type GenerationName } from '../services/generation'
import { modelListing } from '../services/models'
import * as speech from '../services/speech'
import type { ClinicalUser } from '../services/users'
import * as webdav from '../services/webdav-export'
import type { ClinicalState } from '../state'
import type { Errors, Flash } from '../views/common'
import {
  ConflictPanel, DEFAULT_NOTE_TYPE, ExportBox, FIELDS, ListenBox, NOTE_TYPES, NoteFields, noteTypeOf, RecordState, SOURCE_ANSWER,
  WorkspaceMain, WorkspacePage, type ExportState, type NoteType, type WorkspaceRecord, type WorkspaceValues, type WorkspaceView,
} from '../views/workspace'
import { clinicalPageKit } from './common'

/** The form carries two texts of up to 200,000 characters, the handout and the fields: the API save's own limit. */
export const WORKSPACE_FORM_LIMIT = ENCOUNTER_BODY_LIMIT
/** The transcription upload posts the whole form with the recording: a 25 MB file and the form's texts. */
export const WORKSPACE_UPLOAD_LIMIT = {
  bytes: TRANSCRIBE_MAX_BYTES + WORKSPACE_FORM_LIMIT,
  code: 'audio_too_large',
  message: `The audio file is larger than 25 MB (${TRANSCRIBE_MAX_BYTES} bytes)`,
} satisfies BodyLimit
/** How long the address of a handout read aloud works. */
export const LISTEN_TTL_S = 30 * 60
const LISTEN_KEY = (token: string) => `clinical.workspace.listen:${token}`
const LISTEN_TOKEN = /^[A-Za-z0-9_-]{20,64}$/
/** Audio backups one page lists for deletion at most (a day of dictation). */
export const BACKUP_IDS_MAX = 100
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{16,100}$/

/** Notices of the Post/Redirect/Get answers, by the `notice` query value: fixed texts, never the query's. */
const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  reviewed: 'Saved and marked as reviewed.',
}

const GONE = 'This saved encounter is not there any more (deleted, or past its 30 days): save again to keep this note as a new one.'

const BODY_MODELS: Record<GenerationName, TSchema> = {
  hpiEncounter: HpiBody, hpiDictation: HpiBody, soap: SoapBody, chartReview: ChartReviewBody, hospitalCourse: HospitalCourseBody,
  shadess: ShadessBody, sickVisit: SickVisitBody, patientEducation: PatientEducationBody, milestoneNarrative: MilestoneNarrativeBody,
  milestoneSummary: MilestoneSummaryBody, refine: RefineBody, shorten: ShortenBody, clarify: ClarifyBody,
}

const ACTIONS = ['fields', 'transcribe', 'generate', 'refine', 'shorten', 'clarify', 'save', 'review', 'export', 'handout', 'listen'] as const

// ---- the form as the workspace reads it --------------------------------------------------------------------------

const rowId = (value: string | undefined): number | null => {
  if (!value || !/^\d{1,10}$/.test(value)) return null
  const n = Number(value)
  return n >= 1 && n <= INT4_MAX ? n : null
}

const newKey = () => randomToken(18)

export function valuesOf(f: Record<string, string>, defaultModel = ''): WorkspaceValues {
  const fields: Record<string, string> = {}
  for (const name of Object.keys(FIELDS)) if (typeof f[name] === 'string') fields[name] = f[name]!
  return {
    noteType: noteTypeOf(f.note_type).id,
    model: f.model ?? defaultModel,
    fields,
    transcript: f.transcript ?? '',
    note: f.generated_note ?? '',
    instructions: f.instructions ?? '',
    label: f.label ?? '',
    handout: f.handout ?? '',
    language: f.language?.trim() || 'English',
    readingLevel: f.readingLevel ?? '',
  }
}

export function recordOf(f: Record<string, string>): WorkspaceRecord {
  const backupIds = [...new Set((f.backup_ids ?? '').split(',').map((s) => rowId(s.trim())).filter((n): n is number => n !== null))]
  return {
    encounterId: rowId(f.encounter_id),
    version: rowId(f.version),
    idempotencyKey: IDEMPOTENCY_KEY.test(f.idempotency_key ?? '') ? f.idempotency_key! : newKey(),
    status: 'draft',
    updatedAt: null,
    backupIds: backupIds.slice(0, BACKUP_IDS_MAX),
  }
}

/** What partial_data keeps of the work besides the texts: the note type, the model, the fields, the handout. */
function partialOf(v: WorkspaceValues): Record<string, unknown> {
  const fields = Object.fromEntries(Object.entries(v.fields).filter(([, value]) => value.trim() !== ''))
  return {
    note_type: v.noteType, model: v.model, fields, instructions: v.instructions,
    handout: v.handout, language: v.language, readingLevel: v.readingLevel,
  }
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** A saved encounter back in the form: partial_data where it is readable, the note type from enc_type otherwise. */
function valuesFromEncounter(e: Encounter, models: string[], defaultModel: string): WorkspaceValues {
  let partial: Record<string, unknown> = {}
  try {
    const parsed: unknown = e.partial_data ? JSON.parse(e.partial_data) : null
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) partial = parsed as Record<string, unknown>
  } catch {
    // written by another client: the texts are enough
  }
  const fields: Record<string, string> = {}
  const saved = partial.fields && typeof partial.fields === 'object' ? partial.fields as Record<string, unknown> : {}
  for (const name of Object.keys(FIELDS)) {
    const value = str(saved[name])
    if (value !== undefined) fields[name] = value
  }
  const noteType = NOTE_TYPES.find((n) => n.id === str(partial.note_type)) ?? NOTE_TYPES.find((n) => n.encType === e.enc_type) ?? noteTypeOf(DEFAULT_NOTE_TYPE)
  const model = str(partial.model)
  return {
    noteType: noteType.id,
    model: model && models.includes(model) ? model : defaultModel,
    fields,
    transcript: e.transcript,
    note: e.generated_note,
    instructions: str(partial.instructions) ?? '',
    label: e.label,
    handout: str(partial.handout) ?? '',
    language: str(partial.language) || 'English',
    readingLevel: str(partial.readingLevel) ?? '',
  }
}

/**
 * The request of a note type's generation endpoint from the form: each field under its request name (answers in
 * their object, lists one entry per line), the transcript box as the type's source. workspace.js builds the same
 * request from the fields' data attributes (views/workspace.tsx).
 */
export function generationBody(type: NoteType, v: WorkspaceValues): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const name of type.fields) {
    const field = FIELDS[name]!
    const value = v.fields[name] ?? ''
    if (field.answer) {
      const answers = (body[field.api] ??= {}) as Record<string, string>
      if (value.trim()) answers[field.answer] = value.trim()
    } else if (field.lines) {
      body[field.api] = value.split(/\r?\n/).map((line) => line.trim()).filter(Boolean)
    } else {
      body[field.api] = value
    }
  }
  if (type.source === 'responses') {
    const answers = (body.responses ??= {}) as Record<string, string>
    if (v.transcript.trim()) answers[SOURCE_ANSWER] = v.transcript.trim()
  } else if (type.source) {
    body[type.source] = v.transcript
  }
  return body
}

/** Request field -> the form field its message goes next to. */
function formNameOf(type: NoteType, api: string): string {
  if (api === 'currentDocument' || api === 'document' || api === 'noteText') return 'generated_note'
  if (api === type.source || (type.source === 'responses' && api === 'responses' && !type.fields.some((n) => FIELDS[n]!.api === api))) return 'transcript'
  const own = type.fields.find((n) => FIELDS[n]!.api === api)
  if (own) return own
  if (api === 'enc_type') return 'note_type'
  return api
}

/** What the structured inputs need that their models say in their own words: one answer, one milestone. */
function inputProblems(type: NoteType, body: Record<string, unknown>): Errors {
  if (type.source === 'responses' && Object.keys(body.responses as object).length === 0) {
    return { [type.fields.find((n) => FIELDS[n]!.answer)!]: 'Write at least one answer, or the interview in the transcript' }
  }
  if (Array.isArray(body.milestones) && body.milestones.length === 0) return { milestones: 'Write at least one milestone' }
  return {}
}

const SAVE_FIELDS: Record<string, string> = { label: 'label', enc_type: 'note_type', transcript: 'transcript', generated_note: 'generated_note' }

// ---- the controller ----------------------------------------------------------------------------------------------

export const workspacePages = (state: ClinicalState) => {
  const { core } = state
  const base = core.config.clinicalBasePath
  const workspaceUrl = `${base}/workspace`
  const limit = (request: Request) => core.rateLimit.consume(CLINICAL_API_RATE_RULE, core.clientAddress(request))

  const listing = async () => {
    const l = await modelListing(core)
    return { models: { provider: l.provider, models: l.models }, defaultModel: l.defaultModel ?? l.models[0]?.id ?? '' }
  }

  /** The record with its saved status: `reviewed` only while the form's note is the one marked reviewed. */
  const settle = async (userId: number, r: WorkspaceRecord, note: string): Promise<WorkspaceRecord> => {
    if (r.encounterId === null) return r
    try {
      const e = await encounters.getEncounter(core, userId, r.encounterId)
      return { ...r, status: e.status === 'reviewed' && e.generated_note === note ? 'reviewed' : 'draft', updatedAt: e.updated_at }
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) return r
      throw err
    }
  }

  type PageParts = Omit<WorkspaceView, 'base' | 'models' | 'transcription'>
  const page = async (user: ClinicalUser, parts: PageParts, status = 200, flash: Flash = null, headers: Record<string, string> = {}) => {
    const { models } = await listing()
    return html(WorkspacePage({
      base, user, flash, models, transcription: speech.transcriptionStatus(core).available, ...parts,
    }), { status, headers })
  }

  /** A refused action as the form shows it: messages next to their fields, the reason in the flash. */
  const refusal = (err: unknown, nameOf: (api: string) => string): { errors?: Errors; flash: NonNullable<Flash>; headers: Record<string, string> } => {
    if (!(err instanceof HttpError)) throw err
    const retryAfter = err.headers?.['retry-after']
    const headers: Record<string, string> = retryAfter ? { 'retry-after': retryAfter } : {}
    if (err.code === 'unknown_model' || err.code === 'model_disabled') return { errors: { model: err.message }, flash: { kind: 'error', text: err.message }, headers }
    const errors = err.fields ? Object.fromEntries(Object.entries(err.fields).map(([k, m]) => [nameOf(k), m])) : undefined
    return { errors, flash: { kind: 'error', text: err.message }, headers }
  }

  /**
   * Writes text with a generation endpoint's rules: the request checked against the endpoint's model first (an empty
   * model means the default one), then the service. The fields that fail throw 422 with the form's names.
   */
  const write = async (request: Request, userId: number, kind: GenerationName, body: Record<string, unknown>, nameOf: (api: string) => string) => {
    const checked: Record<string, unknown> = { ...body }
    if (typeof checked.model !== 'string' || checked.model === '') delete checked.model
    const errors = formErrors(BODY_MODELS[kind], checked)
    if (checked.model === undefined) delete errors.model
    if (hasErrors(errors)) {
      throw HttpError.unprocessable('invalid_fields', 'Check the fields marked below', Object.fromEntries(Object.entries(errors).map(([k, m]) => [nameOf(k), m])))
    }
    await limit(request)
    return generateNote(core, GENERATIONS[kind], userId, checked)
  }

  /** A generation action of the form: the text lands in `into`, or the page says why not. */
  const generationAction = (
    what: (v: WorkspaceValues) => { kind: GenerationName; body: Record<string, unknown>; into: 'note' | 'handout'; done: string; errors?: Errors },
  ) => async ({ user, request, body }: { user: ClinicalUser; request: Request; body: unknown }) => {
    const f = formFields(body)
    const v = valuesOf(f)
    const r = recordOf(f)
    const type = noteTypeOf(v.noteType)
    const job = what(v)
    try {
      if (job.errors && hasErrors(job.errors)) throw HttpError.unprocessable('invalid_fields', 'Check the fields marked below', job.errors)
      const { text } = await write(request, user.id, job.kind, { ...job.body, model: v.model }, (api) => formNameOf(type, api))
      const values = job.into === 'note' ? { ...v, note: text } : { ...v, handout: text }
      return page(user, { values, record: await settle(user.id, r, values.note) }, 200, { kind: 'ok', text: job.done })
    } catch (err) {
      const { errors, flash, headers } = refusal(err, (api) => formNameOf(type, api))
      return page(user, { values: v, record: await settle(user.id, r, v.note), errors }, 422, flash, headers)
    }
  }

  /** Deletes this page's audio backups once the note is saved (they were only kept until then). */
  const dropBackups = async (userId: number, ids: number[]) => {
    for (const id of ids) {
      await audioBackups.deleteAudioBackup(core, userId, id).catch((err: unknown) => {
        if (!(err instanceof HttpError && err.status === 404)) core.log.warn({ err, id }, 'audio backup not deleted after save')
      })
    }
  }

  /** Save (or mark reviewed): Post/Redirect/Get, the save state for workspace.js, or the conflict with both versions. */
  const saveAction = (status: 'reviewed' | undefined) => async ({ user, request, body }: { user: ClinicalUser; request: Request; body: unknown }) => {
    const f = formFields(body)
    const v = valuesOf(f)
    const r = recordOf(f)
    const fragment = isFragment(request)
    const type = noteTypeOf(v.noteType)
    const keepMine = f.keep === 'mine' ? rowId(f.conflict_version) : null
    const expected = keepMine ?? r.version
    const input: SaveEncounterBody = {
      label: v.label, enc_type: type.encType, transcript: v.transcript, generated_note: v.note, partial_data: partialOf(v),
      ...(status ? { status } : {}),
      ...(r.encounterId !== null
        ? { id: r.encounterId, ...(expected !== null ? { expected_version: expected } : {}) }
        : { idempotency_key: r.idempotencyKey }),
    }
    const nameOf = (api: string) => SAVE_FIELDS[api] ?? api
    try {
      const errors = formErrors(SaveEncounterBody, input)
      if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', Object.values(errors)[0]!, errors)
      const saved = await encounters.saveEncounter(core, user.id, input)
      await dropBackups(user.id, r.backupIds)
      if (!fragment) return redirect(`${workspaceUrl}?encounter=${saved.id}&notice=${status ? 'reviewed' : 'saved'}`)
      const e = await encounters.getEncounter(core, user.id, saved.id)
      const record: WorkspaceRecord = { ...r, encounterId: saved.id, version: saved.version, status: e.status === 'reviewed' ? 'reviewed' : 'draft', updatedAt: e.updated_at, backupIds: [] }
      return html(RecordState({ record }))
    } catch (err) {
      if (err instanceof HttpError && err.code === 'version_conflict' && r.encounterId !== null) {
        const current = await encounters.getEncounter(core, user.id, r.encounterId)
        const conflict = { version: current.version, savedNote: current.generated_note, savedLabel: current.label }
        if (fragment) return html(ConflictPanel({ base, conflict, mine: v.note, encounterId: r.encounterId }), { status: 409 })
        return page(user, { values: v, record: await settle(user.id, r, v.note), conflict }, 409, { kind: 'error', text: err.message })
      }
      if (err instanceof HttpError && err.code === 'encounter_not_found') {
        // Deleted or expired meanwhile: the next save keeps the note as a new encounter.
        const record: WorkspaceRecord = { ...r, encounterId: null, version: null, idempotencyKey: newKey(), message: GONE }
        if (fragment) return html(RecordState({ record }), { status: 422 })
        return page(user, { values: v, record }, 422, { kind: 'error', text: GONE })
      }
      const { errors, flash, headers } = refusal(err, nameOf)
      if (fragment) return html(RecordState({ record: { ...(await settle(user.id, r, v.note)), message: flash.text } }), { status: 422, headers })
      return page(user, { values: v, record: { ...(await settle(user.id, r, v.note)), message: flash.text }, errors }, 422, flash, headers)
    }
  }

  const formRoute = { signedIn: true as const, body: FormBody, bodyLimit: WORKSPACE_FORM_LIMIT }

  return new Elysia()
    .use(clinicalPageKit(state))
    .use(bodyLimits)

    .get('/workspace', async ({ request, user, query }) => {
      const { models, defaultModel } = await listing()
      let values = valuesOf({ note_type: query.type ?? DEFAULT_NOTE_TYPE }, defaultModel)
      let record = recordOf({})
      let flash: Flash = query.notice && NOTICES[query.notice] ? { kind: 'ok', text: NOTICES[query.notice]! } : null
      let status = 200
      if (query.encounter !== undefined) {
        const id = rowId(query.encounter)
        try {
          if (id === null) throw HttpError.notFound('encounter_not_found', encounters.MESSAGES.notFound)
          const e = await encounters.getEncounter(core, user.id, id)
          values = valuesFromEncounter(e, models.models.map((m) => m.id), defaultModel)
          record = { ...record, encounterId: e.id, version: e.version, status: e.status === 'reviewed' ? 'reviewed' : 'draft', updatedAt: e.updated_at }
        } catch (err) {
          if (!(err instanceof HttpError) || err.status !== 404) throw err
          flash = { kind: 'error', text: 'That saved encounter is not there any more: saved encounters are kept 30 days after their last save.' }
          status = 404
        }
      }
      const view: WorkspaceView = { base, values, record, models, transcription: speech.transcriptionStatus(core).available }
      if (isFragment(request)) return html(WorkspaceMain(view), { status })
      return html(WorkspacePage({ ...view, user, flash }), { status })
    }, {
      signedIn: true,
      query: t.Object({ encounter: t.Optional(t.String()), notice: t.Optional(t.String()), type: t.Optional(t.String()) }),
    })

    // The note type changed: its fields (htmx), or the page again with everything kept.
    .post('/workspace/fields', async ({ user, request, body }) => {
      const f = formFields(body)
      const v = valuesOf(f)
      if (isFragment(request)) return html(NoteFields({ base, values: v, withNoscript: false }))
      const r = recordOf(f)
      return page(user, { values: v, record: await settle(user.id, r, v.note) })
    }, formRoute)

    // Without JavaScript: the chosen audio file is transcribed (its text added to the transcript) and kept as an
    // audio backup until the note is saved, as a recording is with JavaScript.
    .post('/workspace/transcribe', async ({ user, request, body }) => {
      const raw = (body ?? {}) as Record<string, unknown>
      const f = formFields(body)
      const v = valuesOf(f)
      const r = await settle(user.id, recordOf(f), v.note)
      const file = raw.audio
      try {
        if (!(file instanceof File) || file.size === 0) {
          throw HttpError.unprocessable('no_audio', 'Choose an audio file to transcribe', { audio: 'Choose an audio file to transcribe' })
        }
        await limit(request)
        const [text, backup] = await Promise.allSettled([
          speech.transcribe(core, user.id, file),
          audioBackups.createAudioBackup(core, user.id, file, noteTypeOf(v.noteType).encType),
        ])
        if (text.status === 'rejected') {
          const { errors, flash, headers } = refusal(text.reason, (k) => k)
          const said = /[.!?]$/.test(flash.text) ? flash.text : `${flash.text}.`
          const kept = backup.status === 'fulfilled' ? ' Your recording is kept for 24 hours as an audio backup.' : ''
          return page(user, { values: v, record: r, errors: errors ?? { audio: flash.text } }, 422, { kind: 'error', text: `${said}${kept}` }, headers)
        }
        if (backup.status === 'rejected') core.log.warn({ err: backup.reason }, 'workspace upload not kept as an audio backup')
        const transcript = v.transcript.trim() ? `${v.transcript.trimEnd()}\n\n${text.value.text}` : text.value.text
        const record = backup.status === 'fulfilled' ? { ...r, backupIds: [...r.backupIds, backup.value.id].slice(0, BACKUP_IDS_MAX) } : r
        const rounded = Math.round(text.value.duration)
        const seconds = rounded > 0 ? ` (${rounded} second${rounded === 1 ? '' : 's'})` : ''
        return page(user, { values: { ...v, transcript }, record }, 200, { kind: 'ok', text: `The recording is transcribed${seconds}: check the transcript.` })
      } catch (err) {
        const { errors, flash, headers } = refusal(err, (k) => k)
        return page(user, { values: v, record: r, errors: errors ?? { audio: flash.text } }, 422, flash, headers)
      }
    }, { signedIn: true, body: FormBody, bodyLimit: WORKSPACE_UPLOAD_LIMIT })

    .post('/workspace/generate', generationAction((v) => {
      const type = noteTypeOf(v.noteType)
      const body = generationBody(type, v)
      return {
        kind: type.generation, body, into: 'note', done: 'The note is written. It is a draft: check it before you use it.', errors: inputProblems(type, body),
      }
    }), formRoute)
    .post('/workspace/refine', generationAction((v) => ({
      kind: 'refine', body: { currentDocument: v.note, instructions: v.instructions, sourceContext: v.transcript }, into: 'note',
      done: 'The note is revised: check the changes.',
    })), formRoute)
    .post('/workspace/shorten', generationAction((v) => ({
      kind: 'shorten', body: { document: v.note }, into: 'note', done: 'The note is shortened: check that nothing you need is gone.',
    })), formRoute)
    .post('/workspace/clarify', generationAction((v) => ({
      kind: 'clarify', body: { document: v.note, context: v.transcript }, into: 'note',
      done: 'The note is clarified: check the places marked [clarify: ...].',
    })), formRoute)
    .post('/workspace/handout', generationAction((v) => ({
      kind: 'patientEducation',
      body: { noteText: v.note, language: v.language, readingLevel: v.readingLevel, patientAge: v.fields.patientAge ?? '' },
      into: 'handout', done: 'The handout is written: check it before you give it to the patient.',
    })), formRoute)

    .post('/workspace/save', saveAction(undefined), formRoute)
    .post('/workspace/review', saveAction('reviewed'), formRoute)

    // Export of the note to the connected file server. A note not marked reviewed asks first ("export anyway?").
    .post('/workspace/export', async ({ user, request, body }) => {
      const f = formFields(body)
      const v = valuesOf(f)
      const r = await settle(user.id, recordOf(f), v.note)
      const answer = (exportState: ExportState, status: number) => isFragment(request)
        ? html(ExportBox({ base, state: exportState }), { status })
        : page(user, { values: v, record: r, exportState }, status)
      if (!v.note.trim()) return answer({ kind: 'failed', text: 'There is no note to export yet.' }, 422)
      if (r.status !== 'reviewed' && f.confirm !== 'yes') return answer({ kind: 'confirm' }, 200)
      const input = { text: v.note, title: (v.label.trim() || noteTypeOf(v.noteType).label).slice(0, EXPORT_TITLE_MAX) }
      try {
        const errors = formErrors(ExportBody, input)
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', `The note cannot be exported: ${Object.values(errors)[0]!.toLowerCase()}`, errors)
        await limit(request)
        const { path } = await webdav.exportNote(core, user.id, input)
        return answer({ kind: 'done', path }, 200)
      } catch (err) {
        if (!(err instanceof HttpError)) throw err
        if (err.code === 'not_connected' || err.code === 'reconnect_needed') return answer({ kind: 'not_connected', text: err.message }, 422)
        return answer({ kind: 'failed', text: err.message }, 422)
      }
    }, formRoute)

    // Listen: the handout is kept (sealed, for LISTEN_TTL_S) under a random address the <audio> element loads, so no
    // patient text goes into an address and the page needs no script to play it.
    .post('/workspace/listen', async ({ user, request, body }) => {
      const f = formFields(body)
      const v = valuesOf(f)
      const text = v.handout.trim()
      let url: string | null = null
      let error: string | null = null
      if (!text) error = 'Write or paste a handout first.'
      else if (text.length > SPEECH_TEXT_MAX) error = `The handout is too long to read aloud: at most ${SPEECH_TEXT_MAX} characters.`
      else {
        const token = randomToken(24)
        await core.kv.set(LISTEN_KEY(token), { userId: user.id, text: core.crypto.sealText(text) }, LISTEN_TTL_S)
        url = `${workspaceUrl}/listen/${token}`
      }
      const status = error ? 422 : 200
      if (isFragment(request)) return html(ListenBox({ base, url, error }), { status })
      return page(user, { values: v, record: await settle(user.id, recordOf(f), v.note), listenUrl: url, listenError: error }, status)
    }, formRoute)
    .get('/workspace/listen/:token', async ({ user, request, params }) => {
      const entry = LISTEN_TOKEN.test(params.token) ? await core.kv.get<{ userId: number; text: string }>(LISTEN_KEY(params.token)) : null
      if (!entry || entry.userId !== user.id) throw HttpError.notFound('listen_expired', 'This reading has expired: press Listen again.')
      await limit(request)
      const { audio, provider } = await speech.speak(core, user.id, { text: core.crypto.openText(entry.text) })
      return new Response(audio as Uint8Array<ArrayBuffer>, {
        headers: { 'content-type': 'audio/mpeg', 'x-tts-provider': provider, 'cache-control': 'private, no-store' },
      })
    }, { signedIn: true, params: t.Object({ token: t.String({ maxLength: 100 }) }) })

    // A form post puts its action in the address bar: a reload (a GET) lands on the workspace, never a 404.
    .get('/workspace/:action', () => redirect(workspaceUrl), {
      signedIn: true, params: t.Object({ action: t.Union(ACTIONS.map((a) => t.Literal(a))) }),
    })
}

// The clinician's record pages: saved encounters (/encounters), memories (/memories), documents (/documents) and
// preferences (/preferences: the speech model and voice, the WebDAV file server). One URL serves a page and its
// htmx fragment; every form also works without JavaScript (Post/Redirect/Get, 422 re-render with the messages next
// to the fields). A delete is two steps: a confirm row (htmx) or a confirm page (without JavaScript). The rules stay
// in the services (encounters, memories, documents, preferences, speech, webdav-export); another user's record is
// the services' 404.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { RowId } from '../../../src/core/schema'
import { bodyLimits } from '../../../src/envelope'
import { isFragment, type Errors, type Flash } from '../../../views/layout'
import { FormBody, formErrors, formFailure, formFields, hasErrors, html, noticeOf, redirect } from '../../../views/page'
import { CLINICAL_API_RATE_RULE } from '../envelope'
import { ConnectBody, UploadBody, WebDavPathBody } from '../models/files'
import { MemoryBody, type EncounterListing, type Memory } from '../models/records'
import { PreferencesBody, SPEECH_ID_MAX } from '../models/speech'
import * as documents from '../services/documents'
import * as encounters from '../services/encounters'
import * as memories from '../services/memories'
import * as preferences from '../services/preferences'
import * as speech from '../services/speech'
import type { ClinicalUser } from '../services/users'
import * as webdav from '../services/webdav-export'
import type { ClinicalState } from '../state'
import {
  DeleteDocumentPage, DeleteEncounterPage, ENCOUNTER_PAGE_SIZE, DeleteMemoryPage, DocumentList, DocumentRow, DocumentsPage, EncounterList, EncounterRow,
  EncountersPage, MemoriesContent, MemoriesPage, MemoryEditRow, MemoryList, MemoryRow, PreferencesContent, PreferencesPage, SpeechForm, WebDavSection,
  type EncounterPage, type MemoriesView, type MemoryEditing, type MemoryValues, type SpeechView, type UploadState, type WebDavView,
} from '../views/records'
import { clinicalPageKit } from './common'

const IdParams = t.Object({ id: RowId() })
const NoticeQuery = t.Object({ notice: t.Optional(t.String()) })
/** A page of the encounter list (the deepest page a full list can have, and then some). */
const PAGE_MAX = 1000
const PageQuery = t.Object({ page: t.Optional(t.Integer({ minimum: 1, maximum: PAGE_MAX })) })
const pageOf = (value: string | undefined) => (value && /^\d{1,4}$/.test(value) ? Math.min(Math.max(Number(value), 1), PAGE_MAX) : 1)
const DescriptionForm = t.Object({ description: UploadBody.properties.description })

/** Notices of the Post/Redirect/Get answers, by the `notice` query value: fixed texts, never the query's. */
const NOTICES = {
  'encounter-deleted': 'The saved encounter was deleted.',
  'memory-added': 'The memory was added.',
  'memory-saved': 'The memory was saved.',
  'memory-deleted': 'The memory was deleted.',
  'document-uploaded': 'The document was uploaded.',
  'document-deleted': 'The document was deleted.',
  'speech-saved': 'Your speech settings were saved.',
  'webdav-connected': 'The file server is connected.',
  'webdav-disconnected': 'The file server is disconnected. Your export folder is kept for the next connection.',
  'folder-saved': 'The export folder was saved.',
} as const
type NoticeKey = keyof typeof NOTICES

/** What the voice sample says. */
export const VOICE_SAMPLE_TEXT = 'This is how your notes and patient handouts sound when they are read aloud.'

/** The connect refusals about one field of the form, by the service's error code. */
const CONNECT_FIELD_OF: Record<string, 'url' | 'username' | 'password'> = {
  invalid_server: 'url', server_not_allowed: 'url', server_not_https: 'url', webdav_redirect: 'url', webdav_unreachable: 'url',
  webdav_not_found: 'url', webdav_refused: 'url', webdav_forbidden: 'username', webdav_auth_failed: 'password',
}

/**
 * A refused file-server form. The file server out of reach or failing (502, with the service's own wording) is
 * something the clinician can act on (a wrong address, a server down), so it is shown on the form, not as an error page.
 */
function fileServerFailure(err: unknown): { errors?: Errors; flash: NonNullable<Flash>; headers: Record<string, string> } {
  if (err instanceof HttpError && err.status === 502 && err.code.startsWith('webdav_')) {
    return { flash: { kind: 'error', text: err.message }, headers: {} }
  }
  return formFailure(err)
}

/** A plain post's failure as its field message: the service's own fields, else its message next to the field its code is about. */
function fieldMessage(err: unknown, errors: Errors | undefined, fieldOf: Record<string, string>): { errors?: Errors; placed: boolean } {
  if (errors) return { errors, placed: true }
  const field = err instanceof HttpError ? fieldOf[err.code] : undefined
  return field ? { errors: { [field]: (err as HttpError).message }, placed: true } : { placed: false }
}

const memoryValues = (f: Record<string, string>): MemoryValues => ({ category: f.category ?? '', name: f.name ?? '', content: f.content ?? '' })

export const recordPages = (state: ClinicalState) => {
  const { core } = state
  const base = core.config.clinicalBasePath
  const limit = (request: Request) => core.rateLimit.consume(CLINICAL_API_RATE_RULE, core.clientAddress(request))

  // ---- saved encounters ----
  /** One of the user's unexpired encounters as its list row shows it (the service's 404 otherwise). */
  const encounterListing = async (userId: number, id: number): Promise<EncounterListing> => {
    const { transcript, generated_note, partial_data: _, ...e } = await encounters.getEncounter(core, userId, id)
    return { ...e, transcript_preview: encounters.preview(transcript), note_preview: encounters.preview(generated_note) }
  }
  /** One page of the list: one more row than shown is read, to know whether older ones follow. */
  const encounterPage = async (userId: number, page: number): Promise<EncounterPage> => {
    const rows = await encounters.listEncounters(core, userId, { limit: ENCOUNTER_PAGE_SIZE + 1, offset: (page - 1) * ENCOUNTER_PAGE_SIZE })
    return { encounters: rows.slice(0, ENCOUNTER_PAGE_SIZE), page, more: rows.length > ENCOUNTER_PAGE_SIZE }
  }

  // ---- memories ----
  /** One of the user's memories, with the list the page shows; 404 for another user's. */
  const ownMemory = async (userId: number, id: number): Promise<{ list: Memory[]; memory: Memory }> => {
    const [memory, list] = await Promise.all([memories.getMemory(core, userId, id), memories.listMemories(core, userId)])
    return { list, memory }
  }
  const memoriesPage = async (user: ClinicalUser, view: Partial<MemoriesView> & { flash?: Flash } = {}, status = 200) =>
    html(MemoriesPage({ base, user, memories: view.memories ?? (await memories.listMemories(core, user.id)), ...view }), { status })

  // ---- documents ----
  const ownDocument = async (userId: number, id: number) => {
    const document = (await documents.listDocuments(core, userId)).find((d) => d.id === id)
    if (!document) throw HttpError.notFound('document_not_found', documents.MESSAGES.notFound)
    return document
  }
  const documentsPage = async (user: ClinicalUser, extra: { upload?: UploadState; flash?: Flash } = {}, status = 200) =>
    html(DocumentsPage({ base, user, documents: await documents.listDocuments(core, user.id), s3: core.storage.s3 !== null, ...extra }), { status })

  // ---- preferences ----
  const speechView = async (userId: number): Promise<SpeechView> => {
    const { sttModel, ttsVoice, offer } = await preferences.effectivePreferences(core, userId)
    return { sttModels: offer.sttModels, ttsVoices: offer.ttsVoices, sttModel, ttsVoice }
  }
  const webdavView = async (userId: number): Promise<WebDavView> => webdav.connectionStatus(core, userId)
  const preferencesPage = async (
    user: ClinicalUser, extra: { speech?: Partial<SpeechView>; webdav?: Partial<WebDavView>; flash?: Flash } = {}, status = 200,
  ) => {
    const [speechNow, webdavNow] = await Promise.all([speechView(user.id), webdavView(user.id)])
    return html(PreferencesPage({
      base, user, flash: extra.flash, speech: { ...speechNow, ...extra.speech }, webdav: { ...webdavNow, ...extra.webdav },
    }), { status })
  }
  /** After a file-server form: the section for htmx, else Post/Redirect/Get. */
  const afterWebDav = async (request: Request, userId: number, notice: NoticeKey) => isFragment(request)
    ? html(WebDavSection({ base, view: { ...(await webdavView(userId)), notice: NOTICES[notice] } }))
    : redirect(`${base}/preferences?notice=${notice}#webdav`)
  const webdavRefused = async (request: Request, user: ClinicalUser, webdavExtra: Partial<WebDavView>, headers: Record<string, string>) => {
    if (!isFragment(request)) return preferencesPage(user, { webdav: webdavExtra }, 422).then((res) => withHeaders(res, headers))
    return html(WebDavSection({ base, view: { ...(await webdavView(user.id)), ...webdavExtra } }), { status: 422, headers })
  }

  return new Elysia()
    .use(clinicalPageKit(state))
    .use(bodyLimits)

    // ---- saved encounters ----
    .get('/encounters', async ({ request, user, query }) => {
      const list = await encounterPage(user.id, query.page ?? 1)
      if (isFragment(request)) return html(EncounterList({ base, list }))
      return html(EncountersPage({ base, user, list, flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: t.Object({ ...NoticeQuery.properties, ...PageQuery.properties }) })
    .get('/encounters/:id', async ({ request, user, params, query }) => {
      const e = await encounterListing(user.id, params.id)
      return isFragment(request) ? html(EncounterRow({ base, e, page: query.page })) : redirect(`${base}/encounters#encounter-${e.id}`)
    }, { signedIn: true, params: IdParams, query: PageQuery })
    .get('/encounters/:id/delete', async ({ request, user, params, query }) => {
      const e = await encounterListing(user.id, params.id)
      return html(isFragment(request) ? EncounterRow({ base, e, confirm: true, page: query.page }) : DeleteEncounterPage({ base, user, e }))
    }, { signedIn: true, params: IdParams, query: PageQuery })
    .post('/encounters/:id/delete', async ({ request, user, params, body }) => {
      await encounters.deleteEncounter(core, user.id, params.id)
      if (!isFragment(request)) return redirect(`${base}/encounters?notice=encounter-deleted`)
      // The page the list was on (a form field, so it is checked here like the query's).
      const page = pageOf(formFields(body).page)
      return html(EncounterList({ base, list: await encounterPage(user.id, page), notice: NOTICES['encounter-deleted'] }))
    }, { signedIn: true, params: IdParams, body: FormBody })

    // ---- memories ----
    .get('/memories', async ({ request, user, query }) => {
      const list = await memories.listMemories(core, user.id)
      if (isFragment(request)) return html(MemoriesContent({ base, memories: list }))
      return memoriesPage(user, { memories: list, flash: noticeOf(NOTICES, query.notice) })
    }, { signedIn: true, query: NoticeQuery })
    .post('/memories', async ({ request, user, body }) => {
      const values = memoryValues(formFields(body))
      try {
        const errors = formErrors(MemoryBody, values)
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the memory', errors)
        await memories.createMemory(core, user.id, values)
        if (!isFragment(request)) return redirect(`${base}/memories?notice=memory-added`)
        return html(MemoriesContent({ base, memories: await memories.listMemories(core, user.id), notice: NOTICES['memory-added'] }))
      } catch (err) {
        const { errors, flash, headers } = formFailure(err)
        const add = { values, errors, message: errors ? undefined : flash.text }
        if (!isFragment(request)) return withHeaders(await memoriesPage(user, { add }, 422), headers)
        return html(MemoriesContent({ base, memories: await memories.listMemories(core, user.id), add }), { status: 422, headers })
      }
    }, { signedIn: true, body: FormBody })
    .get('/memories/:id', async ({ request, user, params }) => {
      const { memory } = await ownMemory(user.id, params.id)
      return isFragment(request) ? html(MemoryRow({ base, m: memory })) : redirect(`${base}/memories#memory-${memory.id}`)
    }, { signedIn: true, params: IdParams })
    .get('/memories/:id/edit', async ({ request, user, params }) => {
      const { list, memory } = await ownMemory(user.id, params.id)
      const editing: MemoryEditing = { id: memory.id, state: { values: { category: memory.category, name: memory.name, content: memory.content } } }
      if (isFragment(request)) return html(MemoryEditRow({ base, ...editing }))
      return memoriesPage(user, { memories: list, editing })
    }, { signedIn: true, params: IdParams })
    .post('/memories/:id', async ({ request, user, params, body }) => {
      const values = memoryValues(formFields(body))
      try {
        const errors = formErrors(MemoryBody, values)
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the memory', errors)
        await memories.updateMemory(core, user.id, params.id, values)
        if (!isFragment(request)) return redirect(`${base}/memories?notice=memory-saved#memory-${params.id}`)
        const { memory } = await ownMemory(user.id, params.id)
        return html(MemoryRow({ base, m: memory, saved: true }))
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) throw err
        const { errors, flash, headers } = formFailure(err)
        const editing: MemoryEditing = { id: params.id, state: { values, errors, message: errors ? undefined : flash.text } }
        if (isFragment(request)) return html(MemoryEditRow({ base, ...editing }), { status: 422, headers })
        return withHeaders(await memoriesPage(user, { editing }, 422), headers)
      }
    }, { signedIn: true, params: IdParams, body: FormBody })
    .get('/memories/:id/delete', async ({ request, user, params }) => {
      const { memory } = await ownMemory(user.id, params.id)
      return html(isFragment(request) ? MemoryRow({ base, m: memory, confirm: true }) : DeleteMemoryPage({ base, user, m: memory }))
    }, { signedIn: true, params: IdParams })
    .post('/memories/:id/delete', async ({ request, user, params }) => {
      await memories.deleteMemory(core, user.id, params.id)
      if (!isFragment(request)) return redirect(`${base}/memories?notice=memory-deleted`)
      return html(MemoryList({ base, memories: await memories.listMemories(core, user.id), notice: NOTICES['memory-deleted'] }))
    }, { signedIn: true, params: IdParams, body: FormBody })

    // ---- documents ----
    .get('/documents', async ({ request, user, query }) => {
      if (isFragment(request)) return html(DocumentList({ base, documents: await documents.listDocuments(core, user.id) }))
      return documentsPage(user, { flash: noticeOf(NOTICES, query.notice) })
    }, { signedIn: true, query: NoticeQuery })
    // Without htmx (the form is not boosted: see UploadForm): Post/Redirect/Get, or the page again with the refusal.
    .post('/documents/upload', async ({ user, body }) => {
      const fields = (body ?? {}) as Record<string, unknown>
      const file = fields.file
      const description = typeof fields.description === 'string' ? fields.description : ''
      try {
        // A form sent without a file chosen carries an empty, nameless file part (or none at all).
        if (!(file instanceof File) || (file.size === 0 && !file.name)) {
          throw HttpError.unprocessable('no_file', 'Choose a file to upload', { file: 'Choose a file to upload' })
        }
        const errors = formErrors(DescriptionForm, { description })
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the description', errors)
        await documents.uploadDocument(core, user.id, file, description)
        return redirect(`${base}/documents?notice=document-uploaded`)
      } catch (err) {
        const { errors, flash, headers } = formFailure(err)
        // Refusals of the file itself (type, declared type, leading bytes, size, empty) go next to the file input.
        const upload: UploadState = { description, errors: errors ?? { file: flash.text } }
        return withHeaders(await documentsPage(user, { upload }, 422), headers)
      }
    }, {
      // The API upload's limit: a file at 10 MB with its multipart framing; more is 413 before the body is read.
      signedIn: true, body: FormBody, bodyLimit: documents.UPLOAD_BODY_LIMIT,
    })
    .get('/documents/upload', () => redirect(`${base}/documents`), { signedIn: true })
    .get('/documents/:id', async ({ request, user, params }) => {
      const d = await ownDocument(user.id, params.id)
      return isFragment(request) ? html(DocumentRow({ base, d })) : redirect(`${base}/documents#document-${d.id}`)
    }, { signedIn: true, params: IdParams })
    // A fresh short-lived address at each click, so the page never holds a link that has expired.
    .get('/documents/:id/download', async ({ user, params }) => {
      const { url } = await documents.downloadUrl(core, user.id, params.id)
      return redirect(url, { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
    }, { signedIn: true, params: IdParams })
    .get('/documents/:id/delete', async ({ request, user, params }) => {
      const d = await ownDocument(user.id, params.id)
      return html(isFragment(request) ? DocumentRow({ base, d, confirm: true }) : DeleteDocumentPage({ base, user, d }))
    }, { signedIn: true, params: IdParams })
    .post('/documents/:id/delete', async ({ request, user, params }) => {
      await documents.deleteDocument(core, user.id, params.id)
      if (!isFragment(request)) return redirect(`${base}/documents?notice=document-deleted`)
      return html(DocumentList({ base, documents: await documents.listDocuments(core, user.id), notice: NOTICES['document-deleted'] }))
    }, { signedIn: true, params: IdParams, body: FormBody })

    // ---- preferences ----
    .get('/preferences', async ({ request, user, query }) => {
      if (!isFragment(request)) return preferencesPage(user, { flash: noticeOf(NOTICES, query.notice) })
      const [speechNow, webdavNow] = await Promise.all([speechView(user.id), webdavView(user.id)])
      return html(PreferencesContent({ base, speech: speechNow, webdav: webdavNow }))
    }, { signedIn: true, query: NoticeQuery })
    .post('/preferences', async ({ request, user, body }) => {
      const f = formFields(body)
      const input: PreferencesBody = {}
      if (f.stt_model !== undefined) input.stt_model = f.stt_model
      if (f.tts_voice !== undefined) input.tts_voice = f.tts_voice
      try {
        const errors = formErrors(PreferencesBody, input)
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Choose from the lists', errors)
        await preferences.setPreferences(core, user.id, input)
        if (!isFragment(request)) return redirect(`${base}/preferences?notice=speech-saved`)
        return html(SpeechForm({ base, view: { ...(await speechView(user.id)), saved: true } }))
      } catch (err) {
        const { errors, flash, headers } = formFailure(err)
        const extra = { errors, message: errors ? undefined : flash.text }
        if (isFragment(request)) return html(SpeechForm({ base, view: { ...(await speechView(user.id)), ...extra } }), { status: 422, headers })
        return withHeaders(await preferencesPage(user, { speech: extra }, 422), headers)
      }
    }, { signedIn: true, body: FormBody })
    // The chosen voice reading a short sample (the API's speech: the gateway's voice, or the built-in offline one).
    .get('/preferences/voice-sample', async ({ request, user, query }) => {
      await limit(request)
      const { audio, voice } = await speech.speak(core, user.id, { text: VOICE_SAMPLE_TEXT, voice: query.voice || null })
      return new Response(audio as Uint8Array<ArrayBuffer>, {
        headers: {
          'content-type': 'audio/mpeg',
          // The voice is in the address: the same sample may be kept a while; without one it follows the preference.
          'cache-control': query.voice && query.voice === voice ? 'private, max-age=3600' : 'no-store',
        },
      })
    }, { signedIn: true, query: t.Object({ voice: t.Optional(t.String({ maxLength: SPEECH_ID_MAX })) }) })
    .post('/preferences/webdav/connect', async ({ request, user, body }) => {
      const f = formFields(body)
      const input = { url: (f.url ?? '').trim(), username: (f.username ?? '').trim(), password: f.password ?? '' }
      // What the form shows again: never the password.
      const again = { url: input.url, username: input.username }
      try {
        const errors = formErrors(ConnectBody, input)
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the connection details', errors)
        await limit(request)
        await webdav.connect(core, user.id, input)
        return await afterWebDav(request, user.id, 'webdav-connected')
      } catch (err) {
        const { errors, flash, headers } = fileServerFailure(err)
        const placed = fieldMessage(err, errors, CONNECT_FIELD_OF)
        return webdavRefused(request, user, { connect: { ...again, errors: placed.errors }, message: placed.placed ? undefined : flash.text }, headers)
      }
    }, { signedIn: true, body: FormBody })
    .post('/preferences/webdav/path', async ({ request, user, body }) => {
      const path = formFields(body).path ?? ''
      try {
        const errors = formErrors(WebDavPathBody, { path })
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', errors.path!, errors)
        await webdav.setWebDavPath(core, user.id, path)
        return await afterWebDav(request, user.id, 'folder-saved')
      } catch (err) {
        const { errors, flash, headers } = formFailure(err)
        const placed = fieldMessage(err, errors, { invalid_path: 'path' })
        return webdavRefused(request, user, { pathValue: path, pathError: placed.errors?.path, message: placed.placed ? undefined : flash.text }, headers)
      }
    }, { signedIn: true, body: FormBody })
    .post('/preferences/webdav/disconnect', async ({ request, user }) => {
      await webdav.disconnect(core, user.id)
      return afterWebDav(request, user.id, 'webdav-disconnected')
    }, { signedIn: true, body: FormBody })

    // A boosted form post may leave its action in the address bar: a reload (a GET) lands on the page, never a 404.
    .get('/preferences/webdav/:action', () => redirect(`${base}/preferences#webdav`), {
      signedIn: true, params: t.Object({ action: t.Union([t.Literal('connect'), t.Literal('path'), t.Literal('disconnect')]) }),
    })
}

/** A response with more headers (a 429's Retry-After on a re-rendered form). */
async function withHeaders(res: Response, headers: Record<string, string>): Promise<Response> {
  for (const [k, v] of Object.entries(headers)) res.headers.set(k, v)
  return res
}

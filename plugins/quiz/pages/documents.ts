// The quiz service's staff pages for documents and extraction (moderators; a regular user gets 403): the documents
// list with the upload form and the caller's recent extraction jobs, a document's page (status and processing steps,
// sections, "make a quiz" per section) and an extraction job's page. One URL serves a page and its htmx fragment;
// every form works without JavaScript (Post/Redirect/Get), and the rules stay in services/documents.ts and
// services/extraction.ts. A refused form is shown again with its messages: with the service's own status (400, 404,
// 413, 415, 422) for a plain post, with 422 for an htmx request (htmx swaps 422 and no other 4xx).
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { RowId } from '../../../src/core/schema'
import { bodyLimits } from '../../../src/envelope'
import { isFragment, pageContext, type Errors, type Flash } from '../../../views/layout'
import { FormBody, formErrors, formFailure, formFields, html, noticeOf, redirect } from '../../../views/page'
import type { DocumentResponse } from '../models/documents'
import { SECTION_NAME_MAX } from '../models/documents'
import { CreateQuizBody, EXTRACTION_MODES, JobIdParams, TIME_LIMIT_MAX_MINUTES, type ExtractionMode } from '../models/extraction'
import { hasRole, type QuizUser } from '../services/accounts'
import { listAvailableModels } from '../services/ai-models'
import { listQuestionCategories } from '../services/categories'
import * as documents from '../services/documents'
import { cancelExtractionJob, getExtractionJob, listExtractionJobs, startExtraction } from '../services/extraction'
import { quizStates } from '../services/quizzes'
import type { QuizState } from '../state'
import {
  DeleteDocumentPage, DocumentPage, DocumentStatusBlock, DocumentsPage, DocumentTable, JobBlock, jobInProgress, JobPage, jobStatusWords,
  jobUrl, SectionsBlock, type MakeQuizState, type MakeQuizValues, type SectionFormState, type SectionsData, type SectionValues,
} from '../views/documents'

const DocumentParams = t.Object({ id: RowId() })
const SectionParams = t.Object({ id: RowId(), section_id: RowId() })
const INT4_MAX = 2_147_483_647

const requireModerator = (user: QuizUser) => {
  if (!hasRole(user, 'moderator')) throw HttpError.forbidden('insufficient_role', 'Only moderators manage documents and extraction')
}

/** Notices a redirect asks for (`?done=`): fixed texts, never text from the address. */
const NOTICES: Record<string, string> = {
  uploaded: 'The file was uploaded.',
  deleted: 'The document was deleted.',
  'section-added': 'The section was added.',
  'section-deleted': 'The section was deleted.',
  cancelled: 'The extraction was cancelled.',
  imported: 'The PDF was imported from the file server.',
}

const isHtmx = (request: Request) => request.headers.get('hx-request') === 'true'
/** A refused form's status: the service's for a plain post, 422 for htmx (see the top of this file). */
const failureStatus = (request: Request, err: unknown) => (isHtmx(request) ? 422 : err instanceof HttpError ? err.status : 422)

/**
 * After a write that leaves the page: 303 for a plain post; for htmx (a boosted form) HX-Redirect, so the browser
 * loads the new page at its own address (a reload then never posts again or lands on the form's action).
 */
const goTo = (request: Request, location: string) =>
  isHtmx(request) ? new Response(null, { status: 200, headers: { 'hx-redirect': location } }) : redirect(location)

/** A form's whole number ('' and anything else: null); at most INT4_MAX. */
function wholeNumber(value: string): number | null {
  const s = value.trim()
  if (!/^-?\d{1,10}$/.test(s)) return null
  const n = Number(s)
  return Math.abs(n) <= INT4_MAX ? n : null
}

/** The section rules the service answers 400 to, next to the field each one is about. */
const SECTION_FIELD_OF: Record<string, keyof SectionValues> = {
  invalid_name: 'name', invalid_start_page: 'start_page', invalid_end_page: 'end_page', end_page_beyond_document: 'end_page',
}
/** Extraction refusals about one field of the form. */
const QUIZ_FIELD_OF: Record<string, keyof MakeQuizValues> = {
  question_category_not_found: 'question_category_id', model_not_found: 'model_id', model_wrong_task: 'model_id', model_inactive: 'model_id',
}

/** The field errors of a refusal: its own, or its message next to the field its code is about. */
function fieldErrors(err: unknown, errors: Errors | undefined, fieldOf: Record<string, string>): Errors | undefined {
  if (errors) return errors
  const field = err instanceof HttpError ? fieldOf[err.code] : undefined
  return field ? { [field]: (err as HttpError).message } : undefined
}

/** The "make a quiz" form as the extraction request; field messages in plain words for what does not fit. */
function makeQuizInput(sectionId: number, v: MakeQuizValues): { input: CreateQuizBody | null; errors: Errors } {
  const errors: Errors = {}
  const title = v.title.trim()
  const titleError = formErrors(CreateQuizBody, { title }).title
  if (titleError) errors.title = titleError
  if (v.mode !== 'timed' && v.mode !== 'learning') errors.mode = 'Choose timed or learning'
  let timeLimit: number | null = null
  if (v.mode === 'timed' && v.time_limit_minutes.trim() !== '') {
    timeLimit = wholeNumber(v.time_limit_minutes)
    if (timeLimit === null || timeLimit < 1 || timeLimit > TIME_LIMIT_MAX_MINUTES) {
      errors.time_limit_minutes = `Enter a whole number of minutes from 1 to ${TIME_LIMIT_MAX_MINUTES}, or leave it empty`
    }
  }
  const mode = v.extraction_mode as ExtractionMode
  if (!EXTRACTION_MODES.includes(mode)) errors.extraction_mode = 'Choose how to find the questions'
  const optionalId = (value: string, field: keyof MakeQuizValues, what: string): number | null => {
    if (value.trim() === '') return null
    const n = wholeNumber(value)
    if (n === null || n < 1) errors[field] = `Choose ${what} from the list`
    return n
  }
  // Pattern matching uses no model: a model picked for it is left out rather than checked.
  const modelId = mode === 'regex' ? null : optionalId(v.model_id, 'model_id', 'a model')
  const categoryId = optionalId(v.question_category_id, 'question_category_id', 'a category')
  if (Object.keys(errors).length > 0) return { input: null, errors }
  return {
    input: {
      section_id: sectionId, title, mode: v.mode as 'timed' | 'learning', time_limit_minutes: timeLimit,
      model_id: modelId, question_category_id: categoryId, extraction_mode: mode,
    },
    errors,
  }
}

export const documentsPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const docUrl = (id: number) => `${base}/documents/${id}`

  const documentsPage = async (user: QuizUser, extra: { flash?: Flash; uploadError?: string } = {}, status = 200) => {
    const [list, listed] = await Promise.all([documents.listDocuments(core, user), listExtractionJobs(core, user.id)])
    const states = await quizStates(core, listed.flatMap((j) => (j.quiz_id === null ? [] : [j.quiz_id])))
    const jobs = listed.map((j) => ({ ...j, quiz_state: j.quiz_id === null ? undefined : (states.get(j.quiz_id) ?? ('deleted' as const)) }))
    return html(DocumentsPage({ ctx, user, documents: list, jobs, maxUploadSize: core.config.maxUploadSize, ...extra }), { status })
  }
  const sectionsData = async (user: QuizUser, document: DocumentResponse): Promise<SectionsData> => {
    const [sections, models, categories] = await Promise.all([
      documents.listSections(core, user, document.id), listAvailableModels(core, 'extraction'), listQuestionCategories(core),
    ])
    return { document, sections, models, categories }
  }
  const documentPage = async (
    user: QuizUser, id: number, extra: { flash?: Flash; add?: SectionFormState; makeQuiz?: MakeQuizState } = {}, status = 200,
  ) => {
    const document = await documents.getDocument(core, user, id)
    const [{ steps }, data] = await Promise.all([documents.getProcessingSteps(core, user, id), sectionsData(user, document)])
    return html(DocumentPage({ ctx, user, data, steps, ...extra }), { status })
  }
  const sectionsFragment = async (user: QuizUser, id: number, extra: { add?: SectionFormState; notice?: string } = {}, status = 200) => {
    const document = await documents.getDocument(core, user, id)
    return html(SectionsBlock({ base, data: await sectionsData(user, document), ...extra }), { status })
  }
  const jobView = async (user: QuizUser, jobId: string) => {
    const found = await getExtractionJob(core, jobId)
    const state = found.quiz_id === undefined ? undefined : ((await quizStates(core, [found.quiz_id])).get(found.quiz_id) ?? ('deleted' as const))
    const job = { ...found, quiz_state: state }
    const source = await documents.extractionJobSource(core, jobId)
    return { job, canCancel: source?.owner_id === user.id, documentId: source?.document_id ?? null }
  }

  return new Elysia({ prefix: '/documents' })
    .use(pages)
    .use(bodyLimits)
    .get('', async ({ request, user, query }) => {
      requireModerator(user)
      if (isFragment(request)) return html(DocumentTable({ base, documents: await documents.listDocuments(core, user) }))
      return documentsPage(user, { flash: noticeOf(NOTICES, query.done) })
    }, { signedIn: true })
    .post('/upload', async ({ request, user, body }) => {
      requireModerator(user)
      const file = (body as Record<string, unknown> | undefined)?.file
      try {
        // A form sent without a file chosen carries an empty, nameless file part (or none at all).
        if (!(file instanceof Blob) || (file.size === 0 && !(file as File).name)) throw HttpError.badRequest('no_file', 'Choose a PDF file to upload')
        const doc = await documents.uploadDocument(core, user, file as File)
        return goTo(request, `${docUrl(doc.id)}?done=uploaded`)
      } catch (err) {
        const { flash } = formFailure(err)
        return documentsPage(user, { flash, uploadError: flash.text }, failureStatus(request, err))
      }
    }, {
      // The API upload's limit: a file at MAX_UPLOAD_SIZE with its multipart framing; more is 413 before it is read.
      signedIn: true, body: FormBody, bodyLimit: documents.uploadBodyLimit(core.config.maxUploadSize),
    })
    .get('/upload', () => redirect(`${base}/documents`), { signedIn: true })
    .get('/jobs/:job_id', async ({ request, user, params, query }) => {
      requireModerator(user)
      const view = await jobView(user, params.job_id)
      if (isFragment(request)) return html(JobBlock({ base, job: view.job, canCancel: view.canCancel }))
      return html(JobPage({ ctx, user, ...view, flash: noticeOf(NOTICES, query.done) }))
    }, { signedIn: true, params: JobIdParams })
    .post('/jobs/:job_id/cancel', async ({ request, user, params }) => {
      requireModerator(user)
      try {
        await cancelExtractionJob(core, user.id, params.job_id)
        if (!isFragment(request)) return redirect(`${jobUrl(base, params.job_id)}?done=cancelled`)
        const view = await jobView(user, params.job_id)
        return html(JobBlock({ base, job: view.job, canCancel: view.canCancel, message: { kind: 'ok', text: NOTICES.cancelled! } }))
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) throw err
        formFailure(err)
        const view = await jobView(user, params.job_id)
        const code = err instanceof HttpError ? err.code : ''
        const text = code === 'not_job_owner'
          ? 'Only the moderator who started this extraction can cancel it.'
          : jobInProgress(view.job.status)
            ? 'This extraction has already saved its quiz, so it can no longer be cancelled.'
            : `This extraction has already ended (${jobStatusWords(view.job.status).toLowerCase()}), so there is nothing to cancel.`
        const message: Flash = { kind: 'error', text }
        if (isFragment(request)) return html(JobBlock({ base, job: view.job, canCancel: view.canCancel, message }), { status: 422 })
        return html(JobPage({ ctx, user, ...view, flash: message }), { status: failureStatus(request, err) })
      }
    }, { signedIn: true, params: JobIdParams, body: FormBody })
    .get('/jobs/:job_id/cancel', ({ params }) => redirect(jobUrl(base, params.job_id)), { signedIn: true, params: JobIdParams })
    .get('/:id', async ({ request, user, params, query }) => {
      requireModerator(user)
      if (!isFragment(request)) return documentPage(user, params.id, { flash: noticeOf(NOTICES, query.done) })
      // The status block polling itself; once processing has ended, the sections (now with their forms) come along.
      const document = await documents.getDocument(core, user, params.id)
      const { steps } = await documents.getProcessingSteps(core, user, params.id)
      const block = await DocumentStatusBlock({ base, document, steps })
      if (document.status === 'processing') return html(block)
      return html(`${block}${await SectionsBlock({ base, data: await sectionsData(user, document), oob: true })}`)
    }, { signedIn: true, params: DocumentParams })
    .get('/:id/delete', async ({ user, params }) => {
      requireModerator(user)
      const document = await documents.getDocument(core, user, params.id)
      const sections = await documents.listSections(core, user, params.id)
      return html(DeleteDocumentPage({ ctx, user, document, sections: sections.length }))
    }, { signedIn: true, params: DocumentParams })
    .post('/:id/delete', async ({ request, user, params }) => {
      requireModerator(user)
      await documents.deleteDocument(core, params.id)
      return goTo(request, `${base}/documents?done=deleted`)
    }, { signedIn: true, params: DocumentParams, body: FormBody })
    .post('/:id/sections', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const values: SectionValues = { name: f.name ?? '', start_page: f.start_page ?? '', end_page: f.end_page ?? '' }
      try {
        const errors: Errors = {}
        const start = wholeNumber(values.start_page)
        const end = wholeNumber(values.end_page)
        if (!values.name.trim()) errors.name = 'Enter a name for the section'
        else if (values.name.trim().length > SECTION_NAME_MAX) errors.name = `Must be at most ${SECTION_NAME_MAX} characters`
        if (start === null) errors.start_page = 'Enter a page number'
        if (end === null) errors.end_page = 'Enter a page number'
        if (Object.keys(errors).length > 0) throw HttpError.unprocessable('invalid_input', 'Check the section', errors)
        await documents.createSection(core, params.id, { name: values.name.trim(), start_page: start!, end_page: end! })
        if (!isFragment(request)) return redirect(`${docUrl(params.id)}?done=section-added#sections`)
        return sectionsFragment(user, params.id, { notice: NOTICES['section-added'] })
      } catch (err) {
        if (err instanceof HttpError && (err.status === 404 || err.status === 403)) throw err
        const { errors, flash } = formFailure(err)
        const add: SectionFormState = { values, errors: fieldErrors(err, errors, SECTION_FIELD_OF) }
        if (isFragment(request)) return sectionsFragment(user, params.id, { add: { ...add, message: flash.text } }, 422)
        return documentPage(user, params.id, { flash, add }, failureStatus(request, err))
      }
    }, { signedIn: true, params: DocumentParams, body: FormBody })
    .get('/:id/sections', ({ params }) => redirect(`${docUrl(params.id)}#sections`), { signedIn: true, params: DocumentParams })
    .post('/:id/sections/:section_id/delete', async ({ request, user, params }) => {
      requireModerator(user)
      await documents.deleteSection(core, params.id, params.section_id)
      if (!isFragment(request)) return redirect(`${docUrl(params.id)}?done=section-deleted#sections`)
      return sectionsFragment(user, params.id, { notice: NOTICES['section-deleted'] })
    }, { signedIn: true, params: SectionParams, body: FormBody })
    .post('/:id/sections/:section_id/quiz', async ({ request, user, params, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const values: MakeQuizValues = {
        title: f.title ?? '', mode: f.mode ?? '', time_limit_minutes: f.time_limit_minutes ?? '', extraction_mode: f.extraction_mode ?? '',
        model_id: f.model_id ?? '', question_category_id: f.question_category_id ?? '',
      }
      // The section must be this document's: the address names both.
      const sections = await documents.listSections(core, user, params.id)
      if (!sections.some((s) => s.id === params.section_id)) throw HttpError.notFound('section_not_found', 'Section not found')
      try {
        const { input, errors } = makeQuizInput(params.section_id, values)
        if (!input) throw HttpError.unprocessable('invalid_input', 'Check the quiz settings', errors)
        const { job_id } = await startExtraction(core, user.id, input)
        return goTo(request, jobUrl(base, job_id))
      } catch (err) {
        if (err instanceof HttpError && err.status === 403) throw err
        const { errors, flash } = formFailure(err)
        const makeQuiz: MakeQuizState = {
          sectionId: params.section_id, values, errors: fieldErrors(err, errors, QUIZ_FIELD_OF), message: flash.text,
        }
        return documentPage(user, params.id, { flash, makeQuiz }, failureStatus(request, err))
      }
    }, { signedIn: true, params: SectionParams, body: FormBody })
    // A boosted form post may leave its action in the address bar: a reload (a GET) lands on the document's page.
    .get('/:id/sections/:section_id/:action', ({ params }) => redirect(`${docUrl(params.id)}#sections`), {
      signedIn: true, params: t.Object({ id: RowId(), section_id: RowId(), action: t.Union([t.Literal('delete'), t.Literal('quiz')]) }),
    })
}

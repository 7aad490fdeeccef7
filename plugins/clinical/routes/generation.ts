// Note generation (issue 15): the thirteen POST endpoints and GET /api/models. Routing, field checks and answer
// shaping only (a JSON answer, or a server-sent event stream on `Accept: text/event-stream`); the rules live in
// services/generation.ts and services/models.ts.
import { Elysia, type TSchema } from 'elysia'
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import {
  ANSWERS_MAX_ENTRIES, ChartReviewBody, ChartReviewResponse, ClarifyBody, DocumentResponse, HospitalCourseBody, HospitalCourseResponse,
  HpiBody, HpiResponse, MilestoneNarrativeBody, MilestoneNarrativeResponse, MilestoneSummaryBody, MilestoneSummaryResponse, ModelListing,
  PatientEducationBody, PatientEducationResponse, RefineBody, ShadessBody, ShadessResponse, ShortenBody, SickVisitBody, SickVisitResponse,
  SoapBody, SoapResponse,
} from '../models/generation'
import { GENERATIONS, prepareGeneration, runGeneration, type GenerationKind, type GenerationRequest } from '../services/generation'
import { modelListing } from '../services/models'
import type { ClinicalState } from '../state'

const tags = ['Generation']

// ---- field checks: 422 with the fields that fail ---------------------------------------------------------

function fieldMessage(e: ValueError): string {
  const schema = e.schema as { maxLength?: number; minLength?: number; maxItems?: number; maxProperties?: number }
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty: return 'Required'
    case ValueErrorType.StringMinLength: return schema.minLength === 1 ? 'Required' : `At least ${schema.minLength} characters`
    case ValueErrorType.StringMaxLength: return `At most ${schema.maxLength} characters`
    case ValueErrorType.String: return 'Must be text'
    case ValueErrorType.ArrayMaxItems: return `At most ${schema.maxItems} entries`
    case ValueErrorType.ObjectMaxProperties: return `At most ${schema.maxProperties ?? ANSWERS_MAX_ENTRIES} entries`
    case ValueErrorType.ArrayMinItems: return 'At least one entry'
    case ValueErrorType.Union: return 'Not in an accepted form'
    default: return e.message
  }
}

/**
 * A transform hook that checks the body against the route's model before anything else runs: each failing field is
 * named in `fields` of a 422 (the first problem per field; a nested one says where inside the field).
 */
const checkFields = (schema: TSchema) => ({ body }: { body: unknown }) => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw HttpError.unprocessable('invalid_fields', 'The body must be a JSON object', { body: 'The body must be a JSON object' })
  }
  if (Value.Check(schema, body)) return
  // a Map: the field names are the client's keys, and `constructor` or `__proto__` must not meet Object's own
  const fields = new Map<string, string>()
  for (const e of Value.Errors(schema, body)) {
    const [field = 'body', ...inner] = e.path.split('/').filter(Boolean)
    if (fields.has(field)) continue
    fields.set(field, inner.length > 0 ? `${inner.join('.')}: ${fieldMessage(e)}` : fieldMessage(e))
  }
  const [first, message] = [...fields][0]!
  throw HttpError.unprocessable('invalid_fields', `${first}: ${message}`, Object.fromEntries(fields))
}

// ---- server-sent events ---------------------------------------------------------------------------------

/** How often an event stream without news gets a comment line. */
export const SSE_KEEP_ALIVE_MS = 15_000
/** How long a stream waits for its first piece before it starts anyway (a failure after that is an error event). */
export const SSE_HEADERS_WAIT_MS = 10_000

const wantsEventStream = (request: Request) => (request.headers.get('accept') ?? '').includes('text/event-stream')

const encoder = new TextEncoder()
const frame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

/**
 * Runs a generation as an SSE stream: `delta` events while it is written, then `done` with the JSON answer, or
 * `error` with `{error, code}` if it fails once the stream began. A failure before the first piece of text is thrown,
 * so it gets the usual JSON error and status. The client closing the stream aborts the gateway call.
 */
async function eventStream(
  core: Core, request: Request,
  run: (onDelta: (text: string) => void, signal: AbortSignal) => Promise<Record<string, unknown>>,
): Promise<Response> {
  const abort = new AbortController()
  const clientGone = () => abort.abort(new DOMException('The client closed the stream', 'AbortError'))
  request.signal.addEventListener('abort', clientGone, { once: true })
  let sink!: ReadableStreamDefaultController<Uint8Array>
  let open = true
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => void (sink = controller),
    cancel: clientGone,
  })
  const send = (event: string, data: unknown) => {
    if (!open) return
    try {
      sink.enqueue(frame(event, data))
    } catch {
      open = false // the reader went away: the abort above stops the gateway
    }
  }
  // A comment line now and then keeps proxies from closing a stream whose model is still thinking.
  const keepAlive = setInterval(() => {
    if (!open) return
    try {
      sink.enqueue(encoder.encode(': keep-alive\n\n'))
    } catch {
      open = false
    }
  }, SSE_KEEP_ALIVE_MS)
  keepAlive.unref?.()
  const close = () => {
    clearInterval(keepAlive)
    request.signal.removeEventListener('abort', clientGone)
    if (!open) return
    open = false
    try {
      sink.close()
    } catch {
      // already closed by a cancelled reader
    }
  }
  let began!: () => void
  const firstPiece = new Promise<void>((resolve) => (began = resolve))
  const finished = run((text) => {
    send('delta', { text })
    began()
  }, abort.signal)
  // Before the first piece: fail as JSON (the status says what happened). A model that is slow to start gets its
  // stream (and the keep-alive lines) after SSE_HEADERS_WAIT_MS all the same, so no proxy gives up on a silent request.
  let waited: ReturnType<typeof setTimeout> | undefined
  const patience = new Promise<void>((resolve) => (waited = setTimeout(resolve, SSE_HEADERS_WAIT_MS)))
  await Promise.race([firstPiece, finished, patience]).finally(() => clearTimeout(waited)).catch((err: unknown) => {
    open = false
    clearInterval(keepAlive)
    request.signal.removeEventListener('abort', clientGone)
    throw err
  })
  finished.then((answer) => {
    send('done', answer)
    close()
  }, (err: unknown) => {
    if (!abort.signal.aborted) {
      const known = err instanceof HttpError
      if (!known || err.status >= 500) core.log.error({ err: known ? (err.cause ?? err) : err, code: known ? err.code : 'internal', path: new URL(request.url).pathname }, 'generation stream failed')
      send('error', known && err.status < 500 ? { error: err.message, code: err.code } : { error: 'Request failed', code: known ? err.code : 'internal' })
    }
    close()
  })
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
  })
}

// ---- the endpoints --------------------------------------------------------------------------------------

const ERRORS = '422 `invalid_fields` with `fields` naming each field that is missing, too long or of the wrong type; '
  + '400 `unknown_model` when `model` is not listed by GET /api/models, `model_disabled` when an administrator switched it off; '
  + '401 without a session; 503 `ai_not_configured` when the server has no AI gateway; 502 `ai_unreachable` when the gateway '
  + 'cannot be reached or answers with an error, `ai_invalid_output` when it answers with no text; 504 `ai_timeout` when it '
  + 'does not finish in time.'
const DRAFT = 'Nothing is stored: the text is a draft for the clinician to check. Saved as an encounter, it keeps the status `draft` '
  + 'until the clinician marks the encounter `reviewed`.'
const STREAMING = 'Streaming: with `Accept: text/event-stream` the answer is a server-sent event stream (`Cache-Control: no-store`): '
  + '`event: delta` messages whose data is `{"text": "..."}`, one piece of the text each, as it is written; then one `event: done` '
  + 'whose data is the JSON answer below. If the gateway fails once the stream began, `event: error` with `{"error", "code"}` '
  + `(the codes above) ends it instead. A failure before the first piece (within ${SSE_HEADERS_WAIT_MS / 1000} seconds) answers `
  + `with the JSON error and its status; a model still silent after ${SSE_HEADERS_WAIT_MS / 1000} seconds gets its stream started, `
  + `with \`: keep-alive\` comment lines every ${SSE_KEEP_ALIVE_MS / 1000} seconds. Closing `
  + 'the connection cancels the generation. Without that header the answer is JSON.'
const USAGE = 'Each call to the AI gateway is logged for the administrators\' usage figures (user, endpoint, model, tokens, '
  + 'time, outcome), never with any of the text.'

const describe = (what: string, key: string, prompt: string) =>
  [what, '', `The answer carries the text under \`${key}\`, with the \`model\` that wrote it. The instructions are the \`${prompt}\` `
    + 'prompt template, which an administrator may change; the signed-in clinician\'s AI-context memories (and `physicianMemories` '
    + 'where the request has it) are added to them as the clinician\'s preferences.', '', DRAFT, '', STREAMING, '', `Errors: ${ERRORS}`, '', USAGE].join('\n')

export const generationRoutes = ({ core, auth }: ClinicalState) => {
  // Two paths, so each keeps its own type: Elysia takes a handler answering either a Response or the JSON answer.
  const generate = <K extends string>(kind: GenerationKind & { key: K }) => {
    type Answer = { success: true; model: string } & Record<K, string>
    const answer = ({ text, model }: { text: string; model: string }) => ({ success: true as const, [kind.key]: text, model }) as Answer
    const asJson = async (body: GenerationRequest, userId: number): Promise<Answer> =>
      answer(await runGeneration(core, await prepareGeneration(core, kind, userId, body)))
    const asStream = async (body: GenerationRequest, userId: number, request: Request): Promise<Response> => {
      const prepared = await prepareGeneration(core, kind, userId, body)
      return eventStream(core, request, async (onDelta, signal) => answer(await runGeneration(core, prepared, { onDelta, signal })))
    }
    return ({ body, user, request }: { body: GenerationRequest; user: { id: number }; request: Request }) =>
      wantsEventStream(request) ? asStream(body, user.id, request) : asJson(body, user.id)
  }
  const g = GENERATIONS
  return new Elysia({ prefix: '/api' })
    .use(auth)
    .post('/generate-hpi-encounter', generate(g.hpiEncounter), {
      auth: 'user', body: HpiBody, response: HpiResponse, transform: checkFields(HpiBody),
      detail: { tags, summary: 'Write the HPI from a visit conversation', description: describe('The History of Present Illness as narrative prose, from the recorded conversation of the visit.', 'hpi', 'prompt.hpi_encounter') },
    })
    .post('/generate-hpi-dictation', generate(g.hpiDictation), {
      auth: 'user', body: HpiBody, response: HpiResponse, transform: checkFields(HpiBody),
      detail: { tags, summary: 'Write the HPI from dictation', description: describe('The History of Present Illness as narrative prose, from the physician\'s dictation (`transcript`), its spoken corrections applied.', 'hpi', 'prompt.hpi_dictation') },
    })
    .post('/generate-soap', generate(g.soap), {
      auth: 'user', body: SoapBody, response: SoapResponse, transform: checkFields(SoapBody),
      detail: { tags, summary: 'Write a SOAP note', description: describe('A SOAP note (Subjective, Objective, Assessment, Plan) from the visit transcript, for the visit `type`.', 'soap', 'prompt.soap') },
    })
    .post('/generate-chart-review', generate(g.chartReview), {
      auth: 'user', body: ChartReviewBody, response: ChartReviewResponse, transform: checkFields(ChartReviewBody),
      detail: { tags, summary: 'Write a pre-visit chart review', description: describe('A pre-visit chart review of prior notes, focused on the coming `visitType`: active problems, medications, results, care gaps.', 'chartReview', 'prompt.chart_review') },
    })
    .post('/generate-hospital-course', generate(g.hospitalCourse), {
      auth: 'user', body: HospitalCourseBody, response: HospitalCourseResponse, transform: checkFields(HospitalCourseBody),
      detail: { tags, summary: 'Write a hospital course', description: describe('The hospital course of a discharge summary from the admission\'s notes, in the requested `format` (narrative when empty).', 'hospitalCourse', 'prompt.hospital_course') },
    })
    .post('/well-visit/shadess', generate(g.shadess), {
      auth: 'user', body: ShadessBody, response: ShadessResponse, transform: checkFields(ShadessBody),
      detail: { tags, summary: 'Write the SHADESS adolescent assessment', description: describe('The adolescent psychosocial assessment of a well visit (SHADESS domains, strengths first, then concerns and follow-up) from the screening `responses`.', 'assessment', 'prompt.shadess') },
    })
    .post('/sick-visit/note', generate(g.sickVisit), {
      auth: 'user', body: SickVisitBody, response: SickVisitResponse, transform: checkFields(SickVisitBody),
      detail: { tags, summary: 'Write a pediatric sick-visit note', description: describe('A pediatric sick-visit note (chief complaint, HPI, review of systems, exam, assessment, plan) from the chief complaint, the conversation and/or dictation, and the ROS, exam and diagnoses given.', 'note', 'prompt.sick_visit') },
    })
    .post('/patient-education', generate(g.patientEducation), {
      auth: 'user', body: PatientEducationBody, response: PatientEducationResponse, transform: checkFields(PatientEducationBody),
      detail: { tags, summary: 'Write a patient handout', description: describe('A take-home handout in plain language from the clinician\'s note, in the requested `language` (English by default) and `readingLevel` (about 6th grade by default). `model` is optional: the default model when absent (503 when there is none).', 'handout', 'prompt.patient_education') },
    })
    .post('/generate-milestone-narrative', generate(g.milestoneNarrative), {
      auth: 'user', body: MilestoneNarrativeBody, response: MilestoneNarrativeResponse, transform: checkFields(MilestoneNarrativeBody),
      detail: { tags, summary: 'Write a developmental milestones narrative', description: describe('A narrative of developmental milestones by domain (met, not yet met, not assessed) from the checklist in `milestones`.', 'narrative', 'prompt.milestone_narrative') },
    })
    .post('/generate-milestone-summary', generate(g.milestoneSummary), {
      auth: 'user', body: MilestoneSummaryBody, response: MilestoneSummaryResponse, transform: checkFields(MilestoneSummaryBody),
      detail: { tags, summary: 'Summarize a milestones narrative', description: describe('A two- to four-sentence summary of a milestones narrative for the assessment.', 'summary', 'prompt.milestone_summary') },
    })
    .post('/refine', generate(g.refine), {
      auth: 'user', body: RefineBody, response: DocumentResponse, transform: checkFields(RefineBody),
      detail: { tags, summary: 'Revise a document as instructed', description: describe('The whole document revised as the `instructions` say, the rest unchanged; `sourceContext` is the material it was written from.', 'document', 'prompt.refine') },
    })
    .post('/shorten', generate(g.shorten), {
      auth: 'user', body: ShortenBody, response: DocumentResponse, transform: checkFields(ShortenBody),
      detail: { tags, summary: 'Shorten a document', description: describe('The document at about half its length, every diagnosis, abnormal finding, medication and decision kept.', 'document', 'prompt.shorten') },
    })
    .post('/clarify', generate(g.clarify), {
      auth: 'user', body: ClarifyBody, response: DocumentResponse, transform: checkFields(ClarifyBody),
      detail: { tags, summary: 'Clarify a document', description: describe('The document rewritten to be clear and unambiguous, every fact kept; what cannot be resolved is marked `[clarify: ...]`.', 'document', 'prompt.clarify') },
    })
    .get('/models', async () => ({ success: true as const, ...(await modelListing(core)) }), {
      auth: 'user', response: ModelListing,
      detail: {
        tags, summary: 'The AI models clinicians can choose',
        description: 'The models an administrator has switched on, with the default one (used when a request names no model). '
          + '`provider` is `litellm` when an AI gateway is configured and `none` when it is not (generation then answers 503). '
          + '401 without a session.',
      },
    })
}

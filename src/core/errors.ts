// HttpError and the one place that turns errors into responses. Each service has its own JSON body:
// quiz (spec 1) answers FastAPI-style `{detail}`, validation failures 422 with the field locations;
// clinical (specs 2, 3) answers `{success: false, error, code}` and every 5xx says only `Request failed`.
import { Elysia, ValidationError } from 'elysia'
import { isDatabaseUnavailable, pgErrorCode } from './db'
import type { Logger } from './log'
import { pathOf } from './request-url'

export type ServiceStyle = 'quiz' | 'clinical'

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Field name -> message, for form re-renders and 422 bodies. */
    readonly fields?: Record<string, string>,
    options?: { cause?: unknown; headers?: Record<string, string>; extra?: Record<string, unknown> },
  ) {
    super(message, options)
    this.headers = options?.headers
    this.extra = options?.extra
  }
  readonly headers?: Record<string, string>
  /** Extra top-level keys of the JSON body the spec asks for (e.g. `idleTimeout: true`). */
  readonly extra?: Record<string, unknown>

  static badRequest = (code: string, msg: string, fields?: Record<string, string>) => new HttpError(400, code, msg, fields)
  static unauthorized = (code: string, msg: string) => new HttpError(401, code, msg, undefined, { headers: { 'www-authenticate': 'Bearer' } })
  static forbidden = (code: string, msg: string) => new HttpError(403, code, msg)
  static notFound = (code: string, msg: string) => new HttpError(404, code, msg)
  static conflict = (code: string, msg: string) => new HttpError(409, code, msg)
  static tooLarge = (code: string, msg: string) => new HttpError(413, code, msg)
  static unprocessable = (code: string, msg: string, fields: Record<string, string>) => new HttpError(422, code, msg, fields)
  static tooManyRequests = (code: string, msg: string, retryAfterS: number) =>
    new HttpError(429, code, msg, undefined, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterS))) } })
  static upstream = (code: string, cause: unknown, msg = 'Upstream service failed') => new HttpError(502, code, msg, undefined, { cause })
  static unavailable = (code: string, msg: string) => new HttpError(503, code, msg)
  /** 507: a write the disk had no room for; `cause` is the file system's (or the database's) error. */
  static diskFull = (cause: unknown, msg = DISK_FULL_MESSAGE) => new HttpError(507, 'disk_full', msg, undefined, { cause })
}

export const DISK_FULL_MESSAGE = 'The server\'s disk is full: the file was not stored'
/** For a disk-full failure met outside a file write (the embedded database's own files, say). */
export const DISK_FULL_NOTHING_SAVED = 'The server\'s disk is full: nothing was saved'
/** Errno codes of a write refused for want of room: no space left, disk quota exceeded, file too large. */
const DISK_FULL_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EFBIG'])
/** SQLSTATE disk_full: the database server could not extend a file. */
const DISK_FULL_SQLSTATE = '53100'

/** True for a write refused for want of room: ENOSPC, EDQUOT or EFBIG from the file system, 53100 from the database. */
export function isDiskFull(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const code = (err as { code?: unknown }).code
  return (typeof code === 'string' && DISK_FULL_ERRNOS.has(code)) || pgErrorCode(err) === DISK_FULL_SQLSTATE
}

/** A disk-full failure as the 507 HttpError (with `msg`), anything else as it is. */
export const asDiskFull = (err: unknown, msg = DISK_FULL_MESSAGE): unknown =>
  !(err instanceof HttpError) && isDiskFull(err) ? HttpError.diskFull(err, msg) : err

interface FieldProblem {
  location: string
  field: string
  message: string
}

/**
 * Elysia checks a query or path number it has coerced on its own (type `property`), and that error names neither
 * the parameter nor where it was. It is the query parameter whose text is the refused value, or the path parameter
 * of the route (`:name`) whose segment is; when that is not exactly one, the location stays and the name is left out.
 */
function propertyOf(error: ValidationError, request: Request, route: string | undefined): { location: string; field: string } {
  const value = String(error.value)
  const url = new URL(request.url)
  const query = [...new Set([...url.searchParams].filter(([, v]) => v === value).map(([k]) => k))]
  if (query.length === 1) return { location: 'query', field: query[0]! }
  const pattern = (route ?? '').split('/')
  const segments = url.pathname.split('/')
  // the route may be mounted under a prefix the pattern does not show: align the two from their ends
  const offset = segments.length - pattern.length
  const path = pattern.flatMap((part, i) =>
    part.startsWith(':') && offset >= 0 && decodeURIComponent(segments[i + offset] ?? '') === value ? [part.slice(1).replace(/\?$/, '')] : [])
  if (path.length === 1) return { location: 'path', field: path[0]! }
  return { location: query.length > 0 || path.length === 0 ? 'query' : 'path', field: '' }
}

function validationProblems(error: ValidationError, request: Request, route?: string): FieldProblem[] {
  const property = error.type === 'property' ? propertyOf(error, request, route) : null
  const location = property?.location ?? (error.type === 'params' ? 'path' : error.type)
  const all = error.all ?? []
  const problems = all.map((e) => {
    const path = 'path' in e && typeof e.path === 'string' ? e.path : ''
    const message = ('summary' in e && e.summary) || ('message' in e && e.message) || 'Invalid value'
    const field = path ? path.replace(/^\//, '').replaceAll('/', '.') : (property?.field ?? '')
    // Elysia's "Expected … but found: <value>" repeats what was sent: a password or key among it must not come back.
    return { location, field, message: String(message).replace(/ but found: [\s\S]*$/, '') }
  })
  return problems.length > 0 ? problems : [{ location, field: property?.field ?? '', message: 'Invalid input' }]
}

function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

function wantsHtml(request: Request): boolean {
  const path = pathOf(request)
  return !path.includes('/api/') && (request.headers.get('accept') ?? '').includes('text/html')
}

/** The HTML of a service's error page for a browser: its status and message in the service's layout. */
export type ErrorPageRenderer = (status: number, message: string) => string

/** Without a service's own page (a bare test app): a minimal one, still with a real link home. */
const plainPage: ErrorPageRenderer = (status, message) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status}</title></head>` +
  `<body><main><h1>${status}</h1><p>${Bun.escapeHTML(message)}</p><p><a href="/">Go to the start page</a></p></main></body></html>`

const htmlPage = (status: number, message: string, page: ErrorPageRenderer) =>
  new Response(page(status, message), { status, headers: { 'content-type': 'text/html; charset=utf-8' } })

/** The service's JSON error body for a status, code and message. */
export function errorBody(style: ServiceStyle, status: number, code: string, message: string, problems?: FieldProblem[], extra?: Record<string, unknown>) {
  if (style === 'quiz') {
    if (problems) return { detail: problems.map((p) => ({ loc: [p.location, ...(p.field ? p.field.split('.') : [])], msg: p.message, type: code })) }
    return { detail: message, ...extra }
  }
  return { success: false, error: message, code, ...(problems ? { fields: Object.fromEntries(problems.map((p) => [p.field, p.message])) } : {}), ...extra }
}

interface ReplyOptions { problems?: FieldProblem[]; headers?: Record<string, string>; extra?: Record<string, unknown>; page?: ErrorPageRenderer }

export function reply(
  style: ServiceStyle, request: Request, status: number, code: string, message: string,
  opts: ReplyOptions = {},
): Response {
  if (wantsHtml(request)) {
    const res = htmlPage(status, message, opts.page ?? plainPage)
    for (const [k, v] of Object.entries(opts.headers ?? {})) res.headers.set(k, v)
    return res
  }
  return json(status, errorBody(style, status, code, message, opts.problems, opts.extra), opts.headers)
}

/** Seconds a client waits before retrying while the database is unreachable (Retry-After of the 503). */
export const DATABASE_RETRY_AFTER_S = 5
/** An outage ends once this long passes without a request failing on it; the next failure logs a new one. */
export const OUTAGE_QUIET_MS = 60_000

/**
 * Logs a database outage once, not once per request that meets it: the first failure is an error line, and the
 * ones that follow within OUTAGE_QUIET_MS of each other are counted into the same outage.
 */
export function outageLog(log: Logger, now: () => number = Date.now) {
  let lastFailure = -Infinity
  let failures = 0
  return (err: unknown) => {
    const t = now()
    if (t - lastFailure > OUTAGE_QUIET_MS) {
      failures = 0
      log.error({ err }, 'database unavailable: requests answer 503 until it is back')
    }
    failures++
    lastFailure = t
    return failures
  }
}
export type OutageLog = ReturnType<typeof outageLog>

export interface ErrorMapperOptions {
  /** Shared by both services of a process, so one outage is logged once. */
  outage?: OutageLog
  /** The service's error page for browsers. */
  page?: ErrorPageRenderer
}

/** The error mapper of one service; `.use()` it first in the app. */
export const errorMapper = (style: ServiceStyle, log: Logger, opts: ErrorMapperOptions = {}) => {
  const outage = opts.outage ?? outageLog(log)
  const answer: Reply = (request, status, code, message, o = {}) => reply(style, request, status, code, message, { ...o, page: opts.page })
  return new Elysia({ name: 'core.errors', seed: style }).onError({ as: 'global' }, ({ code, error, request, set, route }) => {
    const response = toResponse(style, log, outage, answer, code, error, request, route)
    set.status = response.status // what the request log and metrics record
    return response
  })
}

type Reply = (request: Request, status: number, code: string, message: string, o?: ReplyOptions) => Response

function toResponse(style: ServiceStyle, log: Logger, outage: OutageLog, answer: Reply, code: string | number, error: unknown, request: Request, route?: string): Response {
  // A refusal thrown while the body is read (the body-limit macro) reaches here wrapped in Elysia's ParseError.
  if (code === 'PARSE' && error instanceof Error && error.cause instanceof HttpError) error = error.cause
  // A full disk met anywhere (a file write, the embedded database) is 507, never a bare 500.
  error = asDiskFull(error, DISK_FULL_NOTHING_SAVED)
  if (isDatabaseUnavailable(error)) {
    outage(error)
    const message = style === 'clinical' ? 'Request failed' : 'The service is temporarily unavailable, try again shortly'
    return answer(request, 503, 'database_unavailable', message, { headers: { 'retry-after': String(DATABASE_RETRY_AFTER_S) } })
  }
  if (error instanceof HttpError) {
    if (error.status >= 500) {
      log.error({ err: error.cause ?? error, code: error.code, path: pathOf(request) }, error.message)
      const message = style === 'clinical' ? 'Request failed' : error.message
      return answer(request, error.status, error.code, message, { headers: error.headers })
    }
    const problems = error.fields && error.status === 422
      ? Object.entries(error.fields).map(([field, message]) => ({ location: 'body', field, message }))
      : undefined
    return answer(request, error.status, error.code, error.message, { problems, headers: error.headers, extra: error.extra })
  }
  if (code === 'VALIDATION' && error instanceof ValidationError) {
    const problems = validationProblems(error, request, route)
    const status = style === 'quiz' ? 422 : 400
    const first = problems[0]!
    const message = first.field ? `${first.field}: ${first.message}` : first.message
    return answer(request, status, 'invalid_input', message, { problems })
  }
  if (code === 'PARSE') {
    const status = style === 'quiz' ? 422 : 400
    return answer(request, status, 'invalid_body', 'The request body could not be parsed', {
      problems: [{ location: 'body', field: '', message: 'The request body could not be parsed' }],
    })
  }
  if (code === 'NOT_FOUND') return answer(request, 404, 'not_found', 'Not Found')
  // PostgreSQL text cannot hold U+0000: a NUL in any input is the client's error, not the server's.
  const sqlState = pgErrorCode(error)
  if (sqlState === '22021' || sqlState === '22P05') {
    return answer(request, 400, 'invalid_text', 'Text must not contain NUL (U+0000) characters')
  }
  // Nor can a JSON value hold an unpaired UTF-16 surrogate (JSON.stringify writes it as a `\ud800` escape).
  if (sqlState === '22P02' && /surrogate/i.test(String((error as { detail?: unknown }).detail ?? ''))) {
    return answer(request, 400, 'invalid_text', 'Text must not contain unpaired surrogate characters')
  }
  if (code === 'INVALID_COOKIE_SIGNATURE') return answer(request, 400, 'invalid_cookie', 'Invalid cookie')
  const status = typeof (error as { status?: unknown }).status === 'number' ? (error as { status: number }).status : 500
  if (status >= 400 && status < 500) {
    return answer(request, status, 'bad_request', error instanceof Error ? error.message : 'Bad request')
  }
  log.error({ err: error, path: pathOf(request) }, 'request failed')
  return answer(request, 500, 'internal', 'Request failed')
}

// HttpError and the one place that turns errors into responses. Each service has its own JSON body:
// quiz (spec 1) answers FastAPI-style `{detail}`, validation failures 422 with the field locations;
// clinical (specs 2, 3) answers `{success: false, error, code}` and every 5xx says only `Request failed`.
import { Elysia, ValidationError } from 'elysia'
import { pgErrorCode } from './db'
import type { Logger } from './log'

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
}

interface FieldProblem {
  location: string
  field: string
  message: string
}

function validationProblems(error: ValidationError): FieldProblem[] {
  const location = error.type === 'params' ? 'path' : error.type
  const all = error.all ?? []
  const problems = all.map((e) => {
    const path = 'path' in e && typeof e.path === 'string' ? e.path : ''
    const message = ('summary' in e && e.summary) || ('message' in e && e.message) || 'Invalid value'
    return { location, field: path.replace(/^\//, '').replaceAll('/', '.'), message: String(message) }
  })
  return problems.length > 0 ? problems : [{ location, field: '', message: 'Invalid input' }]
}

function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
}

function wantsHtml(request: Request): boolean {
  const path = new URL(request.url).pathname
  return !path.includes('/api/') && (request.headers.get('accept') ?? '').includes('text/html')
}

function htmlPage(status: number, message: string): Response {
  const text = Bun.escapeHTML(message)
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status}</title></head>` +
      `<body><main><h1>${status}</h1><p>${text}</p><p><a href="javascript:history.back()">Back</a></p></main></body></html>`,
    { status, headers: { 'content-type': 'text/html; charset=utf-8' } },
  )
}

/** The service's JSON error body for a status, code and message. */
export function errorBody(style: ServiceStyle, status: number, code: string, message: string, problems?: FieldProblem[], extra?: Record<string, unknown>) {
  if (style === 'quiz') {
    if (problems) return { detail: problems.map((p) => ({ loc: [p.location, ...(p.field ? p.field.split('.') : [])], msg: p.message, type: code })) }
    return { detail: message, ...extra }
  }
  return { success: false, error: message, code, ...(problems ? { fields: Object.fromEntries(problems.map((p) => [p.field, p.message])) } : {}), ...extra }
}

export function reply(style: ServiceStyle, request: Request, status: number, code: string, message: string, opts: { problems?: FieldProblem[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {}): Response {
  if (wantsHtml(request)) {
    const res = htmlPage(status, message)
    for (const [k, v] of Object.entries(opts.headers ?? {})) res.headers.set(k, v)
    return res
  }
  return json(status, errorBody(style, status, code, message, opts.problems, opts.extra), opts.headers)
}

/** The error mapper of one service; `.use()` it first in the app. */
export const errorMapper = (style: ServiceStyle, log: Logger) =>
  new Elysia({ name: 'core.errors', seed: style }).onError({ as: 'global' }, ({ code, error, request }) => {
    if (error instanceof HttpError) {
      if (error.status >= 500) {
        log.error({ err: error.cause ?? error, code: error.code, path: new URL(request.url).pathname }, error.message)
        const message = style === 'clinical' ? 'Request failed' : error.message
        return reply(style, request, error.status, error.code, message, { headers: error.headers })
      }
      const problems = error.fields && error.status === 422
        ? Object.entries(error.fields).map(([field, message]) => ({ location: 'body', field, message }))
        : undefined
      return reply(style, request, error.status, error.code, error.message, { problems, headers: error.headers, extra: error.extra })
    }
    if (code === 'VALIDATION' && error instanceof ValidationError) {
      const problems = validationProblems(error)
      const status = style === 'quiz' ? 422 : 400
      const first = problems[0]!
      const message = first.field ? `${first.field}: ${first.message}` : first.message
      return reply(style, request, status, 'invalid_input', message, { problems })
    }
    if (code === 'PARSE') {
      const status = style === 'quiz' ? 422 : 400
      return reply(style, request, status, 'invalid_body', 'The request body could not be parsed', {
        problems: [{ location: 'body', field: '', message: 'The request body could not be parsed' }],
      })
    }
    if (code === 'NOT_FOUND') return reply(style, request, 404, 'not_found', 'Not Found')
    // PostgreSQL text cannot hold U+0000: a NUL in any input is the client's error, not the server's.
    const sqlState = pgErrorCode(error)
    if (sqlState === '22021' || sqlState === '22P05') {
      return reply(style, request, 400, 'invalid_text', 'Text must not contain NUL (U+0000) characters')
    }
    if (code === 'INVALID_COOKIE_SIGNATURE') return reply(style, request, 400, 'invalid_cookie', 'Invalid cookie')
    const status = typeof (error as { status?: unknown }).status === 'number' ? (error as { status: number }).status : 500
    if (status >= 400 && status < 500) {
      return reply(style, request, status, 'bad_request', error instanceof Error ? error.message : 'Bad request')
    }
    log.error({ err: error, path: new URL(request.url).pathname }, 'request failed')
    return reply(style, request, 500, 'internal', 'Request failed')
  })

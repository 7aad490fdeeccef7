// The request envelope as named Elysia plugins each service's app `.use()`s (src/app.ts builds both apps):
// - observe: one JSON log line, the Prometheus figures and the API log's figures per request;
// - hardening: the CSP and hardening headers on every response (src/security.ts decides them), and JSON bodies
//   written so that a large one leaves in a few sends (src/core/one-send.ts);
// - cors and apiRateRule: building blocks a service configures with its own rules (the clinical service's
//   envelope in plugins/clinical/envelope.ts);
// - apiDocs: the OpenAPI document and its Swagger UI page;
// - bodyLimits and bodyLimitGate: the `bodyLimit` macro a route (or a controller's guard) declares its limit with,
//   and the gate that refuses an oversized body before it is parsed.
// A refusal is thrown as an HttpError, so the service's one error mapper (src/core/errors.ts) writes its body.
import { Elysia, StatusMap, type AnyElysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import { SwaggerUIRender } from '@elysiajs/openapi/swagger'
import { randomBytes } from 'node:crypto'
import { HttpError, type ServiceStyle } from './core/errors'
import { requestLineWriter } from './core/log'
import { textBody } from './core/one-send'
import { pathOf } from './core/request-url'
import type { RateRule } from './core/ratelimit'
import type { Core, ServiceDefinition } from './plugin'
import { bearerToken } from './auth/jwt'
import { readCookie } from './auth/cookie'
import {
  STATE_CHANGING_METHODS, provenOrigin, contentSecurityPolicy, corsHeaders, isOriginAllowed, isPreflight, originPolicy, preflightHeaders,
  securityHeaders, varyOnOrigin, withScriptNonce,
} from './security'

/** Records one request of a service from its start: its metrics, then its request line (none for static files). */
export type RequestRecorder = (request: Request) => (route: string | null, status: number) => void

export function requestRecorder(core: Core, service: ServiceStyle): RequestRecorder {
  const writeLine = requestLineWriter(core.log)
  return (request) => {
    const done = core.metrics.startRequest(service, request.method)
    return (route, status) => {
      const ms = done(route, status)
      const path = pathOf(request)
      if (writeLine && !path.includes('/static/')) {
        writeLine({ service, method: request.method, path, route, status, ms: Math.round(ms * 10) / 10, ip: core.clientAddress(request) })
      }
    }
  }
}

/** Where the observe plugin leaves a request's recorder, and Elysia's context (the route it matched): on the request. */
const STARTED = Symbol('started')
type Observed = Request & { [STARTED]?: { finish: ReturnType<RequestRecorder>; context: { route?: string } } }

/**
 * Request log and metrics of one service. First in the chain, so it sees every request the app answers; the
 * service's fetch (src/app.ts) records it once the response is ready, with finishObserved. (Elysia's own
 * after-response hook ran in a setImmediate of its own for every request.)
 */
export function observe(core: Core, service: ServiceStyle) {
  // The API log's figures go to the database from here on (once per boot, whichever service comes first).
  core.metrics.apiLog.persist(core)
  const record = requestRecorder(core, service)
  return new Elysia({ name: 'core.observe', seed: `${service}:${core.id}` })
    .onRequest((context) => {
      ;(context.request as Observed)[STARTED] = { finish: record(context.request), context: context as { route?: string } }
    })
}

/** Records a request the observe plugin started (once), with the status its response went out with. */
export function finishObserved(request: Request, status: number): void {
  const started = (request as Observed)[STARTED]
  if (!started) return
  ;(request as Observed)[STARTED] = undefined
  started.finish(started.context.route || null, status)
}

/** Marks a response whose headers are complete already: the JSON answers hardening writes. */
const COMPLETE = Symbol('headers complete')
type Completed = Response & { [COMPLETE]?: true }

/** The hardening of one service: its plugin, and what completes the headers of each response its app answers. */
export interface Hardening {
  plugin: AnyElysia
  /**
   * Adds each default header the response does not set itself (every response the service answers passes through
   * here once, src/app.ts); a JSON answer of the plugin has them already. Answers the same response.
   */
  complete(response: Response): Response
}

/**
 * The header set of every response: the CSP and hardening headers, and the service's own defaults (`extra`: the
 * clinical service's `Vary: Origin`), each unless the response sets its own. The plugin writes the JSON body of a
 * route's object or array as Elysia writes it, but through textBody (a large one leaves as a one-chunk stream) and
 * with the whole header set at once; a route's schema has checked and cleaned the value by then, and the response
 * carries the status and headers of `set` (Elysia adds a cookie the route set). Every other response (a page, a
 * file, an error) gets the set from `complete`, which the app's fetch calls once the response is made.
 * Elysia's default headers (`.headers()`) were copied into every request's `set` and compared again on the way out,
 * and a Response a route returned was copied whole to merge them in.
 */
export function hardening(core: Core, service: ServiceStyle, extra: Readonly<Record<string, string>> = {}): Hardening {
  const defaults: Record<string, string> = { ...securityHeaders(contentSecurityPolicy(core.config)), ...extra }
  const named = Object.entries(defaults)
  const jsonHeaders = jsonResponseHeaders(defaults)
  const plugin = new Elysia({ name: 'core.hardening', seed: `${service}:${core.id}` })
    .mapResponse({ as: 'global' }, ({ responseValue, set }) => {
      if (!isJsonValue(responseValue)) return
      const cookie = set.headers['set-cookie']
      const status = typeof set.status === 'number' ? set.status : StatusMap[set.status ?? 'OK']
      const response: Completed = new Response(textBody(JSON.stringify(responseValue)), { status, headers: jsonHeaders(set.headers) })
      response[COMPLETE] = true
      // The headers are on the response now. Left in `set`, Elysia would copy the response to merge them in again
      // (about 13 us a request). A cookie stays for Elysia to add: it sets each of a list as a header of its own.
      set.headers = cookie === undefined ? {} : ({ 'set-cookie': cookie } as typeof set.headers)
      return response
    })
  return {
    plugin,
    complete(response) {
      if ((response as Completed)[COMPLETE]) return response
      const headers = response.headers
      for (const [name, value] of named) if (!headers.has(name)) headers.set(name, value)
      return response
    },
  }
}

/**
 * The headers of a JSON response from `set.headers`: the defaults, `content-type: application/json` unless the
 * route named another, and whatever else the route or a hook set, but for a cookie (Elysia adds it). They come from a
 * Headers made once, which a Response copies in a third of the time it takes to read the same ten headers from an
 * object (scripts/bench/README.md); the last set of headers of the route's own (the CORS headers of an allowed
 * origin) is kept made up too.
 */
function jsonResponseHeaders(defaults: Record<string, string>): (set: Record<string, unknown>) => Headers {
  const base = new Headers({ ...defaults, 'content-type': 'application/json' })
  type Own = Array<[string, unknown]>
  let last: { own: Own; headers: Headers } | null = null
  const sameAsLast = (own: Own) =>
    last !== null && last.own.length === own.length && own.every(([name, value], i) => last!.own[i]![0] === name && last!.own[i]![1] === value)
  return (set) => {
    let own: Own | null = null
    for (const name in set) {
      const value = set[name]
      if (name !== 'set-cookie' && !(name === 'content-type' && !value)) (own ??= []).push([name, value])
    }
    if (own === null) return base
    if (sameAsLast(own)) return last!.headers
    const headers = new Headers(base)
    for (const [name, value] of own) {
      if (typeof value === 'string' || typeof value === 'number') headers.set(name, String(value))
      else if (Array.isArray(value)) {
        headers.delete(name)
        for (const item of value) headers.append(name, String(item))
      }
    }
    // Kept only when every value is text: a list is a new object each time, never the same as the last.
    if (own.every(([, value]) => typeof value === 'string')) last = { own, headers }
    return headers
  }
}

/** An object or array Elysia would answer as JSON: not a Response, file, stream, byte array or other class. */
function isJsonValue(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return true
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * The service's OpenAPI document at `/docs/json` (@elysiajs/openapi) and its Swagger UI page at `/docs`, with Swagger
 * UI served by the app itself. The page has one inline script: it runs under a per-response nonce its CSP admits.
 */
export function apiDocs(
  core: Core, base: string, info: { title: string; description: string; version: string },
  securitySchemes: ServiceDefinition['securitySchemes'] = {},
) {
  const render = () => {
    const nonce = randomBytes(16).toString('base64')
    const page = SwaggerUIRender(info, {
      url: 'docs/json', dom_id: '#swagger-ui', version: 'latest', autoDarkMode: false, persistAuthorization: true,
      cdn: `${base}/static/swagger/swagger-ui-bundle.js`, theme: `${base}/static/swagger/swagger-ui.css`,
    })
    // Swagger UI's own colours and unnamed server list fall short of WCAG 2 AA: views/static/swagger/a11y.*.
    const accessible = page
      .replace('</head>', `<link rel="stylesheet" href="${base}/static/swagger/a11y.css" />\n</head>`)
      .replace('</body>', `<script src="${base}/static/swagger/a11y.js" defer></script>\n</body>`)
    return new Response(withScriptNonce(accessible, nonce), {
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': contentSecurityPolicy(core.config, nonce) },
    })
  }
  // The generator caches its document and answers the same object again: it is rewritten once.
  const rewritten = new WeakSet<object>()
  return new Elysia()
    .onAfterHandle(({ responseValue }) => {
      if (!isOpenApiDocument(responseValue) || rewritten.has(responseValue)) return
      asOpenApi31(responseValue)
      rewritten.add(responseValue)
    })
    .use(openapi({
      path: '/docs',
      provider: null,
      documentation: {
        info,
        // The paths carry the service's base path, so the document's server is the host's root.
        servers: [{ url: '/', description: 'This server' }],
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, ...securitySchemes } },
      },
      exclude: { paths: [/\/static\//] },
    }))
    .get('/docs', render, { detail: { hide: true } })
}

/**
 * Spec 2's CORS: an allowed origin (APP_URL, CORS_ORIGINS) gets credentialed CORS headers and its preflights are
 * answered; a disallowed one gets none, and its state-changing requests under `apiPrefix` are refused (403
 * origin_not_allowed). Requests without an Origin pass (apps and scripts send none), except a state-changing one
 * that signs in with the session cookie alone: a browser's, so Sec-Fetch-Site or the Referer must prove where it
 * came from. Every response varies on Origin: the service names `Vary: Origin` among its default headers
 * (CORS_DEFAULT_HEADERS, for hardening), and a response with a Vary of its own gets Origin added here.
 */
export const CORS_DEFAULT_HEADERS: Readonly<Record<string, string>> = { vary: 'Origin' }

export function cors(core: Core, apiPrefix: string, sessionCookie: string) {
  const policy = originPolicy(core.config)
  const underApi = (path: string) => path === apiPrefix || path.startsWith(apiPrefix + '/')
  /** A request without an Origin that signs in with the session cookie alone, not proven to come from an allowed origin. */
  const unprovenCookieOnly = (request: Request) =>
    readCookie(request, sessionCookie) !== null && !bearerToken(request.headers.get('authorization'))
    && !provenOrigin(request, (o) => isOriginAllowed(o, policy, request.url))
  return new Elysia({ name: 'core.cors', seed: `${apiPrefix}:${core.id}` })
    // Written so that Elysia takes it for the synchronous function it is (it reads a hook's source: a nested arrow
    // function calling another, as `(o) => f(o)`, has it await the hook's answer on every request).
    .onRequest(({ request, set }) => {
      const origin = request.headers.get('origin') || null
      const allowed = isOriginAllowed(origin, policy, request.url)
      if (origin !== null && allowed) Object.assign(set.headers, corsHeaders(origin))
      if (!STATE_CHANGING_METHODS.has(request.method) || !underApi(pathOf(request))) return
      if (origin !== null ? !allowed : unprovenCookieOnly(request)) throw HttpError.forbidden('origin_not_allowed', 'Origin not allowed')
    })
    // A response with a Vary of its own (the pages vary on HX-Request) keeps it, with Origin added.
    .mapResponse({ as: 'global' }, ({ responseValue }) => {
      if (responseValue instanceof Response) varyOnOrigin(responseValue.headers)
    })
    // Preflights of any path: answered here, with the CORS headers only for an allowed origin.
    .options('/*', ({ request }) => {
      if (!isPreflight(request)) throw HttpError.notFound('not_found', 'Not Found')
      const origin = request.headers.get('origin')!
      return new Response(null, { status: 204, headers: isOriginAllowed(origin, policy, request.url) ? preflightHeaders(origin) : {} })
    }, { detail: { hide: true } })
}

/** One rate rule over every request under `prefix` per client address, but for the `exempt` paths (health checks). */
export function apiRateRule(core: Core, rule: RateRule, prefix: string, exempt: string[] = []) {
  return new Elysia({ name: 'core.rate-rule', seed: `${rule.name}:${core.id}` })
    // Not an async function: a hit decided from memory (most) passes, or is refused, without a promise.
    .onRequest(({ request }) => {
      const path = pathOf(request)
      if ((path !== prefix && !path.startsWith(prefix + '/')) || exempt.includes(path)) return
      return core.rateLimit.consumeNow(rule, core.clientAddress(request))
    })
}

type Operation = { security?: unknown[] }
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
type OpenApiDocument = { openapi: string; paths: Record<string, Record<string, Operation>> }
const isOpenApiDocument = (value: unknown): value is OpenApiDocument =>
  typeof value === 'object' && value !== null && typeof (value as OpenApiDocument).openapi === 'string' && 'paths' in value

/**
 * What the generator leaves for OpenAPI 3.1 to state plainly: `nullable` (an OpenAPI 3.0 word; the schemas already
 * say `null` in their types) goes, and an operation no guard marked with its security is public: `security: []`.
 */
function asOpenApi31(doc: OpenApiDocument): void {
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip)
    if (typeof node !== 'object' || node === null) return
    const record = node as Record<string, unknown>
    if (typeof record.nullable === 'boolean') delete record.nullable
    for (const value of Object.values(record)) strip(value)
  }
  strip(doc.paths)
  strip((doc as { components?: unknown }).components)
  for (const operations of Object.values(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) if (HTTP_METHODS.has(method) && !op.security) op.security = []
  }
}

/** A route's body limit: bytes, with the code and message of its 413 when the route words it itself. */
export type BodyLimit = number | { bytes: number; code: string; message: string }

const tooLarge = (limit: BodyLimit) => typeof limit === 'number'
  ? HttpError.tooLarge('body_too_large', `Request body too large: at most ${limit} bytes here`)
  : HttpError.tooLarge(limit.code, limit.message)

/**
 * Refuses a body over the limit with 413 before it is parsed: a declared Content-Length over it without reading a
 * byte; a body without one (chunked) by counting what is read and stopping at the limit. The read is of a copy,
 * so Elysia's own parser then reads the body as usual.
 */
export async function enforceBodyLimit(request: Request, limit: BodyLimit): Promise<void> {
  if (request.body === null) return
  const bytes = typeof limit === 'number' ? limit : limit.bytes
  const declared = request.headers.get('content-length')
  if (declared !== null && /^\d+$/.test(declared)) {
    if (Number(declared) > bytes) throw tooLarge(limit)
    return // HTTP framing ends the body at the declared length
  }
  const reader = request.clone().body!.getReader()
  let read = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    read += value.byteLength
    if (read > bytes) {
      // Not awaited: cancelling one branch of a tee settles only once the other branch is cancelled too.
      void reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
  }
}

/**
 * The `bodyLimit` macro: `{ bodyLimit: 64 * 1024 }` on a route, or `.guard({ bodyLimit }, app => ...)` around a
 * controller's routes (not both: a guard's declaration wins over its routes'). It is documented in the OpenAPI
 * operation as `x-body-limit`; `bodyLimitGate` enforces it. A route that declares none has its service's limit.
 */
const BODY_LIMIT_KEY = 'x-body-limit'
export const bodyLimits = new Elysia({ name: 'core.body-limit' }).macro({
  // An OpenAPI extension key, which Elysia's detail type does not list.
  bodyLimit: (limit: BodyLimit) => ({ detail: { [BODY_LIMIT_KEY]: limit } as { description?: string } }),
})

interface RouteLike { method: string; path: string; hooks?: { detail?: Record<string, unknown> } }
interface LimitRule { method: string; pattern: RegExp; dynamic: number; limit: BodyLimit }

/** Elysia's route path as a pattern: `:param` is one segment, `*` the rest. */
const routePattern = (path: string) =>
  new RegExp(`^${path.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s === '*' ? '.*' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`)

/**
 * Refuses an oversized body before routing and parsing (Elysia parses before any route hook runs): the request's
 * route is looked up in the app's route table, built once from the routes' declared limits; every other request
 * has the service's default. `useRoutes` hands it the composed app's routes.
 */
export function bodyLimitGate(core: Core, service: ServiceStyle, defaultLimit: number) {
  let routes: () => RouteLike[] = () => []
  let rules: LimitRule[] | null = null
  const compile = () => routes()
    .filter((r) => r.hooks?.detail?.[BODY_LIMIT_KEY] !== undefined)
    .map((r) => ({
      method: r.method, pattern: routePattern(r.path), dynamic: r.path.split(/[:*]/).length - 1,
      limit: r.hooks!.detail![BODY_LIMIT_KEY] as BodyLimit,
    }))
    .sort((a, b) => a.dynamic - b.dynamic) // static paths first, as the router matches them
  const plugin = new Elysia({ name: 'core.body-limit-gate', seed: `${service}:${core.id}` })
    // Not an async function: a request without a body (most of them) passes without a promise to wait for.
    .onRequest(({ request }) => {
      if (request.body === null) return
      rules ??= compile()
      const path = pathOf(request)
      const rule = rules.find((r) => r.method === request.method && r.pattern.test(path))
      return enforceBodyLimit(request, rule?.limit ?? defaultLimit)
    })
  return { plugin, useRoutes: (list: () => RouteLike[]) => void (routes = list) }
}

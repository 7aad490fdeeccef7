// The page kit of both services' htmx pages: the `page` and `signedIn` macros every page route declares (the
// origin check on every state-changing form, the signed-in user or the way to sign in), HTML responses,
// redirects that work with and without htmx, and the form helpers (loose bodies, validation against TypeBox
// models, a rule failure as the form shows it). The components (layout, fields) are in layout.tsx.
import { Elysia, t } from 'elysia'
import type { TSchema } from '@sinclair/typebox'
import { Value, ValueErrorType } from '@sinclair/typebox/value'
import { HttpError } from '../src/core/errors'
import { textBody } from '../src/core/one-send'
import { provenOrigin } from '../src/security'
import type { Errors, Flash } from './layout'

/** Page forms post strings (urlencoded or multipart): the body is taken loose and checked against a model. */
export const FormBody = t.Optional(t.Record(t.String(), t.Unknown()))

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export interface PageKitOptions<Session extends Record<string, unknown>> {
  /** The named plugin's name, e.g. `quiz.pages`; with `seed`, one instance per app however many controllers use it. */
  name: string
  seed: number
  appUrl: string | null
  /** Where a signed-out visitor is sent. */
  signInUrl: string
  /**
   * The signed-in session of a page request (spread into the handler's context), or null. `headers` are sent on
   * either answer (a renewed cookie, or the one that clears a dead cookie).
   */
  session(request: Request): Promise<{ session: Session | null; headers?: Record<string, string> }>
  /**
   * What an htmx request without a session gets: `redirect` (HX-Redirect to the sign-in page) or `unauthorized`
   * (401, which the clinical pages' script treats as a sign-out of every tab).
   */
  htmxSignedOut: 'redirect' | 'unauthorized'
}

/**
 * The page kit of one service, a named Elysia plugin. Every page route declares one of its macros:
 * - `page: true`: a public page; a state-changing request must come from this site (403 otherwise);
 * - `signedIn: true`: the same check, then the session (its fields in the context) or the way to sign in.
 * Both hide the route from the OpenAPI document.
 */
export function pageKit<Session extends Record<string, unknown>>(o: PageKitOptions<Session>) {
  const checkOrigin = (request: Request) => {
    if (STATE_CHANGING.has(request.method) && !sameOrigin(request, o.appUrl)) {
      throw HttpError.forbidden('cross_origin', 'This form must be sent from this site')
    }
  }
  return new Elysia({ name: o.name, seed: o.seed }).macro({
    page: {
      detail: { hide: true },
      beforeHandle({ request }) {
        checkOrigin(request)
      },
    },
    signedIn: {
      detail: { hide: true },
      async resolve({ request, set, status }) {
        checkOrigin(request)
        const { session, headers } = await o.session(request)
        Object.assign(set.headers, headers ?? {})
        if (session) return session
        if (request.headers.get('hx-request') === 'true') {
          if (o.htmxSignedOut === 'unauthorized') {
            set.headers['content-type'] = 'text/plain; charset=utf-8'
            return status(401, 'Your session has ended: sign in again.')
          }
          set.headers['hx-redirect'] = o.signInUrl
          return status(204, '')
        }
        set.headers.location = o.signInUrl
        return status(303, '')
      },
    },
  })
}

/** A rule failure as a form shows it: field messages, one line for the form, and Retry-After of a 429. Server failures propagate. */
export function formFailure(err: unknown): { errors?: Errors; flash: NonNullable<Flash>; headers: Record<string, string> } {
  if (!(err instanceof HttpError) || err.status >= 500) throw err
  const retryAfter = err.headers?.['retry-after']
  return { errors: err.fields, flash: { kind: 'error', text: err.message }, headers: retryAfter ? { 'retry-after': retryAfter } : {} }
}

/**
 * The notice of a Post/Redirect/Get answer by its `?notice=` key: a fixed text of the page's own, never the query's
 * words; a key that is not the page's own (`constructor`, `__proto__`) is no notice.
 */
export const noticeOf = (notices: Readonly<Record<string, string>>, key: string | undefined): Flash =>
  key && Object.hasOwn(notices, key) ? { kind: 'ok', text: notices[key]! } : null

/** The bot-challenge token a form posts (Turnstile's field, or the API's name for it). */
export const challengeToken = (fields: Record<string, string>, apiName: string): string | null =>
  fields['cf-turnstile-response'] ?? fields[apiName] ?? null

export const hasErrors = (errors: Errors) => Object.keys(errors).length > 0

export function html(body: string | Promise<string>, init: { status?: number; headers?: Record<string, string> } = {}): Promise<Response> {
  return Promise.resolve(body).then((text) => new Response(textBody(text), {
    status: init.status ?? 200,
    headers: { 'content-type': 'text/html; charset=utf-8', vary: 'HX-Request', 'cache-control': 'no-store', ...init.headers },
  }))
}

/** Post/Redirect/Get: 303 for a plain form post; htmx follows it too (a boosted form swaps the new page in). */
export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, ...headers } })
}

/**
 * Cookie-authenticated page forms must come from our own pages: from APP_URL's origin when it is set (the public
 * address; the request's Host is not trusted for this), else from the request's own origin. Without an Origin
 * header, Sec-Fetch-Site or the Referer has to prove it (src/security.ts).
 */
export function sameOrigin(request: Request, appUrl: string | null): boolean {
  const own = appUrl ? new URL(appUrl).origin : new URL(request.url).origin
  return provenOrigin(request, (origin) => origin === own)
}

/** Field -> first message for a form body checked against a model; empty when the body is valid. */
export function formErrors(schema: TSchema, value: Record<string, unknown>): Record<string, string> {
  // Only the model's own fields: a form also posts what is not the model's (a challenge widget's token).
  const fields = Object.keys((schema as TSchema & { properties?: Record<string, unknown> }).properties ?? {})
  const own = Object.fromEntries(fields.filter((k) => k in value).map((k) => [k, value[k]]))
  const errors: Record<string, string> = {}
  for (const e of Value.Errors(schema, own)) {
    const field = e.path.replace(/^\//, '').split('/')[0] || 'form'
    errors[field] ??= friendlyMessage(e.type, e.schema as TSchema & Record<string, unknown>, e.message)
  }
  return errors
}

/** The failed rule in plain words: which one failed (the error's type), not which ones the field has. */
function friendlyMessage(type: ValueErrorType, schema: Record<string, unknown>, fallback: string): string {
  if (type === ValueErrorType.StringMaxLength) return `Must be at most ${schema.maxLength} characters`
  if (type === ValueErrorType.StringMinLength) return schema.minLength === 1 ? 'Required' : `Must be at least ${schema.minLength} characters`
  if (schema.format === 'email') return 'Enter a valid email address'
  // missing, or not text at all
  if (typeof schema.minLength === 'number' && schema.minLength > 1) return `Must be at least ${schema.minLength} characters`
  if (typeof schema.minLength === 'number') return 'Required'
  if (typeof schema.maxLength === 'number') return `Must be at most ${schema.maxLength} characters`
  return fallback
}

/** A form body (urlencoded or multipart) as a string record; anything else becomes empty. */
export function formFields(body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null) return {}
  return Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')) as Record<string, string>
}

// Small helpers of the page controllers: HTML responses, redirects that work with and without htmx,
// same-origin checks for cookie-authenticated forms, and form validation against TypeBox models.
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

export function html(body: string | Promise<string>, init: { status?: number; headers?: Record<string, string> } = {}): Promise<Response> {
  return Promise.resolve(body).then((text) => new Response(text, {
    status: init.status ?? 200,
    headers: { 'content-type': 'text/html; charset=utf-8', vary: 'HX-Request', 'cache-control': 'no-store', ...init.headers },
  }))
}

/** Post/Redirect/Get: 303 for a plain form post; htmx follows it too (a boosted form swaps the new page in). */
export function redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location, ...headers } })
}

/**
 * Cookie-authenticated writes must come from our own pages: an Origin header, when the browser sends one,
 * must be this server's (or APP_URL's). SameSite=Lax cookies already stop most cross-site posts.
 */
export function sameOrigin(request: Request, appUrl: string | null): boolean {
  const origin = request.headers.get('origin')
  if (origin === null) return true // not sent: a same-origin navigation in older browsers, or not a browser
  const own = new URL(request.url).origin
  return origin === own || (appUrl !== null && origin === new URL(appUrl).origin)
}

/** Field -> first message for a form body checked against a model; empty when the body is valid. */
export function formErrors(schema: TSchema, value: Record<string, unknown>): Record<string, string> {
  // Only the model's own fields: a form also posts what is not the model's (a challenge widget's token).
  const fields = Object.keys((schema as TSchema & { properties?: Record<string, unknown> }).properties ?? {})
  const own = Object.fromEntries(fields.filter((k) => k in value).map((k) => [k, value[k]]))
  const errors: Record<string, string> = {}
  for (const e of Value.Errors(schema, own)) {
    const field = e.path.replace(/^\//, '').split('/')[0] || 'form'
    errors[field] ??= friendlyMessage(e.schema as TSchema & Record<string, unknown>, e.message)
  }
  return errors
}

function friendlyMessage(schema: Record<string, unknown>, fallback: string): string {
  if (schema.format === 'email') return 'Enter a valid email address'
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

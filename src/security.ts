// The security envelope of spec 2 as pure decisions: which origins may call the API with credentials (CORS) and
// the header set every response carries (CSP and the hardening headers). src/envelope.ts applies them as named
// Elysia plugins; the clinical service's own rules (its rate rule) are in plugins/clinical/envelope.ts.
// Decisions: CORS, the cross-site refusal and the rate limit apply to the clinical app only (spec 1 says nothing
// of them and the quiz app keeps its behaviour); the header set applies to both apps, whose pages load only their
// own scripts. Outside production with neither APP_URL nor CORS_ORIGINS, only the request's own origin is allowed.
import { DEFAULT_CHALLENGE_SCRIPT_URL, type Config } from './config'

export const PREFLIGHT_MAX_AGE_S = 600
export const CORS_ALLOW_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
export const CORS_ALLOW_HEADERS = [
  'Authorization', 'Content-Type', 'X-Client', 'X-Requested-With',
  // htmx's request headers
  'HX-Request', 'HX-Boosted', 'HX-Current-URL', 'HX-History-Restore-Request', 'HX-Prompt', 'HX-Target', 'HX-Trigger', 'HX-Trigger-Name',
]
/** Response headers a cross-origin client must be able to read: spec 2's X-TTS-Provider, a 429's Retry-After, downloads. */
export const CORS_EXPOSE_HEADERS = ['Retry-After', 'X-TTS-Provider', 'Content-Disposition']
/** Methods that change state: from a disallowed origin they are refused, so a cookie cannot act cross-site. */
export const STATE_CHANGING_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The origins allowed to call with credentials: APP_URL plus CORS_ORIGINS (spec 2, CORS). `same-origin`
 * when neither is set, which config.ts allows only outside production: then only the request's own origin passes.
 */
export type OriginPolicy = ReadonlySet<string> | 'same-origin'

export function originPolicy(config: Pick<Config, 'appUrl' | 'corsOrigins'>): OriginPolicy {
  const listed = [config.appUrl, ...config.corsOrigins].filter((o): o is string => o !== null)
  if (listed.length === 0) return 'same-origin'
  return new Set(listed.map(originOf))
}

/** Requests without an Origin header always pass (spec 2, CORS 3); an allowed origin must match exactly. */
export function isOriginAllowed(origin: string | null, policy: OriginPolicy, requestUrl: string): boolean {
  if (origin === null) return true
  if (policy === 'same-origin') return origin === new URL(requestUrl).origin
  return policy.has(origin)
}

/**
 * Whether a request provably comes from an allowed origin (cross-site request forgery): its Origin header when it
 * has one; else the browser's Sec-Fetch-Site (`same-origin`, or `none` for what the user typed or bookmarked);
 * else its Referer's origin. A request that proves none of these is refused: a browser sends at least one.
 */
export function provenOrigin(request: Request, isAllowed: (origin: string) => boolean): boolean {
  // An empty header is none at all (no browser sends one).
  const origin = request.headers.get('origin') || null
  if (origin !== null) return isAllowed(origin)
  const site = request.headers.get('sec-fetch-site') || null
  if (site !== null) return site === 'same-origin' || site === 'none'
  const referer = request.headers.get('referer')
  if (!referer) return false
  try {
    return isAllowed(new URL(referer).origin)
  } catch {
    return false
  }
}

/** A CORS preflight: OPTIONS naming the method it asks for. Other OPTIONS requests go to the app. */
export const isPreflight = (request: Request): boolean =>
  request.method === 'OPTIONS' && request.headers.has('origin') && request.headers.has('access-control-request-method')

/** Headers of any response to an allowed origin: the origin echoed (never `*`, credentials are allowed). */
export function corsHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': CORS_EXPOSE_HEADERS.join(', '),
  }
}

export function preflightHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': CORS_ALLOW_METHODS.join(', '),
    'access-control-allow-headers': CORS_ALLOW_HEADERS.join(', '),
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
  }
}

/** Adds `Origin` to Vary: every response of the envelope depends on it, allowed or not. */
export function varyOnOrigin(headers: Headers): void {
  const vary = headers.get('vary')
  if (!vary) headers.set('vary', 'Origin')
  else if (!vary.split(',').some((v) => v.trim().toLowerCase() === 'origin' || v.trim() === '*')) headers.set('vary', `${vary}, Origin`)
}

/**
 * spec 2, security headers: script-src allows our own scripts, WebAssembly and eval (htmx's hx-on, the speech
 * components) and the configured content-delivery and challenge hosts; no inline scripts or handlers. A nonce
 * admits the one inline script of a page we do not write ourselves (the Swagger UI page of @elysiajs/openapi).
 */
export function contentSecurityPolicy(config: Pick<Config, 'cspScriptHosts' | 'challenge'>, nonce?: string): string {
  const challengeHost = originOf(config.challenge?.scriptUrl ?? DEFAULT_CHALLENGE_SCRIPT_URL)
  const scriptHosts = [...new Set([...config.cspScriptHosts, challengeHost])]
  return [
    "default-src 'self'",
    ["script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'", ...scriptHosts, ...(nonce ? [`'nonce-${nonce}'`] : [])].join(' '),
    "script-src-attr 'none'",
    // Swagger UI and htmx's request indicators set inline styles.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src 'self' ${challengeHost}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** The header set of every response besides CORS: the CSP and the standard hardening headers. */
export function securityHeaders(csp: string): Record<string, string> {
  return {
    'strict-transport-security': 'max-age=31536000; includeSubDomains; preload',
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    // The clinical app records audio (dictation, transcription).
    'permissions-policy': 'camera=(), geolocation=(), microphone=(self)',
  }
}

/** Marks the inline scripts of a page (`<script>` without attributes) with a nonce the page's CSP admits. */
export const withScriptNonce = (html: string, nonce: string): string => html.replaceAll('<script>', `<script nonce="${nonce}">`)

function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

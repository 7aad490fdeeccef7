// The clinical service as its app presents it (spec 2, security): the OpenAPI text, the body limit of routes
// that declare none, and its own envelope rules: the API-wide rate rule and CORS with the cross-site refusal.
import { apiRateRule, cors, CORS_DEFAULT_HEADERS } from '../../src/envelope'
import type { Core, ServiceDefinition } from '../../src/plugin'
import type { RateRule } from '../../src/core/ratelimit'
import { AUTH_COOKIE } from './cookies'

/**
 * spec 2, limits: all `/api/*` requests, per client address. `/api/health` is exempt (load balancers poll it). Checked
 * on every request, so batched: counted in memory and reconciled with the other processes (src/core/ratelimit-batched.ts).
 */
export const CLINICAL_API_RATE_RULE: RateRule = { name: 'clinical.api', limit: 200, windowS: 60, mode: 'batched' }

/** JSON and form bodies (transcripts, notes, markdown) stay under this; uploads declare their own (spec 2, limits). */
export const CLINICAL_BODY_LIMIT = 2 * 1024 * 1024

/** The envelope rules of the clinical app, in order: CORS first, so a refusal (a 429 too) carries its CORS headers. */
export function clinicalEnvelope(core: Core) {
  const api = `${core.config.clinicalBasePath}/api`
  return [cors(core, api, AUTH_COOKIE), apiRateRule(core, CLINICAL_API_RATE_RULE, api, [`${api}/health`])]
}

export const clinicalService = <S extends { core: Core } | Core>(coreOf: (state: S) => Core): ServiceDefinition<S> => ({
  title: 'Clinical documentation assistant',
  brand: 'Clinical assistant',
  securitySchemes: { cookie: { type: 'apiKey', in: 'cookie', name: AUTH_COOKIE, description: 'The web session cookie set at sign-in' } },
  bodyLimit: CLINICAL_BODY_LIMIT,
  // Every response varies on Origin (CORS).
  headers: CORS_DEFAULT_HEADERS,
  envelope: (state) => clinicalEnvelope(coreOf(state)),
  description: [
    'Clinical documentation assistant: accounts, note generation, records, the learning hub and administration.',
    '',
    'Authentication: sign in with `POST /api/auth/login`. Web clients (`X-Client: web` or `browser`, or a browser',
    'User-Agent) get a 30-day token in the httpOnly `app_auth` cookie (SameSite=Lax) and a 24-hour idle limit; mobile',
    'clients (`X-Client: mobile`, `ios`, `android` or `app`, or any other User-Agent) send the 365-day token as',
    '`Authorization: Bearer <token>`. The Bearer header is read first, then the cookie. Every token has a server-side',
    'session: after logout, a password change or reset, or an admin disabling the account, it answers 401. A token',
    'from before sessions were recorded (no session id) passes while its user has no sessions at all. The',
    '24-hour idle limit belongs to sessions signed in as web, however the token is sent later.',
    '401 bodies: `Not authenticated`, `Invalid or expired token`, `Session revoked`, or `idleTimeout: true` after 24 idle hours',
    '(web). A role below the route\'s minimum: 403.',
    '',
    'Errors: `{"success": false, "error": "message", "code": "snake_case"}`; every 5xx answers only',
    '`Request failed` and the detail stays in the server log. A body or query that does not match its schema is 400 with',
    '`fields`; a well-formed value that a rule of the service refuses (a blank text, an unknown status or category, an',
    'over-long field) is 422 with `fields`, naming each field and its rule.',
    'Rate limits per client address: all /api/* 200 per minute, login 10 per 15 minutes, register and forgot-password',
    '5 per hour, resend-verification 3 per 15 minutes, change-password and the 2FA routes 20 per 15 minutes; over a',
    'limit: 429 with `Retry-After` in seconds. A body over 64 KiB on /api/auth/* (2 MiB elsewhere, uploads',
    'excepted): 413. Cross-site writes from an origin outside APP_URL and CORS_ORIGINS: 403.',
  ].join('\n'),
})

// The clinical family's edge and its one guard (exported on purpose for the learning, directory and admin plugins):
// - callerOf turns a request into the Caller the services take (address, User-Agent, client kind, token);
// - checkSession runs spec 2's per-request checks (services/sessions.ts) and says which cookie the answer sets;
// - `auth: 'user' | 'moderator' | 'admin'` on a route runs them and refuses a lower role with 403.
// Roles are ordered admin > moderator > user.
import { Elysia } from 'elysia'
import { bearerToken } from '../../src/auth/jwt'
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import type { AuditWriter } from './audit'
import { authCookie, authCookieFromRequest } from './cookies'
import type { Role } from './models/accounts'
import { authenticate, type Authenticated, type Caller, type ClientKind, type SentToken } from './services/sessions'
import { addApiCalls, type ClinicalUser } from './services/users'

export type { ClinicalUser } from './services/users'

const RANK: Record<Role, number> = { user: 1, moderator: 2, admin: 3 }
export const hasRole = (user: { role: Role }, min: Role) => RANK[user.role] >= RANK[min]

// ---- the request as the services see it -----------------------------------------------------------------

/**
 * spec 2, token transport (X-Client values are "not shown"; these are ours, documented in the OpenAPI text):
 * `X-Client: web` (or `browser`) chooses the cookie; `mobile`, `ios`, `android` or `app` chooses Bearer.
 * Without the header, a browser User-Agent (`Mozilla/...`, not an app's embedded web view) is web and
 * everything else (the mobile app's HTTP client, scripts) is mobile.
 */
export function clientKind(request: Request): ClientKind {
  const declared = request.headers.get('x-client')?.trim().toLowerCase()
  if (declared === 'web' || declared === 'browser') return 'web'
  if (declared === 'mobile' || declared === 'ios' || declared === 'android' || declared === 'app') return 'mobile'
  const ua = request.headers.get('user-agent') ?? ''
  return /^Mozilla\//.test(ua) && !/\b(okhttp|Dart|CFNetwork|Expo|ReactNative|wv)\b/i.test(ua) ? 'web' : 'mobile'
}

/** The token of a request: the Bearer header first, then the cookie; an empty Bearer falls through. */
export function sentToken(request: Request): SentToken | null {
  const bearer = bearerToken(request.headers.get('authorization'))
  if (bearer) return { value: bearer, transport: 'bearer' }
  const cookie = authCookieFromRequest(request)
  return cookie ? { value: cookie, transport: 'cookie' } : null
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The one place a request becomes a Caller. */
export function callerOf(core: Core, request: Request): Caller {
  return {
    ip: core.clientAddress(request),
    userAgent: request.headers.get('user-agent'),
    client: clientKind(request),
    token: sentToken(request),
    mutating: MUTATING.has(request.method),
  }
}

// ---- the per-request checks -----------------------------------------------------------------------------

/**
 * A request's session, or its refusal; `cookie` is the Set-Cookie the answer carries either way: the throttled
 * re-issue of a live web session, or the one clearing a refused token that came by cookie.
 */
export type SessionCheck =
  | { auth: Authenticated; refusal: null; cookie: string | null }
  | { auth: null; refusal: HttpError; cookie: string | null }

export async function checkSession(core: Core, audit: AuditWriter, request: Request): Promise<SessionCheck> {
  const caller = callerOf(core, request)
  try {
    const auth = await authenticate(core, audit, caller)
    return { auth, refusal: null, cookie: auth.renewCookie ? authCookie(core, auth.token) : null }
  } catch (err) {
    if (!(err instanceof HttpError) || err.status !== 401) throw err
    if (caller.token?.transport !== 'cookie') return { auth: null, refusal: err, cookie: null }
    const cookie = authCookie(core, null)
    const refusal = new HttpError(err.status, err.code, err.message, err.fields, {
      cause: err.cause, extra: err.extra, headers: { ...err.headers, 'set-cookie': cookie },
    })
    return { auth: null, refusal, cookie }
  }
}

// ---- the guard ------------------------------------------------------------------------------------------

/** Counts each user's authenticated API calls in memory and adds them to clinical.users.api_calls in batches. */
export const API_CALLS_FLUSH_MS = 5_000

export type ApiCallCounter = (userId: number) => void

/** The API-call counter of one boot (the clinical setup makes it); shutdown stores what is pending. */
export function apiCallCounter(core: Core): ApiCallCounter {
  let pending = new Map<number, number>()
  let timer: ReturnType<typeof setTimeout> | null = null
  const flush = async () => {
    timer = null
    const batch = pending
    pending = new Map()
    for (const [userId, n] of batch) {
      await addApiCalls(core, userId, n).catch((err) => core.log.warn({ err }, 'api call count not stored'))
    }
  }
  core.onShutdown(async () => {
    if (timer) clearTimeout(timer)
    await flush()
  })
  return (userId) => {
    pending.set(userId, (pending.get(userId) ?? 0) + 1)
    if (!timer) {
      timer = setTimeout(() => void flush(), API_CALLS_FLUSH_MS)
      timer.unref?.()
    }
  }
}

/** The `clinical.auth` plugin, named per Core (tests boot several apps): every controller of one app shares it. */
export const clinicalAuth = (core: Core, audit: AuditWriter, countCall: ApiCallCounter) =>
  new Elysia({ name: 'clinical.auth', seed: core.id }).macro({
    auth: (min: Role) => ({
      detail: { security: [{ bearer: [] }, { cookie: [] }] },
      async resolve({ request, set }): Promise<{ user: ClinicalUser; auth: Authenticated }> {
        const { auth, refusal, cookie } = await checkSession(core, audit, request)
        if (!auth) throw refusal
        if (!hasRole(auth.user, min)) throw HttpError.forbidden('insufficient_role', 'Not enough permissions')
        if (cookie) set.headers['set-cookie'] = cookie
        countCall(auth.user.id)
        return { user: auth.user, auth }
      },
    }),
  })

export type ClinicalAuth = ReturnType<typeof clinicalAuth>

// Spec 2, Session and Authentication: token transport, the session table and the per-request checks.
// A session is a JWT (HS256, audience `clinical`) plus its row in clinical.user_sessions, keyed by the token's
// SHA-256. The row is the authority: deleting it ends the session whatever the token's expiry says.
import { httpOnlyCookie, readCookie } from '../../../src/auth/cookie'
import { bearerToken, signToken, verifyToken, type TokenClaims } from '../../../src/auth/jwt'
import { sha256Hex } from '../../../src/core/crypto'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { auditLog } from '../audit'
import type { ProfileUser, Role, SessionUser } from '../models/accounts'

export const TOKEN_AUDIENCE = 'clinical'
export const AUTH_COOKIE = 'app_auth'
/** spec 2, limits: web JWT 30 days, mobile JWT 365 days. */
export const WEB_TOKEN_LIFETIME_S = 30 * 24 * 3600
export const MOBILE_TOKEN_LIFETIME_S = 365 * 24 * 3600
/** spec 2, limits: web idle limit 24 hours; session update throttle 10 minutes. */
export const WEB_IDLE_LIMIT_MS = 24 * 3600 * 1000
export const SESSION_TOUCH_THROTTLE_MS = 10 * 60 * 1000
export const DEVICE_LABEL_MAX = 200

export type ClientKind = 'web' | 'mobile'

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

export interface ClinicalUserRow {
  id: number
  name: string
  email: string
  role: Role
  email_verified: boolean
  totp_enabled: boolean
  disabled: boolean
  can_local_auth: boolean
  created_at: Date | string
}
/** The signed-in user as routes see it. */
export type ClinicalUser = ProfileUser & { disabled: boolean }

export const USER_COLUMNS = 'id, name, email, role, email_verified, totp_enabled, disabled, can_local_auth, created_at'

export const toSessionUser = (row: ClinicalUserRow): SessionUser => ({
  id: row.id, name: row.name, email: row.email, role: row.role, totp_enabled: row.totp_enabled, email_verified: row.email_verified,
})
export const toClinicalUser = (row: ClinicalUserRow): ClinicalUser => ({
  ...toSessionUser(row), canLocalAuth: row.can_local_auth, disabled: row.disabled,
})

/** The session cookie: httpOnly, SameSite=Lax, scoped to the clinical app, Secure when served over https. */
export const authCookie = (core: Core, token: string | null): string =>
  httpOnlyCookie(core.config, AUTH_COOKIE, token, core.config.clinicalBasePath || '/', WEB_TOKEN_LIFETIME_S)

export interface StartedSession {
  token: string
  sessionId: string
  client: ClientKind
  /** Set-Cookie value for web clients, null for mobile ones. */
  cookie: string | null
}

/** Signs a token for the client kind of the request and records its session row. */
export async function startSession(core: Core, userId: number, request: Request, client = clientKind(request)): Promise<StartedSession> {
  const sessionId = crypto.randomUUID()
  const now = core.now()
  const lifetimeS = client === 'web' ? WEB_TOKEN_LIFETIME_S : MOBILE_TOKEN_LIFETIME_S
  const token = await signToken(core.config.jwtSecret, TOKEN_AUDIENCE, { sub: String(userId), sid: sessionId, cl: client }, lifetimeS, now)
  const device = request.headers.get('user-agent')?.slice(0, DEVICE_LABEL_MAX) ?? null
  await core.db.sql`
    insert into clinical.user_sessions (token_hash, id, user_id, client, ip_address, device_label, created_at, last_activity, expires_at)
    values (${sha256Hex(token)}, ${sessionId}, ${userId}, ${client}, ${core.clientAddress(request)}, ${device},
            ${new Date(now).toISOString()}, ${new Date(now).toISOString()}, ${new Date(now + lifetimeS * 1000).toISOString()})`
  return { token, sessionId, client, cookie: client === 'web' ? authCookie(core, token) : null }
}

/** The token of a request: the Bearer header first, then the cookie; an empty Bearer falls through. */
export function requestToken(request: Request): { token: string; transport: 'bearer' | 'cookie' } | null {
  const bearer = bearerToken(request.headers.get('authorization'))
  if (bearer) return { token: bearer, transport: 'bearer' }
  const cookie = readCookie(request, AUTH_COOKIE)
  return cookie ? { token: cookie, transport: 'cookie' } : null
}

export interface Authenticated {
  user: ClinicalUser
  /** null for a pre-migration token that passed without a row. */
  sessionId: string | null
  token: string
  transport: 'bearer' | 'cookie'
  /** A Set-Cookie the response must carry (the throttled re-issue), or null. */
  setCookie: string | null
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * spec 2, per-request checks: the JWT's signature and expiry, the session row, the web idle limit, and the
 * throttled extension on writes. Throws 401 (with a cleared cookie when the token came by cookie).
 *
 * Rows missing: a token we issue carries its session id (`sid`), so a missing row always means the session
 * ended (logout, idleness, password change, admin action): "Session revoked". A token without `sid` predates
 * the session table: it passes while its user has no sessions at all, and is revoked once they have one.
 */
export async function authenticate(core: Core, request: Request): Promise<Authenticated> {
  const found = requestToken(request)
  const refuse = (code: string, message: string, extra?: Record<string, unknown>) => {
    const headers: Record<string, string> = { 'www-authenticate': 'Bearer' }
    if (found?.transport === 'cookie') headers['set-cookie'] = authCookie(core, null)
    return new HttpError(401, code, message, undefined, { headers, extra })
  }
  if (!found) throw refuse('not_authenticated', 'Not authenticated')
  const now = core.now()
  const claims = await verifyToken(core.config.jwtSecret, TOKEN_AUDIENCE, found.token, now) as (TokenClaims & { sid?: unknown }) | null
  const userId = Number(claims?.sub)
  if (!claims || !Number.isSafeInteger(userId)) throw refuse('invalid_token', 'Invalid or expired token')
  const tokenHash = sha256Hex(found.token)
  const [row] = await core.db.sql<ClinicalUserRow & { session_id: string | null; client: ClientKind | null; last_activity: Date | string | null }>`
    select u.id, u.name, u.email, u.role, u.email_verified, u.totp_enabled, u.disabled, u.can_local_auth, u.created_at,
           s.id as session_id, s.client, s.last_activity
    from clinical.users u
    left join clinical.user_sessions s on s.token_hash = ${tokenHash} and s.user_id = u.id
    where u.id = ${userId}`
  if (!row) throw refuse('invalid_token', 'Invalid or expired token')
  if (row.disabled) throw refuse('account_disabled', 'Account disabled')

  let setCookie: string | null = null
  if (row.session_id === null) {
    const legacy = typeof claims.sid !== 'string'
    if (!legacy) throw refuse('session_revoked', 'Session revoked')
    const [other] = await core.db.sql<{ n: number }>`select count(*)::int as n from clinical.user_sessions where user_id = ${userId}`
    if (other!.n > 0) throw refuse('session_revoked', 'Session revoked')
  } else {
    const idleMs = now - new Date(row.last_activity!).getTime()
    if (row.client === 'web' && idleMs > WEB_IDLE_LIMIT_MS) {
      await core.db.sql`delete from clinical.user_sessions where token_hash = ${tokenHash}`
      auditLog(core).write({
        action: 'session_idle_timeout', userId, ip: core.clientAddress(request),
        details: { idleMinutes: Math.floor(idleMs / 60_000), sessionId: row.session_id },
      })
      throw refuse('idle_timeout', 'Session expired after 24 hours of inactivity', { idleTimeout: true })
    }
    if (MUTATING.has(request.method) && idleMs > SESSION_TOUCH_THROTTLE_MS) {
      await core.db.sql`update clinical.user_sessions set last_activity = ${new Date(now).toISOString()} where token_hash = ${tokenHash}`
      if (found.transport === 'cookie') setCookie = authCookie(core, found.token)
    }
  }
  return { user: toClinicalUser(row), sessionId: row.session_id, token: found.token, transport: found.transport, setCookie }
}

/** Ends the session of a token (logout). True when a row was deleted. */
export async function endSession(core: Core, token: string): Promise<{ userId: number } | null> {
  const [row] = await core.db.sql<{ user_id: number }>`
    delete from clinical.user_sessions where token_hash = ${sha256Hex(token)} returning user_id`
  return row ? { userId: row.user_id } : null
}

/** Ends every session of a user, or every one but `keepToken`'s (password change). */
export async function endUserSessions(core: Core, userId: number, keepToken?: string): Promise<number> {
  const keep = keepToken ? sha256Hex(keepToken) : ''
  const rows = await core.db.sql`
    delete from clinical.user_sessions where user_id = ${userId} and token_hash <> ${keep} returning id`
  return rows.length
}

/** Deletes expired rows (a schedule calls it). */
export async function sweepSessions(core: Core): Promise<number> {
  const rows = await core.db.sql`delete from clinical.user_sessions where expires_at < ${new Date(core.now()).toISOString()} returning id`
  return rows.length
}

/** Deletes one-time tokens (verification, reset) that expired or were used more than a day ago. */
export async function sweepAuthTokens(core: Core): Promise<number> {
  const dayAgo = new Date(core.now() - 24 * 3600 * 1000).toISOString()
  const rows = await core.db.sql`
    delete from clinical.auth_tokens where expires_at < ${dayAgo} or used_at < ${dayAgo} returning user_id`
  return rows.length
}

export interface SessionListing {
  id: string
  client: ClientKind
  ip_address: string | null
  device_label: string | null
  created_at: string
  last_activity: string
  current: boolean
}

/** The user's sessions, most recently active first; `current` marks the caller's own. */
export async function listSessions(core: Core, userId: number, currentSessionId: string | null): Promise<SessionListing[]> {
  const rows = await core.db.sql<Omit<SessionListing, 'current' | 'created_at' | 'last_activity'> & { created_at: Date | string; last_activity: Date | string }>`
    select id::text as id, client, ip_address, device_label, created_at, last_activity
    from clinical.user_sessions where user_id = ${userId} and expires_at > ${new Date(core.now()).toISOString()}
    order by last_activity desc`
  return rows.map((r) => ({
    ...r,
    created_at: new Date(r.created_at).toISOString(),
    last_activity: new Date(r.last_activity).toISOString(),
    current: r.id === currentSessionId,
  }))
}

/** Ends one of the user's own sessions by its id (signing out another device). False when it is not theirs. */
export async function endSessionById(core: Core, userId: number, sessionId: string): Promise<boolean> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sessionId)) return false
  const rows = await core.db.sql`delete from clinical.user_sessions where id = ${sessionId}::uuid and user_id = ${userId} returning id`
  return rows.length === 1
}

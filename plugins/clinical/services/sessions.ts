// Spec 2, Session and Authentication: the session table and the per-request checks. A session is a JWT (HS256,
// audience `clinical`) plus its row in clinical.user_sessions, keyed by the token's SHA-256. The row is the
// authority: deleting it ends the session whatever the token's expiry says. The services see a request only as
// a Caller; the edge (guard.ts) reads it from the request and turns the results into cookies.
import { signToken, verifyToken, type TokenClaims } from '../../../src/auth/jwt'
import { sha256Hex } from '../../../src/core/crypto'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import type { AuditWriter } from '../audit'
import type { SessionListing } from '../models/accounts'
import { toClinicalUser, type ClinicalUser, type ClinicalUserRow } from './users'

export const TOKEN_AUDIENCE = 'clinical'
/** spec 2, limits: web JWT 30 days, mobile JWT 365 days. */
export const WEB_TOKEN_LIFETIME_S = 30 * 24 * 3600
export const MOBILE_TOKEN_LIFETIME_S = 365 * 24 * 3600
/** spec 2, limits: web idle limit 24 hours; session update throttle 10 minutes. */
export const WEB_IDLE_LIMIT_MS = 24 * 3600 * 1000
export const SESSION_TOUCH_THROTTLE_MS = 10 * 60 * 1000
export const DEVICE_LABEL_MAX = 200

/** spec 2, token transport: web clients hold the token in a cookie, mobile clients send it as Bearer. */
export type ClientKind = 'web' | 'mobile'

/** The token a request carries, and how: the Bearer header, else the cookie. */
export interface SentToken {
  value: string
  transport: 'bearer' | 'cookie'
}

/** A request as the services see it, built at the edge (guard.ts callerOf): no Request reaches a service. */
export interface Caller {
  /** The client address: rate limits, audit entries, the session row. */
  ip: string
  /** The User-Agent, kept as a new session's device label. */
  userAgent: string | null
  client: ClientKind
  token: SentToken | null
  /** POST, PUT, PATCH or DELETE: spec 2's per-request check 4 extends the session on these only. */
  mutating: boolean
}

export interface StartedSession {
  token: string
  sessionId: string
  /** A web session's token goes into the cookie (the edge sets it); a mobile one is only answered. */
  client: ClientKind
}

/** Signs a token for the caller's client kind and records its session row. */
export async function startSession(core: Core, userId: number, caller: Pick<Caller, 'ip' | 'userAgent' | 'client'>): Promise<StartedSession> {
  const { client } = caller
  const sessionId = crypto.randomUUID()
  const now = core.now()
  const lifetimeS = client === 'web' ? WEB_TOKEN_LIFETIME_S : MOBILE_TOKEN_LIFETIME_S
  const token = await signToken(core.config.jwtSecret, TOKEN_AUDIENCE, { sub: String(userId), sid: sessionId, cl: client }, lifetimeS, now)
  const device = caller.userAgent?.slice(0, DEVICE_LABEL_MAX) ?? null
  await core.db.sql`
    insert into clinical.user_sessions (token_hash, id, user_id, client, ip_address, device_label, created_at, last_activity, expires_at)
    values (${sha256Hex(token)}, ${sessionId}, ${userId}, ${client}, ${caller.ip}, ${device},
            ${new Date(now).toISOString()}, ${new Date(now).toISOString()}, ${new Date(now + lifetimeS * 1000).toISOString()})`
  return { token, sessionId, client }
}

export interface Authenticated {
  user: ClinicalUser
  /** null for a pre-migration token that passed without a row. */
  sessionId: string | null
  token: string
  transport: SentToken['transport']
  /** The request extended a session whose token came by cookie: the edge re-issues the cookie with a fresh max age. */
  renewCookie: boolean
}

/**
 * spec 2, per-request checks: the JWT's signature and expiry, the session row, the web idle limit, and the
 * throttled extension on writes. Throws 401; the edge clears the cookie of a refused token that came by cookie.
 *
 * Rows missing: a token we issue carries its session id (`sid`), so a missing row always means the session
 * ended (logout, idleness, password change, admin action): "Session revoked". A token without `sid` predates
 * the session table: it passes while its user has no sessions at all, and is revoked once they have one.
 */
export async function authenticate(core: Core, audit: AuditWriter, caller: Caller): Promise<Authenticated> {
  const found = caller.token
  const refuse = (code: string, message: string, extra?: Record<string, unknown>) =>
    new HttpError(401, code, message, undefined, { headers: { 'www-authenticate': 'Bearer' }, extra })
  if (!found) throw refuse('not_authenticated', 'Not authenticated')
  const now = core.now()
  const claims = await verifyToken(core.config.jwtSecret, TOKEN_AUDIENCE, found.value, now) as (TokenClaims & { sid?: unknown }) | null
  const userId = Number(claims?.sub)
  if (!claims || !Number.isSafeInteger(userId)) throw refuse('invalid_token', 'Invalid or expired token')
  const tokenHash = sha256Hex(found.value)
  const [row] = await core.db.sql<ClinicalUserRow & { session_id: string | null; client: ClientKind | null; last_activity: Date | null }>`
    select u.id, u.name, u.email, u.role, u.email_verified, u.totp_enabled, u.disabled, u.can_local_auth, u.created_at,
           s.id as session_id, s.client, s.last_activity
    from clinical.users u
    left join clinical.user_sessions s on s.token_hash = ${tokenHash} and s.user_id = u.id
    where u.id = ${userId}`
  if (!row) throw refuse('invalid_token', 'Invalid or expired token')
  if (row.disabled) throw refuse('account_disabled', 'Account disabled')

  let renewCookie = false
  if (row.session_id === null) {
    const legacy = typeof claims.sid !== 'string'
    if (!legacy) throw refuse('session_revoked', 'Session revoked')
    const [other] = await core.db.sql<{ n: number }>`select count(*)::int as n from clinical.user_sessions where user_id = ${userId}`
    if (other!.n > 0) throw refuse('session_revoked', 'Session revoked')
  } else {
    const idleMs = now - row.last_activity!.getTime()
    if (row.client === 'web' && idleMs > WEB_IDLE_LIMIT_MS) {
      await core.db.sql`delete from clinical.user_sessions where token_hash = ${tokenHash}`
      audit.write({
        action: 'session_idle_timeout', userId, ip: caller.ip,
        details: { idleMinutes: Math.floor(idleMs / 60_000), sessionId: row.session_id },
      })
      throw refuse('idle_timeout', 'Session expired after 24 hours of inactivity', { idleTimeout: true })
    }
    if (caller.mutating && idleMs > SESSION_TOUCH_THROTTLE_MS) {
      await core.db.sql`update clinical.user_sessions set last_activity = ${new Date(now).toISOString()} where token_hash = ${tokenHash}`
      renewCookie = found.transport === 'cookie'
    }
  }
  return { user: toClinicalUser(row), sessionId: row.session_id, token: found.value, transport: found.transport, renewCookie }
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

/** spec 3, Logs (access): how a sign-in attempt ended. `oidc` is a successful single sign-on. */
export const SIGN_IN_OUTCOMES = ['success', 'failed', 'blocked', 'oidc'] as const
export type SignInOutcome = (typeof SIGN_IN_OUTCOMES)[number]
/** The longest email an access entry keeps (the longest valid address). */
export const ACCESS_EMAIL_MAX = 320

export interface SignInAttempt {
  userId: number | null
  /** The email as typed (normalised), or the account's. */
  email: string | null
  outcome: SignInOutcome
  /** Why it failed or was refused (`wrong_password`, `disabled`, ...); null on success. */
  reason?: string | null
}

/**
 * Writes the access log entry of a sign-in attempt (clinical.access_log). A failure to write is logged, never thrown:
 * whether someone signs in does not depend on the log.
 */
export async function recordSignIn(core: Core, caller: Pick<Caller, 'ip' | 'client'>, attempt: SignInAttempt): Promise<void> {
  try {
    await core.db.sql`
      insert into clinical.access_log (at, user_id, email, ip_address, client, outcome, reason)
      values (${new Date(core.now()).toISOString()}, ${attempt.userId}, ${attempt.email?.slice(0, ACCESS_EMAIL_MAX) ?? null},
              ${caller.ip.slice(0, 100)}, ${caller.client}, ${attempt.outcome}, ${attempt.reason ?? null})`
  } catch (err) {
    core.log.warn({ err, outcome: attempt.outcome }, 'access log entry not stored')
  }
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

/** The user's sessions, most recently active first; `current` marks the caller's own. */
export async function listSessions(core: Core, userId: number, currentSessionId: string | null): Promise<SessionListing[]> {
  const rows = await core.db.sql<Omit<SessionListing, 'current' | 'created_at' | 'last_activity'> & { created_at: Date; last_activity: Date }>`
    select id::text as id, client, ip_address, device_label, created_at, last_activity
    from clinical.user_sessions where user_id = ${userId} and expires_at > ${new Date(core.now()).toISOString()}
    order by last_activity desc`
  return rows.map((r) => ({
    ...r,
    created_at: r.created_at.toISOString(),
    last_activity: r.last_activity.toISOString(),
    current: r.id === currentSessionId,
  }))
}

/** Ends one of the user's own sessions by its id (signing out another device). False when it is not theirs. */
export async function endSessionById(core: Core, userId: number, sessionId: string): Promise<boolean> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sessionId)) return false
  const rows = await core.db.sql`delete from clinical.user_sessions where id = ${sessionId}::uuid and user_id = ${userId} returning id`
  return rows.length === 1
}

// Spec 2's User and spec 3's User account states: the rows of clinical.users as the other services and the
// administration see them. The admin plugin reaches them through exports.ts only, so every statement on the
// table stays in this plugin.
import { rawSql } from '../../../src/core/db'
import type { Core } from '../../../src/plugin'
import type { ProfileUser, SessionUser } from '../models/accounts'

/** A user row: the session user of the API (the model) plus what only the server reads. */
export type ClinicalUserRow = SessionUser & { disabled: boolean; can_local_auth: boolean; created_at: Date }
/** A user row with the figures of the admin detail view. */
export type UserAccountDetail = ClinicalUserRow & { api_calls: number; last_login: Date | null }
/** The signed-in user as routes see it. */
export type ClinicalUser = ProfileUser & { disabled: boolean }

export const USER_COLUMNS = 'id, name, email, role, email_verified, totp_enabled, disabled, can_local_auth, created_at'
const columns = rawSql(USER_COLUMNS)

export const toSessionUser = (row: ClinicalUserRow): SessionUser => ({
  id: row.id, name: row.name, email: row.email, role: row.role, totp_enabled: row.totp_enabled, email_verified: row.email_verified,
})
// Written out field by field, not spread: a spread (or a rest pattern) copies through the engine's slow path, and
// these run on every authenticated request.
export const toClinicalUser = (row: ClinicalUserRow): ClinicalUser => ({
  id: row.id, name: row.name, email: row.email, role: row.role, totp_enabled: row.totp_enabled, email_verified: row.email_verified,
  canLocalAuth: row.can_local_auth, disabled: row.disabled,
})
/** The profile GET /api/auth/me answers: the signed-in user without what only the server reads. */
export const profileOf = (user: ClinicalUser): ProfileUser => ({
  id: user.id, name: user.name, email: user.email, role: user.role, totp_enabled: user.totp_enabled, email_verified: user.email_verified,
  canLocalAuth: user.canLocalAuth,
})

/** Newest accounts first; one query. */
export function listUserAccounts(core: Core): Promise<ClinicalUserRow[]> {
  return core.db.sql<ClinicalUserRow>`select ${columns} from clinical.users order by created_at desc, id desc`
}

export async function findUserAccount(core: Core, userId: number): Promise<UserAccountDetail | null> {
  const [row] = await core.db.sql<UserAccountDetail>`
    select ${columns}, api_calls, last_login from clinical.users where id = ${userId}`
  return row ?? null
}

/** spec 3, User account: unverified -> verified (the emailed link, or an admin). False for an unknown user. */
export async function markEmailVerified(core: Core, userId: number): Promise<boolean> {
  const rows = await core.db.sql`update clinical.users set email_verified = true where id = ${userId} returning id`
  return rows.length === 1
}

/**
 * spec 3, User account: any -> disabled, disabled -> enabled. False for an unknown user. Disabling does not end
 * the sessions by itself: the caller ends them (endUserSessions) in the same transaction.
 */
export async function setUserDisabled(core: Core, userId: number, disabled: boolean): Promise<boolean> {
  const rows = await core.db.sql`update clinical.users set disabled = ${disabled} where id = ${userId} returning id`
  return rows.length === 1
}

/** Adds calls to a user's count of authenticated API calls (the guard counts in memory, this stores a batch). */
export async function addApiCalls(core: Core, userId: number, calls: number): Promise<void> {
  await core.db.sql`update clinical.users set api_calls = api_calls + ${calls} where id = ${userId}`
}

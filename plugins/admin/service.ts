// Spec 3, User administration and Configuration (registration): admins list and inspect users, verify them
// without the email link, disable and enable them, and turn registration on or off. Plain functions over the core.
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import { auditLog, REGISTRATION_ENABLED, setConfigValues, type ClinicalUserRow } from '../clinical/exports'
import type { AdminUser, AdminUserDetail } from './model'

/** Who performs an admin action, for the audit log. */
export interface Actor {
  id: number
  ip: string
}

type AdminUserRow = Omit<ClinicalUserRow, 'can_local_auth'>

const toAdminUser = (row: AdminUserRow): AdminUser => ({
  id: row.id,
  name: row.name,
  email: row.email,
  role: row.role,
  email_verified: row.email_verified,
  totp_enabled: row.totp_enabled,
  disabled: row.disabled,
  created_at: new Date(row.created_at).toISOString(),
})

const notFound = () => HttpError.notFound('user_not_found', 'User not found')

/** Newest accounts first; one query. */
export async function listUsers(core: Core): Promise<AdminUser[]> {
  const rows = await core.db.sql<AdminUserRow>`
    select id, name, email, role, email_verified, totp_enabled, disabled, created_at
    from clinical.users order by created_at desc, id desc`
  return rows.map(toAdminUser)
}

export async function getUser(core: Core, userId: number): Promise<AdminUserDetail> {
  const [row] = await core.db.sql<AdminUserRow & { api_calls: number | string; last_login: Date | string | null }>`
    select id, name, email, role, email_verified, totp_enabled, disabled, created_at, api_calls, last_login
    from clinical.users where id = ${userId}`
  if (!row) throw notFound()
  return {
    ...toAdminUser(row),
    // int8: a number on PGlite, a string on the server driver
    api_calls: Number(row.api_calls),
    last_login: row.last_login === null ? null : new Date(row.last_login).toISOString(),
  }
}

/** spec 3, User account: unverified -> verified by an admin, bypassing the email link. */
export async function verifyUser(core: Core, actor: Actor, userId: number): Promise<void> {
  const [row] = await core.db.sql<{ id: number }>`
    update clinical.users set email_verified = true where id = ${userId} returning id`
  if (!row) throw notFound()
  auditLog(core).write({ action: 'user_verified', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: userId } })
}

/**
 * spec 3, User account: any -> disabled; login is refused from then on. The user's sessions are deleted in the
 * same transaction, so every token they hold stops working at once (not only at its next login).
 */
export async function disableUser(core: Core, actor: Actor, userId: number): Promise<void> {
  // An admin who disabled themself would be locked out at once, possibly leaving no admin at all.
  if (actor.id === userId) throw HttpError.badRequest('disable_self', 'You cannot disable your own account')
  await core.db.transaction(async (tx) => {
    const [row] = await tx.sql<{ id: number }>`update clinical.users set disabled = true where id = ${userId} returning id`
    if (!row) throw notFound()
    await tx.sql`delete from clinical.user_sessions where user_id = ${userId}`
  })
  auditLog(core).write({ action: 'user_disabled', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: userId } })
}

/** spec 3, User account: disabled -> enabled. The user signs in again; ended sessions stay ended. */
export async function enableUser(core: Core, actor: Actor, userId: number): Promise<void> {
  const [row] = await core.db.sql<{ id: number }>`update clinical.users set disabled = false where id = ${userId} returning id`
  if (!row) throw notFound()
  auditLog(core).write({ action: 'user_enabled', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: userId } })
}

/** spec 3, POST /api/admin/settings/registration: stored as registration_enabled 'true' or 'false'. */
export async function setRegistrationEnabled(core: Core, actor: Actor, enabled: boolean): Promise<void> {
  await setConfigValues(core, { [REGISTRATION_ENABLED]: String(enabled) })
  auditLog(core).write({ action: 'config_changed', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, key: REGISTRATION_ENABLED, value: String(enabled) } })
}

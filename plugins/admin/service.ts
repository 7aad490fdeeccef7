// Spec 3, User administration and Configuration (registration): admins list and inspect users, verify them
// without the email link, disable and enable them, and turn registration on or off. Plain functions over the core
// and the clinical audit writer; the accounts themselves are the clinical plugin's (its exports), so no SQL here.
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import {
  endUserSessions, findUserAccount, listUserAccounts, markEmailVerified, REGISTRATION_ENABLED, setConfigValues, setUserDisabled,
  type AuditWriter, type ClinicalUserRow,
} from '../clinical/exports'
import type { AdminUser, AdminUserDetail } from './model'

/** Who performs an admin action, for the audit log. */
export interface Actor {
  id: number
  ip: string
}

const toAdminUser = (row: ClinicalUserRow): AdminUser => ({
  id: row.id,
  name: row.name,
  email: row.email,
  role: row.role,
  email_verified: row.email_verified,
  totp_enabled: row.totp_enabled,
  disabled: row.disabled,
  created_at: row.created_at.toISOString(),
})

const notFound = () => HttpError.notFound('user_not_found', 'User not found')

/** Newest accounts first. */
export async function listUsers(core: Core): Promise<AdminUser[]> {
  return (await listUserAccounts(core)).map(toAdminUser)
}

export async function getUser(core: Core, userId: number): Promise<AdminUserDetail> {
  const row = await findUserAccount(core, userId)
  if (!row) throw notFound()
  return { ...toAdminUser(row), api_calls: row.api_calls, last_login: row.last_login?.toISOString() ?? null }
}

/** spec 3, User account: unverified -> verified by an admin, bypassing the email link. */
export async function verifyUser(core: Core, audit: AuditWriter, actor: Actor, userId: number): Promise<void> {
  if (!(await markEmailVerified(core, userId))) throw notFound()
  audit.write({ action: 'user_verified', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: userId } })
}

/**
 * spec 3, User account: any -> disabled; login is refused from then on. The user's sessions end in the same
 * transaction, so every token they hold stops working at once (not only at its next login).
 */
export async function disableUser(core: Core, audit: AuditWriter, actor: Actor, userId: number): Promise<void> {
  // An admin who disabled themself would be locked out at once, possibly leaving no admin at all.
  if (actor.id === userId) throw HttpError.badRequest('disable_self', 'You cannot disable your own account')
  await core.transaction(async (tx) => {
    if (!(await setUserDisabled(tx, userId, true))) throw notFound()
    await endUserSessions(tx, userId)
  })
  audit.write({ action: 'user_disabled', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: userId } })
}

/** spec 3, User account: disabled -> enabled. The user signs in again; ended sessions stay ended. */
export async function enableUser(core: Core, audit: AuditWriter, actor: Actor, userId: number): Promise<void> {
  if (!(await setUserDisabled(core, userId, false))) throw notFound()
  audit.write({ action: 'user_enabled', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: userId } })
}

/** spec 3, POST /api/admin/settings/registration: stored as registration_enabled 'true' or 'false'. */
export async function setRegistrationEnabled(core: Core, audit: AuditWriter, actor: Actor, enabled: boolean): Promise<void> {
  await setConfigValues(core, { [REGISTRATION_ENABLED]: String(enabled) })
  audit.write({ action: 'config_changed', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, key: REGISTRATION_ENABLED, value: String(enabled) } })
}

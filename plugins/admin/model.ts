// TypeBox models of spec 3's user administration and registration setting; the OpenAPI docs come from them.
import { t } from 'elysia'
import { Role } from '../clinical/exports'
import { Int, RowId } from '../../src/core/schema'

/** spec 3, Endpoints: "Path parameter `id` is a number". */
export const UserIdParams = t.Object({ id: RowId('The user id') })

/** spec 3, Administration objects: User (admin list). */
export const AdminUser = t.Object({
  id: Int(),
  name: t.String(),
  email: t.String(),
  role: Role,
  email_verified: t.Boolean(),
  totp_enabled: t.Boolean(),
  disabled: t.Boolean({ description: 'A disabled account cannot sign in and its sessions have ended' }),
  created_at: t.String({ format: 'date-time' }),
})
export type AdminUser = typeof AdminUser.static

/** spec 3, Administration objects: User (admin detail) = the list object plus api_calls and last_login. */
export const AdminUserDetail = t.Composite([AdminUser, t.Object({
  api_calls: t.Number({ description: 'Authenticated API calls so far (counted in memory, stored every few seconds)' }),
  last_login: t.Nullable(t.String({ format: 'date-time' })),
})])
export type AdminUserDetail = typeof AdminUserDetail.static

export const UserList = t.Object({ success: t.Literal(true), users: t.Array(AdminUser) })
export const UserDetail = t.Object({ success: t.Literal(true), user: AdminUserDetail })
export const Success = t.Object({ success: t.Literal(true) })

export const RegistrationBody = t.Object({
  enabled: t.Boolean({ description: 'false refuses new registrations (403); the very first account is always allowed' }),
})
export type RegistrationBody = typeof RegistrationBody.static

// TypeBox models of spec 1's Admin: users; the OpenAPI docs come from them (a user is answered as UserResponse).
import { t } from 'elysia'
import { RowId } from '../../../src/core/schema'
import { Email, NAME_MAX, Password, Role } from './accounts'

export const CreateUserBody = t.Object({
  email: Email,
  password: Password,
  name: t.String({ minLength: 1, maxLength: NAME_MAX }),
})
export type CreateUserBody = typeof CreateUserBody.static
export const RoleBody = t.Object({ role: Role })
export const UnthrottleBody = t.Object({ unthrottled: t.Boolean() })
export const UserIdParams = t.Object({ user_id: RowId() })

// Spec 1, Admin: users. Every route here requires Admin.
import { Elysia, t } from 'elysia'
import { UserResponse } from '../models/accounts'
import { CreateUserBody, RoleBody, UnthrottleBody, UserIdParams } from '../models/users'
import * as users from '../services/users'
import type { QuizState } from '../state'

const tags = ['Admin: users']

export const userRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/admin' })
    .use(auth)
    .get('/users', () => users.listUsers(core), {
      role: 'admin', response: t.Array(UserResponse), detail: { tags, summary: 'List users' },
    })
    .post('/users', ({ body }) => users.createUser(core, body), {
      role: 'admin', body: CreateUserBody, response: UserResponse,
      detail: { tags, summary: 'Create a user', description: 'The email is verified at once. 409 when the email is taken.' },
    })
    .put('/users/:user_id/role', ({ user, params, body }) => users.setRole(core, user.id, params.user_id, body.role), {
      role: 'admin', params: UserIdParams, body: RoleBody, response: UserResponse,
      detail: { tags, summary: 'Change a user\'s role', description: '400 when changing one\'s own role; 404 unknown user.' },
    })
    .put('/users/:user_id/unthrottle', ({ params, body }) => users.setUnthrottled(core, params.user_id, body.unthrottled), {
      role: 'admin', params: UserIdParams, body: UnthrottleBody, response: UserResponse,
      detail: { tags, summary: 'Exempt a user from the tutor and speech rate limits' },
    })
    .delete('/users/:user_id', async ({ user, params, set }) => {
      await users.deleteUser(core, user.id, params.user_id)
      set.status = 204
    }, {
      role: 'admin', params: UserIdParams,
      detail: { tags, summary: 'Delete a user and all their data', description: '400 when deleting oneself; 404 unknown user.' },
    })

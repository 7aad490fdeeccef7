// Spec 1, Admin: users and settings. Every route here requires Admin.
import { Elysia, t } from 'elysia'
import type { Core } from '../../../src/plugin'
import { quizAuth } from '../guard'
import {
  CreateUserBody, RoleBody, SuccessMessage, SystemSettings, SystemSettingsBody, UnthrottleBody, UserIdParams, UserResponse,
} from '../models/accounts'
import { getSystemSettings, updateSystemSettings } from '../services/settings'
import * as users from '../services/users'

export const adminRoutes = (core: Core) =>
  new Elysia({ prefix: '/api/admin' })
    .use(quizAuth(core))
    .get('/users', () => users.listUsers(core), {
      role: 'admin', response: t.Array(UserResponse), detail: { tags: ['Admin: users'], summary: 'List users' },
    })
    .post('/users', ({ body }) => users.createUser(core, body), {
      role: 'admin', body: CreateUserBody, response: UserResponse,
      detail: { tags: ['Admin: users'], summary: 'Create a user', description: 'The email is verified at once. 409 when the email is taken.' },
    })
    .put('/users/:user_id/role', ({ user, params, body }) => users.setRole(core, user.id, params.user_id, body.role), {
      role: 'admin', params: UserIdParams, body: RoleBody, response: UserResponse,
      detail: { tags: ['Admin: users'], summary: 'Change a user\'s role', description: '400 when changing one\'s own role; 404 unknown user.' },
    })
    .put('/users/:user_id/unthrottle', ({ params, body }) => users.setUnthrottled(core, params.user_id, body.unthrottled), {
      role: 'admin', params: UserIdParams, body: UnthrottleBody, response: UserResponse,
      detail: { tags: ['Admin: users'], summary: 'Exempt a user from the tutor and speech rate limits' },
    })
    .delete('/users/:user_id', async ({ user, params, set }) => {
      await users.deleteUser(core, user.id, params.user_id)
      set.status = 204
    }, {
      role: 'admin', params: UserIdParams,
      detail: { tags: ['Admin: users'], summary: 'Delete a user and all their data', description: '400 when deleting oneself; 404 unknown user.' },
    })
    .get('/settings', () => getSystemSettings(core), {
      role: 'admin', response: SystemSettings, detail: { tags: ['Admin: settings'], summary: 'System settings' },
    })
    .put('/settings', async ({ body }) => {
      await updateSystemSettings(core, body)
      return { success: true as const, message: 'Settings saved' }
    }, {
      role: 'admin', body: SystemSettingsBody, response: SuccessMessage,
      detail: { tags: ['Admin: settings'], summary: 'Update system settings' },
    })

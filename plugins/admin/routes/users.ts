// Spec 3, User administration and the registration setting: admin only. Routing, guards, validation and
// response shaping; the rules live in service.ts.
import { Elysia } from 'elysia'
import type { AdminState } from '../index'
import { RegistrationBody, Success, UserDetail, UserIdParams, UserList } from '../model'
import * as admin from '../service'

const usersTag = ['Admin: users']
const settingsTag = ['Admin: settings']

export const userRoutes = ({ core, clinical: { audit, auth: clinicalAuth } }: AdminState) => {
  const actor = (user: { id: number }, request: Request): admin.Actor => ({ id: user.id, ip: core.clientAddress(request) })
  return new Elysia({ prefix: '/api/admin' })
    .use(clinicalAuth)
    .get('/users', async () => ({ success: true as const, users: await admin.listUsers(core) }), {
      auth: 'admin', response: UserList,
      detail: { tags: usersTag, summary: 'List users', description: 'Newest accounts first.' },
    })
    .get('/users/:id', async ({ params }) => ({ success: true as const, user: await admin.getUser(core, params.id) }), {
      auth: 'admin', params: UserIdParams, response: UserDetail,
      detail: { tags: usersTag, summary: 'One user, with API call count and last sign-in', description: '404 unknown user.' },
    })
    .post('/users/:id/verify', async ({ params, user, request }) => {
      await admin.verifyUser(core, audit, actor(user, request), params.id)
      return { success: true as const }
    }, {
      auth: 'admin', params: UserIdParams, response: Success,
      detail: { tags: usersTag, summary: 'Mark a user\'s email as verified', description: 'Bypasses the email link. 404 unknown user.' },
    })
    .post('/users/:id/disable', async ({ params, user, request }) => {
      await admin.disableUser(core, audit, actor(user, request), params.id)
      return { success: true as const }
    }, {
      auth: 'admin', params: UserIdParams, response: Success,
      detail: {
        tags: usersTag, summary: 'Disable a user',
        description: 'Login answers `Invalid credentials` from then on, and every session of the user ends at once. 400 for one\'s own account; 404 unknown user.',
      },
    })
    .post('/users/:id/enable', async ({ params, user, request }) => {
      await admin.enableUser(core, audit, actor(user, request), params.id)
      return { success: true as const }
    }, {
      auth: 'admin', params: UserIdParams, response: Success,
      detail: { tags: usersTag, summary: 'Enable a disabled user', description: 'The user can sign in again. 404 unknown user.' },
    })
    .post('/settings/registration', async ({ body, user, request }) => {
      await admin.setRegistrationEnabled(core, audit, actor(user, request), body.enabled)
      return { success: true as const }
    }, {
      auth: 'admin', body: RegistrationBody, response: Success,
      detail: {
        tags: settingsTag, summary: 'Turn registration on or off',
        description: 'While off, POST /api/auth/register answers 403, except for the very first account. GET /api/auth/registration-status reflects it.',
      },
    })
}

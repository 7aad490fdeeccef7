// The caller's own sessions (spec 2, Session): list them and end one, e.g. a lost phone's. Not in the spec's
// table; the session rows it describes are what a user needs to see to trust "Session revoked".
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { clinicalAuth } from '../guard'
import { Success } from '../models/accounts'
import { authCookie, endSessionById, listSessions } from '../services/sessions'

const tags = ['Auth']
const SessionListing = t.Object({
  id: t.String({ format: 'uuid', description: 'The sessionId of the login response' }),
  client: t.Union([t.Literal('web'), t.Literal('mobile')]),
  ip_address: t.Nullable(t.String()),
  device_label: t.Nullable(t.String({ description: 'The User-Agent of the sign-in' })),
  created_at: t.String({ format: 'date-time' }),
  last_activity: t.String({ format: 'date-time' }),
  current: t.Boolean({ description: 'True for the session of this request' }),
})

export const sessionRoutes = (core: Core) =>
  new Elysia({ prefix: '/api/auth/sessions' })
    .use(clinicalAuth(core))
    .get('', async ({ user, auth }) => ({ success: true as const, sessions: await listSessions(core, user.id, auth.sessionId) }), {
      auth: 'user', response: t.Object({ success: t.Literal(true), sessions: t.Array(SessionListing) }),
      detail: { tags, summary: 'The caller\'s sessions', description: 'Unexpired sessions, most recently active first. last_activity moves on writes at most every 10 minutes; reads never move it.' },
    })
    .delete('/:id', async ({ user, auth, params, set }) => {
      if (!(await endSessionById(core, user.id, params.id))) throw HttpError.notFound('session_not_found', 'Session not found')
      if (params.id === auth.sessionId && auth.transport === 'cookie') set.headers['set-cookie'] = authCookie(core, null)
      return { success: true as const }
    }, {
      auth: 'user', params: t.Object({ id: t.String({ maxLength: 64 }) }), response: Success,
      detail: { tags, summary: 'End one of the caller\'s sessions', description: 'Its token then answers 401 `Session revoked`. 404 for an id that is not one of the caller\'s sessions.' },
    })

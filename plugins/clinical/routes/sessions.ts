// The caller's own sessions (spec 2, Session): list them and end one, e.g. a lost phone's. Not in the spec's
// table; the session rows it describes are what a user needs to see to trust "Session revoked".
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { authCookie } from '../cookies'
import { SessionList, Success } from '../models/accounts'
import { endSessionById, listSessions } from '../services/sessions'
import type { ClinicalState } from '../state'

const tags = ['Auth']

export const sessionRoutes = ({ core, auth: clinicalAuth }: ClinicalState) =>
  new Elysia({ prefix: '/api/auth/sessions' })
    .use(clinicalAuth)
    .get('', async ({ user, auth }) => ({ success: true as const, sessions: await listSessions(core, user.id, auth.sessionId) }), {
      auth: 'user', response: SessionList,
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

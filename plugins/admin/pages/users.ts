// The console's user pages (spec 3, User administration and User account states), for admins:
//   /admin/users                       the list; search as you type over name and email (the results fragment)
//   /admin/users/:id                   one user: verify, disable, enable (never one's own account), and the sessions
//   /admin/users/:id/sessions/end      the confirm step (GET) and the ending of every session (POST)
// The account actions go through the same service functions as the API (service.ts), audited alike; every form
// works without JavaScript (Post/Redirect/Get with a notice), and a GET of an action's address shows the user.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { RowId } from '../../../src/core/schema'
import { bodyLimits } from '../../../src/envelope'
import { isFragment } from '../../../views/layout'
import { FormBody, html, redirect } from '../../../views/page'
import { clinicalPageKit, type PageSession } from '../../clinical/pages/common'
import { endUserSessions, listSessions } from '../../clinical/exports'
import type { AdminState } from '../index'
import type { AdminUser } from '../model'
import * as admin from '../service'
import { EndSessionsPage, SessionsSection, USER_QUERY_MAX, UserPage, UserResults, UsersPage, type UserView } from '../views/users'
import { actorOf, noticeOf, refusalOf, requireAdmin } from './common'

const IdParams = t.Object({ id: RowId('The user id') })
const ListQuery = t.Object({ q: t.Optional(t.String({ maxLength: USER_QUERY_MAX })), notice: t.Optional(t.String()) })
const NoticeQuery = t.Object({ notice: t.Optional(t.String()) })

const NOTICES = {
  verified: 'The email address is marked as verified.',
  disabled: 'The account is disabled: sign-in is refused and every session of the user has ended.',
  enabled: 'The account is enabled: the user can sign in again.',
  sessions_ended: 'The sessions have ended: the user must sign in again.',
} as const

/** Case-insensitive match over name and email: the console's list is every account, read in one query. */
const matching = (users: AdminUser[], q: string) => {
  const needle = q.toLowerCase()
  return needle ? users.filter((u) => u.name.toLowerCase().includes(needle) || u.email.toLowerCase().includes(needle)) : users
}

export const userPages = (state: AdminState) => {
  const { core, clinical } = state
  const base = core.config.clinicalBasePath
  const home = `${base}/admin/users`
  const userUrl = (id: number) => `${home}/${id}`

  type Session = PageSession
  const showUser = (user: Session['user'], id: number) => {
    requireAdmin(user)
    return redirect(userUrl(id))
  }
  const view = async (s: Session, id: number, extra: Partial<UserView> = {}): Promise<UserView> => {
    const [account, sessions] = await Promise.all([admin.getUser(core, id), listSessions(core, id, s.auth.sessionId)])
    return { base, user: s.user, account, sessions, self: s.user.id === id, ...extra }
  }

  /**
   * Ends every session of a user (an admin's own: all but the current one) and audits it like the account actions.
   * Their tokens stop working at once: each request checks its session row.
   */
  const endSessions = async (s: Session, request: Request, id: number) => {
    await admin.getUser(core, id)
    const self = s.user.id === id
    const ended = await endUserSessions(core, id, self ? s.auth.token : undefined)
    const actor = actorOf(core, s.user, request)
    clinical.audit.write({ action: 'user_sessions_ended', userId: actor.id, ip: actor.ip, details: { adminId: actor.id, targetUserId: id, count: ended } })
  }

  return new Elysia()
    .use(clinicalPageKit(clinical))
    .use(bodyLimits)
    .get('/admin', ({ user }) => {
      requireAdmin(user)
      return redirect(home)
    }, { signedIn: true })

    .get('/admin/users', async ({ request, user, query }) => {
      requireAdmin(user)
      const q = (query.q ?? '').trim()
      const users = matching(await admin.listUsers(core), q)
      if (isFragment(request)) return html(UserResults({ base, users, q }))
      return html(UsersPage({ base, user, users, q, flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: ListQuery })

    .get('/admin/users/:id', async ({ user, auth, params, query }) => {
      requireAdmin(user)
      return html(UserPage(await view({ user, auth }, params.id, { flash: noticeOf(NOTICES, query.notice) })))
    }, { signedIn: true, params: IdParams, query: NoticeQuery })

    // The action forms post; a GET of their address (a reload, a bookmark) shows the user.
    .get('/admin/users/:id/verify', ({ user, params }) => showUser(user, params.id), { signedIn: true, params: IdParams })
    .get('/admin/users/:id/disable', ({ user, params }) => showUser(user, params.id), { signedIn: true, params: IdParams })
    .get('/admin/users/:id/enable', ({ user, params }) => showUser(user, params.id), { signedIn: true, params: IdParams })
    .post('/admin/users/:id/verify', async ({ request, user, params }) => {
      requireAdmin(user)
      await admin.verifyUser(core, clinical.audit, actorOf(core, user, request), params.id)
      return redirect(`${userUrl(params.id)}?notice=verified`)
    }, { signedIn: true, params: IdParams, body: FormBody })
    .post('/admin/users/:id/disable', async ({ request, user, auth, params }) => {
      requireAdmin(user)
      try {
        await admin.disableUser(core, clinical.audit, actorOf(core, user, request), params.id)
        return redirect(`${userUrl(params.id)}?notice=disabled`)
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) throw err
        // disable_self: the button is not offered, but a forged or stale form still gets the reason in words
        const { message, headers } = refusalOf(err)
        const v = await view({ user, auth }, params.id, { problem: message, flash: { kind: 'error', text: message } })
        return html(UserPage(v), { status: 422, headers })
      }
    }, { signedIn: true, params: IdParams, body: FormBody })
    .post('/admin/users/:id/enable', async ({ request, user, params }) => {
      requireAdmin(user)
      await admin.enableUser(core, clinical.audit, actorOf(core, user, request), params.id)
      return redirect(`${userUrl(params.id)}?notice=enabled`)
    }, { signedIn: true, params: IdParams, body: FormBody })

    .get('/admin/users/:id/sessions/end', async ({ request, user, auth, params }) => {
      requireAdmin(user)
      const v = await view({ user, auth }, params.id, { confirm: true })
      return html(isFragment(request) ? SessionsSection(v) : EndSessionsPage(v))
    }, { signedIn: true, params: IdParams })
    .post('/admin/users/:id/sessions/end', async ({ request, user, auth, params }) => {
      requireAdmin(user)
      await endSessions({ user, auth }, request, params.id)
      if (!isFragment(request)) return redirect(`${userUrl(params.id)}?notice=sessions_ended`)
      return html(SessionsSection(await view({ user, auth }, params.id, { notice: NOTICES.sessions_ended })))
    }, { signedIn: true, params: IdParams, body: FormBody })
}

// The console's user pages (spec 3, User administration): the list with search as you type, and one user's detail
// with the account actions (verify, disable, enable) and their active sessions, ended together after a confirm step.
// Each page includes its fragments, so one source serves the page and the htmx answer. Every user or database
// string is a `safe` text child or an attribute.
import { type Flash, Notice, Problem, When } from '../../../views/layout'
import type { NavUser } from '../../clinical/views/common'
import type { SessionListing } from '../../clinical/exports'
import type { AdminUser, AdminUserDetail } from '../model'
import { AdminLayout } from './layout'

/** The longest search the list takes, in characters. */
export const USER_QUERY_MAX = 200

const ROLE_WORDS: Record<string, string> = { admin: 'Admin', moderator: 'Moderator', user: 'User' }
export const roleWords = (role: string) => ROLE_WORDS[role] ?? role
export const verifiedWords = (u: AdminUser) => (u.email_verified ? 'Verified' : 'Not verified')
export const twoFactorWords = (u: AdminUser) => (u.totp_enabled ? 'On' : 'Off')
export const accountWords = (u: AdminUser) => (u.disabled ? 'Disabled' : 'Active')

const usersUrl = (base: string) => `${base}/admin/users`
export const userUrl = (base: string, id: number) => `${usersUrl(base)}/${id}`

const countWords = (n: number, q: string) =>
  q ? `${n} ${n === 1 ? 'user matches' : 'users match'} “${q}”.` : `${n} ${n === 1 ? 'user' : 'users'}.`

// ---- the list ------------------------------------------------------------------------------------------------------

/** The table: the fragment of a search, part of the page. */
export const UserResults = (p: { base: string; users: AdminUser[]; q: string }) => (
  <div id="users-results">
    <p class="muted" role="status" safe>{countWords(p.users.length, p.q)}</p>
    {p.users.length === 0 ? (
      <p class="muted">{p.q ? 'No user has that in their name or email address.' : 'No accounts yet.'}</p>
    ) : (
      <table>
        <caption class="visually-hidden">Accounts, the newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Email address</th>
            <th scope="col">Two-factor</th><th scope="col">Account</th><th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {p.users.map((u) => (
            <tr id={`user-${u.id}`}>
              <th scope="row"><a href={userUrl(p.base, u.id)} safe>{u.name || u.email}</a></th>
              <td safe>{u.email}</td>
              <td safe>{roleWords(u.role)}</td>
              <td>{verifiedWords(u)}</td>
              <td>{twoFactorWords(u)}</td>
              <td>{u.disabled ? <strong>Disabled</strong> : 'Active'}</td>
              <td><When iso={u.created_at} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </div>
)

export const UsersPage = (p: { base: string; user: NavUser; users: AdminUser[]; q: string; flash?: Flash }) => (
  <AdminLayout base={p.base} title="Users" user={p.user} area="/users" flash={p.flash}>
    <h1>Users</h1>
    <form class="actions admin-search" action={usersUrl(p.base)} method="get" role="search">
      <label for="users-q" class="visually-hidden">Search by name or email</label>
      <input type="search" id="users-q" name="q" value={p.q} maxlength={USER_QUERY_MAX} placeholder="Search by name or email"
        autocomplete="off" hx-get={usersUrl(p.base)} hx-trigger="input changed delay:200ms, search" hx-target="#users-results"
        hx-swap="outerHTML" hx-push-url="true" />
      <button type="submit">Search</button>
      {p.q ? <a href={usersUrl(p.base)}>Show all</a> : ''}
    </form>
    <UserResults base={p.base} users={p.users} q={p.q} />
  </AdminLayout>
)

// ---- one user ------------------------------------------------------------------------------------------------------

const clientWords = (s: SessionListing) => `${s.client === 'web' ? 'Browser' : 'Mobile app'}${s.device_label ? `: ${s.device_label}` : ''}`

export interface SessionsView {
  base: string
  account: AdminUserDetail
  sessions: SessionListing[]
  /** The admin's own account: their current session is kept when they end the others. */
  self: boolean
  confirm?: boolean
  notice?: string | null
}

const endWords = (self: boolean) => (self ? 'End all other sessions' : 'End all sessions')

/** The confirm step of ending the sessions: in place of the button (htmx), or on its own page. */
const EndSessionsForm = (p: SessionsView) => (
  <form class="rec-confirm" action={`${userUrl(p.base, p.account.id)}/sessions/end`} method="post"
    hx-post={`${userUrl(p.base, p.account.id)}/sessions/end`} hx-target="#user-sessions" hx-swap="outerHTML">
    <span safe>{p.self
      ? 'End every session but this one? Your other browsers and apps are signed out.'
      : `End every session of ${p.account.name || p.account.email}? They are signed out everywhere and must sign in again.`}</span>{' '}
    <button type="submit" class="danger" autofocus>{p.self ? 'Yes, end the other sessions' : 'Yes, end all sessions'}</button>{' '}
    <a href={userUrl(p.base, p.account.id)}>No, keep them</a>
  </form>
)

/** The user's active sessions: the fragment of the confirm step and of ending them. */
export const SessionsSection = (p: SessionsView) => {
  const url = userUrl(p.base, p.account.id)
  const others = p.sessions.filter((s) => !(p.self && s.current))
  return (
    <section id="user-sessions" aria-labelledby="user-sessions-title">
      <h2 id="user-sessions-title">Active sessions</h2>
      <Notice text={p.notice} />
      {p.sessions.length === 0 ? <p class="muted">No active sessions: this user is signed in nowhere.</p> : (
        <table>
          <caption class="visually-hidden">Sessions, the most recently active first</caption>
          <thead>
            <tr><th scope="col">Started</th><th scope="col">Last seen</th><th scope="col">Client</th><th scope="col">Address</th></tr>
          </thead>
          <tbody>
            {p.sessions.map((s) => (
              <tr>
                <td><When iso={s.created_at} />{s.current ? <> <strong>(this session)</strong></> : ''}</td>
                <td><When iso={s.last_activity} /></td>
                <td safe>{clientWords(s)}</td>
                <td safe>{s.ip_address ?? 'Unknown'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {others.length === 0 ? '' : p.confirm ? <EndSessionsForm {...p} /> : (
        <p>
          <a class="button secondary" href={`${url}/sessions/end`} hx-get={`${url}/sessions/end`} hx-target="#user-sessions"
            hx-swap="outerHTML">{endWords(p.self)}</a>
        </p>
      )}
    </section>
  )
}

export interface UserView extends SessionsView {
  user: NavUser
  flash?: Flash
  /** A refused action, in words. */
  problem?: string
}

const ActionForm = (p: { action: string; label: string; kind?: 'danger' | 'secondary' }) => (
  <form class="inline" action={p.action} method="post">
    <button type="submit" class={p.kind} safe>{p.label}</button>
  </form>
)

export const UserPage = (p: UserView) => {
  const a = p.account
  const url = userUrl(p.base, a.id)
  return (
    <AdminLayout base={p.base} title={a.name || a.email} user={p.user} area="/users" flash={p.flash}>
      <p class="admin-crumbs"><a href={usersUrl(p.base)}>All users</a></p>
      <h1 safe>{a.name || a.email}</h1>
      <dl class="facts" id="user-facts">
        <dt>Email</dt><dd safe>{a.email}</dd>
        <dt>Role</dt><dd safe>{roleWords(a.role)}</dd>
        <dt>Email address</dt><dd>{verifiedWords(a)}</dd>
        <dt>Two-factor sign-in</dt><dd>{twoFactorWords(a)}</dd>
        <dt>Account</dt><dd>{a.disabled ? 'Disabled: sign-in is refused' : 'Active'}</dd>
        <dt>Created</dt><dd><When iso={a.created_at} /></dd>
        <dt>Last sign-in</dt><dd>{a.last_login ? <When iso={a.last_login} /> : 'Never'}</dd>
        <dt>API calls</dt><dd safe>{String(a.api_calls)}</dd>
      </dl>
      <section id="user-actions" aria-labelledby="user-actions-title">
        <h2 id="user-actions-title">Account actions</h2>
        <Problem text={p.problem} />
        <div class="actions">
          {a.email_verified ? '' : <ActionForm action={`${url}/verify`} label="Verify email" />}
          {p.self ? '' : a.disabled
            ? <ActionForm action={`${url}/enable`} label="Enable account" />
            : <ActionForm action={`${url}/disable`} label="Disable account" kind="danger" />}
        </div>
        {a.email_verified ? <p class="muted">The email address is verified.</p> : (
          <p class="muted">Verifying marks the address as confirmed without the emailed link.</p>
        )}
        {p.self
          ? <p class="muted">You cannot disable your own account: you would be locked out at once. Another admin can.</p>
          : a.disabled ? '' : <p class="muted">Disabling refuses every sign-in and ends all of the user's sessions at once.</p>}
      </section>
      <SessionsSection {...p} />
    </AdminLayout>
  )
}

/** The confirm step as a page, where the link lands without JavaScript. */
export const EndSessionsPage = (p: UserView) => (
  <AdminLayout base={p.base} title="End sessions" user={p.user} area="/users">
    <p class="admin-crumbs"><a href={userUrl(p.base, p.account.id)} safe>{`Back to ${p.account.name || p.account.email}`}</a></p>
    <h1>{endWords(p.self)}</h1>
    <EndSessionsForm {...p} />
  </AdminLayout>
)

// Spec 3, User administration, User account states and POST /api/admin/settings/registration, through the
// real app on each database target: the admin list and detail objects, verify / disable / enable with their
// effects on login and on live sessions, the audit entries, the registration switch, and the admin-only guard.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { INT4_MAX } from '../src/core/schema'
import { API_CALLS_FLUSH_MS } from '../plugins/clinical/guard'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  CLINICAL_PASSWORD, MOBILE, WEB, flushAudit, freshIp, insertUser, signIn, uniqueEmail, userWithSession, withCookie, type SignedIn,
} from './support/clinical'
import { waitFor } from './support/wait'

setDefaultTimeout(30_000)

const LIST_FIELDS = ['id', 'name', 'email', 'role', 'email_verified', 'totp_enabled', 'disabled', 'created_at'].sort()
const DETAIL_FIELDS = [...LIST_FIELDS, 'api_calls', 'last_login'].sort()

interface AdminUserBody {
  id: number; name: string; email: string; role: string; email_verified: boolean; totp_enabled: boolean
  disabled: boolean; created_at: string; api_calls?: number; last_login?: string | null
}

for (const target of databaseTargets()) {
  describe(`clinical user administration [${target}]`, () => {
    let t: TestApp
    let admin: SignedIn & { email: string }

    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await userWithSession(t, 'admin')
    })
    afterAll(() => t.close())

    /** Requests of one test: its own client address, so no test meets another's rate limits. */
    const client = (ip = freshIp()) => ({
      get: (path: string, token = admin.token) => t.get(path, { token, ip, headers: MOBILE }),
      post: (path: string, body?: unknown, token = admin.token) => t.post(path, body, { token, ip, headers: MOBILE }),
      ip,
    })

    const auditRows = async (action: string, targetUserId: number) => {
      await flushAudit(t)
      const rows = await t.db.sql<{ user_id: number | null; details: string }>`
        select user_id, details from clinical.audit_log where action = ${action} order by id`
      return rows.filter((r) => (JSON.parse(r.details) as { targetUserId?: number }).targetUserId === targetUserId)
    }

    const loginStatus = async (email: string, password = CLINICAL_PASSWORD) => {
      const res = await t.post('/api/auth/login', { email, password }, { headers: MOBILE, ip: freshIp() })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }

    describe('admin only', () => {
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/api/admin/users'],
        ['GET', '/api/admin/users/1'],
        ['POST', '/api/admin/users/1/verify'],
        ['POST', '/api/admin/users/1/disable'],
        ['POST', '/api/admin/users/1/enable'],
        ['POST', '/api/admin/settings/registration', { enabled: true }],
      ]

      it('every route answers 401 without a token, and 403 to a user or a moderator', async () => {
        const api = client()
        const user = await userWithSession(t, 'user')
        const moderator = await userWithSession(t, 'moderator')
        for (const [method, path, body] of routes) {
          const call = (token?: string) => method === 'GET'
            ? t.get(path, { token, ip: api.ip, headers: MOBILE })
            : t.post(path, body, { token, ip: api.ip, headers: MOBILE })
          const anonymous = await call()
          expect(anonymous.status, `${method} ${path}`).toBe(401)
          for (const who of [user, moderator]) {
            const res = await call(who.token)
            expect(res.status, `${method} ${path} as ${who.user.role}`).toBe(403)
            expect(await res.json()).toMatchObject({ success: false, error: expect.any(String) })
          }
        }
        // nothing changed: the registration switch is still at its default
        const [row] = await t.db.sql`select value from clinical.app_config where key = 'registration_enabled'`
        expect(row).toBeUndefined()
      })
    })

    describe('GET /api/admin/users', () => {
      it('lists every user with exactly the admin list fields, newest first, no password hash', async () => {
        const api = client()
        const older = uniqueEmail('list-older')
        const newer = uniqueEmail('list-newer')
        const olderId = await insertUser(t, { email: older, name: 'Older', verified: false })
        const newerId = await insertUser(t, { email: newer, name: 'Newer', role: 'moderator', disabled: true })
        const res = await api.get('/api/admin/users')
        expect(res.status).toBe(200)
        const body = (await res.json()) as { success: boolean; users: AdminUserBody[] }
        expect(body.success).toBe(true)
        const [count] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.users`
        expect(body.users).toHaveLength(count!.n)
        for (const u of body.users) {
          expect(Object.keys(u).sort()).toEqual(LIST_FIELDS)
          expect(Number.isNaN(Date.parse(u.created_at))).toBe(false)
        }
        for (let i = 1; i < body.users.length; i++) {
          const [a, b] = [body.users[i - 1]!, body.users[i]!]
          const [ta, tb] = [Date.parse(a.created_at), Date.parse(b.created_at)]
          expect(ta > tb || (ta === tb && a.id > b.id)).toBe(true)
        }
        const ids = body.users.map((u) => u.id)
        expect(ids.indexOf(newerId)).toBeLessThan(ids.indexOf(olderId))
        expect(body.users.find((u) => u.id === olderId)).toEqual({
          id: olderId, name: 'Older', email: older, role: 'user', email_verified: false, totp_enabled: false, disabled: false,
          created_at: expect.any(String),
        })
        expect(body.users.find((u) => u.id === newerId)).toMatchObject({ role: 'moderator', email_verified: true, disabled: true })
        expect(JSON.stringify(body)).not.toMatch(/argon2|password/i)
      })
    })

    describe('GET /api/admin/users/:id', () => {
      it('answers the detail object: the list fields plus api_calls (a number) and last_login (null before any sign-in)', async () => {
        const api = client()
        const email = uniqueEmail('detail')
        const id = await insertUser(t, { email, name: 'Detail' })
        const res = await api.get(`/api/admin/users/${id}`)
        expect(res.status).toBe(200)
        const body = (await res.json()) as { success: boolean; user: AdminUserBody }
        expect(body.success).toBe(true)
        expect(Object.keys(body.user).sort()).toEqual(DETAIL_FIELDS)
        expect(body.user).toMatchObject({ id, name: 'Detail', email, role: 'user', disabled: false, api_calls: 0, last_login: null })
      })

      it('last_login is the ISO time of the latest sign-in', async () => {
        const api = client()
        const email = uniqueEmail('last-login')
        const id = await insertUser(t, { email })
        const before = Date.now()
        await signIn(t, email, { ip: freshIp() })
        const { user } = (await (await api.get(`/api/admin/users/${id}`)).json()) as { user: AdminUserBody }
        expect(user.last_login).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
        expect(Date.parse(user.last_login!)).toBeGreaterThanOrEqual(before - 1000)
        expect(Date.parse(user.last_login!)).toBeLessThanOrEqual(Date.now() + 1000)
      })

      it(`api_calls counts the user's authenticated calls once they are stored (every ${API_CALLS_FLUSH_MS / 1000} s)`, async () => {
        const api = client()
        const user = await userWithSession(t, 'user')
        for (let i = 0; i < 3; i++) expect((await t.get('/api/auth/me', { token: user.token, ip: api.ip, headers: MOBILE })).status).toBe(200)
        const counted = await waitFor(async () => {
          await Bun.sleep(250) // a few polls, far below the 200-per-minute limit of the address
          const { user: u } = (await (await api.get(`/api/admin/users/${user.user.id}`)).json()) as { user: AdminUserBody }
          return u.api_calls === 3 && u
        }, 'api_calls to reach 3', API_CALLS_FLUSH_MS + 5_000)
        expect(counted.api_calls).toBe(3)
      }, API_CALLS_FLUSH_MS + 15_000)

      it('404 for an unknown id; 400 for an id that is not a positive integer (never 500)', async () => {
        const api = client()
        const [max] = await t.db.sql<{ id: number }>`select coalesce(max(id), 0)::int as id from clinical.users`
        const unknown = await api.get(`/api/admin/users/${max!.id + 1000}`)
        expect(unknown.status).toBe(404)
        expect(await unknown.json()).toMatchObject({ success: false, error: expect.any(String) })
        expect((await api.get(`/api/admin/users/${INT4_MAX}`)).status).toBe(404)
        for (const bad of ['abc', '1.5', '0', '-3', String(INT4_MAX + 1), '1e3x']) {
          const res = await api.get(`/api/admin/users/${bad}`)
          expect(res.status, bad).toBe(400)
          expect(await res.json()).toMatchObject({ success: false, error: expect.any(String) })
        }
      })
    })

    describe('POST /api/admin/users/:id/verify', () => {
      it('verifies an unverified account without the email link: login then succeeds; audited with admin and target ids', async () => {
        const api = client()
        const email = uniqueEmail('to-verify')
        const id = await insertUser(t, { email, verified: false })
        expect(await loginStatus(email)).toMatchObject({ status: 403, body: { error: 'Email not verified' } })
        const res = await api.post(`/api/admin/users/${id}/verify`)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })
        expect((await loginStatus(email)).status).toBe(200)
        const { user } = (await (await api.get(`/api/admin/users/${id}`)).json()) as { user: AdminUserBody }
        expect(user.email_verified).toBe(true)
        const rows = await auditRows('user_verified', id)
        expect(rows).toHaveLength(1)
        expect(rows[0]!.user_id).toBe(admin.user.id)
        expect(JSON.parse(rows[0]!.details)).toMatchObject({ adminId: admin.user.id, targetUserId: id })
      })

      it('404 for an unknown user, with no audit entry', async () => {
        const api = client()
        const res = await api.post(`/api/admin/users/${INT4_MAX}/verify`)
        expect(res.status).toBe(404)
        expect(await auditRows('user_verified', INT4_MAX)).toHaveLength(0)
      })
    })

    describe('POST /api/admin/users/:id/disable and /enable', () => {
      it('disabling ends every session at once and login answers 401 Invalid credentials, exactly as a wrong password does', async () => {
        const api = client()
        const email = uniqueEmail('to-disable')
        const id = await insertUser(t, { email })
        const mobile = await signIn(t, email, { ip: freshIp() })
        const web = await signIn(t, email, { ip: freshIp(), headers: WEB })
        expect((await t.get('/api/auth/me', { ip: api.ip, headers: withCookie(web.cookie!) })).status).toBe(200)

        const res = await api.post(`/api/admin/users/${id}/disable`)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })

        const [sessions] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.user_sessions where user_id = ${id}`
        expect(sessions!.n).toBe(0)
        expect((await t.get('/api/auth/me', { token: mobile.token, ip: api.ip, headers: MOBILE })).status).toBe(401)
        expect((await t.get('/api/auth/me', { ip: api.ip, headers: withCookie(web.cookie!) })).status).toBe(401)

        const disabled = await loginStatus(email)
        const wrongPassword = await loginStatus(email, 'not-the-password-1')
        expect(disabled.status).toBe(401)
        expect(disabled.body).toEqual(wrongPassword.body)
        expect(disabled.body.error).toBe('Invalid credentials')

        const { user } = (await (await api.get(`/api/admin/users/${id}`)).json()) as { user: AdminUserBody }
        expect(user.disabled).toBe(true)
        const rows = await auditRows('user_disabled', id)
        expect(rows).toHaveLength(1)
        expect(rows[0]!.user_id).toBe(admin.user.id)
        expect(JSON.parse(rows[0]!.details)).toMatchObject({ adminId: admin.user.id, targetUserId: id })
      })

      it('enabling lets the user sign in again; the sessions ended by disabling stay ended', async () => {
        const api = client()
        const email = uniqueEmail('to-enable')
        const id = await insertUser(t, { email })
        const old = await signIn(t, email, { ip: freshIp() })
        expect((await api.post(`/api/admin/users/${id}/disable`)).status).toBe(200)
        expect((await loginStatus(email)).status).toBe(401)

        const res = await api.post(`/api/admin/users/${id}/enable`)
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true })
        const fresh = await signIn(t, email, { ip: freshIp() })
        expect((await t.get('/api/auth/me', { token: fresh.token, ip: api.ip, headers: MOBILE })).status).toBe(200)
        const stale = await t.get('/api/auth/me', { token: old.token, ip: api.ip, headers: MOBILE })
        expect(stale.status).toBe(401)
        expect(await stale.json()).toMatchObject({ error: 'Session revoked' })

        const { user } = (await (await api.get(`/api/admin/users/${id}`)).json()) as { user: AdminUserBody }
        expect(user.disabled).toBe(false)
        const rows = await auditRows('user_enabled', id)
        expect(rows).toHaveLength(1)
        expect(JSON.parse(rows[0]!.details)).toMatchObject({ adminId: admin.user.id, targetUserId: id })
      })

      it('an admin cannot disable themself (400): their account and session stay as they were', async () => {
        const api = client()
        const res = await api.post(`/api/admin/users/${admin.user.id}/disable`)
        expect(res.status).toBe(400)
        expect(await res.json()).toMatchObject({ success: false, error: expect.any(String) })
        const [row] = await t.db.sql<{ disabled: boolean }>`select disabled from clinical.users where id = ${admin.user.id}`
        expect(row!.disabled).toBe(false)
        expect((await api.get('/api/admin/users')).status).toBe(200)
        expect(await auditRows('user_disabled', admin.user.id)).toHaveLength(0)
      })

      it('another admin can be disabled, and loses admin access at once', async () => {
        const api = client()
        const other = await userWithSession(t, 'admin')
        expect((await api.get('/api/admin/users', other.token)).status).toBe(200)
        expect((await api.post(`/api/admin/users/${other.user.id}/disable`)).status).toBe(200)
        expect((await api.get('/api/admin/users', other.token)).status).toBe(401)
      })

      it('404 for an unknown user on disable and enable', async () => {
        const api = client()
        for (const action of ['disable', 'enable']) {
          const res = await api.post(`/api/admin/users/${INT4_MAX}/${action}`)
          expect(res.status, action).toBe(404)
          expect(await res.json()).toMatchObject({ success: false, error: expect.any(String) })
        }
        expect((await api.post('/api/admin/users/abc/disable')).status).toBe(400)
      })
    })

    describe('POST /api/admin/settings/registration', () => {
      it('off: registration-status says so and register answers 403; on again: register works', async () => {
        const api = client()
        const off = await api.post('/api/admin/settings/registration', { enabled: false })
        expect(off.status).toBe(200)
        expect(await off.json()).toEqual({ success: true })
        const [stored] = await t.db.sql<{ value: string }>`select value from clinical.app_config where key = 'registration_enabled'`
        expect(stored!.value).toBe('false')
        expect(await (await api.get('/api/auth/registration-status', '')).json()).toMatchObject({ registrationEnabled: false })

        const refusedEmail = uniqueEmail('while-off')
        const refused = await t.post('/api/auth/register', { name: 'Late', email: refusedEmail, password: CLINICAL_PASSWORD }, { ip: freshIp(), headers: MOBILE })
        expect(refused.status).toBe(403)
        expect(await refused.json()).toMatchObject({ success: false, error: expect.any(String) })
        const [none] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.users where email = ${refusedEmail}`
        expect(none!.n).toBe(0)

        expect((await api.post('/api/admin/settings/registration', { enabled: true })).status).toBe(200)
        const [again] = await t.db.sql<{ value: string }>`select value from clinical.app_config where key = 'registration_enabled'`
        expect(again!.value).toBe('true')
        expect(await (await api.get('/api/auth/registration-status', '')).json()).toMatchObject({ registrationEnabled: true })
        const ok = await t.post('/api/auth/register', { name: 'Late', email: refusedEmail, password: CLINICAL_PASSWORD }, { ip: freshIp(), headers: MOBILE })
        expect(ok.status).toBe(200)

        await flushAudit(t)
        const rows = await t.db.sql<{ user_id: number; details: string }>`select user_id, details from clinical.audit_log where action = 'config_changed' order by id`
        expect(rows.slice(-2).map((r) => JSON.parse(r.details).value)).toEqual(['false', 'true'])
        expect(rows.at(-1)!.user_id).toBe(admin.user.id)
      })

      it('400 when enabled is missing or not a boolean; the setting does not change', async () => {
        const api = client()
        for (const body of [{}, { enabled: 'false' }, { enabled: 0 }, { enabled: null }]) {
          const res = await api.post('/api/admin/settings/registration', body)
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(await res.json()).toMatchObject({ success: false, error: expect.any(String) })
        }
        expect(await (await api.get('/api/auth/registration-status', '')).json()).toMatchObject({ registrationEnabled: true })
      })
    })
  })
}

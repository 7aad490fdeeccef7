// Spec 1, Admin: users, Admin: settings, roles (admin > moderator > user): through the real app.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { PASSWORD_MIN } from '../plugins/quiz/models/accounts'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { linkIn, startSmtpSink, type SmtpSink } from './support/smtp'
import {
  API, PASSWORD, createAccount, expectDetail, expectUserResponse, expectValidation, freshIp, isVerifyMail, login, loginToken,
  register, registerAdmin, settle, uniqueEmail, userCount, userRow, type Account, type UserBody,
} from './support/quiz'


// Each file boots real apps (and the first one migrates the PGlite template); password hashing is deliberately slow.
setDefaultTimeout(30_000)

for (const target of databaseTargets()) {
  describe(`quiz admin: users [${target}]`, () => {
    let t: TestApp
    let admin: Account
    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await registerAdmin(t)
    })
    afterAll(() => t.close())

    it('POST /api/admin/users creates an auto-verified user (role user) who can log in at once', async () => {
      const email = uniqueEmail('created')
      const res = await t.post(`${API}/admin/users`, { email, password: PASSWORD, name: 'Created User' }, { token: admin.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as UserBody
      expectUserResponse(body, { email, name: 'Created User', role: 'user' })
      expect((await userRow(t, email))?.id).toBe(body.id)
      const token = await loginToken(t, email)
      const me = (await (await t.get(`${API}/auth/me`, { token })).json()) as UserBody
      expectUserResponse(me, { id: body.id, email, role: 'user' })
    })

    it('POST /api/admin/users with an existing email in any letter case is 409 and adds no user', async () => {
      const email = uniqueEmail('dup')
      expect((await t.post(`${API}/admin/users`, { email, password: PASSWORD, name: 'One' }, { token: admin.token })).status).toBe(200)
      await expectDetail(await t.post(`${API}/admin/users`, { email: email.toUpperCase(), password: PASSWORD, name: 'Two' }, { token: admin.token }), 409)
      await expectDetail(await t.post(`${API}/admin/users`, { email: admin.email, password: PASSWORD, name: 'Three' }, { token: admin.token }), 409)
      expect(await userCount(t, email)).toBe(1)
    })

    it('POST /api/admin/users with a password under 8 characters is 422 and adds no user', async () => {
      const email = uniqueEmail('short')
      await expectValidation(await t.post(`${API}/admin/users`, { email, password: 'p'.repeat(PASSWORD_MIN - 1), name: 'Short' }, { token: admin.token }), 'password')
      expect(await userRow(t, email)).toBeNull()
    })

    it('GET /api/admin/users lists every user as UserResponse', async () => {
      const created = await createAccount(t, admin, 'user', 'listed')
      const res = await t.get(`${API}/admin/users`, { token: admin.token })
      expect(res.status).toBe(200)
      const list = (await res.json()) as UserBody[]
      expect(Array.isArray(list)).toBe(true)
      for (const u of list) expectUserResponse(u, {})
      expect(list.find((u) => u.id === admin.id)).toMatchObject({ email: admin.email, role: 'admin' })
      expect(list.find((u) => u.id === created.id)).toMatchObject({ email: created.email, role: 'user' })
      const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.users`
      expect(list).toHaveLength(row!.n)
    })

    it('PUT /api/admin/users/{id}/role sets moderator, admin or user and returns the UserResponse', async () => {
      const account = await createAccount(t, admin, 'user', 'promoted')
      for (const role of ['moderator', 'admin', 'user'] as const) {
        const res = await t.put(`${API}/admin/users/${account.id}/role`, { role }, { token: admin.token })
        expect(res.status).toBe(200)
        expectUserResponse((await res.json()) as UserBody, { id: account.id, email: account.email, role })
        expect((await userRow(t, account.email))?.role).toBe(role)
        const token = await loginToken(t, account.email)
        expect(((await (await t.get(`${API}/auth/me`, { token })).json()) as UserBody).role).toBe(role)
      }
    })

    it('a promoted admin can use the admin routes; a demoted one no longer can', async () => {
      const account = await createAccount(t, admin, 'admin', 'second-admin')
      expect((await t.get(`${API}/admin/users`, { token: account.token })).status).toBe(200)
      expect((await t.put(`${API}/admin/users/${account.id}/role`, { role: 'user' }, { token: admin.token })).status).toBe(200)
      // the token issued while they were admin must not keep admin rights (401 if role changes end tokens, else 403)
      const stale = await t.get(`${API}/admin/users`, { token: account.token })
      expect([401, 403]).toContain(stale.status)
      const token = await loginToken(t, account.email)
      await expectDetail(await t.get(`${API}/admin/users`, { token }), 403)
    })

    it('changing one\'s own role is 400 and the role stays', async () => {
      await expectDetail(await t.put(`${API}/admin/users/${admin.id}/role`, { role: 'user' }, { token: admin.token }), 400)
      expect((await userRow(t, admin.email))?.role).toBe('admin')
      expect((await t.get(`${API}/admin/users`, { token: admin.token })).status).toBe(200)
    })

    it('an invalid role is 422 and an unknown user id is 404', async () => {
      const account = await createAccount(t, admin, 'user', 'bad-role')
      await expectValidation(await t.put(`${API}/admin/users/${account.id}/role`, { role: 'superuser' }, { token: admin.token }), 'role')
      expect((await userRow(t, account.email))?.role).toBe('user')
      await expectDetail(await t.put(`${API}/admin/users/987654321/role`, { role: 'moderator' }, { token: admin.token }), 404)
    })

    it('PUT /api/admin/users/{id}/unthrottle sets and clears the unthrottled flag', async () => {
      const account = await createAccount(t, admin, 'user', 'unthrottled')
      const on = await t.put(`${API}/admin/users/${account.id}/unthrottle`, { unthrottled: true }, { token: admin.token })
      expect(on.status).toBe(200)
      const onBody = (await on.json()) as UserBody
      expectUserResponse(onBody, { id: account.id, email: account.email, role: 'user' })
      expect(onBody.unthrottled).toBe(true)
      const listed = ((await (await t.get(`${API}/admin/users`, { token: admin.token })).json()) as UserBody[]).find((u) => u.id === account.id)
      if (listed && 'unthrottled' in listed) expect(listed.unthrottled).toBe(true)
      const off = await t.put(`${API}/admin/users/${account.id}/unthrottle`, { unthrottled: false }, { token: admin.token })
      expect(off.status).toBe(200)
      expect(((await off.json()) as UserBody).unthrottled).toBe(false)
      await expectDetail(await t.put(`${API}/admin/users/987654321/unthrottle`, { unthrottled: true }, { token: admin.token }), 404)
    })

    it('DELETE /api/admin/users/{id} is 204 and removes the user and their data: token 401, login 401, settings gone', async () => {
      const account = await createAccount(t, admin, 'user', 'deleted')
      const marker = `marker-${crypto.randomUUID()}`
      expect((await t.put(`${API}/auth/me/settings`, { marker }, { token: account.token })).status).toBe(200)
      const stored = async () => {
        const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from core.kv where value::text like ${'%' + marker + '%'}`
        return row!.n
      }
      expect(await stored()).toBe(1)
      const res = await t.delete(`${API}/admin/users/${account.id}`, { token: admin.token })
      expect(res.status).toBe(204)
      expect(await res.text()).toBe('')
      expect(await userRow(t, account.email)).toBeNull()
      await expectDetail(await t.get(`${API}/auth/me`, { token: account.token }), 401)
      await expectDetail(await login(t, account.email), 401)
      expect(await stored()).toBe(0)
      const list = (await (await t.get(`${API}/admin/users`, { token: admin.token })).json()) as UserBody[]
      expect(list.some((u) => u.id === account.id)).toBe(false)
      await expectDetail(await t.delete(`${API}/admin/users/${account.id}`, { token: admin.token }), 404)
    })

    it('deleting oneself is 400 and the admin stays', async () => {
      await expectDetail(await t.delete(`${API}/admin/users/${admin.id}`, { token: admin.token }), 400)
      expect((await userRow(t, admin.email))?.role).toBe('admin')
      expect((await t.get(`${API}/auth/me`, { token: admin.token })).status).toBe(200)
    })

    it('the admin user routes are Admin only: no token 401, a user 403, a moderator 403, and nothing changes', async () => {
      const user = await createAccount(t, admin, 'user', 'plain')
      const moderator = await createAccount(t, admin, 'moderator', 'mod')
      const victim = await createAccount(t, admin, 'user', 'victim')
      const attempts = (label: string): Array<{ method: string; path: string; body?: unknown; creates?: string }> => {
        const sneaky = uniqueEmail(`sneaky-${label}`)
        return [
          { method: 'GET', path: `${API}/admin/users` },
          { method: 'POST', path: `${API}/admin/users`, body: { email: sneaky, password: PASSWORD, name: 'Sneaky' }, creates: sneaky },
          { method: 'PUT', path: `${API}/admin/users/${victim.id}/role`, body: { role: 'admin' } },
          { method: 'PUT', path: `${API}/admin/users/${victim.id}/unthrottle`, body: { unthrottled: true } },
          { method: 'DELETE', path: `${API}/admin/users/${victim.id}` },
        ]
      }
      for (const [who, token, status] of [['anonymous', undefined, 401], ['user', user.token, 403], ['moderator', moderator.token, 403]] as const) {
        for (const a of attempts(who)) {
          const opts = { token, ip: freshIp() }
          const res = a.method === 'GET' ? await t.get(a.path, opts)
            : a.method === 'DELETE' ? await t.delete(a.path, opts)
            : a.method === 'POST' ? await t.post(a.path, a.body, opts)
            : await t.put(a.path, a.body, opts)
          if (res.status !== status) throw new Error(`${who} ${a.method} ${a.path}: expected ${status}, got ${res.status} ${await res.text()}`)
          expect(typeof ((await res.json()) as { detail: unknown }).detail).toBe('string')
          if (a.creates) expect(await userRow(t, a.creates)).toBeNull()
        }
      }
      expect((await userRow(t, victim.email))?.role).toBe('user')
      expect((await t.get(`${API}/auth/me`, { token: victim.token })).status).toBe(200)
    })
  })

  describe(`quiz admin: settings [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let sink: SmtpSink
    beforeAll(async () => {
      sink = await startSmtpSink()
      t = await startTestApp({ target, env: sink.env })
      admin = await registerAdmin(t)
    })
    afterAll(async () => {
      await t.close()
      await sink.close()
    })

    const getSettings = async () => {
      const res = await t.get(`${API}/admin/settings`, { token: admin.token })
      expect(res.status).toBe(200)
      return (await res.json()) as { registration_enabled: boolean; embedding_model: string }
    }
    const putSettings = (body: unknown, token = admin.token) => t.put(`${API}/admin/settings`, body, { token })
    const registerLater = (email: string) => register(t, email, { name: 'Later' })

    it('GET /api/admin/settings answers {registration_enabled: true, embedding_model} by default', async () => {
      const settings = await getSettings()
      expect(Object.keys(settings).sort()).toEqual(['embedding_model', 'registration_enabled'])
      expect(settings.registration_enabled).toBe(true)
      expect(typeof settings.embedding_model).toBe('string')
    })

    it('PUT /api/admin/settings answers {success: true, message} and GET reflects it', async () => {
      const before = await getSettings()
      const res = await putSettings({ registration_enabled: true, embedding_model: 'test-embedder-v2' })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { success: unknown; message: unknown }
      expect(body.success).toBe(true)
      expect(typeof body.message).toBe('string')
      expect(await getSettings()).toEqual({ registration_enabled: true, embedding_model: 'test-embedder-v2' })
      expect((await putSettings(before)).status).toBe(200)
      expect(await getSettings()).toEqual(before)
    })

    it('with registration disabled a later user\'s registration is 403 with no user and no mail; enabling it again lets them in', async () => {
      const { embedding_model } = await getSettings()
      expect((await putSettings({ registration_enabled: false, embedding_model })).status).toBe(200)
      try {
        expect((await getSettings()).registration_enabled).toBe(false)
        const email = uniqueEmail('blocked')
        await expectDetail(await registerLater(email), 403)
        expect(await userRow(t, email)).toBeNull()
        await settle()
        expect(sink.to(email)).toHaveLength(0)
      } finally {
        expect((await putSettings({ registration_enabled: true, embedding_model })).status).toBe(200)
      }
      const email = uniqueEmail('welcome')
      const res = await registerLater(email)
      expect(res.status).toBe(200)
      expect(((await res.json()) as { requires_verification: boolean }).requires_verification).toBe(true)
      expect((await userRow(t, email))?.role).toBe('user')
      const link = linkIn(await sink.waitFor(isVerifyMail(email)), '/quiz/verify-email')
      expect((await t.get(`${API}/auth/verify-email?token=${encodeURIComponent(link.token)}`)).status).toBe(200)
    })

    it('PUT /api/admin/settings with a non-boolean registration_enabled is 422 and changes nothing', async () => {
      const before = await getSettings()
      await expectValidation(await putSettings({ registration_enabled: 'sometimes', embedding_model: 'x' }), 'registration_enabled')
      expect(await getSettings()).toEqual(before)
    })

    it('the settings routes are Admin only: no token 401, a user or a moderator 403, and nothing changes', async () => {
      const user = await createAccount(t, admin, 'user', 'settings-user')
      const moderator = await createAccount(t, admin, 'moderator', 'settings-mod')
      const before = await getSettings()
      const change = { registration_enabled: !before.registration_enabled, embedding_model: 'hijacked-model' }
      await expectDetail(await t.get(`${API}/admin/settings`), 401)
      await expectDetail(await t.put(`${API}/admin/settings`, change), 401)
      for (const token of [user.token, moderator.token]) {
        await expectDetail(await t.get(`${API}/admin/settings`, { token }), 403)
        await expectDetail(await putSettings(change, token), 403)
      }
      expect(await getSettings()).toEqual(before)
    })
  })
}

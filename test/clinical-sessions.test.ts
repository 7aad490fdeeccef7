// Spec 2, Session and Token transport: every row of the Session state table, the web and mobile token
// lifetimes, Bearer before cookie, and the caller's own session list. The clock is injected, so idle limits and
// expiries are crossed by moving it, not by waiting.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { signToken } from '../src/auth/jwt'
import { sha256Hex } from '../src/core/crypto'
import {
  MOBILE_TOKEN_LIFETIME_S, SESSION_TOUCH_THROTTLE_MS, TOKEN_AUDIENCE, WEB_IDLE_LIMIT_MS, WEB_TOKEN_LIFETIME_S,
} from '../plugins/clinical/services/sessions'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { MOBILE, WEB, cookieValue, flushAudit, freshIp, insertUser, signIn, uniqueEmail, withCookie, type SignedIn } from './support/clinical'

const MINUTE = 60_000
const JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789'

interface SessionRow { client: string; ip_address: string | null; device_label: string | null; last_activity: Date | string }

describe.each(databaseTargets())('sessions (%s)', (target) => {
  let app: TestApp
  let clock = Date.parse('2026-03-02T08:00:00Z')
  const tick = (ms: number) => void (clock += ms)

  beforeAll(async () => {
    app = await startTestApp({ target, boot: { now: () => clock } })
  })
  afterAll(() => app.close())

  const sessionRow = async (token: string) =>
    (await app.db.sql<SessionRow>`select client, ip_address, device_label, last_activity from clinical.user_sessions where token_hash = ${sha256Hex(token)}`)[0] ?? null
  const lastActivity = async (token: string) => new Date((await sessionRow(token))!.last_activity).getTime()
  const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
  const newUser = async (role: 'user' | 'admin' = 'user') => {
    const email = uniqueEmail('session')
    const id = await insertUser(app, { email, role })
    return { email, id }
  }
  const webSignIn = (email: string) => signIn(app, email, { headers: { ...WEB, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0' }, ip: freshIp() })
  const mobileSignIn = (email: string) => signIn(app, email, { headers: { ...MOBILE, 'user-agent': 'okhttp/4.12.0' }, ip: freshIp() })
  const me = (s: SignedIn, transport: 'cookie' | 'bearer' = 'cookie') =>
    app.get('/api/auth/me', transport === 'cookie' ? { headers: withCookie(s.token) } : { token: s.token })

  it('login creates the session row keyed by the SHA-256 of the token, with address and device', async () => {
    const { email } = await newUser()
    const ip = freshIp()
    const s = await signIn(app, email, { headers: { ...WEB, 'user-agent': 'Mozilla/5.0 Test' }, ip })
    const row = await sessionRow(s.token)
    expect(row).toMatchObject({ client: 'web', ip_address: ip, device_label: 'Mozilla/5.0 Test' })
    expect(new Date(row!.last_activity).getTime()).toBe(clock)
    expect(s.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(claims(s.token).sid).toBe(s.sessionId)
    // No row is stored under the token itself.
    expect((await app.db.sql`select 1 from clinical.user_sessions where token_hash = ${s.token}`).length).toBe(0)
  })

  it('web tokens live 30 days and mobile tokens 365 days; an expired token is refused', async () => {
    const { email } = await newUser()
    const web = await webSignIn(email)
    const mobile = await mobileSignIn(email)
    const web_ = claims(web.token) as { exp: number; iat: number }
    const mobile_ = claims(mobile.token) as { exp: number; iat: number }
    expect(web_.exp - web_.iat).toBe(WEB_TOKEN_LIFETIME_S)
    expect(mobile_.exp - mobile_.iat).toBe(MOBILE_TOKEN_LIFETIME_S)
    expect(web.cookie).toBe(web.token)
    expect(mobile.cookie).toBeNull()

    // Keep the web session active (a write every 20 hours) until its token expires at 30 days.
    for (let elapsed = 0; elapsed < WEB_TOKEN_LIFETIME_S * 1000 - 20 * 3600_000; elapsed += 20 * 3600_000) {
      tick(20 * 3600_000)
      const res = await app.request('/api/auth/sessions/00000000-0000-0000-0000-000000000000', { method: 'DELETE', headers: withCookie(web.token) })
      expect(res.status).toBe(404) // authenticated (the throttle touched the session), nothing to delete
    }
    tick(20 * 3600_000)
    const expired = await me(web)
    expect(expired.status).toBe(401)
    expect(((await expired.json()) as { error: string }).error).toBe('Invalid or expired token')
    expect(cookieValue(expired)).toBe('') // the cookie is cleared
    expect((await me(mobile, 'bearer')).status).toBe(200) // 365 days, no idle rule
  })

  it('a web session idle over 24 hours ends: 401 idleTimeout, cookie cleared, row deleted, audit with idle minutes', async () => {
    const { email, id } = await newUser()
    const s = await webSignIn(email)
    tick(WEB_IDLE_LIMIT_MS - MINUTE)
    expect((await me(s)).status).toBe(200) // just under the limit
    tick(2 * MINUTE) // the read did not extend the session: idle is now 24 h + 1 min
    const res = await me(s)
    expect(res.status).toBe(401)
    const body = (await res.json()) as { success: boolean; idleTimeout?: boolean; error: string }
    expect(body).toMatchObject({ success: false, idleTimeout: true })
    expect(cookieValue(res)).toBe('')
    expect(res.headers.getSetCookie().find((c) => c.startsWith('app_auth='))).toContain('Max-Age=0')
    expect(await sessionRow(s.token)).toBeNull()

    await flushAudit(app)
    const [entry] = await app.db.sql<{ details: string }>`
      select details from clinical.audit_log where action = 'session_idle_timeout' and user_id = ${id}`
    expect(JSON.parse(entry!.details)).toMatchObject({ idleMinutes: 24 * 60 + 1 })
    // Signing in again works: the user's only session was the idle one.
    expect((await me(await webSignIn(email))).status).toBe(200)
  })

  it('the idle limit applies to a web session whichever way its token travels', async () => {
    const { email } = await newUser()
    const s = await webSignIn(email)
    tick(WEB_IDLE_LIMIT_MS + MINUTE)
    const res = await me(s, 'bearer')
    expect(res.status).toBe(401)
    expect(((await res.json()) as { idleTimeout?: boolean }).idleTimeout).toBe(true)
  })

  it('mobile sessions are exempt from the idle check', async () => {
    const { email } = await newUser()
    const s = await mobileSignIn(email)
    tick(10 * WEB_IDLE_LIMIT_MS)
    expect((await me(s, 'bearer')).status).toBe(200)
    expect(await sessionRow(s.token)).not.toBeNull()
  })

  it('a write after more than 10 idle minutes updates last_activity and re-issues the cookie for 30 days', async () => {
    const { email } = await newUser()
    const s = await webSignIn(email)
    const start = await lastActivity(s.token)
    const probe = () => app.request('/api/auth/sessions/00000000-0000-0000-0000-000000000000', { method: 'DELETE', headers: withCookie(s.token) })

    tick(SESSION_TOUCH_THROTTLE_MS - MINUTE)
    let res = await probe() // within the throttle: no write, no cookie
    expect(res.status).toBe(404)
    expect(cookieValue(res)).toBeNull()
    expect(await lastActivity(s.token)).toBe(start)

    tick(2 * MINUTE)
    res = await probe()
    expect(res.status).toBe(404)
    expect(await lastActivity(s.token)).toBe(clock)
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('app_auth='))!
    expect(cookie).toContain(`app_auth=${s.token}`)
    expect(cookie).toContain(`Max-Age=${WEB_TOKEN_LIFETIME_S}`)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Lax')

    // The extension is what keeps an active web session alive past 24 hours from sign-in.
    tick(WEB_IDLE_LIMIT_MS - MINUTE)
    expect((await me(s)).status).toBe(200)
  })

  it('a write by Bearer extends the session but sets no cookie', async () => {
    const { email } = await newUser()
    const s = await mobileSignIn(email)
    tick(SESSION_TOUCH_THROTTLE_MS + MINUTE)
    const res = await app.request('/api/auth/sessions/00000000-0000-0000-0000-000000000000', { method: 'DELETE', token: s.token })
    expect(res.status).toBe(404)
    expect(await lastActivity(s.token)).toBe(clock)
    expect(cookieValue(res)).toBeNull()
  })

  it('GET and HEAD never extend a session', async () => {
    const { email } = await newUser()
    const s = await webSignIn(email)
    const start = await lastActivity(s.token)
    tick(SESSION_TOUCH_THROTTLE_MS + MINUTE)
    const get = await me(s)
    expect(get.status).toBe(200)
    expect(cookieValue(get)).toBeNull()
    const head = await app.request('/api/auth/me', { method: 'HEAD', headers: withCookie(s.token) })
    expect(head.status).toBeLessThan(500)
    expect(cookieValue(head)).toBeNull()
    expect(await lastActivity(s.token)).toBe(start)
  })

  it('logout deletes the row and clears the cookie; the token is then refused', async () => {
    const { email } = await newUser()
    const s = await webSignIn(email)
    const other = await mobileSignIn(email)
    const res = await app.post('/api/auth/logout', undefined, { headers: withCookie(s.token) })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    expect(cookieValue(res)).toBe('')
    expect(await sessionRow(s.token)).toBeNull()
    const after = await me(s)
    expect(after.status).toBe(401)
    expect(((await after.json()) as { error: string }).error).toBe('Session revoked')
    expect((await me(other, 'bearer')).status).toBe(200) // the other device stays signed in
  })

  it('a missing row while the user has other sessions answers 401 Session revoked', async () => {
    const { email } = await newUser()
    const phone = await mobileSignIn(email)
    const laptop = await webSignIn(email)
    const list = await app.get('/api/auth/sessions', { headers: withCookie(laptop.token) })
    const sessions = ((await list.json()) as { sessions: Array<{ id: string; current: boolean; client: string }> }).sessions
    expect(sessions).toHaveLength(2)
    expect(sessions.find((x) => x.current)!.id).toBe(laptop.sessionId)
    // The laptop ends the phone's session.
    const end = await app.request(`/api/auth/sessions/${phone.sessionId}`, { method: 'DELETE', headers: withCookie(laptop.token) })
    expect(end.status).toBe(200)
    const res = await me(phone, 'bearer')
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ success: false, error: 'Session revoked' })
  })

  it('a token without a session id (from before the session table) passes while its user has no sessions', async () => {
    const { email, id } = await newUser()
    const legacy = await signToken(JWT_SECRET, TOKEN_AUDIENCE, { sub: String(id) }, WEB_TOKEN_LIFETIME_S, clock)
    expect((await app.get('/api/auth/me', { token: legacy })).status).toBe(200)
    // Once the user has a session, the legacy token is revoked.
    await mobileSignIn(email)
    const res = await app.get('/api/auth/me', { token: legacy })
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: string }).error).toBe('Session revoked')
  })

  it('reads the Bearer header before the cookie; an empty Bearer falls through to the cookie', async () => {
    const a = await newUser()
    const b = await newUser()
    const sa = await webSignIn(a.email)
    const sb = await mobileSignIn(b.email)
    const both = await app.get('/api/auth/me', { token: sb.token, headers: withCookie(sa.token) })
    expect(((await both.json()) as { user: { id: number } }).user.id).toBe(b.id)
    const empty = await app.get('/api/auth/me', { headers: { ...withCookie(sa.token), authorization: 'Bearer ' } })
    expect(empty.status).toBe(200)
    expect(((await empty.json()) as { user: { id: number } }).user.id).toBe(a.id)
    const badBearer = await app.get('/api/auth/me', { token: 'not-a-jwt', headers: withCookie(sa.token) })
    expect(badBearer.status).toBe(401) // a Bearer value is authoritative: no fallback to the cookie
  })

  it('the session list shows only the caller\'s sessions, and a stranger\'s session id is 404', async () => {
    const a = await newUser()
    const b = await newUser()
    const sa = await mobileSignIn(a.email)
    const sb = await mobileSignIn(b.email)
    const list = (await (await app.get('/api/auth/sessions', { token: sa.token })).json()) as { sessions: Array<{ id: string }> }
    expect(list.sessions.map((x) => x.id)).toEqual([sa.sessionId])
    const res = await app.request(`/api/auth/sessions/${sb.sessionId}`, { method: 'DELETE', token: sa.token })
    expect(res.status).toBe(404)
    expect((await me(sb, 'bearer')).status).toBe(200)
    const bad = await app.request('/api/auth/sessions/1%27%20or%201=1', { method: 'DELETE', token: sa.token })
    expect(bad.status).toBe(404)
  })

  it('a disabled account\'s tokens stop working at once', async () => {
    const { email, id } = await newUser()
    const s = await mobileSignIn(email)
    await app.db.sql`update clinical.users set disabled = true where id = ${id}`
    const res = await me(s, 'bearer')
    expect(res.status).toBe(401)
  })

  it('the expiry sweep removes expired rows only', async () => {
    const { sweepSessions } = await import('../plugins/clinical/services/sessions')
    const { email } = await newUser()
    const s = await webSignIn(email)
    const keep = await mobileSignIn(email)
    tick(WEB_TOKEN_LIFETIME_S * 1000 + MINUTE)
    expect(await sweepSessions(app.booted.core)).toBeGreaterThanOrEqual(1)
    expect(await sessionRow(s.token)).toBeNull()
    expect(await sessionRow(keep.token)).not.toBeNull()
  })
})

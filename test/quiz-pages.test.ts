// The quiz service's browser pages: every form works without JavaScript (plain posts, 303 redirects,
// 422 re-renders with messages) and htmx requests get the fragment they swap.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { PASSWORD_MIN } from '../plugins/quiz/models/accounts'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { PASS_TOKEN, startChallengeServer, type ChallengeServer } from './support/challenge'
import { userCount } from './support/quiz'

const html = { accept: 'text/html' }
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

for (const target of databaseTargets()) {
  describe(`quiz pages [${target}]`, () => {
    let t: TestApp
    let adminCookie = ''
    beforeAll(async () => {
      t = await startTestApp({ target })
      const res = await t.form('/quiz/register', { name: 'Page Admin', email: 'page-admin@example.test', password: 'correct horse' })
      expect(res.status).toBe(303)
      adminCookie = cookieOf(res)
    })
    afterAll(() => t.close())

    it('the first registration through the page signs in as admin with an httpOnly, SameSite=Lax cookie', async () => {
      expect(adminCookie).toStartWith('quiz_auth=')
      const page = await t.get('/quiz/', { headers: { ...html, cookie: adminCookie } })
      expect(page.status).toBe(200)
      const body = await page.text()
      expect(body).toContain('My account')
      expect(body).toContain('page-admin@example.test')
      expect(body).toContain('admin')
    })

    it('the cookie carries HttpOnly, SameSite=Lax and the quiz path', async () => {
      const res = await t.form('/quiz/login', { email: 'page-admin@example.test', password: 'correct horse' })
      const setCookie = res.headers.get('set-cookie') ?? ''
      expect(setCookie).toContain('HttpOnly')
      expect(setCookie).toContain('SameSite=Lax')
      expect(setCookie).toContain('Path=/quiz')
    })

    it('signed out, / redirects to the sign-in page, which loads htmx from the app itself', async () => {
      const res = await t.get('/quiz/', { headers: html })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/login')
      const login = await (await t.get('/quiz/login', { headers: html })).text()
      expect(login).toContain('<form class="stack" action="/quiz/login" method="post">')
      expect(login).toContain('src="/quiz/static/htmx.min.js"')
      expect(login).not.toContain('unpkg')
      const htmx = await t.get('/quiz/static/htmx.min.js')
      expect(htmx.status).toBe(200)
      expect(await htmx.text()).toContain('htmx')
    })

    it('a wrong password re-renders the form with status 422, the message and the email kept', async () => {
      const res = await t.form('/quiz/login', { email: 'page-admin@example.test', password: 'wrong password' }, { ip: '10.9.0.1' })
      expect(res.status).toBe(422)
      const body = await res.text()
      expect(body).toContain('Incorrect email or password')
      expect(body).toContain('value="page-admin@example.test"')
      expect(res.headers.get('set-cookie')).toBeNull()
    })

    it('register form rules show per field: short password, bad email', async () => {
      const res = await t.form('/quiz/register', { name: 'X', email: 'not-an-email', password: 'x'.repeat(PASSWORD_MIN - 1) })
      expect(res.status).toBe(422)
      const body = await res.text()
      expect(body).toContain('Enter a valid email address')
      expect(body).toContain(`Must be at least ${PASSWORD_MIN} characters`)
      expect(await userCount(t, 'not-an-email')).toBe(0)
    })

    it('user text is escaped in text children; attribute values stay quoted', async () => {
      const res = await t.form('/quiz/register', { name: '<script>alert(1)</script>', email: 'x"onfocus="alert(1)@example.test', password: 'short' })
      const form = await res.text()
      expect(form).toContain('value="x&#34;onfocus=&#34;alert(1)@example.test"')
      const renamed = await t.form('/quiz/account/profile', { name: '<img src=x onerror=alert(1)>' }, { headers: { cookie: adminCookie } })
      expect(renamed.status).toBe(303)
      const page = await (await t.get('/quiz/', { headers: { ...html, cookie: adminCookie } })).text()
      expect(page).toContain('<span class="muted" id="nav-name">&lt;img src=x onerror=alert(1)&gt;</span>')
      expect(page).not.toContain('><img src=x')
    })

    it('a later registration through the page asks to check the email', async () => {
      const res = await t.form('/quiz/register', { name: 'Second', email: 'page-second@example.test', password: 'correct horse' })
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('Check your email')
      expect(res.headers.get('set-cookie')).toBeNull()
    })

    it('renaming works as a plain post (303) and as an htmx fragment that swaps itself', async () => {
      const plain = await t.form('/quiz/account/profile', { name: 'Renamed Admin' }, { headers: { cookie: adminCookie } })
      expect(plain.status).toBe(303)
      const fragment = await t.form('/quiz/account/profile', { name: 'Again Renamed' }, { headers: { cookie: adminCookie, 'hx-request': 'true' } })
      expect(fragment.status).toBe(200)
      const body = await fragment.text()
      expect(body).toContain('<form id="profile"')
      expect(body).toContain('<span class="muted" id="nav-name" hx-swap-oob="true">Again Renamed</span>')
      expect(body).toContain('value="Again Renamed"')
      expect(body).not.toContain('<html')
      const empty = await t.form('/quiz/account/profile', { name: '' }, { headers: { cookie: adminCookie, 'hx-request': 'true' } })
      expect(empty.status).toBe(422)
      expect(await empty.text()).toContain('field-error')
    })

    it('changing the password through the page re-issues the cookie; the old cookie stops working', async () => {
      const login = await t.form('/quiz/register', { name: 'Pw', email: 'pw-page@example.test', password: 'first password' })
      expect(login.status).toBe(200) // later user: verification needed; use the admin instead
      const wrong = await t.form('/quiz/account/password', { current_password: 'nope nope', new_password: 'second password' }, { headers: { cookie: adminCookie } })
      expect(wrong.status).toBe(422)
      expect(await wrong.text()).toContain('Current password is incorrect')
      const ok = await t.form('/quiz/account/password', { current_password: 'correct horse', new_password: 'second password' }, { headers: { cookie: adminCookie } })
      expect(ok.status).toBe(303)
      const fresh = cookieOf(ok)
      expect(fresh).toStartWith('quiz_auth=')
      expect((await t.get('/quiz/', { headers: { ...html, cookie: adminCookie } })).status).toBe(303)
      expect((await t.get('/quiz/', { headers: { ...html, cookie: fresh } })).status).toBe(200)
      adminCookie = fresh
    })

    it('cookie-authenticated posts from another origin are refused and change nothing', async () => {
      const res = await t.form('/quiz/account/profile', { name: 'Evil' }, { headers: { cookie: adminCookie, origin: 'https://evil.example' } })
      expect(res.status).toBe(403)
      const [row] = await t.db.sql<{ name: string }>`select name from quiz.users where email = 'page-admin@example.test'`
      expect(row!.name).not.toBe('Evil')
    })

    it('signing out clears the cookie and shows a notice', async () => {
      const res = await t.form('/quiz/logout', {}, { headers: { cookie: adminCookie } })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/login?notice=signed-out')
      expect(res.headers.get('set-cookie')).toContain('Max-Age=0')
      expect(await (await t.get('/quiz/login?notice=signed-out', { headers: html })).text()).toContain('You have signed out.')
    })

    it('a signed-out token stops working at once, as the page cookie and as a Bearer; other sessions go on', async () => {
      const signIn = async () => cookieOf(await t.form('/quiz/login', { email: 'page-admin@example.test', password: 'second password' }))
      const [leaving, staying] = [await signIn(), await signIn()]
      const token = leaving.split('=')[1]!
      expect((await t.get('/quiz/api/auth/me', { token })).status).toBe(200)
      expect((await t.form('/quiz/logout', {}, { headers: { cookie: leaving } })).status).toBe(303)
      expect((await t.get('/quiz/api/auth/me', { token })).status).toBe(401)
      const page = await t.get('/quiz/', { headers: { ...html, cookie: leaving } })
      expect(page.status).toBe(303)
      expect(page.headers.get('location')).toBe('/quiz/login')
      expect((await t.get('/quiz/api/auth/me', { token: staying.split('=')[1]! })).status).toBe(200)
    })

    it('an invalid verification link shows an HTML page with status 400', async () => {
      const res = await t.get('/quiz/verify-email?token=nonsense', { headers: html })
      expect(res.status).toBe(400)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(await res.text()).toContain('This link does not work')
    })

    it('a used or invalid verification link offers a new one right there', async () => {
      const page = await (await t.get('/quiz/verify-email?token=nonsense', { headers: html })).text()
      expect(page).toContain('action="/quiz/resend-verification"')
      expect(page).not.toContain('from the sign-in page')
    })

    it('signing in with an unconfirmed address offers the resend right there, which answers as the API does', async () => {
      const email = 'page-unverified@example.test'
      expect((await t.form('/quiz/register', { name: 'Unverified', email, password: 'correct horse' })).status).toBe(200)
      const refused = await t.form('/quiz/login', { email, password: 'correct horse' })
      expect(refused.status).toBe(422)
      const page = await refused.text()
      expect(page).toContain('Email not verified')
      expect(page).toContain('action="/quiz/resend-verification"')
      expect(page).toContain(`value="${email}"`)
      const resent = await t.form('/quiz/resend-verification', { email })
      expect(resent.status).toBe(200)
      expect(await resent.text()).toContain('Check your email')
    })

    it('the forgot-password page links back to sign-in', async () => {
      expect(await (await t.get('/quiz/forgot-password', { headers: html })).text()).toContain('href="/quiz/login">Back to sign in</a>')
    })

    it('a reset with an invalid token re-renders the form with the message', async () => {
      const res = await t.form('/quiz/reset-password', { token: 'nonsense', new_password: 'long enough password' })
      expect(res.status).toBe(422)
      expect(await res.text()).toContain('Invalid or expired token')
    })
  })
}

describe('quiz pages with the bot challenge on', () => {
  let t: TestApp
  let verifier: ChallengeServer
  beforeAll(async () => {
    verifier = startChallengeServer()
    t = await startTestApp({ env: { ...verifier.env, CHALLENGE_SITE_KEY: 'site-key-123' } })
  })
  afterAll(async () => {
    await t.close()
    await verifier.close()
  })

  it('forms show the widget with the site key; a post without its token is refused, with it the account is made', async () => {
    const page = await (await t.get('/quiz/register', { headers: html })).text()
    expect(page).toContain('<div class="cf-turnstile" data-sitekey="site-key-123"></div>')
    const fields = { name: 'Challenged', email: 'challenged@example.test', password: 'correct horse' }
    const refused = await t.form('/quiz/register', fields)
    expect(refused.status).toBe(422)
    expect(await refused.text()).toContain('Bot challenge required')
    expect(await userCount(t, fields.email)).toBe(0)
    const passed = await t.form('/quiz/register', { ...fields, 'cf-turnstile-response': PASS_TOKEN })
    expect(passed.status).toBe(303)
    expect(await userCount(t, fields.email)).toBe(1)
  })
})

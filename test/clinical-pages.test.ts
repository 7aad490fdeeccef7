// The clinical service's browser pages at `/`: every form works without JavaScript (plain posts, 303 redirects,
// 422 re-renders with the message), a page sign-in is a web session in the app_auth cookie, two-factor setup and
// sign-in work end to end, and sign-out ends the session the API sees.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { generate } from 'otplib'
import { RESEND_VERIFICATION_RULE } from '../plugins/clinical/services/accounts'
import { setConfigValues, OIDC_KEYS } from '../plugins/clinical/services/app-config'
import { TOTP_PERIOD_S } from '../plugins/clinical/services/two-factor'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, cookieValue, freshIp, insertUser, uniqueEmail } from './support/clinical'
import { linkIn, startSmtpSink, type SmtpSink } from './support/smtp'

const html = { accept: 'text/html' }
const ADMIN_EMAIL = 'pages-admin@example.test'
const ADMIN_PASSWORD = 'Pages-admin-password-7'

/** The `app_auth=...` pair a response sets, for a Cookie header. */
const cookieOf = (res: Response) => `app_auth=${cookieValue(res) ?? ''}`
const setCookieHeader = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('app_auth=')) ?? ''
const hiddenValue = (page: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? ''
const codeAt = (secret: string, epochS: number) => generate({ secret, epoch: epochS })

describe.each(databaseTargets())('clinical pages [%s]', (target) => {
  let t: TestApp
  let smtp: SmtpSink
  let adminCookie = ''

  /** Signs in through the page form; returns the Cookie header value. */
  const pageSignIn = async (email: string, password = CLINICAL_PASSWORD) => {
    const res = await t.form('/login', { email, password }, { ip: freshIp() })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/workspace')
    return cookieOf(res)
  }
  const signedInUser = async (tag: string, name = 'Page User') => {
    const email = uniqueEmail(tag)
    await insertUser(t, { email, name })
    return { email, cookie: await pageSignIn(email) }
  }

  beforeAll(async () => {
    smtp = await startSmtpSink()
    t = await startTestApp({ target, env: smtp.env })
    // Mail sending is configured: the first account, too, confirms its address, then signs in.
    const res = await t.form('/register', { name: 'Pages Admin', email: ADMIN_EMAIL, password: ADMIN_PASSWORD }, { ip: freshIp() })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Check your email')
    const link = linkIn(await smtp.waitFor((m) => m.to.includes(ADMIN_EMAIL)), '/api/auth/verify-email')
    expect((await t.get(link.pathAndQuery, { headers: html })).status).toBe(200)
    adminCookie = await pageSignIn(ADMIN_EMAIL, ADMIN_PASSWORD)
  })
  afterAll(async () => {
    await t.close()
    await smtp.close()
  })

  it('the first registration through the page makes the admin, who signs in with an httpOnly, SameSite=Lax web cookie', async () => {
    expect(adminCookie).not.toBe('app_auth=')
    const page = await t.get('/account', { headers: { ...html, cookie: adminCookie } })
    expect(page.status).toBe(200)
    const body = await page.text()
    expect(body).toContain('My account')
    expect(body).toContain(ADMIN_EMAIL)
    expect(body).toContain('<dd>admin</dd>')
    expect(body).toContain('<form action="/logout" method="post" data-app-logout>')
    const [row] = await t.db.sql<{ client: string }>`
      select s.client from clinical.user_sessions s join clinical.users u on u.id = s.user_id where u.email = ${ADMIN_EMAIL}`
    expect(row!.client).toBe('web')
  })

  it('signed out, / is the sign-in page: the form, the links, htmx and clinical.js from the app itself', async () => {
    const res = await t.get('/', { headers: html })
    expect(res.status).toBe(200)
    const body = await res.text()
    expect(body).toContain('<form class="stack" action="/login" method="post">')
    expect(body).toContain('autocomplete="current-password"')
    expect(body).toContain('href="/forgot-password"')
    expect(body).toContain('href="/register"')
    expect(body).toContain('<script src="/static/htmx.min.js" defer></script>')
    expect(body).toContain('<script src="/static/clinical.js" defer></script>')
    expect(body).not.toContain('/api/auth/oidc')
    const script = await t.get('/static/clinical.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
    const source = await script.text()
    expect(source).toContain("new BroadcastChannel('app-auth')")
    expect(source).toContain("type: 'logout'")
  })

  it('signed in, / goes to the workspace', async () => {
    const res = await t.get('/', { headers: { ...html, cookie: adminCookie } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/workspace')
  })

  it('with single sign-on on, the page links to it with the configured label; local auth off leaves an administrator sign-in', async () => {
    await setConfigValues(t.booted.core, {
      'oidc.enabled': 'true', 'oidc.issuer': 'https://idp.example.test', 'oidc.client_id': 'clinical', 'oidc.button_label': 'Sign in with <Hospital> ID',
    })
    try {
      const body = await (await t.get('/', { headers: html })).text()
      expect(body).toContain('<a class="button" href="/api/auth/oidc" hx-boost="false">Sign in with &lt;Hospital&gt; ID</a>')
      expect(body).toContain('action="/login"')
      expect(body).not.toContain('Administrator sign-in')

      await setConfigValues(t.booted.core, { 'oidc.disable_local_auth': 'true' })
      const reduced = await (await t.get('/', { headers: html })).text()
      expect(reduced).toContain('<details class="admin-sign-in"><summary>Administrator sign-in</summary>')
      expect(reduced).not.toContain('href="/register"')
      const register = await (await t.get('/register', { headers: html })).text()
      expect(register).toContain('Registration is closed')
    } finally {
      await setConfigValues(t.booted.core, Object.fromEntries(OIDC_KEYS.map((k) => [k, null])))
    }
  })

  it('the single sign-on callback errors show as readable messages; unknown values are not echoed', async () => {
    const unverified = await (await t.get('/?error=email_unverified', { headers: html })).text()
    expect(unverified).toContain('has not confirmed your email address')
    const mismatch = await (await t.get('/?error=sub_mismatch', { headers: html })).text()
    expect(mismatch).toContain('already linked to a different single sign-on identity')
    const other = await (await t.get('/?error=%3Cb%3Eowned%3C%2Fb%3E', { headers: html })).text()
    expect(other).toContain('Single sign-on did not complete')
    expect(other).not.toContain('owned')
  })

  it('a page sign-in sets the app_auth cookie (HttpOnly, SameSite=Lax, Path=/) and redirects to the account', async () => {
    const email = uniqueEmail('page-login')
    await insertUser(t, { email })
    const res = await t.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/workspace')
    const header = setCookieHeader(res)
    expect(header).toContain('HttpOnly')
    expect(header).toContain('SameSite=Lax')
    expect(header).toContain('Path=/')
    expect(header).toContain(`Max-Age=${30 * 24 * 3600}`)
    const me = await t.get('/api/auth/me', { headers: { cookie: cookieOf(res) } })
    expect(me.status).toBe(200)
  })

  it('a wrong password re-renders the form with status 422, Invalid credentials and the email kept', async () => {
    const res = await t.form('/login', { email: ADMIN_EMAIL, password: 'not the password' }, { ip: freshIp() })
    expect(res.status).toBe(422)
    const body = await res.text()
    expect(body).toContain('Invalid credentials')
    expect(body).toContain(`value="${ADMIN_EMAIL}"`)
    expect(setCookieHeader(res)).toBe('')
    const unknown = await t.form('/login', { email: 'nobody@example.test', password: 'whatever-pass' }, { ip: freshIp() })
    expect(unknown.status).toBe(422)
    expect(await unknown.text()).toContain('Invalid credentials')
    const empty = await t.form('/login', { email: '', password: '' }, { ip: freshIp() })
    expect(empty.status).toBe(422)
    expect(await empty.text()).toContain('field-error')
  })

  it('the login limit counts page sign-ins per client address', async () => {
    const ip = freshIp()
    let last: Response | null = null
    for (let i = 0; i < 11; i++) last = await t.form('/login', { email: ADMIN_EMAIL, password: 'wrong wrong' }, { ip })
    expect(last!.status).toBe(422)
    expect(last!.headers.get('retry-after')).toBeTruthy()
    expect(await last!.text()).toContain('Too many login attempts')
  })

  it('a later registration asks to check the email, and the verification mail arrives', async () => {
    const email = uniqueEmail('page-register')
    const res = await t.form('/register', { name: 'Later User', email, password: 'Later-user-password-3' }, { ip: freshIp() })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('Check your email')
    expect(setCookieHeader(res)).toBe('')
    const mail = await smtp.waitFor((m) => m.to.includes(email))
    expect(mail.text).toContain('/api/auth/verify-email?token=')
    const unverified = await t.form('/login', { email, password: 'Later-user-password-3' }, { ip: freshIp() })
    expect(unverified.status).toBe(422)
    expect(await unverified.text()).toContain('Email not verified')
  })

  it('signing in with an unconfirmed address offers a new verification email right there, which arrives and works', async () => {
    const email = uniqueEmail('page-unverified')
    await insertUser(t, { email, verified: false })
    const refused = await t.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
    expect(refused.status).toBe(422)
    const page = await refused.text()
    expect(page).toContain('Email not verified')
    expect(page).toContain('<form class="stack" action="/resend-verification" method="post">')
    expect(page).toContain(`id="resend-email" name="email" type="email" value="${email}"`)
    // only after the right password: a wrong one is Invalid credentials, with no resend form
    const wrong = await (await t.form('/login', { email, password: 'not the password' }, { ip: freshIp() })).text()
    expect(wrong).toContain('Invalid credentials')
    expect(wrong).not.toContain('action="/resend-verification"')

    const resent = await t.form('/resend-verification', { email }, { ip: freshIp() })
    expect(resent.status).toBe(200)
    const answer = await resent.text()
    expect(answer).toContain('Check your email')
    const api = await t.post('/api/auth/resend-verification', { email: uniqueEmail('page-unknown') }, { ip: freshIp() })
    expect(answer).toContain(((await api.json()) as { message: string }).message)
    const link = linkIn(await smtp.waitFor((m) => m.to.includes(email)), '/api/auth/verify-email')
    expect((await t.get(link.pathAndQuery, { headers: html })).status).toBe(200)
    await pageSignIn(email)
  })

  it('a used verification link offers a new one on its page, not only a way back to sign in', async () => {
    const email = uniqueEmail('page-used-link')
    expect((await t.form('/register', { name: 'Used Link', email, password: 'Used-link-password-5' }, { ip: freshIp() })).status).toBe(200)
    const link = linkIn(await smtp.waitFor((m) => m.to.includes(email)), '/api/auth/verify-email')
    expect((await t.get(link.pathAndQuery, { headers: html })).status).toBe(200)
    const used = await t.get(link.pathAndQuery, { headers: html })
    expect(used.status).toBe(400)
    const page = await used.text()
    expect(page).toContain('<form class="stack" action="/resend-verification" method="post">')
    expect(page).not.toContain('Sign in to request a new one')
  })

  it('the resend page works without JavaScript: its own address, 422 without an email, 429 as a message, other sites refused', async () => {
    const page = await t.get('/resend-verification', { headers: html })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('action="/resend-verification"')
    const empty = await t.form('/resend-verification', { email: '' }, { ip: freshIp() })
    expect(empty.status).toBe(422)
    expect(await empty.text()).toContain('field-error')
    const ip = freshIp()
    let last: Response | null = null
    for (let i = 0; i <= RESEND_VERIFICATION_RULE.limit; i++) last = await t.form('/resend-verification', { email: uniqueEmail('page-resend-limit') }, { ip })
    expect(last!.status).toBe(422)
    expect(last!.headers.get('retry-after')).toBeTruthy()
    expect(await last!.text()).toContain('Too many verification emails requested')
    expect((await t.form('/resend-verification', { email: ADMIN_EMAIL }, { headers: { origin: 'https://evil.example' } })).status).toBe(403)
  })

  it('register form rules show per field', async () => {
    const res = await t.form('/register', { name: '', email: 'not-an-email', password: 'short' }, { ip: freshIp() })
    expect(res.status).toBe(422)
    const body = await res.text()
    expect(body).toContain('Enter a valid email address')
    expect(body).toContain('Must be at least 8 characters')
    const taken = await t.form('/register', { name: 'Again', email: ADMIN_EMAIL, password: 'Some-password-123' }, { ip: freshIp() })
    expect(taken.status).toBe(422)
    expect(await taken.text()).toContain('Email already registered')
  })

  it('forgot password answers vaguely; the mailed link opens the reset page, which sets the password and warns when weak', async () => {
    const email = uniqueEmail('page-reset')
    await insertUser(t, { email })
    const unknown = await t.form('/forgot-password', { email: 'nobody-here@example.test' }, { ip: freshIp() })
    const known = await t.form('/forgot-password', { email }, { ip: freshIp() })
    expect(unknown.status).toBe(200)
    expect(known.status).toBe(200)
    const [a, b] = [await unknown.text(), await known.text()]
    expect(b).toContain('If an account exists for that address')
    expect(a).toContain('If an account exists for that address')

    const mail = await smtp.waitFor((m) => m.to.includes(email) && m.text.includes('/reset-password?token='))
    const link = linkIn(mail, '/reset-password')
    const form = await (await t.get(link.pathAndQuery, { headers: html })).text()
    expect(form).toContain(`action="/reset-password?token=${link.token}"`)
    expect(hiddenValue(form, 'token')).toBe(link.token)

    const differ = await t.form('/reset-password', { token: link.token, newPassword: 'New-password-42', confirmPassword: 'New-password-43' })
    expect(differ.status).toBe(422)
    expect(await differ.text()).toContain('The two passwords are not the same')

    const done = await t.form('/reset-password', { token: link.token, newPassword: 'password', confirmPassword: 'password' })
    expect(done.status).toBe(200)
    const body = await done.text()
    expect(body).toContain('Password changed')
    expect(body).toContain('one of the most common passwords')
    expect(body).toContain('href="/"')
    await pageSignIn(email, 'password')

    const again = await t.form('/reset-password', { token: link.token, newPassword: 'Another-pass-1', confirmPassword: 'Another-pass-1' })
    expect(again.status).toBe(422)
    expect(await again.text()).toContain('This link is invalid or has expired')
    const noToken = await t.get('/reset-password', { headers: html })
    expect(noToken.status).toBe(400)
  })

  it('the account page needs a session: plain requests go to sign-in, htmx requests get 401', async () => {
    const plain = await t.get('/account', { headers: html })
    expect(plain.status).toBe(303)
    expect(plain.headers.get('location')).toBe('/')
    const htmx = await t.get('/account', { headers: { ...html, 'hx-request': 'true', 'hx-boosted': 'true' } })
    expect(htmx.status).toBe(401)
    const post = await t.form('/account/password', { currentPassword: 'x', newPassword: 'y'.repeat(10), confirmPassword: 'y'.repeat(10) })
    expect(post.status).toBe(303)
    const dead = await t.get('/account', { headers: { ...html, cookie: 'app_auth=not-a-token' } })
    expect(dead.status).toBe(303)
    expect(setCookieHeader(dead)).toContain('Max-Age=0')
  })

  it('changing the password through the page keeps this session and ends the others', async () => {
    const { email, cookie } = await signedInUser('page-password')
    const other = await pageSignIn(email)
    const wrong = await t.form('/account/password', { currentPassword: 'nope', newPassword: 'Second-password-9', confirmPassword: 'Second-password-9' }, { headers: { cookie } })
    expect(wrong.status).toBe(422)
    expect(await wrong.text()).toContain('Current password is incorrect')
    const ok = await t.form('/account/password', { currentPassword: CLINICAL_PASSWORD, newPassword: 'Second-password-9', confirmPassword: 'Second-password-9' }, { headers: { cookie } })
    expect(ok.status).toBe(303)
    expect(ok.headers.get('location')).toBe('/account?notice=password-changed')
    const page = await (await t.get('/account?notice=password-changed', { headers: { ...html, cookie } })).text()
    expect(page).toContain('Your password has been changed')
    expect((await t.get('/account', { headers: { ...html, cookie: other } })).status).toBe(303)
  })

  it('two-factor: setup shows a QR code and the secret, enable shows 10 backup codes, sign-in then asks for a code', async () => {
    const { email, cookie } = await signedInUser('page-2fa')
    const account = await (await t.get('/account', { headers: { ...html, cookie } })).text()
    expect(account).toContain('action="/account/2fa/setup"')

    const setup = await t.form('/account/2fa/setup', {}, { headers: { cookie } })
    expect(setup.status).toBe(200)
    const setupPage = await setup.text()
    expect(setupPage).toMatch(/<img class="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]+"/)
    const secret = hiddenValue(setupPage, 'secret')
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/)
    expect(setupPage).toContain('id="totp-secret"')
    expect(setupPage).toContain('inputmode="numeric"')
    expect(setupPage).toContain('autocomplete="one-time-code"')

    const qrCode = hiddenValue(setupPage, 'qrCode')
    const wrong = await t.form('/account/2fa/enable', { secret, qrCode, code: '000000' }, { headers: { cookie } })
    expect(wrong.status).toBe(422)
    const wrongPage = await wrong.text()
    expect(wrongPage).toContain('Invalid two-factor code')
    expect(wrongPage).toContain('<img class="qr" src="data:image/png;base64,')

    const now = Math.floor(Date.now() / 1000)
    const enabled = await t.form('/account/2fa/enable', { secret, qrCode, code: await codeAt(secret, now) }, { headers: { cookie } })
    expect(enabled.status).toBe(200)
    const codesPage = await enabled.text()
    const backupCodes = [...codesPage.matchAll(/<li><code>([A-Z0-9]{5}-[A-Z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!)
    expect(backupCodes).toHaveLength(10)
    const after = await (await t.get('/account', { headers: { ...html, cookie } })).text()
    expect(after).toContain('Backup codes left: 10 of 10.')
    expect(after).toContain('action="/account/2fa/disable"')

    // Sign-in now has a second step.
    const first = await t.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
    expect(first.status).toBe(200)
    expect(setCookieHeader(first)).toBe('')
    const step = await first.text()
    expect(step).toContain('action="/login/2fa"')
    expect(step).toContain('inputmode="numeric"')
    expect(step).toContain('autocomplete="one-time-code"')
    expect(step).toContain('backup codes')
    const pendingToken = hiddenValue(step, 'pendingToken')
    expect(pendingToken).not.toBe('')

    const bad = await t.form('/login/2fa', { pendingToken, code: '123456' }, { ip: freshIp() })
    expect(bad.status).toBe(422)
    expect(await bad.text()).toContain('Invalid two-factor code')

    const withBackup = await t.form('/login/2fa', { pendingToken, code: backupCodes[0]!.toLowerCase() }, { ip: freshIp() })
    expect(withBackup.status).toBe(303)
    expect(withBackup.headers.get('location')).toBe('/workspace')
    expect(setCookieHeader(withBackup)).toContain('HttpOnly')
    const backupCookie = cookieOf(withBackup)
    expect((await t.get('/api/auth/me', { headers: { cookie: backupCookie } })).status).toBe(200)
    const reused = await t.form('/login/2fa', { pendingToken, code: backupCodes[0]! }, { ip: freshIp() })
    expect(reused.status).toBe(422)

    // The code of the next step (the enable used this one).
    const withTotp = await t.form('/login/2fa', { pendingToken, code: await codeAt(secret, now + TOTP_PERIOD_S) }, { ip: freshIp() })
    expect(withTotp.status).toBe(303)

    const expired = await t.form('/login/2fa', { pendingToken: 'not-a-token', code: '123456' }, { ip: freshIp() })
    expect(expired.status).toBe(422)
    expect(await expired.text()).toContain('The sign-in expired')

    // Regenerate and turn off, both behind the password.
    const count = await (await t.get('/account', { headers: { ...html, cookie } })).text()
    expect(count).toContain('Backup codes left: 9 of 10.')
    const badRegen = await t.form('/account/2fa/backup-codes', { password: 'wrong' }, { headers: { cookie } })
    expect(badRegen.status).toBe(422)
    expect(await badRegen.text()).toContain('Password is incorrect')
    const regen = await t.form('/account/2fa/backup-codes', { password: CLINICAL_PASSWORD }, { headers: { cookie } })
    expect(regen.status).toBe(200)
    const fresh = [...(await regen.text()).matchAll(/<li><code>([A-Z0-9]{5}-[A-Z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!)
    expect(fresh).toHaveLength(10)
    expect(fresh).not.toContain(backupCodes[1]!)

    const off = await t.form('/account/2fa/disable', { password: CLINICAL_PASSWORD }, { headers: { cookie } })
    expect(off.status).toBe(303)
    expect(off.headers.get('location')).toBe('/account?notice=2fa-off')
    await pageSignIn(email)
  })

  it('sign-out ends the session and clears the cookie; the old token gets 401 from the API', async () => {
    const { cookie } = await signedInUser('page-logout')
    expect((await t.get('/api/auth/me', { headers: { cookie } })).status).toBe(200)
    const res = await t.form('/logout', {}, { headers: { cookie } })
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/?signed-out=1')
    expect(setCookieHeader(res)).toContain('Max-Age=0')
    expect((await t.get('/api/auth/me', { headers: { cookie } })).status).toBe(401)
    const token = cookie.slice('app_auth='.length)
    expect((await t.get('/api/auth/me', { token })).status).toBe(401)
    expect(await (await t.get('/?signed-out=1', { headers: html })).text()).toContain('You have signed out.')
  })

  it('cookie-authenticated posts from another origin are refused and change nothing', async () => {
    const { email, cookie } = await signedInUser('page-origin')
    const evil = { cookie, origin: 'https://evil.example' }
    const res = await t.form('/account/password', { currentPassword: CLINICAL_PASSWORD, newPassword: 'Evil-password-1', confirmPassword: 'Evil-password-1' }, { headers: evil })
    expect(res.status).toBe(403)
    expect((await t.form('/logout', {}, { headers: evil })).status).toBe(403)
    expect((await t.form('/login', { email, password: CLINICAL_PASSWORD }, { headers: { origin: 'https://evil.example' } })).status).toBe(403)
    expect((await t.get('/api/auth/me', { headers: { cookie } })).status).toBe(200)
    await pageSignIn(email)
    const same = await t.form('/logout', {}, { headers: { cookie, origin: 'http://localhost' } })
    expect(same.status).toBe(303)
  })

  it('user text is escaped: a name with a script tag shows as text', async () => {
    const { cookie } = await signedInUser('page-escape', '<script>alert(1)</script>')
    const body = await (await t.get('/account', { headers: { ...html, cookie } })).text()
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(body).not.toContain('<script>alert(1)')
    const form = await t.form('/register', { name: '<b>x</b>', email: 'x"onfocus="alert(1)@example.test', password: 'short' }, { ip: freshIp() })
    const text = await form.text()
    expect(text).toContain('value="x&#34;onfocus=&#34;alert(1)@example.test"')
    // Inside a quoted attribute only the quote (and &) can break out; `<` is inert there.
    expect(text).toContain('value="<b>x</b>"')
  })
})

describe('clinical pages under CLINICAL_BASE_PATH', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ env: { CLINICAL_BASE_PATH: '/clinic' } })
  })
  afterAll(() => t.close())

  it('links, forms, assets, redirects and the cookie path follow the base path', async () => {
    const page = await (await t.get('/clinic/', { headers: html })).text()
    expect(page).toContain('action="/clinic/login"')
    expect(page).toContain('<script src="/clinic/static/clinical.js" defer></script>')
    expect((await t.get('/clinic/static/clinical.js')).status).toBe(200)
    const registered = await t.form('/clinic/register', { name: 'Base Admin', email: 'base-admin@example.test', password: ADMIN_PASSWORD }, { ip: freshIp() })
    expect(registered.status).toBe(303)
    expect(registered.headers.get('location')).toBe('/clinic/account')
    expect(setCookieHeader(registered)).toContain('Path=/clinic')
    const account = await (await t.get('/clinic/account', { headers: { ...html, cookie: cookieOf(registered) } })).text()
    expect(account).toContain('<form action="/clinic/logout" method="post" data-app-logout>')
    const out = await t.form('/clinic/logout', {}, { headers: { cookie: cookieOf(registered) } })
    expect(out.headers.get('location')).toBe('/clinic/?signed-out=1')
  })
})

// The clinical service's browser pages under its base path: sign in (password, single sign-on, the two-factor
// step), register, forgot and reset password, "my account" with two-factor setup, and sign out.
// Forms post to these routes with or without JavaScript. A page sign-in starts a web session: the same JWT and
// session row the API uses, in the httpOnly SameSite=Lax app_auth cookie, with the web idle limit.
import { Elysia, t } from 'elysia'
import { rememberSocketAddress } from '../../../src/auth/client-address'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { formErrors, formFields, html, redirect, sameOrigin } from '../../../views/page'
import { ChangePasswordBody, CODE_MAX, LoginBody, RegisterBody, ResetPasswordBody } from '../models/accounts'
import * as accounts from '../services/accounts'
import { oidcSettings, registrationEnabled } from '../services/app-config'
import { authCookie, authenticate, requestToken, type Authenticated } from '../services/sessions'
import * as twoFactor from '../services/two-factor'
import { AccountPage, BackupCodesPage, TwoFactorSetupPage, type AccountErrors } from '../views/account'
import { MessagePage, type Errors, type Flash } from '../views/common'
import { pageContext } from '../../../views/layout'
import { ForgotPasswordPage, RegisterPage, ResetPasswordPage, SignInPage, TwoFactorStepPage, type SignInOptions } from '../views/sign-in'

const FormBody = t.Optional(t.Record(t.String(), t.Unknown()))
const hidden = { hide: true }
const LoginForm = t.Object({ email: LoginBody.properties.email, password: LoginBody.properties.password })
const PasswordForm = t.Object({ password: LoginBody.properties.password })
const CodeForm = t.Object({ code: t.String({ minLength: 1, maxLength: CODE_MAX }) })
const PASSWORDS_DIFFER = 'The two passwords are not the same'

/**
 * What the single sign-on callback reports in `?error=`, as the sign-in page says it. Unknown values get the
 * general line: the page never repeats the query's text.
 */
const TRY_AGAIN = 'The single sign-on attempt expired or was interrupted. Start it again.'
const UNAVAILABLE = 'Single sign-on is unavailable right now: the identity provider could not be reached. Try again later.'
const MISCONFIGURED = 'Single sign-on is not set up correctly (its identity provider address is refused). Contact your administrator.'
export const SSO_ERRORS: Record<string, string> = {
  email_unverified: 'Single sign-on could not link your account: your identity provider has not confirmed your email address.',
  sub_mismatch: 'This account is already linked to a different single sign-on identity. Contact your administrator.',
  email_missing: 'Your identity provider did not share your email address, which is needed to sign you in.',
  account_disabled: 'This account is disabled. Contact your administrator.',
  registration_disabled: 'There is no account for this identity and registration is closed. Contact your administrator.',
  oidc_not_enabled: 'Single sign-on is not available.',
  invalid_state: TRY_AGAIN,
  state_replayed: TRY_AGAIN,
  state_unbound: TRY_AGAIN,
  code_rejected: TRY_AGAIN,
  invalid_request: TRY_AGAIN,
  account_conflict: TRY_AGAIN,
  idp_error: 'Your identity provider did not sign you in.',
  access_denied: 'Single sign-on was cancelled at your identity provider.',
  invalid_id_token: 'The identity provider\'s answer could not be verified. Contact your administrator.',
  issuer_mismatch: 'The identity provider\'s answer could not be verified. Contact your administrator.',
  oidc_unreachable: UNAVAILABLE,
  oidc_token_failed: UNAVAILABLE,
  oidc_discovery_invalid: UNAVAILABLE,
  issuer_not_https: MISCONFIGURED,
  issuer_private_address: MISCONFIGURED,
  invalid_issuer: MISCONFIGURED,
}
export const SSO_ERROR_FALLBACK = 'Single sign-on did not complete. Try again, or contact your administrator.'

/** Notices of the Post/Redirect/Get answers, by the `notice` query value: fixed texts, never the query's. */
const ACCOUNT_NOTICES: Record<string, string> = {
  'password-changed': 'Your password has been changed. Your other sessions have ended.',
  '2fa-off': 'Two-factor authentication is off.',
}

export const pagesRoutes = (core: Core) => {
  const base = core.config.clinicalBasePath
  const ctx = pageContext(base, core.config.challenge)
  const home = `${base}/`
  const accountUrl = `${base}/account`
  const ip = (request: Request) => core.clientAddress(request)

  /** The signed-in user of a page request, or null; `clear` is the Set-Cookie that drops a dead cookie. */
  const session = async (request: Request): Promise<{ auth: Authenticated; clear: null } | { auth: null; clear: string | null }> => {
    try {
      return { auth: await authenticate(core, request), clear: null }
    } catch (err) {
      if (err instanceof HttpError && err.status === 401) return { auth: null, clear: err.headers?.['set-cookie'] ?? null }
      throw err
    }
  }
  /** The Set-Cookie a signed-in response carries: the throttled re-issue of spec 2's per-request checks. */
  const renewed = (auth: Authenticated): Record<string, string> => (auth.setCookie ? { 'set-cookie': auth.setCookie } : {})

  /**
   * A signed-in page without a session. A plain request goes to the sign-in page; an htmx request gets 401, which
   * clinical.js treats as a sign-out (every tab goes to the sign-in page).
   */
  const signInAgain = (request: Request, clear: string | null) => {
    const headers: Record<string, string> = clear ? { 'set-cookie': clear } : {}
    if (request.headers.get('hx-request') === 'true') {
      return new Response('Your session has ended: sign in again.', { status: 401, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } })
    }
    return redirect(home, headers)
  }

  /**
   * A page sign-in is a browser's, whatever its User-Agent says: the session is a web one (cookie, 30 days,
   * idle limit). The copy declares it with X-Client and keeps the client address of the original.
   */
  const asWebClient = (request: Request): Request => {
    const headers = new Headers(request.headers)
    headers.set('x-client', 'web')
    const copy = new Request(request.url, { method: request.method, headers })
    rememberSocketAddress(copy, core.clientAddress(request))
    return copy
  }

  /** A rule failure as a form shows it: field messages and one line for the form. Server failures propagate. */
  const failure = (err: unknown): { errors?: Errors; flash: NonNullable<Flash>; headers: Record<string, string> } => {
    if (!(err instanceof HttpError) || err.status >= 500) throw err
    const retryAfter = err.headers?.['retry-after']
    return { errors: err.fields, flash: { kind: 'error', text: err.message }, headers: retryAfter ? { 'retry-after': retryAfter } : {} }
  }
  const guardOrigin = (request: Request) => {
    if (!sameOrigin(request, core.config.appUrl)) throw HttpError.forbidden('cross_origin', 'This form must be sent from this site')
  }
  const challengeToken = (f: Record<string, string>) => f['cf-turnstile-response'] ?? f.challengeToken ?? null
  const hasErrors = (errors: Errors) => Object.keys(errors).length > 0

  const signInOptions = async (): Promise<SignInOptions> => {
    const [oidc, open] = await Promise.all([oidcSettings(core), registrationEnabled(core)])
    return {
      sso: oidc.enabled ? { label: oidc.buttonLabel } : null,
      localAuthDisabled: oidc.disableLocalAuth,
      registrationOpen: open && !oidc.disableLocalAuth,
    }
  }
  const signInPage = async (p: { email?: string; errors?: Errors; flash?: Flash }, init: { status?: number; headers?: Record<string, string> } = {}) =>
    html(SignInPage({ ctx, options: await signInOptions(), ...p }), init)

  const accountPage = async (
    auth: Authenticated,
    p: { flash?: Flash; warning?: string; errors?: AccountErrors } = {},
    status = 200,
  ) => {
    const backupCodesLeft = auth.user.totp_enabled ? await twoFactor.backupCodeCount(core, auth.user.id) : null
    return html(AccountPage({ base, user: auth.user, backupCodesLeft, ...p }), { status, headers: renewed(auth) })
  }

  /** Account-security forms: the same origin and a live session (each action then consumes ACCOUNT_SECURITY_RULE). */
  const securityAction = async (request: Request) => {
    guardOrigin(request)
    return session(request)
  }

  return new Elysia()
    // ---- signed out ---------------------------------------------------------------------------------------
    .get('/', async ({ request, query }) => {
      const { auth, clear } = await session(request)
      if (auth) return redirect(accountUrl)
      const headers: Record<string, string> = clear ? { 'set-cookie': clear } : {}
      let flash: Flash = null
      if (query['signed-out'] !== undefined) flash = { kind: 'ok', text: 'You have signed out.' }
      if (query.error) flash = { kind: 'error', text: SSO_ERRORS[query.error] ?? SSO_ERROR_FALLBACK }
      return signInPage({ flash }, { headers })
    }, { detail: hidden, query: t.Object({ 'signed-out': t.Optional(t.String()), error: t.Optional(t.String()) }) })

    .get('/login', () => redirect(home), { detail: hidden })
    .post('/login', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const errors = formErrors(LoginForm, f)
      if (hasErrors(errors)) return signInPage({ email: f.email, errors }, { status: 422 })
      try {
        await core.rateLimit.consume(accounts.LOGIN_RULE, ip(request))
        const result = await accounts.login(core, { email: f.email!, password: f.password! }, asWebClient(request))
        if (result.kind === 'requires_2fa') return html(TwoFactorStepPage({ ctx, pendingToken: result.pendingToken }))
        return redirect(accountUrl, { 'set-cookie': result.cookie ?? authCookie(core, result.token) })
      } catch (err) {
        const { flash, headers } = failure(err)
        return signInPage({ email: f.email, flash }, { status: 422, headers })
      }
    }, { detail: hidden, body: FormBody })

    .get('/login/2fa', () => redirect(home), { detail: hidden })
    .post('/login/2fa', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const pendingToken = f.pendingToken ?? ''
      const errors = formErrors(CodeForm, { code: f.code?.trim() ?? '' })
      if (!pendingToken) return signInPage({ flash: { kind: 'error', text: 'The sign-in expired: enter your email and password again' } }, { status: 422 })
      if (hasErrors(errors)) return html(TwoFactorStepPage({ ctx, pendingToken, error: errors.code }), { status: 422 })
      try {
        await core.rateLimit.consume(accounts.LOGIN_RULE, ip(request))
        const started = await accounts.completeTwoFactorLogin(core, pendingToken, f.code!.trim(), asWebClient(request))
        return redirect(accountUrl, { 'set-cookie': started.cookie ?? authCookie(core, started.token) })
      } catch (err) {
        const { flash, headers } = failure(err)
        // The first step's token expired (or its account went away): back to the password.
        if (err instanceof HttpError && err.code !== 'invalid_2fa_code' && err.status === 401) return signInPage({ flash }, { status: 422, headers })
        return html(TwoFactorStepPage({ ctx, pendingToken, error: flash.text }), { status: 422, headers })
      }
    }, { detail: hidden, body: FormBody })

    .get('/register', async ({ request }) => {
      if ((await session(request)).auth) return redirect(accountUrl)
      if (!(await signInOptions()).registrationOpen) {
        return html(MessagePage({ base, title: 'Registration is closed', kind: 'error', text: 'New accounts cannot register here. Ask your administrator for an account.', link: { href: home, label: 'Sign in' } }))
      }
      return html(RegisterPage({ ctx }))
    }, { detail: hidden })
    .post('/register', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const values = { name: f.name, email: f.email }
      const errors = formErrors(RegisterBody, { name: f.name ?? '', email: f.email ?? '', password: f.password ?? '' })
      if (hasErrors(errors)) return html(RegisterPage({ ctx, values, errors }), { status: 422 })
      try {
        const result = await accounts.register(core, {
          name: f.name!, email: f.email!, password: f.password!, challengeToken: challengeToken(f),
        }, asWebClient(request))
        if (result.needsVerification) {
          return html(MessagePage({ base, title: 'Check your email', kind: 'ok', text: result.message, link: { href: home, label: 'Back to sign in' } }))
        }
        return redirect(accountUrl, { 'set-cookie': result.cookie ?? authCookie(core, result.token) })
      } catch (err) {
        const { errors: fieldErrors, flash, headers } = failure(err)
        return html(RegisterPage({ ctx, values, errors: fieldErrors, flash }), { status: 422, headers })
      }
    }, { detail: hidden, body: FormBody })

    .get('/forgot-password', () => html(ForgotPasswordPage({ ctx })), { detail: hidden })
    .post('/forgot-password', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      if (!f.email?.trim()) return html(ForgotPasswordPage({ ctx, errors: { email: 'Required' } }), { status: 422 })
      try {
        const message = await accounts.forgotPassword(core, f.email, challengeToken(f), ip(request))
        return html(MessagePage({ base, title: 'Check your email', kind: 'ok', text: message, link: { href: home, label: 'Back to sign in' } }))
      } catch (err) {
        const { flash, headers } = failure(err)
        return html(ForgotPasswordPage({ ctx, email: f.email, flash }), { status: 422, headers })
      }
    }, { detail: hidden, body: FormBody })

    .get('/reset-password', ({ query }) => {
      if (!query.token) {
        return html(MessagePage({
          base, title: 'Link invalid or expired', kind: 'error', text: accounts.MESSAGES.invalidToken,
          link: { href: `${base}/forgot-password`, label: 'Ask for a new link' },
        }), { status: 400 })
      }
      return html(ResetPasswordPage({ ctx, token: query.token }))
    }, { detail: hidden, query: t.Object({ token: t.Optional(t.String()) }) })
    .post('/reset-password', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const token = f.token ?? ''
      const errors = formErrors(ResetPasswordBody, { token, newPassword: f.newPassword ?? '' })
      if (!errors.newPassword && f.newPassword !== f.confirmPassword) errors.confirmPassword = PASSWORDS_DIFFER
      if (errors.token) return html(ResetPasswordPage({ ctx, token, flash: { kind: 'error', text: accounts.MESSAGES.invalidToken } }), { status: 422 })
      if (hasErrors(errors)) return html(ResetPasswordPage({ ctx, token, errors }), { status: 422 })
      try {
        const result = await accounts.resetPassword(core, token, f.newPassword!, ip(request))
        return html(MessagePage({
          base, title: 'Password changed', kind: 'ok', text: 'Your password has been changed. Sign in with the new password.',
          warning: result.passwordWarning, link: { href: home, label: 'Sign in' },
        }))
      } catch (err) {
        const { errors: fieldErrors, flash, headers } = failure(err)
        return html(ResetPasswordPage({ ctx, token, errors: fieldErrors, flash }), { status: 422, headers })
      }
    }, { detail: hidden, body: FormBody })

    // ---- signed in ----------------------------------------------------------------------------------------
    .get('/account', async ({ request, query }) => {
      const { auth, clear } = await session(request)
      if (!auth) return signInAgain(request, clear)
      const notice = query.notice ? ACCOUNT_NOTICES[query.notice] : undefined
      return accountPage(auth, { flash: notice ? { kind: 'ok', text: notice } : null })
    }, { detail: hidden, query: t.Object({ notice: t.Optional(t.String()) }) })

    .get('/account/*', () => redirect(accountUrl), { detail: hidden })

    .post('/account/password', async ({ request, body }) => {
      const { auth, clear } = await securityAction(request)
      if (!auth) return signInAgain(request, clear)
      const f = formFields(body)
      const errors = formErrors(ChangePasswordBody, { currentPassword: f.currentPassword ?? '', newPassword: f.newPassword ?? '' })
      if (!errors.newPassword && f.newPassword !== f.confirmPassword) errors.confirmPassword = PASSWORDS_DIFFER
      if (hasErrors(errors)) return accountPage(auth, { errors: { password: errors } }, 422)
      try {
        await core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, ip(request))
        const result = await accounts.changePassword(core, auth.user, auth.token, {
          currentPassword: f.currentPassword!, newPassword: f.newPassword!,
        }, ip(request))
        if (!result.passwordWarning) return redirect(`${accountUrl}?notice=password-changed`, renewed(auth))
        return accountPage(auth, { flash: { kind: 'ok', text: ACCOUNT_NOTICES['password-changed']! }, warning: result.passwordWarning })
      } catch (err) {
        const { errors: fieldErrors, flash } = failure(err)
        return accountPage(auth, { flash, errors: { password: fieldErrors } }, 422)
      }
    }, { detail: hidden, body: FormBody })

    .post('/account/2fa/setup', async ({ request }) => {
      const { auth, clear } = await securityAction(request)
      if (!auth) return signInAgain(request, clear)
      try {
        await core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, ip(request))
        const setup = await twoFactor.setupTwoFactor(core, auth.user)
        return html(TwoFactorSetupPage({ base, user: auth.user, secret: setup.secret, qrCode: setup.qrCode }), { headers: renewed(auth) })
      } catch (err) {
        return accountPage(auth, { flash: failure(err).flash }, 422)
      }
    }, { detail: hidden, body: FormBody })

    .post('/account/2fa/enable', async ({ request, body }) => {
      const { auth, clear } = await securityAction(request)
      if (!auth) return signInAgain(request, clear)
      const f = formFields(body)
      // The setup page posts its secret and QR code back, so a wrong code can show them again without a new secret.
      const secret = /^[A-Z2-7]{16,128}=*$/.test(f.secret ?? '') ? f.secret! : null
      const qrCode = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/.test(f.qrCode ?? '') && f.qrCode!.length <= 64_000 ? f.qrCode! : null
      const again = (error: string, headers: Record<string, string> = {}) => secret && qrCode
        ? html(TwoFactorSetupPage({ base, user: auth.user, secret, qrCode, error }), { status: 422, headers: { ...renewed(auth), ...headers } })
        : accountPage(auth, { flash: { kind: 'error', text: `${error}. Start the setup again.` } }, 422)
      const errors = formErrors(CodeForm, { code: f.code?.trim() ?? '' })
      if (errors.code) return again(errors.code)
      try {
        await core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, ip(request))
        const { backupCodes } = await twoFactor.enableTwoFactor(core, auth.user.id, f.code!.trim(), ip(request))
        const user = { ...auth.user, totp_enabled: true }
        return html(BackupCodesPage({ base, user, backupCodes, enabled: true }), { headers: renewed(auth) })
      } catch (err) {
        const { flash, headers } = failure(err)
        return again(flash.text, headers)
      }
    }, { detail: hidden, body: FormBody })

    .post('/account/2fa/backup-codes', async ({ request, body }) => {
      const { auth, clear } = await securityAction(request)
      if (!auth) return signInAgain(request, clear)
      const f = formFields(body)
      const errors = formErrors(PasswordForm, { password: f.password ?? '' })
      if (hasErrors(errors)) return accountPage(auth, { errors: { regenerate: errors } }, 422)
      try {
        await core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, ip(request))
        const { backupCodes } = await twoFactor.regenerateBackupCodes(core, auth.user.id, f.password!, ip(request))
        return html(BackupCodesPage({ base, user: auth.user, backupCodes, enabled: false }), { headers: renewed(auth) })
      } catch (err) {
        const { errors: fieldErrors, flash } = failure(err)
        return accountPage(auth, { flash, errors: { regenerate: fieldErrors ?? { password: flash.text } } }, 422)
      }
    }, { detail: hidden, body: FormBody })

    .post('/account/2fa/disable', async ({ request, body }) => {
      const { auth, clear } = await securityAction(request)
      if (!auth) return signInAgain(request, clear)
      const f = formFields(body)
      const errors = formErrors(PasswordForm, { password: f.password ?? '' })
      if (hasErrors(errors)) return accountPage(auth, { errors: { disable: errors } }, 422)
      try {
        await core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, ip(request))
        await twoFactor.disableTwoFactor(core, auth.user.id, f.password!, ip(request))
        return redirect(`${accountUrl}?notice=2fa-off`, renewed(auth))
      } catch (err) {
        const { errors: fieldErrors, flash } = failure(err)
        return accountPage(auth, { flash, errors: { disable: fieldErrors ?? { password: flash.text } } }, 422)
      }
    }, { detail: hidden, body: FormBody })

    .post('/logout', async ({ request }) => {
      guardOrigin(request)
      await accounts.logout(core, requestToken(request)?.token ?? null, ip(request))
      return redirect(`${home}?signed-out=1`, { 'set-cookie': authCookie(core, null) })
    }, { detail: hidden })
}

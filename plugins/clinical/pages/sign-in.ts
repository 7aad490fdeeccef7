// The clinical service's signed-out pages under its base path: sign in (password, single sign-on, the two-factor
// step), register, a new verification email, forgot and reset password, and sign out. Forms post here with or
// without JavaScript.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { pageContext } from '../../../views/layout'
import { challengeToken, FormBody, formErrors, formFailure, formFields, hasErrors, html, redirect } from '../../../views/page'
import { authCookie } from '../cookies'
import { callerOf } from '../guard'
import { LoginBody, RegisterBody, ResetPasswordBody } from '../models/accounts'
import * as accounts from '../services/accounts'
import { oidcSettings, registrationEnabled } from '../services/app-config'
import type { Caller } from '../services/sessions'
import type { ClinicalState } from '../state'
import { MessagePage, type Errors, type Flash } from '../views/common'
import {
  ForgotPasswordPage, RegisterPage, ResendVerificationPage, ResetPasswordPage, SignInPage, TwoFactorStepPage, type SignInOptions,
} from '../views/sign-in'
import { clinicalPageKit, CodeForm, pageSession, PASSWORDS_DIFFER } from './common'

const LoginForm = t.Object({ email: LoginBody.properties.email, password: LoginBody.properties.password })

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

export const signInPages = (state: ClinicalState) => {
  const { core, audit } = state
  const base = core.config.clinicalBasePath
  const ctx = pageContext(base, core.config.challenge)
  const home = `${base}/`
  const accountUrl = `${base}/account`
  /** A page sign-in is a browser's, whatever its User-Agent says: the session is a web one (cookie, 30 days, idle limit). */
  const webCaller = (request: Request): Caller => ({ ...callerOf(core, request), client: 'web' })
  /** A sign-in lands in the workspace, where the day's work is; a new account lands on its account page (2FA). */
  const workspaceUrl = `${base}/workspace`
  const signedIn = (token: string, to = workspaceUrl) => redirect(to, { 'set-cookie': authCookie(core, token) })

  const signInOptions = async (): Promise<SignInOptions> => {
    const [oidc, open] = await Promise.all([oidcSettings(core), registrationEnabled(core)])
    return {
      sso: oidc.enabled ? { label: oidc.buttonLabel } : null,
      localAuthDisabled: oidc.disableLocalAuth,
      registrationOpen: open && !oidc.disableLocalAuth,
    }
  }
  const signInPage = async (p: { email?: string; errors?: Errors; flash?: Flash; unverified?: boolean }, init: { status?: number; headers?: Record<string, string> } = {}) =>
    html(SignInPage({ ctx, options: await signInOptions(), ...p }), init)

  return new Elysia()
    .use(clinicalPageKit(state))
    .get('/', async ({ request, query }) => {
      const { session, headers } = await pageSession(state, request)
      if (session) return redirect(workspaceUrl)
      let flash: Flash = null
      if (query['signed-out'] !== undefined) flash = { kind: 'ok', text: 'You have signed out.' }
      if (query.error) flash = { kind: 'error', text: SSO_ERRORS[query.error] ?? SSO_ERROR_FALLBACK }
      return signInPage({ flash }, { headers })
    }, { page: true, query: t.Object({ 'signed-out': t.Optional(t.String()), error: t.Optional(t.String()) }) })

    .get('/login', () => redirect(home), { page: true })
    .post('/login', async ({ request, body }) => {
      const f = formFields(body)
      const errors = formErrors(LoginForm, f)
      if (hasErrors(errors)) return signInPage({ email: f.email, errors }, { status: 422 })
      try {
        const caller = webCaller(request)
        await core.rateLimit.consume(accounts.LOGIN_RULE, caller.ip)
        const result = await accounts.login(core, audit, { email: f.email!, password: f.password! }, caller)
        if (result.kind === 'requires_2fa') return html(TwoFactorStepPage({ ctx, pendingToken: result.pendingToken }))
        return signedIn(result.token)
      } catch (err) {
        const { flash, headers } = formFailure(err)
        const unverified = err instanceof HttpError && err.code === 'email_not_verified'
        return signInPage({ email: f.email, flash, unverified }, { status: 422, headers })
      }
    }, { page: true, body: FormBody })

    .get('/resend-verification', () => html(ResendVerificationPage({ ctx })), { page: true })
    .post('/resend-verification', async ({ request, body }) => {
      const f = formFields(body)
      const email = f.email?.trim() ?? ''
      if (!email) return html(ResendVerificationPage({ ctx, error: 'Enter the address you registered with' }), { status: 422 })
      try {
        const message = await accounts.resendVerification(core, email, core.clientAddress(request))
        return html(MessagePage({ base, title: 'Check your email', kind: 'ok', text: message, link: { href: home, label: 'Back to sign in' } }))
      } catch (err) {
        const { flash, headers } = formFailure(err)
        return html(ResendVerificationPage({ ctx, email, flash }), { status: 422, headers })
      }
    }, { page: true, body: FormBody })

    .get('/login/2fa', () => redirect(home), { page: true })
    .post('/login/2fa', async ({ request, body }) => {
      const f = formFields(body)
      const pendingToken = f.pendingToken ?? ''
      const errors = formErrors(CodeForm, { code: f.code?.trim() ?? '' })
      if (!pendingToken) return signInPage({ flash: { kind: 'error', text: 'The sign-in expired: enter your email and password again' } }, { status: 422 })
      if (hasErrors(errors)) return html(TwoFactorStepPage({ ctx, pendingToken, error: errors.code }), { status: 422 })
      try {
        const caller = webCaller(request)
        await core.rateLimit.consume(accounts.LOGIN_RULE, caller.ip)
        const started = await accounts.completeTwoFactorLogin(core, audit, pendingToken, f.code!.trim(), caller)
        return signedIn(started.token)
      } catch (err) {
        const { flash, headers } = formFailure(err)
        // The first step's token expired (or its account went away): back to the password.
        if (err instanceof HttpError && err.code !== 'invalid_2fa_code' && err.status === 401) return signInPage({ flash }, { status: 422, headers })
        return html(TwoFactorStepPage({ ctx, pendingToken, error: flash.text }), { status: 422, headers })
      }
    }, { page: true, body: FormBody })

    .get('/register', async ({ request }) => {
      if ((await pageSession(state, request)).session) return redirect(accountUrl)
      if (!(await signInOptions()).registrationOpen) {
        return html(MessagePage({ base, title: 'Registration is closed', kind: 'error', text: 'New accounts cannot register here. Ask your administrator for an account.', link: { href: home, label: 'Sign in' } }))
      }
      return html(RegisterPage({ ctx }))
    }, { page: true })
    .post('/register', async ({ request, body }) => {
      const f = formFields(body)
      const values = { name: f.name, email: f.email }
      const errors = formErrors(RegisterBody, { name: f.name ?? '', email: f.email ?? '', password: f.password ?? '' })
      if (hasErrors(errors)) return html(RegisterPage({ ctx, values, errors }), { status: 422 })
      try {
        const result = await accounts.register(core, audit, {
          name: f.name!, email: f.email!, password: f.password!, challengeToken: challengeToken(f, 'challengeToken'),
        }, webCaller(request))
        if (result.needsVerification) {
          return html(MessagePage({ base, title: 'Check your email', kind: 'ok', text: result.message, link: { href: home, label: 'Back to sign in' } }))
        }
        return signedIn(result.token, accountUrl)
      } catch (err) {
        const { errors: fieldErrors, flash, headers } = formFailure(err)
        return html(RegisterPage({ ctx, values, errors: fieldErrors, flash }), { status: 422, headers })
      }
    }, { page: true, body: FormBody })

    .get('/forgot-password', () => html(ForgotPasswordPage({ ctx })), { page: true })
    .post('/forgot-password', async ({ request, body }) => {
      const f = formFields(body)
      if (!f.email?.trim()) return html(ForgotPasswordPage({ ctx, errors: { email: 'Required' } }), { status: 422 })
      try {
        const message = await accounts.forgotPassword(core, f.email, challengeToken(f, 'challengeToken'), core.clientAddress(request))
        return html(MessagePage({ base, title: 'Check your email', kind: 'ok', text: message, link: { href: home, label: 'Back to sign in' } }))
      } catch (err) {
        const { flash, headers } = formFailure(err)
        return html(ForgotPasswordPage({ ctx, email: f.email, flash }), { status: 422, headers })
      }
    }, { page: true, body: FormBody })

    .get('/reset-password', ({ query }) => {
      if (!query.token) {
        return html(MessagePage({
          base, title: 'Link invalid or expired', kind: 'error', text: accounts.MESSAGES.invalidToken,
          link: { href: `${base}/forgot-password`, label: 'Ask for a new link' },
        }), { status: 400 })
      }
      return html(ResetPasswordPage({ ctx, token: query.token }))
    }, { page: true, query: t.Object({ token: t.Optional(t.String()) }) })
    .post('/reset-password', async ({ request, body }) => {
      const f = formFields(body)
      const token = f.token ?? ''
      const errors = formErrors(ResetPasswordBody, { token, newPassword: f.newPassword ?? '' })
      if (!errors.newPassword && f.newPassword !== f.confirmPassword) errors.confirmPassword = PASSWORDS_DIFFER
      if (errors.token) return html(ResetPasswordPage({ ctx, token, flash: { kind: 'error', text: accounts.MESSAGES.invalidToken } }), { status: 422 })
      if (hasErrors(errors)) return html(ResetPasswordPage({ ctx, token, errors }), { status: 422 })
      try {
        const result = await accounts.resetPassword(core, audit, token, f.newPassword!, core.clientAddress(request))
        return html(MessagePage({
          base, title: 'Password changed', kind: 'ok', text: 'Your password has been changed. Sign in with the new password.',
          warning: result.passwordWarning, link: { href: home, label: 'Sign in' },
        }))
      } catch (err) {
        const { errors: fieldErrors, flash, headers } = formFailure(err)
        return html(ResetPasswordPage({ ctx, token, errors: fieldErrors, flash }), { status: 422, headers })
      }
    }, { page: true, body: FormBody })

    .post('/logout', async ({ request }) => {
      const caller = callerOf(core, request)
      await accounts.logout(core, audit, caller.token?.value ?? null, caller.ip)
      return redirect(`${home}?signed-out=1`, { 'set-cookie': authCookie(core, null) })
    }, { page: true })
}

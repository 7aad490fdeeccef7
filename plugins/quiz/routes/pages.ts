// The quiz service's browser pages under its base path: sign in, register, email links and "my account".
// Forms post to these routes with or without JavaScript; the session is the same JWT the API uses, kept in an
// httpOnly SameSite=Lax cookie scoped to the quiz path.
import { Elysia, t } from 'elysia'
import { verifyChallenge } from '../../../src/auth/challenge'
import { httpOnlyCookie, readCookie } from '../../../src/auth/cookie'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { isFragment, pageContext } from '../../../views/layout'
import { formErrors, formFields, html, redirect, sameOrigin } from '../../../views/page'
import { LoginBody, RegisterBody, ResetPasswordBody, UpdateMeBody, type UserResponse } from '../models/accounts'
import * as accounts from '../services/accounts'
import {
  AccountPage, ForgotPasswordPage, LoginPage, MessagePage, PasswordForm, ProfileForm, RegisterPage, ResetPasswordPage,
} from '../views/accounts'

export const SESSION_COOKIE = 'quiz_auth'
const FormBody = t.Optional(t.Record(t.String(), t.Unknown()))
const hidden = { hide: true }

export const pageRoutes = (core: Core) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const cookiePath = base || '/'
  const sessionCookie = (token: string) =>
    httpOnlyCookie(core.config, SESSION_COOKIE, token, cookiePath, accounts.ACCESS_TOKEN_LIFETIME_S)
  const clearedCookie = httpOnlyCookie(core.config, SESSION_COOKIE, null, cookiePath, accounts.ACCESS_TOKEN_LIFETIME_S)

  const currentUser = async (request: Request): Promise<UserResponse | null> => {
    const token = readCookie(request, SESSION_COOKIE)
    return token ? accounts.userFromToken(core, token) : null
  }
  /** Message of a rule failure for a form: field messages, or one line for the whole form. */
  const failure = (err: unknown): { errors?: Record<string, string>; flash: { kind: 'error'; text: string } } => {
    if (!(err instanceof HttpError) || err.status >= 500) throw err
    return { errors: err.fields, flash: { kind: 'error', text: err.message } }
  }
  const guardOrigin = (request: Request) => {
    if (!sameOrigin(request, core.config.appUrl)) throw HttpError.forbidden('cross_origin', 'This form must be sent from this site')
  }
  const challengeToken = (f: Record<string, string>) => f['cf-turnstile-response'] ?? f.challenge_token ?? null

  return new Elysia()
    .get('/', async ({ request }) => {
      const user = await currentUser(request)
      if (!user) return redirect(`${base}/login`)
      return html(AccountPage({ ctx, user }))
    }, { detail: hidden })
    .get('/login', async ({ request, query }) => {
      if (await currentUser(request)) return redirect(`${base}/`)
      const flash = query.notice === 'signed-out' ? { kind: 'ok' as const, text: 'You have signed out.' } : null
      return html(LoginPage({ ctx, flash }))
    }, { detail: hidden, query: t.Object({ notice: t.Optional(t.String()) }) })
    .post('/login', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const errors = formErrors(LoginBody, f)
      if (Object.keys(errors).length > 0) return html(LoginPage({ ctx, email: f.email, errors }), { status: 422 })
      try {
        const ip = core.clientAddress(request)
        await core.rateLimit.consume(accounts.LOGIN_RULE, ip)
        await verifyChallenge(core.config.challenge, challengeToken(f), ip)
        const token = await accounts.login(core, f.email!, f.password!)
        return redirect(`${base}/`, { 'set-cookie': sessionCookie(token) })
      } catch (err) {
        return html(LoginPage({ ctx, email: f.email, ...failure(err) }), { status: 422 })
      }
    }, { detail: hidden, body: FormBody })
    .get('/register', () => html(RegisterPage({ ctx })), { detail: hidden })
    .post('/register', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const values = { email: f.email, name: f.name }
      const errors = formErrors(RegisterBody, f)
      if (Object.keys(errors).length > 0) return html(RegisterPage({ ctx, values, errors }), { status: 422 })
      try {
        await verifyChallenge(core.config.challenge, challengeToken(f), core.clientAddress(request))
        const result = await accounts.register(core, { email: f.email!, password: f.password!, name: f.name! })
        if ('access_token' in result) return redirect(`${base}/`, { 'set-cookie': sessionCookie(result.access_token) })
        return html(MessagePage({ ctx, title: 'Check your email', message: result.message, ok: true }))
      } catch (err) {
        return html(RegisterPage({ ctx, values, ...failure(err) }), { status: 422 })
      }
    }, { detail: hidden, body: FormBody })
    .get('/verify-email', async ({ query }) => {
      try {
        const message = await accounts.verifyEmail(core, query.token ?? '')
        return html(MessagePage({ ctx, title: 'Email verified', message, ok: true }))
      } catch (err) {
        const { flash } = failure(err)
        return html(MessagePage({ ctx, title: 'This link does not work', message: `${flash.text}. Ask for a new verification email from the sign-in page.`, ok: false }), { status: 400 })
      }
    }, { detail: hidden, query: t.Object({ token: t.Optional(t.String()) }) })
    .get('/forgot-password', () => html(ForgotPasswordPage({ ctx })), { detail: hidden })
    .post('/forgot-password', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      if (!f.email?.trim()) return html(ForgotPasswordPage({ ctx, errors: { email: 'Required' } }), { status: 422 })
      try {
        await verifyChallenge(core.config.challenge, challengeToken(f), core.clientAddress(request))
        const message = await accounts.forgotPassword(core, f.email)
        return html(MessagePage({ ctx, title: 'Check your email', message, ok: true }))
      } catch (err) {
        return html(ForgotPasswordPage({ ctx, email: f.email, ...failure(err) }), { status: 422 })
      }
    }, { detail: hidden, body: FormBody })
    .get('/reset-password', ({ query }) => html(ResetPasswordPage({ ctx, token: query.token ?? '' })), {
      detail: hidden, query: t.Object({ token: t.Optional(t.String()) }),
    })
    .post('/reset-password', async ({ request, body }) => {
      guardOrigin(request)
      const f = formFields(body)
      const errors = formErrors(ResetPasswordBody, f)
      if (Object.keys(errors).length > 0) return html(ResetPasswordPage({ ctx, token: f.token ?? '', errors }), { status: 422 })
      try {
        const message = await accounts.resetPassword(core, f.token!, f.new_password!)
        return html(MessagePage({ ctx, title: 'Password changed', message, ok: true }))
      } catch (err) {
        return html(ResetPasswordPage({ ctx, token: f.token ?? '', ...failure(err) }), { status: 422 })
      }
    }, { detail: hidden, body: FormBody })
    .post('/account/profile', async ({ request, body }) => {
      guardOrigin(request)
      const user = await currentUser(request)
      if (!user) return signInAgain(request, base)
      const f = formFields(body)
      const errors = formErrors(UpdateMeBody, { name: f.name ?? '' })
      try {
        if (Object.keys(errors).length > 0) throw HttpError.unprocessable('invalid_input', 'Check the form', errors)
        const updated = await accounts.updateMe(core, user.id, { name: f.name })
        if (!isFragment(request)) return redirect(`${base}/`)
        return html(ProfileForm({ base, user: updated, saved: true }))
      } catch (err) {
        const { errors: fieldErrors, flash } = failure(err)
        return isFragment(request)
          ? html(ProfileForm({ base, user, errors: fieldErrors ?? { name: flash.text } }), { status: 422 })
          : html(AccountPage({ ctx, user, flash, profileErrors: fieldErrors }), { status: 422 })
      }
    }, { detail: hidden, body: FormBody })
    .post('/account/password', async ({ request, body }) => {
      guardOrigin(request)
      const user = await currentUser(request)
      if (!user) return signInAgain(request, base)
      const f = formFields(body)
      const errors = formErrors(t.Object({ current_password: t.String({ minLength: 1 }), new_password: UpdateMeBody.properties.new_password }), f)
      try {
        if (Object.keys(errors).length > 0) throw HttpError.unprocessable('invalid_input', 'Check the form', errors)
        const updated = await accounts.updateMe(core, user.id, { current_password: f.current_password, new_password: f.new_password })
        // The password change ended older tokens, this cookie's included: carry on with the fresh one.
        const cookie = { 'set-cookie': sessionCookie(updated.access_token!) }
        if (!isFragment(request)) return redirect(`${base}/`, cookie)
        return html(PasswordForm({ base, saved: true }), { headers: cookie })
      } catch (err) {
        const { errors: fieldErrors, flash } = failure(err)
        const passwordErrors = fieldErrors ?? { current_password: flash.text }
        return isFragment(request)
          ? html(PasswordForm({ base, errors: passwordErrors }), { status: 422 })
          : html(AccountPage({ ctx, user, flash, passwordErrors }), { status: 422 })
      }
    }, { detail: hidden, body: FormBody })
    .post('/logout', ({ request }) => {
      guardOrigin(request)
      return redirect(`${base}/login?notice=signed-out`, { 'set-cookie': clearedCookie })
    }, { detail: hidden })
}

/** The session ended while the page was open: send the browser to sign in (htmx follows HX-Redirect). */
function signInAgain(request: Request, base: string): Response {
  if (request.headers.get('hx-request') === 'true') return new Response(null, { status: 204, headers: { 'hx-redirect': `${base}/login` } })
  return redirect(`${base}/login`)
}

// The quiz service's browser pages under its base path: sign in, register, email links and "my account".
// Forms post to these routes with or without JavaScript; the session is the same JWT the API uses, in the cookie
// of guard.ts. Every route declares the page kit's `page` or `signedIn`, which check the origin of every form post.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { isFragment, pageContext } from '../../../views/layout'
import { challengeToken, FormBody, formErrors, formFailure, formFields, hasErrors, html, redirect } from '../../../views/page'
import { readCookie } from '../../../src/auth/cookie'
import { SESSION_COOKIE, sessionCookie } from '../guard'
import { LoginBody, RegisterBody, ResetPasswordBody, UpdateMeBody } from '../models/accounts'
import * as accounts from '../services/accounts'
import type { QuizState } from '../state'
import {
  AccountPage, ForgotPasswordPage, LoginPage, MessagePage, PasswordForm, ProfileForm, RegisterPage, ResetPasswordPage,
} from '../views/accounts'

/** The API's name of the bot-challenge token, which a form may post instead of the widget's own field. */
const CHALLENGE_FIELD = 'challenge_token'
const PasswordChange = t.Object({ current_password: t.String({ minLength: 1 }), new_password: UpdateMeBody.properties.new_password })

export const accountPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const signIn = (token: string) => ({ 'set-cookie': sessionCookie(core, token) })

  return new Elysia()
    .use(pages)
    .get('/', ({ user }) => html(AccountPage({ ctx, user })), { signedIn: true })
    .get('/login', ({ user, query }) => {
      if (user) return redirect(`${base}/`)
      const flash = query.notice === 'signed-out' ? { kind: 'ok' as const, text: 'You have signed out.' } : null
      return html(LoginPage({ ctx, flash }))
    }, { page: true, visitor: true, query: t.Object({ notice: t.Optional(t.String()) }) })
    .post('/login', async ({ request, body }) => {
      const f = formFields(body)
      const errors = formErrors(LoginBody, f)
      if (hasErrors(errors)) return html(LoginPage({ ctx, email: f.email, errors }), { status: 422 })
      try {
        const input = { email: f.email!, password: f.password!, challenge_token: challengeToken(f, CHALLENGE_FIELD) }
        const token = await accounts.login(core, input, core.clientAddress(request))
        return redirect(`${base}/`, signIn(token))
      } catch (err) {
        const { errors, flash } = formFailure(err)
        const unverified = err instanceof HttpError && err.code === 'email_not_verified'
        return html(LoginPage({ ctx, email: f.email, errors, flash, unverified }), { status: 422 })
      }
    }, { page: true, body: FormBody })
    // A boosted form post puts its action in the address bar: a reload (a GET) lands on a page, never a 404.
    .get('/resend-verification', () => redirect(`${base}/login`), { page: true })
    .post('/resend-verification', async ({ body }) => {
      const f = formFields(body)
      const email = f.email?.trim() ?? ''
      if (!email) return html(MessagePage({ ctx, title: 'Enter your email', message: 'Enter the address you registered with.', ok: false, resend: true }), { status: 422 })
      const message = await accounts.resendVerification(core, email)
      return html(MessagePage({ ctx, title: 'Check your email', message, ok: true }))
    }, { page: true, body: FormBody })
    .get('/register', () => html(RegisterPage({ ctx })), { page: true })
    .post('/register', async ({ request, body }) => {
      const f = formFields(body)
      const values = { email: f.email, name: f.name }
      const errors = formErrors(RegisterBody, f)
      if (hasErrors(errors)) return html(RegisterPage({ ctx, values, errors }), { status: 422 })
      try {
        const input = { email: f.email!, password: f.password!, name: f.name!, challenge_token: challengeToken(f, CHALLENGE_FIELD) }
        const result = await accounts.register(core, input, core.clientAddress(request))
        if ('access_token' in result) return redirect(`${base}/`, signIn(result.access_token))
        return html(MessagePage({ ctx, title: 'Check your email', message: result.message, ok: true }))
      } catch (err) {
        const { errors, flash } = formFailure(err)
        return html(RegisterPage({ ctx, values, errors, flash }), { status: 422 })
      }
    }, { page: true, body: FormBody })
    .get('/verify-email', async ({ query }) => {
      try {
        const message = await accounts.verifyEmail(core, query.token ?? '')
        return html(MessagePage({ ctx, title: 'Email verified', message, ok: true }))
      } catch (err) {
        const { flash } = formFailure(err)
        return html(MessagePage({ ctx, title: 'This link does not work', message: `${flash.text}. Ask for a new verification email below.`, ok: false, resend: true }), { status: 400 })
      }
    }, { page: true, query: t.Object({ token: t.Optional(t.String()) }) })
    .get('/forgot-password', () => html(ForgotPasswordPage({ ctx })), { page: true })
    .post('/forgot-password', async ({ request, body }) => {
      const f = formFields(body)
      if (!f.email?.trim()) return html(ForgotPasswordPage({ ctx, errors: { email: 'Required' } }), { status: 422 })
      try {
        const input = { email: f.email, challenge_token: challengeToken(f, CHALLENGE_FIELD) }
        const message = await accounts.forgotPassword(core, input, core.clientAddress(request))
        return html(MessagePage({ ctx, title: 'Check your email', message, ok: true }))
      } catch (err) {
        const { errors, flash } = formFailure(err)
        return html(ForgotPasswordPage({ ctx, email: f.email, errors, flash }), { status: 422 })
      }
    }, { page: true, body: FormBody })
    .get('/reset-password', ({ query }) => html(ResetPasswordPage({ ctx, token: query.token ?? '' })), {
      page: true, query: t.Object({ token: t.Optional(t.String()) }),
    })
    .post('/reset-password', async ({ body }) => {
      const f = formFields(body)
      const errors = formErrors(ResetPasswordBody, f)
      if (hasErrors(errors)) return html(ResetPasswordPage({ ctx, token: f.token ?? '', errors }), { status: 422 })
      try {
        const message = await accounts.resetPassword(core, f.token!, f.new_password!)
        return html(MessagePage({ ctx, title: 'Password changed', message, ok: true }))
      } catch (err) {
        const { errors, flash } = formFailure(err)
        return html(ResetPasswordPage({ ctx, token: f.token ?? '', errors, flash }), { status: 422 })
      }
    }, { page: true, body: FormBody })
    .get('/account/*', () => redirect(`${base}/`), { page: true })
    .post('/account/profile', async ({ request, body, user }) => {
      const f = formFields(body)
      const errors = formErrors(UpdateMeBody, { name: f.name ?? '' })
      try {
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the form', errors)
        const updated = await accounts.updateMe(core, user.id, { name: f.name })
        if (!isFragment(request)) return redirect(`${base}/`)
        return html(ProfileForm({ base, user: updated, saved: true }))
      } catch (err) {
        const { errors: fieldErrors, flash } = formFailure(err)
        return isFragment(request)
          ? html(ProfileForm({ base, user, errors: fieldErrors ?? { name: flash.text } }), { status: 422 })
          : html(AccountPage({ ctx, user, flash, profileErrors: fieldErrors }), { status: 422 })
      }
    }, { signedIn: true, body: FormBody })
    .post('/account/password', async ({ request, body, user }) => {
      const f = formFields(body)
      const errors = formErrors(PasswordChange, f)
      try {
        if (hasErrors(errors)) throw HttpError.unprocessable('invalid_input', 'Check the form', errors)
        const updated = await accounts.updateMe(core, user.id, { current_password: f.current_password, new_password: f.new_password })
        // The password change ended older tokens, this cookie's included: carry on with the fresh one.
        const cookie = signIn(updated.access_token!)
        if (!isFragment(request)) return redirect(`${base}/`, cookie)
        return html(PasswordForm({ base, saved: true }), { headers: cookie })
      } catch (err) {
        const { errors: fieldErrors, flash } = formFailure(err)
        const passwordErrors = fieldErrors ?? { current_password: flash.text }
        return isFragment(request)
          ? html(PasswordForm({ base, errors: passwordErrors }), { status: 422 })
          : html(AccountPage({ ctx, user, flash, passwordErrors }), { status: 422 })
      }
    }, { signedIn: true, body: FormBody })
    .post('/logout', async ({ request }) => {
      await accounts.signOut(core, readCookie(request, SESSION_COOKIE))
      return redirect(`${base}/login?notice=signed-out`, { 'set-cookie': sessionCookie(core, null) })
    }, { page: true })
}

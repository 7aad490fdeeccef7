// Spec 2, Authentication and accounts: the JSON API of accounts, sessions and the profile.
// Routing, guards, validation and response shaping only; the rules live in services/accounts.ts.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { authCookie, signInCookie } from '../cookies'
import { callerOf } from '../guard'
import {
  ChangePasswordBody, EmailBody, ForgotPasswordBody, LoginBody, LoginResponse, MeResponse, OidcStatus, PasswordChangeResponse,
  RegisterBody, RegisterResponse, RegistrationStatus, ResetPasswordBody, Success, SuccessMessage,
} from '../models/accounts'
import * as accounts from '../services/accounts'
import { oidcSettings, registrationEnabled } from '../services/app-config'
import { profileOf } from '../services/users'
import type { ClinicalState } from '../state'
import { MessagePage } from '../views/common'
import { html } from '../../../views/page'

const tags = ['Auth']

export const accountRoutes = ({ core, audit, auth: clinicalAuth }: ClinicalState) => {
  const base = core.config.clinicalBasePath
  return new Elysia({ prefix: '/api/auth' })
    .use(clinicalAuth)
    .post('/register', async ({ body, request, set }) => {
      const result = await accounts.register(core, audit, body, callerOf(core, request))
      if (!result.needsVerification) {
        const { client: _, ...answer } = result
        const cookie = signInCookie(core, result)
        if (cookie) set.headers['set-cookie'] = cookie
        return answer
      }
      return result
    }, {
      body: RegisterBody, response: RegisterResponse,
      detail: {
        tags, summary: 'Register',
        description: 'The first user becomes admin and is signed in at once. With mail sending configured later accounts get a '
          + 'verification email (`needsVerification: true`); without mail they are verified and signed in at once '
          + '(`needsVerification: false` with the login response\'s `token`, `sessionId` and `user`, and the cookie for web clients). '
          + '400 invalid input or failed bot challenge; 403 registration disabled; 409 email taken; 429 after 5 per client address per hour.',
      },
    })
    .get('/verify-email', async ({ query, request }) => {
      try {
        if (!query.token) throw HttpError.badRequest('invalid_token', accounts.MESSAGES.invalidToken)
        await accounts.verifyEmail(core, audit, query.token, core.clientAddress(request))
        return html(MessagePage({ base, title: 'Email verified', kind: 'ok', text: 'Your email address is verified. You can now sign in.', link: { href: `${base}/`, label: 'Sign in' } }))
      } catch (err) {
        if (!(err instanceof HttpError) || err.status >= 500) throw err
        return html(MessagePage({
          base, title: 'Link invalid or expired', kind: 'error',
          text: 'This verification link is invalid, was already used, or has expired (links last 24 hours). Ask for a new one below.',
          resend: true, link: { href: `${base}/`, label: 'Back to sign in' },
        }), { status: 400 })
      }
    }, {
      // No length limit here (unlike TokenQuery): a mangled, overlong link is an invalid link like any other and
      // gets the same HTML page, not the API's JSON validation error. It is only hashed and looked up.
      query: t.Object({ token: t.Optional(t.String({ description: 'The token of the emailed link' })) }),
      detail: { tags, summary: 'Verify an email address (link from the verification email)', description: 'Answers an HTML page: 200 verified; 400 for an invalid, used or expired (24 h) token.' },
    })
    .post('/resend-verification', async ({ body, request }) => ({
      success: true as const, message: await accounts.resendVerification(core, body.email, core.clientAddress(request)),
    }), {
      body: EmailBody, response: SuccessMessage,
      detail: { tags, summary: 'Resend the verification email', description: 'The same message whether or not the address has an account. 429 after 3 per client address per 15 minutes.' },
    })
    .post('/login', async ({ body, request, set }) => {
      const caller = callerOf(core, request)
      await core.rateLimit.consume(accounts.LOGIN_RULE, caller.ip)
      const result = await accounts.login(core, audit, body, caller)
      if (result.kind === 'requires_2fa') return { requires2FA: true as const }
      const cookie = signInCookie(core, result)
      if (cookie) set.headers['set-cookie'] = cookie
      return { success: true as const, token: result.token, sessionId: result.sessionId, user: result.user }
    }, {
      body: LoginBody, response: LoginResponse,
      detail: {
        tags, summary: 'Sign in',
        description: [
          '401 `Invalid credentials` for an unknown email, a wrong password or a disabled account alike; 403 `Email not verified`;',
          '`{requires2FA: true}` (200) when two-factor authentication is on and no code was sent; 401 `Invalid two-factor code`;',
          '429 (with Retry-After) after 10 attempts per client address per 15 minutes.',
          '',
          'Token transport: `X-Client: web` (or `browser`) signs in a web client: a 30-day token, also set as the httpOnly',
          '`app_auth` cookie (SameSite=Lax), with a 24-hour idle limit. `X-Client: mobile` (or `ios`, `android`, `app`) signs in',
          'a mobile client: a 365-day token for `Authorization: Bearer`, no cookie, no idle limit. Without X-Client a browser',
          'User-Agent (`Mozilla/...`) means web, anything else mobile. Requests send the Bearer header first; the cookie is read when',
          'there is no (or an empty) Bearer value.',
          '',
          'A backup code works in place of the TOTP code, in `totpCode` or in `backupCode`; each code works once.',
        ].join('\n'),
      },
    })
    .post('/forgot-password', async ({ body, request }) => ({
      success: true as const,
      message: await accounts.forgotPassword(core, body.email, body.challengeToken, core.clientAddress(request)),
    }), {
      body: ForgotPasswordBody, response: SuccessMessage,
      detail: { tags, summary: 'Request a password reset email', description: 'The same message whether or not the account exists; the mail goes out in the background. 429 after 5 per client address per hour.' },
    })
    .post('/reset-password', async ({ body, request }) => ({
      success: true as const, ...(await accounts.resetPassword(core, audit, body.token, body.newPassword, core.clientAddress(request))),
    }), {
      body: ResetPasswordBody, response: PasswordChangeResponse,
      detail: { tags, summary: 'Set a new password with an emailed token', description: 'Tokens work once and expire after 1 hour (400). Every session of the account ends. `passwordWarning` when the new password is weak.' },
    })
    .post('/change-password', async ({ body, user, auth, request }) => {
      await core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, core.clientAddress(request))
      return { success: true as const, ...(await accounts.changePassword(core, audit, user, auth.token, body, core.clientAddress(request))) }
    }, {
      auth: 'user', body: ChangePasswordBody, response: PasswordChangeResponse,
      detail: { tags, summary: 'Change the password', description: 'Body `{currentPassword, newPassword}`. 400 when the current password is wrong, or for a single sign-on account (its password lives at the identity provider). The other sessions of the account end; this one stays. `passwordWarning` when the new password is weak.' },
    })
    .post('/logout', async ({ request, set }) => {
      const caller = callerOf(core, request)
      await accounts.logout(core, audit, caller.token?.value ?? null, caller.ip)
      set.headers['set-cookie'] = authCookie(core, null)
      return { success: true as const }
    }, {
      response: Success,
      detail: { tags, summary: 'Sign out', description: 'Deletes the session of the token sent (Bearer or cookie), if any, and clears the cookie.' },
    })
    // The guard read the user's row with the session (one query): the profile is that row, not a second read of it.
    .get('/me', ({ user }) => ({ success: true as const, user: profileOf(user) }), {
      auth: 'user', response: MeResponse,
      detail: { tags, summary: 'The signed-in user', description: '401 `Session revoked` when the session was ended elsewhere; 401 with `idleTimeout: true` after 24 hours without activity (web).' },
    })
    .get('/registration-status', async () => ({ success: true as const, registrationEnabled: await registrationEnabled(core) }), {
      response: RegistrationStatus, detail: { tags, summary: 'Whether new accounts can register' },
    })
    .get('/oidc-status', async () => {
      const oidc = await oidcSettings(core)
      return { success: true as const, oidcEnabled: oidc.enabled, disableLocalAuth: oidc.disableLocalAuth, buttonLabel: oidc.buttonLabel }
    }, {
      response: OidcStatus, detail: { tags, summary: 'Whether single sign-on is offered, and its button label' },
    })
}

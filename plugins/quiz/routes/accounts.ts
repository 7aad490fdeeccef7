// Spec 1, Auth: the JSON API of accounts. Routing, guards, validation and response shaping only.
import { Elysia, t } from 'elysia'
import {
  EmailBody, ForgotPasswordBody, LoginBody, MessageResponse, RegisterBody, RegisterResponse, ResetPasswordBody,
  TokenQuery, TokenResponse, UpdateMeBody, UpdateMeResponse, UserResponse, UserSettings,
} from '../models/accounts'
import * as accounts from '../services/accounts'
import type { QuizState } from '../state'

const tags = ['Auth']

export const accountRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/auth' })
    .use(auth)
    .post('/register', ({ body, request }) => accounts.register(core, body, core.clientAddress(request)), {
      body: RegisterBody, response: RegisterResponse,
      detail: { tags, summary: 'Register', description: 'The first user ever becomes admin and verified and receives a token. Later users receive a verification email. 403 when an admin has disabled registration; 409 when the email is taken.' },
    })
    .post('/login', async ({ body, request }) => ({
      access_token: await accounts.login(core, body, core.clientAddress(request)), token_type: 'bearer' as const,
    }), {
      body: LoginBody, response: TokenResponse,
      detail: { tags, summary: 'Log in', description: '401 invalid credentials; 403 email not verified; 429 (with Retry-After) after 10 attempts per client address per 15 minutes.' },
    })
    .get('/verify-email', async ({ query }) => ({ message: await accounts.verifyEmail(core, query.token) }), {
      query: TokenQuery, response: MessageResponse,
      detail: { tags, summary: 'Verify an email address', description: '400 for an invalid, used or expired (24 h) token.' },
    })
    .post('/resend-verification', async ({ body }) => ({ message: await accounts.resendVerification(core, body.email) }), {
      body: EmailBody, response: MessageResponse,
      detail: { tags, summary: 'Resend the verification email', description: 'The same message whether or not the address exists.' },
    })
    .post('/forgot-password', async ({ body, request }) => ({
      message: await accounts.forgotPassword(core, body, core.clientAddress(request)),
    }), {
      body: ForgotPasswordBody, response: MessageResponse,
      detail: { tags, summary: 'Request a password reset email', description: 'The same answer whether or not the address has an account; the email is sent in the background. 429 after 3 requests per email address per hour.' },
    })
    .post('/reset-password', async ({ body }) => ({ message: await accounts.resetPassword(core, body.token, body.new_password) }), {
      body: ResetPasswordBody, response: MessageResponse,
      detail: { tags, summary: 'Reset the password with an emailed token', description: 'Tokens are single use and expire after 1 hour (400). Earlier access tokens stop working.' },
    })
    .get('/me', ({ user }) => accounts.publicUser(user), {
      role: 'user', response: UserResponse, detail: { tags, summary: 'The signed-in user' },
    })
    .put('/me', ({ user, body }) => accounts.updateMe(core, user.id, body), {
      role: 'user', body: UpdateMeBody, response: UpdateMeResponse,
      detail: { tags, summary: 'Update name or password', description: 'Changing the password needs current_password (400 when missing or wrong) and returns a fresh access_token; older tokens stop working.' },
    })
    .get('/me/settings', ({ user }) => accounts.getUserSettings(core, user.id), {
      role: 'user', response: UserSettings, detail: { tags, summary: 'The caller\'s settings' },
    })
    .put('/me/settings', async ({ user, body }) => {
      await accounts.saveUserSettings(core, user.id, body)
      return { saved: true as const }
    }, {
      // Read as JSON whatever the declared type: a form-encoded body would otherwise be stored as a form's fields.
      role: 'user', parse: 'json', body: t.Unknown({ description: 'Any JSON object, at most 64 KiB' }), response: t.Object({ saved: t.Literal(true) }),
      detail: { tags, summary: 'Replace the caller\'s settings' },
    })

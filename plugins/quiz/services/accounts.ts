// Spec 1, Auth: register, login, email verification, password reset, the caller's profile and settings.
// Plain functions over the core services; nothing here knows about HTTP.
import { verifyChallenge } from '../../../src/auth/challenge'
import { hashPassword, needsRehash, verifyDummyPassword, verifyPassword } from '../../../src/auth/password'
import { signToken, verifyToken } from '../../../src/auth/jwt'
import { oneTimeTokens, resetPasswordMail, verificationMail } from '../../../src/auth/one-time-token'
import { isUniqueViolation, rawSql as raw } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import type { RateRule } from '../../../src/core/ratelimit'
import { publicOrigin } from '../../../src/config'
import type { Core } from '../../../src/plugin'
import {
  USER_SETTINGS_MAX_BYTES, type ForgotPasswordBody, type LoginBody, type RegisterBody, type Role, type UpdateMeBody, type UserResponse,
} from '../models/accounts'
import { getSystemSettings } from './settings'

export const ACCESS_TOKEN_LIFETIME_S = 7 * 24 * 3600
export const VERIFY_TOKEN_LIFETIME_S = 24 * 3600
export const RESET_TOKEN_LIFETIME_S = 3600
export const TOKEN_AUDIENCE = 'quiz'

// spec 1, limits
export const LOGIN_RULE: RateRule = { name: 'quiz.login', limit: 10, windowS: 15 * 60, message: 'Too many login attempts, try again later' }
export const FORGOT_PASSWORD_RULE: RateRule = { name: 'quiz.forgot-password', limit: 3, windowS: 3600, message: 'Too many password reset requests for this address, try again later' }
// Not in the spec: resending is capped the same way so the endpoint cannot be used to flood a mailbox.
export const RESEND_VERIFICATION_RULE: RateRule = { name: 'quiz.resend-verification', limit: 3, windowS: 3600 }

export const MESSAGES = {
  verificationSent: 'Registration successful. Check your email for a verification link.',
  resend: 'If that address has an account waiting for verification, a new verification email has been sent.',
  forgot: 'If an account exists for that address, a password reset email has been sent.',
  verified: 'Email verified. You can now sign in.',
  reset: 'Your password has been reset. You can now sign in.',
  invalidCredentials: 'Incorrect email or password',
  notVerified: 'Email not verified',
  invalidToken: 'Invalid or expired token',
}

/** A user as stored (never the password hash): the response's fields with created_at a Date, and the token version. */
export type UserRow = Omit<UserResponse, 'created_at'> & { created_at: Date; token_version: number }
/** The signed-in user: what the API answers for them, and the token version their token must carry. */
export type QuizUser = UserResponse & { token_version: number }

const RANK: Record<Role, number> = { user: 1, moderator: 2, admin: 3 }
/** spec 1: roles are ordered admin > moderator > user. */
export const hasRole = (user: { role: Role }, min: Role) => RANK[user.role] >= RANK[min]

/** The columns of a user row every service here reads (never the password hash). */
export const USER_COLUMNS = raw('id, email, name, role, is_verified, unthrottled, token_version, created_at')

export const normaliseEmail = (email: string) => email.trim().toLowerCase()

export function toUserResponse(row: UserRow): UserResponse {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    created_at: row.created_at.toISOString(),
    is_verified: row.is_verified,
    unthrottled: row.unthrottled,
  }
}

/** The signed-in user as the API answers them: without the token version. */
// Written out field by field, not with a rest pattern or spread: those copy through the engine's slow path, and this
// runs on every authenticated request.
export const publicUser = (user: QuizUser): UserResponse => ({
  id: user.id, email: user.email, name: user.name, role: user.role, created_at: user.created_at,
  is_verified: user.is_verified, unthrottled: user.unthrottled,
})

export const userSettingsKey = (userId: number) => `quiz:user:${userId}:settings`

/** Links in mails use APP_URL, never the request's Host header (which a client controls). */
export function appLink(core: Core, path: string, token: string): string {
  const origin = publicOrigin(core.config)
  return `${origin}${core.config.quizBasePath}${path}?token=${encodeURIComponent(token)}`
}

export function issueAccessToken(core: Core, user: { id: number; token_version: number }): Promise<string> {
  // jti names this one token, so signing out can refuse it alone (signedOutKey) while the account's others work on.
  const claims = { sub: String(user.id), ver: user.token_version, jti: crypto.randomUUID() }
  return signToken(core.config.jwtSecret, TOKEN_AUDIENCE, claims, ACCESS_TOKEN_LIFETIME_S, core.now())
}

/** The store's mark of a signed-out token, kept until the token would have expired anyway. */
const signedOutKey = (jti: string) => `quiz:signed-out:${jti}`

/** Signing out ends the token itself, as a Bearer too, not only the cookie that held it. */
export async function signOut(core: Core, token: string | null): Promise<void> {
  if (!token) return
  const claims = await verifyToken(core.config.jwtSecret, TOKEN_AUDIENCE, token, core.now())
  if (!claims?.jti || typeof claims.exp !== 'number') return
  const remainingS = claims.exp - Math.floor(core.now() / 1000)
  if (remainingS > 0) await core.kv.set(signedOutKey(claims.jti), true, remainingS)
}

/** The user a token belongs to, or null when the token is invalid, expired, or from before a password change. */
export async function userFromToken(core: Core, token: string): Promise<QuizUser | null> {
  const claims = await verifyToken(core.config.jwtSecret, TOKEN_AUDIENCE, token, core.now())
  const id = Number(claims?.sub)
  if (!claims || !Number.isInteger(id)) return null
  const [row] = await core.db.sql<UserRow>`select ${USER_COLUMNS} from quiz.users where id = ${id}`
  if (!row || row.token_version !== claims.ver) return null
  if (claims.jti && (await core.kv.get(signedOutKey(claims.jti))) !== null) return null
  // The version added to the answer's object rather than spread into a new one (see publicUser).
  const user = toUserResponse(row) as QuizUser
  user.token_version = row.token_version
  return user
}

const tokens = oneTimeTokens('quiz.auth_tokens', MESSAGES.invalidToken)

async function sendVerificationMail(core: Core, user: { id: number; email: string; name: string }) {
  const token = await tokens.create(core.db, user.id, 'verify_email', VERIFY_TOKEN_LIFETIME_S, core.now())
  const link = appLink(core, '/verify-email', token)
  await core.mail.send(verificationMail(user, link, VERIFY_TOKEN_LIFETIME_S))
}

/** Runs mail work after the response: the caller's answer must not depend on whether (or how fast) it happens. */
function inBackground(core: Core, what: string, work: () => Promise<void>) {
  void work().catch((err) => core.log.error({ err }, `${what} failed`))
}

export type RegisterResult =
  | { access_token: string; token_type: 'bearer' }
  | { requires_verification: true; message: string }

/** `clientIp` is the caller's address, which the bot challenge is verified for. */
export async function register(core: Core, input: RegisterBody, clientIp: string): Promise<RegisterResult> {
  await verifyChallenge(core.config.challenge, input.challenge_token, clientIp)
  const email = normaliseEmail(input.email)
  const passwordHash = await hashPassword(input.password)
  const { registration_enabled } = await getSystemSettings(core)
  let created: UserRow
  try {
    created = await core.db.transaction(async (tx) => {
      // Serialise registrations so two concurrent first sign-ups cannot both become admin.
      await tx.sql`select pg_advisory_xact_lock(hashtext('quiz.users.register'))`
      const [existing] = await tx.sql<{ n: number }>`select count(*) as n from quiz.users`
      const first = existing!.n === 0
      // The first account is always allowed: it is how a fresh installation gets its admin.
      if (!first && !registration_enabled) throw HttpError.forbidden('registration_disabled', 'Registration is disabled')
      const [row] = await tx.sql<UserRow>`
        insert into quiz.users (email, name, password_hash, role, is_verified)
        values (${email}, ${input.name.trim()}, ${passwordHash}, ${first ? 'admin' : 'user'}, ${first})
        returning ${USER_COLUMNS}`
      return row!
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw HttpError.conflict('email_taken', 'Email already registered')
    throw err
  }
  if (created.role === 'admin') {
    return { access_token: await issueAccessToken(core, created), token_type: 'bearer' }
  }
  // In the background: a slow or unreachable mail server must not fail a registration that is already stored
  // (the user can ask for the mail again with resend-verification).
  inBackground(core, 'verification mail', () => sendVerificationMail(core, created))
  return { requires_verification: true, message: MESSAGES.verificationSent }
}

/** The access token of a verified user; the attempts of one client address are limited (LOGIN_RULE) before the challenge. */
export async function login(core: Core, input: LoginBody, clientIp: string): Promise<string> {
  await core.rateLimit.consume(LOGIN_RULE, clientIp)
  await verifyChallenge(core.config.challenge, input.challenge_token, clientIp)
  const { email, password } = input
  const [user] = await core.db.sql<UserRow & { password_hash: string }>`
    select ${USER_COLUMNS}, password_hash from quiz.users where lower(email) = ${normaliseEmail(email)}`
  if (!user) {
    await verifyDummyPassword(password)
    throw HttpError.unauthorized('invalid_credentials', MESSAGES.invalidCredentials)
  }
  if (!(await verifyPassword(password, user.password_hash))) {
    throw HttpError.unauthorized('invalid_credentials', MESSAGES.invalidCredentials)
  }
  if (!user.is_verified) throw HttpError.forbidden('email_not_verified', MESSAGES.notVerified)
  if (needsRehash(user.password_hash)) {
    await core.db.sql`update quiz.users set password_hash = ${await hashPassword(password)} where id = ${user.id}`
  }
  return issueAccessToken(core, user)
}

export async function verifyEmail(core: Core, token: string): Promise<string> {
  const userId = await tokens.consume(core.db, token, 'verify_email', core.now())
  await core.db.sql`update quiz.users set is_verified = true where id = ${userId}`
  return MESSAGES.verified
}

export async function resendVerification(core: Core, email: string): Promise<string> {
  const address = normaliseEmail(email)
  const allowed = (await core.rateLimit.hit(RESEND_VERIFICATION_RULE, address)).allowed
  const [user] = await core.db.sql<UserRow>`
    select ${USER_COLUMNS} from quiz.users where lower(email) = ${address} and not is_verified`
  if (user && allowed) inBackground(core, 'verification mail', () => sendVerificationMail(core, user))
  return MESSAGES.resend
}

export async function forgotPassword(core: Core, input: ForgotPasswordBody, clientIp: string): Promise<string> {
  await verifyChallenge(core.config.challenge, input.challenge_token, clientIp)
  const address = normaliseEmail(input.email)
  await core.rateLimit.consume(FORGOT_PASSWORD_RULE, address)
  inBackground(core, 'password reset mail', async () => {
    const [user] = await core.db.sql<UserRow>`select ${USER_COLUMNS} from quiz.users where lower(email) = ${address}`
    if (!user) return
    const token = await tokens.create(core.db, user.id, 'reset_password', RESET_TOKEN_LIFETIME_S, core.now())
    const link = appLink(core, '/reset-password', token)
    await core.mail.send(resetPasswordMail(user, link, RESET_TOKEN_LIFETIME_S))
  })
  return MESSAGES.forgot
}

export async function resetPassword(core: Core, token: string, newPassword: string): Promise<string> {
  const passwordHash = await hashPassword(newPassword)
  await core.db.transaction(async (tx) => {
    const userId = await tokens.consume(tx, token, 'reset_password', core.now())
    // A reset proves control of the mailbox: verify it, end older tokens, and retire other reset links.
    await tx.sql`
      update quiz.users set password_hash = ${passwordHash}, token_version = token_version + 1, is_verified = true
      where id = ${userId}`
    await tx.sql`
      update quiz.auth_tokens set used_at = ${new Date(core.now()).toISOString()}
      where user_id = ${userId} and purpose = 'reset_password' and used_at is null`
  })
  return MESSAGES.reset
}

export async function updateMe(core: Core, userId: number, input: UpdateMeBody): Promise<UserResponse & { access_token?: string }> {
  const name = input.name?.trim()
  if (input.name != null && !name) throw HttpError.unprocessable('invalid_name', 'Name must not be empty', { name: 'Name must not be empty' })
  let passwordHash: string | null = null
  if (input.new_password) {
    if (!input.current_password) throw HttpError.badRequest('current_password_required', 'Current password is required to set a new password')
    const [row] = await core.db.sql<{ password_hash: string }>`select password_hash from quiz.users where id = ${userId}`
    if (!row || !(await verifyPassword(input.current_password, row.password_hash))) {
      throw HttpError.badRequest('current_password_incorrect', 'Current password is incorrect')
    }
    passwordHash = await hashPassword(input.new_password)
  }
  const [row] = await core.db.sql<UserRow>`
    update quiz.users set
      name = coalesce(${name ?? null}::text, name),
      password_hash = coalesce(${passwordHash}::text, password_hash),
      token_version = token_version + ${passwordHash ? 1 : 0}
    where id = ${userId}
    returning ${USER_COLUMNS}`
  if (!row) throw HttpError.unauthorized('not_authenticated', 'Not authenticated')
  const response = toUserResponse(row)
  return passwordHash ? { ...response, access_token: await issueAccessToken(core, row) } : response
}

export async function getUserSettings(core: Core, userId: number): Promise<Record<string, unknown>> {
  return (await core.kv.get<Record<string, unknown>>(userSettingsKey(userId))) ?? {}
}

export async function saveUserSettings(core: Core, userId: number, settings: unknown): Promise<void> {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw HttpError.unprocessable('invalid_settings', 'Settings must be a JSON object', { '': 'Settings must be a JSON object' })
  }
  if (new TextEncoder().encode(JSON.stringify(settings)).length > USER_SETTINGS_MAX_BYTES) {
    throw HttpError.tooLarge('settings_too_large', `Settings must be at most ${USER_SETTINGS_MAX_BYTES / 1024} KiB`)
  }
  await core.kv.set(userSettingsKey(userId), settings)
}

// Spec 2, Authentication and accounts: register, email verification, login with its rules, password reset and
// change, logout and the profile. Plain functions over the core services and the audit writer; a request is only
// the Caller the edge made of it, and a started session is its token: the edge turns it into the cookie.
import { verifyChallenge } from '../../../src/auth/challenge'
import { signToken, verifyToken } from '../../../src/auth/jwt'
import { hashPassword, needsRehash, verifyDummyPassword, verifyPassword } from '../../../src/auth/password'
import { oneTimeTokens, resetPasswordMail, verificationMail } from '../../../src/auth/one-time-token'
import { isUniqueViolation, rawSql } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import type { RateRule } from '../../../src/core/ratelimit'
import { publicOrigin } from '../../../src/config'
import type { Core } from '../../../src/plugin'
import type { AuditWriter } from '../audit'
import type { RegisterBody, SessionUser } from '../models/accounts'
import { oidcSettings, registrationEnabled } from './app-config'
import { endSession, endUserSessions, recordSignIn, startSession, type Caller, type StartedSession } from './sessions'
import { verifyLoginCode } from './two-factor'
import { markEmailVerified, toClinicalUser, toSessionUser, USER_COLUMNS, type ClinicalUserRow } from './users'

export const VERIFY_TOKEN_LIFETIME_S = 24 * 3600
export const RESET_TOKEN_LIFETIME_S = 3600
/** The pending second step of a page sign-in: password checked, code still needed. */
export const TWO_FACTOR_PENDING_LIFETIME_S = 5 * 60
const TWO_FACTOR_PENDING_AUDIENCE = 'clinical-2fa-pending'

// spec 2, limits (per client address)
export const LOGIN_RULE: RateRule = { name: 'clinical.login', limit: 10, windowS: 15 * 60, message: 'Too many login attempts, try again later' }
export const REGISTER_RULE: RateRule = { name: 'clinical.register', limit: 5, windowS: 3600, message: 'Too many registrations from this address, try again later' }
export const FORGOT_PASSWORD_RULE: RateRule = { name: 'clinical.forgot-password', limit: 5, windowS: 3600, message: 'Too many password reset requests, try again later' }
export const RESEND_VERIFICATION_RULE: RateRule = { name: 'clinical.resend-verification', limit: 3, windowS: 15 * 60, message: 'Too many verification emails requested, try again later' }
// Not in spec 2's per-address table: the mails one account receives are capped as well (the quiz service's 3 an
// hour), so rotating client addresses cannot flood a mailbox. Over the cap nothing is sent and the answer is the same.
export const RESET_MAIL_RULE: RateRule = { name: 'clinical.reset-mail', limit: 3, windowS: 3600 }
export const VERIFICATION_MAIL_RULE: RateRule = { name: 'clinical.verification-mail', limit: 3, windowS: 3600 }
/** change-password, setup-2fa, verify-2fa, disable-2fa (and the backup-code routes, which also take a password). */
export const ACCOUNT_SECURITY_RULE: RateRule = { name: 'clinical.account-security', limit: 20, windowS: 15 * 60, message: 'Too many attempts, try again later' }

export const MESSAGES = {
  verificationSent: 'Registration successful. Check your email for a verification link.',
  registered: 'Registration successful. You are signed in.',
  resend: 'If that address has an account waiting for verification, a new verification email has been sent.',
  forgot: 'If an account exists for that address, a password reset email has been sent.',
  invalidCredentials: 'Invalid credentials',
  notVerified: 'Email not verified',
  invalidToken: 'This link is invalid or has expired',
  invalidCode: 'Invalid two-factor code',
  ssoPassword: 'This account signs in through single sign-on: its password is managed by your identity provider',
  localAuthDisabled: 'Password sign-in is disabled: use single sign-on',
}

/** Serialises account creation (register, first single sign-on) so two concurrent first accounts cannot both become admin. */
export const REGISTRATION_LOCK = 'clinical.users.register'

export const normaliseEmail = (email: string) => email.trim().toLowerCase()

/** Links in mails use APP_URL, never the request's Host header (which a client controls). */
export function appLink(core: Core, path: string, token: string): string {
  const origin = publicOrigin(core.config)
  return `${origin}${core.config.clinicalBasePath}${path}?token=${encodeURIComponent(token)}`
}

/** Runs mail work after the response: the caller's answer must not depend on whether (or how fast) it happens. */
function inBackground(core: Core, what: string, work: () => Promise<void>) {
  void work().catch((err) => core.log.error({ err }, `${what} failed`))
}

// ---- password strength ----------------------------------------------------------------------------------

const COMMON_PASSWORDS = new Set([
  'password', 'password1', 'password123', '12345678', '123456789', '1234567890', 'qwertyuiop', 'qwerty123', 'iloveyou',
  'letmein1', 'welcome1', 'admin123', 'abc12345', 'football', 'baseball', 'sunshine', 'princess', 'passw0rd', '11111111',
  'changeme', 'trustno1', 'starwars', 'whatever', 'superman', 'master12', 'hospital', 'clinic123', 'doctor123', 'nurse123',
])
export const STRONG_PASSWORD_LENGTH = 12

/** A warning for a password that is allowed but weak, or undefined (spec 2, reset-password `passwordWarning`). */
export function passwordWarning(password: string, context: { email?: string; name?: string } = {}): string | undefined {
  const lower = password.toLowerCase()
  const local = context.email?.split('@')[0]?.toLowerCase()
  if (COMMON_PASSWORDS.has(lower)) return 'This password is one of the most common passwords; choose a less predictable one.'
  if (local && local.length >= 3 && lower.includes(local)) return 'This password contains your email address; choose one that does not.'
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((r) => r.test(password)).length
  if (password.length < STRONG_PASSWORD_LENGTH && classes < 3) {
    return `This password is weak: use at least ${STRONG_PASSWORD_LENGTH} characters, or mix upper and lower case, digits and symbols.`
  }
  if (new Set(password).size <= 3) return 'This password repeats few characters; choose a less predictable one.'
  return undefined
}

// ---- one-time tokens ------------------------------------------------------------------------------------

const tokens = oneTimeTokens('clinical.auth_tokens', MESSAGES.invalidToken)

async function sendVerificationMail(core: Core, user: { id: number; email: string; name: string }) {
  const token = await tokens.create(core.db, user.id, 'verify_email', VERIFY_TOKEN_LIFETIME_S, core.now())
  const link = appLink(core, '/api/auth/verify-email', token)
  await core.mail.send(verificationMail(user, link, VERIFY_TOKEN_LIFETIME_S))
}

// ---- register -------------------------------------------------------------------------------------------

export type RegisterResult =
  | { success: true; needsVerification: true; message: string }
  | ({ success: true; needsVerification: false; message: string } & StartedSession & { user: SessionUser })

/**
 * The first user becomes admin. With mail sending configured every account waits for its email link; without
 * mail it is verified and signed in at once (spec 2, register; spec 3, User account).
 */
export async function register(core: Core, audit: AuditWriter, input: RegisterBody, caller: Caller): Promise<RegisterResult> {
  const { ip } = caller
  await core.rateLimit.consume(REGISTER_RULE, ip)
  await verifyChallenge(core.config.challenge, input.challengeToken, ip)
  const email = normaliseEmail(input.email)
  const name = input.name.trim()
  if (!name) throw HttpError.badRequest('invalid_name', 'Name must not be empty', { name: 'Name must not be empty' })
  const [enabled, oidc] = await Promise.all([registrationEnabled(core), oidcSettings(core)])
  const passwordHash = await hashPassword(input.password)
  let created: ClinicalUserRow
  try {
    created = await core.db.transaction(async (tx) => {
      await tx.sql`select pg_advisory_xact_lock(hashtext(${REGISTRATION_LOCK}))`
      const [count] = await tx.sql<{ n: number }>`select count(*)::int as n from clinical.users`
      const first = count!.n === 0
      // The first account is always allowed: it is how a fresh installation gets its admin.
      if (!first && !enabled) throw HttpError.forbidden('registration_disabled', 'Registration is disabled')
      if (!first && oidc.disableLocalAuth) throw HttpError.forbidden('local_auth_disabled', MESSAGES.localAuthDisabled)
      // spec 2 and 3: with mail sending configured every account, the first one too, confirms its address.
      const verified = !core.mail.configured
      const [row] = await tx.sql<ClinicalUserRow>`
        insert into clinical.users (name, email, password_hash, role, email_verified)
        values (${name}, ${email}, ${passwordHash}, ${first ? 'admin' : 'user'}, ${verified})
        returning ${rawColumns}`
      return row!
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw HttpError.conflict('email_taken', 'Email already registered')
    throw err
  }
  audit.write({ action: 'register', userId: created.id, ip, details: { role: created.role, verified: created.email_verified } })
  if (!created.email_verified) {
    // In the background: a slow or unreachable mail server must not fail a registration that is already stored
    // (the user can ask for the mail again with resend-verification).
    inBackground(core, 'verification mail', () => sendVerificationMail(core, created))
    return { success: true, needsVerification: true, message: MESSAGES.verificationSent }
  }
  const session = await signedIn(core, audit, created, caller, 'register')
  return { success: true, needsVerification: false, message: MESSAGES.registered, ...session }
}

const rawColumns = rawSql(USER_COLUMNS)

// ---- login ----------------------------------------------------------------------------------------------

export interface LoginInput {
  email: string
  password: string
  totpCode?: string
  backupCode?: string
}

export type LoginResult =
  | ({ kind: 'signed_in'; user: SessionUser } & StartedSession)
  | { kind: 'requires_2fa'; pendingToken: string }

/**
 * spec 2, login rules: unknown email, wrong password and disabled account all answer `Invalid credentials`
 * (401), an unknown email after a dummy-hash comparison so the timing matches; an unverified account answers
 * `Email not verified` (403), only after its password matched. With 2FA on and no code: requires2FA.
 * The login rate limit is the caller's (routes), so the pages' second step counts against it too.
 */
export async function login(core: Core, audit: AuditWriter, input: LoginInput, caller: Caller): Promise<LoginResult> {
  const { ip } = caller
  const email = normaliseEmail(input.email)
  const [user] = await core.db.sql<ClinicalUserRow & { password_hash: string }>`
    select ${rawColumns}, password_hash from clinical.users where lower(email) = ${email}`
  const fail = async (reason: string, action: 'login_failed' | 'login_blocked' = 'login_failed') => {
    audit.write({ action, userId: user?.id ?? null, ip, details: { reason, email } })
    await recordSignIn(core, caller, { userId: user?.id ?? null, email, outcome: action === 'login_failed' ? 'failed' : 'blocked', reason })
    return HttpError.unauthorized('invalid_credentials', MESSAGES.invalidCredentials)
  }
  const refuse = async (reason: string) => {
    audit.write({ action: 'login_blocked', userId: user!.id, ip, details: { reason } })
    await recordSignIn(core, caller, { userId: user!.id, email, outcome: 'blocked', reason })
  }
  if (!user) {
    await verifyDummyPassword(input.password)
    throw await fail('unknown_email')
  }
  if (!(await verifyPassword(input.password, user.password_hash))) throw await fail('wrong_password')
  if (user.disabled) throw await fail('disabled', 'login_blocked')
  if (!user.email_verified) {
    await refuse('email_not_verified')
    throw HttpError.forbidden('email_not_verified', MESSAGES.notVerified)
  }
  if (user.role !== 'admin' && (await oidcSettings(core)).disableLocalAuth) {
    await refuse('local_auth_disabled')
    throw HttpError.forbidden('local_auth_disabled', MESSAGES.localAuthDisabled)
  }
  if (user.totp_enabled) {
    if (!input.totpCode?.trim() && !input.backupCode?.trim()) {
      return { kind: 'requires_2fa', pendingToken: await pendingTwoFactorToken(core, user.id) }
    }
    await secondFactor(core, audit, user, input, caller)
  }
  // spec 2, passwords: an older hash (bcrypt) is replaced by argon2id after a successful login, second factor included.
  if (needsRehash(user.password_hash)) {
    await core.db.sql`update clinical.users set password_hash = ${await hashPassword(input.password)} where id = ${user.id}`
  }
  return { kind: 'signed_in', ...(await signedIn(core, audit, user, caller, 'login')) }
}

async function secondFactor(
  core: Core, audit: AuditWriter, user: Pick<ClinicalUserRow, 'id' | 'email'>, input: Pick<LoginInput, 'totpCode' | 'backupCode'>,
  caller: Pick<Caller, 'ip' | 'client'>,
) {
  const { ip } = caller
  if (!(await verifyLoginCode(core, audit, user.id, input, ip))) {
    audit.write({ action: 'login_failed', userId: user.id, ip, details: { reason: 'invalid_2fa_code' } })
    await recordSignIn(core, caller, { userId: user.id, email: user.email, outcome: 'failed', reason: 'invalid_2fa_code' })
    throw HttpError.unauthorized('invalid_2fa_code', MESSAGES.invalidCode)
  }
}

function pendingTwoFactorToken(core: Core, userId: number): Promise<string> {
  return signToken(core.config.jwtSecret, TWO_FACTOR_PENDING_AUDIENCE, { sub: String(userId) }, TWO_FACTOR_PENDING_LIFETIME_S, core.now())
}

/** The second step of a page sign-in: the pending token of the first step plus a TOTP or backup code. */
export async function completeTwoFactorLogin(core: Core, audit: AuditWriter, pendingToken: string, code: string, caller: Caller) {
  const claims = await verifyToken(core.config.jwtSecret, TWO_FACTOR_PENDING_AUDIENCE, pendingToken, core.now())
  const userId = Number(claims?.sub)
  if (!claims || !Number.isSafeInteger(userId)) throw HttpError.unauthorized('sign_in_expired', 'The sign-in expired: enter your email and password again')
  const [user] = await core.db.sql<ClinicalUserRow>`select ${rawColumns} from clinical.users where id = ${userId}`
  if (user?.disabled) await recordSignIn(core, caller, { userId: user.id, email: user.email, outcome: 'blocked', reason: 'disabled' })
  if (!user || user.disabled) throw HttpError.unauthorized('invalid_credentials', MESSAGES.invalidCredentials)
  await secondFactor(core, audit, user, { totpCode: code }, caller)
  return signedIn(core, audit, user, caller, 'login')
}

/** Starts the session of a successful sign-in (for the caller's client kind), records last_login and the audit entry. */
export async function signedIn(
  core: Core, audit: AuditWriter, user: ClinicalUserRow, caller: Pick<Caller, 'ip' | 'userAgent' | 'client'>,
  action: 'login' | 'login_oidc' | 'register',
): Promise<StartedSession & { user: SessionUser }> {
  const session = await startSession(core, user.id, caller)
  await core.db.sql`update clinical.users set last_login = ${new Date(core.now()).toISOString()} where id = ${user.id}`
  if (action !== 'register') {
    audit.write({ action, userId: user.id, ip: caller.ip, details: { client: session.client, sessionId: session.sessionId } })
    await recordSignIn(core, caller, { userId: user.id, email: user.email, outcome: action === 'login' ? 'success' : 'oidc' })
  }
  return { ...session, user: toSessionUser(user) }
}

// ---- email verification ---------------------------------------------------------------------------------

export async function verifyEmail(core: Core, audit: AuditWriter, token: string, ip: string): Promise<void> {
  const userId = await tokens.consume(core.db, token, 'verify_email', core.now())
  await markEmailVerified(core, userId)
  audit.write({ action: 'email_verified', userId, ip })
}

export async function resendVerification(core: Core, email: string, ip: string): Promise<string> {
  await core.rateLimit.consume(RESEND_VERIFICATION_RULE, ip)
  const address = normaliseEmail(email)
  inBackground(core, 'verification mail', async () => {
    const [user] = await core.db.sql<ClinicalUserRow>`
      select ${rawColumns} from clinical.users where lower(email) = ${address} and not email_verified and not disabled`
    if (!user) return
    if (!(await core.rateLimit.hit(VERIFICATION_MAIL_RULE, address)).allowed) {
      core.log.info({ userId: user.id }, 'verification mail not sent: the account\'s hourly cap is reached')
      return
    }
    await sendVerificationMail(core, user)
  })
  return MESSAGES.resend
}

// ---- passwords ------------------------------------------------------------------------------------------

export async function forgotPassword(core: Core, email: string, challengeToken: string | null | undefined, ip: string): Promise<string> {
  await core.rateLimit.consume(FORGOT_PASSWORD_RULE, ip)
  await verifyChallenge(core.config.challenge, challengeToken, ip)
  const address = normaliseEmail(email)
  inBackground(core, 'password reset mail', async () => {
    const [user] = await core.db.sql<ClinicalUserRow>`
      select ${rawColumns} from clinical.users where lower(email) = ${address} and can_local_auth and not disabled`
    if (!user) return
    if (!(await core.rateLimit.hit(RESET_MAIL_RULE, address)).allowed) {
      core.log.info({ userId: user.id }, 'password reset mail not sent: the account\'s hourly cap is reached')
      return
    }
    const token = await tokens.create(core.db, user.id, 'reset_password', RESET_TOKEN_LIFETIME_S, core.now())
    const link = appLink(core, '/reset-password', token)
    await core.mail.send(resetPasswordMail(user, link, RESET_TOKEN_LIFETIME_S))
  })
  return MESSAGES.forgot
}

/** Sets the new password, verifies the address (the mail reached it) and ends every session of the user. */
export async function resetPassword(core: Core, audit: AuditWriter, token: string, newPassword: string, ip: string): Promise<{ passwordWarning?: string }> {
  const passwordHash = await hashPassword(newPassword)
  const user = await core.transaction(async (tx) => {
    const userId = await tokens.consume(tx.db, token, 'reset_password', core.now())
    const [row] = await tx.db.sql<{ id: number; email: string; name: string }>`
      update clinical.users set password_hash = ${passwordHash}, email_verified = true
      where id = ${userId} and can_local_auth returning id, email, name`
    if (!row) throw HttpError.badRequest('invalid_token', MESSAGES.invalidToken)
    await tx.db.sql`
      update clinical.auth_tokens set used_at = ${new Date(core.now()).toISOString()}
      where user_id = ${userId} and purpose = 'reset_password' and used_at is null`
    await endUserSessions(tx, userId)
    return row
  })
  audit.write({ action: 'password_reset', userId: user.id, ip })
  const warning = passwordWarning(newPassword, user)
  return warning ? { passwordWarning: warning } : {}
}

/** Needs the current password; SSO accounts are refused; every other session of the user ends. */
export async function changePassword(
  core: Core, audit: AuditWriter, user: { id: number; canLocalAuth: boolean }, currentToken: string,
  input: { currentPassword: string; newPassword: string }, ip: string,
): Promise<{ passwordWarning?: string }> {
  if (!user.canLocalAuth) throw HttpError.badRequest('sso_account', MESSAGES.ssoPassword)
  const [row] = await core.db.sql<{ password_hash: string; email: string; name: string }>`
    select password_hash, email, name from clinical.users where id = ${user.id}`
  if (!row || !(await verifyPassword(input.currentPassword, row.password_hash))) {
    throw HttpError.badRequest('current_password_incorrect', 'Current password is incorrect', { currentPassword: 'Current password is incorrect' })
  }
  await core.db.sql`update clinical.users set password_hash = ${await hashPassword(input.newPassword)} where id = ${user.id}`
  await endUserSessions(core, user.id, currentToken)
  audit.write({ action: 'password_changed', userId: user.id, ip })
  const warning = passwordWarning(input.newPassword, row)
  return warning ? { passwordWarning: warning } : {}
}

// ---- logout ---------------------------------------------------------------------------------------------

export async function logout(core: Core, audit: AuditWriter, token: string | null, ip: string): Promise<void> {
  if (!token) return
  const ended = await endSession(core, token)
  if (ended) audit.write({ action: 'logout', userId: ended.userId, ip })
}

// TypeBox models of spec 2's accounts, sessions and two-factor endpoints; the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int } from '../../../src/core/schema'

// spec 2: password composition rules are not shown; NIST SP 800-63B's floor of 8 characters, and a ceiling
// that keeps hashing bounded. Weak but allowed passwords get a `passwordWarning`.
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 256
export const NAME_MAX = 120
export const EMAIL_MAX = 254
/** A TOTP code (6 digits) or a backup code (XXXXX-XXXXX, the dash optional). */
export const CODE_MAX = 32

export const ROLES = ['admin', 'moderator', 'user'] as const
export type Role = (typeof ROLES)[number]
export const Role = t.Union([t.Literal('admin'), t.Literal('moderator'), t.Literal('user')], { description: 'admin > moderator > user' })

const Email = t.String({ format: 'email', maxLength: EMAIL_MAX, description: 'Compared case-insensitively' })
const NewPassword = t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters` })
const AnyPassword = t.String({ minLength: 1, maxLength: PASSWORD_MAX })
const ChallengeToken = t.Optional(t.Nullable(t.String({
  maxLength: 4096,
  description: 'Bot-challenge token; required only when the server has CHALLENGE_SECRET_KEY set',
})))
const PasswordWarning = t.Optional(t.String({ description: 'Present when the new password is accepted but weak (short, one kind of character, or common)' }))

/** The user object of login and register responses (spec 2). */
export const SessionUser = t.Object({
  id: Int(),
  name: t.String(),
  email: t.String(),
  role: Role,
  totp_enabled: t.Boolean(),
  email_verified: t.Boolean(),
})
export type SessionUser = typeof SessionUser.static

/** The profile of GET /api/auth/me: the session user plus canLocalAuth. */
export const ProfileUser = t.Composite([SessionUser, t.Object({
  canLocalAuth: t.Boolean({ description: 'False for accounts created through single sign-on' }),
})])
export type ProfileUser = typeof ProfileUser.static

export const Success = t.Object({ success: t.Literal(true) })
export const SuccessMessage = t.Object({ success: t.Literal(true), message: t.String() })

export const LoginSuccess = t.Object({
  success: t.Literal(true),
  token: t.String({ description: 'The JWT: web clients also receive it as the httpOnly app_auth cookie; mobile clients send it as Bearer' }),
  sessionId: t.String({ format: 'uuid' }),
  user: SessionUser,
})

export const RegisterBody = t.Object({
  name: t.String({ minLength: 1, maxLength: NAME_MAX }),
  email: Email,
  password: NewPassword,
  challengeToken: ChallengeToken,
})
export type RegisterBody = typeof RegisterBody.static
export const RegisterResponse = t.Union([
  t.Object({ success: t.Literal(true), needsVerification: t.Literal(true), message: t.String() }),
  t.Composite([
    t.Object({ needsVerification: t.Literal(false), message: t.String() }),
    LoginSuccess,
  ], { description: 'Without mail sending the account is verified and signed in at once' }),
])

export const LoginBody = t.Object({
  email: t.String({ minLength: 1, maxLength: EMAIL_MAX }),
  password: AnyPassword,
  totpCode: t.Optional(t.String({
    maxLength: CODE_MAX,
    description: 'Required when two-factor authentication is enabled: the 6-digit TOTP code, or one of the backup codes (XXXXX-XXXXX)',
  })),
  backupCode: t.Optional(t.String({
    maxLength: CODE_MAX,
    description: 'A backup code (XXXXX-XXXXX) in place of totpCode; each code works once',
  })),
})
export type LoginBody = typeof LoginBody.static
export const LoginResponse = t.Union([
  LoginSuccess,
  t.Object({ requires2FA: t.Literal(true) }, { description: 'Password correct, two-factor code missing: send the request again with totpCode' }),
])

export const EmailBody = t.Object({ email: t.String({ minLength: 1, maxLength: EMAIL_MAX }) })
export const ForgotPasswordBody = t.Object({ email: t.String({ minLength: 1, maxLength: EMAIL_MAX }), challengeToken: ChallengeToken })
export const ResetPasswordBody = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }), newPassword: NewPassword })
export const PasswordChangeResponse = t.Object({ success: t.Literal(true), passwordWarning: PasswordWarning })
export const ChangePasswordBody = t.Object({ currentPassword: AnyPassword, newPassword: NewPassword })
export const TokenQuery = t.Object({ token: t.Optional(t.String({ maxLength: 512 })) })

/** One of the caller's sessions (GET /api/auth/sessions). */
export const SessionListing = t.Object({
  id: t.String({ format: 'uuid', description: 'The sessionId of the login response' }),
  client: t.Union([t.Literal('web'), t.Literal('mobile')]),
  ip_address: t.Nullable(t.String()),
  device_label: t.Nullable(t.String({ description: 'The User-Agent of the sign-in' })),
  created_at: t.String({ format: 'date-time' }),
  last_activity: t.String({ format: 'date-time' }),
  current: t.Boolean({ description: 'True for the session of this request' }),
})
export type SessionListing = typeof SessionListing.static
export const SessionList = t.Object({ success: t.Literal(true), sessions: t.Array(SessionListing) })

export const MeResponse = t.Object({ success: t.Literal(true), user: ProfileUser })
export const RegistrationStatus = t.Object({ success: t.Literal(true), registrationEnabled: t.Boolean() })
export const OidcStatus = t.Object({
  success: t.Literal(true),
  oidcEnabled: t.Boolean(),
  disableLocalAuth: t.Boolean(),
  buttonLabel: t.String(),
})

// ---- two-factor ----
export const SetupTwoFactorResponse = t.Object({
  success: t.Literal(true),
  secret: t.String({ description: 'Base32 TOTP secret, for manual entry' }),
  otpauthUrl: t.String({ description: 'The otpauth:// URI the QR code encodes' }),
  qrCode: t.String({ description: 'data:image/png;base64 URI of the QR code' }),
})
export const CodeBody = t.Object({ code: t.String({ minLength: 1, maxLength: CODE_MAX, description: 'The 6-digit TOTP code' }) })
export const BackupCodesResponse = t.Object({
  success: t.Literal(true),
  backupCodes: t.Array(t.String(), { description: '10 one-time codes XXXXX-XXXXX; shown once, stored hashed' }),
})
export const PasswordBody = t.Object({ password: AnyPassword })
export const BackupCodeCount = t.Object({ success: t.Literal(true), remaining: Int({ minimum: 0 }) })

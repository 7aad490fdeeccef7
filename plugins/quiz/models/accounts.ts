// TypeBox models of the quiz service's accounts (spec 1, Auth); the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int } from '../../../src/core/schema'

export const PASSWORD_MIN = 8 // spec 1, limits: password at least 8 characters
export const PASSWORD_MAX = 256
export const NAME_MAX = 120
export const EMAIL_MAX = 254
export const USER_SETTINGS_MAX_BYTES = 64 * 1024

export const ROLES = ['admin', 'moderator', 'user'] as const
export type Role = (typeof ROLES)[number]
export const Role = t.Union([t.Literal('admin'), t.Literal('moderator'), t.Literal('user')], { description: 'admin > moderator > user' })

export const Email = t.String({ format: 'email', maxLength: EMAIL_MAX, description: 'Compared case-insensitively' })
export const Password = t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX })
const ChallengeToken = t.Optional(t.Nullable(t.String({
  maxLength: 4096,
  description: 'Bot-challenge token; required only when the server has CHALLENGE_SECRET_KEY set',
})))

export const UserResponse = t.Object({
  id: Int(),
  email: t.String(),
  name: t.String(),
  role: Role,
  created_at: t.String({ format: 'date-time' }),
  is_verified: t.Boolean(),
  unthrottled: t.Boolean(),
})
export type UserResponse = typeof UserResponse.static

export const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal('bearer'),
})
export const MessageResponse = t.Object({ message: t.String() })

export const RegisterBody = t.Object({
  email: Email,
  password: Password,
  name: t.String({ minLength: 1, maxLength: NAME_MAX }),
  challenge_token: ChallengeToken,
})
export type RegisterBody = typeof RegisterBody.static
export const RegisterResponse = t.Union([
  TokenResponse,
  t.Object({ requires_verification: t.Literal(true), message: t.String() }),
])

export const LoginBody = t.Object({
  email: t.String({ minLength: 1, maxLength: EMAIL_MAX }),
  password: t.String({ minLength: 1, maxLength: PASSWORD_MAX }),
  challenge_token: ChallengeToken,
})
export type LoginBody = typeof LoginBody.static

export const EmailBody = t.Object({ email: t.String({ minLength: 1, maxLength: EMAIL_MAX }) })
export const ForgotPasswordBody = t.Object({ email: t.String({ minLength: 1, maxLength: EMAIL_MAX }), challenge_token: ChallengeToken })
export type ForgotPasswordBody = typeof ForgotPasswordBody.static
export const ResetPasswordBody = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }), new_password: Password })
export const TokenQuery = t.Object({ token: t.String({ minLength: 1, maxLength: 512 }) })

export const UpdateMeBody = t.Object({
  name: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: NAME_MAX }))),
  current_password: t.Optional(t.Nullable(t.String({ maxLength: PASSWORD_MAX, description: 'Required when new_password is set' }))),
  new_password: t.Optional(t.Nullable(Password)),
})
export type UpdateMeBody = typeof UpdateMeBody.static
export const UpdateMeResponse = t.Composite([
  UserResponse,
  t.Object({ access_token: t.Optional(t.String({ description: 'A fresh token, present when the password changed: older tokens stop working' })) }),
])

export const UserSettings = t.Record(t.String(), t.Unknown(), { description: 'Any JSON object, at most 64 KiB' })

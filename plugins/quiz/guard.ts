// The quiz service's one role guard: `role: 'user' | 'moderator' | 'admin'` on a route resolves the caller from
// the Bearer token and refuses a lower role. Roles are ordered admin > moderator > user (spec 1).
import { Elysia } from 'elysia'
import { bearerToken } from '../../src/auth/jwt'
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import type { Role } from './models/accounts'
import { userFromToken, type QuizUser } from './services/accounts'

const RANK: Record<Role, number> = { user: 1, moderator: 2, admin: 3 }
export const hasRole = (user: { role: Role }, min: Role) => RANK[user.role] >= RANK[min]

/** Named per Core (tests boot several apps), so every controller of one app shares one instance. */
export const quizAuth = (core: Core) =>
  new Elysia({ name: 'quiz.auth', seed: core.id }).macro({
    role: (min: Role) => ({
      detail: { security: [{ bearer: [] }] },
      async resolve({ headers }): Promise<{ user: QuizUser }> {
        const token = bearerToken(headers.authorization)
        const user = token ? await userFromToken(core, token) : null
        if (!user) throw HttpError.unauthorized('not_authenticated', 'Not authenticated')
        if (!hasRole(user, min)) throw HttpError.forbidden('insufficient_role', 'Not enough permissions')
        return { user }
      },
    }),
  })

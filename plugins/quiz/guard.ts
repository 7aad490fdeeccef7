// The quiz service's edge: the API's role guard and the browser pages' kit. Each turns a request into the signed-in
// user (the Bearer token of the API, the session cookie of the pages); the rules stay in services/accounts.ts.
import { Elysia } from 'elysia'
import { httpOnlyCookie, readCookie } from '../../src/auth/cookie'
import { bearerToken } from '../../src/auth/jwt'
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import { pageKit } from '../../views/page'
import type { Role } from './models/accounts'
import { ACCESS_TOKEN_LIFETIME_S, hasRole, userFromToken, type QuizUser } from './services/accounts'

/** The pages' session: the same JWT the API uses, in an httpOnly SameSite=Lax cookie scoped to the quiz path. */
export const SESSION_COOKIE = 'quiz_auth'

/**
 * `role: 'user' | 'moderator' | 'admin'` on a route resolves the caller from the Bearer token and refuses a lower
 * role. Named per Core (tests boot several apps), so every controller of one app shares one instance.
 */
export const quizAuth = (core: Core) =>
  new Elysia({ name: 'quiz.auth', seed: core.id }).macro({
    role: (min: Role) => ({
      detail: { security: [{ bearer: [] }] },
      // The header read off the request: naming `headers` here would have Elysia copy every request header into an
      // object first, on every route of the API.
      async resolve({ request }): Promise<{ user: QuizUser }> {
        const token = bearerToken(request.headers.get('authorization'))
        const user = token ? await userFromToken(core, token) : null
        if (!user) throw HttpError.unauthorized('not_authenticated', 'Not authenticated')
        if (!hasRole(user, min)) throw HttpError.forbidden('insufficient_role', 'Not enough permissions')
        return { user }
      },
    }),
  })

/** The Set-Cookie value that signs a browser in with a token, or (null) signs it out. */
export const sessionCookie = (core: Core, token: string | null) =>
  httpOnlyCookie(core.config, SESSION_COOKIE, token, core.config.quizBasePath || '/', ACCESS_TOKEN_LIFETIME_S)

/**
 * The page kit of the quiz pages: `page: true` and `signedIn: true` (views/page.ts; signed out, the browser is sent
 * to the sign-in page), and `visitor: true` for a public page that looks at who is signed in (`user`, or null).
 */
export const quizPages = (core: Core) => {
  const cookieUser = async (request: Request): Promise<QuizUser | null> => {
    const token = readCookie(request, SESSION_COOKIE)
    return token ? userFromToken(core, token) : null
  }
  return new Elysia({ name: 'quiz.pages', seed: core.id })
    .use(pageKit({
      name: 'quiz.page-kit',
      seed: core.id,
      appUrl: core.config.appUrl,
      signInUrl: `${core.config.quizBasePath}/login`,
      htmxSignedOut: 'redirect',
      async session(request) {
        const user = await cookieUser(request)
        return { session: user ? { user } : null }
      },
    }))
    .macro({
      visitor: {
        async resolve({ request }): Promise<{ user: QuizUser | null }> {
          return { user: await cookieUser(request) }
        },
      },
    })
}

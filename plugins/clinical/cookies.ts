// The clinical service's cookies, built at the edge only (API routes, the guard, the pages): the services answer
// tokens and flags, never a Set-Cookie. Both cookies are httpOnly and SameSite=Lax, Secure over https.
import { httpOnlyCookie, readCookie } from '../../src/auth/cookie'
import type { Core } from '../../src/plugin'
import { OIDC_STATE_LIFETIME_S } from './services/oidc'
import { WEB_TOKEN_LIFETIME_S, type StartedSession } from './services/sessions'

/** spec 2, token transport: the web client's session cookie. */
export const AUTH_COOKIE = 'app_auth'
/** The browser-binding cookie of a single sign-on: a random value whose SHA-256 is inside the state token. */
export const OIDC_BINDING_COOKIE = 'app_oidc_binding'

/** The session cookie (null clears it), scoped to the clinical app, with the web token's 30-day max age. */
export const authCookie = (core: Pick<Core, 'config'>, token: string | null): string =>
  httpOnlyCookie(core.config, AUTH_COOKIE, token, core.config.clinicalBasePath || '/', WEB_TOKEN_LIFETIME_S)

/** The cookie a sign-in sets: a web session's token, or none for a mobile client (it sends Bearer). */
export const signInCookie = (core: Pick<Core, 'config'>, session: Pick<StartedSession, 'token' | 'client'>): string | null =>
  session.client === 'web' ? authCookie(core, session.token) : null

/** The binding cookie (null clears it); SameSite=Lax suffices: the identity provider's redirect is a top-level GET. */
export const bindingCookie = (core: Pick<Core, 'config'>, value: string | null): string =>
  httpOnlyCookie(core.config, OIDC_BINDING_COOKIE, value, `${core.config.clinicalBasePath}/api/auth/oidc`, OIDC_STATE_LIFETIME_S)

export const bindingFromRequest = (request: Request): string | null => readCookie(request, OIDC_BINDING_COOKIE)

export const authCookieFromRequest = (request: Request): string | null => readCookie(request, AUTH_COOKIE)

// The session-style cookies of both services: httpOnly, SameSite=Lax, Secure whenever the site is served over
// https (production, or an https APP_URL), and reading one back from a request's Cookie header.
import type { Config } from '../config'

/** A Set-Cookie value; `value` null clears the cookie (Max-Age=0). */
export function httpOnlyCookie(config: Pick<Config, 'production' | 'appUrl'>, name: string, value: string | null, path: string, maxAgeS: number): string {
  const secure = config.production || (config.appUrl?.startsWith('https://') ?? false)
  return `${name}=${value ?? ''}; Path=${path}; Max-Age=${value === null ? 0 : maxAgeS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

/** The value of a cookie the request carries, or null. */
export function readCookie(request: Request, name: string): string | null {
  for (const part of request.headers.get('cookie')?.split(';') ?? []) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim() || null
  }
  return null
}

// Helpers of the clinical service's tests: accounts made directly in the database (fast, any state), sign-in
// through the real API, and the client headers of the two token transports.
import { expect } from 'bun:test'
import { hashPassword } from '../../src/auth/password'
import clinicalPlugin from '../../plugins/clinical'
import type { ClinicalState } from '../../plugins/clinical/state'
import { startTestApp, type DatabaseTarget, type TestApp } from './app'
import { freshIp, uniqueEmail } from './quiz'
import { rememberSecret } from './secrets'

export { freshIp, settle, uniqueEmail } from './quiz'

export const CLINICAL_PASSWORD = 'Correct-horse-battery-9'
rememberSecret('password', CLINICAL_PASSWORD)
/** Request headers of a browser (cookie transport) and of the mobile app (Bearer transport). */
export const WEB = { 'x-client': 'web' } as const
export const MOBILE = { 'x-client': 'mobile' } as const

export interface SignedIn {
  token: string
  sessionId: string
  user: { id: number; name: string; email: string; role: string; totp_enabled: boolean; email_verified: boolean }
  /** The app_auth cookie value (web sign-ins), or null. */
  cookie: string | null
}

let hashed: Promise<string> | null = null
export interface UserSpec {
  email: string
  name?: string
  role?: 'admin' | 'moderator' | 'user'
  verified?: boolean
  disabled?: boolean
  /** A password other than CLINICAL_PASSWORD, or a stored hash as is (`hash:`). */
  password?: string
}

/** The clinical plugin's state of a test app (its audit writer, its guard). */
export const clinicalState = (app: TestApp): ClinicalState => app.booted.stateOf(clinicalPlugin)

/** Writes the audit entries queued so far (the writer batches them), so a test can read them from clinical.audit_log. */
export const flushAudit = (app: TestApp): Promise<void> => clinicalState(app).audit.flush()

/** Inserts a user straight into clinical.users; returns its id. */
export async function insertUser(app: TestApp, spec: UserSpec): Promise<number> {
  hashed ??= hashPassword(CLINICAL_PASSWORD)
  if (!spec.password?.startsWith('hash:')) rememberSecret('password', spec.password)
  const hash = spec.password?.startsWith('hash:') ? spec.password.slice(5) : spec.password ? await hashPassword(spec.password) : await hashed
  const [row] = await app.db.sql<{ id: number }>`
    insert into clinical.users (name, email, password_hash, role, email_verified, disabled)
    values (${spec.name ?? 'Test User'}, ${spec.email.toLowerCase()}, ${hash}, ${spec.role ?? 'user'}, ${spec.verified ?? true}, ${spec.disabled ?? false})
    returning id`
  return row!.id
}

/** Signs in through POST /api/auth/login; fails the test unless it succeeds. */
export async function signIn(app: TestApp, email: string, opts: { password?: string; headers?: Record<string, string>; ip?: string; totpCode?: string } = {}): Promise<SignedIn> {
  const res = await app.post('/api/auth/login', {
    email, password: opts.password ?? CLINICAL_PASSWORD, ...(opts.totpCode ? { totpCode: opts.totpCode } : {}),
  }, { headers: opts.headers ?? MOBILE, ip: opts.ip })
  const body = (await res.json()) as SignedIn & { success: boolean }
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(body.success).toBe(true)
  return { token: body.token, sessionId: body.sessionId, user: body.user, cookie: cookieValue(res) }
}

/** The app_auth value a response sets ('' when it clears it), or null when it does not touch the cookie. */
export function cookieValue(res: Response): string | null {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('app_auth='))
  return header === undefined ? null : header.slice('app_auth='.length).split(';')[0]!
}

/** A Cookie header carrying the session cookie. */
export const withCookie = (token: string, extra: Record<string, string> = {}) => ({ cookie: `app_auth=${token}`, ...WEB, ...extra })

/** A user of the given role with a signed-in mobile session. */
export async function userWithSession(app: TestApp, role: UserSpec['role'] = 'user', tag: string = role ?? 'user'): Promise<SignedIn & { email: string }> {
  const email = `${tag}-${crypto.randomUUID().slice(0, 8)}@example.test`
  await insertUser(app, { email, role })
  return { ...(await signIn(app, email, { ip: `10.66.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}` })), email }
}

/** A request of a signed-in user (none: no token) from a fresh client address, so the per-address API limit never interferes. */
export const asUser = (s: SignedIn | null) => ({ ...(s ? { token: s.token } : {}), ip: freshIp() })

/**
 * An app on a clock the test moves (`clock.now`, ms) with two signed-in users, alice and bob: the fixture of the
 * clinical records' tests (expiry on a moved clock, another user's records out of reach).
 */
export async function appWithTwoUsers(target: DatabaseTarget, startIso: string) {
  const clock = { now: Date.parse(startIso) }
  const app = await startTestApp({ target, boot: { now: () => clock.now } })
  const alice = await userWithSession(app, 'user', 'alice')
  const bob = await userWithSession(app, 'user', 'bob')
  return { app, clock, alice, bob }
}

// ---- page tests ----------------------------------------------------------------------------------------------------

export const HTMX = { 'hx-request': 'true' }
/** A form posted from another site. */
export const EVIL = { origin: 'https://evil.example' }
export const XSS = '<script>alert(1)</script>'
export const XSS_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;'
/** The markup outside attribute values (inside a quoted attribute `<` is plain text, and kitajs leaves it). */
export const outsideAttributes = (html: string) => html.replace(/="[^"]*"/g, '=""')

/** A clinician signed in through the page form: the user id and the Cookie header value of the web session. */
export interface PageClinician { id: number; cookie: string }

export async function pageClinician(app: TestApp, tag: string, name: string): Promise<PageClinician> {
  const email = uniqueEmail(tag)
  const id = await insertUser(app, { email, name })
  const res = await app.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
  expect(res.status).toBe(303)
  return { id, cookie: `app_auth=${cookieValue(res)}` }
}

/** HTML text as the page meant it: the five escapes the views write undone. */
export const unescapeHtml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')

/** The text of a textarea of the page (its leading newline is the page's, not the text's). */
export function textareaOf(page: string, id: string): string {
  const m = new RegExp(`<textarea id="${id}"[^>]*>([\\s\\S]*?)</textarea>`).exec(page)
  if (!m) throw new Error(`no textarea ${id}`)
  return unescapeHtml(m[1]!.replace(/^\n/, ''))
}

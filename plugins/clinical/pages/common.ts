// What the clinical page controllers share: the page kit (views/page.ts) over the clinical session, and the
// form models both areas check. A page sign-in starts a web session: the same JWT and session row the API uses,
// in the httpOnly SameSite=Lax app_auth cookie, with the web idle limit.
import { t } from 'elysia'
import { pageKit } from '../../../views/page'
import { checkSession } from '../guard'
import { CODE_MAX } from '../models/accounts'
import type { Authenticated } from '../services/sessions'
import type { ClinicalUser } from '../services/users'
import { readAnnouncement, type AnnouncementSettings } from '../services/app-config'
import type { ClinicalState } from '../state'

/** What a `signedIn: true` page route finds in its context: the user carries the announcement the page frame shows. */
export type PageSession = { user: ClinicalUser & { announcement: AnnouncementSettings }; auth: Authenticated }

export const CodeForm = t.Object({ code: t.String({ minLength: 1, maxLength: CODE_MAX }) })
export const PASSWORDS_DIFFER = 'The two passwords are not the same'

/**
 * The session of a page request, or null; `headers` carry the renewed cookie of a live web session or the one
 * clearing a dead cookie.
 */
export async function pageSession({ core, audit }: ClinicalState, request: Request): Promise<{ session: PageSession | null; headers: Record<string, string> }> {
  const { auth, cookie } = await checkSession(core, audit, request)
  const headers: Record<string, string> = cookie ? { 'set-cookie': cookie } : {}
  if (!auth) return { session: null, headers }
  // Read through the settings cache: no query on most page views.
  return { session: { user: { ...auth.user, announcement: await readAnnouncement(core) }, auth }, headers }
}

/**
 * The clinical pages' kit: `page: true` and `signedIn: true` with the origin check. Without a session a plain
 * request goes to the sign-in page; an htmx one gets 401, which clinical.js treats as a sign-out of every tab.
 */
export const clinicalPageKit = (state: ClinicalState) =>
  pageKit<PageSession>({
    name: 'clinical.pages',
    seed: state.core.id,
    appUrl: state.core.config.appUrl,
    signInUrl: `${state.core.config.clinicalBasePath}/`,
    session: (request) => pageSession(state, request),
    htmxSignedOut: 'unauthorized',
  })

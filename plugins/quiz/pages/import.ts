// The quiz service's import page for moderators and admins (others get 403): connect to a WebDAV file server, browse
// its folders and import a PDF, which services/documents.ts stores and processes exactly as an uploaded one (same
// size limit, same job). The WebDAV calls are services/nextcloud.ts's (address rule, allow-list, PDF-only download).
//
// The credentials stay on the server: connecting checks them by listing the folder, then keeps them in the core kv
// store (the password sealed with DATA_ENCRYPTION_KEY) for IMPORT_CONNECTION_TTL_S after the last use, under a
// random id the browser holds in an httpOnly cookie scoped to the import pages. The password is therefore typed once
// and never travels back into a page, a URL, a hidden field or a log; the store's key names the user, so the cookie
// is worth nothing to anyone else signed in on that browser. Every form works without JavaScript (Post/Redirect/Get);
// a refusal is shown at the top of the page, with the service's status for a plain post and 422 for htmx.
import { Elysia, t } from 'elysia'
import { httpOnlyCookie, readCookie } from '../../../src/auth/cookie'
import { randomToken, sha256Hex } from '../../../src/core/crypto'
import { HttpError } from '../../../src/core/errors'
import { isFragment, pageContext, type Errors } from '../../../views/layout'
import { FormBody, formErrors, formFields, html, redirect } from '../../../views/page'
import { NextcloudBody, REMOTE_PATH_MAX } from '../models/nextcloud'
import { hasRole, type QuizUser } from '../services/accounts'
import * as documents from '../services/documents'
import * as nextcloud from '../services/nextcloud'
import type { QuizState } from '../state'
import { folderUrl, ImportContent, ImportPage, parentOf, type ConnectValues, type ImportConnection, type ImportState } from '../views/import'

/** The cookie holding the id of the browser's file-server connection. */
export const IMPORT_COOKIE = 'quiz_import'
/** A connection is forgotten this long after its last use. */
export const IMPORT_CONNECTION_TTL_S = 30 * 60

/** A connection as kept in the kv store: the password sealed (AES-256-GCM), never in clear text at rest. */
interface StoredConnection { server: string; username: string; password: string }

const CONNECTION_ID = /^[A-Za-z0-9_-]{32,64}$/

/** Refusals about one field of the connect form. */
const CONNECT_FIELD_OF: Record<string, keyof ConnectValues | 'password'> = {
  invalid_server: 'server', server_not_allowed: 'server', server_not_https: 'server',
  webdav_auth_failed: 'password', invalid_path: 'path', webdav_not_found: 'path',
}

const requireModerator = (user: QuizUser) => {
  if (!hasRole(user, 'moderator')) throw HttpError.forbidden('insufficient_role', 'Only moderators import files from a file server')
}

const isHtmx = (request: Request) => request.headers.get('hx-request') === 'true'
/** A refused form's status: the service's for a plain post, 422 for htmx (htmx swaps 422 and no other 4xx or 5xx). */
const failureStatus = (request: Request, err: HttpError) => (isHtmx(request) ? 422 : err.status)

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)

const ListQuery = t.Object({ path: t.Optional(t.String({ maxLength: REMOTE_PATH_MAX })) })

export const importPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)
  const minutes = IMPORT_CONNECTION_TTL_S / 60
  const connectionKey = (userId: number, id: string) => `quiz:user:${userId}:import:${sha256Hex(id)}`
  const cookie = (id: string | null) => httpOnlyCookie(core.config, IMPORT_COOKIE, id, `${base}/import`, IMPORT_CONNECTION_TTL_S)

  /** The browser's live connection, or null (no cookie, expired, or another user's). */
  async function loadConnection(request: Request, user: QuizUser) {
    const id = readCookie(request, IMPORT_COOKIE)
    if (!id || !CONNECTION_ID.test(id)) return null
    const stored = await core.kv.get<StoredConnection>(connectionKey(user.id, id))
    if (!stored) return null
    const shown: ImportConnection = { server: stored.server, username: stored.username }
    const credentials = { server: stored.server, username: stored.username, password: core.crypto.openText(stored.password) }
    return { id, stored, shown, credentials }
  }
  type Connection = NonNullable<Awaited<ReturnType<typeof loadConnection>>>

  /** Keeps the connection another IMPORT_CONNECTION_TTL_S; the Set-Cookie header that renews the browser's cookie. */
  async function touch(user: QuizUser, id: string, stored: StoredConnection): Promise<Record<string, string>> {
    await core.kv.set(connectionKey(user.id, id), stored, IMPORT_CONNECTION_TTL_S)
    return { 'set-cookie': cookie(id) }
  }

  /** A file-server refusal or failure as the page says it; anything that is not the services' HttpError propagates. */
  function refusal(err: unknown): HttpError {
    if (!(err instanceof HttpError)) throw err
    if (err.status >= 500) core.log.warn({ code: err.code }, 'file-server import failed')
    return err
  }

  const render = (request: Request, user: QuizUser, state: Omit<ImportState, 'connectionMinutes' | 'maxUploadSize'>,
    init: { status?: number; headers?: Record<string, string> } = {}) => {
    const full: ImportState = { ...state, connectionMinutes: minutes, maxUploadSize: core.config.maxUploadSize }
    return html(isFragment(request) ? ImportContent({ base, state: full }) : ImportPage({ ctx, user, state: full }), init)
  }

  /** After an import: 303 for a plain post; for htmx (a boosted form) HX-Redirect, so the browser loads the new page itself. */
  const goTo = (request: Request, location: string, headers: Record<string, string>) =>
    isHtmx(request) ? new Response(null, { status: 200, headers: { 'hx-redirect': location, ...headers } }) : redirect(location, headers)

  /** The folder of a connection, or the message why it could not be listed. */
  async function folder(conn: Connection, path: string) {
    try {
      return { listing: await nextcloud.listFiles(core, { ...conn.credentials, path }) }
    } catch (err) {
      return { listing: null, err: refusal(err) }
    }
  }

  /** The downloaded PDF's bytes; a download cut short (the file server, or the size cap mid-stream) is a 502. */
  async function downloadedBytes(res: Response): Promise<Uint8Array<ArrayBuffer>> {
    try {
      return new Uint8Array(await res.arrayBuffer())
    } catch (err) {
      throw HttpError.upstream('webdav_incomplete', err,
        'The file could not be read completely from the file server: the connection broke, or the file is larger than the upload limit')
    }
  }

  return new Elysia({ prefix: '/import' })
    .use(pages)
    .get('', async ({ request, user, query }) => {
      requireModerator(user)
      const conn = await loadConnection(request, user)
      if (!conn) return render(request, user, { connection: null, values: { server: '', username: '', path: query.path ?? '' } })
      const { listing, err } = await folder(conn, query.path ?? '/')
      if (err) return render(request, user, { connection: conn.shown, listing: null, message: err.message }, { status: failureStatus(request, err) })
      return render(request, user, { connection: conn.shown, listing }, { headers: await touch(user, conn.id, conn.stored) })
    }, { signedIn: true, query: ListQuery })
    // Connect (the form with the password), or open a folder of the live connection (only `path`).
    .post('/browse', async ({ request, user, body }) => {
      requireModerator(user)
      const f = formFields(body)
      const path = (f.path ?? '').trim()
      const current = await loadConnection(request, user)
      if (f.password === undefined && current) return redirect(folderUrl(base, path || '/'))
      const values: ConnectValues = { server: (f.server ?? '').trim(), username: f.username ?? '', path }
      const password = f.password ?? ''
      const errors: Errors = formErrors(NextcloudBody, { ...values, password })
      if (!values.server) errors.server = 'Enter the file server\'s address'
      if (!values.username) errors.username = 'Enter the username'
      if (!password) errors.password = 'Enter the password'
      if (Object.keys(errors).length > 0) {
        return render(request, user, { connection: null, values, errors, message: 'Check the connection details' }, { status: 422 })
      }
      try {
        // Listing the folder checks the address, the credentials and the path at once.
        const listing = await nextcloud.listFiles(core, { ...values, password })
        if (current) await core.kv.delete(connectionKey(user.id, current.id))
        const id = randomToken(32)
        const headers = await touch(user, id, { server: values.server, username: values.username, password: core.crypto.sealText(password) })
        return redirect(folderUrl(base, listing.path), headers)
      } catch (err) {
        const refused = refusal(err)
        const field = CONNECT_FIELD_OF[refused.code]
        return render(request, user, {
          connection: null, values, errors: field ? { [field]: refused.message } : undefined, message: refused.message,
        }, { status: failureStatus(request, refused) })
      }
    }, { signedIn: true, body: FormBody })
    .post('/file', async ({ request, user, body }) => {
      requireModerator(user)
      const path = formFields(body).path ?? ''
      const conn = await loadConnection(request, user)
      if (!conn) {
        const err = HttpError.badRequest('not_connected', `Connect to the file server again: a connection ends ${minutes} minutes after its last use.`)
        return render(request, user, { connection: null, values: { server: '', username: '', path: parentOf(path) }, message: err.message },
          { status: failureStatus(request, err) })
      }
      try {
        const res = await nextcloud.downloadFile(core, { ...conn.credentials, path })
        const bytes = await downloadedBytes(res)
        // The upload's own rules and job: the size limit, the PDF check by content, processing in the background.
        const doc = await documents.uploadDocument(core, user, new File([bytes], baseName(path), { type: documents.PDF_MIME }))
        return goTo(request, `${base}/documents/${doc.id}?done=imported`, await touch(user, conn.id, conn.stored))
      } catch (err) {
        const refused = refusal(err)
        const message = refused.code === 'not_a_pdf'
          ? 'This file is not a PDF, although its name ends in .pdf: only PDF files can be imported'
          : refused.message
        const { listing } = await folder(conn, parentOf(path))
        return render(request, user, { connection: conn.shown, listing, message }, { status: failureStatus(request, refused) })
      }
    }, { signedIn: true, body: FormBody })
    .post('/disconnect', async ({ request, user }) => {
      requireModerator(user)
      const id = readCookie(request, IMPORT_COOKIE)
      if (id && CONNECTION_ID.test(id)) await core.kv.delete(connectionKey(user.id, id))
      return redirect(`${base}/import`, { 'set-cookie': cookie(null) })
    }, { signedIn: true, body: FormBody })
    // A boosted form post puts its action in the address bar: a reload (a GET) lands on the page, never a 404.
    .get('/:action', () => redirect(`${base}/import`), {
      signedIn: true, params: t.Object({ action: t.Union([t.Literal('browse'), t.Literal('file'), t.Literal('disconnect')]) }),
    })
}

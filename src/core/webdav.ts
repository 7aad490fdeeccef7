// WebDAV file servers (Nextcloud, ownCloud, any WebDAV share) through the `webdav` package, for both services: the
// quiz import reads PDFs from one, the clinical export writes notes to one. The server URL is a user-supplied
// outbound address: it passes the rule of src/core/outbound.ts (with the operator's WEBDAV_ALLOWED_HOSTS) before
// every call, redirects are never followed, and every call is bounded in time. Credentials go to the file server
// in the Authorization header only; they are never logged or echoed.
import type { WebDAVClient } from 'webdav'
import type { Config } from '../config'
import { HttpError } from './errors'
import type { Logger } from './log'
import { allowedHostOf, checkOutboundUrl, OUTBOUND_ADDRESS_RULE, pinnedFetch, type AllowedHost } from './outbound'

/** Each call to the file server (a listing, a test, a write, the wait for a download's first byte). */
export const WEBDAV_TIMEOUT_MS = 15_000

/** The operator's allow-list of file servers on their own network (or on plain http). */
export const ALLOW_LIST_SETTING = 'WEBDAV_ALLOWED_HOSTS'
export const SERVER_RULE =
  `The file server address ${OUTBOUND_ADDRESS_RULE}, and must use https, unless the operator allowed its host in ${ALLOW_LIST_SETTING}`

/** A redirect from the file server: never followed (it could point anywhere, an internal address included). */
class RedirectRefused extends Error {
  constructor(readonly status: number) {
    super(`the file server answered ${status} (redirect)`)
  }
}

/**
 * The header by which a client's requests name their allow-list (WEBDAV_ALLOWED_HOSTS of the configuration that
 * made the client) to the package's one fetch hook below; it is taken off before the request leaves.
 */
const ALLOW_LIST_HEADER = 'x-webdav-allow-list'
const allowLists = new Map<string, readonly AllowedHost[]>()
const allowListKey = (hosts: readonly AllowedHost[]) => {
  const key = JSON.stringify(hosts)
  if (!allowLists.has(key)) allowLists.set(key, hosts)
  return key
}

// The webdav package (about 10 MB of a server's memory) is loaded at the first file server call. It fetches
// through a patchable hook: Bun's fetch here, pinned to the addresses the outbound rule checked (src/core/outbound.ts:
// the name cannot resolve elsewhere between the check and the connection), with redirects handed back instead of
// followed, and refused.
let webdavPackage: typeof import('webdav') | null = null
function webdav(): typeof import('webdav') {
  if (webdavPackage) return webdavPackage
  webdavPackage = require('webdav') as typeof import('webdav')
  const { getPatcher } = webdavPackage
  if (!getPatcher().isPatched('fetch')) getPatcher().patch('fetch', async (...args: unknown[]) => {
    const [url, init] = args as [string, RequestInit]
    const headers = new Headers(init.headers)
    const allowedHosts = allowLists.get(headers.get(ALLOW_LIST_HEADER) ?? '') ?? []
    headers.delete(ALLOW_LIST_HEADER)
    const res = await pinnedFetch(url, { ...init, headers, redirect: 'manual' }, { allowedHosts })
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => {})
      throw new RedirectRefused(res.status)
    }
    return res
  })
  return webdavPackage
}

/**
 * A path relative to the server URL, as the server is asked for it: `/` plus its segments, without empty and `.`
 * segments. 400 `invalid_path` for a `..` segment (also percent-encoded), a backslash or a control character.
 */
export function normaliseRemotePath(path: string): string {
  if (/[\u0000-\u001f\u007f]/.test(path)) throw HttpError.badRequest('invalid_path', 'The path must not contain control characters')
  if (path.includes('\\')) throw HttpError.badRequest('invalid_path', 'The path must use / between folders, not \\')
  const segments = path.trim().split('/').filter((s) => s !== '' && s !== '.')
  const decoded = (s: string) => { try { return decodeURIComponent(s) } catch { return s } }
  if (segments.some((s) => s === '..' || decoded(s) === '..' || decoded(s) === '.' || decoded(s).includes('/'))) {
    throw HttpError.badRequest('invalid_path', 'The path must not contain ".." segments: paths are relative to the server address')
  }
  return `/${segments.join('/')}`
}

type ServerCheck = { config: Pick<Config, 'webdavAllowedHosts'>; log: Logger }

function isAllowed({ config }: ServerCheck, server: string): boolean {
  const own = allowedHostOf(server)
  return !!own && config.webdavAllowedHosts.some((a) => a.host === own.host && (a.port === null || a.port === own.port))
}

/**
 * The server URL without a trailing slash, after the outbound rule: http(s), no credentials, query or fragment in
 * it; every address it resolves to public, unless the allow-list names its host (and port); https unless allowed.
 * Checked before every call, since what a name resolves to can change.
 */
export async function checkServer(core: ServerCheck, server: string): Promise<string> {
  let url: URL
  try {
    url = new URL(server.trim())
  } catch {
    throw HttpError.badRequest('invalid_server', 'The server must be a URL such as https://cloud.example.org/remote.php/dav/files/alice')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw HttpError.badRequest('invalid_server', 'The server URL must start with https://')
  if (url.username || url.password) {
    throw HttpError.badRequest('invalid_server', 'Put the username and password in their own fields, not in the server URL')
  }
  if (url.search || url.hash) throw HttpError.badRequest('invalid_server', 'The server URL must not have a query or a fragment')
  const verdict = await checkOutboundUrl(url.href, { allowedHosts: core.config.webdavAllowedHosts })
  if (!verdict.ok) {
    core.log.warn({ reason: verdict.reason, detail: verdict.detail }, 'file server address refused')
    if (verdict.reason === 'unresolvable') {
      throw HttpError.upstream('webdav_unreachable', new Error(verdict.detail), 'The file server\'s name could not be resolved')
    }
    throw HttpError.badRequest('server_not_allowed', SERVER_RULE)
  }
  if (url.protocol === 'http:' && !isAllowed(core, url.href)) {
    throw HttpError.badRequest('server_not_https', `The file server must use https: the password is sent to it. ${SERVER_RULE}`)
  }
  return url.href.replace(/\/+$/, '')
}

/**
 * A refusal or failure of the file server as both APIs answer it; the raw error (which may carry the response) is
 * not kept. Refused credentials are 400, not 401: a 401 from these services means the caller's own session ended.
 */
export function fileServerError(err: unknown): HttpError {
  if (err instanceof HttpError) return err
  const status = err instanceof RedirectRefused ? err.status : (err as { status?: unknown }).status
  if (typeof status === 'number') {
    if (status >= 300 && status < 400) {
      return HttpError.upstream('webdav_redirect', new Error(`HTTP ${status}`),
        'The file server answered with a redirect, which is not followed: give its final WebDAV address as the server')
    }
    if (status === 401) return HttpError.badRequest('webdav_auth_failed', 'The file server refused the username or password')
    if (status === 403) return HttpError.badRequest('webdav_forbidden', 'The file server refused access to this path')
    if (status === 404 || status === 409) return HttpError.notFound('webdav_not_found', 'No such file or folder on the file server')
    if (status === 507) return HttpError.badRequest('webdav_full', 'The file server has no space left')
    if (status < 500) {
      return HttpError.badRequest('webdav_refused', `The file server refused the request (HTTP ${status}): check that the server URL is its WebDAV address`)
    }
    return HttpError.upstream('webdav_failed', new Error(`HTTP ${status}`), `The file server failed (HTTP ${status})`)
  }
  const name = (err as { name?: unknown }).name
  if (name === 'TimeoutError' || name === 'AbortError') {
    return HttpError.upstream('webdav_timeout', new Error('timed out'), `The file server did not answer within ${WEBDAV_TIMEOUT_MS / 1000} s`)
  }
  return HttpError.upstream('webdav_unreachable', new Error(err instanceof Error ? err.message : String(err)),
    'The file server could not be reached, or did not answer as a WebDAV server')
}

/** One call to the file server, at most WEBDAV_TIMEOUT_MS; its failure as fileServerError says it. */
export async function webdavCall<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await work(AbortSignal.timeout(WEBDAV_TIMEOUT_MS))
  } catch (err) {
    throw fileServerError(err)
  }
}

/**
 * A client of a server that passed checkServer, with password (or app token) authentication; its requests connect
 * under the same rule and allow-list, pinned to the addresses checked at each request.
 */
export const webdavClient = (core: ServerCheck, server: string, username: string, password: string): WebDAVClient =>
  webdav().createClient(server, {
    username, password, authType: webdav().AuthType.Password,
    headers: { [ALLOW_LIST_HEADER]: allowListKey(core.config.webdavAllowedHosts) },
  })

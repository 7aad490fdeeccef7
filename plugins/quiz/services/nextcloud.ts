// Spec 1, File-server import: a WebDAV proxy (the `webdav` package) through which a moderator tests a connection,
// lists folders and PDFs, and streams a PDF down, sparing the browser the file server's cross-origin limits.
// The server URL is a user-supplied outbound address: it passes the rule of src/core/outbound.ts before every
// call, redirects are never followed, and every call is bounded in time. Credentials go to the file server in
// the Authorization header only: they are not logged, stored, or echoed in any answer.
import { AuthType, createClient, getPatcher, type FileStat, type WebDAVClient } from 'webdav'
import { HttpError } from '../../../src/core/errors'
import { allowedHostOf, checkOutboundUrl, OUTBOUND_ADDRESS_RULE, type AllowedHost } from '../../../src/core/outbound'
import type { Core } from '../../../src/plugin'
import type { FilesResponse, NextcloudBody, RemoteItem } from '../models/nextcloud'

/** Each listing, test and the wait for a download's first byte. */
export const WEBDAV_TIMEOUT_MS = 15_000
/** A whole download, once it has started. */
export const WEBDAV_DOWNLOAD_TIMEOUT_MS = 10 * 60_000

/** The operator's allow-list of file servers on their own network (or on plain http). */
export const ALLOW_LIST_SETTING = 'WEBDAV_ALLOWED_HOSTS'
export const SERVER_RULE =
  `The file server address ${OUTBOUND_ADDRESS_RULE}, and must use https, unless the operator allowed its host in ${ALLOW_LIST_SETTING}`

const PDF_NAME = /\.pdf$/i

/** A redirect from the file server: never followed (it could point anywhere, an internal address included). */
class RedirectRefused extends Error {
  constructor(readonly status: number) {
    super(`the file server answered ${status} (redirect)`)
  }
}

// The webdav package fetches through a patchable hook: Bun's fetch here, with redirects handed back instead of
// followed, and refused.
getPatcher().patch('fetch', async (...args: unknown[]) => {
  const [url, init] = args as [string, RequestInit]
  const res = await fetch(url, { ...init, redirect: 'manual' })
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {})
    throw new RedirectRefused(res.status)
  }
  return res
})

// ---- the path ----------------------------------------------------------------------------------------------

/**
 * A path relative to the server URL, as the server is asked for it: `/` plus its segments, without empty and `.`
 * segments. 400 for a `..` segment (also percent-encoded), a backslash or a control character.
 */
export function normaliseRemotePath(path: string): string {
  if (/[\u0000-\u001f\u007f]/.test(path)) throw HttpError.badRequest('invalid_path', 'The path must not contain control characters')
  if (path.includes('\\')) throw HttpError.badRequest('invalid_path', 'The path must use / between folders, not \\')
  const segments = path.split('/').filter((s) => s !== '' && s !== '.')
  const decoded = (s: string) => { try { return decodeURIComponent(s) } catch { return s } }
  if (segments.some((s) => s === '..' || decoded(s) === '..' || decoded(s) === '.')) {
    throw HttpError.badRequest('invalid_path', 'The path must not contain ".." segments: paths are relative to the server URL')
  }
  return `/${segments.join('/')}`
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)

// ---- the server --------------------------------------------------------------------------------------------

const allowList = (core: Core): readonly AllowedHost[] => core.config.webdavAllowedHosts

function isAllowed(server: string, allowed: readonly AllowedHost[]): boolean {
  const own = allowedHostOf(server)
  return !!own && allowed.some((a) => a.host === own.host && (a.port === null || a.port === own.port))
}

/**
 * The server URL without a trailing slash, after the outbound rule: http(s), no credentials, query or fragment in
 * it; every address it resolves to public, unless the allow-list names its host (and port); https unless allowed.
 * Checked before every call, since what a name resolves to can change.
 */
export async function checkServer(core: Core, server: string): Promise<string> {
  let url: URL
  try {
    url = new URL(server.trim())
  } catch {
    throw HttpError.badRequest('invalid_server', 'The server must be a URL such as https://cloud.example.org/remote.php/dav/files/alice')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw HttpError.badRequest('invalid_server', 'The server URL must start with https://')
  }
  if (url.username || url.password) {
    throw HttpError.badRequest('invalid_server', 'Put the username and password in their own fields, not in the server URL')
  }
  if (url.search || url.hash) throw HttpError.badRequest('invalid_server', 'The server URL must not have a query or a fragment')
  const allowed = allowList(core)
  const verdict = await checkOutboundUrl(url.href, { allowedHosts: allowed })
  if (!verdict.ok) {
    core.log.warn({ reason: verdict.reason, detail: verdict.detail }, 'file server address refused')
    if (verdict.reason === 'unresolvable') {
      throw HttpError.upstream('webdav_unreachable', new Error(verdict.detail), 'The file server\'s name could not be resolved')
    }
    throw HttpError.badRequest('server_not_allowed', SERVER_RULE)
  }
  if (url.protocol === 'http:' && !isAllowed(url.href, allowed)) {
    throw HttpError.badRequest('server_not_https', `The file server must use https: the password is sent to it. ${SERVER_RULE}`)
  }
  return url.href.replace(/\/+$/, '')
}

// ---- calls ---------------------------------------------------------------------------------------------------

/** A refusal or failure of the file server as this API answers it; the raw error (which may carry the response) is not kept. */
function fileServerError(err: unknown): HttpError {
  if (err instanceof HttpError) return err
  if (err instanceof RedirectRefused) {
    return HttpError.upstream('webdav_redirect', new Error(err.message),
      'The file server answered with a redirect, which is not followed: give its final WebDAV address as the server')
  }
  const status = (err as { status?: unknown }).status
  if (typeof status === 'number') {
    if (status === 401) return HttpError.badRequest('webdav_auth_failed', 'The file server refused the username or password')
    if (status === 403) return HttpError.badRequest('webdav_forbidden', 'The file server refused access to this path')
    if (status === 404) return HttpError.notFound('webdav_not_found', 'No such file or folder on the file server')
    if (status < 500) {
      return HttpError.badRequest('webdav_refused', `The file server refused the request (HTTP ${status}): check that the server URL is its WebDAV address`)
    }
    return HttpError.upstream('webdav_failed', new Error(`HTTP ${status}`), `The file server failed (HTTP ${status})`)
  }
  const name = (err as { name?: unknown }).name
  if (name === 'TimeoutError' || name === 'AbortError') {
    return HttpError.upstream('webdav_timeout', new Error('timed out'), `The file server did not answer within ${WEBDAV_TIMEOUT_MS / 1000} s`)
  }
  const message = err instanceof Error ? err.message : String(err)
  return HttpError.upstream('webdav_unreachable', new Error(message),
    'The file server could not be reached, or did not answer as a WebDAV server')
}

async function connect(core: Core, input: NextcloudBody): Promise<{ client: WebDAVClient; path: string }> {
  const path = normaliseRemotePath(input.path)
  const server = await checkServer(core, input.server)
  const client = createClient(server, { username: input.username, password: input.password, authType: AuthType.Password })
  return { client, path }
}

async function call<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await work(AbortSignal.timeout(WEBDAV_TIMEOUT_MS))
  } catch (err) {
    throw fileServerError(err)
  }
}

/** POST /nextcloud/test: the credentials and the path work. */
export async function testConnection(core: Core, input: NextcloudBody): Promise<{ ok: true; message: string }> {
  const { client, path } = await connect(core, input)
  const stat = await call((signal) => client.stat(path, { signal }) as Promise<FileStat>)
  const what = stat.type === 'directory' ? 'folder' : 'file'
  return { ok: true, message: `Connected to the file server: the ${what} ${path} can be read` }
}

const byName = (a: RemoteItem, b: RemoteItem) => {
  const x = a.name.toLocaleLowerCase('en')
  const y = b.name.toLocaleLowerCase('en')
  return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

/** POST /nextcloud/files: the folders and PDFs of a folder. */
export async function listFiles(core: Core, input: NextcloudBody): Promise<FilesResponse> {
  const { client, path } = await connect(core, input)
  const entries = await call((signal) => client.getDirectoryContents(path, { signal }) as Promise<FileStat[]>)
  const items: RemoteItem[] = []
  for (const e of entries) {
    if (e.type === 'directory') items.push({ name: e.basename, path: e.filename, type: 'dir', size: 0 })
    else if (PDF_NAME.test(e.basename)) items.push({ name: e.basename, path: e.filename, type: 'pdf', size: Math.max(0, Math.trunc(e.size || 0)) })
  }
  const dirs = items.filter((i) => i.type === 'dir').sort(byName)
  const pdfs = items.filter((i) => i.type === 'pdf').sort(byName)
  return { path, items: [...dirs, ...pdfs] }
}

/** `attachment` with the name as ASCII (quoted) and as UTF-8 (RFC 6266 / 5987). */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const utf8 = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`
}

/**
 * POST /nextcloud/download: the PDF streamed through. 400 when the name does not end in .pdf or the path is a
 * folder; 413 when it is larger than the upload limit (it could not be uploaded anyway).
 */
export async function downloadFile(core: Core, input: NextcloudBody): Promise<Response> {
  const path = normaliseRemotePath(input.path)
  const name = baseName(path)
  if (!name || !PDF_NAME.test(name)) throw HttpError.badRequest('not_pdf', 'Only PDF files can be downloaded: the name must end in .pdf')
  const { client } = await connect(core, input)
  const stat = await call((signal) => client.stat(path, { signal }) as Promise<FileStat>)
  if (stat.type === 'directory') throw HttpError.badRequest('not_pdf', `${path} is a folder, not a PDF`)
  const max = core.config.maxUploadSize
  const tooLarge = () => HttpError.tooLarge('file_too_large', `The PDF is larger than the upload limit of ${max} bytes`)
  if (stat.size > max) throw tooLarge()

  const controller = new AbortController()
  let timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), WEBDAV_TIMEOUT_MS)
  let res: Response
  try {
    res = (await client.customRequest(path, { method: 'GET', signal: controller.signal })) as unknown as Response
  } catch (err) {
    clearTimeout(timer)
    throw fileServerError(err)
  }
  clearTimeout(timer)
  if (!res.body) throw fileServerError(new Error('empty answer'))
  const declared = Number(res.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > max) {
    controller.abort()
    throw tooLarge()
  }
  timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), WEBDAV_DOWNLOAD_TIMEOUT_MS)
  let received = 0
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      received += chunk.byteLength
      if (received > max) {
        controller.abort()
        out.error(new Error('file larger than the upload limit'))
        return
      }
      out.enqueue(chunk)
    },
    flush() {
      clearTimeout(timer)
    },
  })
  const body = res.body.pipeThrough(limit)
  const headers: Record<string, string> = {
    'content-type': 'application/pdf',
    'content-disposition': attachmentDisposition(name),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  }
  if (Number.isFinite(declared) && declared >= 0 && res.headers.has('content-length')) headers['content-length'] = String(declared)
  return new Response(body, { status: 200, headers })
}

// Spec 1, File-server import: a WebDAV proxy (the `webdav` package) through which a moderator tests a connection,
// lists folders and PDFs, and streams a PDF down, sparing the browser the file server's cross-origin limits.
// The server's address rule, the refused redirects, the time bounds and the error mapping are src/core/webdav.ts's
// (shared with the clinical export). Credentials go to the file server in the Authorization header only: they are
// not logged, stored, or echoed in any answer.
import type { FileStat, WebDAVClient } from 'webdav'
import { HttpError } from '../../../src/core/errors'
import { checkServer, fileServerError, normaliseRemotePath, webdavCall as call, webdavClient, WEBDAV_TIMEOUT_MS } from '../../../src/core/webdav'
import { attachmentDisposition, visibleFileName } from '../../../src/core/storage'
import type { Core } from '../../../src/plugin'
import type { FilesResponse, NextcloudBody, RemoteItem } from '../models/nextcloud'

export { ALLOW_LIST_SETTING, normaliseRemotePath, SERVER_RULE, WEBDAV_TIMEOUT_MS } from '../../../src/core/webdav'
/** A whole download, once it has started. */
export const WEBDAV_DOWNLOAD_TIMEOUT_MS = 10 * 60_000

const PDF_NAME = /\.pdf$/i

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)

async function connect(core: Core, input: NextcloudBody): Promise<{ client: WebDAVClient; path: string }> {
  const path = normaliseRemotePath(input.path)
  const server = await checkServer(core, input.server)
  return { client: webdavClient(core, server, input.username, input.password), path }
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

/** `attachment` with the remote file's name made safe to save (no invisible characters, no leading dots). */
export const remoteFileDisposition = (remoteName: string): string => attachmentDisposition(visibleFileName(remoteName, 'document.pdf'))

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
    'content-disposition': remoteFileDisposition(name),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  }
  if (Number.isFinite(declared) && declared >= 0 && res.headers.has('content-length')) headers['content-length'] = String(declared)
  return new Response(body, { status: 200, headers })
}

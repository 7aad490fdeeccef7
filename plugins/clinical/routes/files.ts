// Spec 2, Documents and File-sync export (with POST /api/user/webdav-path): the JSON API. Routing, guards,
// validation and response shaping only; the rules live in services/documents.ts and services/webdav-export.ts.
import { Elysia } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { bodyLimits } from '../../../src/envelope'
import { Success, SuccessMessage } from '../models/accounts'
import {
  ConnectBody, ConnectionStatus, DocumentList, DocumentParams, DownloadResponse, ExportBody, ExportResponse, SignedFileQuery,
  UploadBody, UploadResponse, WebDavPathBody, WebDavPathResponse,
} from '../models/files'
import * as documents from '../services/documents'
import * as webdav from '../services/webdav-export'
import type { ClinicalState } from '../state'

// ---- the upload's multipart body ------------------------------------------------------------------------------

const CRLF = Buffer.from('\r\n')
const HEADER_END = Buffer.from('\r\n\r\n')

/** A parameter of a part header (`name="file"`, `filename*=UTF-8''...`), unquoted; null when absent. */
function headerParam(header: string, key: string): string | null {
  const extended = new RegExp(`(?:^|;)\\s*${key}\\*\\s*=\\s*UTF-8''([^;]*)`, 'i').exec(header)
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!.trim())
    } catch { /* fall back to the plain parameter */ }
  }
  const m = new RegExp(`(?:^|;)\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, 'i').exec(header)
  if (!m) return null
  if (m[2] !== undefined) return m[2].trim()
  // Browsers escape `"` and line breaks as %22, %0A, %0D (HTML's form encoding); others use backslashes.
  return m[1]!.replace(/\\(.)/g, '$1').replace(/%22/g, '"').replace(/%0A/gi, '\n').replace(/%0D/gi, '\r')
}

const invalidMultipart = () => HttpError.badRequest('invalid_body', 'The upload must be a multipart form with the field `file`')

/**
 * The upload form's fields. Bun's own form parser gives a file the type of its name's extension, not the type the
 * client declared for the part, so the parts are read here: the declared type is one of the three checks. The
 * body is read once (its size is bounded by the route's body limit before this runs).
 */
async function readUploadForm(request: Request): Promise<Record<string, File | string>> {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(request.headers.get('content-type') ?? '')
  if (!boundary) throw invalidMultipart()
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`)
  const body = Buffer.from(await request.arrayBuffer())
  const next = Buffer.concat([CRLF, delimiter])
  const fields = new Map<string, File | string>()
  let at = body.indexOf(delimiter)
  if (at < 0) throw invalidMultipart()
  for (;;) {
    at += delimiter.length
    if (body[at] === 0x2d && body[at + 1] === 0x2d) break // `--`: the closing delimiter
    const headersEnd = body.indexOf(HEADER_END, at)
    if (headersEnd < 0) throw invalidMultipart()
    const headers = body.toString('utf8', at, headersEnd).split('\r\n').filter(Boolean)
    const start = headersEnd + HEADER_END.length
    const end = body.indexOf(next, start)
    if (end < 0) throw invalidMultipart()
    const header = (name: string) => headers.find((h) => h.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim() ?? ''
    const disposition = header('content-disposition')
    const name = headerParam(disposition, 'name')
    const filename = headerParam(disposition, 'filename')
    if (name !== null && !fields.has(name)) {
      fields.set(name, filename === null
        ? body.toString('utf8', start, end)
        : new File([body.subarray(start, end)], filename, { type: header('content-type') }))
    }
    at = end + CRLF.length
  }
  return Object.fromEntries(fields)
}

const DOCUMENTS = ['Documents']
const EXPORT = ['File-sync export']

export const fileRoutes = ({ core, auth }: ClinicalState) =>
  new Elysia()
    .use(auth)
    .use(bodyLimits)
    .get('/api/documents', async ({ user }) => ({
      success: true as const, s3_configured: core.storage.s3 !== null, documents: await documents.listDocuments(core, user.id),
    }), {
      auth: 'user', response: DocumentList,
      detail: { tags: DOCUMENTS, summary: 'List my documents', description: 'The caller\'s own documents, newest first. `s3_configured` says whether files go to object storage (S3) or to the server\'s own folder.' },
    })
    .post('/api/documents/upload', async ({ user, body }) => ({
      success: true as const, ...(await documents.uploadDocument(core, user.id, body.file, body.description)),
    }), {
      // Refused before the body is read: a file at the limit and its multipart framing fit, anything more does not.
      bodyLimit: documents.UPLOAD_BODY_LIMIT,
      auth: 'user', body: UploadBody, response: UploadResponse,
      // The form is read here (readUploadForm); the named type documents the body as multipart/form-data.
      parse: [({ request, contentType }) => /^multipart\/form-data/i.test(contentType) ? readUploadForm(request) : undefined, 'multipart/form-data'],
      detail: {
        tags: DOCUMENTS, summary: 'Upload a document',
        description: [
          'Multipart form with the field `file` and an optional `description`. Allowed: PDF (.pdf), JPEG (.jpg, .jpeg), PNG, GIF,',
          'Word (.doc, .docx), text (.txt) and CSV (.csv), at most 10 MB (10485760 bytes).',
          'Three checks must agree, each refused with **415**: the extension is one of these (`unsupported_file_type`); the declared',
          'content type fits the extension (`type_mismatch`; an empty type or application/octet-stream counts as undeclared); the',
          'leading bytes are what the extension says (`content_mismatch`): .doc an OLE compound file, .docx a zip with Word\'s parts,',
          '.txt and .csv UTF-8 text without NUL bytes. So a program renamed to .pdf is refused.',
          '413 `file_too_large` over 10 MB (a declared Content-Length over the limit is refused before the body is read); 400 for an',
          'empty file or a missing `file` field; 502 when the object storage cannot be reached (nothing is kept); 507 `disk_full` when',
          'the server\'s disk has no room for the file (nothing is kept).',
          'The stored object\'s name is made by the server; the uploaded name is kept only as `filename`.',
        ].join(' '),
      },
    })
    .get('/api/documents/:id/download', async ({ user, params }) => ({
      success: true as const, ...(await documents.downloadUrl(core, user.id, params.id)),
    }), {
      auth: 'user', params: DocumentParams, response: DownloadResponse,
      detail: {
        tags: DOCUMENTS, summary: 'A short-lived download address',
        description: [
          `The address works for ${documents.DOWNLOAD_URL_TTL_S / 60} minutes without a session and answers the file as an attachment`,
          'under its uploaded name. With object storage it is the store\'s presigned URL; otherwise it is this server\'s',
          '`GET /api/documents/{id}/file` with `expires` and `signature` (an absolute URL when APP_URL is set, else root-relative).',
          '404 for a document that is not the caller\'s.',
        ].join(' '),
      },
    })
    .get('/api/documents/:id/file', ({ params, query }) => documents.openSignedFile(core, params.id, query.expires, query.signature), {
      params: DocumentParams, query: SignedFileQuery,
      detail: {
        tags: DOCUMENTS, summary: 'Download a document through a signed link',
        description: 'The address given by `GET /api/documents/{id}/download` when documents are stored on this server; no session needed. '
          + '403 `invalid_link` when the signature does not match (a changed expiry, id or signature) and 403 `link_expired` after it expired.',
        responses: { 200: { description: 'The file, as an attachment, with its content type' } },
      },
    })
    .delete('/api/documents/:id', async ({ user, params }) => {
      await documents.deleteDocument(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: DocumentParams, response: Success,
      detail: { tags: DOCUMENTS, summary: 'Delete a document', description: 'Removes the stored file and the record. 404 for a document that is not the caller\'s; 502 when the object storage cannot be reached (nothing is removed).' },
    })
    .post('/api/nextcloud/connect', async ({ user, body }) => ({ success: true as const, ...(await webdav.connect(core, user.id, body)) }), {
      auth: 'user', body: ConnectBody, response: SuccessMessage,
      detail: {
        tags: EXPORT, summary: 'Connect a WebDAV file server (Nextcloud, ownCloud, ...)',
        description: [
          'Checks the address and the credentials with a PROPFIND, then stores them; the password or app token is stored encrypted',
          'and never answered back. The address must use https and resolve to public addresses unless the operator lists its host in',
          'WEBDAV_ALLOWED_HOSTS; redirects are not followed. 400 `invalid_server`, `server_not_allowed`, `server_not_https`;',
          '400 `webdav_auth_failed` when the server refuses the username or password (400, not 401: a 401 from this service means the',
          'session ended); 400 `webdav_refused` for other refusals, 404 `webdav_not_found` when the address names no folder; 502 when the server cannot be reached, fails,',
          'redirects or times out (15 s). Nothing is stored on failure.',
        ].join(' '),
      },
    })
    .get('/api/nextcloud/status', async ({ user }) => ({ success: true as const, ...(await webdav.connectionStatus(core, user.id)) }), {
      auth: 'user', response: ConnectionStatus,
      detail: { tags: EXPORT, summary: 'The connected file server', description: 'Whether a file server is connected, its address and username (never the password), and the export folder.' },
    })
    .post('/api/nextcloud/export', async ({ user, body }) => ({ success: true as const, ...(await webdav.exportNote(core, user.id, body)) }), {
      auth: 'user', body: ExportBody, response: ExportResponse,
      detail: {
        tags: EXPORT, summary: 'Export a note to the connected file server',
        description: [
          'Writes `text` as a UTF-8 text file `<folder>/<title> <YYYY-MM-DD HH-mm-ss>.txt` (UTC) in the folder set with',
          '`POST /api/user/webdav-path` (the root by default; created when missing). The title is made safe for a file name: folder',
          'separators, control characters and `\\ : * ? " < > |` are replaced, leading dots dropped, at most 80 characters kept, and',
          '`note` used when nothing is left. An existing file is never replaced: a taken name gets ` (2)`, ` (3)`, ...',
          '400 `not_connected` without a connected server; the other errors as for connect.',
        ].join(' '),
      },
    })
    .post('/api/nextcloud/disconnect', async ({ user }) => ({ success: true as const, ...(await webdav.disconnect(core, user.id)) }), {
      auth: 'user', response: SuccessMessage,
      detail: { tags: EXPORT, summary: 'Disconnect the file server', description: 'Forgets the address, username and token. The export folder is kept for the next connection.' },
    })
    .post('/api/user/webdav-path', async ({ user, body }) => ({ success: true as const, path: await webdav.setWebDavPath(core, user.id, body.path) }), {
      auth: 'user', body: WebDavPathBody, response: WebDavPathResponse,
      detail: {
        tags: EXPORT, summary: 'Set the export folder',
        description: 'The folder on the file server notes are exported to, relative to the connected address. Stored normalised (`/` plus its '
          + 'segments, without empty or `.` segments). 400 `invalid_path` for a `..` segment (also percent-encoded), a backslash or a control character.',
      },
    })

// TypeBox models of the clinical documents (upload, list, signed download) and the WebDAV file-sync export;
// the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

/** spec 2, limits: a document upload is at most 10 MB. */
export const DOCUMENT_MAX_BYTES = 10 * 1024 * 1024
export const DESCRIPTION_MAX = 1_000
export const WEBDAV_URL_MAX = 500
export const WEBDAV_USERNAME_MAX = 256
export const WEBDAV_PASSWORD_MAX = 1_024
export const WEBDAV_PATH_MAX = 500
export const EXPORT_TITLE_MAX = 200
/** A note is text: a megabyte of it is far beyond any note, and within the service's 2 MiB body limit. */
export const EXPORT_TEXT_MAX = 1_000_000

export const DocumentParams = t.Object({ id: RowId('The document\'s id') })

export const UploadBody = t.Object({
  file: t.File({
    description: 'PDF, JPEG, PNG, GIF, .doc, .docx, .txt or .csv, at most 10 MB (10485760 bytes). The extension, the declared '
      + 'content type and the leading bytes must agree.',
  }),
  description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX, description: 'Free text shown with the document' })),
})
export type UploadBody = typeof UploadBody.static

export const UploadResponse = t.Object({
  success: t.Literal(true),
  id: Int(),
  filename: t.String({ description: 'The name the file was uploaded with, without any folder part' }),
})

export const StoredDocument = t.Object({
  id: Int(),
  filename: t.String(),
  mime_type: t.String({ description: 'The type of the file\'s extension, e.g. application/pdf' }),
  size_bytes: Int({ minimum: 1 }),
  description: t.String({ description: 'Empty when none was given' }),
  created_at: t.String({ format: 'date-time' }),
})
export type StoredDocument = typeof StoredDocument.static

export const DocumentList = t.Object({
  success: t.Literal(true),
  s3_configured: t.Boolean({ description: 'True when documents are stored in object storage (S3); false: in the server\'s own folder' }),
  documents: t.Array(StoredDocument, { description: 'The caller\'s own documents, newest first' }),
})

export const DownloadResponse = t.Object({
  success: t.Literal(true),
  url: t.String({ description: 'A short-lived download address (5 minutes); no session is needed to use it' }),
  expires_at: t.String({ format: 'date-time', description: 'When the address stops working' }),
})

export const SignedFileQuery = t.Object({
  expires: t.Integer({ minimum: 0, description: 'Unix time (seconds) the link stops working' }),
  signature: t.String({ maxLength: 128, description: 'The link\'s signature' }),
})

// ---- WebDAV export ----------------------------------------------------------------------------------------

export const ConnectBody = t.Object({
  url: t.String({
    minLength: 1, maxLength: WEBDAV_URL_MAX,
    description: 'The WebDAV address, e.g. https://cloud.example.org/remote.php/dav/files/alice (no user:password@ part, query or fragment)',
  }),
  username: t.String({ minLength: 1, maxLength: WEBDAV_USERNAME_MAX }),
  password: t.String({ minLength: 1, maxLength: WEBDAV_PASSWORD_MAX, description: 'The password or, better, an app token; stored encrypted, never echoed' }),
})
export type ConnectBody = typeof ConnectBody.static

export const ExportBody = t.Object({
  text: t.String({ minLength: 1, maxLength: EXPORT_TEXT_MAX, description: 'The note, written as UTF-8 plain text' }),
  title: t.String({ maxLength: EXPORT_TITLE_MAX, description: 'Becomes the file name (made safe); empty: "note"' }),
})
export type ExportBody = typeof ExportBody.static

export const ExportResponse = t.Object({
  success: t.Literal(true),
  path: t.String({ description: 'The file written, relative to the connected WebDAV address, e.g. /Notes/Visit 2026-03-01 09-30-00.txt' }),
})

export const WebDavPathBody = t.Object({
  path: t.String({
    maxLength: WEBDAV_PATH_MAX,
    description: 'The folder exports go to, relative to the connected WebDAV address; empty or `/` is its root. A `..` segment, a backslash or a control character is refused (400)',
  }),
})

export const WebDavPathResponse = t.Object({
  success: t.Literal(true),
  path: t.String({ description: 'The folder as stored, normalised: `/` plus its segments' }),
})

export const ConnectionStatus = t.Object({
  success: t.Literal(true),
  connected: t.Boolean(),
  url: t.Nullable(t.String()),
  username: t.Nullable(t.String()),
  path: t.String({ description: 'The export folder (`/` when none was set)' }),
})
export type ConnectionStatus = typeof ConnectionStatus.static

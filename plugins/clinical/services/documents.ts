// Spec 2, Documents: a clinician's stored documents. Only the allowed types are kept, and only when the file's
// extension, its declared content type and its leading bytes agree. The file goes to object storage when S3_* is
// set, else to DATA_DIR/files; either way a download is a short-lived signed address: S3's presigned URL, or a
// route of this app whose link carries an HMAC signature and an expiry.
import { HttpError } from '../../../src/core/errors'
import { attachmentDisposition, visibleFileName } from '../../../src/core/storage'
import type { Core } from '../../../src/plugin'
import type { BodyLimit } from '../../../src/envelope'
import { DESCRIPTION_MAX, DOCUMENT_MAX_BYTES, type StoredDocument } from '../models/files'

/** How long a download address works. */
export const DOWNLOAD_URL_TTL_S = 5 * 60
/** Room for the multipart framing and the description around a file of the limit's size. */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024
export const FILENAME_MAX = 255

export const MESSAGES = {
  tooLarge: `The file is larger than the limit of 10 MB (${DOCUMENT_MAX_BYTES} bytes)`,
  empty: 'The file is empty',
  unsupported: 'Only PDF, JPEG, PNG and GIF images, Word documents (.doc, .docx), text (.txt) and CSV (.csv) files can be uploaded',
  notFound: 'Document not found',
  invalidLink: 'This download link is not valid',
  expiredLink: 'This download link has expired: ask for a new one',
  storageFailed: 'The document store could not be reached',
} as const

/** The upload route's body limit: a file at the limit with its framing; anything more is refused before it is read. */
export const UPLOAD_BODY_LIMIT: BodyLimit = {
  bytes: DOCUMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES, code: 'file_too_large', message: MESSAGES.tooLarge,
}

// ---- the allowed types --------------------------------------------------------------------------------------

type ContentCheck = { magic: string[] } | { text: true }

interface AllowedType {
  /** The type stored and served for the extension. */
  mime: string
  /** Content types a client may declare for it (browsers differ: Windows sends CSV as application/vnd.ms-excel). */
  declared: string[]
  content: ContentCheck
  label: string
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const JPEG: AllowedType = { mime: 'image/jpeg', declared: ['image/jpeg', 'image/jpg', 'image/pjpeg'], content: { magic: ['image/jpeg'] }, label: 'a JPEG image' }

/** Extension -> its type. A .doc is an OLE compound file; a .docx a zip with Word's parts (file-type tells both). */
export const ALLOWED_TYPES: Record<string, AllowedType> = {
  pdf: { mime: 'application/pdf', declared: ['application/pdf', 'application/x-pdf'], content: { magic: ['application/pdf'] }, label: 'a PDF' },
  jpg: JPEG,
  jpeg: JPEG,
  png: { mime: 'image/png', declared: ['image/png'], content: { magic: ['image/png'] }, label: 'a PNG image' },
  gif: { mime: 'image/gif', declared: ['image/gif'], content: { magic: ['image/gif'] }, label: 'a GIF image' },
  doc: { mime: 'application/msword', declared: ['application/msword'], content: { magic: ['application/x-cfb'] }, label: 'a Word (.doc) document' },
  docx: { mime: DOCX, declared: [DOCX], content: { magic: [DOCX] }, label: 'a Word (.docx) document' },
  txt: { mime: 'text/plain', declared: ['text/plain'], content: { text: true }, label: 'plain text (UTF-8)' },
  csv: {
    mime: 'text/csv', declared: ['text/csv', 'application/csv', 'text/x-csv', 'application/vnd.ms-excel', 'text/plain'],
    content: { text: true }, label: 'CSV text (UTF-8)',
  },
}

/** What a client sends when it does not know the type: the extension and the content then decide. */
const UNDECLARED = new Set(['', 'application/octet-stream'])

/** The name a file was uploaded with, without any folder part, control character or leading dot; never empty. */
export function cleanFilename(name: string | undefined): string {
  const base = visibleFileName(name ?? '')
  const chars = [...base]
  if (chars.length <= FILENAME_MAX) return chars.join('')
  // Long names keep their extension.
  const ext = /\.[A-Za-z0-9]{1,8}$/.exec(base)?.[0] ?? ''
  return chars.slice(0, FILENAME_MAX - ext.length).join('') + ext
}

const extensionOf = (name: string) => /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase() ?? ''

/** UTF-8 without NUL bytes, read as a stream (the file is not decoded whole into memory). */
async function isPlainText(file: Blob): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const reader = file.stream().getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (value.includes(0)) return false
      decoder.decode(value, { stream: true })
    }
    decoder.decode()
    return true
  } catch {
    return false
  } finally {
    void reader.cancel().catch(() => {})
  }
}

/** The allowed type of an upload, or the refusal (415) naming which of extension, declared type or content failed. */
export async function checkDocumentType(file: File, filename: string): Promise<{ ext: string; type: AllowedType }> {
  const ext = extensionOf(filename)
  const type = ALLOWED_TYPES[ext]
  if (!type) throw new HttpError(415, 'unsupported_file_type', MESSAGES.unsupported)
  const declared = (file.type ?? '').split(';')[0]!.trim().toLowerCase()
  if (!UNDECLARED.has(declared) && !type.declared.includes(declared)) {
    throw new HttpError(415, 'type_mismatch', `The file's declared type (${declared}) does not match its .${ext} extension`)
  }
  // The leading bytes decide what the file is, whatever its name says.
  const detected = await (await import('file-type')).fileTypeFromBlob(file).catch(() => undefined)
  const matches = 'magic' in type.content
    ? detected !== undefined && type.content.magic.includes(detected.mime)
    : detected === undefined && (await isPlainText(file))
  if (!matches) throw new HttpError(415, 'content_mismatch', `The file's content is not ${type.label}, as its .${ext} extension says`)
  return { ext, type }
}

// ---- rows -----------------------------------------------------------------------------------------------------

interface DocumentRow {
  id: number
  user_id: number
  filename: string
  mime_type: string
  size_bytes: number
  description: string
  storage: 's3' | 'local'
  storage_key: string
  created_at: Date
}

const toStoredDocument = (row: DocumentRow): StoredDocument => ({
  id: row.id,
  filename: row.filename,
  mime_type: row.mime_type,
  size_bytes: Number(row.size_bytes),
  description: row.description,
  created_at: row.created_at.toISOString(),
})

const storageFailure = (err: unknown) => err instanceof HttpError ? err : HttpError.upstream('storage_failed', err, MESSAGES.storageFailed)

/** The object store a row's file is in; 503 when the row is in S3 and S3 is no longer configured. */
function objectStoreOf(core: Core) {
  const s3 = core.storage.s3
  if (!s3) throw HttpError.unavailable('storage_unavailable', 'This document is in object storage, which is not configured now')
  return s3
}

async function deleteStored(core: Core, storage: DocumentRow['storage'], key: string): Promise<void> {
  if (storage === 'local') return core.storage.delete(key)
  try {
    await objectStoreOf(core).delete(key)
  } catch (err) {
    throw storageFailure(err)
  }
}

// ---- the operations ----------------------------------------------------------------------------------------

export async function uploadDocument(core: Core, userId: number, file: File, description: string | undefined): Promise<{ id: number; filename: string }> {
  // The declared length may be absent or wrong (chunked bodies): the actual size decides.
  if (file.size > DOCUMENT_MAX_BYTES) throw HttpError.tooLarge('file_too_large', MESSAGES.tooLarge)
  if (file.size === 0) throw HttpError.badRequest('empty_file', MESSAGES.empty)
  const filename = cleanFilename(file.name)
  const { ext, type } = await checkDocumentType(file, filename)
  const text = (description ?? '').trim().slice(0, DESCRIPTION_MAX)

  const storage = core.storage.s3 ? 's3' : 'local'
  const key = `clinical-documents/${crypto.randomUUID()}.${ext}`
  try {
    if (core.storage.s3) await core.storage.s3.put(key, file, { type: type.mime })
    else await core.storage.put(key, file)
  } catch (err) {
    throw storageFailure(err)
  }
  try {
    const [row] = await core.db.sql<{ id: number }>`
      insert into clinical.documents (user_id, filename, mime_type, size_bytes, description, storage, storage_key)
      values (${userId}, ${filename}, ${type.mime}, ${file.size}, ${text}, ${storage}, ${key})
      returning id`
    return { id: row!.id, filename }
  } catch (err) {
    // Nothing half-stored: the file goes again when its row could not be written.
    await deleteStored(core, storage, key).catch((e) => core.log.warn({ err: e, key }, 'document file left after a failed insert'))
    throw err
  }
}

export async function listDocuments(core: Core, userId: number): Promise<StoredDocument[]> {
  const rows = await core.db.sql<DocumentRow>`
    select id, user_id, filename, mime_type, size_bytes, description, storage, storage_key, created_at
    from clinical.documents where user_id = ${userId} order by created_at desc, id desc`
  return rows.map(toStoredDocument)
}

/** The caller's own document; 404 for anyone else's, as for one that does not exist. */
async function ownDocument(core: Core, userId: number, id: number): Promise<DocumentRow> {
  const [row] = await core.db.sql<DocumentRow>`
    select id, user_id, filename, mime_type, size_bytes, description, storage, storage_key, created_at
    from clinical.documents where id = ${id} and user_id = ${userId}`
  if (!row) throw HttpError.notFound('document_not_found', MESSAGES.notFound)
  return row
}

/** The address of the app's signed file route for a document (`APP_URL` first when set, else root-relative). */
export const signedFilePath = (core: Core, id: number) => `${core.config.appUrl ?? ''}${core.config.clinicalBasePath}/api/documents/${id}/file`

export async function downloadUrl(core: Core, userId: number, id: number): Promise<{ url: string; expires_at: string }> {
  const row = await ownDocument(core, userId, id)
  const expiresAtS = Math.floor(core.now() / 1000) + DOWNLOAD_URL_TTL_S
  const expires_at = new Date(expiresAtS * 1000).toISOString()
  if (row.storage === 's3') {
    const url = objectStoreOf(core).presign(row.storage_key, { expiresInS: DOWNLOAD_URL_TTL_S, filename: row.filename, type: row.mime_type })
    return { url, expires_at }
  }
  const signature = core.storage.signLink(row.storage_key, expiresAtS)
  return { url: `${signedFilePath(core, row.id)}?expires=${expiresAtS}&signature=${signature}`, expires_at }
}

/**
 * The signed route of a locally stored document: 403 for a link whose signature does not match (tampered, or
 * for another document) and for an expired one; no session needed, the signature is the permission.
 */
export async function openSignedFile(core: Core, id: number, expiresAtS: number, signature: string): Promise<Response> {
  const [row] = await core.db.sql<DocumentRow>`
    select id, user_id, filename, mime_type, size_bytes, description, storage, storage_key, created_at
    from clinical.documents where id = ${id}`
  if (!row || row.storage !== 'local' || !Number.isSafeInteger(expiresAtS) || !core.storage.verifyLink(row.storage_key, expiresAtS, signature)) {
    throw HttpError.forbidden('invalid_link', MESSAGES.invalidLink)
  }
  if (expiresAtS * 1000 <= core.now()) throw HttpError.forbidden('link_expired', MESSAGES.expiredLink)
  const file = await core.storage.get(row.storage_key)
  if (!file) throw HttpError.notFound('document_not_found', MESSAGES.notFound)
  return new Response(file, {
    headers: {
      'content-type': row.mime_type.startsWith('text/') ? `${row.mime_type}; charset=utf-8` : row.mime_type,
      'content-length': String(file.size),
      'content-disposition': attachmentDisposition(row.filename),
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
    },
  })
}

/** Removes the file, then the row (a store that fails leaves both, and answers 502). */
export async function deleteDocument(core: Core, userId: number, id: number): Promise<void> {
  const row = await ownDocument(core, userId, id)
  await deleteStored(core, row.storage, row.storage_key)
  await core.db.sql`delete from clinical.documents where id = ${row.id}`
}

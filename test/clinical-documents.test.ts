// Spec 2, Documents: upload of each allowed type (tiny real samples made here), the refusals (extension, declared
// type, leading bytes, empty, over 10 MB with and without a declared length), the listing, own documents only,
// delete; the local folder with the app's HMAC-signed links (works, tampered 403, expired 403 on a moved clock);
// and object storage against a real S3-protocol server (s3rver): upload, s3_configured, the presigned URL
// answering the bytes, delete removing the object.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DOCUMENT_MAX_BYTES } from '../plugins/clinical/models/files'
import { DOWNLOAD_URL_TTL_S, MESSAGES, MULTIPART_OVERHEAD_BYTES } from '../plugins/clinical/services/documents'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { userWithSession, type SignedIn } from './support/clinical'
import { startS3Server, type S3Server } from './support/s3'

setDefaultTimeout(60_000)

// ---- tiny real samples ------------------------------------------------------------------------------------------

const enc = new TextEncoder()
const b64 = (s: string): Uint8Array<ArrayBuffer> => Uint8Array.from(Buffer.from(s, 'base64'))
const concat = (...parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const PDF = enc.encode('%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n')
const PNG = b64('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==')
const GIF = b64('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7')
const JPEG = concat(
  new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), enc.encode('JFIF\0'),
  new Uint8Array([0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9]),
)
/** An OLE compound file header (what a .doc is), padded to one 512-byte sector. */
const DOC = (() => {
  const bytes = new Uint8Array(512)
  bytes.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
  bytes.set([0x3e, 0x00, 0x03, 0x00, 0xfe, 0xff, 0x09, 0x00], 24)
  return bytes
})()

/** A stored (uncompressed) zip archive. */
function zip(entries: Record<string, string>): Uint8Array<ArrayBuffer> {
  const locals: Uint8Array[] = []
  const centrals: Uint8Array[] = []
  let offset = 0
  for (const [name, content] of Object.entries(entries)) {
    const nameBytes = enc.encode(name)
    const data = enc.encode(content)
    const crc = Bun.hash.crc32(data)
    const local = new DataView(new ArrayBuffer(30))
    local.setUint32(0, 0x04034b50, true)
    local.setUint16(4, 20, true)
    local.setUint32(14, crc, true)
    local.setUint32(18, data.length, true)
    local.setUint32(22, data.length, true)
    local.setUint16(26, nameBytes.length, true)
    const central = new DataView(new ArrayBuffer(46))
    central.setUint32(0, 0x02014b50, true)
    central.setUint16(4, 20, true)
    central.setUint16(6, 20, true)
    central.setUint32(16, crc, true)
    central.setUint32(20, data.length, true)
    central.setUint32(24, data.length, true)
    central.setUint16(28, nameBytes.length, true)
    central.setUint32(42, offset, true)
    const localPart = concat(new Uint8Array(local.buffer), nameBytes, data)
    locals.push(localPart)
    centrals.push(concat(new Uint8Array(central.buffer), nameBytes))
    offset += localPart.length
  }
  const cd = concat(...centrals)
  const end = new DataView(new ArrayBuffer(22))
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, centrals.length, true)
  end.setUint16(10, centrals.length, true)
  end.setUint32(12, cd.length, true)
  end.setUint32(16, offset, true)
  return concat(...locals, cd, new Uint8Array(end.buffer))
}

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const DOCX = zip({
  '[Content_Types].xml': '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    + '<Default Extension="xml" ContentType="application/xml"/>'
    + `<Override PartName="/word/document.xml" ContentType="${DOCX_MIME}.main+xml"/></Types>`,
  'word/document.xml': '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Discharge letter</w:t></w:r></w:p></w:body></w:document>',
})
const TXT = enc.encode('Follow-up in two weeks.\nBring the medication list. Ärztin: Dr. Müller\n')
const CSV = enc.encode('date,weight_kg\n2026-01-02,12.4\n2026-02-03,12.9\n')
const EXE = concat(enc.encode('MZ'), new Uint8Array(126), enc.encode('PE\0\0'), new Uint8Array(64))

const SAMPLES = [
  { name: 'letter.pdf', type: 'application/pdf', bytes: PDF, mime: 'application/pdf' },
  { name: 'rash.jpg', type: 'image/jpeg', bytes: JPEG, mime: 'image/jpeg' },
  { name: 'rash.JPEG', type: 'image/jpeg', bytes: JPEG, mime: 'image/jpeg' },
  { name: 'growth.png', type: 'image/png', bytes: PNG, mime: 'image/png' },
  { name: 'spinner.gif', type: 'image/gif', bytes: GIF, mime: 'image/gif' },
  { name: 'referral.doc', type: 'application/msword', bytes: DOC, mime: 'application/msword' },
  { name: 'discharge.docx', type: DOCX_MIME, bytes: DOCX, mime: DOCX_MIME },
  { name: 'plan.txt', type: 'text/plain', bytes: TXT, mime: 'text/plain' },
  { name: 'weights.csv', type: 'text/csv', bytes: CSV, mime: 'text/csv' },
  // Windows browsers declare CSV files as Excel's type; a client that does not know sends octet-stream.
  { name: 'weights-win.csv', type: 'application/vnd.ms-excel', bytes: CSV, mime: 'text/csv' },
  { name: 'scan.pdf', type: 'application/octet-stream', bytes: PDF, mime: 'application/pdf' },
]

// ---- helpers ------------------------------------------------------------------------------------------------------

interface StoredDocument { id: number; filename: string; mime_type: string; size_bytes: number; description: string; created_at: string }
interface ErrorBody { success: false; error: string; code: string }

function upload(t: TestApp, who: SignedIn, bytes: Uint8Array<ArrayBuffer>, name: string, type: string, extra: { description?: string; headers?: Record<string, string> } = {}) {
  const form = new FormData()
  form.append('file', new File([bytes], name, { type }))
  if (extra.description !== undefined) form.append('description', extra.description)
  return t.request('/api/documents/upload', { method: 'POST', body: form, token: who.token, headers: extra.headers })
}

async function uploaded(t: TestApp, who: SignedIn, bytes: Uint8Array<ArrayBuffer>, name: string, type: string, description?: string): Promise<number> {
  const res = await upload(t, who, bytes, name, type, { description })
  const body = (await res.json()) as { success: boolean; id: number; filename: string }
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(body).toMatchObject({ success: true, filename: name })
  return body.id
}

async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body.success).toBe(false)
  expect(body.code).toBe(code)
  return body
}

async function list(t: TestApp, who: SignedIn) {
  const res = await t.get('/api/documents', { token: who.token })
  expect(res.status).toBe(200)
  return (await res.json()) as { success: true; s3_configured: boolean; documents: StoredDocument[] }
}

async function downloadUrl(t: TestApp, who: SignedIn, id: number): Promise<string> {
  const res = await t.get(`/api/documents/${id}/download`, { token: who.token })
  const body = (await res.json()) as { success: boolean; url: string; expires_at: string }
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(body.success).toBe(true)
  return body.url
}

const rowOf = async (t: TestApp, id: number) =>
  (await t.db.sql<{ storage: string; storage_key: string; user_id: number }>`
    select storage, storage_key, user_id from clinical.documents where id = ${id}`)[0]

const documentCount = async (t: TestApp) =>
  Number((await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.documents`)[0]!.n)

/** The files under the app's local document folder. */
const localFiles = (t: TestApp) => {
  const dir = join(t.dataDir, 'files', 'clinical-documents')
  return existsSync(dir) ? readdirSync(dir) : []
}

// ---- the local folder ---------------------------------------------------------------------------------------------

for (const target of databaseTargets()) {
  describe(`clinical documents, local folder [${target}]`, () => {
    let t: TestApp
    let owner: SignedIn
    let other: SignedIn
    let offsetMs = 0

    beforeAll(async () => {
      t = await startTestApp({ target, boot: { now: () => Date.now() + offsetMs } })
      owner = await userWithSession(t)
      other = await userWithSession(t)
    })
    afterAll(() => t.close())

    it('stores each allowed type, checked by extension, declared type and leading bytes', async () => {
      for (const s of SAMPLES) {
        const id = await uploaded(t, owner, s.bytes, s.name, s.type)
        const row = await rowOf(t, id)
        expect(row!.storage).toBe('local')
        const doc = (await list(t, owner)).documents.find((d) => d.id === id)
        expect(doc, s.name).toMatchObject({ filename: s.name, mime_type: s.mime, size_bytes: s.bytes.length, description: '' })
      }
    })

    it('lists own documents only, newest first, with s3_configured false and the description', async () => {
      const id = await uploaded(t, owner, TXT, 'with-description.txt', 'text/plain', 'Dietitian plan <b>bold</b>')
      const mine = await list(t, owner)
      expect(mine.s3_configured).toBe(false)
      expect(mine.documents[0]).toMatchObject({ id, description: 'Dietitian plan <b>bold</b>' })
      expect(new Date(mine.documents[0]!.created_at).toISOString()).toBe(mine.documents[0]!.created_at)
      expect((await list(t, other)).documents).toEqual([])
    })

    it('keeps the file under a name the server made, never the uploaded name; a folder part of the name is dropped', async () => {
      const id = await uploaded(t, owner, PDF, 'report.pdf', 'application/pdf')
      const row = await rowOf(t, id)
      expect(row!.storage_key).toMatch(/^clinical-documents\/[0-9a-f-]{36}\.pdf$/)
      expect(localFiles(t)).toContain(row!.storage_key.split('/')[1]!)
      const res = await upload(t, owner, PDF, '../../etc/evil.pdf', 'application/pdf')
      expect(res.status).toBe(200)
      expect(((await res.json()) as { filename: string }).filename).toBe('evil.pdf')
    })

    it('refuses a .exe declared as PDF (415 unsupported_file_type); nothing stored', async () => {
      const before = await documentCount(t)
      const files = localFiles(t).length
      await expectError(await upload(t, owner, EXE, 'setup.exe', 'application/pdf'), 415, 'unsupported_file_type')
      expect(await documentCount(t)).toBe(before)
      expect(localFiles(t).length).toBe(files)
    })

    it('refuses a program renamed to .pdf and declared as PDF: its leading bytes say otherwise (415 content_mismatch)', async () => {
      const before = await documentCount(t)
      const files = localFiles(t).length
      const body = await expectError(await upload(t, owner, EXE, 'results.pdf', 'application/pdf'), 415, 'content_mismatch')
      expect(body.error).toContain('not a PDF')
      expect(await documentCount(t)).toBe(before)
      expect(localFiles(t).length).toBe(files)
    })

    it('refuses content of another allowed type under the wrong extension, and a docx that is a plain zip', async () => {
      await expectError(await upload(t, owner, PNG, 'photo.jpg', 'image/jpeg'), 415, 'content_mismatch')
      await expectError(await upload(t, owner, PDF, 'letter.docx', DOCX_MIME), 415, 'content_mismatch')
      await expectError(await upload(t, owner, zip({ 'notes.txt': 'just a zip' }), 'letter.docx', DOCX_MIME), 415, 'content_mismatch')
      await expectError(await upload(t, owner, DOCX, 'letter.doc', 'application/msword'), 415, 'content_mismatch')
    })

    it('refuses text files that are not UTF-8 text: a NUL byte, invalid UTF-8, or a binary file named .txt', async () => {
      await expectError(await upload(t, owner, enc.encode('a\0b'), 'nul.txt', 'text/plain'), 415, 'content_mismatch')
      await expectError(await upload(t, owner, new Uint8Array([0x61, 0xff, 0xfe, 0x62]), 'latin.csv', 'text/csv'), 415, 'content_mismatch')
      await expectError(await upload(t, owner, PNG, 'image.txt', 'text/plain'), 415, 'content_mismatch')
    })

    it('refuses a declared type that contradicts the extension (415 type_mismatch) and an unknown extension', async () => {
      await expectError(await upload(t, owner, PDF, 'letter.pdf', 'image/png'), 415, 'type_mismatch')
      await expectError(await upload(t, owner, TXT, 'page.html', 'text/html'), 415, 'unsupported_file_type')
      await expectError(await upload(t, owner, PDF, 'no-extension', 'application/pdf'), 415, 'unsupported_file_type')
    })

    it('refuses an empty file (400) and a form without the file field (400)', async () => {
      await expectError(await upload(t, owner, new Uint8Array(0), 'empty.pdf', 'application/pdf'), 400, 'empty_file')
      const form = new FormData()
      form.append('description', 'no file')
      await expectError(await t.request('/api/documents/upload', { method: 'POST', body: form, token: owner.token }), 400, 'invalid_input')
      // a multipart body cut off before its closing delimiter
      const cut = '--B\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 no end'
      await expectError(await t.request('/api/documents/upload', {
        method: 'POST', body: cut, token: owner.token, headers: { 'content-type': 'multipart/form-data; boundary=B' },
      }), 400, 'invalid_body')
    })

    it('reads the declared type and the name from the part headers as sent (quoted and RFC 5987 names)', async () => {
      const send = (disposition: string, type: string) => t.request('/api/documents/upload', {
        method: 'POST', token: owner.token, headers: { 'content-type': 'multipart/form-data; boundary="b-1"' },
        body: concat(enc.encode(`preamble\r\n--b-1\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${type}\r\n\r\n`), PDF,
          enc.encode('\r\n--b-1\r\nContent-Disposition: form-data; name="description"\r\n\r\nline one\r\nline two\r\n--b-1--\r\n')),
      })
      const quoted = await send('form-data; name="file"; filename="Dr \\"Who\\" letter.pdf"', 'application/pdf')
      expect(quoted.status).toBe(200)
      expect(((await quoted.json()) as { filename: string }).filename).toBe('Dr "Who" letter.pdf')
      const extended = await send(`form-data; name="file"; filename="x.pdf"; filename*=UTF-8''Befund%20M%C3%BCller.pdf`, 'application/pdf')
      const { id } = (await extended.json()) as { id: number }
      const doc = (await list(t, owner)).documents.find((d) => d.id === id)
      expect(doc).toMatchObject({ filename: 'Befund Müller.pdf', description: 'line one\r\nline two' })
      // the declared type is the part's, whatever the name's extension suggests
      await expectError(await send('form-data; name="file"; filename="letter.pdf"', 'image/gif'), 415, 'type_mismatch')
    })

    it('refuses a file one byte over 10 MB with 413 (actual size); exactly 10 MB is accepted', async () => {
      const big = new Uint8Array(DOCUMENT_MAX_BYTES + 1)
      big.set(PDF)
      big.fill(0x20, PDF.length)
      const before = await documentCount(t)
      const body = await expectError(await upload(t, owner, big, 'big.pdf', 'application/pdf'), 413, 'file_too_large')
      expect(body.error).toBe(MESSAGES.tooLarge)
      expect(await documentCount(t)).toBe(before)
      await uploaded(t, owner, big.subarray(0, DOCUMENT_MAX_BYTES), 'limit.pdf', 'application/pdf')
    })

    it('refuses a declared Content-Length over the limit with 413 before the body is read', async () => {
      const before = await documentCount(t)
      const declared = DOCUMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES + 1
      await expectError(await upload(t, owner, PDF, 'small.pdf', 'application/pdf', { headers: { 'content-length': String(declared) } }), 413, 'file_too_large')
      expect(await documentCount(t)).toBe(before)
    })

    it('needs a session', async () => {
      const form = new FormData()
      form.append('file', new File([PDF], 'a.pdf', { type: 'application/pdf' }))
      expect((await t.request('/api/documents/upload', { method: 'POST', body: form })).status).toBe(401)
      expect((await t.get('/api/documents')).status).toBe(401)
    })

    it('a signed local link answers the bytes as an attachment, without a session', async () => {
      const id = await uploaded(t, owner, DOCX, 'Entlassbrief Müller.docx', DOCX_MIME)
      const url = await downloadUrl(t, owner, id)
      expect(url).toStartWith(`/api/documents/${id}/file?expires=`)
      const res = await t.get(url)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(DOCX_MIME)
      expect(res.headers.get('content-disposition')).toContain(`filename*=UTF-8''Entlassbrief%20M%C3%BCller.docx`)
      expect(res.headers.get('cache-control')).toContain('no-store')
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(DOCX)
    })

    it('a tampered link is 403: another signature, another expiry, another document', async () => {
      const id = await uploaded(t, owner, TXT, 'a.txt', 'text/plain')
      const otherId = await uploaded(t, owner, TXT, 'b.txt', 'text/plain')
      const url = new URL(await downloadUrl(t, owner, id), 'http://localhost')
      const sig = url.searchParams.get('signature')!
      const expires = Number(url.searchParams.get('expires'))

      const flipped = new URL(url)
      flipped.searchParams.set('signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1))
      await expectError(await t.get(flipped.pathname + flipped.search), 403, 'invalid_link')

      const later = new URL(url)
      later.searchParams.set('expires', String(expires + 3600))
      await expectError(await t.get(later.pathname + later.search), 403, 'invalid_link')

      await expectError(await t.get(`/api/documents/${otherId}/file${url.search}`), 403, 'invalid_link')
      await expectError(await t.get(`/api/documents/${id}/file?expires=${expires}&signature=`), 403, 'invalid_link')
      // the untouched link still works
      expect((await t.get(url.pathname + url.search)).status).toBe(200)
    })

    it('an expired link is 403 (clock moved past its lifetime); a new one works again', async () => {
      const id = await uploaded(t, owner, CSV, 'expiring.csv', 'text/csv')
      const url = await downloadUrl(t, owner, id)
      expect((await t.get(url)).status).toBe(200)
      offsetMs = (DOWNLOAD_URL_TTL_S + 1) * 1000
      try {
        await expectError(await t.get(url), 403, 'link_expired')
        const fresh = await downloadUrl(t, owner, id)
        const res = await t.get(fresh)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
        expect(await res.text()).toBe(new TextDecoder().decode(CSV))
      } finally {
        offsetMs = 0
      }
    })

    it('another user\'s document is 404 for download and delete, and stays', async () => {
      const id = await uploaded(t, owner, PDF, 'private.pdf', 'application/pdf')
      await expectError(await t.get(`/api/documents/${id}/download`, { token: other.token }), 404, 'document_not_found')
      await expectError(await t.delete(`/api/documents/${id}`, { token: other.token }), 404, 'document_not_found')
      await expectError(await t.get('/api/documents/999999/download', { token: owner.token }), 404, 'document_not_found')
      expect(await rowOf(t, id)).toBeDefined()
    })

    it('delete removes the row and the file; its old link stops working', async () => {
      const id = await uploaded(t, owner, GIF, 'gone.gif', 'image/gif')
      const url = await downloadUrl(t, owner, id)
      const { storage_key } = (await rowOf(t, id))!
      expect(existsSync(join(t.dataDir, 'files', storage_key))).toBe(true)
      const res = await t.delete(`/api/documents/${id}`, { token: owner.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true })
      expect(await rowOf(t, id)).toBeUndefined()
      expect(existsSync(join(t.dataDir, 'files', storage_key))).toBe(false)
      expect((await list(t, owner)).documents.some((d) => d.id === id)).toBe(false)
      expect((await t.get(url)).status).toBe(403)
      await expectError(await t.delete(`/api/documents/${id}`, { token: owner.token }), 404, 'document_not_found')
    })
  })
}

// ---- object storage (s3rver) ----------------------------------------------------------------------------------------

for (const target of databaseTargets()) {
  describe(`clinical documents, object storage [${target}]`, () => {
    let s3: S3Server
    let t: TestApp
    let owner: SignedIn
    let other: SignedIn

    beforeAll(async () => {
      s3 = await startS3Server()
      t = await startTestApp({ target, env: s3.env })
      owner = await userWithSession(t)
      other = await userWithSession(t)
    })
    afterAll(async () => {
      await t.close()
      await s3.close()
    })

    it('stores an upload in the bucket under a server-made key; the listing says s3_configured true', async () => {
      const id = await uploaded(t, owner, PDF, 'letter.pdf', 'application/pdf', 'From the cardiologist')
      const row = (await rowOf(t, id))!
      expect(row.storage).toBe('s3')
      expect(row.storage_key).toMatch(/^clinical-documents\/[0-9a-f-]{36}\.pdf$/)
      expect(await s3.client.exists(row.storage_key)).toBe(true)
      expect(new Uint8Array(await s3.client.file(row.storage_key).arrayBuffer())).toEqual(PDF)
      expect(localFiles(t)).toEqual([])
      const listing = await list(t, owner)
      expect(listing.s3_configured).toBe(true)
      expect(listing.documents[0]).toMatchObject({ id, filename: 'letter.pdf', mime_type: 'application/pdf', description: 'From the cardiologist' })
    })

    it('the presigned URL downloads the bytes from the bucket, as an attachment with the uploaded name', async () => {
      const id = await uploaded(t, owner, PNG, 'growth chart.png', 'image/png')
      const url = await downloadUrl(t, owner, id)
      expect(url).toStartWith(`${s3.endpoint}/`)
      expect(url).toContain('X-Amz-Signature=')
      expect(url).toContain(`X-Amz-Expires=${DOWNLOAD_URL_TTL_S}`)
      const res = await fetch(url)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toContain('growth chart.png')
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG)
    })

    it('refusals store nothing in the bucket', async () => {
      const before = await documentCount(t)
      await expectError(await upload(t, owner, EXE, 'results.pdf', 'application/pdf'), 415, 'content_mismatch')
      expect(await documentCount(t)).toBe(before)
      const keys = (await s3.client.list({ prefix: 'clinical-documents/' })).contents ?? []
      expect(keys.length).toBe(before)
    })

    it('another user\'s document is 404; delete removes the object and the row', async () => {
      const id = await uploaded(t, owner, TXT, 'plan.txt', 'text/plain')
      const { storage_key } = (await rowOf(t, id))!
      await expectError(await t.delete(`/api/documents/${id}`, { token: other.token }), 404, 'document_not_found')
      expect(await s3.client.exists(storage_key)).toBe(true)
      const res = await t.delete(`/api/documents/${id}`, { token: owner.token })
      expect(res.status).toBe(200)
      expect(await s3.client.exists(storage_key)).toBe(false)
      expect(await rowOf(t, id)).toBeUndefined()
    })
  })
}

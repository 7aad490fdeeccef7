// Spec 1, Documents: upload, processing (its states and steps), visibility, sections, delete; through the real app
// with real PDFs (test/support/pdf.ts). WORKERS=0: the processing job runs inside the upload request.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { localEmbedding } from '../src/core/embedder'
import {
  CHUNK_CHARS, MESSAGES, MULTIPART_OVERHEAD_BYTES, PROCESS_DOCUMENT_JOB, chunkPage, documentCollection, documentStorageKey,
} from '../plugins/quiz/services/documents'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  makeBlankPdf, makeCorruptPdf, makeEncryptedPdf, makePdf, makeTruncatedPdf, numberedPages,
} from './support/pdf'
import { API, createAccount, expectDetail, loginToken, registerAdmin, upload, type Account } from './support/quiz'

setDefaultTimeout(60_000)

// Small enough to test the limit with a small file, large enough for the 300-page PDF (about 260 kB).
const MAX_UPLOAD_SIZE = 600_000

interface DocumentBody {
  id: number; user_id: number; filename: string; original_filename: string; status: string
  total_pages: number; error_message: string | null; uploaded_at: string
}
interface StepBody { name: string; status: string; message: string; timestamp: string }
interface SectionBody { id: number; document_id: number; name: string; start_page: number; end_page: number }

/** Uploads, checks the answer is the spec's `processing` DocumentResponse, and returns the document as it is now. */
async function uploadProcessed(t: TestApp, account: Account, bytes: Uint8Array<ArrayBuffer>, name = 'notes.pdf'): Promise<DocumentBody> {
  const res = await upload(t, account.token, bytes, name)
  expect(res.status).toBe(200)
  const body = (await res.json()) as DocumentBody
  expect(body.status).toBe('processing')
  const now = await t.get(`${API}/documents/${body.id}`, { token: account.token })
  expect(now.status).toBe(200)
  return (await now.json()) as DocumentBody
}

const steps = async (t: TestApp, id: number, token: string) => {
  const res = await t.get(`${API}/documents/${id}/processing-steps`, { token })
  expect(res.status).toBe(200)
  return ((await res.json()) as { steps: StepBody[] }).steps
}

const documentRow = async (t: TestApp, id: number) =>
  (await t.db.sql<{ storage_key: string; processing_job_id: string | null; size_bytes: number }>`
    select storage_key, processing_job_id, size_bytes from quiz.documents where id = ${id}`)[0] ?? null

const documentCount = async (t: TestApp) => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.documents`)[0]!.n

describe('page chunks', () => {
  it('cuts a long page into overlapping chunks of at most CHUNK_CHARS, ids tagged with the page', () => {
    const text = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ')
    const chunks = chunkPage(12, text)
    expect(chunks.length).toBeGreaterThan(2)
    expect(chunks.map((c) => c.id).slice(0, 3)).toEqual(['p12-c0', 'p12-c1', 'p12-c2'])
    for (const c of chunks) expect(c.text.length).toBeLessThanOrEqual(CHUNK_CHARS)
    // consecutive chunks overlap: the next one starts with words the previous one ended with
    const lastWord = chunks[0]!.text.split(' ').pop()!
    expect(chunks[1]!.text.includes(lastWord)).toBe(true)
    expect(chunks.at(-1)!.text.endsWith('word399')).toBe(true)
    expect(chunkPage(3, '   ')).toEqual([])
  })
})

for (const target of databaseTargets()) {
  describe(`quiz documents [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account
    let user: Account
    let textDoc: DocumentBody
    const pages = [
      ['Cardiology basics', 'The heart has four chambers: two atria and two ventricles.'],
      ['Valves', 'The mitral valve lies between the left atrium and the left ventricle. '.repeat(40)],
      ['Conduction', 'The sinoatrial node is the natural pacemaker of the heart.'],
    ]

    beforeAll(async () => {
      t = await startTestApp({ target, env: { MAX_UPLOAD_SIZE: String(MAX_UPLOAD_SIZE) } })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
      user = await createAccount(t, admin, 'user')
      textDoc = await uploadProcessed(t, moderator, await makePdf(pages), 'Cardiology notes.pdf')
    })
    afterAll(() => t.close())

    describe('upload and processing', () => {
      it('a text PDF: answered as `processing`, then ready with its pages, text, stored file and job', async () => {
        expect(textDoc).toMatchObject({ user_id: moderator.id, original_filename: 'Cardiology notes.pdf', status: 'ready', total_pages: 3, error_message: null })
        expect(textDoc.filename).toMatch(/^[0-9a-f-]{36}\.pdf$/)
        expect(Number.isNaN(Date.parse(textDoc.uploaded_at))).toBe(false)
        const status = await t.get(`${API}/documents/${textDoc.id}/status`, { token: moderator.token })
        expect(await status.json()).toEqual({ id: textDoc.id, status: 'ready', total_pages: 3, error_message: null })

        const stored = await t.db.sql<{ page_number: number; text: string }>`
          select page_number, text from quiz.document_pages where document_id = ${textDoc.id} order by page_number`
        expect(stored.map((p) => p.page_number)).toEqual([1, 2, 3])
        expect(stored[0]!.text).toContain('four chambers')
        expect(stored[2]!.text).toContain('sinoatrial node')

        const row = (await documentRow(t, textDoc.id))!
        expect(row.storage_key).toBe(documentStorageKey(textDoc.filename))
        const file = join(t.dataDir, 'files', row.storage_key)
        expect(existsSync(file)).toBe(true)
        expect(readFileSync(file).length).toBe(row.size_bytes)

        const job = (await t.booted.core.jobs.get(row.processing_job_id!))!
        expect(job).toMatchObject({ kind: PROCESS_DOCUMENT_JOB, service: 'quiz', owner_id: moderator.id, title: 'Cardiology notes.pdf', status: 'completed' })
      })

      it('processing steps are ordered {name, status, message, timestamp} objects ending in ready', async () => {
        const list = await steps(t, textDoc.id, moderator.token)
        expect(list.map((s) => [s.name, s.status])).toEqual([
          ['start', 'completed'], ['read', 'completed'], ['extract', 'completed'], ['index', 'completed'], ['done', 'completed'],
        ])
        for (const s of list) {
          expect(Object.keys(s).sort()).toEqual(['message', 'name', 'status', 'timestamp'])
          expect(Number.isNaN(Date.parse(s.timestamp))).toBe(false)
        }
        expect(list.map((s) => Date.parse(s.timestamp))).toEqual(list.map((s) => Date.parse(s.timestamp)).sort((a, b) => a - b))
        expect(list[1]!.message).toBe('Read 3 pages')
        expect(list[2]!.message).toBe('Extracted text from 3 of 3 pages')
        expect(list[3]!.message).toMatch(/^Indexed \d+ text chunks$/)
      })

      it('page text is indexed in chunks in the document\'s own collection, ids tagged with the page', async () => {
        const stored = await t.db.sql<{ page_number: number; text: string }>`
          select page_number, text from quiz.document_pages where document_id = ${textDoc.id} order by page_number`
        const expected = stored.reduce((n, p) => n + chunkPage(p.page_number, p.text).length, 0)
        expect(expected).toBeGreaterThan(3) // page 2 is long enough for several chunks
        expect(await t.booted.core.vectors.count(documentCollection(textDoc.id))).toBe(expected)
        const [match] = await t.booted.core.vectors.search(documentCollection(textDoc.id), localEmbedding('sinoatrial node natural pacemaker'), { topK: 1 })
        expect(match!.id).toBe('p3-c0')
        const steps3 = await steps(t, textDoc.id, moderator.token)
        expect(steps3[3]!.message).toBe(`Indexed ${expected} text chunks`)
      })

      it('a corrupt file with a PDF header: accepted, then failed with a clear message; the app keeps working', async () => {
        const doc = await uploadProcessed(t, moderator, await makeCorruptPdf(), 'broken.pdf')
        expect(doc).toMatchObject({ status: 'failed', total_pages: 0, error_message: MESSAGES.unreadable })
        const list = await steps(t, doc.id, moderator.token)
        expect(list.at(-1)).toMatchObject({ name: 'read', status: 'failed', message: MESSAGES.unreadable })
        const job = (await t.booted.core.jobs.get((await documentRow(t, doc.id))!.processing_job_id!))!
        expect(job).toMatchObject({ status: 'failed', error: MESSAGES.unreadable })
        expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBe(0)
        const next = await uploadProcessed(t, moderator, await makePdf([['Still working after a broken file.']]))
        expect(next.status).toBe('ready')
      })

      it('a truncated PDF ends failed as unreadable', async () => {
        const doc = await uploadProcessed(t, moderator, await makeTruncatedPdf(numberedPages(5)), 'cut.pdf')
        expect(doc).toMatchObject({ status: 'failed', error_message: MESSAGES.unreadable })
      })

      it('a password-protected PDF ends failed, saying it needs a password', async () => {
        const doc = await uploadProcessed(t, moderator, await makeEncryptedPdf(), 'locked.pdf')
        expect(doc.status).toBe('failed')
        expect(doc.error_message).toBe(MESSAGES.passwordProtected)
        expect(doc.error_message).toContain('password')
        expect((await steps(t, doc.id, moderator.token)).at(-1)).toMatchObject({ status: 'failed', message: MESSAGES.passwordProtected })
      })

      it('a scanned PDF (no text layer) is ready, with a step saying no text was found and nothing indexed', async () => {
        const doc = await uploadProcessed(t, moderator, await makeBlankPdf(2), 'scan.pdf')
        expect(doc).toMatchObject({ status: 'ready', total_pages: 2, error_message: null })
        const list = await steps(t, doc.id, moderator.token)
        expect(list.find((s) => s.name === 'extract')!.message).toStartWith('No text found in 2 pages')
        expect(list.find((s) => s.name === 'index')).toMatchObject({ status: 'skipped' })
        expect(list.at(-1)).toMatchObject({ name: 'done', status: 'completed' })
        expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBe(0)
        const stored = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.document_pages where document_id = ${doc.id} and text = ''`
        expect(stored[0]!.n).toBe(2)
      })

      it('a 300-page PDF is processed: ready, 300 pages, the text of page 300 stored and indexed', async () => {
        const doc = await uploadProcessed(t, moderator, await makePdf(numberedPages(300)), 'long.pdf')
        expect(doc).toMatchObject({ status: 'ready', total_pages: 300 })
        const [last] = await t.db.sql<{ text: string }>`select text from quiz.document_pages where document_id = ${doc.id} and page_number = 300`
        expect(last!.text).toContain('Page 300 of 300')
        expect(last!.text).toContain('p300l7')
        const [count] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.document_pages where document_id = ${doc.id}`
        expect(count!.n).toBe(300)
        const ids = (await t.booted.core.vectors.search(documentCollection(doc.id), localEmbedding('Page 300 of 300 marker p300l3'), { topK: 3 })).map((m) => m.id)
        expect(ids.some((id) => id.startsWith('p300-'))).toBe(true)
      })
    })

    describe('upload refusals', () => {
      it('a text file named x.pdf (declared application/pdf) is 415: the content decides; nothing stored', async () => {
        const before = await documentCount(t)
        const detail = await expectDetail(await upload(t, moderator.token, new TextEncoder().encode('just some notes, not a PDF\n'.repeat(20)), 'x.pdf'), 415)
        expect(detail).toBe(MESSAGES.notPdf)
        expect(await documentCount(t)).toBe(before)
      })

      it('a PNG is 415', async () => {
        const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, ...new Array(64).fill(0)])
        await expectDetail(await upload(t, moderator.token, png, 'scan.pdf'), 415)
      })

      it('an empty file is 400', async () => {
        await expectDetail(await upload(t, moderator.token, new Uint8Array(0), 'empty.pdf'), 400)
      })

      it('a file over MAX_UPLOAD_SIZE by one byte is 413 (actual size, no Content-Length sent); nothing stored', async () => {
        const max = t.booted.core.config.maxUploadSize
        expect(max).toBe(MAX_UPLOAD_SIZE)
        const valid = await makePdf([['Padded document']])
        const big = new Uint8Array(max + 1)
        big.set(valid)
        big.fill(0x20, valid.length)
        const before = await documentCount(t)
        expect(await expectDetail(await upload(t, moderator.token, big, 'big.pdf'), 413)).toBe(MESSAGES.tooLarge(max))
        expect(await documentCount(t)).toBe(before)
        // exactly at the limit is accepted
        const atLimit = big.slice(0, max)
        expect((await upload(t, moderator.token, atLimit, 'at-limit.pdf')).status).toBe(200)
      })

      it('a declared Content-Length over the limit (plus multipart framing) is 413 before the body is read', async () => {
        const before = await documentCount(t)
        const declared = MAX_UPLOAD_SIZE + MULTIPART_OVERHEAD_BYTES + 1
        const res = await upload(t, moderator.token, await makePdf([['small']]), 'small.pdf', { 'content-length': String(declared) })
        expect(await expectDetail(res, 413)).toBe(MESSAGES.tooLarge(MAX_UPLOAD_SIZE))
        expect(await documentCount(t)).toBe(before)
      })

      it('a file at the limit, sent with its real Content-Length (file plus framing), is accepted', async () => {
        const valid = await makePdf([['At the limit']])
        const file = new Uint8Array(MAX_UPLOAD_SIZE)
        file.set(valid)
        file.fill(0x20, valid.length)
        const form = new FormData()
        form.append('file', new File([file], 'limit.pdf', { type: 'application/pdf' }))
        const encoded = new Response(form) // one encoding: its boundary is in both the type and the body
        const contentType = encoded.headers.get('content-type')!
        const body = new Uint8Array(await encoded.arrayBuffer())
        expect(body.length).toBeGreaterThan(MAX_UPLOAD_SIZE)
        const res = await t.request(`${API}/documents/upload`, {
          method: 'POST', body, token: moderator.token, headers: { 'content-type': contentType, 'content-length': String(body.length) },
        })
        expect(res.status).toBe(200)
      })

      it('a user (below moderator) gets 403, no credentials 401; a missing file field is 422', async () => {
        const pdf = await makePdf([['x']])
        await expectDetail(await upload(t, user.token, pdf), 403)
        const form = new FormData()
        form.append('file', new File([pdf], 'a.pdf'))
        expect((await t.request(`${API}/documents/upload`, { method: 'POST', body: form })).status).toBe(401)
        const empty = new FormData()
        empty.append('other', 'x')
        expect((await t.request(`${API}/documents/upload`, { method: 'POST', body: empty, token: moderator.token })).status).toBe(422)
      })
    })

    describe('visibility', () => {
      let owner: Account
      let ownDoc: DocumentBody
      beforeAll(async () => {
        // Only moderators upload, so a user's own document is one they uploaded while a moderator.
        owner = await createAccount(t, admin, 'moderator', 'demoted')
        ownDoc = await uploadProcessed(t, owner, await makePdf([['Owner document']]), 'mine.pdf')
        expect((await t.put(`${API}/admin/users/${owner.id}/role`, { role: 'user' }, { token: admin.token })).status).toBe(200)
        owner = { ...owner, token: await loginToken(t, owner.email) }
      })

      it('a user lists only their own documents; a moderator and an admin list all', async () => {
        const mine = (await (await t.get(`${API}/documents/`, { token: owner.token })).json()) as DocumentBody[]
        expect(mine.map((d) => d.id)).toEqual([ownDoc.id])
        const other = (await (await t.get(`${API}/documents/`, { token: user.token })).json()) as DocumentBody[]
        expect(other).toEqual([])
        for (const account of [moderator, admin]) {
          const all = (await (await t.get(`${API}/documents/`, { token: account.token })).json()) as DocumentBody[]
          expect(all.length).toBe(await documentCount(t))
          expect(all.map((d) => d.id)).toContain(ownDoc.id)
          expect(all.map((d) => d.id)).toContain(textDoc.id)
          // newest first
          expect(all.map((d) => d.id)).toEqual([...all.map((d) => d.id)].sort((a, b) => b - a))
        }
        expect((await t.get(`${API}/documents/`)).status).toBe(401)
      })

      it('the owner reads their document, status, steps and sections', async () => {
        for (const path of ['', '/status', '/processing-steps', '/sections']) {
          expect((await t.get(`${API}/documents/${ownDoc.id}${path}`, { token: owner.token })).status).toBe(200)
        }
      })

      it('another user gets 404 for a document they cannot see, as for one that does not exist', async () => {
        for (const path of ['', '/status', '/processing-steps', '/sections']) {
          expect(await expectDetail(await t.get(`${API}/documents/${textDoc.id}${path}`, { token: user.token }), 404)).toBe(MESSAGES.notFound)
          expect(await expectDetail(await t.get(`${API}/documents/${ownDoc.id}${path}`, { token: user.token }), 404)).toBe(MESSAGES.notFound)
          await expectDetail(await t.get(`${API}/documents/999999${path}`, { token: moderator.token }), 404)
          expect((await t.get(`${API}/documents/${ownDoc.id}${path}`, { token: moderator.token })).status).toBe(200)
        }
      })
    })

    describe('sections', () => {
      const post = (id: number, body: unknown, token = moderator.token) => t.post(`${API}/documents/${id}/sections`, body, { token })

      it('a valid range gives a SectionResponse, listed by GET /{id}/sections', async () => {
        const res = await post(textDoc.id, { name: 'Valves', start_page: 1, end_page: 3 })
        expect(res.status).toBe(200)
        const body = (await res.json()) as SectionBody
        expect(body).toEqual({ id: body.id, document_id: textDoc.id, name: 'Valves', start_page: 1, end_page: 3 })
        const list = (await (await t.get(`${API}/documents/${textDoc.id}/sections`, { token: moderator.token })).json()) as SectionBody[]
        expect(list).toContainEqual(body)
      })

      it('start_page < 1 is 400 saying so', async () => {
        expect(await expectDetail(await post(textDoc.id, { name: 'S', start_page: 0, end_page: 2 }), 400)).toBe(MESSAGES.startPage)
        expect(await expectDetail(await post(textDoc.id, { name: 'S', start_page: -3, end_page: 2 }), 400)).toBe(MESSAGES.startPage)
      })

      it('end_page <= start_page is 400 saying so', async () => {
        expect(await expectDetail(await post(textDoc.id, { name: 'S', start_page: 2, end_page: 2 }), 400)).toBe(MESSAGES.endAfterStart)
        expect(await expectDetail(await post(textDoc.id, { name: 'S', start_page: 3, end_page: 1 }), 400)).toBe(MESSAGES.endAfterStart)
      })

      it('end_page > total_pages is 400 saying so; end_page = total_pages is allowed', async () => {
        expect(await expectDetail(await post(textDoc.id, { name: 'S', start_page: 1, end_page: textDoc.total_pages + 1 }), 400))
          .toBe(MESSAGES.endWithinDocument(textDoc.total_pages))
        expect((await post(textDoc.id, { name: 'S', start_page: 2, end_page: textDoc.total_pages })).status).toBe(200)
      })

      it('a document that is not ready (failed, or still processing) is 400 saying so', async () => {
        const failed = await uploadProcessed(t, moderator, await makeCorruptPdf(), 'broken-again.pdf')
        expect(await expectDetail(await post(failed.id, { name: 'S', start_page: 1, end_page: 2 }), 400)).toBe(MESSAGES.notReady)
        const other = await uploadProcessed(t, moderator, await makePdf(numberedPages(4)), 'reprocessing.pdf')
        await t.db.sql`update quiz.documents set status = 'processing' where id = ${other.id}`
        expect(await expectDetail(await post(other.id, { name: 'S', start_page: 1, end_page: 2 }), 400)).toBe(MESSAGES.notReady)
        const [n] = await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.sections where document_id in (${failed.id}, ${other.id})`
        expect(n!.n).toBe(0)
      })

      it('a missing document is 404; a user (below moderator) is 403; an empty name is 422', async () => {
        await expectDetail(await post(999999, { name: 'S', start_page: 1, end_page: 2 }), 404)
        await expectDetail(await post(textDoc.id, { name: 'S', start_page: 1, end_page: 2 }, user.token), 403)
        expect((await post(textDoc.id, { name: '', start_page: 1, end_page: 2 })).status).toBe(422)
      })

      it('DELETE a section is 204, then 404; on another document 404; a user gets 403', async () => {
        const created = (await (await post(textDoc.id, { name: 'To delete', start_page: 1, end_page: 2 })).json()) as SectionBody
        await expectDetail(await t.delete(`${API}/documents/${textDoc.id}/sections/${created.id}`, { token: user.token }), 403)
        const other = await uploadProcessed(t, moderator, await makePdf(numberedPages(2)), 'other.pdf')
        await expectDetail(await t.delete(`${API}/documents/${other.id}/sections/${created.id}`, { token: moderator.token }), 404)
        const res = await t.delete(`${API}/documents/${textDoc.id}/sections/${created.id}`, { token: moderator.token })
        expect(res.status).toBe(204)
        expect(await res.text()).toBe('')
        await expectDetail(await t.delete(`${API}/documents/${textDoc.id}/sections/${created.id}`, { token: moderator.token }), 404)
        const list = (await (await t.get(`${API}/documents/${textDoc.id}/sections`, { token: moderator.token })).json()) as SectionBody[]
        expect(list.map((s) => s.id)).not.toContain(created.id)
      })
    })

    describe('delete', () => {
      it('DELETE /{id} is 204 and removes the row, pages, sections, stored file and vector collection', async () => {
        const doc = await uploadProcessed(t, moderator, await makePdf(numberedPages(3)), 'doomed.pdf')
        expect((await t.post(`${API}/documents/${doc.id}/sections`, { name: 'All', start_page: 1, end_page: 3 }, { token: moderator.token })).status).toBe(200)
        const row = (await documentRow(t, doc.id))!
        const file = join(t.dataDir, 'files', row.storage_key)
        expect(existsSync(file)).toBe(true)
        expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBeGreaterThan(0)

        await expectDetail(await t.delete(`${API}/documents/${doc.id}`, { token: user.token }), 403)
        const res = await t.delete(`${API}/documents/${doc.id}`, { token: moderator.token })
        expect(res.status).toBe(204)
        expect(await documentRow(t, doc.id)).toBeNull()
        const [left] = await t.db.sql<{ pages: number; sections: number }>`
          select (select count(*)::int from quiz.document_pages where document_id = ${doc.id}) as pages,
                 (select count(*)::int from quiz.sections where document_id = ${doc.id}) as sections`
        expect(left).toEqual({ pages: 0, sections: 0 })
        expect(existsSync(file)).toBe(false)
        expect(await t.booted.core.storage.get(row.storage_key)).toBeNull()
        expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBe(0)
        await expectDetail(await t.get(`${API}/documents/${doc.id}`, { token: moderator.token }), 404)
        await expectDetail(await t.delete(`${API}/documents/${doc.id}`, { token: moderator.token }), 404)
      })

      it('deleting a user removes their documents with the stored files and vector collections', async () => {
        const owner = await createAccount(t, admin, 'moderator', 'leaving')
        const doc = await uploadProcessed(t, owner, await makePdf(numberedPages(2)), 'theirs.pdf')
        const row = (await documentRow(t, doc.id))!
        const file = join(t.dataDir, 'files', row.storage_key)
        expect(existsSync(file)).toBe(true)
        expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBeGreaterThan(0)
        expect((await t.delete(`${API}/admin/users/${owner.id}`, { token: admin.token })).status).toBe(204)
        expect(await documentRow(t, doc.id)).toBeNull()
        expect(existsSync(file)).toBe(false)
        expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBe(0)
      })
    })
  })
}

for (const target of databaseTargets()) {
  describe(`quiz documents with a worker (WORKERS=1) [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    beforeAll(async () => {
      // The worker loop is not started (main.ts does that): the test runs the queue by hand with runOnce().
      t = await startTestApp({ target, env: { WORKERS: '1' } })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
    })
    afterAll(() => t.close())

    it('upload answers at once with `processing`; the worker makes it ready and the steps appear', async () => {
      const res = await upload(t, moderator.token, await makePdf(numberedPages(3)), 'queued.pdf')
      expect(res.status).toBe(200)
      const doc = (await res.json()) as DocumentBody
      expect(doc.status).toBe('processing')
      const before = await t.get(`${API}/documents/${doc.id}/status`, { token: moderator.token })
      expect(await before.json()).toEqual({ id: doc.id, status: 'processing', total_pages: 0, error_message: null })
      expect(await steps(t, doc.id, moderator.token)).toEqual([])
      const job = (await t.booted.core.jobs.get((await documentRow(t, doc.id))!.processing_job_id!))!
      expect(job.status).toBe('pending')

      expect(await t.booted.core.jobs.runOnce()).toBe(true)
      const after = await t.get(`${API}/documents/${doc.id}/status`, { token: moderator.token })
      expect(await after.json()).toEqual({ id: doc.id, status: 'ready', total_pages: 3, error_message: null })
      expect((await steps(t, doc.id, moderator.token)).map((s) => s.name)).toEqual(['start', 'read', 'extract', 'index', 'done'])
    })

    it('deleting a document still waiting for the worker cancels its job; nothing is indexed afterwards', async () => {
      const doc = (await (await upload(t, moderator.token, await makePdf(numberedPages(2)), 'never.pdf')).json()) as DocumentBody
      const jobId = (await documentRow(t, doc.id))!.processing_job_id!
      expect((await t.delete(`${API}/documents/${doc.id}`, { token: moderator.token })).status).toBe(204)
      expect((await t.booted.core.jobs.get(jobId))!.status).toBe('cancelled')
      expect(await t.booted.core.jobs.runOnce()).toBe(false)
      expect(await t.booted.core.vectors.count(documentCollection(doc.id))).toBe(0)
    })
  })
}

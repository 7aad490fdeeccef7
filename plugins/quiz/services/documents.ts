// Spec 1, Documents: upload, processing (a job), visibility, sections.
// Upload stores the file, then writes the row and enqueues `quiz.document.process` in one transaction. The job
// reads the PDF with unpdf (PDF.js, see pdf-text.ts), keeps each page's text in quiz.document_pages (the source of
// truth) and indexes overlapping page chunks in the document's own vector collection `quiz_doc_<id>`, chunking and
// embedding pages as they are read. Its steps are the document's processing steps.
import { rawSql as raw, type Db } from '../../../src/core/db'
import type { Embedder } from '../../../src/core/embedder'
import type { BodyLimit } from '../../../src/envelope'
import { HttpError } from '../../../src/core/errors'
import { defineJob, JobCancelled, type GiveUpContext, type GiveUpOutcome, type JobContext, type JobHandler, type JobStep } from '../../../src/core/jobs'
import type { Core } from '../../../src/plugin'
import { EXTRACTION_JOB_KIND } from '../models/extraction'
import {
  ORIGINAL_FILENAME_MAX, type DocumentResponse, type DocumentStatus, type ProcessingStep, type SectionBody, type SectionResponse,
} from '../models/documents'
import { hasRole, type QuizUser } from './accounts'
import { PdfTextError, readPdfPages, type ReadPagesOptions } from './pdf-text'
import { quizEmbedder } from './question-index'

export const PROCESS_DOCUMENT_JOB = 'quiz.document.process'
export const PDF_MIME = 'application/pdf'
/** Page text is indexed in chunks of about this many characters, each overlapping the previous one a little. */
export const CHUNK_CHARS = 1000
export const CHUNK_OVERLAP_CHARS = 100
/** Chunks embedded per call (one gateway request each when an embedding model is configured). */
export const EMBED_BATCH = 64
/** Chunks written to the vector index per upsert: each write is a new LanceDB version, so fewer is faster. */
export const UPSERT_BATCH = 512

export const documentCollection = (documentId: number) => `quiz_doc_${documentId}`
export const documentStorageKey = (filename: string) => `quiz/documents/${filename}`

export const MESSAGES = {
  notFound: 'Document not found',
  sectionNotFound: 'Section not found',
  notPdf: 'The file is not a PDF: only PDF documents can be uploaded',
  tooLarge: (max: number) => `The file is larger than the upload limit of ${max} bytes`,
  empty: 'The file is empty',
  passwordProtected: 'The PDF is password-protected: upload a copy without a password',
  unreadable: 'The file could not be read as a PDF: it is damaged or incomplete',
  cancelled: 'Processing was cancelled',
  indexFailed: 'The text could not be indexed: the embedding service failed',
  failed: 'Processing failed',
  restarted: (attempt: number, max: number) =>
    `Processing restarted from the beginning (attempt ${attempt} of ${max}): the server running it stopped`,
  abandoned: (attempts: number) =>
    `Processing stopped after ${attempts} attempts: the server running it stopped each time. Upload the file again; ` +
    'if it keeps happening, the file may be too large for the server to process',
  failedUnexpectedly: 'Processing failed unexpectedly: upload the file again',
  notReady: 'The document is not ready: sections can be added once processing has finished',
  startPage: 'start_page must be at least 1',
  endAfterStart: 'end_page must be greater than start_page',
  endWithinDocument: (total: number) => `end_page must be at most the document's total_pages (${total})`,
}

/** A document as stored: the response's fields with uploaded_at a Date, where its file is and its processing job. */
type DocumentRow = Omit<DocumentResponse, 'uploaded_at'> & { uploaded_at: Date; storage_key: string; processing_job_id: string | null }

const DOCUMENT_COLUMNS = raw(
  'id, user_id, filename, original_filename, status, total_pages, error_message, uploaded_at, storage_key, processing_job_id',
)

export function toDocumentResponse(row: DocumentRow): DocumentResponse {
  return {
    id: row.id,
    user_id: row.user_id,
    filename: row.filename,
    original_filename: row.original_filename,
    status: row.status,
    total_pages: row.total_pages,
    error_message: row.error_message,
    uploaded_at: row.uploaded_at.toISOString(),
  }
}

/** The name a file was uploaded with, without any folder part a client may send; never empty. */
export function cleanFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim()
  return (base || 'document.pdf').slice(0, ORIGINAL_FILENAME_MAX)
}

/** Room for the multipart framing (boundaries, part headers) around a file of the limit's size. */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024

/** The upload route's body limit: a file at the limit with its multipart framing, refused as the file itself would be. */
export const uploadBodyLimit = (maxUploadSize: number): BodyLimit => ({
  bytes: maxUploadSize + MULTIPART_OVERHEAD_BYTES, code: 'file_too_large', message: MESSAGES.tooLarge(maxUploadSize),
})

/**
 * Stores a PDF and starts its processing. Answers the row as stored before processing, so the status is
 * `processing` as spec 1's Document table says, even with WORKERS=0 where the job has already run (after the
 * commit) when this returns (GET /{id}/status tells the outcome).
 */
export async function uploadDocument(core: Core, user: QuizUser, file: File): Promise<DocumentResponse> {
  // The declared length may be absent or wrong (chunked bodies): the actual size decides.
  if (file.size > core.config.maxUploadSize) throw HttpError.tooLarge('file_too_large', MESSAGES.tooLarge(core.config.maxUploadSize))
  if (file.size === 0) throw HttpError.badRequest('empty_file', MESSAGES.empty)
  const bytes = new Uint8Array(await file.arrayBuffer())
  // The content decides, not the name or the declared type: a text file called x.pdf is refused.
  const type = await (await import('file-type')).fileTypeFromBuffer(bytes)
  if (type?.mime !== PDF_MIME) throw new HttpError(415, 'not_a_pdf', MESSAGES.notPdf)

  const filename = `${crypto.randomUUID()}.pdf`
  const storageKey = documentStorageKey(filename)
  // Stored before the transaction, so a transaction that fails removes the file again; once it committed, the
  // file is the row's (an inline job failing after the commit leaves both).
  await core.storage.put(storageKey, bytes)
  let committed = false
  try {
    const row = await core.transaction(async (tx) => {
      await tx.afterCommit(() => void (committed = true))
      const [row] = await tx.db.sql<DocumentRow>`
        insert into quiz.documents (user_id, filename, original_filename, status, storage_key, size_bytes)
        values (${user.id}, ${filename}, ${cleanFilename(file.name)}, 'processing', ${storageKey}, ${bytes.length})
        returning ${DOCUMENT_COLUMNS}`
      const job = await tx.jobs.enqueue(PROCESS_DOCUMENT_JOB, { documentId: row!.id }, {
        service: 'quiz', ownerId: user.id, title: row!.original_filename, maxAttempts: 3,
      })
      // The job exists only once this commits, so the row always names its job before the job can run.
      await tx.db.sql`update quiz.documents set processing_job_id = ${job.id} where id = ${row!.id}`
      return row!
    })
    return toDocumentResponse(row)
  } catch (err) {
    if (!committed) await core.storage.delete(storageKey)
    throw err
  }
}

/** Moderators see every document, others only their own; both get 404 for anything else. */
async function visibleDocument(core: Core, user: QuizUser, documentId: number): Promise<DocumentRow> {
  const [row] = await core.db.sql<DocumentRow>`select ${DOCUMENT_COLUMNS} from quiz.documents where id = ${documentId}`
  if (!row || (!hasRole(user, 'moderator') && row.user_id !== user.id)) throw HttpError.notFound('document_not_found', MESSAGES.notFound)
  return row
}

export async function listDocuments(core: Core, user: QuizUser): Promise<DocumentResponse[]> {
  const all = hasRole(user, 'moderator')
  const rows = all
    ? await core.db.sql<DocumentRow>`select ${DOCUMENT_COLUMNS} from quiz.documents order by uploaded_at desc, id desc`
    : await core.db.sql<DocumentRow>`
        select ${DOCUMENT_COLUMNS} from quiz.documents where user_id = ${user.id} order by uploaded_at desc, id desc`
  return rows.map(toDocumentResponse)
}

export async function getDocument(core: Core, user: QuizUser, documentId: number): Promise<DocumentResponse> {
  return toDocumentResponse(await visibleDocument(core, user, documentId))
}

export async function getDocumentStatus(core: Core, user: QuizUser, documentId: number) {
  const row = await visibleDocument(core, user, documentId)
  return { id: row.id, status: row.status, total_pages: row.total_pages, error_message: row.error_message }
}

const toProcessingStep = (s: JobStep): ProcessingStep => ({
  name: s.name ?? '',
  status: s.status ?? 'completed',
  message: s.message,
  timestamp: s.at,
})

export async function getProcessingSteps(core: Core, user: QuizUser, documentId: number): Promise<{ steps: ProcessingStep[] }> {
  const row = await visibleDocument(core, user, documentId)
  const job = row.processing_job_id ? await core.jobs.get(row.processing_job_id) : null
  return { steps: (job?.steps ?? []).map(toProcessingStep) }
}

/** Cancels its processing and deletes the row in one transaction; the stored file and the vector collection go after the commit. */
export async function deleteDocument(core: Core, documentId: number): Promise<void> {
  await core.transaction(async (tx) => {
    const [row] = await tx.db.sql<DocumentRow>`select ${DOCUMENT_COLUMNS} from quiz.documents where id = ${documentId} for update`
    if (!row) throw HttpError.notFound('document_not_found', MESSAGES.notFound)
    // Stop processing first, so the job does not index into a collection that is about to go.
    if (row.status === 'processing' && row.processing_job_id) await tx.jobs.cancel(row.processing_job_id)
    await tx.db.sql`delete from quiz.documents where id = ${documentId}`
    // Outside the database: removed only once the row is gone for good.
    await tx.afterCommit(async () => {
      await core.storage.delete(row.storage_key)
      await core.vectors.drop(documentCollection(documentId))
    })
  })
}

// ---- sections ----

export async function listSections(core: Core, user: QuizUser, documentId: number): Promise<SectionResponse[]> {
  await visibleDocument(core, user, documentId)
  return core.db.sql<SectionResponse>`
    select id, document_id, name, start_page, end_page from quiz.sections
    where document_id = ${documentId} order by start_page, id`
}

/** Spec 1, Section: each broken rule is a 400 that names it; the checks run in the order of the spec's table. */
export async function createSection(core: Core, documentId: number, input: SectionBody): Promise<SectionResponse> {
  const name = input.name.trim()
  if (!name) throw HttpError.unprocessable('invalid_name', 'name must not be empty', { name: 'name must not be empty' })
  return core.db.transaction(async (tx) => {
    // Locked, so a concurrent delete cannot leave a section on a vanished document.
    const [doc] = await tx.sql<{ status: DocumentStatus; total_pages: number }>`
      select status, total_pages from quiz.documents where id = ${documentId} for share`
    if (!doc) throw HttpError.notFound('document_not_found', MESSAGES.notFound)
    if (doc.status !== 'ready') throw HttpError.badRequest('document_not_ready', MESSAGES.notReady)
    if (input.start_page < 1) throw HttpError.badRequest('invalid_start_page', MESSAGES.startPage)
    if (input.end_page <= input.start_page) throw HttpError.badRequest('invalid_end_page', MESSAGES.endAfterStart)
    if (input.end_page > doc.total_pages) throw HttpError.badRequest('end_page_beyond_document', MESSAGES.endWithinDocument(doc.total_pages))
    const [row] = await tx.sql<SectionResponse>`
      insert into quiz.sections (document_id, name, start_page, end_page)
      values (${documentId}, ${name}, ${input.start_page}, ${input.end_page})
      returning id, document_id, name, start_page, end_page`
    return row!
  })
}

export async function deleteSection(core: Core, documentId: number, sectionId: number): Promise<void> {
  const [doc] = await core.db.sql<{ id: number }>`select id from quiz.documents where id = ${documentId}`
  if (!doc) throw HttpError.notFound('document_not_found', MESSAGES.notFound)
  const [row] = await core.db.sql<{ id: number }>`
    delete from quiz.sections where id = ${sectionId} and document_id = ${documentId} returning id`
  if (!row) throw HttpError.notFound('section_not_found', MESSAGES.sectionNotFound)
}

/**
 * For the staff pages: who started an extraction job and the document of its section (null once the section is
 * gone); null when there is no such extraction job. Read only.
 */
export async function extractionJobSource(core: Core, jobId: string): Promise<{ owner_id: number | null; document_id: number | null } | null> {
  const job = await core.jobs.get(jobId)
  if (!job || job.kind !== EXTRACTION_JOB_KIND) return null
  const sectionId = (job.payload as { section_id?: unknown } | null)?.section_id
  const [row] = typeof sectionId === 'number'
    ? await core.db.sql<{ document_id: number }>`select document_id from quiz.sections where id = ${sectionId}`
    : []
  return { owner_id: job.owner_id, document_id: row?.document_id ?? null }
}

// ---- processing ----

export interface TextChunk { id: string; page: number; text: string }

/**
 * A page's text in chunks of about CHUNK_CHARS, each starting CHUNK_OVERLAP_CHARS before the previous one ended,
 * cut at whitespace where there is some. Ids carry the page: `p12-c0`, `p12-c1`, ...
 */
export function chunkPage(page: number, text: string, size = CHUNK_CHARS, overlap = CHUNK_OVERLAP_CHARS): TextChunk[] {
  const clean = text.replace(/\s+/g, ' ').trim()
  const chunks: TextChunk[] = []
  let start = 0
  while (start < clean.length) {
    let end = Math.min(start + size, clean.length)
    if (end < clean.length) {
      const space = clean.lastIndexOf(' ', end)
      if (space > start + size / 2) end = space
    }
    chunks.push({ id: `p${page}-c${chunks.length}`, page, text: clean.slice(start, end).trim() })
    if (end >= clean.length) break
    let next = end - overlap
    const space = clean.indexOf(' ', next)
    if (space !== -1 && space < end) next = space + 1
    start = Math.max(next, start + 1)
  }
  return chunks
}

class DocumentFailure extends Error {
  constructor(readonly step: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

async function readPdf(bytes: Uint8Array, opts: ReadPagesOptions): Promise<{ totalPages: number; text: string[] }> {
  try {
    return await readPdfPages(bytes, opts)
  } catch (err) {
    if (!(err instanceof PdfTextError)) throw err
    if (err.stage === 'extract') throw new DocumentFailure('extract', MESSAGES.unreadable, { cause: err.cause })
    throw new DocumentFailure('read', err.password ? MESSAGES.passwordProtected : MESSAGES.unreadable, { cause: err.cause })
  }
}

/**
 * Chunks pages as they are read (in page order) and embeds the chunks in batches of EMBED_BATCH, one call at a time,
 * while the rest of the document is read. `finish` sends the last batch and answers every chunk with its vector; a
 * failed call is the index step's failure, told only then (after the read and extract steps, as in a run that
 * embeds once everything is read).
 */
function chunkEmbedder(embedder: Embedder) {
  const chunks: TextChunk[] = []
  const vectors: number[][] = []
  let sent = 0
  let calls: Promise<void> = Promise.resolve()
  let failure: { cause: unknown } | null = null
  const send = (texts: string[]) => {
    calls = calls.then(async () => {
      if (failure) return
      try {
        vectors.push(...(await embedder.embed(texts)))
      } catch (err) {
        failure = { cause: err }
      }
    })
  }
  const sendBatches = (all: boolean) => {
    while (chunks.length - sent >= EMBED_BATCH || (all && sent < chunks.length)) {
      const end = Math.min(chunks.length, sent + EMBED_BATCH)
      send(chunks.slice(sent, end).map((c) => c.text))
      sent = end
    }
  }
  return {
    addPage(page: number, text: string) {
      for (const chunk of chunkPage(page, text)) chunks.push(chunk)
      sendBatches(false)
    },
    async finish(): Promise<{ chunks: TextChunk[]; vectors: number[][] }> {
      sendBatches(true)
      await calls
      if (failure) throw new DocumentFailure('index', MESSAGES.indexFailed, failure)
      return { chunks, vectors }
    },
  }
}

async function processDocument(core: Core, ctx: JobContext<{ documentId: number }>): Promise<unknown> {
  const documentId = ctx.payload.documentId
  // The upload wrote this job's id on the row in the transaction that made the job: nothing to claim here.
  const [doc] = await core.db.sql<{ storage_key: string; status: DocumentStatus; error_message: string | null }>`
    select storage_key, status, error_message from quiz.documents where id = ${documentId}`
  if (!doc) return { document_id: documentId, status: 'deleted' } // deleted before its turn came
  // A run that stopped after settling the document (ready or failed) but before the job was marked: mirror it.
  if (doc.status === 'failed') throw new Error(doc.error_message ?? MESSAGES.failed)
  if (doc.status !== 'processing') return { document_id: documentId, status: doc.status }
  const collection = documentCollection(documentId)
  const finish = async (status: DocumentStatus, error: string | null, totalPages?: number) => {
    await core.db.sql`
      update quiz.documents set status = ${status}, error_message = ${error},
        total_pages = coalesce(${totalPages ?? null}::int, total_pages)
      where id = ${documentId}`
  }

  try {
    // A reclaimed run starts over: every stage below replaces what an earlier run stored (pages delete-then-insert,
    // the collection drop-then-insert), so the end state is that of one run.
    if (ctx.attempt > 1) await ctx.step(MESSAGES.restarted(ctx.attempt, ctx.maxAttempts), { name: 'start', status: 'running' })
    // Each step is recorded once a stage is done, so every step the list shows has its final status.
    await ctx.step('Processing started', { name: 'start', status: 'completed' })
    const blob = await core.storage.get(doc.storage_key)
    if (!blob) throw new DocumentFailure('read', 'The uploaded file is missing from storage')
    const embedding = chunkEmbedder(await quizEmbedder(core))
    const { totalPages, text } = await readPdf(new Uint8Array(await blob.arrayBuffer()), {
      signal: ctx.signal, onPage: (page, pageText) => embedding.addPage(page, pageText),
    })
    const pageNumbers = text.map((_, i) => i + 1)
    const withText = text.filter((t) => t.trim().length > 0).length
    // The index is written while the page rows are stored (the vector index and the database are apart); the steps
    // are recorded in their order all the same.
    const indexing = withText === 0 ? null : (async () => {
      const { chunks, vectors } = await embedding.finish()
      await core.vectors.drop(collection)
      for (let i = 0; i < chunks.length; i += UPSERT_BATCH) {
        const batch = chunks.slice(i, i + UPSERT_BATCH)
        await core.vectors.upsert(collection, batch.map((c, j) => ({ id: c.id, vector: vectors[i + j]!, text: c.text })))
        await ctx.throwIfCancelled()
      }
      return chunks.length
    })()
    indexing?.catch(() => {}) // awaited below; a failure before that is not an unhandled rejection
    try {
      // A re-run (after a crash) replaces what an earlier run stored; a first run has nothing to replace. The page
      // rows and the page count are one statement: a run that dies before it leaves neither.
      if (ctx.attempt > 1) await core.db.sql`delete from quiz.document_pages where document_id = ${documentId}`
      await core.db.sql`
        with stored as (
          insert into quiz.document_pages (document_id, page_number, text)
          select ${documentId}, p.page_number, p.text
          from unnest(${pageNumbers}::int[], ${text}::text[]) as p (page_number, text)
          returning 1
        )
        update quiz.documents set total_pages = ${totalPages} where id = ${documentId}`
      await ctx.step(`Read ${totalPages} page${totalPages === 1 ? '' : 's'}`, { name: 'read', status: 'completed' })
      if (!indexing) {
        await ctx.step(`No text found in ${totalPages} page${totalPages === 1 ? '' : 's'}: the PDF has no text layer (a scan?)`, { name: 'extract', status: 'completed' })
        await ctx.step('Nothing to index', { name: 'index', status: 'skipped' })
      } else {
        await ctx.step(`Extracted text from ${withText} of ${totalPages} pages`, { name: 'extract', status: 'completed' })
        const indexed = await indexing
        await ctx.step(`Indexed ${indexed} text chunk${indexed === 1 ? '' : 's'}`, { name: 'index', status: 'completed' })
      }
    } catch (err) {
      // The index writes end before the failure is handled (which drops the collection): none may come after it.
      await indexing?.catch(() => {})
      throw err
    }
    const [still] = await core.db.sql<{ id: number }>`
      update quiz.documents set status = 'ready', error_message = null where id = ${documentId} returning id`
    if (!still) {
      await core.vectors.drop(collection) // deleted while it was processed
      return { document_id: documentId, status: 'deleted' }
    }
    await ctx.step('Document ready', { name: 'done', status: 'completed' })
    return { document_id: documentId, status: 'ready', total_pages: totalPages }
  } catch (err) {
    if (err instanceof JobCancelled) {
      await finish('failed', MESSAGES.cancelled)
      await core.vectors.drop(collection).catch(() => {}) // what the index had of it before the cancel
      throw err
    }
    // Shutdown or a lease lost to another worker: the job is handed back and runs again; the document stays processing.
    if (ctx.signal.aborted) throw err
    const failure = err instanceof DocumentFailure ? err : new DocumentFailure('process', MESSAGES.failed, { cause: err })
    core.log.warn({ err: failure.cause ?? err, document: documentId }, 'document processing failed')
    await finish('failed', failure.message)
    await core.vectors.drop(collection).catch(() => {})
    await ctx.step(failure.message, { name: failure.step, status: 'failed' }).catch(() => {})
    // The job ends failed with the same message: its status mirrors the document's.
    throw new Error(failure.message)
  }
}

/**
 * The job gave up: a document still `processing` (its runs kept dying, or the handler could not record the failure)
 * gets its final failed state with a message a person can act on, in the transaction that fails the job.
 */
async function giveUpDocument(core: Core, tx: Db, job: GiveUpContext<{ documentId: number }>): Promise<GiveUpOutcome | void> {
  const message = job.reason.kind === 'abandoned' ? MESSAGES.abandoned(job.reason.attempts) : MESSAGES.failedUnexpectedly
  const [doc] = await tx.sql<{ id: number }>`
    update quiz.documents set status = 'failed', error_message = ${message}
    where id = ${job.payload.documentId} and status = 'processing'
    returning id`
  if (!doc) return // already settled by the handler (its own failure message stays), or deleted
  // A partial index of a failed document is never searched; the next upload builds its own.
  await core.vectors.drop(documentCollection(doc.id)).catch(() => {})
  return { message, name: 'done', status: 'failed' }
}

export const documentJobs = (core: Core): Record<string, JobHandler> => ({
  [PROCESS_DOCUMENT_JOB]: defineJob((ctx: JobContext<{ documentId: number }>) => processDocument(core, ctx), {
    onGiveUp: (tx, job) => giveUpDocument(core, tx, job),
  }),
})

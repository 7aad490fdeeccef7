// A PDF's text, page by page, with unpdf (PDF.js): the text each page gives is unpdf's extractText's for that page
// (items joined, a newline after each item that ends a line), without NUL. Pages are read one at a time, so PDF.js
// holds one page's content, not the whole document's. It spends about 0.6 ms of CPU per text page, most of it laying
// glyphs out, so a long document is shared with helper threads (pdf-text-worker.ts): each opens its own copy of the
// file and takes the next block of pages from a shared counter, as this thread does, so the work splits by how fast
// each thread goes. Pages are handed on in order as they are ready, for the caller to index while the rest are read.
// A helper that fails or dies leaves its pages to this thread.
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { getDocumentProxy } from 'unpdf'

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>

/** Pages a thread takes at a time from the shared counter. */
export const PAGES_PER_CLAIM = 8
/** Documents shorter than this are read by this thread alone: a helper would cost more than it saves. */
export const HELPER_MIN_PAGES = 48
/** Helper threads: one less than the cores, at most 2 (each holds its own copy of PDF.js, about 20 MB). */
export const HELPER_THREADS = Math.max(0, Math.min(2, availableParallelism() - 1))
/** An idle helper is stopped after this long, giving its memory back; the next long document starts it again. */
export const HELPER_IDLE_MS = 30_000

const PDF_OPTIONS = { verbosity: 0, isEvalSupported: false, useSystemFonts: false, stopAtErrors: false } as const

/** Why a PDF could not be read: at `open` (`password` when it asks for one) or while reading a page's text. */
export class PdfTextError extends Error {
  constructor(readonly stage: 'open' | 'extract', readonly password: boolean, options: { cause: unknown }) {
    super(stage === 'open' ? 'the PDF could not be opened' : 'a page of the PDF could not be read', options)
  }
}

export async function openPdf(bytes: Uint8Array): Promise<PdfDocument> {
  try {
    return await getDocumentProxy(bytes, PDF_OPTIONS)
  } catch (err) {
    throw new PdfTextError('open', (err as { name?: string })?.name === 'PasswordException', { cause: err })
  }
}

/** One page's text (1-based), as unpdf's extractText gives it, without NUL (a PostgreSQL text column refuses it). */
export async function pageText(pdf: PdfDocument, pageNumber: number): Promise<string> {
  const page = await pdf.getPage(pageNumber)
  try {
    const content = await page.getTextContent()
    let text = ''
    for (const item of content.items) {
      if (!('str' in item) || item.str == null) continue
      text += item.hasEOL ? `${item.str}\n` : item.str
    }
    return text.replaceAll('\u0000', '')
  } finally {
    page.cleanup() // the page's parsed content is not needed again: memory stays that of one page at a time
  }
}

/** Claims the next block of pages (0-based start) from a counter shared between threads; null when none is left. */
export function claimPages(counter: Int32Array, totalPages: number): { from: number; to: number } | null {
  const from = Atomics.add(counter, 0, PAGES_PER_CLAIM)
  return from < totalPages ? { from, to: Math.min(totalPages, from + PAGES_PER_CLAIM) } : null
}

/** What a helper thread is asked, and answers (pdf-text-worker.ts). */
export interface HelperRequest { id: number; bytes: Uint8Array; counter: SharedArrayBuffer; totalPages: number }
export type HelperReply =
  | { id: number; kind: 'pages'; from: number; texts: string[] }
  | { id: number; kind: 'done' }

interface Helper { worker: Worker; idle: ReturnType<typeof setTimeout> | null; listeners: Set<(reply: HelperReply | null) => void> }
const helpers: Helper[] = []
let nextRequestId = 1

/** Ends a helper thread; the pages it had taken and not answered go back to the threads that asked. */
function stopHelper(helper: Helper) {
  const at = helpers.indexOf(helper)
  if (at === -1) return
  helpers.splice(at, 1)
  if (helper.idle) clearTimeout(helper.idle)
  void helper.worker.terminate()
  for (const listener of [...helper.listeners]) listener(null)
}

/** Ends every helper thread now (each also ends by itself once idle for HELPER_IDLE_MS). */
export function stopPdfHelpers() {
  for (const helper of [...helpers]) stopHelper(helper)
}

/** `count` helper threads for one document, started when missing. */
function useHelpers(count: number): Helper[] {
  while (helpers.length < count) {
    const helper: Helper = { worker: new Worker(new URL('./pdf-text-worker.ts', import.meta.url)), idle: null, listeners: new Set() }
    helper.worker.on('message', (reply: HelperReply) => {
      for (const listener of [...helper.listeners]) listener(reply)
    })
    helper.worker.on('error', () => stopHelper(helper))
    helper.worker.on('exit', () => stopHelper(helper))
    helper.worker.unref() // never keeps the process alive
    helpers.push(helper)
  }
  const used = helpers.slice(0, count)
  for (const helper of used) if (helper.idle) clearTimeout(helper.idle)
  return used
}

function releaseHelper(helper: Helper) {
  if (helper.listeners.size > 0 || !helpers.includes(helper)) return
  if (helper.idle) clearTimeout(helper.idle)
  helper.idle = setTimeout(() => {
    if (helper.listeners.size === 0) stopHelper(helper)
  }, HELPER_IDLE_MS)
  helper.idle.unref()
}

export interface ReadPagesOptions {
  /** Called with each page's text (1-based) in page order, as soon as it and every page before it are read. */
  onPage?: (pageNumber: number, text: string) => void
  /** Stops reading between blocks of pages (the job's shutdown or lost lease). */
  signal?: AbortSignal
  /** Helper threads for a long document: HELPER_THREADS by default, 0 for this thread alone. */
  helpers?: number
  /** Documents with fewer pages are read by this thread alone; HELPER_MIN_PAGES by default. */
  helperMinPages?: number
}

/**
 * Every page's text of the PDF, and how many pages helper threads read (each holds its own copy of the file while it
 * reads). PDF.js takes over `bytes`. Throws PdfTextError: `open` when PDF.js cannot open the file (damaged, or a
 * password), `extract` when a page cannot be read.
 */
export async function readPdfPages(bytes: Uint8Array, opts: ReadPagesOptions = {}): Promise<{ totalPages: number; text: string[]; helperPages: number }> {
  const pdf = await openPdf(bytes)
  const totalPages = pdf.numPages
  const text: Array<string | undefined> = new Array(totalPages)
  let delivered = 0
  const deliver = () => {
    while (delivered < totalPages && text[delivered] !== undefined) {
      opts.onPage?.(delivered + 1, text[delivered]!)
      delivered++
    }
  }
  let filled = 0
  const fill = (p: number, t: string) => {
    if (text[p] !== undefined) return
    text[p] = t
    filled++
  }
  const counter = new Int32Array(new SharedArrayBuffer(4))
  const wanted = totalPages >= (opts.helperMinPages ?? HELPER_MIN_PAGES) ? (opts.helpers ?? HELPER_THREADS) : 0
  // PDF.js holds the file now: the helpers get a copy of it from there (none for a short document).
  const helperBytes = wanted > 0 ? await pdf.getData().catch(() => null) : null
  let helperPages = 0
  const id = nextRequestId++
  // A helper answers each block it took, then `done`; null when it stopped. Until then, its blocks are its own.
  const listening = new Map<Helper, (reply: HelperReply | null) => void>()
  const stopListening = (helper: Helper) => {
    helper.listeners.delete(listening.get(helper)!)
    listening.delete(helper)
    releaseHelper(helper)
  }
  let wake: (() => void) | null = null
  for (const helper of helperBytes ? useHelpers(wanted) : []) {
    const listener = (reply: HelperReply | null) => {
      if (reply && reply.id !== id) return
      if (reply?.kind === 'pages') {
        reply.texts.forEach((t, i) => fill(reply.from + i, t))
        helperPages += reply.texts.length
      } else stopListening(helper)
      wake?.()
    }
    listening.set(helper, listener)
    helper.listeners.add(listener)
    helper.worker.postMessage({ id, bytes: helperBytes!, counter: counter.buffer, totalPages } satisfies HelperRequest)
  }
  const read = async (p: number) => {
    try {
      fill(p, await pageText(pdf, p + 1))
    } catch (err) {
      throw new PdfTextError('extract', false, { cause: err })
    }
  }
  // Pages are handed on from here only (a helper's as this thread gets to them), so onPage's own failure is the caller's.
  try {
    for (let claim = claimPages(counter, totalPages); claim; claim = claimPages(counter, totalPages)) {
      if (opts.signal?.aborted) throw opts.signal.reason
      for (let p = claim.from; p < claim.to; p++) await read(p)
      deliver()
    }
    // Every block is taken: what is missing is a helper's, still being read.
    while (filled < totalPages && listening.size > 0) {
      await new Promise<void>((resolve) => (wake = resolve))
      deliver()
    }
    // A helper that stopped, or could not read a page, leaves it to this thread (whose failure it then is).
    for (let p = 0; p < totalPages && filled < totalPages; p++) {
      if (opts.signal?.aborted) throw opts.signal.reason
      if (text[p] === undefined) await read(p)
    }
    deliver()
  } finally {
    Atomics.store(counter, 0, totalPages) // helpers take no more blocks of this document
    for (const helper of [...listening.keys()]) stopListening(helper)
    await pdf.destroy().catch(() => {})
  }
  return { totalPages, text: text as string[], helperPages }
}

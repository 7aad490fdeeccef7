// A PDF's text page by page (plugins/quiz/services/pdf-text.ts), as document processing reads it: every page's text
// is unpdf's extractText's, whether this thread reads the file alone or shares the pages with helper threads, pages
// come out in order, and a helper that stops mid-document leaves its pages to this thread.
import { afterAll, describe, expect, it } from 'bun:test'
import { Worker } from 'node:worker_threads'
import { extractText, getDocumentProxy } from 'unpdf'
import {
  PAGES_PER_CLAIM, PdfTextError, readPdfPages, stopPdfHelpers, type HelperReply, type HelperRequest,
} from '../plugins/quiz/services/pdf-text'
import { makeCorruptPdf, makeEncryptedPdf, makePdf, numberedPages } from './support/pdf'

const unpdfText = async (bytes: Uint8Array): Promise<string[]> => {
  const pdf = await getDocumentProxy(bytes.slice(), { verbosity: 0, isEvalSupported: false, useSystemFonts: false, stopAtErrors: false })
  try {
    return (await extractText(pdf, { mergePages: false })).text
  } finally {
    await pdf.destroy()
  }
}

/** 90 text pages, two of them without text (as a blank or scanned page). */
const document = async () => {
  const pages = numberedPages(90)
  pages[9] = []
  pages[60] = []
  const bytes = await makePdf(pages)
  return { bytes, expected: await unpdfText(bytes) }
}

afterAll(() => stopPdfHelpers())

describe('reading a PDF page by page', () => {
  it('gives each page the text unpdf extractText gives it, in page order, read alone or with 1 or 2 helper threads', async () => {
    const { bytes, expected } = await document()
    expect(expected[9]).toBe('')
    expect(expected[89]).toContain('Page 90 of 90')
    for (const helpers of [0, 1, 2, 1]) {
      const order: number[] = []
      const read = await readPdfPages(bytes.slice(), {
        helpers, helperMinPages: 1, onPage: (page, text) => {
          order.push(page)
          expect(text).toBe(expected[page - 1]!)
        },
      })
      expect(read.totalPages).toBe(90)
      expect(read.text).toEqual(expected)
      expect(order).toEqual(expected.map((_, i) => i + 1))
      if (helpers === 0) expect(read.helperPages).toBe(0)
    }
  })

  it('a short document is read without helpers', async () => {
    const bytes = await makePdf(numberedPages(3))
    const read = await readPdfPages(bytes.slice())
    expect(read.text).toEqual(await unpdfText(bytes))
    expect(read.helperPages).toBe(0)
  })

  it('a helper thread stopped mid-document leaves its pages to this thread: every page still comes out, once, in order', async () => {
    const { bytes, expected } = await document()
    // Helpers that have started (PDF.js loaded) take pages at once, so they hold some when they are stopped.
    for (let i = 0; i < 20 && (await readPdfPages(bytes.slice(), { helpers: 2, helperMinPages: 1 })).helperPages === 0; i++) await Bun.sleep(100)
    const order: number[] = []
    const read = await readPdfPages(bytes.slice(), {
      helpers: 2, helperMinPages: 1, onPage: (page) => {
        if (order.push(page) === 24) stopPdfHelpers()
      },
    })
    expect(read.text).toEqual(expected)
    expect(order).toEqual(expected.map((_, i) => i + 1))
  })

  it('a helper reads the blocks of pages it takes from the shared counter, answers each, then says done', async () => {
    const { bytes, expected } = await document()
    const worker = new Worker(new URL('../plugins/quiz/services/pdf-text-worker.ts', import.meta.url))
    try {
      const replies: HelperReply[] = []
      const done = (id: number) => new Promise<void>((resolve) => {
        worker.on('message', (reply: HelperReply) => {
          if (reply.id !== id) return
          replies.push(reply)
          if (reply.kind === 'done') resolve()
        })
      })
      const counter = new Int32Array(new SharedArrayBuffer(4))
      const finished = done(1)
      worker.postMessage({ id: 1, bytes: bytes.slice(), counter: counter.buffer, totalPages: 90 } satisfies HelperRequest)
      await finished
      // Nobody else took pages: the helper read them all, block by block.
      const blocks = replies.filter((r) => r.kind === 'pages')
      expect(blocks.map((b) => b.from)).toEqual(Array.from({ length: Math.ceil(90 / PAGES_PER_CLAIM) }, (_, i) => i * PAGES_PER_CLAIM))
      expect(blocks.flatMap((b) => b.texts)).toEqual(expected)
      expect(replies.at(-1)).toEqual({ id: 1, kind: 'done' })

      // Every page already taken: done at once, nothing read.
      replies.length = 0
      const exhausted = new Int32Array(new SharedArrayBuffer(4))
      exhausted[0] = 90
      const again = done(2)
      worker.postMessage({ id: 2, bytes: bytes.slice(), counter: exhausted.buffer, totalPages: 90 } satisfies HelperRequest)
      await again
      expect(replies).toEqual([{ id: 2, kind: 'done' }])
    } finally {
      await worker.terminate()
    }
  })

  it('a damaged file fails to open; a password-protected one says it needs a password', async () => {
    const damaged = await readPdfPages(await makeCorruptPdf()).catch((err: unknown) => err)
    expect(damaged).toBeInstanceOf(PdfTextError)
    expect(damaged).toMatchObject({ stage: 'open', password: false })
    const locked = await readPdfPages(await makeEncryptedPdf()).catch((err: unknown) => err)
    expect(locked).toMatchObject({ stage: 'open', password: true })
  })
})

// A helper thread of pdf-text.ts: for each document it is sent, it opens its own copy and reads blocks of pages from
// the counter it shares with the thread that asked, answering each block's text, then `done`. It stops at a page
// it cannot read (the asking thread reads that page again, and fails there if it must) and never throws.
import { parentPort } from 'node:worker_threads'
import { getResolvedPDFJS } from 'unpdf'
import { claimPages, openPdf, pageText, type HelperReply, type HelperRequest } from './pdf-text'

const reply = (message: HelperReply) => parentPort!.postMessage(message)

// One document at a time, in the order asked: a later one waits for the blocks of the one before.
let queue: Promise<void> = Promise.resolve()

async function help({ id, bytes, counter: shared, totalPages }: HelperRequest): Promise<void> {
  const counter = new Int32Array(shared)
  if (Atomics.load(counter, 0) >= totalPages) return reply({ id, kind: 'done' }) // the asking thread finished alone
  let pdf: Awaited<ReturnType<typeof openPdf>> | null = null
  try {
    pdf = await openPdf(bytes)
    for (let claim = claimPages(counter, totalPages); claim; claim = claimPages(counter, totalPages)) {
      const texts: string[] = []
      try {
        for (let p = claim.from; p < claim.to; p++) texts.push(await pageText(pdf, p + 1))
      } finally {
        if (texts.length > 0) reply({ id, kind: 'pages', from: claim.from, texts })
      }
    }
  } catch {
    // The asking thread reads whatever is missing.
  } finally {
    await pdf?.destroy().catch(() => {})
    reply({ id, kind: 'done' })
  }
}

parentPort!.on('message', (request: HelperRequest) => {
  queue = queue.then(() => help(request))
})

// PDF.js is loaded on first use; loading it now (about 0.2 s) keeps that out of the first document's time.
void getResolvedPDFJS().catch(() => {})

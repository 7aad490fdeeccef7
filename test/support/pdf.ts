// Real PDF files for tests and benchmarks, made with pdf-lib: text pages (a text layer, as a PDF exported from a
// word processor has), pages with no text layer (as a scan has), a corrupt file and a password-protected one.
// pdf-lib cannot encrypt, so the encrypted file is crafted: a normal PDF whose trailer names a Standard security
// handler (RC4 40-bit, revision 2) with an owner and user key no empty password matches, so every reader asks
// for a password. No external tool (qpdf) is needed, so the helpers work on any machine the tests run on.
import { PDFDocument, PDFHexString, PDFName, PDFNumber, StandardFonts, rgb } from 'pdf-lib'

export interface MakePdfOptions {
  /** Font size in points (default 11). */
  fontSize?: number
  /** Page size in points (default US Letter, 612 x 792). */
  pageSize?: [number, number]
  /** Document title in the info dictionary. */
  title?: string
}

const MARGIN = 56

/**
 * A PDF with one page per entry of `pages`, each a list of text lines in Helvetica. Long lines are wrapped at
 * the page width; lines that overflow the page's height are cut (keep pages short). The standard font encodes
 * WinAnsi only: use Latin text.
 */
export async function makePdf(pages: string[][], opts: MakePdfOptions = {}): Promise<Uint8Array<ArrayBuffer>> {
  const fontSize = opts.fontSize ?? 11
  const [width, height] = opts.pageSize ?? [612, 792]
  const doc = await PDFDocument.create()
  if (opts.title) doc.setTitle(opts.title)
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const maxWidth = width - 2 * MARGIN
  const lineHeight = fontSize * 1.3
  const wrap = (line: string): string[] => {
    const out: string[] = []
    let current = ''
    for (const word of line.split(/\s+/).filter(Boolean)) {
      const next = current ? `${current} ${word}` : word
      if (current && font.widthOfTextAtSize(next, fontSize) > maxWidth) {
        out.push(current)
        current = word
      } else current = next
    }
    out.push(current)
    return out
  }
  for (const lines of pages) {
    const page = doc.addPage([width, height])
    let y = height - MARGIN
    for (const line of lines.flatMap(wrap)) {
      if (y < MARGIN) break
      if (line) page.drawText(line, { x: MARGIN, y, size: fontSize, font, color: rgb(0, 0, 0) })
      y -= lineHeight
    }
  }
  return new Uint8Array(await doc.save({ useObjectStreams: false }))
}

/** `n` pages with no text layer, as a scanner makes: each page has only a drawn rectangle (a stand-in image). */
export async function makeBlankPdf(n: number): Promise<Uint8Array<ArrayBuffer>> {
  const doc = await PDFDocument.create()
  for (let i = 0; i < n; i++) {
    const page = doc.addPage([612, 792])
    page.drawRectangle({ x: 56, y: 56, width: 500, height: 680, color: rgb(0.85, 0.85, 0.85), borderColor: rgb(0.2, 0.2, 0.2), borderWidth: 2 })
  }
  return new Uint8Array(await doc.save({ useObjectStreams: false }))
}

/**
 * A file that starts like a PDF (`%PDF-1.7` header, so a type sniffer calls it a PDF) but whose body is cut off
 * after the header and filled with garbage: no objects, no cross-reference table, no trailer.
 */
export async function makeCorruptPdf(): Promise<Uint8Array<ArrayBuffer>> {
  const valid = await makePdf([['This document will be damaged.']])
  const garbage = new Uint8Array(2048)
  let x = 12345
  for (let i = 0; i < garbage.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    garbage[i] = x >>> 24
  }
  const header = valid.slice(0, 16) // "%PDF-1.7\n%\x81\x81..."
  const out = new Uint8Array(header.length + garbage.length)
  out.set(header)
  out.set(garbage, header.length)
  return out
}

/** A PDF that is complete but whose tail (cross-reference table, trailer, part of the objects) is missing. */
export async function makeTruncatedPdf(pages: string[][] = [['A truncated document.']]): Promise<Uint8Array<ArrayBuffer>> {
  const valid = await makePdf(pages)
  return valid.slice(0, Math.floor(valid.length / 3))
}

/**
 * A password-protected PDF (crafted, see the top of this file): readers fail with a password error before
 * reading any page. The pages' text is stored unencrypted, so a reader that ignored the handler would see
 * garbage after "decrypting" it: either way no text comes out.
 */
export async function makeEncryptedPdf(pages: string[][] = [['Secret text behind a password.']]): Promise<Uint8Array<ArrayBuffer>> {
  const doc = await PDFDocument.load(await makePdf(pages))
  const ctx = doc.context
  const bytes32 = (seed: number) => {
    let hex = ''
    let x = seed
    for (let i = 0; i < 32; i++) {
      x = (x * 1103515245 + 12345) >>> 0
      hex += (x >>> 24).toString(16).padStart(2, '0')
    }
    return PDFHexString.of(hex)
  }
  const encrypt = ctx.obj({
    Filter: PDFName.of('Standard'),
    V: PDFNumber.of(1),
    R: PDFNumber.of(2),
    Length: PDFNumber.of(40),
    O: bytes32(7),
    U: bytes32(11),
    P: PDFNumber.of(-44),
  })
  ctx.trailerInfo.Encrypt = ctx.register(encrypt)
  const id = PDFHexString.of('0123456789abcdef0123456789abcdef')
  ctx.trailerInfo.ID = ctx.obj([id, id])
  return new Uint8Array(await doc.save({ useObjectStreams: false }))
}

/** `n` pages of distinct text: page k says "Page k" and carries `k` in words, so any page's text is checkable. */
export function numberedPages(n: number, linesPerPage = 8): string[][] {
  return Array.from({ length: n }, (_, i) => {
    const k = i + 1
    return [
      `Page ${k} of ${n}: chapter ${Math.ceil(k / 10)}`,
      ...Array.from({ length: linesPerPage - 1 }, (_, j) =>
        `Line ${j + 1} of page ${k}. The mitral valve separates the left atrium from the left ventricle; marker p${k}l${j + 1}.`),
    ]
  })
}

// Reference files of ai-generate: the author's PDFs (their text layer, read with unpdf) and UTF-8 text files,
// checked before anything is read (how many, each one's size, its kind and leading bytes), then cut so that all
// of them together stay within REFERENCE_TEXT_MAX characters of the prompt.
import { getDocumentProxy } from 'unpdf'
import { HttpError } from '../../src/core/errors'
import { REFERENCE_FILE_MAX_BYTES, REFERENCE_FILES_MAX, REFERENCE_TEXT_MAX } from './model'

/** The text of one reference file, as the prompt quotes it. */
export interface ReferenceText {
  name: string
  text: string
  /** True when the file had more text than its share of REFERENCE_TEXT_MAX. */
  truncated: boolean
}

export const PDF_EXTENSIONS = ['.pdf'] as const
export const TEXT_EXTENSIONS = ['.txt', '.md', '.markdown'] as const
const PDF_TYPES = ['application/pdf']
const TEXT_TYPES = ['text/plain', 'text/markdown', 'text/x-markdown']
/** Characters of a file name kept in messages and in the prompt. */
const FILE_NAME_MAX = 120
const PDF_MAGIC = '%PDF-'

type ReferenceKind = 'pdf' | 'text'

/** The name a file was sent with, without folders or control characters; never empty. */
export function referenceName(file: File): string {
  const base = (file.name ?? '').split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim()
  return (base || 'file').slice(0, FILE_NAME_MAX)
}

function kindOf(file: File, name: string): ReferenceKind | null {
  const lower = name.toLowerCase()
  const type = (file.type ?? '').split(';')[0]!.trim().toLowerCase()
  if (PDF_EXTENSIONS.some((e) => lower.endsWith(e)) || PDF_TYPES.includes(type)) return 'pdf'
  if (TEXT_EXTENSIONS.some((e) => lower.endsWith(e)) || TEXT_TYPES.includes(type)) return 'text'
  return null
}

const MIB = 1024 * 1024
const mib = (bytes: number) => `${Math.round((bytes / MIB) * 10) / 10} MB`

/**
 * Every refusal that needs no reading, for all files first, so a bad last file costs no PDF parsing: 422
 * `too_many_files`, 413 `file_too_large`, 415 `unsupported_file_type`.
 */
function checkFiles(files: File[]): Array<{ file: File; name: string; kind: ReferenceKind }> {
  if (files.length > REFERENCE_FILES_MAX) {
    throw HttpError.unprocessable('too_many_files', `At most ${REFERENCE_FILES_MAX} reference files can be sent (${files.length} were)`, {
      files: `At most ${REFERENCE_FILES_MAX} files`,
    })
  }
  return files.map((file) => {
    const name = referenceName(file)
    if (file.size > REFERENCE_FILE_MAX_BYTES) {
      throw HttpError.tooLarge('file_too_large', `${name} is ${mib(file.size)}: a reference file may be at most ${mib(REFERENCE_FILE_MAX_BYTES)} (${REFERENCE_FILE_MAX_BYTES} bytes)`)
    }
    const kind = kindOf(file, name)
    if (!kind) {
      throw new HttpError(415, 'unsupported_file_type', `${name}: only PDF (.pdf) and text (.txt, .md) files can be references`)
    }
    return { file, name, kind }
  })
}

const noText = (name: string, why: string) =>
  HttpError.unprocessable('no_text', `${name} ${why}`, { files: `${name} ${why}` })

async function pdfText(bytes: Uint8Array, name: string, budget: number): Promise<string> {
  if (new TextDecoder().decode(bytes.subarray(0, 1024)).indexOf(PDF_MAGIC) < 0) {
    throw new HttpError(415, 'content_mismatch', `${name} is named as a PDF but is not one`)
  }
  let pdf
  try {
    pdf = await getDocumentProxy(bytes, { verbosity: 0, isEvalSupported: false, useSystemFonts: false, stopAtErrors: false })
  } catch (err) {
    const why = (err as { name?: string })?.name === 'PasswordException' ? 'is password-protected: send it without the password' : 'could not be read as a PDF'
    throw HttpError.unprocessable('unreadable_pdf', `${name} ${why}`, { files: `${name} ${why}` })
  }
  try {
    // Page by page, stopping once the file has more text than the prompt can take.
    const pages: string[] = []
    let length = 0
    for (let n = 1; n <= pdf.numPages && length <= budget; n++) {
      const page = await pdf.getPage(n)
      const content = await page.getTextContent()
      const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('')
      page.cleanup()
      pages.push(text)
      length += text.length + 2
    }
    return pages.join('\n\n')
  } catch {
    throw HttpError.unprocessable('unreadable_pdf', `${name} could not be read as a PDF`, { files: `${name} could not be read as a PDF` })
  } finally {
    await pdf.destroy().catch(() => {})
  }
}

function utf8Text(bytes: Uint8Array, name: string): string {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    throw new HttpError(415, 'content_mismatch', `${name} is not UTF-8 text: save it as UTF-8, or send a PDF`)
  }
  if (text.includes('\u0000')) throw new HttpError(415, 'content_mismatch', `${name} is not a text file (it holds binary data)`)
  return text
}

/** Tidy extracted text: one kind of line break, no trailing spaces, at most one blank line in a row. */
const tidy = (text: string) => text.replace(/\r\n?/g, '\n').replace(/[ \t\u00a0]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim()

/** The first `max` UTF-16 units, never half of a surrogate pair. */
function cutAt(text: string, max: number): string {
  if (text.length <= max) return text
  const code = text.charCodeAt(max - 1)
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)
}

/**
 * Shares `max` characters fairly: files shorter than their share keep all of theirs, and what they leave goes to
 * the longer ones (water filling), so one long PDF cannot crowd out a short note.
 */
export function shareBudget(lengths: number[], max: number): number[] {
  const shares = new Array<number>(lengths.length).fill(0)
  const order = lengths.map((length, i) => ({ length, i })).sort((a, b) => a.length - b.length)
  let left = max
  order.forEach(({ length, i }, k) => {
    const fair = Math.floor(left / (order.length - k))
    shares[i] = Math.min(length, fair)
    left -= shares[i]!
  })
  return shares
}

/**
 * The text of each reference file, in the order sent. Refusals, in this order: 422 `too_many_files`, 413
 * `file_too_large`, 415 `unsupported_file_type` (checked for every file before any is read), then per file 415
 * `content_mismatch` (a .pdf that is not a PDF, text that is not UTF-8), 422 `unreadable_pdf` (damaged or
 * password-protected), 422 `no_text` (an empty file, a PDF without a text layer such as a scan).
 */
export async function readReferences(files: File[]): Promise<ReferenceText[]> {
  const checked = checkFiles(files)
  const texts: Array<{ name: string; text: string }> = []
  for (const { file, name, kind } of checked) {
    const bytes = new Uint8Array(await file.arrayBuffer())
    const raw = kind === 'pdf' ? await pdfText(bytes, name, REFERENCE_TEXT_MAX) : utf8Text(bytes, name)
    const text = tidy(raw.replaceAll('\u0000', ''))
    if (!text) throw noText(name, kind === 'pdf' ? 'has no text to read (a scanned PDF has none): send a PDF with a text layer' : 'is empty')
    texts.push({ name, text })
  }
  const shares = shareBudget(texts.map((t) => t.text.length), REFERENCE_TEXT_MAX)
  return texts.map(({ name, text }, i) => ({ name, text: cutAt(text, shares[i]!), truncated: text.length > shares[i]! }))
}

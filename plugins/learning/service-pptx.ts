// Slide decks as PowerPoint files (pptxgenjs): one slide per Marp slide, with its title, bullet lists, text and
// speaker notes. The deck is read with Marp's own parser (the markdown-it tokens of a Marp instance, which mark
// where each slide begins and ends, and which HTML comments are directives rather than notes), so a .pptx has the
// slides the preview shows.
import type { Marp } from '@marp-team/marp-core'
import type PptxGenJS from 'pptxgenjs'
import type { Token } from 'markdown-it'
import { HttpError } from '../../src/core/errors'
import { INVISIBLE_CHARS } from '../../src/core/storage'
import { PPTX_SLIDES_MAX } from './model'

/** Characters of the title kept in the file name. */
export const PPTX_FILE_NAME_MAX = 100
export const PPTX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.presentationml.presentation'

/** The download's file name: the title made safe, `.pptx`. */
export function pptxFileName(title: string): string {
  // Accents are dropped rather than the letters (Ärzte -> Arzte); other scripts are left to the UTF-8 form.
  const ascii = title.normalize('NFKD').replace(/[\u0300-\u036f]/g, '')
  const name = ascii.replace(/[^\w .-]+/g, '').replace(/\s+/g, ' ').trim().replace(/^[.\s-]+/, '').slice(0, PPTX_FILE_NAME_MAX).trim()
  return `${name || 'slides'}.pptx`
}

// toWellFormed: an unpaired surrogate (which encodeURIComponent throws on) becomes U+FFFD.
const rfc5987 = (s: string) => encodeURIComponent(s.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** `attachment` with the ASCII name (pptxFileName) and the title's own characters as RFC 5987 `filename*`. */
export function pptxContentDisposition(title: string): string {
  // Zero-width and direction characters go too: they can disguise the extension the name ends with.
  const own = title.normalize('NFC').replace(INVISIBLE_CHARS, '').replace(/[\\/:*?"<>|]+/g, '').replace(/\s+/g, ' ').trim().replace(/^\.+/, '')
  const unicode = `${[...own].slice(0, PPTX_FILE_NAME_MAX).join('').trim() || 'slides'}.pptx`
  return `attachment; filename="${pptxFileName(title)}"; filename*=UTF-8''${rfc5987(unicode)}`
}

// ---- the deck as Marp reads it ----------------------------------------------------------------------------

type Block =
  | { kind: 'bullet'; text: string; level: number; ordered: boolean }
  | { kind: 'text'; text: string; level: number; bold?: boolean; code?: boolean }

export interface DeckSlide {
  /** The slide's first heading; null when it has none. */
  title: string | null
  blocks: Block[]
  /** Its HTML comments that are not Marp directives. */
  notes: string[]
}

let marp: Marp | null = null
const marpInstance = () => (marp ??= new (require('@marp-team/marp-core') as typeof import('@marp-team/marp-core')).Marp({ html: false, script: false, emoji: { shortcode: true, unicode: false } }))

/** What XML cannot hold (C0 controls but tab and line breaks, U+FFFE, U+FFFF) goes; pptxgenjs escapes the rest. */
const xmlSafe = (text: string) => text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')

const isNote = (token: Token) => token.type === 'marpit_comment' && token.meta?.marpitCommentParsed === undefined

/** An inline token's plain text (markup, images and comments left out); its comments go to `notes`. */
function inlineText(token: Token, notes: string[]): string {
  let text = ''
  for (const child of token.children ?? []) {
    if (child.type === 'marpit_comment') {
      if (isNote(child) && child.content.trim()) notes.push(child.content.trim())
    } else if (child.type === 'softbreak' || child.type === 'hardbreak') text += ' '
    else if (child.type === 'image') continue
    else if (child.type === 'text' || child.type === 'code_inline' || child.type === 'emoji' || child.content) text += child.content
  }
  return xmlSafe(text).replace(/\s+/g, ' ').trim()
}

/** The deck's slides: Marp's slide boundaries, each slide's first heading, its lists (nesting kept), text and notes. */
export function parseDeck(markdown: string): DeckSlide[] {
  const tokens = marpInstance().markdown.parse(markdown, {}) as Token[]
  const slides: DeckSlide[] = []
  let slide: DeckSlide | null = null
  const lists: Array<{ ordered: boolean; itemOpen: boolean }> = []
  let heading = false
  let marginal = false // header and footer directives' text: not slide content
  let row: string[] | null = null
  let headerRow = false
  for (const token of tokens) {
    if (token.type === 'marpit_slide_open') {
      slide = { title: null, blocks: [], notes: [] }
      slides.push(slide)
      continue
    }
    if (!slide) continue
    switch (token.type) {
      case 'marpit_slide_close': slide = null; break
      case 'marpit_header_open': case 'marpit_footer_open': marginal = true; break
      case 'marpit_header_close': case 'marpit_footer_close': marginal = false; break
      case 'marpit_comment': if (isNote(token) && token.content.trim()) slide.notes.push(xmlSafe(token.content.trim())); break
      case 'bullet_list_open': case 'ordered_list_open': lists.push({ ordered: token.type === 'ordered_list_open', itemOpen: false }); break
      case 'bullet_list_close': case 'ordered_list_close': lists.pop(); break
      case 'list_item_open': if (lists.length) lists[lists.length - 1]!.itemOpen = true; break
      case 'heading_open': heading = true; break
      case 'heading_close': heading = false; break
      case 'tr_open': row = []; headerRow = false; break
      case 'th_open': headerRow = true; break
      case 'tr_close': if (row?.some(Boolean)) slide.blocks.push({ kind: 'text', text: row.join(' | '), level: 0, bold: headerRow }); row = null; break
      case 'fence': case 'code_block': {
        const code = xmlSafe(token.content.replace(/\n$/, ''))
        if (code.trim()) slide.blocks.push({ kind: 'text', text: code, level: lists.length, code: true })
        break
      }
      case 'inline': {
        if (marginal) break
        const text = inlineText(token, slide.notes)
        if (row) { row.push(text); break }
        if (!text) break
        if (heading && slide.title === null) { slide.title = text; break }
        const list = lists.at(-1)
        if (heading) slide.blocks.push({ kind: 'text', text, level: lists.length, bold: true })
        else if (list?.itemOpen) {
          slide.blocks.push({ kind: 'bullet', text, level: lists.length - 1, ordered: list.ordered })
          list.itemOpen = false // a second paragraph of the item is text under its bullet
        } else slide.blocks.push({ kind: 'text', text, level: lists.length })
      }
    }
  }
  return slides
}

// ---- the .pptx -------------------------------------------------------------------------------------------

// 16:9, as Marp's default size: 10 x 5.625 inches.
const TITLE_ONLY = 'MARP_TITLE'
const TITLE_AND_BODY = 'MARP_CONTENT'
const BODY_ONLY = 'MARP_BODY'
const TITLE_PT = 30
const BODY_PT = 20
const CODE_FONT = 'Courier New'

function defineLayouts(pptx: PptxGenJS): void {
  const title = (y: number, h: number, align: 'left' | 'center') =>
    ({ placeholder: { options: { name: 'title', type: 'title' as const, x: 0.5, y, w: 9, h, fontSize: TITLE_PT, bold: true, align, valign: 'middle' as const }, text: '' } })
  const body = (y: number, h: number) =>
    ({ placeholder: { options: { name: 'body', type: 'body' as const, x: 0.5, y, w: 9, h, fontSize: BODY_PT, valign: 'top' as const }, text: '' } })
  pptx.defineSlideMaster({ title: TITLE_ONLY, objects: [title(1.9, 1.6, 'center')] })
  pptx.defineSlideMaster({ title: TITLE_AND_BODY, objects: [title(0.3, 1.0, 'left'), body(1.45, 3.85)] })
  pptx.defineSlideMaster({ title: BODY_ONLY, objects: [body(0.4, 4.85)] })
}

/** Smaller type for fuller slides, so a long slide stays on the slide (PowerPoint's shrink-on-overflow needs an edit). */
function bodySize(blocks: Block[]): number {
  const lines = blocks.reduce((n, b) => n + b.text.split('\n').length + Math.floor(b.text.length / 80), 0)
  return lines <= 8 ? BODY_PT : lines <= 12 ? 16 : lines <= 18 ? 13 : 11
}

function bodyRuns(blocks: Block[], fontSize: number): PptxGenJS.TextProps[] {
  return blocks.map((b) => ({
    text: b.text,
    options: b.kind === 'bullet'
      ? { bullet: b.ordered ? { type: 'number' as const } : true, indentLevel: b.level, breakLine: true, fontSize }
      : {
        bullet: false, indentLevel: b.level, breakLine: true, bold: b.bold, fontSize: b.code ? Math.max(10, fontSize - 4) : fontSize,
        ...(b.code ? { fontFace: CODE_FONT } : {}),
      },
  }))
}

/** A .pptx file of the deck; 422 `empty_deck` when no slide has a title, text or notes, `too_many_slides` over PPTX_SLIDES_MAX. */
export async function buildPptx(markdown: string, title: string): Promise<Uint8Array> {
  const slides = parseDeck(markdown)
  if (slides.length > PPTX_SLIDES_MAX) {
    throw HttpError.unprocessable('too_many_slides', `markdown: a presentation file holds at most ${PPTX_SLIDES_MAX} slides (this deck has ${slides.length})`, {
      markdown: `At most ${PPTX_SLIDES_MAX} slides`,
    })
  }
  if (!slides.some((s) => s.title !== null || s.blocks.length > 0 || s.notes.length > 0)) {
    throw HttpError.unprocessable('empty_deck', 'markdown: the deck has no slide with a title, text or notes', { markdown: 'The deck is empty' })
  }
  const pptx = new (await import('pptxgenjs')).default()
  pptx.layout = 'LAYOUT_16x9'
  pptx.title = xmlSafe(title)
  defineLayouts(pptx)
  for (const s of slides) {
    const layout = s.blocks.length === 0 ? TITLE_ONLY : s.title === null ? BODY_ONLY : TITLE_AND_BODY
    const slide = pptx.addSlide({ masterName: layout })
    if (s.title !== null) slide.addText(s.title, { placeholder: 'title' })
    if (s.blocks.length > 0) slide.addText(bodyRuns(s.blocks, bodySize(s.blocks)), { placeholder: 'body' })
    if (s.notes.length > 0) slide.addNotes(s.notes.join('\n\n'))
  }
  // pptxgenjs compresses only for its 'STREAM' output (a Node Buffer, which is a Uint8Array); stored, a deck is 5x larger.
  return (await pptx.write({ outputType: 'STREAM', compression: true })) as Uint8Array
}

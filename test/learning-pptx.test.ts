// Slide decks exported as PowerPoint files through POST /api/admin/learning/generate-pptx: the download's headers,
// the file as a zip with one slide per Marp slide (titles, bullets with their nesting, text, speaker notes without
// Marp's directives), an empty deck refused; and the file opened by LibreOffice (converted to PDF, one page per
// slide with its title) when LibreOffice is installed.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { strFromU8, unzipSync } from 'fflate'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { extractText, getDocumentProxy } from 'unpdf'
import { PPTX_SLIDES_MAX, PPTX_TITLE_MAX } from '../plugins/learning/model'
import { PPTX_CONTENT_TYPE, parseDeck, pptxContentDisposition, pptxFileName } from '../plugins/learning/service-pptx'
import { renderSlides } from '../plugins/learning/service-slides'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(120_000)

const PATH = '/api/admin/learning/generate-pptx'
const OFFICE = Bun.which('soffice') ?? Bun.which('libreoffice')
/** LibreOffice's first start with a new profile takes a while; a conversion after that a second or two. */
const CONVERT_TIMEOUT_MS = 90_000
if (!OFFICE) console.warn('LibreOffice (soffice) is not on PATH: the test that opens the .pptx in it is skipped. Install it with `apt-get install libreoffice-impress`.')

const DECK = [
  '---',
  'marp: true',
  'paginate: true',
  'footer: Paediatric teaching',
  '---',
  '',
  '<!-- _class: lead -->',
  '# Asthma in children',
  '',
  'A teaching session for the ward team',
  '',
  '<!-- Welcome everyone; note-title-slide. -->',
  '',
  '---',
  '',
  '# Recognising an attack',
  '',
  '- Wheeze and cough',
  '  - worse at night',
  '  - after exercise',
  '- Recession',
  '',
  '1. Assess severity',
  '2. Give oxygen',
  '',
  '<!--',
  'Ask who has seen one; note-recognising.',
  '-->',
  '',
  '---',
  '',
  '## Treatment',
  '',
  'Salbutamol through a **spacer** first.',
  '',
  '| Drug | Dose |',
  '|---|---|',
  '| Salbutamol | 10 puffs |',
  '',
  '---',
  '',
  'A slide without a heading.',
].join('\n')
const TITLES = ['Asthma in children', 'Recognising an attack', 'Treatment']

interface Pptx { files: Record<string, Uint8Array>; slides: string[]; notes: Map<number, string> }

function unpack(bytes: Uint8Array): Pptx {
  const files = unzipSync(bytes)
  const slideNo = (name: string) => Number(/(\d+)\.xml$/.exec(name)![1])
  const slides = Object.keys(files).filter((k) => /^ppt\/slides\/slide\d+\.xml$/.test(k)).sort((a, b) => slideNo(a) - slideNo(b))
  const notes = new Map<number, string>()
  for (const name of Object.keys(files).filter((k) => /^ppt\/notesSlides\/notesSlide\d+\.xml$/.test(k))) notes.set(slideNo(name), strFromU8(files[name]!))
  return { files, slides: slides.map((k) => strFromU8(files[k]!)), notes }
}
/** The text runs of a slide's XML, in order. */
const runs = (xml: string) => [...xml.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((m) => m[1]!)

describe.each(databaseTargets())('PowerPoint export (%s)', (target) => {
  let app: TestApp
  let author: SignedIn
  let pptx: Uint8Array
  let headers: Headers

  beforeAll(async () => {
    app = await startTestApp({ target })
    author = await userWithSession(app, 'moderator', 'author')
    const res = await app.post(PATH, { markdown: DECK, title: 'Ärztliche Fortbildung: Asthma' }, asUser(author))
    expect(res.status, res.status === 200 ? '' : await res.clone().text()).toBe(200)
    headers = res.headers
    pptx = new Uint8Array(await res.arrayBuffer())
  })
  afterAll(() => app.close())

  it('answers a .pptx download named after the title, in ASCII and in UTF-8 (RFC 5987)', () => {
    expect(headers.get('content-type')).toBe(PPTX_CONTENT_TYPE)
    const disposition = headers.get('content-disposition')!
    expect(disposition).toBe(pptxContentDisposition('Ärztliche Fortbildung: Asthma'))
    expect(disposition).toStartWith('attachment; filename="Arztliche Fortbildung Asthma.pptx"')
    expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent('Ärztliche Fortbildung Asthma.pptx')}`)
    expect(pptxFileName('../../etc/passwd "x"')).toBe('etcpasswd x.pptx')
    expect(pptxFileName('日本語')).toBe('slides.pptx')
    // found by the fuzzer: an unpaired surrogate in the title made encodeURIComponent throw (a 500)
    expect(pptxContentDisposition('Asthma \ud800 care')).toContain(`filename*=UTF-8''Asthma%20%EF%BF%BD%20care.pptx`)
  })

  it('holds one slide per Marp slide, each titled by its first heading', () => {
    const { files, slides } = unpack(pptx)
    expect(files['[Content_Types].xml']).toBeDefined()
    expect(slides.length).toBe(renderSlides(DECK).slides.length)
    expect(slides.length).toBe(4)
    for (const [i, title] of TITLES.entries()) {
      expect(slides[i]).toMatch(/<p:ph[^>]*type="title"/)
      expect(runs(slides[i]!)[0]).toBe(title)
    }
    // the slide without a heading has no title, only its text
    expect(slides[3]).not.toMatch(/type="title"/)
    expect(runs(slides[3]!)).toEqual(['A slide without a heading.'])
  })

  it('keeps bullet lists as bullets with their nesting, numbered lists numbered, and text as paragraphs', () => {
    const { slides } = unpack(pptx)
    const second = slides[1]!
    expect(runs(second)).toEqual(['Recognising an attack', 'Wheeze and cough', 'worse at night', 'after exercise', 'Recession', 'Assess severity', 'Give oxygen'])
    const paragraph = (text: string) => new RegExp(`<a:p><a:pPr([^>]*)>(?:(?!</a:p>).)*<a:t>${text}</a:t>`).exec(second)
    expect(paragraph('Wheeze and cough')![0]).toContain('<a:buChar')
    expect(paragraph('worse at night')![1]).toContain('lvl="1"')
    expect(paragraph('Recession')![1]).not.toContain('lvl=')
    expect(paragraph('Assess severity')![0]).toContain('<a:buAutoNum')
    const third = slides[2]!
    expect(runs(third)).toEqual(['Treatment', 'Salbutamol through a spacer first.', 'Drug | Dose', 'Salbutamol | 10 puffs'])
    // Marp's footer directive is not slide text
    expect(slides.join('')).not.toContain('Paediatric teaching')
  })

  it('puts each slide\'s HTML comments in its notes, but not Marp directives', () => {
    const { notes } = unpack(pptx)
    expect(notes.get(1)).toContain('Welcome everyone; note-title-slide.')
    expect(notes.get(1)).not.toContain('_class')
    expect(notes.get(2)).toContain('note-recognising')
    expect(notes.get(3) ?? '').not.toContain('note-')
    expect(parseDeck(DECK).map((s) => s.notes)).toEqual([['Welcome everyone; note-title-slide.'], ['Ask who has seen one; note-recognising.'], [], []])
  })

  it('refuses an empty deck (422 empty_deck), too many slides (422 too_many_slides) and a missing or oversized field (400)', async () => {
    for (const markdown of ['   \n\n', '<!-- _class: lead -->\n\n---\n\n<!-- paginate: true -->']) {
      const res = await app.post(PATH, { markdown, title: 'Empty' }, asUser(author))
      expect(res.status).toBe(422)
      expect(await res.json()).toMatchObject({ success: false, code: 'empty_deck' })
    }
    const long = Array.from({ length: PPTX_SLIDES_MAX + 1 }, (_, i) => `# ${i}`).join('\n\n---\n\n')
    const res = await app.post(PATH, { markdown: long, title: 'Long' }, asUser(author))
    expect(res.status).toBe(422)
    expect(await res.json()).toMatchObject({ success: false, code: 'too_many_slides' })
    expect((await app.post(PATH, { markdown: long.slice(0, long.lastIndexOf('\n\n---')), title: 'Long' }, asUser(author))).status).toBe(200)
    expect((await app.post(PATH, { markdown: '# A' }, asUser(author))).status).toBe(400)
    expect((await app.post(PATH, { markdown: '# A', title: 'x'.repeat(PPTX_TITLE_MAX + 1) }, asUser(author))).status).toBe(400)
  })

  it.skipIf(!OFFICE)('opens in LibreOffice: converted to PDF, one page per slide with its title', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pptx-test-'))
    try {
      writeFileSync(join(dir, 'deck.pptx'), pptx)
      const proc = Bun.spawn([OFFICE!, `-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--convert-to', 'pdf', '--outdir', dir, join(dir, 'deck.pptx')], {
        stdout: 'pipe', stderr: 'pipe', timeout: CONVERT_TIMEOUT_MS,
      })
      const code = await proc.exited
      expect(code, await new Response(proc.stderr).text()).toBe(0)
      const pdf = await getDocumentProxy(new Uint8Array(readFileSync(join(dir, 'deck.pdf'))))
      const { totalPages, text } = await extractText(pdf, { mergePages: false })
      expect(totalPages).toBe(4)
      for (const [i, title] of TITLES.entries()) expect(text[i]).toContain(title)
      expect(text[1]).toContain('worse at night')
      expect(text[3]).toContain('A slide without a heading.')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

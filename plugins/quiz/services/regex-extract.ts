// Spec 1, Quizzes, extraction mode `regex`: multiple-choice questions read from text with no AI. Pure and linear
// in the text's length. Understands numbered questions (`1.`, `1)`, `Q1.`, `Question 1:`), lettered options
// (`A)`, `A.`, `(a)`, `a)`, several on one line too), answer lines (`Answer: B`, `Correct answer: B`, `Ans: b`,
// or an answer written out), an answer key at the end (`Answer Key` / `Answers` heading, then `1. B`, `2-C`,
// `3) d`, several per line too) and `Explanation:` lines. Lines wrapped anywhere are joined back; page numbers,
// page headers and footers (lines repeated at the edges of pages split by form feeds) are dropped.
import type { ExtractedQuestion } from '../models/extraction'

export interface ParsedQuestion extends ExtractedQuestion {
  /** The question's number in the source. */
  number: number
}

export interface RegexExtraction {
  questions: ParsedQuestion[]
  /** Numbered blocks that were not usable questions (under two distinct options, or no answer). */
  skipped: number
}

/** Pages are joined with this character (a PDF's page break) before parsing. */
export const PAGE_BREAK = '\f'

const MAX_OPTIONS = 10 // options A..J
const QUESTION = /^(?:(?:Q|Question)\s*(\d{1,5})\s*[.):\-–]?|(\d{1,5})\s*[.)])(?:\s+(.*))?$/i
const OPTION = /^(\*\s*)?(?:\(([A-Ja-j])\)|([A-Ja-j])([.)]))(?:\s+(.*))?$/
const ANSWER = /^(?:correct\s+answer|correct\s+option|answer|ans)\s*(?:is)?\s*[:.\-–]\s*(.*)$/i
const EXPLANATION = /^(?:explanation|rationale|reason)\s*[:.\-–]\s*(.*)$/i
const KEY_HEADING = /^(?:answer\s*key|answers|answer\s*sheet|key\s+to\s+answers|correct\s+answers|solutions)\s*:?$/i
const KEY_ENTRY = /^(\d{1,5})\s*[.):\-–]?\s*\(?([A-Ja-j])\)?(?:(?:\s*[.):\-–]\s*|\s+)(.*))?$/
const KEY_ENTRIES = /^(?:\d{1,5}\s*[.):\-–]?\s*\(?[A-Ja-j]\)?[\s,;]*)+$/
const KEY_ENTRY_G = /(\d{1,5})\s*[.):\-–]?\s*\(?([A-Ja-j])\)?/g
const PAGE_NUMBER = /^(?:[-–—]\s*)?(?:page\s*)?\d{1,5}(?:\s*(?:of|\/)\s*\d{1,5})?(?:\s*[-–—])?$/i
const LETTER_ANSWER = /^\(?([A-Ja-j])\)?(?:$|[.)\s:,-]\s*(.*)$)/

const LETTER = /^\p{L}$/u
const LOWER_START = /^\p{Ll}/u
const letterIndex = (letter: string) => letter.toLowerCase().charCodeAt(0) - 97
const squash = (s: string) => s.replace(/\s+/g, ' ').trim()

/** Joins a wrapped line to what came before: a word split by a hyphen at the line's end closes up. */
function joinWrapped(before: string, line: string): string {
  if (before === '') return line
  // Only the end of `before` is looked at: a field can grow long, and a `$`-anchored regex would scan all of it.
  if (before.endsWith('-') && LETTER.test(before.charAt(before.length - 2)) && LOWER_START.test(line)) return before + line
  return `${before} ${line}`
}

const isStructural = (line: string) => QUESTION.test(line) || OPTION.test(line) || ANSWER.test(line) || EXPLANATION.test(line) || KEY_HEADING.test(line)
const edgeForm = (line: string) => line.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ')

/** The lines of the text without page numbers and without headers or footers repeated across pages. */
function contentLines(text: string): string[] {
  const pages = text.replace(/\r\n?/g, '\n').split(PAGE_BREAK).map((p) => p.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !PAGE_NUMBER.test(l)))
  let noise = new Set<string>()
  if (pages.length > 1) {
    // A running header or footer is a line found among the first or last two lines of several pages.
    const seen = new Map<string, number>()
    for (const lines of pages) {
      const edges = new Set([...lines.slice(0, 2), ...lines.slice(-2)].filter((l) => !isStructural(l)).map(edgeForm))
      for (const e of edges) seen.set(e, (seen.get(e) ?? 0) + 1)
    }
    const needed = Math.max(2, Math.ceil(pages.length * 0.25))
    noise = new Set([...seen].filter(([, n]) => n >= needed).map(([e]) => e))
  }
  const out: string[] = []
  for (const lines of pages) {
    const edge = new Set([0, 1, lines.length - 2, lines.length - 1])
    lines.forEach((l, i) => {
      if (noise.size > 0 && edge.has(i) && noise.has(edgeForm(l)) && !isStructural(l)) return
      out.push(l)
    })
  }
  return out
}

interface Block {
  number: number
  text: string
  options: string[]
  /** A letter index or the answer's text, as the source gave it. */
  answer: number | string | null
  explanation: string
  /** Which part a wrapped line continues. */
  field: 'text' | 'option' | 'explanation' | 'none'
}

/** Splits `A) x B) y C) z` at the markers of the following letters, in order and of the same style. */
function splitInlineOptions(first: number, text: string, style: 'paren' | 'dot' | 'close', upper: boolean): string[] {
  const parts: string[] = []
  let rest = text
  for (let next = first + 1; next < MAX_OPTIONS; next++) {
    const ch = String.fromCharCode((upper ? 65 : 97) + next)
    const marker = style === 'paren' ? `(${ch})` : style === 'dot' ? `${ch}.` : `${ch})`
    const at = rest.indexOf(` ${marker} `)
    if (at < 0) break
    parts.push(rest.slice(0, at))
    rest = rest.slice(at + marker.length + 2)
  }
  parts.push(rest)
  return parts.map(squash)
}

/** Finds the answer key: the last key heading followed by key entries. Returns its line index or -1. */
function findKey(lines: string[]): number {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!KEY_HEADING.test(lines[i]!)) continue
    const next = lines[i + 1]
    if (next !== undefined && (KEY_ENTRIES.test(next) || KEY_ENTRY.test(next))) return i
  }
  return -1
}

/** Key entries by question number; an explanation may follow a single entry on its line (`1. B - because ...`). */
function readKey(lines: string[]): Array<{ number: number; letter: number; explanation: string }> {
  const entries: Array<{ number: number; letter: number; explanation: string }> = []
  for (const line of lines) {
    if (KEY_ENTRIES.test(line)) {
      for (const m of line.matchAll(KEY_ENTRY_G)) entries.push({ number: Number(m[1]), letter: letterIndex(m[2]!), explanation: '' })
      continue
    }
    const m = KEY_ENTRY.exec(line)
    if (m) {
      entries.push({ number: Number(m[1]), letter: letterIndex(m[2]!), explanation: squash(m[3] ?? '') })
      continue
    }
    const last = entries[entries.length - 1]
    if (!last) continue
    const ex = EXPLANATION.exec(line)
    last.explanation = squash(ex ? joinWrapped(last.explanation, ex[1] ?? '') : joinWrapped(last.explanation, line))
  }
  return entries
}

/** An answer line's value: the answer written out when it is an option's text, else its leading letter. */
function readAnswer(value: string, options: string[]): number | string | null {
  const v = squash(value)
  if (v === '') return null
  const written = v.replace(/\.$/, '').toLowerCase()
  const byText = options.findIndex((o) => squash(o).toLowerCase() === written)
  if (byText >= 0) return byText
  const letter = LETTER_ANSWER.exec(v)
  // `Answer: B`, `Answer: (b)`, `Answer: B) Paris`, `Answer: B. Because ...`: the letter decides.
  if (letter) return letterIndex(letter[1]!)
  return v
}

export function extractQuestionsByRegex(text: string): RegexExtraction {
  const lines = contentLines(text)
  const keyAt = findKey(lines)
  const body = keyAt >= 0 ? lines.slice(0, keyAt) : lines
  const blocks: Block[] = []
  let current: Block | null = null
  let lastNumber = 0

  const continueField = (b: Block, line: string) => {
    if (b.field === 'text') b.text = joinWrapped(b.text, line)
    else if (b.field === 'option') b.options[b.options.length - 1] = joinWrapped(b.options[b.options.length - 1]!, line)
    else if (b.field === 'explanation') b.explanation = joinWrapped(b.explanation, line)
  }

  for (const line of body) {
    const q = QUESTION.exec(line)
    if (q) {
      const number = Number(q[1] ?? q[2])
      // A wrapped line may start with a number too ("... discovered in\n1628. The ..."): a new question needs the
      // next number, or, once the current one has its options, a small gap (a question lost) or a restart at 1.
      const complete = current !== null && current.options.length >= 2
      const starts = !current || number === lastNumber + 1 || (complete && (number === 1 || (number > lastNumber && number <= lastNumber + 3)))
      if (starts) {
        current = { number, text: q[3] ?? '', options: [], answer: null, explanation: '', field: 'text' }
        blocks.push(current)
        lastNumber = number
        continue
      }
    }
    if (!current) continue
    const o = OPTION.exec(line)
    if (o) {
      const letter = o[2] ?? o[3]!
      const index = letterIndex(letter)
      if (index === current.options.length && current.field !== 'explanation') {
        const style = o[2] ? 'paren' : o[4] === '.' ? 'dot' : 'close'
        const parts = splitInlineOptions(index, o[5] ?? '', style, letter === letter.toUpperCase())
        if (o[1]) current.answer = index
        current.options.push(...parts)
        current.field = 'option'
        continue
      }
    }
    const a = ANSWER.exec(line)
    if (a) {
      current.answer = readAnswer(a[1] ?? '', current.options)
      current.field = 'none'
      continue
    }
    const e = EXPLANATION.exec(line)
    if (e) {
      current.explanation = joinWrapped(current.explanation, e[1] ?? '')
      current.field = 'explanation'
      continue
    }
    continueField(current, line)
  }

  if (keyAt >= 0) {
    // The k-th key entry numbered n answers the k-th question numbered n (numbering may restart in a long section).
    const byNumber = new Map<number, Block[]>()
    for (const b of blocks) {
      const same = byNumber.get(b.number)
      if (same) same.push(b)
      else byNumber.set(b.number, [b])
    }
    const used = new Map<number, number>()
    for (const entry of readKey(lines.slice(keyAt + 1))) {
      const k = used.get(entry.number) ?? 0
      const b = byNumber.get(entry.number)?.[k]
      used.set(entry.number, k + 1)
      if (!b) continue
      if (b.answer === null) b.answer = entry.letter
      if (b.explanation === '' && entry.explanation !== '') b.explanation = entry.explanation
    }
  }

  const questions: ParsedQuestion[] = []
  let skipped = 0
  for (const b of blocks) {
    const options = b.options.map(squash)
    const questionText = squash(b.text)
    let correct: string | undefined
    if (typeof b.answer === 'number') correct = options[b.answer]
    else if (typeof b.answer === 'string') {
      const wanted = b.answer.toLowerCase()
      correct = options.find((o) => o.toLowerCase() === wanted)
    }
    const distinct = new Set(options.map((o) => o.toLowerCase())).size === options.length
    if (questionText === '' || options.length < 2 || options.some((o) => o === '') || !distinct || correct === undefined) {
      skipped++
      continue
    }
    questions.push({ number: b.number, question_text: questionText, options, correct_answer: correct, explanation: squash(b.explanation) })
  }
  return { questions, skipped }
}

// Regex extraction (plugins/quiz/services/regex-extract.ts) on a large generated section: questions per second
// and peak memory. The text is the test fixtures' known questions repeated (each made unique), written out in
// two layouts: inline answers, and an answer key at the end; both with wrapped lines, pages, headers and footers.
// Settings: QUESTIONS=5000, REPEAT=5.
import { readFileSync } from 'node:fs'
import { extractQuestionsByRegex } from '../../plugins/quiz/services/regex-extract'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions, type Known, type Layout } from '../../test/support/mcq-fixtures'

const QUESTIONS = Number(process.env.QUESTIONS ?? 5000)
const REPEAT = Number(process.env.REPEAT ?? 5)

/** Peak and current resident set size in MB (Linux: VmHWM, VmRSS), or process.memoryUsage() elsewhere. */
function memory(): { peakMb: number; rssMb: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8')
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
    return { peakMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 }
  } catch {
    const rss = process.memoryUsage().rss / 2 ** 20
    return { peakMb: rss, rssMb: rss }
  }
}
const mb = (n: number) => `${n.toFixed(0)} MB`

const questions: Known[] = Array.from({ length: QUESTIONS }, (_, i) => {
  const k = KNOWN[i % KNOWN.length]!
  return { ...k, question_text: `${k.question_text.replace(/[?:.]$/, '')} (item ${i + 1})?` }
})
const layouts: Layout[] = [
  { name: 'inline answers, wrapped at 80, pages of 40 lines', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', wrap: 80, pageLines: 40 },
  { name: 'answer key at the end, wrapped at 60, pages of 40 lines', numbering: NUMBERINGS.q!, option: OPTIONS.lowerBoth!, answer: 'key-dot', explanation: 'before', wrap: 60, pageLines: 40 },
]

Bun.gc(true)
const start = memory()
console.log(`regex extraction: ${QUESTIONS.toLocaleString('en')} questions, ${REPEAT} runs per layout; RSS at start ${mb(start.rssMb)}`)
for (const layout of layouts) {
  const text = renderQuestions(questions, layout)
  Bun.gc(true)
  const before = memory()
  const times: number[] = []
  let found = 0
  let skipped = 0
  for (let r = 0; r < REPEAT; r++) {
    const t0 = performance.now()
    const result = extractQuestionsByRegex(text)
    times.push(performance.now() - t0)
    found = result.questions.length
    skipped = result.skipped
  }
  const after = memory()
  times.sort((a, b) => a - b)
  const median = times[Math.floor(times.length / 2)]!
  console.log(`\n${layout.name}: ${(text.length / 2 ** 20).toFixed(1)} MB of text, ${text.split('\f').length} pages`)
  console.log(`  recovered ${found.toLocaleString('en')} of ${QUESTIONS.toLocaleString('en')} (skipped ${skipped})${found === QUESTIONS ? '' : '  <-- MISMATCH'}`)
  console.log(`  time per run: median ${median.toFixed(0)} ms, best ${times[0]!.toFixed(0)} ms, worst ${times[times.length - 1]!.toFixed(0)} ms`)
  console.log(`  questions/s (median run): ${Math.round(QUESTIONS / (median / 1000)).toLocaleString('en')}`)
  console.log(`  RSS before ${mb(before.rssMb)}, after ${mb(after.rssMb)}; peak RSS of the process so far ${mb(after.peakMb)}`)
}

// Multiple-choice question text for tests and benchmarks: a list of known questions and a renderer that writes
// them out in a given layout (numbering, option markers, inline answers or an answer key, explanations, wrapped
// lines, pages with running headers and page numbers), so a parser's output can be compared with the source exactly.
import { PAGE_BREAK } from '../../plugins/quiz/services/regex-extract'

export interface Known { question_text: string; options: string[]; correct: number; explanation: string }

export const KNOWN: Known[] = [
  { question_text: 'Which valve separates the left atrium from the left ventricle?', options: ['Tricuspid valve', 'Mitral valve', 'Pulmonary valve', 'Aortic valve'], correct: 1, explanation: 'The mitral (bicuspid) valve lies between the left atrium and the left ventricle.' },
  { question_text: 'What is the normal resting adult heart rate range in beats per minute?', options: ['20-40', '40-60', '60-100', '100-140'], correct: 2, explanation: 'A resting rate of 60 to 100 beats per minute is considered normal for adults.' },
  { question_text: 'Which electrolyte disturbance classically causes peaked T waves on an ECG, especially when the serum level rises quickly over a few hours?', options: ['Hypokalaemia', 'Hyperkalaemia', 'Hyponatraemia', 'Hypercalcaemia'], correct: 1, explanation: '' },
  { question_text: 'The first heart sound (S1) is produced mainly by:', options: ['Closure of the atrioventricular valves', 'Closure of the semilunar valves', 'Rapid ventricular filling', 'Atrial contraction against a stiff ventricle'], correct: 0, explanation: 'S1 marks the start of systole: the mitral and tricuspid valves close.' },
  { question_text: 'Which drug is a loop diuretic?', options: ['Furosemide', 'Spironolactone', 'Hydrochlorothiazide'], correct: 0, explanation: 'Furosemide acts on the thick ascending limb of the loop of Henle.' },
  { question_text: 'True or false: the right ventricle pumps blood into the pulmonary artery.', options: ['True', 'False'], correct: 0, explanation: '' },
  { question_text: 'A 64-year-old man has crushing central chest pain radiating to the left arm for 40 minutes, with sweating and nausea. Which test should be done first?', options: ['Chest X-ray', '12-lead ECG', 'Echocardiogram', 'Exercise stress test', 'Coronary angiography'], correct: 1, explanation: 'An ECG within ten minutes of arrival identifies ST-elevation myocardial infarction, which changes management at once.' },
  { question_text: 'Who described the circulation of the blood in 1628?', options: ['Galen', 'Andreas Vesalius', 'William Harvey', 'Marcello Malpighi'], correct: 2, explanation: 'William Harvey published De Motu Cordis in 1628.' },
  { question_text: 'What does a dose of 0.5 mg equal in micrograms?', options: ['5 micrograms', '50 micrograms', '500 micrograms', '5000 micrograms'], correct: 2, explanation: '1 mg is 1000 micrograms, so 0.5 mg is 500 micrograms.' },
  { question_text: 'Which of these is NOT a cause of a wide pulse pressure?', options: ['Aortic regurgitation', 'Thyrotoxicosis', 'Cardiac tamponade', 'Anaemia'], correct: 2, explanation: 'Tamponade narrows the pulse pressure.' },
  { question_text: 'In which chamber does deoxygenated blood from the body first arrive?', options: ['Right atrium', 'Left atrium', 'Right ventricle', 'Left ventricle'], correct: 0, explanation: '' },
  { question_text: 'Which artery most commonly supplies the sinoatrial node?', options: ['Left anterior descending artery', 'Right coronary artery', 'Circumflex artery', 'Posterior descending artery'], correct: 1, explanation: 'In about 60 percent of people the SA nodal artery arises from the right coronary artery.' },
]

const LETTERS = 'abcdefghij'

export type Numbering = (n: number) => string
export type OptionMarker = (i: number) => string
export type AnswerStyle = 'answer' | 'correct-answer' | 'ans' | 'key-dot' | 'key-dash' | 'key-paren' | 'key-row' | 'star'

export interface Layout {
  name: string
  numbering: Numbering
  option: OptionMarker
  answer: AnswerStyle
  /** Where explanations go: after the answer line, before it, or (with a key) on the key entry's line. */
  explanation: 'after' | 'before' | 'key' | 'none'
  /** Wrap every line at this many characters. */
  wrap?: number
  /** All options of a question on one line (`A) x  B) y`). */
  optionsInline?: boolean
  /** Lines per page; pages get a running header and a page-number footer and are joined with form feeds. */
  pageLines?: number
  /** Page numbers alone on a line every n lines, with no form feeds (text copied out of a PDF viewer). */
  bareNumbersEvery?: number
}

export const NUMBERINGS: Record<string, Numbering> = {
  dot: (n) => `${n}.`,
  paren: (n) => `${n})`,
  q: (n) => `Q${n}.`,
  question: (n) => `Question ${n}:`,
}
export const OPTIONS: Record<string, OptionMarker> = {
  upperParen: (i) => `${LETTERS[i]!.toUpperCase()})`,
  upperDot: (i) => `${LETTERS[i]!.toUpperCase()}.`,
  lowerBoth: (i) => `(${LETTERS[i]})`,
  lowerParen: (i) => `${LETTERS[i]})`,
}

function wrap(line: string, width: number): string[] {
  const out: string[] = []
  let current = ''
  for (const word of line.split(' ')) {
    if (current && current.length + 1 + word.length > width) {
      out.push(current)
      current = word
    } else current = current ? `${current} ${word}` : word
  }
  out.push(current)
  return out
}

/** The known questions written out in a layout. */
export function renderQuestions(questions: Known[], layout: Layout): string {
  const lines: string[] = ['Cardiology self-assessment', 'Choose the single best answer for each question.', '']
  const key: string[] = []
  const isKey = layout.answer.startsWith('key')
  questions.forEach((q, qi) => {
    const n = qi + 1
    const letter = LETTERS[q.correct]!.toUpperCase()
    lines.push(`${layout.numbering(n)} ${q.question_text}`)
    const opts = q.options.map((o, i) => `${layout.answer === 'star' && i === q.correct ? '*' : ''}${layout.option(i)} ${o}`)
    if (layout.optionsInline) lines.push(opts.join('   '))
    else lines.push(...opts)
    const explanation = q.explanation && layout.explanation !== 'none' && layout.explanation !== 'key' ? `Explanation: ${q.explanation}` : null
    if (explanation && layout.explanation === 'before') lines.push(explanation)
    if (layout.answer === 'answer') lines.push(`Answer: ${letter}`)
    if (layout.answer === 'correct-answer') lines.push(`Correct answer: ${letter}`)
    if (layout.answer === 'ans') lines.push(`Ans: ${letter.toLowerCase()}`)
    if (explanation && layout.explanation === 'after') lines.push(explanation)
    lines.push('')
    const keyExplanation = layout.explanation === 'key' && q.explanation ? ` - ${q.explanation}` : ''
    if (layout.answer === 'key-dot') key.push(`${n}. ${letter}${keyExplanation}`)
    if (layout.answer === 'key-dash') key.push(`${n}-${letter}${keyExplanation}`)
    if (layout.answer === 'key-paren') key.push(`${n}) ${letter.toLowerCase()}${keyExplanation}`)
    if (layout.answer === 'key-row') key.push(`${n}. ${letter}`)
  })
  if (isKey) {
    lines.push('Answer Key')
    if (layout.answer === 'key-row') for (let i = 0; i < key.length; i += 5) lines.push(key.slice(i, i + 5).join('   '))
    else lines.push(...key)
  }
  let out = layout.wrap ? lines.flatMap((l) => (l === '' ? [''] : wrap(l, layout.wrap!))) : lines
  if (layout.bareNumbersEvery) {
    const every = layout.bareNumbersEvery
    out = out.flatMap((l, i) => ((i + 1) % every === 0 ? [l, '', String(Math.floor(i / every) + 1), ''] : [l]))
  }
  if (!layout.pageLines) return out.join('\n')
  const pages: string[] = []
  const total = Math.ceil(out.length / layout.pageLines)
  for (let p = 0; p < total; p++) {
    const body = out.slice(p * layout.pageLines, (p + 1) * layout.pageLines)
    pages.push(['Cardiology Review 2024 - Chapter 3', ...body, `Page ${p + 1} of ${total}`].join('\n'))
  }
  return pages.join(`\n${PAGE_BREAK}`)
}


// Spec 1, Quizzes, extraction mode `regex`: the pure parser. Every fixture is generated from one list of known
// questions in a given layout, and the parser must give back every question, option, answer and explanation exactly.
import { describe, expect, it } from 'bun:test'
import { extractQuestionsByRegex } from '../plugins/quiz/services/regex-extract'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions, type Known, type Layout } from './support/mcq-fixtures'

const expected = (questions: Known[], withExplanations = true) =>
  questions.map((q, i) => ({
    number: i + 1,
    question_text: q.question_text,
    options: q.options,
    correct_answer: q.options[q.correct]!,
    explanation: withExplanations ? q.explanation : '',
  }))

const LAYOUTS: Layout[] = [
  { name: '1. / A) / Answer: B / explanation after', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after' },
  { name: '1) / a) / Ans: b / explanation before the answer', numbering: NUMBERINGS.paren!, option: OPTIONS.lowerParen!, answer: 'ans', explanation: 'before' },
  { name: 'Q1. / (a) / Correct answer: B', numbering: NUMBERINGS.q!, option: OPTIONS.lowerBoth!, answer: 'correct-answer', explanation: 'after' },
  { name: 'Question 1: / A. / answer key 1. B at the end', numbering: NUMBERINGS.question!, option: OPTIONS.upperDot!, answer: 'key-dot', explanation: 'after' },
  { name: '1. / A. / answer key 2-C with explanations on the key lines', numbering: NUMBERINGS.dot!, option: OPTIONS.upperDot!, answer: 'key-dash', explanation: 'key' },
  { name: 'Q1. / a) / answer key 3) d', numbering: NUMBERINGS.q!, option: OPTIONS.lowerParen!, answer: 'key-paren', explanation: 'none' },
  { name: '1) / (a) / answer key in rows of five', numbering: NUMBERINGS.paren!, option: OPTIONS.lowerBoth!, answer: 'key-row', explanation: 'after' },
  { name: 'all options on one line (A) x   B) y)', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', optionsInline: true },
  { name: 'all options on one line ((a) x   (b) y) with a key', numbering: NUMBERINGS.q!, option: OPTIONS.lowerBoth!, answer: 'key-dot', explanation: 'none', optionsInline: true },
  { name: 'correct option marked with an asterisk', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'star', explanation: 'after' },
  { name: 'lines wrapped at 38 characters', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', wrap: 38 },
  { name: 'lines wrapped at 25 characters with a key', numbering: NUMBERINGS.question!, option: OPTIONS.lowerParen!, answer: 'key-dash', explanation: 'after', wrap: 25 },
  { name: 'pages of 9 lines with running headers and page-number footers', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'correct-answer', explanation: 'after', pageLines: 9 },
  { name: 'pages of 7 lines, wrapped at 30, answer key split over pages', numbering: NUMBERINGS.paren!, option: OPTIONS.upperDot!, answer: 'key-dot', explanation: 'before', wrap: 30, pageLines: 7 },
  { name: 'bare page numbers every 6 lines, no page breaks', numbering: NUMBERINGS.q!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', bareNumbersEvery: 6 },
]

describe('regex extraction: every layout gives back every question exactly', () => {
  for (const layout of LAYOUTS) {
    it(layout.name, () => {
      const text = renderQuestions(KNOWN, layout)
      const result = extractQuestionsByRegex(text)
      expect(result.questions).toEqual(expected(KNOWN, layout.explanation !== 'none'))
      expect(result.skipped).toBe(0)
    })
  }
})

describe('regex extraction: rules', () => {
  it('takes the answer written out (Answer: Mitral valve) and the letter with its option text (Answer: B) Mitral valve)', () => {
    const text = [
      '1. Which valve separates the left atrium from the left ventricle?', 'A) Tricuspid valve', 'B) Mitral valve', 'Answer: Mitral valve',
      '2. Which drug is a loop diuretic?', 'A) Spironolactone', 'B) Furosemide', 'Answer: B) Furosemide',
    ].join('\n')
    const { questions } = extractQuestionsByRegex(text)
    expect(questions.map((q) => q.correct_answer)).toEqual(['Mitral valve', 'Furosemide'])
  })

  it('skips and counts blocks with under two options, repeated options, no answer or an answer beyond the options', () => {
    const text = [
      '1. Only one option here?', 'A) Lonely', 'Answer: A',
      '2. A good question?', 'A) Yes', 'B) No', 'Answer: A',
      '3. Two options that are the same?', 'A) Same', 'B) same', 'Answer: A',
      '4. No answer given?', 'A) One', 'B) Two',
      '5. Answer letter past the options?', 'A) One', 'B) Two', 'Answer: D',
    ].join('\n')
    const result = extractQuestionsByRegex(text)
    expect(result.questions.map((q) => q.number)).toEqual([2])
    expect(result.skipped).toBe(4)
  })

  it('does not start a question at a wrapped line that begins with a number out of sequence', () => {
    const text = ['1. Who described the circulation of the blood in', '1628. He was English.', 'A) Galen', 'B) William Harvey', 'Answer: B',
      '2. What happened in', '1543. Vesalius published what?', 'A) Fabrica', 'B) Nothing', 'Answer: A'].join('\n')
    const { questions, skipped } = extractQuestionsByRegex(text)
    expect(questions.map((q) => q.question_text)).toEqual([
      'Who described the circulation of the blood in 1628. He was English.',
      'What happened in 1543. Vesalius published what?',
    ])
    expect(skipped).toBe(0)
  })

  it('keeps roman-numbered statements (I. II.) in the question text: options follow the letter sequence', () => {
    const text = ['1. Which statements are true?', 'I. The heart has four chambers', 'II. The aorta carries venous blood',
      'A) I only', 'B) II only', 'C) Both', 'Answer: A'].join('\n')
    const { questions } = extractQuestionsByRegex(text)
    expect(questions).toHaveLength(1)
    expect(questions[0]!.question_text).toBe('Which statements are true? I. The heart has four chambers II. The aorta carries venous blood')
    expect(questions[0]!.options).toEqual(['I only', 'II only', 'Both'])
  })

  it('joins a word hyphenated at a line end', () => {
    const text = ['1. Which vessel carries oxygen-', 'ated blood to the body?', 'A) Aorta', 'B) Vena cava', 'Answer: A'].join('\n')
    expect(extractQuestionsByRegex(text).questions[0]!.question_text).toBe('Which vessel carries oxygen-ated blood to the body?')
  })

  it('answers the k-th question numbered n with the k-th key entry numbered n when numbering restarts', () => {
    const text = ['Part one', '1. First part, first?', 'A) a1', 'B) b1', '2. First part, second?', 'A) a2', 'B) b2',
      '1. Second part, first?', 'A) c1', 'B) d1', 'Answers', '1. A', '2. B', '1. B'].join('\n')
    const { questions } = extractQuestionsByRegex(text)
    expect(questions.map((q) => q.correct_answer)).toEqual(['a1', 'b2', 'd1'])
  })

  it('stays linear: 50,000 wrapped lines after one question take well under a second', () => {
    const tail = Array.from({ length: 50_000 }, (_, i) => `continued line ${i} of a very long final option that never ends`)
    const text = ['1. A question?', 'A) One', 'B) Two', 'Answer: A', '2. Another question?', 'A) Three', 'B) Four-', ...tail, 'Answers', '2. B'].join('\n')
    const started = performance.now()
    const { questions } = extractQuestionsByRegex(text)
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(questions).toHaveLength(2)
    expect(questions[1]!.correct_answer.slice(0, 40)).toBe('Four-continued line 0 of a very long fin')
    expect(questions[1]!.correct_answer.length).toBeGreaterThan(50_000 * 50)
  })

  it('reads question numbers past 9,999', () => {
    const text = ['12345. Far into a question bank?', 'A) Yes', 'B) No', 'Answer: A', '12346) Next one?', '(a) Yes', '(b) No', 'Ans: b'].join('\n')
    expect(extractQuestionsByRegex(text).questions.map((q) => [q.number, q.correct_answer])).toEqual([[12345, 'Yes'], [12346, 'No']])
  })

  it('finds nothing in prose without numbered questions', () => {
    expect(extractQuestionsByRegex('The heart is a muscular organ.\nIt pumps blood.\n\f12\nAnswers are below.')).toEqual({ questions: [], skipped: 0 })
  })
})

// Spec 1, Tutor: the teach models a learner may pick, and one chat turn about a bank question. The tutor's context
// is the question, its options, correct answer and explanation, and up to 4 semantically similar bank questions
// (the bank's vector index). The model is asked to end its answer with three follow-up questions on lines starting
// with `> `; those lines become `suggestions` and leave the reply.
import { aiInvalidOutput } from '../../../src/core/ai'
import { HttpError } from '../../../src/core/errors'
import type { RateRule } from '../../../src/core/ratelimit'
import type { Core } from '../../../src/plugin'
import { TUTOR_SUGGESTIONS, type TeachModel, type TutorChatBody, type TutorChatResponse } from '../models/tutor'
import type { QuizUser } from './accounts'
import { listAvailableModels, resolveModel } from './ai-models'
import { optionsOf, QUESTIONS_COLLECTION, questionText, quizEmbedder } from './question-index'

/** spec 1, limits: 30 tutor messages per user per 10 minutes; admins and unthrottled users are exempt. */
export const TUTOR_RULE: RateRule = {
  name: 'quiz.tutor', limit: 30, windowS: 10 * 60, message: 'Too many tutor messages: at most 30 per 10 minutes, try again later',
}
/** spec 1, limits: similar questions in the tutor context. */
export const SIMILAR_MAX = 4
/** Neighbours looked up: a few more than kept, since the question itself and stale index entries are dropped. */
const SIMILAR_LOOKUP = SIMILAR_MAX + 4
/** Below this cosine similarity a neighbour is noise, not a similar question: a low floor, the closest four count. */
export const SIMILAR_MIN_SCORE = 0.1
export const TUTOR_MAX_TOKENS = 1500
export const SUGGESTION_MAX = 300
/** Used, in this order, when the model gives fewer than three suggestions. */
export const DEFAULT_SUGGESTIONS = [
  'Why is the correct answer right?',
  'Why are the other options wrong?',
  'Can you give me a similar question to practise?',
] as const

/** The rate limits of the tutor and speech do not apply to admins and unthrottled users. */
export const isExempt = (user: Pick<QuizUser, 'role' | 'unthrottled'>) => user.role === 'admin' || user.unthrottled

export function listTeachModels(core: Core): Promise<TeachModel[]> {
  return listAvailableModels(core, 'teach')
}

interface QuestionRow {
  id: number
  question_text: string
  options: unknown
  correct_answer: string
  explanation: string
}

async function findQuestion(core: Core, id: number): Promise<QuestionRow> {
  const [row] = await core.db.sql<QuestionRow>`
    select id, question_text, options, correct_answer, explanation from quiz.questions where id = ${id}`
  if (!row) throw HttpError.notFound('question_not_found', 'Question not found')
  return row
}

/**
 * Up to SIMILAR_MAX bank questions closest to this one (cosine at least SIMILAR_MIN_SCORE), closest first. The
 * context is a help, not a requirement: when the embedder or the index fails the chat goes on without them.
 */
export async function similarQuestions(core: Core, question: QuestionRow): Promise<QuestionRow[]> {
  let ids: number[]
  try {
    const embedder = await quizEmbedder(core)
    const [vector] = await embedder.embed([questionText({ ...question, options: optionsOf(question.options) })])
    if (!vector || vector.every((x) => x === 0)) return []
    const matches = await core.vectors.search(QUESTIONS_COLLECTION, vector, { topK: SIMILAR_LOOKUP, minScore: SIMILAR_MIN_SCORE })
    ids = matches.map((m) => Number(m.id)).filter((id) => Number.isSafeInteger(id) && id > 0 && id !== question.id)
  } catch (err) {
    core.log.warn({ err: err instanceof Error ? err.message : String(err), question_id: question.id }, 'tutor: similar questions unavailable')
    return []
  }
  if (ids.length === 0) return []
  const rows = await core.db.sql<QuestionRow>`
    select id, question_text, options, correct_answer, explanation from quiz.questions
    where id in (select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int)`
  const byId = new Map(rows.map((r) => [r.id, r]))
  return ids.map((id) => byId.get(id)).filter((r): r is QuestionRow => r !== undefined).slice(0, SIMILAR_MAX)
}

const letter = (i: number) => String.fromCharCode(65 + (i % 26))

/** The system prompt: the tutor's role, the question in full, the similar questions, and the suggestion format. */
export function tutorSystemPrompt(question: QuestionRow, similar: QuestionRow[]): string {
  const options = optionsOf(question.options)
  const lines = [
    'You are a patient tutor helping a learner understand one multiple-choice question from their study material.',
    'Explain clearly and concisely in Markdown. Stay on the topic of the question and the subject it belongs to.',
    '',
    '## The question',
    question.question_text,
    '',
    '### Options',
    ...options.map((o, i) => `${letter(i)}) ${o}`),
    '',
    `### Correct answer\n${question.correct_answer}`,
    '',
    `### Explanation\n${question.explanation.trim() || '(none given)'}`,
  ]
  if (similar.length > 0) {
    lines.push('', '## Similar questions from the same question bank (for context and examples)')
    similar.forEach((q, i) => {
      lines.push('', `${i + 1}. ${q.question_text}`, `   Options: ${optionsOf(q.options).join(' | ')}`, `   Correct answer: ${q.correct_answer}`)
      if (q.explanation.trim()) lines.push(`   Explanation: ${q.explanation.trim()}`)
    })
  }
  lines.push(
    '',
    '## Format',
    'Do not use Markdown block quotes in your answer. End your answer with exactly three short follow-up questions the learner',
    'might ask next, each on its own line starting with "> " (a greater-than sign and a space), with no heading before them.',
  )
  return lines.join('\n')
}

const SUGGESTION_LINE = /^ {0,3}> ?(.*)$/
const SUGGESTION_HEADING = /^\s*(?:[#*_]+\s*)?(?:suggested |possible )?(?:follow[- ]?up|suggestions?|next questions?)[^\n]{0,40}:?\s*[*_]*\s*$/i

/**
 * Splits a model answer into the reply and three suggestions: every line starting with `> ` is removed from the
 * reply; the last three of them (markers and surrounding Markdown emphasis stripped, blank or repeated ones dropped)
 * are the suggestions, completed from DEFAULT_SUGGESTIONS when fewer came back. A "Follow-up questions:" heading
 * left dangling at the end of the reply goes too.
 */
export function parseTutorAnswer(answer: string): TutorChatResponse {
  const kept: string[] = []
  const found: string[] = []
  for (const line of answer.replace(/\r\n?/g, '\n').split('\n')) {
    const m = SUGGESTION_LINE.exec(line)
    if (m) {
      const text = m[1]!.replace(/^(?:[-*•]|\d+[.)])\s+/, '').replace(/^([*_]{1,2})(.+)\1$/, '$2').trim().slice(0, SUGGESTION_MAX)
      if (text) found.push(text)
    } else kept.push(line)
  }
  while (kept.length > 0 && (kept.at(-1)!.trim() === '' || SUGGESTION_HEADING.test(kept.at(-1)!))) kept.pop()
  const suggestions: string[] = []
  for (const s of found.slice(-TUTOR_SUGGESTIONS)) if (!suggestions.includes(s)) suggestions.push(s)
  for (const d of DEFAULT_SUGGESTIONS) if (suggestions.length < TUTOR_SUGGESTIONS && !suggestions.includes(d)) suggestions.push(d)
  return { reply: kept.join('\n').trim(), suggestions }
}

/**
 * One tutor turn. Checked in this order: the conversation's shape (422), the question (404), the model (503 none
 * configured, 404/400 for a model_id that is unknown, of another task or inactive), the caller's limit (429), then
 * the gateway call (502 failed, 504 timed out). A refused or failed request before the limit does not count.
 */
export async function chat(core: Core, user: QuizUser, body: TutorChatBody): Promise<TutorChatResponse> {
  const messages = body.messages
  const blank = messages.findIndex((m) => m.content.trim() === '')
  if (blank >= 0) {
    throw HttpError.unprocessable('blank_message', `Message ${blank + 1} is blank`, { [`messages.${blank}.content`]: 'blank' })
  }
  if (messages.at(-1)!.role !== 'user') {
    throw HttpError.unprocessable('last_message_not_user', 'The last message must be the learner\'s (role user)', { messages: 'must end with a user message' })
  }
  const question = await findQuestion(core, body.question_id)
  const model = await resolveModel(core, 'teach', body.model_id ?? null)
  if (!isExempt(user)) await core.rateLimit.consume(TUTOR_RULE, String(user.id))

  const similar = await similarQuestions(core, question)
  const answer = await core.ai.text(model, {
    system: tutorSystemPrompt(question, similar),
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    maxTokens: TUTOR_MAX_TOKENS,
    temperature: 0.3,
  })
  const parsed = parseTutorAnswer(answer)
  if (!parsed.reply) throw aiInvalidOutput(new Error('the tutor model answered no text'))
  return parsed
}

// Note generation (issue 15): the thirteen kinds of clinical text, each written by the chosen model from its prompt
// template (services/prompts.ts) filled with the request's fields, under a system prompt that carries the
// clinician's preferences (their AI-context memories and the request's physicianMemories). Every gateway call
// writes one usage row, success or failure. Generation stores nothing else: the text is a draft the clinician
// reviews (the saved encounter's status says when they did).
import { aiInvalidOutput, aiNotConfigured } from '../../../src/core/ai'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { getConfigValues } from './app-config'
import { memoryContext } from './memories'
import { expectedMilestonesBlock, milestoneAgeGroup, milestonesForAge } from './milestones'
import { MODEL_CONFIG_KEYS, resolveModelIn } from './models'
import { fillTemplate, templateIn, type PromptKey } from './prompts'
import { recordUsage } from './usage'

export interface GenerationKind {
  /** The API path, as the usage log records it. */
  endpoint: string
  prompt: PromptKey
  /** The key of the generated text in the answer. */
  key: string
  /** The request fields the template's placeholders are named after. */
  fields: readonly string[]
  /** What a placeholder says when its field is absent or empty (else NOT_GIVEN). */
  defaults?: Readonly<Record<string, string>>
}

/** A placeholder whose field the clinician left out. */
export const NOT_GIVEN = 'not stated'
const DEMOGRAPHICS = ['patientAge', 'patientGender'] as const

export const GENERATIONS = {
  hpiEncounter: { endpoint: '/api/generate-hpi-encounter', prompt: 'prompt.hpi_encounter', key: 'hpi', fields: ['transcript', ...DEMOGRAPHICS, 'setting'] },
  hpiDictation: { endpoint: '/api/generate-hpi-dictation', prompt: 'prompt.hpi_dictation', key: 'hpi', fields: ['transcript', ...DEMOGRAPHICS, 'setting'] },
  soap: {
    endpoint: '/api/generate-soap', prompt: 'prompt.soap', key: 'soap', fields: ['transcript', ...DEMOGRAPHICS, 'type', 'additionalInstructions'],
    defaults: { additionalInstructions: 'none' },
  },
  chartReview: { endpoint: '/api/generate-chart-review', prompt: 'prompt.chart_review', key: 'chartReview', fields: ['notes', 'visitType'] },
  hospitalCourse: { endpoint: '/api/generate-hospital-course', prompt: 'prompt.hospital_course', key: 'hospitalCourse', fields: ['notes', ...DEMOGRAPHICS, 'format'], defaults: { format: 'narrative' } },
  shadess: { endpoint: '/api/well-visit/shadess', prompt: 'prompt.shadess', key: 'assessment', fields: ['responses', 'patientAge'] },
  sickVisit: {
    endpoint: '/api/sick-visit/note', prompt: 'prompt.sick_visit', key: 'note',
    fields: ['chiefComplaint', 'transcript', 'dictation', ...DEMOGRAPHICS, 'ros', 'physicalExam', 'diagnoses'],
    defaults: { transcript: 'none', dictation: 'none', ros: 'not documented', physicalExam: 'not documented', diagnoses: 'not stated: use the clinician\'s assessment from the visit' },
  },
  patientEducation: {
    endpoint: '/api/patient-education', prompt: 'prompt.patient_education', key: 'handout',
    fields: ['noteText', 'diagnosis', 'medications', 'patientAge', 'language', 'readingLevel'],
    defaults: { language: 'English', readingLevel: 'plain language at about a 6th-grade reading level', diagnosis: 'as in the note', medications: 'as in the note' },
  },
  milestoneNarrative: { endpoint: '/api/generate-milestone-narrative', prompt: 'prompt.milestone_narrative', key: 'narrative', fields: ['milestones', ...DEMOGRAPHICS] },
  milestoneSummary: { endpoint: '/api/generate-milestone-summary', prompt: 'prompt.milestone_summary', key: 'summary', fields: ['narrative'] },
  refine: { endpoint: '/api/refine', prompt: 'prompt.refine', key: 'document', fields: ['currentDocument', 'instructions', 'sourceContext'], defaults: { sourceContext: 'none' } },
  shorten: { endpoint: '/api/shorten', prompt: 'prompt.shorten', key: 'document', fields: ['document'] },
  clarify: { endpoint: '/api/clarify', prompt: 'prompt.clarify', key: 'document', fields: ['document', 'context'], defaults: { context: 'none' } },
} as const satisfies Record<string, GenerationKind>

export type GenerationName = keyof typeof GENERATIONS

/** What every generation request may carry besides its own fields. */
export interface GenerationRequest {
  model?: string
  physicianMemories?: string
  [field: string]: unknown
}

/** A generation ready to run: the model resolved and the prompts written; nothing has reached the gateway yet. */
export interface PreparedGeneration {
  kind: GenerationKind
  userId: number
  model: string
  system: string
  prompt: string
}

/** Sampling temperature: clinical text should follow the input closely, not vary. */
export const GENERATION_TEMPERATURE = 0.2

/**
 * Checks what can fail before the gateway is called, in this order: a gateway is configured (503), the model is
 * listed and on (400; the default when the request names none), then writes the prompts.
 */
export async function prepareGeneration(core: Core, kind: GenerationKind, userId: number, body: GenerationRequest): Promise<PreparedGeneration> {
  if (!core.ai.configured) throw aiNotConfigured('Note generation is unavailable: no AI gateway is configured on this server')
  // The settings in one query, the memories beside it (a request's overhead is mostly these round trips).
  const [values, saved, expected] = await Promise.all([
    getConfigValues(core, [...MODEL_CONFIG_KEYS, kind.prompt, SYSTEM_PROMPT]),
    memoryContext(core, userId),
    expectedMilestones(core, kind, body),
  ])
  const model = resolveModelIn(core, values, body.model)
  const prompt = fillTemplate(templateIn(values, kind.prompt), placeholderValues(kind, body))
  return {
    kind, userId, model,
    system: systemPromptOf(templateIn(values, SYSTEM_PROMPT), saved, body.physicianMemories),
    prompt: expected ? `${prompt}\n\n${expected}` : prompt,
  }
}

/**
 * The milestone narrative of a child whose age names a checklist age (`patientAge`, e.g. `9 months`): that age's
 * milestones from clinical.milestones, as a reference block after the prompt. null for every other generation.
 */
async function expectedMilestones(core: Core, kind: GenerationKind, body: GenerationRequest): Promise<string | null> {
  if (kind.endpoint !== GENERATIONS.milestoneNarrative.endpoint) return null
  const age = milestoneAgeGroup(body.patientAge)
  return age === null ? null : expectedMilestonesBlock(age, await milestonesForAge(core, age))
}

export interface RunOptions {
  /** Streams the text: called with each piece as the gateway produces it. */
  onDelta?: (text: string) => void | Promise<void>
  /** Aborts the gateway call (the client went away). */
  signal?: AbortSignal
}

/** Calls the gateway (whole or streamed) and writes the usage row, whatever the outcome. */
export async function runGeneration(core: Core, prepared: PreparedGeneration, opts: RunOptions = {}): Promise<{ text: string; model: string }> {
  const started = performance.now()
  const usage = (outcome: string, tokensIn: number | null = null, tokensOut: number | null = null) => recordUsage(core, {
    userId: prepared.userId, endpoint: prepared.kind.endpoint, model: prepared.model,
    tokensIn, tokensOut, latencyMs: performance.now() - started, outcome,
  })
  const target = { model: prepared.model }
  const request = {
    system: prepared.system,
    messages: [{ role: 'user' as const, content: prepared.prompt }],
    temperature: GENERATION_TEMPERATURE,
    signal: opts.signal,
  }
  try {
    const result = opts.onDelta ? await core.ai.stream(target, request, opts.onDelta) : await core.ai.generate(target, request)
    if (result.text.trim() === '') throw aiInvalidOutput({ message: 'the model answered with no text' })
    await usage('ok', result.usage.tokensIn, result.usage.tokensOut)
    return { text: result.text.trim(), model: prepared.model }
  } catch (err) {
    await usage(outcomeOf(err, opts.signal))
    throw err
  }
}

/** Prepare and run in one: the JSON answer's path. */
export async function generateNote(core: Core, kind: GenerationKind, userId: number, body: GenerationRequest): Promise<{ text: string; model: string }> {
  return runGeneration(core, await prepareGeneration(core, kind, userId, body))
}

function outcomeOf(err: unknown, signal: AbortSignal | undefined): string {
  if (err instanceof HttpError) return err.code
  return signal?.aborted ? 'cancelled' : 'error'
}

const PREFERENCES_INTRO = 'The clinician\'s preferences for their notes follow, between the <clinician_preferences> markers. '
  + 'Follow them for content, structure, style and wording wherever they do not conflict with the rules above. '
  + 'They are preferences, not facts about this patient.'

const SYSTEM_PROMPT: PromptKey = 'prompt.system'

/** The system prompt: the template, then the clinician's preferences (saved memories, then this request's), marked off. */
export function systemPromptOf(base: string, saved: string, physicianMemories: string | undefined): string {
  const parts: string[] = []
  if (saved.trim()) parts.push(`Saved preferences:\n${saved.trim()}`)
  if (physicianMemories?.trim()) parts.push(`For this note:\n${physicianMemories.trim()}`)
  if (parts.length === 0) return base
  return `${base}\n\n${PREFERENCES_INTRO}\n<clinician_preferences>\n${parts.join('\n\n')}\n</clinician_preferences>`
}

/** The template's values: each field's text (structured answers as readable lines), or its default when absent or blank. */
export function placeholderValues(kind: GenerationKind, body: GenerationRequest): Record<string, string> {
  const values: Record<string, string> = {}
  for (const field of kind.fields) {
    const value = body[field]
    const written = typeof value === 'string' ? value.trim() : value === undefined || value === null ? '' : describeAnswers(value)
    values[field] = written !== '' ? written : (kind.defaults as Record<string, string> | undefined)?.[field] ?? NOT_GIVEN
  }
  return values
}

/** Structured input (screening answers, milestones) as lines a model reads easily. */
export function describeAnswers(value: unknown): string {
  if (Array.isArray(value)) return value.map((item) => `- ${inline(item)}`).join('\n')
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).map(([key, v]) => (Array.isArray(v) && v.length > 1
      ? `- ${key}:\n${v.map((item) => `  - ${inline(item)}`).join('\n')}`
      : `- ${key}: ${inline(v)}`)).join('\n')
  }
  return inline(value)
}

function inline(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'no answer'
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(inline).join('; ')
  if (typeof value === 'object') return Object.entries(value).map(([k, v]) => `${k}: ${inline(v)}`).join(', ')
  return String(value).trim()
}

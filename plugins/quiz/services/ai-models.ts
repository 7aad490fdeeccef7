// Spec 1, Admin: AI model configuration, and the embedding admin (test, regenerate).
// Defaults: at most one per task (a partial unique index). The first model created for a task becomes its
// default; choosing another default unsets the previous one; when the default is deleted, unset or moved to
// another task, the task's oldest other active model is promoted, or the task is left without a default (and
// requests fall back to the server's environment default). Active and default are independent flags: an inactive
// default is kept but not used (resolveModel falls back to the environment default).
import { AI_LIST_MODELS_TIMEOUT_MS, aiNotConfigured, aiUnreachable, type AiTarget } from '../../../src/core/ai'
import { isUniqueViolation, rawSql as raw, type Db } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import { defineJob, type GiveUpContext, type GiveUpOutcome, type JobContext, type JobHandler } from '../../../src/core/jobs'
import { allowedHostOf, checkOutboundUrl, OUTBOUND_ADDRESS_RULE, type AllowedHost } from '../../../src/core/outbound'
import type { Core } from '../../../src/plugin'
import type {
  AIModelConfigResponse, AiTask, AvailableModel, CreateModelBody, GatewayModelsBody, UpdateModelBody, Voice, VoiceProvider, VoicesBody,
} from '../models/ai-models'
import { indexQuestions, optionsOf, QUESTIONS_COLLECTION, quizEmbedder, type IndexableQuestion } from './question-index'

export const REGENERATE_JOB_KIND = 'quiz.embedding.regenerate'
export const REGENERATE_BATCH = 100
/** How long the admin's gateway probes wait; settable so tests reach a timeout quickly (like VOICE_PROVIDER_URLS). */
export const GATEWAY_PROBE_TIMEOUTS_MS = { modelTest: 20_000, listModels: AI_LIST_MODELS_TIMEOUT_MS }
export const MODEL_TEST_MAX_TOKENS = 16
/** The name shown for the environment default (AI_DEFAULT_MODEL, or TTS_MODEL for speech) in model lists. */
export const SERVER_DEFAULT_NAME = 'Server default'

/** A configuration as stored: the response's fields, with the sealed key (or null) and Date timestamps. */
type ModelRow = Omit<AIModelConfigResponse, 'api_key' | 'created_at' | 'updated_at'> & {
  api_key: string | null
  created_at: Date
  updated_at: Date
}
const COLUMNS = raw('id, name, model_id, task, is_active, is_default, api_key, api_base, created_at, updated_at')

export type ResolvedModel = AiTarget & { name: string; id: number | null }

/** Shows at most the last 4 characters of a key, and a short `sk-`-style prefix of a long one. */
export function maskApiKey(key: string): string {
  if (key.length < 12) return '…'
  const prefix = key.length >= 20 ? (/^[A-Za-z]{1,4}-/.exec(key)?.[0] ?? '') : ''
  return `${prefix}…${key.slice(-4)}`
}

/** A stored key, masked; a key sealed under an older DATA_ENCRYPTION_KEY shows as masked too rather than failing the list. */
function maskedKey(core: Core, sealed: string): string {
  try {
    return maskApiKey(core.crypto.openText(sealed))
  } catch {
    return '…'
  }
}

function toResponse(core: Core, row: ModelRow): AIModelConfigResponse {
  return {
    id: row.id,
    name: row.name,
    model_id: row.model_id,
    task: row.task,
    is_active: row.is_active,
    is_default: row.is_default,
    api_key: row.api_key ? maskedKey(core, row.api_key) : '',
    api_base: row.api_base,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

// ---- gateway addresses ----------------------------------------------------------------------------------
// An api_base is an address the server sends an API key to and whose answer it reflects: it follows the shared
// outbound rule (src/core/outbound.ts), with the operator's AI_ALLOWED_HOSTS and AI_BASE_URL's own host and port
// allowed (a gateway on the same host or network is a normal setup).

export const API_BASE_RULE = `api_base ${OUTBOUND_ADDRESS_RULE}, unless its host is AI_BASE_URL's or listed in AI_ALLOWED_HOSTS`
export const API_BASE_UNRESOLVABLE = 'api_base\'s host name could not be resolved'

function gatewayAllowList(core: Core): AllowedHost[] {
  const own = core.config.ai.baseUrl ? allowedHostOf(core.config.ai.baseUrl) : null
  return own ? [...core.config.aiAllowedHosts, own] : [...core.config.aiAllowedHosts]
}

/** Save time (create, update): 400 naming the rule. */
async function assertApiBaseAllowed(core: Core, apiBase: string | null | undefined): Promise<void> {
  if (!apiBase) return
  const verdict = await checkOutboundUrl(apiBase, { allowedHosts: gatewayAllowList(core) })
  if (verdict.ok) return
  throw HttpError.badRequest('api_base_not_allowed', verdict.reason === 'unresolvable' ? `${API_BASE_UNRESOLVABLE}; ${API_BASE_RULE}` : API_BASE_RULE)
}

/**
 * Call time: checked again, since DNS answers change after saving. A refused address answers exactly what an
 * unreachable gateway does (no request made, no key sent), so the route cannot tell the two apart; the log can.
 */
async function assertGatewayReachable(core: Core, baseUrl: string | null | undefined): Promise<void> {
  if (!baseUrl) return
  const verdict = await checkOutboundUrl(baseUrl, { allowedHosts: gatewayAllowList(core) })
  if (verdict.ok) return
  core.log.warn({ reason: verdict.reason, detail: verdict.detail }, 'AI gateway address refused')
  throw aiUnreachable(new Error(`address refused (${verdict.reason}): ${verdict.detail}`))
}

/** The admin's probes give one answer for a gateway they cannot reach, a timeout included: no port scanning by its text. */
const asUnreachable = (err: unknown) => (err instanceof HttpError && err.code === 'ai_timeout' ? aiUnreachable(err.cause) : err)

function toTarget(core: Core, row: ModelRow): ResolvedModel {
  return {
    id: row.id,
    name: row.name,
    model: row.model_id,
    baseUrl: row.api_base ?? core.config.ai.baseUrl,
    apiKey: row.api_key ? core.crypto.openText(row.api_key) : null,
  }
}

/** A stored configuration as a call target, after the call-time address check of its api_base. */
async function checkedTarget(core: Core, row: ModelRow): Promise<ResolvedModel> {
  await assertGatewayReachable(core, row.api_base)
  return toTarget(core, row)
}

/** The server's own model for a task: TTS_MODEL for speech, AI_DEFAULT_MODEL otherwise; null without a gateway. */
export function environmentModel(core: Core, task: AiTask): string | null {
  if (!core.config.ai.baseUrl) return null
  return (task === 'tts' ? core.config.ai.ttsModel : core.config.ai.defaultModel) ?? null
}

async function findModel(db: Db, id: number): Promise<ModelRow> {
  const [row] = await db.sql<ModelRow>`select ${COLUMNS} from quiz.ai_models where id = ${id}`
  if (!row) throw HttpError.notFound('model_not_found', 'AI model configuration not found')
  return row
}

/**
 * The model a request uses for a task: the configuration `modelId` (404 when missing, 400 when it is for another
 * task or inactive), else the task's active default, else the environment default (id null), else 503.
 */
export async function resolveModel(core: Core, task: AiTask, modelId?: number | null): Promise<ResolvedModel> {
  if (modelId != null) {
    const row = await findModel(core.db, modelId)
    if (row.task !== task) throw HttpError.badRequest('model_wrong_task', `Model ${row.name} is configured for ${row.task}, not ${task}`)
    if (!row.is_active) throw HttpError.badRequest('model_inactive', `Model ${row.name} is not active`)
    return checkedTarget(core, row)
  }
  const [row] = await core.db.sql<ModelRow>`
    select ${COLUMNS} from quiz.ai_models where task = ${task} and is_default and is_active`
  if (row) return checkedTarget(core, row)
  const model = environmentModel(core, task)
  if (model) return { id: null, name: model, model, baseUrl: core.config.ai.baseUrl, apiKey: core.config.ai.apiKey }
  throw aiNotConfigured(`No ${task} model is configured`)
}

/** Active models of a task, default first; the environment default (id null) when none is configured. */
export async function listAvailableModels(core: Core, task: AiTask): Promise<AvailableModel[]> {
  const rows = await core.db.sql<AvailableModel>`
    select id, name, model_id, is_default from quiz.ai_models
    where task = ${task} and is_active
    order by is_default desc, name, id`
  if (rows.length > 0) return rows
  const model = environmentModel(core, task)
  return model ? [{ id: null, name: SERVER_DEFAULT_NAME, model_id: model, is_default: true }] : []
}

export async function listModels(core: Core): Promise<AIModelConfigResponse[]> {
  const rows = await core.db.sql<ModelRow>`select ${COLUMNS} from quiz.ai_models order by task, name, id`
  return rows.map((row) => toResponse(core, row))
}

export async function getModel(core: Core, id: number): Promise<AIModelConfigResponse> {
  return toResponse(core, await findModel(core.db, id))
}

// Model writes are rare: one lock serialises them, so two first models of a task cannot both become default.
const lockModels = (tx: Db) => tx.sql`select pg_advisory_xact_lock(hashtext('quiz.ai_models'))`

/** Gives a task without a default its oldest active model (other than `except`), if it has one. */
async function promoteDefault(tx: Db, task: AiTask, except: number | null): Promise<void> {
  await tx.sql`
    update quiz.ai_models set is_default = true, updated_at = now()
    where id = (
      select id from quiz.ai_models
      where task = ${task} and is_active and id <> ${except ?? 0}
        and not exists (select 1 from quiz.ai_models d where d.task = ${task} and d.is_default)
      order by id limit 1
    )`
}

const duplicate = () => HttpError.conflict('model_exists', 'A model with this model_id is already configured for this task')

/** name and model_id are stored trimmed: a blank model_id would be stored empty, a model no gateway call can name. */
function assertNotBlank(input: { name?: string; model_id?: string }) {
  for (const field of ['name', 'model_id'] as const) {
    if (input[field] !== undefined && !input[field].trim()) throw HttpError.unprocessable('invalid_input', `${field} must not be blank`, { [field]: 'Required' })
  }
}

export async function createModel(core: Core, input: CreateModelBody): Promise<AIModelConfigResponse> {
  assertNotBlank(input)
  await assertApiBaseAllowed(core, input.api_base)
  const apiKey = input.api_key ? core.crypto.sealText(input.api_key) : null
  try {
    const row = await core.db.transaction(async (tx) => {
      await lockModels(tx)
      const [current] = await tx.sql<{ id: number }>`select id from quiz.ai_models where task = ${input.task} and is_default`
      const makeDefault = input.is_default === true || !current
      if (makeDefault) await tx.sql`update quiz.ai_models set is_default = false, updated_at = now() where task = ${input.task} and is_default`
      const [created] = await tx.sql<ModelRow>`
        insert into quiz.ai_models (name, model_id, task, is_active, is_default, api_key, api_base)
        values (${input.name.trim()}, ${input.model_id.trim()}, ${input.task}, ${input.is_active ?? true}, ${makeDefault},
          ${apiKey}, ${input.api_base ?? null})
        returning ${COLUMNS}`
      return created!
    })
    return toResponse(core, row)
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate()
    throw err
  }
}

export async function updateModel(core: Core, id: number, input: UpdateModelBody): Promise<AIModelConfigResponse> {
  // api_key: absent keeps, null clears, a string replaces.
  const keyChanged = input.api_key !== undefined
  const apiKey = input.api_key ? core.crypto.sealText(input.api_key) : null
  const baseChanged = input.api_base !== undefined
  assertNotBlank(input)
  await assertApiBaseAllowed(core, input.api_base)
  try {
    const row = await core.db.transaction(async (tx) => {
      await lockModels(tx)
      const before = await findModel(tx, id)
      const task = input.task ?? before.task
      const moved = task !== before.task
      let isDefault = before.is_default && !moved
      if (input.is_default === true) isDefault = true
      else if (input.is_default === false) isDefault = false
      else if (moved) {
        const [current] = await tx.sql<{ id: number }>`select id from quiz.ai_models where task = ${task} and is_default`
        isDefault = !current
      }
      if (isDefault) {
        await tx.sql`update quiz.ai_models set is_default = false, updated_at = now() where task = ${task} and is_default and id <> ${id}`
      }
      const [updated] = await tx.sql<ModelRow>`
        update quiz.ai_models set
          name = ${input.name?.trim() ?? before.name},
          model_id = ${input.model_id?.trim() ?? before.model_id},
          task = ${task},
          is_active = ${input.is_active ?? before.is_active},
          is_default = ${isDefault},
          api_key = case when ${keyChanged} then ${apiKey}::text else api_key end,
          api_base = case when ${baseChanged} then ${input.api_base ?? null}::text else api_base end,
          updated_at = now()
        where id = ${id}
        returning ${COLUMNS}`
      if (before.is_default && !isDefault) await promoteDefault(tx, before.task, id)
      return updated!
    })
    return toResponse(core, row)
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate()
    throw err
  }
}

export async function deleteModel(core: Core, id: number): Promise<void> {
  await core.db.transaction(async (tx) => {
    await lockModels(tx)
    const [row] = await tx.sql<{ task: AiTask; is_default: boolean }>`
      delete from quiz.ai_models where id = ${id} returning task, is_default`
    if (!row) throw HttpError.notFound('model_not_found', 'AI model configuration not found')
    if (row.is_default) await promoteDefault(tx, row.task, id)
  })
}

/** Sends one short chat request to a configured model; speech models cannot answer one (400). */
export async function testModel(core: Core, id: number): Promise<{ message: string }> {
  const row = await findModel(core.db, id)
  if (row.task === 'tts') {
    throw HttpError.badRequest('speech_model_not_testable', 'Speech models cannot be tested with a chat request')
  }
  const target = await checkedTarget(core, row)
  try {
    await core.ai.text(target, {
      messages: [{ role: 'user', content: 'Reply with the single word: OK' }],
      maxTokens: MODEL_TEST_MAX_TOKENS,
      timeoutMs: GATEWAY_PROBE_TIMEOUTS_MS.modelTest,
    })
  } catch (err) {
    throw asUnreachable(err)
  }
  return { message: `Model ${row.name} answered` }
}

/** Lists the models of a gateway: api_base (an OpenAI-compatible API), or the server's own (AI_BASE_URL). */
export async function listGatewayModels(core: Core, input: GatewayModelsBody): Promise<{ models: string[]; source: 'openai-compatible' | 'environment' }> {
  const source = input.api_base ? 'openai-compatible' : 'environment'
  if (!input.api_base && !core.config.ai.baseUrl) throw aiNotConfigured('No api_base given and no AI gateway configured (AI_BASE_URL)')
  await assertGatewayReachable(core, input.api_base)
  let models: string[]
  try {
    models = await core.ai.listModels({ baseUrl: input.api_base ?? null, apiKey: input.api_key ?? null, timeoutMs: GATEWAY_PROBE_TIMEOUTS_MS.listModels })
  } catch (err) {
    throw asUnreachable(err)
  }
  return { models: [...new Set(models)].sort(), source }
}

// Spec 1, POST /api/admin/tts/voices. The provider URLs are settable so tests can point them at local fakes;
// `{region}` is replaced by the (validated) Azure region.
export const VOICE_PROVIDER_URLS = {
  elevenlabs: 'https://api.elevenlabs.io',
  azure: 'https://{region}.tts.speech.microsoft.com',
}
export const VOICE_LIST_TIMEOUT_MS = 15_000
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'] as const
const AZURE_REGION = /^[a-z0-9-]{2,40}$/

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
/** Keeps the string-valued attributes of a provider's voice, under lower-case names. */
function stringLabels(source: Record<string, unknown> | null | undefined, provider: VoiceProvider): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const [k, v] of Object.entries(source ?? {})) if (typeof v === 'string' && v) labels[k.toLowerCase()] = v
  return { ...labels, provider }
}

async function fetchVoiceList(provider: VoiceProvider, url: string, headers: Record<string, string>): Promise<unknown> {
  let res: Response
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(VOICE_LIST_TIMEOUT_MS) })
  } catch (err) {
    throw HttpError.upstream('voice_provider_unreachable', err, `The ${provider} voice service could not be reached`)
  }
  // A rejected key is the caller's input, not an outage.
  if (res.status === 401 || res.status === 403) throw HttpError.badRequest('voice_provider_rejected_key', `The ${provider} voice service rejected the API key`)
  if (!res.ok) {
    throw HttpError.upstream('voice_provider_failed', new Error(`${provider} answered ${res.status}`), `The ${provider} voice service answered ${res.status}`)
  }
  try {
    return await res.json()
  } catch (err) {
    throw HttpError.upstream('voice_provider_invalid', err, `The ${provider} voice service gave an answer that could not be read`)
  }
}

export async function listProviderVoices(input: VoicesBody): Promise<{ voices: Voice[] }> {
  const apiKey = input.api_key?.trim() || null
  switch (input.provider) {
    case 'openai':
      return { voices: OPENAI_VOICES.map((v) => ({ model_id: v, name: capitalise(v), labels: { provider: 'openai' } })) }
    case 'elevenlabs': {
      if (!apiKey) throw HttpError.badRequest('api_key_required', 'An API key is required for elevenlabs')
      const body = await fetchVoiceList('elevenlabs', `${VOICE_PROVIDER_URLS.elevenlabs.replace(/\/+$/, '')}/v1/voices`, { 'xi-api-key': apiKey })
      const list = (body as { voices?: unknown } | null)?.voices
      if (!Array.isArray(list)) throw HttpError.upstream('voice_provider_invalid', new Error('no voices list'), 'The elevenlabs voice service gave an answer that could not be read')
      return {
        voices: list
          .filter((v): v is { voice_id: string; name?: unknown; labels?: Record<string, unknown>; category?: unknown } => typeof v?.voice_id === 'string')
          .map((v) => ({
            model_id: v.voice_id,
            name: typeof v.name === 'string' ? v.name : v.voice_id,
            labels: stringLabels({ ...v.labels, ...(typeof v.category === 'string' ? { category: v.category } : {}) }, 'elevenlabs'),
          })),
      }
    }
    case 'azure': {
      if (!apiKey) throw HttpError.badRequest('api_key_required', 'An API key is required for azure')
      const region = input.region?.trim().toLowerCase() ?? ''
      if (!region) throw HttpError.badRequest('region_required', 'A region is required for azure')
      if (!AZURE_REGION.test(region)) throw HttpError.badRequest('invalid_region', 'The region may hold only letters, digits and hyphens')
      const base = VOICE_PROVIDER_URLS.azure.replace('{region}', region).replace(/\/+$/, '')
      const body = await fetchVoiceList('azure', `${base}/cognitiveservices/voices/list`, { 'Ocp-Apim-Subscription-Key': apiKey })
      if (!Array.isArray(body)) throw HttpError.upstream('voice_provider_invalid', new Error('no voice array'), 'The azure voice service gave an answer that could not be read')
      return {
        voices: body
          .filter((v): v is Record<string, unknown> & { ShortName: string } => typeof v?.ShortName === 'string')
          .map((v) => ({
            model_id: v.ShortName,
            name: typeof v.DisplayName === 'string' ? v.DisplayName : v.ShortName,
            labels: stringLabels({ gender: v.Gender, locale: v.Locale, locale_name: v.LocaleName, voice_type: v.VoiceType, local_name: v.LocalName }, 'azure'),
          })),
      }
    }
  }
}

/** Embeds a short text with the current embedder (the system setting's model, or the built-in one). */
export async function testEmbedding(core: Core): Promise<{ model: string; dimensions: number; status: 'ok' }> {
  const embedder = await quizEmbedder(core)
  const [vector] = await embedder.embed(['Which organ produces insulin?'])
  if (!vector?.length) throw HttpError.upstream('embedding_empty', new Error('no vector'), 'The embedding model returned no vector')
  return { model: embedder.model, dimensions: vector.length, status: 'ok' }
}

export async function startEmbeddingRegeneration(core: Core, adminId: number): Promise<{ job_id: string; message: string }> {
  const job = await core.jobs.enqueue(REGENERATE_JOB_KIND, {}, { service: 'quiz', ownerId: adminId, title: 'Regenerate question embeddings' })
  const message = job.status === 'completed' ? `Question embeddings regenerated: ${(job.steps.at(-1)?.message ?? 'done')}`
    : job.status === 'failed' ? `Regeneration failed: ${job.error ?? 'unknown error'}`
      : 'Regeneration of all question embeddings queued'
  return { job_id: job.id, message }
}

export const aiModelJobs = (core: Core): Record<string, JobHandler> => ({
  [REGENERATE_JOB_KIND]: defineJob((ctx: JobContext) => regenerateEmbeddings(core, ctx), {
    onGiveUp: async (_tx, job) => giveUpRegeneration(job),
  }),
})

const formatCount = (n: number) => n.toLocaleString('en-US')

/**
 * Rebuilds the question bank's vector index from the database, in batches, reporting each one. A run reclaimed
 * after a crash starts over: the drop and the upserts by question id give the end state of one run.
 */
async function regenerateEmbeddings(core: Core, ctx: JobContext): Promise<{ embedded: number }> {
  if (ctx.attempt > 1) {
    await ctx.step(`Restarted from the beginning (attempt ${ctx.attempt} of ${ctx.maxAttempts}): the server running it stopped`)
  }
  const embedder = await quizEmbedder(core)
  // Check the embedder answers before dropping the index: a dead gateway must not leave search with nothing.
  await embedder.embed(['embedding check'])
  const [{ total } = { total: 0 }] = await core.db.sql<{ total: number }>`select count(*) as total from quiz.questions`
  await ctx.step(`Re-embedding ${formatCount(total)} questions with ${embedder.model}`)
  await core.vectors.drop(QUESTIONS_COLLECTION)
  let embedded = 0
  let lastId = 0
  for (;;) {
    const batch = await core.db.sql<IndexableQuestion>`
      select id, question_text, options from quiz.questions
      where id > ${lastId} order by id limit ${REGENERATE_BATCH}`
    if (batch.length === 0) break
    await indexQuestions(core, batch.map((q) => ({ ...q, options: optionsOf(q.options) })), embedder)
    embedded += batch.length
    lastId = batch.at(-1)!.id
    await ctx.step(`Embedded ${formatCount(embedded)} of ${formatCount(Math.max(total, embedded))} questions`)
  }
  return { embedded }
}

/** The job gave up: the index may be partial (it was dropped first), which the admin should hear. */
function giveUpRegeneration(job: GiveUpContext): GiveUpOutcome | void {
  if (job.reason.kind !== 'abandoned') return // a handler that threw said why, before or after the drop
  return {
    message: `Regenerating embeddings stopped after ${job.reason.attempts} attempts: the server running it stopped each time. ` +
      'Search may miss questions until a regeneration runs to the end: start it again',
  }
}

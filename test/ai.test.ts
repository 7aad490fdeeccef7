// The AI gateway against a real OpenAI-compatible server (test/support/ai-server.ts): what reaches the gateway,
// what comes back, and the statuses every failure turns into (503 nothing configured, 502 unreachable or unusable).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { Type } from '@sinclair/typebox'
import type { Ai } from '../src/core/ai'
import { HttpError } from '../src/core/errors'
import { aiFailure, aiFor, startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'

const KEY = 'sk-test-gateway-key'

/** A port nothing listens on: bound, then released. */
async function closedPortUrl(): Promise<string> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const url = `http://127.0.0.1:${s.port}/v1`
  await s.stop(true)
  return url
}

const Question = Type.Object({
  question_text: Type.String({ minLength: 1 }),
  options: Type.Array(Type.String(), { minItems: 2 }),
  correct_answer: Type.String(),
  explanation: Type.Optional(Type.String()),
})
const Extraction = Type.Object({ questions: Type.Array(Question) })

let server: AiServer
let ai: Ai
const target = { model: TEST_MODEL }
const ask = (content: string) => ({ messages: [{ role: 'user' as const, content }] })

beforeAll(async () => {
  server = await startAiServer({ apiKey: KEY, dimensions: 48 })
  // The other gateways these tests start listen on 127.0.0.1 too: allowed as an operator would allow a local one.
  ai = aiFor({ ...server.env, AI_ALLOWED_HOSTS: '127.0.0.1' })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

describe('text', () => {
  it('round trip: the gateway answer comes back as the text', async () => {
    server.reply(() => 'The answer is 42.')
    expect(await ai.text(target, ask('What is the answer?'))).toBe('The answer is 42.')
  })

  it('the system prompt, the messages in order, the model and the settings reach the gateway', async () => {
    await ai.text(target, {
      system: 'You are a tutor.',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'second' },
        { role: 'user', content: 'third' },
      ],
      maxTokens: 100,
      temperature: 0.2,
    })
    const [req] = server.requests
    expect(req!.path).toBe('/v1/chat/completions')
    expect(req!.body).toMatchObject({
      model: TEST_MODEL,
      max_tokens: 100,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'You are a tutor.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'second' },
        { role: 'user', content: 'third' },
      ],
    })
  })

  it('uses chat completions at the configured base URL, not the Responses API', async () => {
    await ai.text(target, ask('hello'))
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/chat/completions'])
  })

  it('sends the configured api key as a Bearer token', async () => {
    await ai.text(target, ask('hello'))
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  it('a target with its own key and base URL overrides AI_API_KEY and AI_BASE_URL', async () => {
    const other = await startAiServer({ apiKey: 'model-own-key' })
    try {
      const text = await ai.text({ model: 'm', baseUrl: other.url, apiKey: 'model-own-key' }, ask('hi'))
      expect(text).toBe('echo: hi')
      expect(other.requests[0]!.headers.authorization).toBe('Bearer model-own-key')
      expect(server.requests).toHaveLength(0)
    } finally {
      await other.close()
    }
  })

  it('the server key (AI_API_KEY) never goes to another address a model configuration names', async () => {
    const other = await startAiServer()
    try {
      await ai.text({ model: 'm', baseUrl: other.url }, ask('hi'))
      await ai.listModels({ baseUrl: other.url })
      expect(other.requests).toHaveLength(2)
      for (const r of other.requests) expect(r.headers.authorization ?? '').not.toContain(KEY)
    } finally {
      await other.close()
    }
  })

  it('a wrong api key (401 from the gateway) is 502 ai_unreachable', async () => {
    const err = await aiFailure(ai.text({ ...target, apiKey: 'wrong' }, ask('hi')))
    expect(err.status).toBe(502)
    expect(err.code).toBe('ai_unreachable')
  })
})

describe('object', () => {
  it('returns the object the gateway answers, checked against the schema', async () => {
    const answer = { questions: [{ question_text: 'Capital of France?', options: ['Paris', 'Rome'], correct_answer: 'Paris' }] }
    server.reply(() => answer)
    expect(await ai.object(target, Extraction, ask('extract'))).toEqual(answer)
  })

  it('asks for structured output as response_format json_schema carrying the schema', async () => {
    await ai.object(target, Extraction, ask('extract'))
    const format = server.requests[0]!.body.response_format
    expect(format.type).toBe('json_schema')
    expect(format.json_schema.schema.properties.questions.items.required).toEqual(['question_text', 'options', 'correct_answer'])
  })

  it('an answer that does not match the schema is 502 ai_invalid_output', async () => {
    server.reply(() => ({ questions: [{ question_text: 'Only one option?', options: ['A'], correct_answer: 'A' }] }))
    const err = await aiFailure(ai.object(target, Extraction, ask('extract')))
    expect(err.status).toBe(502)
    expect(err.code).toBe('ai_invalid_output')
    expect(err.message).not.toContain('options')
  })

  it('an answer that is not JSON is 502 ai_invalid_output', async () => {
    server.reply(() => 'Sorry, I cannot help with that.')
    const err = await aiFailure(ai.object(target, Extraction, ask('extract')))
    expect(err.status).toBe(502)
    expect(err.code).toBe('ai_invalid_output')
  })

  it('JSON wrapped in a Markdown fence is still read', async () => {
    const answer = { questions: [{ question_text: 'Q?', options: ['a', 'b'], correct_answer: 'b' }] }
    server.reply(() => 'Here you go:\n```json\n' + JSON.stringify(answer) + '\n```')
    expect(await ai.object(target, Extraction, ask('extract'))).toEqual(answer)
  })
})

describe('embed', () => {
  it('returns one vector per text, of the gateway model dimension', async () => {
    const vectors = await ai.embed({ model: 'test-embedding' }, ['heart failure', 'kidney stones', 'asthma'])
    expect(vectors).toHaveLength(3)
    for (const v of vectors) expect(v).toHaveLength(48)
    expect(server.requests[0]!.body).toMatchObject({ model: 'test-embedding', input: ['heart failure', 'kidney stones', 'asthma'] })
  })

  it('no texts: no call', async () => {
    expect(await ai.embed({ model: 'test-embedding' }, [])).toEqual([])
    expect(server.requests).toHaveLength(0)
  })
})

describe('listModels', () => {
  it('lists the gateway model ids, with the key sent', async () => {
    expect(await ai.listModels()).toEqual([TEST_MODEL, 'test-embedding'])
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  it('an explicit base URL and key are used instead of the configured ones', async () => {
    const other = await startAiServer({ apiKey: 'litellm-key', models: ['gpt-x', 'claude-y'] })
    try {
      expect(await ai.listModels({ baseUrl: other.url, apiKey: 'litellm-key' })).toEqual(['gpt-x', 'claude-y'])
    } finally {
      await other.close()
    }
  })
})

describe('speech and transcription', () => {
  it('speech returns the audio bytes and their type', async () => {
    const { audio, contentType } = await ai.speech!({ model: 'tts-1' }, { text: 'Hello', voice: 'nova' })
    expect(contentType).toBe('audio/mpeg')
    expect(audio.length).toBeGreaterThan(0)
    expect(server.requests[0]!.body).toMatchObject({ model: 'tts-1', input: 'Hello', voice: 'nova' })
  })

  it('transcription sends the audio as a multipart file and returns the text', async () => {
    const text = await ai.transcribe!({ model: 'whisper-1' }, new Blob([new Uint8Array(32)], { type: 'audio/webm' }), { filename: 'note.webm' })
    expect(text).toBe('test transcript')
    expect(server.requests[0]!.body).toMatchObject({ model: 'whisper-1', file: { name: 'note.webm', size: 32 } })
  })
})

describe('failures', () => {
  it('no AI_BASE_URL and no target base URL: 503 ai_not_configured for every call, without a request', async () => {
    const none = aiFor({})
    expect(none.configured).toBe(false)
    for (const call of [
      () => none.text(target, ask('hi')),
      () => none.object(target, Extraction, ask('hi')),
      () => none.embed({ model: 'e' }, ['x']),
      () => none.listModels(),
      () => none.speech!({ model: 'tts' }, { text: 'hi' }),
    ]) {
      const err = await aiFailure(call())
      expect(err.status).toBe(503)
      expect(err.code).toBe('ai_not_configured')
    }
  })

  it('a target base URL works even without AI_BASE_URL (an admin-configured model)', async () => {
    const none = aiFor({ AI_ALLOWED_HOSTS: '127.0.0.1' })
    expect(await none.text({ model: 'm', baseUrl: server.url, apiKey: KEY }, ask('hi'))).toBe('echo: hi')
  })

  it('a target on a private address outside AI_ALLOWED_HOSTS is refused when it would connect: 502, nothing sent', async () => {
    // The routes check a model's api_base first (quiz-ai-models, ssrf-guards); the connection checks again.
    const other = await startAiServer({ apiKey: 'model-own-key' })
    try {
      for (const client of [aiFor({}), aiFor(server.env)]) {
        for (const call of [
          () => client.text({ model: 'm', baseUrl: other.url, apiKey: 'model-own-key' }, ask('hi')),
          () => client.embed({ model: 'e', baseUrl: other.url, apiKey: 'model-own-key' }, ['x']),
          () => client.listModels({ baseUrl: other.url, apiKey: 'model-own-key' }),
        ]) {
          const err = await aiFailure(call())
          expect(err.status).toBe(502)
          expect(err.code).toBe('ai_unreachable')
        }
      }
      expect(other.requests).toHaveLength(0)
    } finally {
      await other.close()
    }
  })

  it('a gateway that is down is 502 ai_unreachable, quickly', async () => {
    const down = aiFor({ AI_BASE_URL: await closedPortUrl() })
    const started = performance.now()
    for (const call of [() => down.text(target, ask('hi')), () => down.embed({ model: 'e' }, ['x']), () => down.listModels()]) {
      const err = await aiFailure(call())
      expect(err.status).toBe(502)
      expect(err.code).toBe('ai_unreachable')
      expect(err.message).toBe('The AI service could not be reached')
    }
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('a gateway slower than the timeout is 504 ai_timeout when the timeout passes, and says it did not answer', async () => {
    server.delayNext(3000)
    const started = performance.now()
    const err = await aiFailure(ai.text(target, { ...ask('hi'), timeoutMs: 1_000 }))
    expect(err.status).toBe(504)
    expect(err.code).toBe('ai_timeout')
    expect(err.message).toBe('The AI service did not answer within 1 second')
    expect(performance.now() - started).toBeLessThan(2500)
  })

  it('a gateway that redirects is not followed: 502 ai_unreachable, and the redirect target gets no request', async () => {
    const redirecting = Bun.serve({
      port: 0, hostname: '127.0.0.1',
      fetch: (req) => Response.redirect(`${server.url}${new URL(req.url).pathname.replace(/^\/v1/, '')}`, 307),
    })
    try {
      const via = aiFor({ AI_BASE_URL: `http://127.0.0.1:${redirecting.port}/v1`, AI_API_KEY: KEY })
      const before = server.requests.length
      for (const call of [() => via.text(target, ask('hi')), () => via.listModels()]) {
        const err = await aiFailure(call())
        expect(err.status).toBe(502)
        expect(err.code).toBe('ai_unreachable')
      }
      expect(server.requests.length).toBe(before)
    } finally {
      await redirecting.stop(true)
    }
  })

  it('a 500 from the gateway is 502 ai_unreachable that names the answer, not retried', async () => {
    server.failNext(500)
    const err = await aiFailure(ai.text(target, ask('hi')))
    expect(err.status).toBe(502)
    expect(err.code).toBe('ai_unreachable')
    expect(err.message).toBe('The AI service answered with an error')
    expect(server.requests).toHaveLength(1)
  })

  it('a 5xx on embeddings and on the model list is 502 too', async () => {
    server.failNext(503, 2)
    expect((await aiFailure(ai.embed({ model: 'e' }, ['x']))).status).toBe(502)
    expect((await aiFailure(ai.listModels())).status).toBe(502)
  })

  it('the cause stays out of the message but is kept for the log', async () => {
    server.failNext(500)
    const err = await aiFailure(ai.text(target, ask('hi')))
    expect(err.message).not.toContain('500')
    expect(JSON.stringify(err.cause)).toContain('500')
    expect(JSON.stringify(err.cause)).not.toContain(KEY)
  })

  it('a caller that aborts gets its own abort, not a gateway error', async () => {
    server.delayNext(3000)
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('job cancelled')), 100)
    const err = await ai.text(target, { ...ask('hi'), signal: controller.signal }).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect(err).not.toBeInstanceOf(HttpError)
    expect((err as Error).message).toBe('job cancelled')
  })
})

// The AI gateway's token usage and streaming (src/core/ai.ts generate and stream) against a real OpenAI-compatible
// server (test/support/ai-server.ts): the pieces arrive in order and add up to the text, the usage is the gateway's,
// and every failure keeps the statuses of the other calls (503 nothing configured, 502 failed or cut off, 504 slow),
// while a caller's abort stays the caller's.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import type { Ai } from '../src/core/ai'
import { HttpError } from '../src/core/errors'
import { aiFailure, aiFor, startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'

/** A gateway over a raw socket that sends one streamed piece, then closes the connection mid-stream. */
function startCutOffGateway() {
  const piece = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: TEST_MODEL, choices: [{ index: 0, delta: { content: 'Half ' }, finish_reason: null }] })}\n\n`
  const server = Bun.listen<{ received: string }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { received: '' }
      },
      data(socket, bytes) {
        socket.data.received += bytes.toString()
        const headEnd = socket.data.received.indexOf('\r\n\r\n')
        if (headEnd < 0) return
        const length = Number(/content-length:\s*(\d+)/i.exec(socket.data.received.slice(0, headEnd))?.[1] ?? 0)
        if (Buffer.byteLength(socket.data.received) - Buffer.byteLength(socket.data.received.slice(0, headEnd + 4)) < length) return
        socket.data.received = '\0answered'
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n')
        socket.write(`${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`)
        setTimeout(() => socket.end(), 30)
      },
    },
  })
  return { url: `http://127.0.0.1:${server.port}/v1`, close: () => server.stop(true) }
}

let server: AiServer
let ai: Ai
const target = { model: TEST_MODEL }
const ask = (content: string) => ({ system: 'Be brief.', messages: [{ role: 'user' as const, content }] })

beforeAll(async () => {
  server = await startAiServer()
  ai = aiFor(server.env)
})
afterAll(() => server.close())
beforeEach(() => server.reset())

describe('generate', () => {
  it('answers the text with the tokens the gateway counted', async () => {
    server.reply(() => 'A short answer of some length.')
    const result = await ai.generate(target, ask('hello there'))
    expect(result.text).toBe('A short answer of some length.')
    // the test gateway counts a token per 4 characters
    expect(result.usage).toEqual({ tokensIn: Math.ceil('Be brief.\nhello there'.length / 4), tokensOut: Math.ceil(result.text.length / 4) })
  })

  it('text() still answers the text alone', async () => {
    server.reply(() => 'plain')
    expect(await ai.text(target, ask('x'))).toBe('plain')
  })
})

describe('stream', () => {
  it('hands over the pieces in order as they come; they add up to the text; usage from the final chunk', async () => {
    const answer = 'The quick brown fox jumps over the lazy dog, twice over, to make several pieces.'
    server.reply(() => answer)
    const pieces: string[] = []
    const result = await ai.stream(target, ask('go'), (text) => void pieces.push(text))
    expect(pieces.length).toBeGreaterThan(3)
    expect(pieces.join('')).toBe(answer)
    expect(result.text).toBe(answer)
    expect(result.usage.tokensOut).toBe(Math.ceil(answer.length / 4))
    expect(result.usage.tokensIn).toBeGreaterThan(0)
    const sent = server.requests.at(-1)!.body
    expect(sent.stream).toBe(true)
    expect(sent.stream_options).toEqual({ include_usage: true })
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
  })

  it('waits for an async onDelta before the next piece', async () => {
    server.reply(() => 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop')
    const seen: string[] = []
    let busy = false
    await ai.stream(target, ask('go'), async (text) => {
      expect(busy).toBe(false)
      busy = true
      await Bun.sleep(5)
      seen.push(text)
      busy = false
    })
    expect(seen.join('')).toBe('abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop')
  })

  it('no gateway configured: 503 ai_not_configured before any request', async () => {
    const err = await aiFailure(aiFor({}).stream(target, ask('x'), () => {}))
    expect(err.status).toBe(503)
    expect(err.code).toBe('ai_not_configured')
  })

  it('a gateway error status before the stream: 502 ai_unreachable, no piece handed over', async () => {
    server.failNext(500)
    const pieces: string[] = []
    const err = await aiFailure(ai.stream(target, ask('x'), (t) => void pieces.push(t)))
    expect(err.status).toBe(502)
    expect(err.code).toBe('ai_unreachable')
    expect(err.message).toBe('The AI service answered with an error')
    expect(pieces).toEqual([])
  })

  it('an unreachable gateway: 502 ai_unreachable', async () => {
    const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    const url = `http://127.0.0.1:${s.port}/v1`
    await s.stop(true)
    const err = await aiFailure(aiFor({ AI_BASE_URL: url }).stream(target, ask('x'), () => {}))
    expect(err.status).toBe(502)
    expect(err.message).toBe('The AI service could not be reached')
  })

  it('a stream cut off mid-way: the pieces so far, then 502 ai_unreachable (not an unusable answer)', async () => {
    const gateway = startCutOffGateway()
    try {
      const pieces: string[] = []
      const err = await aiFailure(aiFor({ AI_BASE_URL: gateway.url }).stream(target, ask('x'), (t) => void pieces.push(t)))
      expect(pieces).toEqual(['Half '])
      expect(err.status).toBe(502)
      expect(err.code).toBe('ai_unreachable')
    } finally {
      gateway.close()
    }
  })

  it('a gateway slower than the timeout: 504 ai_timeout when it passes', async () => {
    server.delayNext(3000)
    const started = performance.now()
    const err = await aiFailure(ai.stream(target, { ...ask('x'), timeoutMs: 1_000 }, () => {}))
    expect(err.status).toBe(504)
    expect(err.code).toBe('ai_timeout')
    expect(performance.now() - started).toBeLessThan(2500)
  })

  it('a caller that aborts mid-stream gets its own reason, not a gateway error, and no more pieces', async () => {
    server.reply(async () => 'x'.repeat(400))
    const controller = new AbortController()
    const pieces: string[] = []
    const err = await ai.stream(target, { ...ask('x'), signal: controller.signal }, (t) => {
      pieces.push(t)
      if (pieces.length === 2) controller.abort(new Error('client left'))
    }).then(() => null, (e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect(err).not.toBeInstanceOf(HttpError)
    expect((err as Error).message).toBe('client left')
    expect(pieces.length).toBeLessThan(25)
  })
})

// The real process on real ports: start-up, the QUIZ_PORT mount, the client address rule, and graceful
// shutdown (SIGTERM finishes in-flight requests and exits 0).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import net from 'node:net'
import type { Subprocess } from 'bun'
import { freePort } from './support/server-process'

const ROOT = join(import.meta.dir, '..')

/** A raw HTTP/1.1 request (its Host header as given) from `localAddress`; the whole answer, status line first. */
function rawRequest(port: number, head: string, localAddress = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = ''
    const socket = net.connect({ host: '127.0.0.1', port, localAddress }, () => socket.write(`${head}\r\nConnection: close\r\n\r\n`))
    socket.on('data', (chunk) => (data += chunk))
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
}

async function waitHealthy(url: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    await Bun.sleep(100)
  }
  throw new Error(`not healthy: ${url}`)
}

describe('server process', () => {
  let proc: Subprocess<'ignore', 'pipe', 'pipe'>
  let port = 0
  let quizPort = 0
  let dataDir = ''
  let output = ''
  /** Settles once the process's stdout has been read to its end: its last lines are in `output` then. */
  let drained: Promise<void> = Promise.resolve()
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'server-test-'))
    port = await freePort()
    quizPort = await freePort()
    proc = Bun.spawn([process.execPath, 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), QUIZ_PORT: String(quizPort), HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: 'memory://', LOG_LEVEL: 'info', TRUST_PROXY: 'false' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    drained = (async () => {
      const reader = proc.stdout.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        output += new TextDecoder().decode(value)
      }
    })()
    await waitHealthy(`http://127.0.0.1:${port}/api/health`)
  })
  afterAll(() => {
    proc.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('serves the quiz app under /quiz and at the root of QUIZ_PORT', async () => {
    const mounted = await fetch(`http://127.0.0.1:${port}/quiz/api/auth/me`)
    expect(mounted.status).toBe(401)
    const ownPort = await fetch(`http://127.0.0.1:${quizPort}/api/auth/me`)
    expect(ownPort.status).toBe(401)
    expect(await ownPort.json()).toEqual({ detail: 'Not authenticated' })
    const page = await fetch(`http://127.0.0.1:${quizPort}/login`)
    expect(page.status).toBe(200)
  })

  it('without TRUST_PROXY the rate limit keys on the socket address: a forged X-Forwarded-For does not escape it', async () => {
    let last = 0
    for (let i = 0; i < 11; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/quiz/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${i}` },
        body: JSON.stringify({ email: 'nobody@example.test', password: 'whatever1' }),
      })
      last = res.status
    }
    expect(last).toBe(429)
  })

  it('a Host header that cannot be part of a URL gets a 400 with a message, on both ports, and never a 500', async () => {
    for (const [target, host, body] of [
      ['/api/auth/me', 'a/b', { success: false, code: 'bad_request', error: 'Bad Request: the Host header is not a valid host' }],
      ['/quiz/api/auth/me', 'x?y', { detail: 'Bad Request: the Host header is not a valid host' }],
      ['/api/health', '', { success: false, code: 'bad_request', error: 'Bad Request: the Host header is not a valid host' }],
    ] as const) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: ${host}`)
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual(body)
      // Answered outside Elysia, with the security headers all the same.
      expect(answer.toLowerCase()).toContain('\r\nx-content-type-options: nosniff\r\n')
      expect(answer.toLowerCase()).toContain("\r\ncontent-security-policy: default-src 'self'")
    }
    const quiz = await rawRequest(quizPort, 'GET /api/auth/me?token=secret-in-bad-host HTTP/1.1\r\nHost: user@h')
    expect(quiz.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
    expect(quiz).toContain('"detail":"Bad Request: the Host header is not a valid host"')
    // Logged like any request (its path without the query) and counted in the metrics, though Elysia never saw it.
    await Bun.sleep(200)
    const lines = output.split('\n').filter((l) => l.includes('"msg":"request"') && l.includes('"status":400') && l.includes('"route":null'))
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.path === '/api/auth/me' || l.path === '/quiz/api/auth/me' || l.path === '/api/health'))
      .toEqual(expect.arrayContaining([
        expect.objectContaining({ service: 'clinical', method: 'GET', path: '/api/auth/me', ip: '127.0.0.1' }),
        expect.objectContaining({ service: 'quiz', path: '/quiz/api/auth/me' }),
        expect.objectContaining({ service: 'quiz', path: '/api/auth/me' }),
      ]))
    expect(output).not.toContain('secret-in-bad-host')
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    expect(metrics).toMatch(/app_ai_http_requests_total\{service="quiz",method="GET",route="unmatched",status="400"\} [1-9]/)
  })

  it('a large JSON answer leaves whole as a chunked stream, a small one with its length, both with the security headers', async () => {
    // src/core/one-send.ts: a body from ONE_SEND_BYTES on goes to Bun as a one-chunk stream.
    const large = await fetch(`http://127.0.0.1:${port}/quiz/docs/json`)
    expect(large.status).toBe(200)
    expect(large.headers.get('transfer-encoding')).toBe('chunked')
    expect(large.headers.get('content-length')).toBeNull()
    expect(large.headers.get('content-security-policy')).toContain("default-src 'self'")
    expect((await large.json()).openapi).toStartWith('3.')
    const small = await fetch(`http://127.0.0.1:${port}/api/health`)
    expect(small.headers.get('content-length')).toBe(String(JSON.stringify({ ok: true }).length))
    expect(small.headers.get('content-security-policy')).toContain("default-src 'self'")
    expect(await small.json()).toEqual({ ok: true })
  })

  it('logs the socket address of each request (asked for before the response leaves)', async () => {
    // A quiz read no rule asks the address of: only the log line does, once the response is on its way.
    const answer = await rawRequest(port, 'GET /quiz/api/auth/me HTTP/1.1\r\nHost: 127.0.0.1', '127.0.0.2')
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized')
    await Bun.sleep(200)
    const line = output.split('\n').find((l) => l.includes('"path":"/quiz/api/auth/me"') && l.includes('127.0.0.2'))
    expect(line && JSON.parse(line)).toMatchObject({ msg: 'request', service: 'quiz', status: 401, ip: '127.0.0.2' })
  })

  it('writes one JSON line per request without query strings', async () => {
    await fetch(`http://127.0.0.1:${port}/quiz/api/auth/verify-email?token=secret-token-value`)
    await Bun.sleep(200)
    const line = output.split('\n').find((l) => l.includes('"path":"/quiz/api/auth/verify-email"'))
    expect(line).toBeDefined()
    expect(JSON.parse(line!)).toMatchObject({ msg: 'request', method: 'GET', status: 400, service: 'quiz' })
    expect(output).not.toContain('secret-token-value')
  })

  it('SIGTERM finishes an in-flight request, then exits 0', async () => {
    // A request whose body arrives slowly is in flight when the signal comes.
    let push!: (s: string) => void
    let end!: () => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (s) => controller.enqueue(new TextEncoder().encode(s))
        end = () => controller.close()
      },
    })
    const pending = fetch(`http://127.0.0.1:${port}/quiz/api/auth/resend-verification`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half',
    } as RequestInit)
    push('{"email":')
    await Bun.sleep(300)
    proc.kill('SIGTERM')
    await Bun.sleep(300)
    push('"late@example.test"}')
    end()
    const res = await pending
    expect(res.status).toBe(200)
    expect(await proc.exited).toBe(0)
    await drained
    // every line up to the last reaches the log: the finished request's, then the stop
    const resendLine = output.indexOf('"path":"/quiz/api/auth/resend-verification"')
    expect(resendLine).toBeGreaterThan(-1)
    expect(output.indexOf('"msg":"stopped"')).toBeGreaterThan(resendLine)
  })
})

describe('server process stopped during start-up', () => {
  it('a SIGTERM before the server listens lets start-up finish, then stops cleanly with exit 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'server-test-'))
    try {
      const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(await freePort()), HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: 'memory://', LOG_LEVEL: 'info' },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      // Start-up has begun (boot's first log line: the generated-secret warning) and is migrating the database.
      const reader = proc.stdout.getReader()
      let output = ''
      while (!output.includes('JWT_SECRET is not set')) {
        const { done, value } = await reader.read()
        if (done) break
        output += new TextDecoder().decode(value)
      }
      expect(output).not.toContain('"msg":"listening"')
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      for (let r = await reader.read(); !r.done; r = await reader.read()) output += new TextDecoder().decode(r.value)
      expect(output).toContain('"msg":"listening"')
      expect(output).toContain('"msg":"stopped"')
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

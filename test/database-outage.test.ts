// A PostgreSQL server that goes away under a running app (spec 1 and 2, Errors; RUNTIME.md readiness): every
// request that needs the database answers 503 with Retry-After in its service's error shape, the readiness probe
// answers 503 {ok: false}, the outage is logged once rather than once per request, and the app serves again
// once the server is back. The server is reached through a TCP relay of the test's own, which it closes.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createServer, connect, type Server, type Socket } from 'node:net'
import pino from 'pino'
import { DATABASE_RETRY_AFTER_S } from '../src/core/errors'
import { freshServerDatabase, startTestApp, type TestApp } from './support/app'
import type { ThrowawayDatabase } from './support/database'
import { uniqueEmail } from './support/quiz'

/** A relay to the PostgreSQL server that can be cut (connections refused) and restored on the same port. */
function relay(target: URL) {
  let server: Server | null = null
  const sockets = new Set<Socket>()
  let port = 0
  const up = () => new Promise<void>((resolve) => {
    if (server?.listening) return resolve()
    server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on('close', () => sockets.delete(s))
        s.on('error', () => s.destroy())
      }
      client.pipe(upstream).pipe(client)
    })
    server.listen(port, '127.0.0.1', () => {
      port = (server!.address() as { port: number }).port
      resolve()
    })
  })
  const down = () => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy()
    server!.close(() => resolve())
  })
  return { up, down, url: () => { const u = new URL(target); u.port = String(port); return u.toString() } }
}

const describeOnServer = process.env.TEST_DATABASE_URL ? describe : describe.skip

describeOnServer('the database goes away under a running app (postgres)', () => {
  let database: ThrowawayDatabase
  let link: ReturnType<typeof relay>
  let t: TestApp
  const lines: Array<{ msg: string }> = []

  beforeAll(async () => {
    database = await freshServerDatabase()
    link = relay(new URL(database.url))
    await link.up()
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    t = await startTestApp({ env: { DATABASE_URL: link.url(), DATABASE_POOL_SIZE: '2' }, boot: { log } })
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    await database?.drop()
  })

  it('answers 503 with Retry-After in each service\'s shape, logs the outage once, and serves again once it is back', async () => {
    expect((await t.get('/api/health')).status).toBe(200)
    await link.down()

    const health = await t.get('/api/health')
    expect(health.status).toBe(503)
    expect(health.headers.get('retry-after')).toBe(String(DATABASE_RETRY_AFTER_S))
    expect(await health.json()).toEqual({ ok: false })

    for (let i = 0; i < 3; i++) {
      const clinical = await t.post('/api/auth/login', { email: uniqueEmail('outage'), password: 'whatever-password' })
      expect(clinical.status).toBe(503)
      expect(clinical.headers.get('retry-after')).toBe(String(DATABASE_RETRY_AFTER_S))
      expect(await clinical.json()).toMatchObject({ success: false, code: 'database_unavailable' })
      const quiz = await t.post('/quiz/api/auth/login', { email: uniqueEmail('outage'), password: 'whatever-password' })
      expect(quiz.status).toBe(503)
      expect(quiz.headers.get('retry-after')).toBe(String(DATABASE_RETRY_AFTER_S))
      expect(await quiz.json()).toEqual({ detail: 'The service is temporarily unavailable, try again shortly' })
    }
    const outageLines = lines.filter((l) => l.msg.startsWith('database unavailable'))
    expect(outageLines).toHaveLength(1)
    expect(lines.filter((l) => l.msg === 'request failed')).toEqual([])

    await link.up()
    let back = 0
    for (let i = 0; i < 50 && back !== 200; i++) {
      back = (await t.get('/api/health')).status
      if (back !== 200) await Bun.sleep(100)
    }
    expect(back).toBe(200)
    const again = await t.post('/quiz/api/auth/login', { email: uniqueEmail('outage'), password: 'whatever-password' })
    expect(again.status).toBe(401)
  }, 60_000)
})

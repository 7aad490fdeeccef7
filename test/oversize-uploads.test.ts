// Oversized bodies on every upload route. The routes come from both OpenAPI documents (every operation whose body
// has a binary field), so a new upload route is tested as soon as it is documented, and one without a documented
// limit (`x-body-limit`) fails. Each gets, over a real socket to the app served as main.ts serves it: a body one
// byte over its limit with an honest Content-Length, the same chunked without a length, a Content-Length that lies
// low (HTTP framing ends the body there: the rest is never read as this body) and one that lies high with a short
// body (refused without waiting for the rest). The answer is 413 with the route's message (a 4xx for the low lie),
// nothing is stored, and the server keeps answering.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { freshIp, userWithSession } from './support/clinical'
import { API, registerAdmin } from './support/quiz'

setDefaultTimeout(180_000)

/** What main.ts gives Bun.serve: the largest route limit fits under it. */
const MAX_REQUEST_BODY = (maxUpload: number) => Math.max(maxUpload, 25 * 1024 * 1024) + 1024 * 1024
const MAX_UPLOAD_SIZE = 2 * 1024 * 1024
const CHUNK = 64 * 1024

interface Schema { type?: string; format?: string; items?: Schema; properties?: Record<string, Schema> }
interface DocOperation { requestBody?: { content?: Record<string, { schema?: Schema }> }; 'x-body-limit'?: number | { bytes: number; code: string; message: string } }
interface Upload { key: string; path: string; fields: string[]; limit: DocOperation['x-body-limit'] }

const isBinary = (s: Schema | undefined): boolean => s?.format === 'binary' || s?.items?.format === 'binary'

/** Every operation whose body has a binary field, with those fields and its documented limit. */
function uploadsOf(doc: { paths: Record<string, Record<string, DocOperation>> }): Upload[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).flatMap(([method, op]) => {
    const schemas = Object.values(op.requestBody?.content ?? {}).map((c) => c.schema?.properties ?? {})
    const fields = [...new Set(schemas.flatMap((p) => Object.entries(p).filter(([, s]) => isBinary(s)).map(([name]) => name)))]
    return fields.length > 0 ? [{ key: `${method.toUpperCase()} ${path}`, path, fields, limit: op['x-body-limit'] }] : []
  }))
}

interface Answer { status: number; body: string; ms: number }

/**
 * One request over a raw socket: `head` (request line and headers), then `body` written in pieces until the server
 * answers; the answer is read up to its Content-Length. Status 0 when the server closed without one. `waitMs`: wait
 * that long after the head for an early answer before sending the body, as a client sending `Expect: 100-continue`
 * does: the server closes after an early refusal, and a body still arriving then resets the connection, which can
 * throw away the answer before it is read.
 */
function rawRequest(port: number, head: string, body: Iterable<Uint8Array>, opts: { holdOpen?: boolean; waitMs?: number } = {}): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = Buffer.alloc(0)
    let answered = false
    const finish = (status: number, text: string) => {
      if (answered) return
      answered = true
      socket.destroy()
      resolve({ status, body: text, ms: performance.now() - started })
    }
    socket.on('data', (d) => {
      received = Buffer.concat([received, typeof d === 'string' ? Buffer.from(d) : d])
      const end = received.indexOf('\r\n\r\n')
      if (end < 0) return
      const headers = received.subarray(0, end).toString()
      const length = Number(/content-length:\s*(\d+)/i.exec(headers)?.[1] ?? 0)
      if (received.length - end - 4 >= length) finish(Number(headers.split(' ')[1]), received.subarray(end + 4, end + 4 + length).toString())
    })
    socket.on('error', () => {}) // a refused body makes the server close while we write: the answer was read first
    socket.on('close', () => finish(0, received.toString()))
    setTimeout(() => finish(-1, 'timed out'), 60_000).unref()
    socket.on('connect', async () => {
      socket.write(head)
      if (opts.waitMs) await new Promise((r) => setTimeout(r, opts.waitMs))
      for (const piece of body) {
        if (answered) return
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r))
      }
      if (!opts.holdOpen) socket.end()
    })
  })
}

/** `total` bytes of a multipart body with the file field, padded to exactly that size. */
function* multipartBody(boundary: string, field: string, total: number): Iterable<Uint8Array> {
  const open = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const close = Buffer.from(`\r\n--${boundary}--\r\n`)
  yield open
  for (let left = total - open.length - close.length; left > 0; left -= CHUNK) yield Buffer.alloc(Math.min(CHUNK, left), 0x41)
  yield close
}
function* chunked(pieces: Iterable<Uint8Array>): Iterable<Uint8Array> {
  for (const p of pieces) yield Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')])
  yield Buffer.from('0\r\n\r\n')
}

const messageOf = (body: string) => {
  const json = JSON.parse(body) as { detail?: string; error?: string }
  return json.detail ?? json.error
}

for (const target of databaseTargets()) {
  describe(`oversized uploads [${target}]`, () => {
    let t: TestApp
    let server: ReturnType<typeof Bun.serve>
    let uploads: Upload[]
    const tokens: Record<string, string> = {}

    beforeAll(async () => {
      t = await startTestApp({ target, env: { MAX_UPLOAD_SIZE: String(MAX_UPLOAD_SIZE) } })
      server = Bun.serve({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: MAX_REQUEST_BODY(MAX_UPLOAD_SIZE), fetch: t.booted.fetch })
      tokens.quiz = (await registerAdmin(t)).token
      tokens.clinical = (await userWithSession(t, 'admin')).token
      uploads = [
        ...uploadsOf((await (await t.get('/docs/json')).json()) as never),
        ...uploadsOf((await (await t.get(`${API.replace(/\/api$/, '')}/docs/json`)).json()) as never),
      ]
    })
    afterAll(async () => {
      server?.stop(true)
      await t?.close()
    })

    /** Rows and files every upload route writes: none may appear. */
    const stored = async () => {
      const [row] = await t.db.sql<Record<string, number>>`select
        (select count(*)::int from quiz.documents) as quiz_documents, (select count(*)::int from clinical.documents) as documents,
        (select count(*)::int from clinical.audio_backups) as audio_backups, (select count(*)::int from clinical.phone_directory) as directory,
        (select count(*)::int from clinical.learning_content) as learning`
      const dir = join(t.dataDir, 'files')
      const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).length : 0
      return { ...row, files }
    }
    const headOf = (u: Upload, extra: string) =>
      `POST ${u.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tokens[u.path.startsWith(API) ? 'quiz' : 'clinical']}\r\n`
      + `X-Forwarded-For: ${freshIp()}\r\nContent-Type: multipart/form-data; boundary=BOUNDARY\r\n${extra}\r\n`
    const stillAnswers = async () => expect((await fetch(`http://127.0.0.1:${server.port}/api/health`)).status).toBe(200)

    it('both documents list the upload routes, and every one documents its limit', () => {
      const keys = uploads.map((u) => u.key)
      for (const known of ['POST /api/documents/upload', 'POST /api/transcribe', 'POST /api/audio-backups', `POST ${API}/documents/upload`, 'POST /api/extensions/import-file']) {
        expect(keys).toContain(known)
      }
      expect(uploads.filter((u) => u.limit === undefined).map((u) => u.key)).toEqual([])
      // the quiz limit follows MAX_UPLOAD_SIZE
      expect((uploads.find((u) => u.path === `${API}/documents/upload`)!.limit as { bytes: number }).bytes).toBeGreaterThan(MAX_UPLOAD_SIZE)
    })

    it('one byte over the limit, with an honest Content-Length or chunked: 413 with the route\'s message; nothing stored', async () => {
      const before = await stored()
      const wrong: string[] = []
      for (const u of uploads) {
        const bytes = typeof u.limit === 'number' ? u.limit : u.limit!.bytes
        const message = typeof u.limit === 'number' ? `at most ${bytes} bytes` : u.limit!.message
        const answers = {
          honest: await rawRequest(server.port!, headOf(u, `Content-Length: ${bytes + 1}\r\n`), multipartBody('BOUNDARY', u.fields[0]!, bytes + 1), { waitMs: 1_000 }),
          chunked: await rawRequest(server.port!, headOf(u, 'Transfer-Encoding: chunked\r\n'), chunked(multipartBody('BOUNDARY', u.fields[0]!, bytes + 1))),
        }
        for (const [how, a] of Object.entries(answers)) {
          if (a.status !== 413 || !messageOf(a.body)?.includes(message)) wrong.push(`${u.key} ${how}: ${a.status} ${a.body.slice(0, 160)}`)
        }
        await stillAnswers()
      }
      expect(wrong).toEqual([])
      expect(await stored()).toEqual(before)
    })

    it('a Content-Length that lies: high with a short body is refused at once; low ends the body where it says (a 4xx)', async () => {
      const before = await stored()
      const wrong: string[] = []
      for (const u of uploads) {
        const bytes = typeof u.limit === 'number' ? u.limit : u.limit!.bytes
        // says more than the limit, sends 1 KB and waits: answered without the rest
        const high = await rawRequest(server.port!, headOf(u, `Content-Length: ${bytes + 1}\r\n`), [Buffer.alloc(1024, 0x41)], { holdOpen: true })
        if (high.status !== 413 || high.ms > 10_000) wrong.push(`${u.key} high: ${high.status} after ${high.ms.toFixed(0)} ms`)
        // says 200 bytes, sends twice the limit: the 200 bytes are a broken form, the rest is never this body
        const low = await rawRequest(server.port!, headOf(u, 'Content-Length: 200\r\n'), multipartBody('BOUNDARY', u.fields[0]!, 2 * bytes))
        // (0: the server closed on the bytes after the declared length, which are no request: no answer is fine, a 2xx or 5xx is not)
        if (low.status !== 0 && (low.status < 400 || low.status >= 500)) wrong.push(`${u.key} low: ${low.status} ${low.body.slice(0, 160)}`)
        // both framings at once (request smuggling): refused, never read as a body of either length
        const both = await rawRequest(server.port!, headOf(u, 'Content-Length: 10\r\nTransfer-Encoding: chunked\r\n'), chunked(multipartBody('BOUNDARY', u.fields[0]!, bytes + 1)))
        if (both.status !== 0 && (both.status < 400 || both.status >= 500)) wrong.push(`${u.key} both: ${both.status} ${both.body.slice(0, 160)}`)
        await stillAnswers()
      }
      expect(wrong).toEqual([])
      expect(await stored()).toEqual(before)
    })
  })
}

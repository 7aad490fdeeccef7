// Every operation both services document, driven from their own OpenAPI documents: each path parameter, query
// parameter and body field replaced in turn by values a client should never send, plus broken bodies. The rule
// (spec 1 and 2, Errors): bad input is answered with a 4xx in the service's error shape, never a 5xx, and what
// was already stored stays as it was. A route added later is swept without touching this file.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { MOBILE, freshIp, userWithSession } from './support/clinical'
import { API, registerAdmin, uniqueEmail } from './support/quiz'

interface Schema {
  type?: string | string[]; format?: string; enum?: unknown[]; minimum?: number; minLength?: number
  properties?: Record<string, Schema>; required?: string[]; items?: Schema; anyOf?: Schema[]
}
interface Operation {
  method: string; path: string
  params: Array<{ name: string; in: string; schema?: Schema }>
  body: Schema | null; bodyTypes: string[]
}

/** Values no field of either service accepts as they are, or accepts only as plain text. */
const HOSTILE: unknown[] = [
  null, 99_999_999_999, 2_147_483_648, -1, 0, 1.5, true, '', ' ', 'x'.repeat(10_000), "1' or '1'='1",
  '\u0000', '../../etc/passwd', 'a@b.test\r\nBcc: victim@example.test', '🙂ß', {}, [],
]
/** Path parameters that name no row: wrong type, out of the integer column's range, injection, traversal. */
const BAD_IDS = ['0', '-1', 'abc', '1.5', '2147483647', '2147483648', '999999999999999999999', "1' or '1'='1", '%00', '..%2F..', 'x'.repeat(300)]
const UPSTREAM = [502, 503]
/** Operations the sweep leaves out because a success would end the caller's own session. */
const SKIP = new Set(['POST /api/auth/logout'])

/** A value the schema accepts, so a sweep of one field reaches past validation of the others. */
function sample(schema: Schema | undefined): unknown {
  if (!schema) return 'x'
  if (schema.anyOf) return sample(schema.anyOf.find((s) => s.type !== 'null') ?? schema.anyOf[0])
  if (schema.enum) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, sample(s)]))
    case 'array': return [sample(schema.items)]
    case 'integer': case 'number': return schema.minimum ?? 1
    case 'boolean': return true
    default:
      if (schema.format === 'email') return uniqueEmail('sweep')
      if (schema.format === 'uuid') return crypto.randomUUID()
      if (schema.format === 'uri') return 'https://example.test/'
      return 'Sweep-value-1'.padEnd(schema.minLength ?? 0, 'x')
  }
}

async function operations(app: TestApp, docs: string): Promise<Operation[]> {
  const spec = (await (await app.get(docs)).json()) as {
    paths: Record<string, Record<string, { parameters?: Operation['params']; requestBody?: { content: Record<string, { schema: Schema }> } }>>
  }
  return Object.entries(spec.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => {
    const content = op.requestBody?.content ?? {}
    return {
      method: method.toUpperCase(), path, params: op.parameters ?? [],
      body: content['application/json']?.schema ?? null, bodyTypes: Object.keys(content),
    }
  }))
}

describe.each(databaseTargets())('API sweep of bad input (%s)', (target) => {
  let app: TestApp
  let quizToken: string
  let clinicalToken: string
  let ops: Operation[]

  beforeAll(async () => {
    app = await startTestApp({ target })
    quizToken = (await registerAdmin(app)).token
    clinicalToken = (await userWithSession(app, 'admin')).token
    ops = [...await operations(app, '/quiz/docs/json'), ...await operations(app, '/docs/json')]
      .filter((op) => !SKIP.has(`${op.method} ${op.path}`))
  })
  afterAll(() => app.close())

  /** What the sweep must leave as it was: the admin accounts it signs in with and their data. */
  const snapshot = async () => ({
    quiz: await app.db.sql`select id, email, password_hash, role from quiz.users order by id`,
    clinical: await app.db.sql`select id, email, password_hash, role, disabled from clinical.users order by id`,
  })

  const failures: string[] = []
  async function send(op: Operation, path: string, init: { query?: string; body?: string; type?: string }) {
    const quiz = op.path.startsWith('/quiz/')
    const headers: Record<string, string> = { ...MOBILE, accept: 'application/json' }
    if (init.type) headers['content-type'] = init.type
    const url = `${path}${init.query ? `?${init.query}` : ''}`
    const res = await app.request(url, { method: op.method, body: init.body, headers, ip: freshIp(), token: quiz ? quizToken : clinicalToken })
    const label = `${op.method} ${url.slice(0, 120)} ${(init.body ?? '').slice(0, 120)}`
    // 502 and 503 are the documented answers of the AI routes while no gateway is configured or reachable.
    if (res.status >= 500 && !UPSTREAM.includes(res.status)) failures.push(`${res.status} ${label}: ${(await res.text()).slice(0, 200)}`)
    else if (res.status >= 400 && res.headers.get('content-type')?.includes('application/json')) {
      // The error shape of the service: {detail} for the quiz service, {success: false, error} for the clinical one.
      const body = (await res.json()) as { detail?: unknown; success?: unknown; error?: unknown }
      const shaped = quiz ? body.detail !== undefined : body.success === false && typeof body.error === 'string'
      if (!shaped) failures.push(`${res.status} without the error shape: ${label}: ${JSON.stringify(body).slice(0, 200)}`)
    }
  }
  const fillPath = (op: Operation, override?: [string, string]) =>
    op.path.replace(/\{([^}]+)\}/g, (_, name: string) => (override?.[0] === name ? override[1] : BAD_IDS[0]!))
  const json = (value: unknown) => ({ body: JSON.stringify(value), type: 'application/json' })

  it('answers every hostile path parameter, query parameter and body field with a 4xx or a success, never a 500', async () => {
    const before = await snapshot()
    let requests = 0
    for (const op of ops) {
      const body = op.body ? (sample(op.body) as Record<string, unknown>) : undefined
      const base = body ? json(body) : {}
      for (const name of op.path.match(/\{([^}]+)\}/g)?.map((p) => p.slice(1, -1)) ?? []) {
        for (const id of BAD_IDS) { await send(op, fillPath(op, [name, id]), base); requests++ }
      }
      for (const param of op.params.filter((p) => p.in === 'query')) {
        for (const value of HOSTILE) {
          if (typeof value === 'object' && value !== null) continue
          await send(op, fillPath(op), { ...base, query: new URLSearchParams({ [param.name]: String(value) }).toString() })
          requests++
        }
      }
      if (!body) continue
      for (const field of Object.keys(body)) {
        for (const value of HOSTILE) {
          await send(op, fillPath(op), json({ ...body, [field]: value }))
          // The same through an HTML form, where every value arrives as text and numbers are coerced.
          if (op.bodyTypes.includes('application/x-www-form-urlencoded') && (typeof value !== 'object' || value === null)) {
            const form = Object.fromEntries(Object.entries({ ...body, [field]: value })
              .filter(([, v]) => typeof v !== 'object' || v === null).map(([k, v]) => [k, String(v)]))
            await send(op, fillPath(op), { body: new URLSearchParams(form).toString(), type: 'application/x-www-form-urlencoded' })
            requests++
          }
          requests++
        }
      }
      for (const broken of [undefined, '{', '[]', 'null', '"text"', '{"__proto__": {"admin": true}}']) {
        await send(op, fillPath(op), { body: broken, type: broken === undefined ? undefined : 'application/json' })
        requests++
      }
      await send(op, fillPath(op), { body: 'a=1', type: 'text/plain' })
      requests++
    }
    expect(failures).toEqual([])
    // The sweep reached every documented operation: both services document well over fifty.
    expect(ops.length).toBeGreaterThan(50)
    expect(requests).toBeGreaterThan(1000)
    const after = await snapshot()
    expect(after.quiz.slice(0, before.quiz.length)).toEqual(before.quiz)
    expect(after.clinical.slice(0, before.clinical.length)).toEqual(before.clinical)
    // The callers are still signed in: nothing in the sweep ended their sessions or changed their roles.
    expect((await app.get(`${API}/auth/me`, { token: quizToken })).status).toBe(200)
    expect((await app.get('/api/auth/me', { token: clinicalToken, headers: MOBILE })).status).toBe(200)
  }, 600_000)
})

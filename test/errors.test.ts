// The one place that maps errors to responses (src/core/errors.ts), per service style.
import { describe, expect, it } from 'bun:test'
import { Elysia, t } from 'elysia'
import { errorMapper, HttpError } from '../src/core/errors'
import { createLogger } from '../src/core/log'

const log = createLogger('silent')
const build = (style: 'quiz' | 'clinical') =>
  new Elysia()
    .use(errorMapper(style, log))
    .get('/boom', () => {
      throw new Error('connection string postgres://secret@db leaked')
    })
    .get('/gone', () => {
      throw HttpError.notFound('thing_not_found', 'Thing not found')
    })
    .get('/slow-down', () => {
      throw HttpError.tooManyRequests('rate_limited', 'Too many requests', 42.2)
    })
    .get('/upstream', () => {
      throw HttpError.upstream('ai_unreachable', new Error('ECONNREFUSED 10.0.0.5'), 'The AI service is unreachable')
    })
    .post('/things', ({ body }) => body, { body: t.Object({ email: t.String({ format: 'email' }), count: t.Integer() }) })
    .group('/api/shelves', (g) => g.get('/:shelf_id/items/:item_id', ({ params }) => params, {
      params: t.Object({ shelf_id: t.Integer({ minimum: 1, maximum: 99 }), item_id: t.Integer({ minimum: 1, maximum: 99 }) }),
      query: t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: 200 })), offset: t.Optional(t.Integer({ minimum: 0 })) }),
    }))

const call = (app: ReturnType<typeof build>, path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init))
const postJson = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })

describe('clinical error bodies: {success: false, error}; 5xx says only Request failed', () => {
  const app = build('clinical')
  it('an unexpected error is a 500 with the generic text and no detail', async () => {
    const res = await call(app, '/boom')
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ success: false, error: 'Request failed', code: 'internal' })
    expect(text).not.toContain('secret')
  })
  it('a 502 from an upstream failure also says only Request failed', async () => {
    const res = await call(app, '/upstream')
    expect(res.status).toBe(502)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ success: false, error: 'Request failed' })
    expect(text).not.toContain('ECONNREFUSED')
  })
  it('a 4xx keeps its message and stable code', async () => {
    const res = await call(app, '/gone')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ success: false, error: 'Thing not found', code: 'thing_not_found' })
  })
  it('validation failures are 400 with the field', async () => {
    const res = await call(app, '/things', postJson('{"email":"nope","count":1}'))
    expect(res.status).toBe(400)
    const body = (await res.json()) as { success: boolean; fields: Record<string, string> }
    expect(body.success).toBe(false)
    expect(Object.keys(body.fields)).toContain('email')
  })
})

describe('quiz error bodies: FastAPI-style {detail}', () => {
  const app = build('quiz')
  it('validation failures are 422 with the field location', async () => {
    const res = await call(app, '/things', postJson('{"email":"a@b.test","count":"x"}'))
    expect(res.status).toBe(422)
    const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string }> }
    expect(body.detail[0]!.loc).toEqual(['body', 'count'])
    expect(typeof body.detail[0]!.msg).toBe('string')
  })
  it('a query or path number out of range names its parameter (the framework checks those one by one, unnamed)', async () => {
    const problem = async (path: string) => {
      const res = await call(app, path)
      expect(res.status).toBe(422)
      return ((await res.json()) as { detail: Array<{ loc: string[]; msg: string }> }).detail[0]!
    }
    expect((await problem('/api/shelves/1/items/2?limit=201')).loc).toEqual(['query', 'limit'])
    expect((await problem('/api/shelves/1/items/2?limit=5&offset=-1')).loc).toEqual(['query', 'offset'])
    expect((await problem('/api/shelves/0/items/2')).loc).toEqual(['path', 'shelf_id'])
    const last = await problem('/api/shelves/3/items/100')
    expect(last.loc).toEqual(['path', 'item_id'])
    expect(last.msg).toContain('99')
    // the same refused text in two places: the location is said, the name is not guessed
    expect((await problem('/api/shelves/1/items/2?limit=0&offset=0')).loc).toEqual(['query'])
  })
  it('a malformed JSON body is a 422, not a 500', async () => {
    const res = await call(app, '/things', postJson('{"email":'))
    expect(res.status).toBe(422)
  })
  it('rate limits answer 429 with Retry-After in whole seconds', async () => {
    const res = await call(app, '/slow-down')
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('43')
    expect(await res.json()).toEqual({ detail: 'Too many requests' })
  })
  it('an unexpected error is a 500 without the detail', async () => {
    const res = await call(app, '/boom')
    expect(res.status).toBe(500)
    expect(await res.text()).not.toContain('secret')
  })
  it('browsers asking for HTML outside /api get a small HTML error page', async () => {
    const res = await call(app, '/gone', { headers: { accept: 'text/html' } })
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(await res.text()).toContain('Thing not found')
  })
})

// Whole numbers in responses (src/core/schema.ts Int): checked as JSON Schema's integer, kept by Elysia's response
// mirror, refused when a handler answers another type, and documented as the integers the API sends, in every
// response of both services (request schemas keep Elysia's t.Integer, which also takes a string of digits).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Elysia, t } from 'elysia'
import { Int } from '../src/core/schema'
import { startTestApp, type TestApp } from './support/app'

const Row = t.Object({ id: Int(), parent_id: t.Nullable(Int()), note: t.String() })

describe('Int', () => {
  const check = TypeCompiler.Compile(Row)

  it('accepts whole numbers and, where nullable, null', () => {
    expect(check.Check({ id: 1, parent_id: null, note: '' })).toBe(true)
    expect(check.Check({ id: -3, parent_id: 7, note: 'x' })).toBe(true)
  })

  it('refuses a string of digits, a fraction and a missing field', () => {
    expect(check.Check({ id: '1', parent_id: null, note: '' })).toBe(false)
    expect(check.Check({ id: 1.5, parent_id: null, note: '' })).toBe(false)
    expect(check.Check({ id: 1, parent_id: '2', note: '' })).toBe(false)
    expect(check.Check({ id: 1, note: '' })).toBe(false)
  })

  it('a route answers its fields without others, and refuses to answer a wrong type', async () => {
    const app = new Elysia()
      .get('/ok', () => ({ id: 1, parent_id: 2, note: 'n', secret: 'dropped' }), { response: { 200: Row } })
      // @ts-expect-error a string id, on purpose
      .get('/wrong', () => ({ id: '1', parent_id: null, note: '' }), { response: { 200: Row } })
    const ok = await app.handle(new Request('http://localhost/ok'))
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ id: 1, parent_id: 2, note: 'n' })
    const wrong = await app.handle(new Request('http://localhost/wrong'))
    expect(wrong.status).toBeGreaterThanOrEqual(400)
  })
})

type Schema = Record<string, unknown>
type Operation = { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }
type Document = { paths: Record<string, Record<string, Operation>> }

/** Where in a schema an integer is documented as possibly a string (Elysia's t.Integer). */
function stringIntegers(schema: unknown, at: string, found: string[]) {
  if (Array.isArray(schema)) schema.forEach((s, i) => stringIntegers(s, `${at}/${i}`, found))
  else if (typeof schema === 'object' && schema !== null) {
    const s = schema as Schema
    if (s.type === 'string' && s.format === 'integer') found.push(at)
    for (const [key, value] of Object.entries(s)) stringIntegers(value, `${at}/${key}`, found)
  }
}

describe('documented as the API sends them', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp()
  })
  afterAll(() => app.close())

  const documentOf = async (path: string) => (await (await app.get(path)).json()) as Document
  const okSchema = (doc: Document, path: string) => doc.paths[path]!.get!.responses!['200']!.content!['application/json']!.schema as any

  it('the bank page and the signed-in user: integers, nullable where they may be null', async () => {
    const quiz = await documentOf('/quiz/docs/json')
    const page = okSchema(quiz, '/quiz/api/questions/bank')
    expect(page.properties.total).toMatchObject({ type: 'integer' })
    const question = page.properties.questions.items.properties
    expect(question.id).toEqual({ type: 'integer' })
    expect(question.question_category_id).toEqual({ type: ['integer', 'null'] })
    expect(question.tags.items.properties.id).toEqual({ type: 'integer' })
    expect(okSchema(quiz, '/quiz/api/auth/me').properties.id).toEqual({ type: 'integer' })
    const clinical = await documentOf('/docs/json')
    expect(okSchema(clinical, '/api/auth/me').properties.user.properties.id).toEqual({ type: 'integer' })
  })

  for (const path of ['/docs/json', '/quiz/docs/json']) {
    it(`${path}: no response documents an integer as a string`, async () => {
      const doc = await documentOf(path)
      const found: string[] = []
      let responses = 0
      for (const [route, operations] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const [status, response] of Object.entries(operation.responses ?? {})) {
            responses++
            stringIntegers(response, `${method} ${route} ${status}`, found)
          }
        }
      }
      expect(responses).toBeGreaterThan(50)
      expect(found).toEqual([])
    })
  }
})

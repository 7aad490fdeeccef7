// Both OpenAPI documents as the app serves them pass Redocly's recommended rules with no error: valid OpenAPI 3.1
// (no `nullable`), a server, every operation's security stated (public ones `security: []`), no trailing slashes.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core'
import { startTestApp, type TestApp } from './support/app'

const describeProblem = (p: NormalizedProblem) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`

describe('OpenAPI documents (Redocly recommended rules)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(() => t.close())

  for (const path of ['/docs/json', '/quiz/docs/json']) {
    it(`${path} has no lint error`, async () => {
      const res = await t.get(path)
      expect(res.status).toBe(200)
      const source = await res.text()
      const problems = await lintFromString({ source, absoluteRef: `http://localhost${path}`, config: await createConfig({ extends: ['recommended'] }) })
      expect(problems.filter((p) => p.severity === 'error').map(describeProblem)).toEqual([])
      // The document is the service's, with its operations: an empty document would pass too.
      expect(Object.keys(JSON.parse(source).paths).length).toBeGreaterThan(10)
      // It is written for API users: no word of the documents the service was built from.
      expect(source.match(/.{0,60}\b(specs? \d|FastAPI).{0,20}/g)).toBeNull()
    })
  }
})

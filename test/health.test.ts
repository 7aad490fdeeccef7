import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'

for (const target of databaseTargets()) {
  describe(`core endpoints [${target}]`, () => {
    let t: TestApp
    beforeAll(async () => {
      t = await startTestApp({ target })
    })
    afterAll(() => t.close())

    it('GET /api/health answers {ok: true} once migrations ran', async () => {
      const res = await t.get('/api/health')
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ ok: true })
      const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from core.migrations where name = 'core/001_core.sql'`
      expect(row!.n).toBe(1)
    })

    it('GET /metrics exposes app_ai_ request metrics and labels unmatched routes "unmatched"', async () => {
      await t.get('/no/such/path/' + crypto.randomUUID())
      await t.get('/quiz/no/such/' + crypto.randomUUID())
      // A request is recorded once its response has gone out (Elysia's after-response hook), a tick later.
      await Bun.sleep(5)
      const text = await (await t.get('/metrics')).text()
      expect(text).toContain('app_ai_http_requests_total{service="clinical",method="GET",route="unmatched",status="404"}')
      expect(text).toContain('app_ai_http_requests_total{service="quiz",method="GET",route="unmatched",status="404"}')
      expect(text).toContain('app_ai_http_request_duration_seconds_bucket')
      expect(text).toContain('app_ai_http_requests_in_flight')
      expect(text).not.toContain('no/such')
    })

    it('a browser asking for a missing page gets the service\'s styled page with a real link home, allowed by its CSP', async () => {
      for (const [path, home, brand] of [['/no/such/page', '/', 'Clinical assistant'], ['/quiz/no/such/page', '/quiz/', 'Quiz']] as const) {
        const res = await t.get(path, { headers: { accept: 'text/html' } })
        expect(res.status).toBe(404)
        const page = await res.text()
        expect(page).toContain('<h1>Page not found</h1>')
        expect(page).toContain(`href="${home}"`)
        expect(page).toContain(`>${brand}</a>`)
        expect(page).toContain('/static/app.css')
        expect(page).not.toContain('javascript:')
      }
    })

    it('each service answers errors in its own shape', async () => {
      const clinical = await t.get('/api/nothing-here')
      expect(clinical.status).toBe(404)
      expect(await clinical.json()).toMatchObject({ success: false, error: 'Not Found' })
      const quiz = await t.get('/quiz/api/nothing-here')
      expect(quiz.status).toBe(404)
      expect(await quiz.json()).toEqual({ detail: 'Not Found' })
    })

    it('serves both OpenAPI UIs with Swagger UI from the app itself, no CDN', async () => {
      for (const base of ['', '/quiz']) {
        const page = await (await t.get(`${base}/docs`)).text()
        expect(page).toContain(`${base}/static/swagger/swagger-ui-bundle.js`)
        expect(page).not.toContain('unpkg.com')
        const bundle = await t.get(`${base}/static/swagger/swagger-ui-bundle.js`)
        expect(bundle.status).toBe(200)
        const spec = await (await t.get(`${base}/docs/json`)).json() as { openapi: string }
        expect(spec.openapi).toStartWith('3.')
      }
    })

    it('answers the browser\'s /favicon.ico with the icon (Swagger UI links none)', async () => {
      const icon = await t.get('/favicon.ico')
      expect(icon.status).toBe(200)
      expect(icon.headers.get('content-type')).toBe('image/svg+xml')
      expect(await icon.text()).toContain('<svg')
    })

    it('stamps the standard hardening headers on every response', async () => {
      const res = await t.get('/api/health')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('x-frame-options')).toBe('DENY')
    })
  })
}

describe('mount points (RUNTIME.md: CLINICAL_BASE_PATH, QUIZ_BASE_PATH)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp({ env: { QUIZ_BASE_PATH: '', CLINICAL_BASE_PATH: '/clinic' } })
  })
  afterAll(() => t.close())

  it('serves the quiz service at the root when the clinical service has a base path of its own', async () => {
    expect(await (await t.get('/clinic/api/health')).json()).toEqual({ ok: true })
    const quiz = await t.get('/api/auth/me')
    expect(quiz.status).toBe(401)
    expect(await quiz.json()).toEqual({ detail: expect.any(String) })
    const clinical = await t.get('/clinic/api/auth/me')
    expect(clinical.status).toBe(401)
    expect(await clinical.json()).toMatchObject({ success: false })
    const docs = (await (await t.get('/docs/json')).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(docs.paths)).toContain('/api/documents/upload')
  })
})

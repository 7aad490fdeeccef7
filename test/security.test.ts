// spec 2's security envelope through the real dispatcher: CORS (allowed, disallowed and missing origins,
// preflight, the cross-site refusal), the security headers on every kind of response, and the 200-per-minute
// limit on all clinical /api/* requests per client address.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { CLINICAL_API_RATE_RULE } from '../plugins/clinical/envelope'
import { CORS_ALLOW_METHODS, PREFLIGHT_MAX_AGE_S } from '../src/security'
import { databaseTargets, startTestApp, type TestApp } from './support/app'

const APP_URL = 'https://clinic.example.org'
const MOBILE = 'https://mobile.example.org'
const EVIL = 'https://evil.example'
const SCRIPT_HOSTS = ['https://cdn.example.org', 'https://challenges.example.net']

/** The directives of a Content-Security-Policy header, by name. */
function directives(csp: string | null): Record<string, string[]> {
  expect(csp).not.toBeNull()
  return Object.fromEntries(csp!.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]))
}

function expectSecurityHeaders(res: Response) {
  expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains; preload')
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin')
  expect(res.headers.get('x-frame-options')).toBe('DENY')
  expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin')
  expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin')
  expect(res.headers.get('permissions-policy')).toBe('camera=(), geolocation=(), microphone=(self)')
  const csp = directives(res.headers.get('content-security-policy'))
  expect(csp['script-src']).toEqual(expect.arrayContaining(["'self'", "'wasm-unsafe-eval'", "'unsafe-eval'"]))
  expect(csp['script-src']).not.toContain("'unsafe-inline'")
  expect(csp['script-src-attr']).toEqual(["'none'"])
  expect(csp['object-src']).toEqual(["'none'"])
  expect(csp['frame-ancestors']).toEqual(["'none'"])
  return csp
}

for (const target of databaseTargets()) {
  describe(`security envelope [${target}]`, () => {
    let t: TestApp
    beforeAll(async () => {
      t = await startTestApp({
        target,
        env: { APP_URL, CORS_ORIGINS: `${MOBILE}, https://other.example.org/`, CSP_SCRIPT_HOSTS: SCRIPT_HOSTS.join(',') },
      })
    })
    afterAll(() => t.close())

    describe('CORS (spec 2): APP_URL plus CORS_ORIGINS, with credentials', () => {
      it('echoes an allowed origin (APP_URL or a CORS_ORIGINS entry) with credentials, never *', async () => {
        for (const origin of [APP_URL, MOBILE, 'https://other.example.org']) {
          const res = await t.get('/api/health', { headers: { origin } })
          expect(res.status).toBe(200)
          expect(res.headers.get('access-control-allow-origin')).toBe(origin)
          expect(res.headers.get('access-control-allow-credentials')).toBe('true')
          expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After')
          expect(res.headers.get('vary')).toContain('Origin')
        }
      })

      it('a disallowed origin gets no CORS headers on a read (the browser blocks it), but Vary: Origin', async () => {
        const res = await t.get('/api/health', { headers: { origin: EVIL } })
        expect(res.status).toBe(200)
        expect(res.headers.get('access-control-allow-origin')).toBeNull()
        expect(res.headers.get('access-control-allow-credentials')).toBeNull()
        expect(res.headers.get('vary')).toContain('Origin')
      })

      it('a request without Origin always passes, without CORS headers', async () => {
        const res = await t.get('/api/health')
        expect(res.status).toBe(200)
        expect(res.headers.get('access-control-allow-origin')).toBeNull()
        const post = await t.post('/api/auth/logout')
        expect(post.status).not.toBe(403)
      })

      it('an origin must match exactly: another scheme, port or subdomain is not allowed', async () => {
        for (const origin of ['http://clinic.example.org', 'https://clinic.example.org:8443', 'https://x.clinic.example.org', 'null']) {
          const res = await t.get('/api/health', { headers: { origin } })
          expect(res.headers.get('access-control-allow-origin')).toBeNull()
        }
      })

      it('answers a preflight from an allowed origin with 204, methods, headers and Max-Age', async () => {
        const res = await t.request('/api/memories', {
          method: 'OPTIONS',
          headers: { origin: MOBILE, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, hx-request' },
        })
        expect(res.status).toBe(204)
        expect(res.headers.get('access-control-allow-origin')).toBe(MOBILE)
        expect(res.headers.get('access-control-allow-credentials')).toBe('true')
        expect(res.headers.get('access-control-allow-methods')!.split(', ')).toEqual(CORS_ALLOW_METHODS)
        const allowHeaders = res.headers.get('access-control-allow-headers')!.toLowerCase().split(', ')
        for (const h of ['authorization', 'content-type', 'x-client', 'x-requested-with', 'hx-request', 'hx-target', 'hx-trigger', 'hx-current-url']) {
          expect(allowHeaders).toContain(h)
        }
        expect(res.headers.get('access-control-max-age')).toBe(String(PREFLIGHT_MAX_AGE_S))
        expect(res.headers.get('vary')).toContain('Origin')
      })

      it('a preflight from a disallowed origin gets no CORS headers', async () => {
        const res = await t.request('/api/memories', {
          method: 'OPTIONS', headers: { origin: EVIL, 'access-control-request-method': 'DELETE' },
        })
        expect(res.headers.get('access-control-allow-origin')).toBeNull()
        expect(res.headers.get('access-control-allow-methods')).toBeNull()
      })

      it('refuses a state-changing /api request from a disallowed origin with 403, so a cookie cannot act cross-site', async () => {
        for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
          const res = await t.request('/api/auth/logout', {
            method, headers: { origin: EVIL, 'content-type': 'application/json', cookie: 'app_auth=anything' }, body: '{}',
          })
          expect(res.status).toBe(403)
          expect(await res.json()).toMatchObject({ success: false, error: 'Origin not allowed' })
          expect(res.headers.get('access-control-allow-origin')).toBeNull()
        }
      })

      it('lets the same request through from an allowed origin', async () => {
        const res = await t.post('/api/auth/logout', {}, { headers: { origin: APP_URL } })
        expect(res.status).not.toBe(403)
        expect(res.headers.get('access-control-allow-origin')).toBe(APP_URL)
      })

      it('a cookie-only write without Origin must prove its site (Sec-Fetch-Site or Referer); apps with a Bearer pass', async () => {
        const write = (headers: Record<string, string>) =>
          t.request('/api/auth/logout', { method: 'POST', headers: { 'content-type': 'application/json', cookie: 'app_auth=anything', ...headers }, body: '{}' })
        // the test client adds Sec-Fetch-Site to cookie requests as a browser does; these set their own headers
        for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { referer: `${EVIL}/page` }, { referer: 'not a url' }] as Array<Record<string, string>>) {
          const res = await write(headers)
          expect(res.status, JSON.stringify(headers)).toBe(403)
          expect(await res.json()).toMatchObject({ success: false, code: 'origin_not_allowed' })
        }
        const bare = await t.request('/api/auth/logout', { method: 'POST', headers: { cookie: 'app_auth=anything', 'sec-fetch-site': '' } })
        expect(bare.status).toBe(403)
        for (const headers of [{ 'sec-fetch-site': 'same-origin' }, { referer: `${APP_URL}/account` }, { referer: `${MOBILE}/x` }] as Array<Record<string, string>>) {
          expect((await write(headers)).status, JSON.stringify(headers)).not.toBe(403)
        }
        // a Bearer client (an app, a script) sends no Origin and proves nothing: it is no cross-site form
        expect((await t.request('/api/auth/logout', { method: 'POST', headers: { authorization: 'Bearer x.y.z', cookie: 'app_auth=anything', 'sec-fetch-site': 'cross-site' } })).status).not.toBe(403)
        expect((await t.post('/api/auth/logout', {})).status).not.toBe(403)
      })

      it('page forms accept APP_URL\'s origin only: not the request\'s own Host, and not a form that proves no origin', async () => {
        const login = (headers: Record<string, string>) => t.form('/login', { email: 'nobody@example.test', password: 'whatever password' }, { headers })
        expect((await login({ origin: 'http://localhost' })).status).toBe(403)
        expect((await login({ origin: MOBILE })).status).toBe(403)
        expect((await login({ origin: '', 'sec-fetch-site': 'cross-site' })).status).toBe(403)
        expect((await login({ origin: APP_URL })).status).toBe(422)
        expect((await login({ origin: '', referer: `${APP_URL}/` })).status).toBe(422)
      })

      it('leaves the quiz app as it was: no CORS headers, no origin refusal on its API', async () => {
        const res = await t.get('/quiz/api/auth/me', { headers: { origin: APP_URL } })
        expect(res.status).toBe(401)
        expect(res.headers.get('access-control-allow-origin')).toBeNull()
        const post = await t.post('/quiz/api/auth/login', { email: 'nobody@example.test', password: 'whatever1' }, { headers: { origin: EVIL } })
        expect(post.status).not.toBe(403)
      })
    })

    describe('security headers (spec 2) on every response', () => {
      it('on JSON, HTML, static and 404 responses of the clinical app', async () => {
        const json = await t.get('/api/health')
        expect(json.headers.get('content-type')).toContain('application/json')
        expectSecurityHeaders(json)
        const html = await t.get('/docs')
        expect(html.headers.get('content-type')).toContain('text/html')
        expectSecurityHeaders(html)
        expectSecurityHeaders(await t.get('/static/app.css'))
        const apiMissing = await t.get('/api/nothing-here')
        expect(apiMissing.status).toBe(404)
        expectSecurityHeaders(apiMissing)
        const pageMissing = await t.get('/nothing-here', { headers: { accept: 'text/html' } })
        expect(pageMissing.status).toBe(404)
        expectSecurityHeaders(pageMissing)
        // A page keeps its own Vary, with Origin added; a preflight and a refusal carry the set too.
        const page = await t.get('/forgot-password', { headers: { accept: 'text/html' } })
        expect(page.status).toBe(200)
        expectSecurityHeaders(page)
        expect(page.headers.get('vary')!.split(/,\s*/)).toEqual(expect.arrayContaining(['HX-Request', 'Origin']))
        const preflight = await t.request('/api/auth/login', {
          method: 'OPTIONS', headers: { origin: APP_URL, 'access-control-request-method': 'POST' },
        })
        expect(preflight.status).toBe(204)
        expectSecurityHeaders(preflight)
        const refused = await t.post('/api/auth/logout', {}, { headers: { origin: EVIL } })
        expect(refused.status).toBe(403)
        expectSecurityHeaders(refused)
        expect(refused.headers.get('vary')).toContain('Origin')
      })

      it('the CSP names the configured script hosts and the challenge host for frames, and a sensible rest', async () => {
        const csp = expectSecurityHeaders(await t.get('/api/health'))
        expect(csp['script-src']).toEqual(expect.arrayContaining(SCRIPT_HOSTS))
        expect(csp['script-src']).not.toContain('https://unpkg.com')
        expect(csp['frame-src']).toEqual(["'self'", 'https://challenges.cloudflare.com'])
        expect(csp['default-src']).toEqual(["'self'"])
        expect(csp['style-src']).toEqual(["'self'", "'unsafe-inline'"])
        expect(csp['img-src']).toEqual(["'self'", 'data:'])
        expect(csp['connect-src']).toEqual(["'self'"])
        expect(csp['base-uri']).toEqual(["'self'"])
        expect(csp['form-action']).toEqual(["'self'"])
      })

      it('the Swagger UI page runs its one inline script under a fresh nonce; other pages get none', async () => {
        const nonces = []
        for (let i = 0; i < 2; i++) {
          const res = await t.get('/docs')
          const nonce = directives(res.headers.get('content-security-policy'))['script-src']!
            .find((s) => s.startsWith("'nonce-"))?.slice("'nonce-".length, -1)
          expect(nonce).toBeDefined()
          const page = await res.text()
          expect(page).toContain(`<script nonce="${nonce}">`)
          expect(page).not.toContain('<script>')
          nonces.push(nonce)
        }
        expect(nonces[0]).not.toBe(nonces[1])
        expect(await (await t.get('/api/health')).headers.get('content-security-policy')).not.toContain('nonce-')
      })

      it('the quiz app carries the same header set (its pages are built for it), including /quiz/docs', async () => {
        expectSecurityHeaders(await t.get('/quiz/api/auth/me'))
        expectSecurityHeaders(await t.get('/quiz/login', { headers: { accept: 'text/html' } }))
        const docs = await t.get('/quiz/docs')
        expectSecurityHeaders(docs)
        expect(await docs.text()).toContain('<script nonce="')
      })
    })

    describe(`rate limit (spec 2): all /api/* ${CLINICAL_API_RATE_RULE.limit} per ${CLINICAL_API_RATE_RULE.windowS}s per client address`, () => {
      it('refuses request limit + 1 from one address with 429 and Retry-After; another address, health and /metrics pass', async () => {
        const ip = '198.51.100.7'
        const paths = ['/api/nothing-here', '/api/auth/me', '/api/encounters/saved']
        for (let i = 0; i < CLINICAL_API_RATE_RULE.limit; i++) {
          const res = await t.get(paths[i % paths.length]!, { ip, headers: { origin: APP_URL } })
          expect(res.status).not.toBe(429)
        }
        const over = await t.get('/api/auth/me', { ip, headers: { origin: APP_URL } })
        expect(over.status).toBe(429)
        expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(CLINICAL_API_RATE_RULE.windowS)
        expect(await over.json()).toMatchObject({ success: false, code: 'rate_limited' })
        // an allowed origin can read the 429 and its Retry-After
        expect(over.headers.get('access-control-allow-origin')).toBe(APP_URL)
        expectSecurityHeaders(over)
        expect((await t.post('/api/auth/logout', {}, { ip })).status).toBe(429)

        expect((await t.get('/api/auth/me', { ip: '198.51.100.8' })).status).not.toBe(429)
        expect((await t.get('/api/health', { ip })).status).toBe(200)
        expect((await t.get('/metrics', { ip })).status).toBe(200)
        expect((await t.get('/quiz/api/auth/me', { ip })).status).toBe(401)
      })
    })
  })

  describe(`CORS without APP_URL or CORS_ORIGINS (development) [${target}]`, () => {
    let t: TestApp
    beforeAll(async () => {
      t = await startTestApp({ target })
    })
    afterAll(() => t.close())

    it("allows only the request's own origin", async () => {
      const own = await t.post('/api/auth/logout', {}, { headers: { origin: 'http://localhost' } })
      expect(own.status).not.toBe(403)
      expect(own.headers.get('access-control-allow-origin')).toBe('http://localhost')
      const other = await t.post('/api/auth/logout', {}, { headers: { origin: 'http://localhost:5173' } })
      expect(other.status).toBe(403)
      expect(other.headers.get('access-control-allow-origin')).toBeNull()
    })

    it('the CSP has the default content-delivery and challenge hosts', async () => {
      const csp = directives((await t.get('/api/health')).headers.get('content-security-policy'))
      expect(csp['script-src']).toEqual(expect.arrayContaining(['https://cdn.jsdelivr.net', 'https://unpkg.com', 'https://challenges.cloudflare.com']))
      expect(csp['frame-src']).toEqual(["'self'", 'https://challenges.cloudflare.com'])
    })
  })
}

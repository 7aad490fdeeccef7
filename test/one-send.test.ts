// Large text bodies leave as a one-chunk stream (src/core/one-send.ts): the text is the same, only how Bun writes
// it changes. Over a real port: test/server.test.ts.
import { describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { hardening } from '../src/envelope'
import { ONE_SEND_BYTES, textBody } from '../src/core/one-send'
import { databaseTargets, startTestApp } from './support/app'
import { insertUser, signIn, WEB } from './support/clinical'

const read = (body: ReturnType<typeof textBody>) => new Response(body).text()

describe('textBody', () => {
  it('keeps a short text as it is', () => {
    expect(textBody('<p>hello</p>')).toBe('<p>hello</p>')
    expect(textBody('x'.repeat(ONE_SEND_BYTES / 3 - 1))).toBeTypeOf('string')
  })

  it('hands a text under the limit in UTF-8 bytes over as bytes, one at the limit as a stream, with the same text', async () => {
    const under = 'x'.repeat(ONE_SEND_BYTES - 1)
    const at = 'x'.repeat(ONE_SEND_BYTES)
    expect(textBody(under)).toBeInstanceOf(Uint8Array)
    expect(textBody(at)).toBeInstanceOf(ReadableStream)
    expect(await read(textBody(under))).toBe(under)
    expect(await read(textBody(at))).toBe(at)
  })

  it('counts bytes, not characters: a text of fewer characters than the limit but more bytes is a stream', async () => {
    const text = 'é€😀'.repeat(Math.ceil(ONE_SEND_BYTES / 9))
    expect(text.length).toBeLessThan(ONE_SEND_BYTES)
    expect(new TextEncoder().encode(text).byteLength).toBeGreaterThanOrEqual(ONE_SEND_BYTES)
    const body = textBody(text)
    expect(body).toBeInstanceOf(ReadableStream)
    expect(await read(body)).toBe(text)
  })
})

for (const target of databaseTargets()) {
  describe(`JSON answers through the envelope [${target}]`, () => {
    it('a large JSON answer keeps its status, content type and security headers, and parses whole', async () => {
      const app = await startTestApp({ target })
      try {
        const doc = await app.get('/quiz/docs/json')
        expect(doc.status).toBe(200)
        expect(doc.headers.get('content-type')).toStartWith('application/json')
        expect(doc.headers.get('content-security-policy')).toContain("default-src 'self'")
        expect(doc.headers.get('x-content-type-options')).toBe('nosniff')
        const text = await doc.text()
        expect(text.length).toBeGreaterThan(ONE_SEND_BYTES)
        expect(JSON.parse(text).openapi).toStartWith('3.')
      } finally {
        await app.close()
      }
    })

    it('the hardening plugin answers a status set by name and a list of cookies; complete adds the headers to a Response', async () => {
      const app = await startTestApp({ target })
      try {
        const { plugin, complete } = hardening(app.booted.core, 'quiz')
        const routes = new Elysia()
          .use(plugin)
          .get('/named', ({ set }) => {
            set.status = 'Created'
            return { made: true }
          })
          .get('/cookies', ({ set }) => {
            set.headers['set-cookie'] = ['a=1; Path=/', 'b=2; Path=/']
            return [1, 2]
          })
          .get('/own', () => new Response('own', { headers: { 'content-type': 'text/plain' } }))
          .get('/own-csp', () => new Response('csp', { headers: { 'content-security-policy': "default-src 'none'" } }))
        // As the app's fetch does it: every response through complete.
        const handle = async (path: string) => complete(await routes.handle(new Request(`http://localhost${path}`)))
        const named = await handle('/named')
        expect(named.status).toBe(201)
        expect(await named.json()).toEqual({ made: true })
        const cookies = await handle('/cookies')
        expect(cookies.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/'])
        expect(cookies.headers.get('x-frame-options')).toBe('DENY')
        expect(await cookies.json()).toEqual([1, 2])
        const own = await handle('/own')
        expect(own.headers.get('content-type')).toBe('text/plain')
        expect(own.headers.get('x-frame-options')).toBe('DENY')
        expect(await own.text()).toBe('own')
        // A header the response sets itself is kept; the others are added.
        const ownCsp = await handle('/own-csp')
        expect(ownCsp.headers.get('content-security-policy')).toBe("default-src 'none'")
        expect(ownCsp.headers.get('x-frame-options')).toBe('DENY')
        expect(ownCsp.headers.get('strict-transport-security')).toContain('max-age=')
      } finally {
        await app.close()
      }
    })

    it('a JSON answer carries the headers its route set or changed, and no other route\'s', async () => {
      const app = await startTestApp({ target })
      try {
        const { plugin, complete } = hardening(app.booted.core, 'quiz')
        const routes = new Elysia()
          .use(plugin)
          .get('/plain', () => ({ n: 0 }))
          .get('/own/:value', ({ set, params }) => {
            set.headers['cache-control'] = params.value
            set.headers.vary = 'Origin'
            return { n: 1 }
          })
          .get('/changed', ({ set }) => {
            set.headers['x-frame-options'] = 'SAMEORIGIN'
            set.headers['content-type'] = 'application/problem+json'
            return { n: 2 }
          })
          .get('/untyped', ({ set }) => {
            set.headers['content-type'] = ''
            return { n: 5 }
          })
          .get('/listed', ({ set }) => {
            ;(set.headers as Record<string, unknown>)['x-list'] = ['a', 'b']
            set.headers['retry-after'] = 30 as unknown as string
            return { n: 4 }
          })
        const get = async (path: string) => complete(await routes.handle(new Request(`http://localhost${path}`)))
        const defaults = Object.fromEntries((await get('/plain')).headers)
        expect(defaults['content-type']).toBe('application/json')
        expect(defaults['x-frame-options']).toBe('DENY')
        expect(defaults['permissions-policy']).toBeString()
        expect(Object.keys(defaults)).toHaveLength(9)

        // The same own headers twice, then others, then the first again: each answer has its own values.
        for (const value of ['no-store', 'no-store', 'max-age=60', 'no-store']) {
          const own = await get(`/own/${value}`)
          expect(own.headers.get('cache-control')).toBe(value)
          expect(own.headers.get('vary')).toBe('Origin')
          expect(Object.fromEntries(own.headers)).toEqual({ ...defaults, 'cache-control': value, vary: 'Origin' })
          expect(await own.json()).toEqual({ n: 1 })
        }
        const changed = await get('/changed')
        expect(Object.fromEntries(changed.headers)).toEqual({ ...defaults, 'x-frame-options': 'SAMEORIGIN', 'content-type': 'application/problem+json' })
        expect(Object.fromEntries((await get('/untyped')).headers)).toEqual(defaults)
        const listed = await get('/listed')
        expect(listed.headers.get('x-list')).toBe('a, b')
        expect(listed.headers.get('retry-after')).toBe('30')
        expect(listed.headers.get('x-frame-options')).toBe('DENY')
        // None of it stays for the next answer.
        expect(Object.fromEntries((await get('/plain')).headers)).toEqual(defaults)
      } finally {
        await app.close()
      }
    })

    it('a JSON answer with a cookie and one with an error status keep them', async () => {
      const app = await startTestApp({ target })
      try {
        const email = 'one-send@example.test'
        await insertUser(app, { email })
        const signedIn = await signIn(app, email, { headers: WEB })
        expect(signedIn.cookie).toBeString()
        expect(signedIn.cookie!.length).toBeGreaterThan(10)
        const refused = await app.post('/api/auth/login', { email, password: 'not-the-password-1' }, { headers: WEB })
        expect(refused.status).toBe(401)
        expect(refused.headers.get('content-type')).toStartWith('application/json')
        expect(refused.headers.get('strict-transport-security')).toContain('max-age=')
        expect(await refused.json()).toMatchObject({ success: false })
        // Signing out clears the cookie in a JSON answer (200) beside the security headers.
        const out = await app.post('/api/auth/logout', {}, { headers: { ...WEB, cookie: `app_auth=${signedIn.cookie}`, origin: 'http://localhost' } })
        expect(out.status).toBe(200)
        expect(out.headers.getSetCookie()).toEqual([expect.stringMatching(/^app_auth=;.*Max-Age=0/)])
        expect(out.headers.get('x-frame-options')).toBe('DENY')
      } finally {
        await app.close()
      }
    })
  })
}

// Secrets never leave: the capture test/preload.ts installs over the whole run is really there. A line or a response
// carrying a remembered secret is found (and named without the secret); a redacted one is not. The findings these
// tests provoke on purpose are taken here, so the preload's afterEach sees none.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLogger } from '../src/core/log'
import { startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, MOBILE, userWithSession } from './support/clinical'
import { captureLine, lineCapture, recentLines, rememberSecret, settleExchanges, takeFindings, watchExchange } from './support/secrets'
import { waitFor } from './support/wait'

const unique = (tag: string) => `${tag}-${crypto.randomUUID()}`

describe('the log capture', () => {
  it('a line of an app logger carrying a remembered secret is a finding that names the kind, never the secret', () => {
    const secret = unique('capture-api-key')
    rememberSecret('API key', secret)
    createLogger('silent').info({ config: { key: secret } }, 'model saved')
    const found = takeFindings()
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({ kind: 'API key', where: 'a log line (app)' })
    expect(found[0]!.excerpt).toContain('[secret]')
    expect(found[0]!.excerpt).toContain('model saved')
    expect(JSON.stringify(found)).not.toContain(secret)
  })

  it('the same secret under a redacted key, or a short value, is no finding', () => {
    const secret = unique('capture-password')
    rememberSecret('password', secret)
    rememberSecret('password', 'short')
    const log = createLogger('silent')
    log.info({ password: secret, user: { password: secret } }, 'signed in')
    log.info({ note: 'short' }, 'short values are not secrets')
    expect(takeFindings()).toEqual([])
  })

  it('a secret logged before it was remembered is found at the next sweep (each test\'s end)', () => {
    const token = unique('capture-token')
    createLogger('silent').warn(`token in the message: ${token}`)
    rememberSecret('access token', token)
    expect(takeFindings()).toMatchObject([{ kind: 'access token' }])
  })

  it('lines of a server process are found in its output, a line split across chunks too', () => {
    const secret = unique('capture-server-secret')
    rememberSecret('server secret', secret)
    const out = lineCapture('server process stdout')
    out.write(`{"msg":"starting"}\n{"msg":"jwt ${secret.slice(0, 10)}`)
    expect(takeFindings()).toEqual([])
    out.write(`${secret.slice(10)}"}\n`)
    expect(takeFindings()).toMatchObject([{ kind: 'server secret', where: 'a log line (server process stdout)' }])
  })

  it('a JSON-escaped or URL-encoded secret is found too', () => {
    const secret = `${unique('quote')}"&/ +`
    rememberSecret('stored credential', secret)
    captureLine(JSON.stringify({ msg: secret }), 'app')
    captureLine(`GET /x?pass=${encodeURIComponent(secret)}`, 'app')
    expect(takeFindings().map((f) => f.kind)).toEqual(['stored credential', 'stored credential'])
  })
})

describe('the response check', () => {
  const exchange = (path: string, answer: Response, init: RequestInit = {}) =>
    watchExchange(new Request(`http://localhost${path}`, init), init.body, () => answer)

  it('a password never appears in a response; a TOTP secret only in the one that issued it or one that posts it back', async () => {
    const password = unique('capture-pw')
    await exchange('/api/user', Response.json({ ok: true }), { method: 'POST', body: JSON.stringify({ email: 'a@example.test', password }) })
    await exchange('/api/profile', new Response(`<p>hello ${password}</p>`, { headers: { 'content-type': 'text/html' } }))
    await settleExchanges()
    expect(takeFindings()).toMatchObject([{ kind: 'password', where: 'the response to GET /api/profile' }])

    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DP'
    await exchange('/api/auth/setup-2fa', Response.json({ success: true, secret }), { method: 'POST' })
    const form = new URLSearchParams({ secret, code: '000000' }).toString()
    await exchange('/account/2fa/enable', new Response(`<input name="secret" value="${secret}">`, { headers: { 'content-type': 'text/html' } }),
      { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    await settleExchanges()
    expect(takeFindings()).toEqual([])
    await exchange('/api/auth/me', Response.json({ totp: secret }))
    await settleExchanges()
    expect(takeFindings()).toMatchObject([{ kind: 'TOTP secret', where: 'the response to GET /api/auth/me' }])
  })

  it('an API key sent to the app is never answered back, not even by the request that stored it', async () => {
    const key = unique('sk-capture')
    await exchange('/quiz/api/admin/models', Response.json({ api_key: key }), { method: 'POST', body: JSON.stringify({ name: 'm', api_key: key }) })
    await settleExchanges()
    expect(takeFindings()).toMatchObject([{ kind: 'API key', where: 'the response to POST /quiz/api/admin/models' }])
  })
})

describe('through a real test app', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(() => t.close())

  it('the app logs every request, captured though LOG_LEVEL is silent; a token it issued and later logs is a finding', async () => {
    const session = await userWithSession(t, 'user', 'capture')
    const res = await t.get('/api/auth/me', { token: session.token, headers: MOBILE })
    expect(res.status).toBe(200)
    expect(JSON.stringify(await res.json())).not.toContain(CLINICAL_PASSWORD)
    await settleExchanges()
    expect(takeFindings()).toEqual([])
    // The request line is written once the answer has gone out.
    const requestLines = await waitFor(async () => {
      const lines = recentLines().filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; path?: string; level: string })
      return lines.filter((l) => l.msg === 'request' && l.path === '/api/auth/me').length > 0 && lines
    }, 'the request line of GET /api/auth/me')
    expect(requestLines.find((l) => l.path === '/api/auth/me')!.level).toBe('info')

    // The token was remembered from the sign-in's answer: the app logging it would be found.
    t.booted.core.log.warn(`session ${session.token} looked odd`)
    expect(takeFindings()).toMatchObject([{ kind: 'access token', where: 'a log line (app)' }])
  })

  it('a password of the wrong type is refused without repeating it (the validation message leaves the value out)', async () => {
    const password = unique('typed-wrong')
    for (const [path, headers] of [['/quiz/api/auth/login', {}], ['/api/auth/login', MOBILE]] as const) {
      const res = await t.post(path, { email: 'nobody@example.test', password: [password] }, { headers })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.status).toBeLessThan(500)
      expect(await res.text()).not.toContain(password)
    }
    await settleExchanges()
    expect(takeFindings()).toEqual([])
  })
})

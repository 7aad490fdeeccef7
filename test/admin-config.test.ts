// Spec 3, Configuration, through the real app on each database target: the key allow-list, known keys' rules, the
// announcement any signed-in user reads, every pair in one read with secrets masked (and sealed in the table), the
// prompt templates (an override reaches the next generation; reset restores the default), reset-defaults and what
// it keeps, the AI model entries (toggle, default, custom, discover with its 502/503, a switched-off model refused by
// generation), the admin-only guard, and the audit rows (keys, never values). Mail settings: admin-mail.test.ts.
import { afterAll, beforeAll, beforeEach, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { PROMPT_DEFAULTS, promptKeys } from '../plugins/clinical/services/prompts'
import { MODELS_CATALOG_KEY } from '../plugins/clinical/services/models'
import { ANNOUNCEMENT_TEXT_MAX, CONFIG_KEY_MAX, type AdminModelEntry } from '../plugins/admin/models/config'
import { CONFIG_KEY_PREFIXES, SECRET_MASK } from '../plugins/admin/services/config'
import { startAiServer, TEST_MODEL, type AiServer, type LoggedRequest } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { flushAudit, freshIp, MOBILE, userWithSession, type SignedIn } from './support/clinical'
import { closedPort } from './support/net'

setDefaultTimeout(30_000)

const tag = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}`
const SMTP_PASS = tag('smtp-pass-secret')
const OIDC_SECRET = tag('oidc-client-secret')
const API_KEY = tag('embeddings-api-key')

for (const target of databaseTargets()) {
  describe(`admin configuration [${target}]`, () => {
    let t: TestApp
    let offline: TestApp
    let unreachable: TestApp
    let ai: AiServer
    let admin: SignedIn
    let clinician: SignedIn
    /** Every admin answer's body, searched for the secrets at the end. */
    const answers: string[] = []

    beforeAll(async () => {
      ai = await startAiServer()
      ;[t, offline, unreachable] = await Promise.all([
        startTestApp({ target, env: ai.env }),
        startTestApp({ target }),
        startTestApp({ target, env: { AI_BASE_URL: `http://127.0.0.1:${closedPort()}/v1`, AI_API_KEY: 'k', AI_DEFAULT_MODEL: TEST_MODEL } }),
      ])
      admin = await userWithSession(t, 'admin')
      clinician = await userWithSession(t, 'user', 'clinician')
    }, 120_000)
    afterAll(async () => {
      await Promise.all([t?.close(), offline?.close(), unreachable?.close()])
      await ai?.close()
    })
    beforeEach(() => ai.reset())

    const call = async (method: string, path: string, body?: unknown, who: SignedIn | null = admin, app: TestApp = t) => {
      const opts = { token: who?.token, ip: freshIp(), headers: MOBILE }
      const res = method === 'GET' ? await app.get(path, opts)
        : method === 'PUT' ? await app.put(path, body, opts) : await app.post(path, body ?? {}, opts)
      const text = await res.text()
      if (who === admin) answers.push(text)
      return { status: res.status, body: text ? JSON.parse(text) : null, text }
    }
    const put = (key: string, value: string, who: SignedIn | null = admin) => call('PUT', `/api/admin/config/${encodeURIComponent(key)}`, { value }, who)
    const stored = async (key: string) =>
      (await t.db.sql<{ value: string }>`select value from clinical.app_config where key = ${key}`)[0]?.value ?? null
    const auditRows = async (action: string) => {
      await flushAudit(t)
      return t.db.sql<{ user_id: number; details: string }>`select user_id, details from clinical.audit_log where action = ${action} order by id`
    }

    describe('admin only', () => {
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/api/admin/config'], ['PUT', '/api/admin/config/announcement.text', { value: 'x' }],
        ['POST', '/api/admin/config/test-email', { to: 'a@example.test' }], ['GET', '/api/admin/config/prompts'],
        ['POST', '/api/admin/config/prompts/prompt.soap/reset'], ['POST', '/api/admin/config/reset-defaults'],
        ['GET', '/api/admin/config/smtp/status'],
        ['PUT', '/api/admin/config/smtp', { host: 'mail.example.test', port: 25, user: '', pass: '', from: '', secure: false }],
        ['GET', '/api/admin/config/models'], ['PUT', '/api/admin/config/models/toggle', { modelId: TEST_MODEL, enabled: true }],
        ['PUT', '/api/admin/config/models/default', { modelId: TEST_MODEL }],
        ['POST', '/api/admin/config/models/custom', { id: 'x', name: 'x', category: 'x' }], ['GET', '/api/admin/config/models/discover'],
      ]
      it('every admin route answers 401 without a session and 403 to a user or a moderator; nothing is written', async () => {
        const moderator = await userWithSession(t, 'moderator')
        const before = await t.db.sql`select key, value from clinical.app_config order by key`
        for (const [method, path, body] of routes) {
          expect((await call(method, path, body, null)).status, `${method} ${path}`).toBe(401)
          for (const who of [clinician, moderator]) {
            const res = await call(method, path, body, who)
            expect(res.status, `${method} ${path} as ${who.user.role}`).toBe(403)
            expect(res.body).toMatchObject({ success: false, error: expect.any(String) })
          }
        }
        expect(await t.db.sql`select key, value from clinical.app_config order by key`).toEqual(before)
      })

      it('the announcement is read by any signed-in user, not without a session', async () => {
        expect((await call('GET', '/api/admin/config/announcement', undefined, null)).status).toBe(401)
        expect((await call('GET', '/api/admin/config/announcement', undefined, clinician)).status).toBe(200)
      })
    })

    describe('PUT /api/admin/config/{key}: the allow-list', () => {
      it('a key outside the prefixes (or not exactly registration_enabled) is 400 naming the rule', async () => {
        for (const key of ['oidc.client_secret', 'database_url', 'registration_enabled_x', 'Registration_enabled', 'announcement', 'promptx.soap', 'jwt.secret']) {
          const res = await put(key, 'true')
          expect(res.status, key).toBe(400)
          expect(res.body.code, key).toBe('config_key_not_allowed')
          for (const prefix of CONFIG_KEY_PREFIXES) expect(res.body.error).toContain(prefix)
          expect(res.body.error).toContain('registration_enabled')
          expect(await stored(key)).toBeNull()
        }
      })

      it('every allowed prefix takes a value; the key must be dot-separated words of at most CONFIG_KEY_MAX characters', async () => {
        for (const prefix of ['feature.', 'email.', 'site.', 'tts.', 'stt.', 'embeddings.', 'clinical_assistant.']) {
          const value = tag('v')
          expect((await put(`${prefix}sample`, value)).status, prefix).toBe(200)
          expect(await stored(`${prefix}sample`)).toBe(value)
        }
        const long = `feature.${'x'.repeat(CONFIG_KEY_MAX)}`
        expect((await put(long, 'v')).body.code).toBe('config_key_not_allowed')
        expect((await put('feature.a b', 'v')).body.code).toBe('config_key_not_allowed')
        expect((await put('feature.nul', 'a\u0000b')).body.code).toBe('invalid_setting')
      })

      it('known keys are checked: flags true|false, announcement.type one of four, text length, smtp port, prompts, models', async () => {
        const bad: Array<[string, string, string]> = [
          ['registration_enabled', 'yes', 'invalid_setting'], ['announcement.enabled', '1', 'invalid_setting'],
          ['announcement.type', 'danger', 'invalid_setting'], ['announcement.text', 'x'.repeat(ANNOUNCEMENT_TEXT_MAX + 1), 'invalid_setting'],
          ['smtp.port', '70000', 'invalid_setting'], ['smtp.secure', 'maybe', 'invalid_setting'], ['smtp.relay', 'x', 'invalid_setting'],
          ['smtp.from', 'not an address', 'invalid_setting'], ['prompt.unknown', 'x', 'unknown_prompt'],
          [MODELS_CATALOG_KEY, '{"custom":[]}', 'config_key_not_allowed'], ['models.other', 'x', 'config_key_not_allowed'],
        ]
        for (const [key, value, code] of bad) {
          const res = await put(key, value)
          expect(res.status, key).toBe(400)
          expect(res.body.code, key).toBe(code)
          expect(res.body.error, key).toContain(key)
        }
        expect((await put('models.default', 'no-such-model')).status).toBe(404)
      })

      it('registration_enabled written here is what registration reads; the registration route is the same setting', async () => {
        expect((await put('registration_enabled', 'false')).status).toBe(200)
        expect(await (await t.get('/api/auth/registration-status', { ip: freshIp() })).json()).toMatchObject({ registrationEnabled: false })
        expect((await call('POST', '/api/admin/settings/registration', { enabled: true })).status).toBe(200)
        expect((await call('GET', '/api/admin/config')).body.registration_enabled).toBe('true')
      })
    })

    describe('the announcement', () => {
      it('defaults to off, info, no text; an admin sets it and a plain user reads it', async () => {
        expect((await call('GET', '/api/admin/config/announcement', undefined, clinician)).body).toEqual({ success: true, enabled: false, text: '', type: 'info' })
        const text = tag('Downtime tonight 22:00')
        for (const [key, value] of [['announcement.text', text], ['announcement.type', 'warning'], ['announcement.enabled', 'true']] as const) {
          expect((await put(key, value)).status).toBe(200)
        }
        expect((await call('GET', '/api/admin/config/announcement', undefined, clinician)).body).toEqual({ success: true, enabled: true, text, type: 'warning' })
      })
    })

    describe('GET /api/admin/config', () => {
      it('every pair: stored keys, registration, announcement, smtp and the six oidc settings; secrets masked, "" when unset', async () => {
        const before = (await call('GET', '/api/admin/config')).body as Record<string, string>
        expect(before['smtp.pass']).toBe('')
        expect(before['oidc.client_secret']).toBe('')
        expect(Object.keys(before)).toEqual(expect.arrayContaining([
          'registration_enabled', 'announcement.enabled', 'announcement.text', 'announcement.type', 'smtp.host', 'smtp.port', 'smtp.user',
          'smtp.pass', 'smtp.from', 'smtp.secure', 'oidc.enabled', 'oidc.issuer', 'oidc.client_id', 'oidc.client_secret', 'oidc.disable_local_auth',
          'oidc.button_label',
        ]))
        const oidc = await call('PUT', '/api/auth/oidc/config', { 'oidc.issuer': 'https://idp.example.test', 'oidc.client_id': 'clinic', 'oidc.client_secret': OIDC_SECRET })
        expect(oidc.status).toBe(200)
        expect((await call('PUT', '/api/admin/config/smtp', { host: 'mail.example.test', port: 2525, user: 'mailer', pass: SMTP_PASS, from: 'Clinic <clinic@example.test>', secure: false })).status).toBe(200)
        expect((await put('embeddings.api_key', API_KEY)).status).toBe(200)

        const all = (await call('GET', '/api/admin/config')).body as Record<string, string>
        expect(all).toMatchObject({
          'oidc.issuer': 'https://idp.example.test', 'oidc.client_id': 'clinic', 'oidc.client_secret': SECRET_MASK,
          'smtp.host': 'mail.example.test', 'smtp.port': '2525', 'smtp.user': 'mailer', 'smtp.pass': SECRET_MASK, 'smtp.secure': 'false',
          'embeddings.api_key': SECRET_MASK,
        })
        for (const value of Object.values(all)) expect(typeof value).toBe('string')
      })

      it('secrets are sealed in the table; sending the mask back keeps the stored one', async () => {
        for (const [key, secret] of [['smtp.pass', SMTP_PASS], ['oidc.client_secret', OIDC_SECRET], ['embeddings.api_key', API_KEY]] as const) {
          const raw = await stored(key)
          expect(raw, key).not.toBeNull()
          expect(raw).not.toContain(secret)
          expect(t.booted.core.crypto.isSealedText(raw!)).toBe(true)
          expect(t.booted.core.crypto.openText(raw!)).toBe(secret)
        }
        const sealed = await stored('embeddings.api_key')
        expect((await put('embeddings.api_key', SECRET_MASK)).status).toBe(200)
        expect(await stored('embeddings.api_key')).toBe(sealed)
      })
    })

    describe('prompts', () => {
      const chats = (): LoggedRequest[] => ai.requests.filter((r) => r.path === '/v1/chat/completions')
      const userPrompt = () => chats().at(-1)!.body.messages.find((m: { role: string }) => m.role === 'user').content as string
      const shorten = async (document: string) => {
        const res = await t.post('/api/shorten', { document, model: TEST_MODEL }, { token: clinician.token, ip: freshIp() })
        expect(res.status).toBe(200)
      }

      it('lists every prompt key generation reads, with its default while there is no override', async () => {
        const { status, body } = await call('GET', '/api/admin/config/prompts')
        expect(status).toBe(200)
        expect(Object.keys(body).sort()).toEqual([...promptKeys].sort())
        for (const key of promptKeys) expect(body[key]).toBe(PROMPT_DEFAULTS[key])
      })

      it('an override is listed and used by the very next generation; reset restores the default for both', async () => {
        const override = `${tag('OVERRIDE')} Shorten this: {{document}}`
        expect((await put('prompt.shorten', override)).status).toBe(200)
        expect((await call('GET', '/api/admin/config/prompts')).body['prompt.shorten']).toBe(override)
        await shorten('Cough for two weeks.')
        expect(userPrompt()).toBe(override.replace('{{document}}', 'Cough for two weeks.'))

        expect((await call('POST', '/api/admin/config/prompts/prompt.shorten/reset')).status).toBe(200)
        expect((await call('GET', '/api/admin/config/prompts')).body['prompt.shorten']).toBe(PROMPT_DEFAULTS['prompt.shorten'])
        await shorten('Cough for two weeks.')
        expect(userPrompt()).toStartWith('Shorten the clinical document below')
        expect(await stored('prompt.shorten')).toBeNull()
      })

      it('a blank override removes it; resetting an unknown prompt is 404', async () => {
        expect((await put('prompt.clarify', 'Custom {{document}}')).status).toBe(200)
        expect((await put('prompt.clarify', '   ')).status).toBe(200)
        expect(await stored('prompt.clarify')).toBeNull()
        const res = await call('POST', '/api/admin/config/prompts/prompt.nope/reset')
        expect(res.status).toBe(404)
        expect(res.body.code).toBe('unknown_prompt')
      })
    })

    describe('AI model entries', () => {
      const ids = (list: Array<{ id: string }>) => list.map((m) => m.id)

      it('lists every entry with id, name, enabled, isDefault, category; exactly one default', async () => {
        const { status, body } = await call('GET', '/api/admin/config/models')
        expect(status).toBe(200)
        expect(body.find((m: { id: string }) => m.id === TEST_MODEL)).toEqual({ id: TEST_MODEL, name: TEST_MODEL, enabled: true, isDefault: true, category: 'general', custom: false })
        expect(body.filter((m: { isDefault: boolean }) => m.isDefault)).toHaveLength(1)
        expect(body.find((m: { id: string }) => m.id === 'gpt-4o')).toMatchObject({ enabled: false, isDefault: false })
      })

      it('toggle switches an entry on for clinicians; the default cannot be switched off; unknown ids are 404', async () => {
        expect((await call('PUT', '/api/admin/config/models/toggle', { modelId: 'gpt-4o', enabled: true })).status).toBe(200)
        const listing = await (await t.get('/api/models', { token: clinician.token, ip: freshIp() })).json()
        expect(ids(listing.models)).toContain('gpt-4o')
        const off = await call('PUT', '/api/admin/config/models/toggle', { modelId: TEST_MODEL, enabled: false })
        expect([off.status, off.body.code]).toEqual([400, 'default_model'])
        expect((await call('PUT', '/api/admin/config/models/toggle', { modelId: 'no-such', enabled: true })).status).toBe(404)
      })

      it('default moves to exactly one entry (switching it on); a custom entry is added once (409, 422)', async () => {
        expect((await call('PUT', '/api/admin/config/models/default', { modelId: 'o4-mini' })).status).toBe(200)
        let list = (await call('GET', '/api/admin/config/models')).body as AdminModelEntry[]
        expect(list.filter((m) => m.isDefault).map((m) => m.id)).toEqual(['o4-mini'])
        expect(list.find((m) => m.id === 'o4-mini')!.enabled).toBe(true)
        expect((await call('PUT', '/api/admin/config/models/default', { modelId: TEST_MODEL })).status).toBe(200)

        const custom = tag('clinic-llm')
        expect((await call('POST', '/api/admin/config/models/custom', { id: custom, name: 'Clinic LLM', category: 'General' })).status).toBe(200)
        list = (await call('GET', '/api/admin/config/models')).body
        expect(list.find((m) => m.id === custom)).toEqual({ id: custom, name: 'Clinic LLM', enabled: true, isDefault: false, category: 'general', custom: true })
        expect((await call('POST', '/api/admin/config/models/custom', { id: custom, name: 'Again', category: 'general' })).status).toBe(409)
        const malformed = await call('POST', '/api/admin/config/models/custom', { id: 'has space', name: 'x', category: 'x' })
        expect([malformed.status, malformed.body.code]).toEqual([422, 'invalid_model'])
      })

      it('a switched-off entry is refused by generation (400 model_disabled) and never reaches the gateway', async () => {
        const custom = tag('retired-llm')
        await call('POST', '/api/admin/config/models/custom', { id: custom, name: 'Retired', category: 'general' })
        expect((await call('PUT', '/api/admin/config/models/toggle', { modelId: custom, enabled: false })).status).toBe(200)
        const res = await t.post('/api/shorten', { document: 'Note', model: custom }, { token: clinician.token, ip: freshIp() })
        expect(res.status).toBe(400)
        expect((await res.json()).code).toBe('model_disabled')
        expect(ai.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(0)
      })

      it('discover lists the gateway\'s models; 502 when it cannot be reached; 503 without a gateway', async () => {
        expect((await call('GET', '/api/admin/config/models/discover')).body).toEqual({
          success: true, models: [{ id: 'test-embedding', name: 'test-embedding' }, { id: TEST_MODEL, name: TEST_MODEL }],
        })
        const down = await userWithSession(unreachable, 'admin')
        const bad = await call('GET', '/api/admin/config/models/discover', undefined, down, unreachable)
        expect([bad.status, bad.body.error]).toEqual([502, 'Request failed'])
        const none = await userWithSession(offline, 'admin')
        const missing = await call('GET', '/api/admin/config/models/discover', undefined, none, offline)
        expect([missing.status, missing.body.code]).toEqual([503, 'ai_not_configured'])
      })
    })

    describe('POST /api/admin/config/reset-defaults', () => {
      it('removes what PUT /config/{key} writes (prompts, announcement, models, feature flags) and keeps smtp, registration, secrets', async () => {
        await put('prompt.soap', 'Custom SOAP {{transcript}}')
        await put('feature.beta', 'true')
        await put('registration_enabled', 'false')
        expect((await call('POST', '/api/admin/config/reset-defaults')).status).toBe(200)
        for (const key of ['prompt.soap', 'feature.beta', 'announcement.text', 'announcement.enabled', MODELS_CATALOG_KEY, 'models.default']) {
          expect(await stored(key), key).toBeNull()
        }
        for (const key of ['registration_enabled', 'smtp.host', 'smtp.pass', 'embeddings.api_key', 'oidc.client_secret']) {
          expect(await stored(key), key).not.toBeNull()
        }
        expect((await call('GET', '/api/admin/config/announcement', undefined, clinician)).body).toEqual({ success: true, enabled: false, text: '', type: 'info' })
        const models = (await call('GET', '/api/admin/config/models')).body as Array<{ id: string; enabled: boolean }>
        expect(models.find((m) => m.id === 'gpt-4o')!.enabled).toBe(false)
        await put('registration_enabled', 'true')
      })
    })

    describe('audit and secrecy', () => {
      it('each change is audited with the admin and the key or model id, never a value', async () => {
        const changed = await auditRows('config_changed')
        const keys = changed.map((r) => JSON.parse(r.details).key)
        expect(keys).toEqual(expect.arrayContaining(['announcement.text', 'prompt.shorten', 'embeddings.api_key', 'registration_enabled']))
        expect(changed.every((r) => r.user_id === admin.user.id)).toBe(true)
        for (const action of ['prompt_reset', 'config_reset_defaults', 'smtp_settings_changed', 'model_enabled_changed', 'model_default_changed', 'model_added']) {
          expect((await auditRows(action)).length, action).toBeGreaterThan(0)
        }
        const everything = JSON.stringify(await t.db.sql`select action, details from clinical.audit_log`)
        for (const secret of [SMTP_PASS, OIDC_SECRET, API_KEY]) expect(everything).not.toContain(secret)
        expect(everything).not.toContain('OVERRIDE-')
      })

      it('no admin answer of this file ever held a secret', () => {
        expect(answers.length).toBeGreaterThan(50)
        for (const text of answers) for (const secret of [SMTP_PASS, OIDC_SECRET, API_KEY]) expect(text).not.toContain(secret)
      })
    })
  })
}

// The admin console's pages for users and configuration (spec 3, User administration, Configuration, User account
// states), through the real app on each database target: admin only (303 signed out, 403 for a user and a moderator);
// every page, its links and form actions; the user list searched plain and as you type; verify, disable (never
// oneself), enable and ending a user's sessions; the announcement seen by another user and its live preview; the SMTP
// settings with a real test email (and a failing one), the password sealed and never in a page; single sign-on
// keeping its secret; registration switched off; a prompt override reaching generation and its reset; the model
// entries with the test gateway (toggle, default, custom, discover, 502/503 in words); cross-site posts refused;
// user text escaped; the audit rows.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { PROMPT_DEFAULTS } from '../plugins/clinical/services/prompts'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  CLINICAL_PASSWORD, cookieValue, EVIL, flushAudit, freshIp, HTMX, insertUser, MOBILE, outsideAttributes, signIn, uniqueEmail, XSS, XSS_ESCAPED,
} from './support/clinical'
import { closedPort } from './support/net'
import { startSmtpSink, type SmtpSink } from './support/smtp'

setDefaultTimeout(60_000)

const tag = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}`
const SMTP_PASS = tag('smtp-page-pass')
const OIDC_SECRET = tag('oidc-page-secret')
const PAGES = ['/admin/users', '/admin/settings', '/admin/prompts', '/admin/models']

interface Visitor { id: number; cookie: string; email: string }

/** Same-origin addresses of a page's links and form actions, in the console's own areas. */
function addresses(html: string): string[] {
  const found = [...html.matchAll(/\s(?:href|action)="(\/[^"#]*)/g)].map((m) => m[1]!.replace(/&amp;/g, '&'))
  return [...new Set(found)].filter((a) => /^\/admin\/(users|settings|prompts|models)/.test(a) || a === '/admin')
}

describe.each(databaseTargets())('admin console pages [%s]', (target) => {
  let t: TestApp
  let offline: TestApp
  let unreachable: TestApp
  let ai: AiServer
  let sink: SmtpSink
  let admin: Visitor
  /** Every page answer of the admin, searched for the secrets at the end. */
  const answers: string[] = []

  const visitor = async (app: TestApp, role: 'admin' | 'moderator' | 'user', name = `Console ${role}`): Promise<Visitor> => {
    const email = uniqueEmail(`console-${role}`)
    const id = await insertUser(app, { email, name, role })
    const res = await app.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
    expect(res.status).toBe(303)
    return { id, email, cookie: `app_auth=${cookieValue(res)}` }
  }
  const get = async (path: string, who: Visitor, headers: Record<string, string> = {}, app = t) => {
    const res = await app.get(path, { headers: { accept: 'text/html', cookie: who.cookie, ...headers }, ip: freshIp() })
    const text = await res.clone().text()
    if (who === admin) answers.push(text)
    return res
  }
  const page = async (path: string, who: Visitor = admin, app = t) => {
    const res = await get(path, who, {}, app)
    expect(res.status, path).toBe(200)
    return res.text()
  }
  const form = async (path: string, fields: Record<string, string>, who: Visitor = admin, headers: Record<string, string> = {}, app = t) => {
    const res = await app.form(path, fields, { headers: { cookie: who.cookie, ...headers }, ip: freshIp() })
    if (who === admin) answers.push(await res.clone().text())
    return res
  }
  const stored = async (key: string) => (await t.db.sql<{ value: string }>`select value from clinical.app_config where key = ${key}`)[0]?.value ?? null
  const auditActions = async () => {
    await flushAudit(t)
    return (await t.db.sql<{ action: string; user_id: number; details: string }>`select action, user_id, details from clinical.audit_log order by id`)
  }

  beforeAll(async () => {
    ;[ai, sink] = await Promise.all([startAiServer(), startSmtpSink()])
    ;[t, offline, unreachable] = await Promise.all([
      startTestApp({ target, env: { ...ai.env, APP_URL: 'http://localhost' } }),
      startTestApp({ target }),
      // mail configured in its environment, and a gateway nothing answers at
      startTestApp({ target, env: { ...sink.env, AI_BASE_URL: `http://127.0.0.1:${closedPort()}/v1`, AI_API_KEY: 'k', AI_DEFAULT_MODEL: TEST_MODEL } }),
    ])
    admin = await visitor(t, 'admin', 'Ada Admin')
  }, 120_000)
  afterAll(async () => {
    await Promise.all([t?.close(), offline?.close(), unreachable?.close()])
    await Promise.all([ai?.close(), sink?.close()])
  })

  describe('admin only', () => {
    const posts: Array<[string, Record<string, string>]> = [
      ['/admin/users/1/verify', {}], ['/admin/users/1/disable', {}], ['/admin/users/1/sessions/end', {}],
      ['/admin/settings/announcement', { enabled: 'true', type: 'info', text: 'x' }], ['/admin/settings/registration', { enabled: 'false' }],
      ['/admin/prompts/prompt.soap', { template: 'x' }], ['/admin/models/toggle', { modelId: 'gpt-4o', enabled: 'true' }],
    ]

    it('signed out: a plain request goes to the sign-in page, an htmx one gets 401', async () => {
      for (const path of ['/admin', ...PAGES, '/admin/users/1', '/admin/models/discover']) {
        const plain = await t.get(path, { headers: { accept: 'text/html' } })
        expect(plain.status, path).toBe(303)
        expect(plain.headers.get('location')).toBe('/')
        expect((await t.get(path, { headers: HTMX })).status, path).toBe(401)
      }
      expect((await t.form('/admin/settings/registration', { enabled: 'false' })).status).toBe(303)
      expect(await stored('registration_enabled')).toBeNull()
    })

    it('a user and a moderator get the 403 page on every page and every form; nothing is written', async () => {
      const before = await t.db.sql`select key, value from clinical.app_config order by key`
      for (const role of ['user', 'moderator'] as const) {
        const who = await visitor(t, role)
        for (const path of ['/admin', ...PAGES, `/admin/users/${admin.id}`, '/admin/models/discover', '/admin/settings/smtp']) {
          const res = await get(path, who)
          expect(res.status, `${path} as ${role}`).toBe(403)
          expect(await res.text()).toContain('<h1>Not allowed</h1>')
        }
        for (const [path, fields] of posts) expect((await form(path, fields, who)).status, `${path} as ${role}`).toBe(403)
      }
      expect(await t.db.sql`select key, value from clinical.app_config order by key`).toEqual(before)
    })

    it('a form posted from another site is refused (403) and changes nothing', async () => {
      const target = await visitor(t, 'user')
      for (const [path, fields] of posts) {
        expect((await form(path.replace('/1/', `/${target.id}/`), fields, admin, EVIL)).status, path).toBe(403)
      }
      expect(await stored('announcement.text')).toBeNull()
      const [row] = await t.db.sql<{ disabled: boolean }>`select disabled from clinical.users where id = ${target.id}`
      expect(row!.disabled).toBe(false)
    })
  })

  describe('the pages', () => {
    it('/admin leads to the users; every page shows its heading in the console frame, and each link and form action answers a GET', async () => {
      const res = await get('/admin', admin)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/admin/users')
      const headings: Record<string, string> = { '/admin/users': 'Users', '/admin/settings': 'Settings', '/admin/prompts': 'Prompts', '/admin/models': 'AI models' }
      const seen = new Set<string>()
      for (const path of [...PAGES, `/admin/users/${admin.id}`]) {
        const body = await page(path)
        expect(body).toContain('<nav class="actions admin-nav" aria-label="Administration">')
        if (headings[path]) {
          expect(body).toContain(`<h1>${headings[path]}</h1>`)
          expect(body).toContain(`<a href="${path}" aria-current="page">`)
        }
        expect(body).not.toMatch(/<script>|\son[a-z]+=|hx-on/)
        for (const address of addresses(body)) seen.add(address)
      }
      expect(seen.size).toBeGreaterThan(20)
      for (const address of seen) {
        const res = await get(address, admin)
        expect(res.status, address).toBeLessThan(400)
      }
    })
  })

  describe('users', () => {
    it('lists every account in words; searches over name and email without JavaScript and as you type; names are escaped', async () => {
      const needle = tag('Zebra')
      const zebra = await insertUser(t, { email: uniqueEmail('zebra'), name: `${needle} Ward`, verified: false })
      const other = await insertUser(t, { email: `${needle.toLowerCase()}@example.test`, name: 'By Email' })
      const hostile = await insertUser(t, { email: uniqueEmail('xss'), name: XSS, disabled: true, role: 'moderator' })
      const list = await page('/admin/users')
      for (const col of ['Name', 'Email', 'Role', 'Email address', 'Two-factor', 'Account', 'Created']) expect(list).toContain(`<th scope="col">${col}</th>`)
      expect(list).toContain(`<a href="/admin/users/${hostile}">${XSS_ESCAPED}</a>`)
      expect(outsideAttributes(list)).not.toContain(XSS)
      expect(list).toContain('<td>Moderator</td>')
      expect(list).toContain('<strong>Disabled</strong>')
      expect(list).toContain('Not verified')
      expect(list).toMatch(/<time datetime="\d{4}-\d\d-\d\dT/)
      expect(list).toContain('hx-get="/admin/users" hx-trigger="input changed delay:200ms, search" hx-target="#users-results"')

      const plain = await page(`/admin/users?q=${needle.toUpperCase()}`)
      expect(plain).toContain('<html')
      expect(plain).toContain(`value="${needle.toUpperCase()}"`)
      expect(plain).toContain(`/admin/users/${zebra}`)
      expect(plain).toContain(`/admin/users/${other}`)
      expect(plain).not.toContain(`/admin/users/${hostile}"`)
      expect(plain).toContain('2 users match')

      const res = await get(`/admin/users?q=${encodeURIComponent(needle.toLowerCase() + '@')}`, admin, HTMX)
      expect(res.status).toBe(200)
      const fragment = await res.text()
      expect(fragment).toStartWith('<div id="users-results">')
      expect(fragment).not.toContain('<html')
      expect(fragment).toContain(`/admin/users/${other}`)
      expect(fragment).not.toContain(`/admin/users/${zebra}"`)
      expect(await (await get(`/admin/users?q=${encodeURIComponent(XSS)}`, admin, HTMX)).text()).toContain(`“${XSS_ESCAPED}”`)

      const detail = await page(`/admin/users/${hostile}`)
      expect(detail).toContain(`<h1>${XSS_ESCAPED}</h1>`)
      expect(outsideAttributes(detail)).not.toContain(XSS)
      expect((await get('/admin/users/999999', admin)).status).toBe(404)
    })

    it('verifies an email address: the action is offered while unverified, and the result is said in words', async () => {
      const id = await insertUser(t, { email: uniqueEmail('unverified'), name: 'Una Verified', verified: false })
      expect(await page(`/admin/users/${id}`)).toContain(`action="/admin/users/${id}/verify"`)
      const res = await form(`/admin/users/${id}/verify`, {})
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/admin/users/${id}?notice=verified`)
      const body = await page(`/admin/users/${id}?notice=verified`)
      expect(body).toContain('The email address is marked as verified.')
      expect(body).not.toContain(`action="/admin/users/${id}/verify"`)
      expect((await t.db.sql<{ email_verified: boolean }>`select email_verified from clinical.users where id = ${id}`)[0]!.email_verified).toBe(true)
    })

    it('disables another user (sign-in refused, their token ends) and enables them again; never one\'s own account', async () => {
      const email = uniqueEmail('disable-me')
      const id = await insertUser(t, { email, name: 'Dee Sable' })
      const session = await signIn(t, email, { ip: freshIp() })
      expect((await form(`/admin/users/${id}/disable`, {})).headers.get('location')).toBe(`/admin/users/${id}?notice=disabled`)
      expect(await page(`/admin/users/${id}?notice=disabled`)).toContain('The account is disabled')
      expect((await t.get('/api/auth/me', { token: session.token, headers: MOBILE, ip: freshIp() })).status).toBe(401)
      const login = await t.post('/api/auth/login', { email, password: CLINICAL_PASSWORD }, { headers: MOBILE, ip: freshIp() })
      expect(login.status).toBe(401)
      expect(await page(`/admin/users/${id}`)).toContain(`action="/admin/users/${id}/enable"`)

      expect((await form(`/admin/users/${id}/enable`, {})).headers.get('location')).toBe(`/admin/users/${id}?notice=enabled`)
      await signIn(t, email, { ip: freshIp() })

      const own = await page(`/admin/users/${admin.id}`)
      expect(own).not.toContain(`action="/admin/users/${admin.id}/disable"`)
      expect(own).toContain('You cannot disable your own account')
      const refused = await form(`/admin/users/${admin.id}/disable`, {})
      expect(refused.status).toBe(422)
      expect(await refused.text()).toContain('You cannot disable your own account')
    })

    it('ends every session of a user after a confirm step; their API token then answers 401', async () => {
      const email = uniqueEmail('sessions')
      const id = await insertUser(t, { email, name: 'Sess Ions' })
      const session = await signIn(t, email, { ip: '10.77.1.2' })
      const detail = await page(`/admin/users/${id}`)
      expect(detail).toContain('<h2 id="user-sessions-title">Active sessions</h2>')
      expect(detail).toContain('10.77.1.2')
      expect(detail).toContain('Mobile app')
      expect(detail).toContain(`href="/admin/users/${id}/sessions/end"`)

      const confirm = await page(`/admin/users/${id}/sessions/end`)
      expect(confirm).toContain(`<form class="rec-confirm" action="/admin/users/${id}/sessions/end" method="post"`)
      const inPlace = await (await get(`/admin/users/${id}/sessions/end`, admin, HTMX)).text()
      expect(inPlace).toStartWith('<section id="user-sessions"')
      expect(inPlace).toContain('Yes, end all sessions')

      const res = await form(`/admin/users/${id}/sessions/end`, {})
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe(`/admin/users/${id}?notice=sessions_ended`)
      expect((await t.get('/api/auth/me', { token: session.token, headers: MOBILE, ip: freshIp() })).status).toBe(401)
      expect(await page(`/admin/users/${id}?notice=sessions_ended`)).toContain('No active sessions')

      // with htmx the section comes back with the notice
      const again = await signIn(t, email, { ip: freshIp() })
      const fragment = await form(`/admin/users/${id}/sessions/end`, {}, admin, HTMX)
      expect(fragment.status).toBe(200)
      expect(await fragment.text()).toContain('The sessions have ended')
      expect((await t.get('/api/auth/me', { token: again.token, headers: MOBILE, ip: freshIp() })).status).toBe(401)
    })

    it('on one\'s own account it ends every session but the current one', async () => {
      const elsewhere = await signIn(t, admin.email, { ip: freshIp() })
      const own = await page(`/admin/users/${admin.id}`)
      expect(own).toContain('(this session)')
      expect(own).toContain('End all other sessions')
      expect((await form(`/admin/users/${admin.id}/sessions/end`, {})).status).toBe(303)
      expect((await t.get('/api/auth/me', { token: elsewhere.token, headers: MOBILE, ip: freshIp() })).status).toBe(401)
      const after = await page(`/admin/users/${admin.id}?notice=sessions_ended`)
      expect(after).toContain('(this session)')
      expect(after).not.toContain('End all other sessions')
    })
  })

  describe('settings', () => {
    it('the announcement saved through the form is the banner of another user\'s page; the preview follows the form', async () => {
      const text = `Downtime tonight ${tag('22:00')} ${XSS}`
      const res = await form('/admin/settings/announcement', { enabled: 'true', type: 'warning', text })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/admin/settings?notice=announcement')
      expect(await page('/admin/settings?notice=announcement')).toContain('The announcement is saved.')
      const clinician = await visitor(t, 'user')
      const directory = await page('/directory', clinician)
      expect(directory).toContain(`<section class="flash announcement warning" aria-label="Announcement"><p>${text.replace(XSS, XSS_ESCAPED)}</p></section>`)
      expect(outsideAttributes(directory)).not.toContain(XSS)

      const preview = await form('/admin/settings/announcement/preview', { type: 'success', text: 'All systems go' }, admin, HTMX)
      expect(preview.status).toBe(200)
      const fragment = await preview.text()
      expect(fragment).toStartWith('<div id="announcement-preview"')
      expect(fragment).toContain('<section class="flash announcement ok" aria-label="Announcement"><p>All systems go</p></section>')
      expect(fragment).toContain('Switched off')
      const settings = await page('/admin/settings')
      expect(settings).toContain('hx-post="/admin/settings/announcement/preview" hx-trigger="input delay:300ms" hx-target="#announcement-preview"')
      expect(settings).toContain('formaction="/admin/settings/announcement/preview"')
      // without JavaScript the Preview button shows the page with the preview; nothing is saved
      const plain = await form('/admin/settings/announcement/preview', { enabled: 'true', type: 'error', text: 'Only a preview' })
      expect(plain.status).toBe(200)
      const plainBody = await plain.text()
      expect(plainBody).toContain('This is a preview: nothing is saved yet.')
      expect(plainBody).toContain('<p>Only a preview</p>')
      expect(await stored('announcement.text')).toBe(text)

      const long = await form('/admin/settings/announcement', { enabled: 'true', type: 'info', text: 'x'.repeat(2001) })
      expect(long.status).toBe(422)
      expect(await long.text()).toMatch(/<span class="field-error" id="announcement-text-error">At most 2000 characters<\/span>/)
      expect(await stored('announcement.text')).toBe(text)
      await form('/admin/settings/announcement', { type: 'info', text: '' })
      expect(await page('/directory', clinician)).not.toContain('class="flash announcement')
    })

    it('SMTP settings are saved with the password sealed and never shown; a test email really arrives; a failing one says why', async () => {
      const res = await form('/admin/settings/smtp', {
        host: '127.0.0.1', port: String(sink.port), user: 'mailer', pass: SMTP_PASS, from: 'Clinic <clinic@example.test>',
      })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/admin/settings?notice=smtp')
      const sealed = await stored('smtp.pass')
      expect(sealed).not.toContain(SMTP_PASS)
      expect(t.booted.core.crypto.openText(sealed!)).toBe(SMTP_PASS)
      const settings = await page('/admin/settings?notice=smtp')
      expect(settings).toContain('The SMTP settings are saved')
      expect(settings).toContain('The SMTP settings stored here')
      expect(settings).toContain(`127.0.0.1:${sink.port}`)
      expect(settings).toContain('A password is stored and is never shown. Leave this empty to keep it.')
      expect(settings).toMatch(/<input id="smtp-pass" name="pass" type="password" value=""/)

      // an empty password keeps the stored one
      expect((await form('/admin/settings/smtp', { host: '127.0.0.1', port: String(sink.port), user: 'mailer', pass: '', from: '' })).status).toBe(303)
      expect(await stored('smtp.pass')).toBe(sealed)

      const to = uniqueEmail('test-mail')
      const sent = await form('/admin/settings/test-email', { to })
      expect(sent.status).toBe(200)
      expect(await sent.text()).toContain(`Test email sent to ${to}`)
      expect((await sink.waitFor((m) => m.to.includes(to))).subject).toBe('Test email')
      const viaHtmx = await form('/admin/settings/test-email', { to }, admin, HTMX)
      expect(await viaHtmx.text()).toStartWith('<div id="test-email">')
      const bad = await form('/admin/settings/test-email', { to: 'not an address' })
      expect(bad.status).toBe(422)
      expect(await bad.text()).toContain('<span class="field-error" id="test-email-to-error">Enter a valid email address</span>')

      const badPort = await form('/admin/settings/smtp', { host: '127.0.0.1', port: '70000', user: '', pass: '', from: '' })
      expect(badPort.status).toBe(422)
      expect(await badPort.text()).toContain('<span class="field-error" id="smtp-port-error">A port number from 1 to 65535</span>')
      const badHost = await form('/admin/settings/smtp', { host: 'not a host!', port: '25', user: '', pass: '', from: '' })
      expect(badHost.status).toBe(422)
      expect(await badHost.text()).toContain('<span class="field-error" id="smtp-host-error">A host name or IP address</span>')

      expect((await form('/admin/settings/smtp', { host: '127.0.0.1', port: String(closedPort()), user: 'mailer', pass: '', from: '' })).status).toBe(303)
      const failed = await (await form('/admin/settings/test-email', { to })).text()
      expect(failed).toContain('Not sent. The mail server refused or could not be reached:')
      expect(failed).toContain('ECONNREFUSED')
      expect(await stored('smtp.pass')).toBe(sealed)
    })

    it('mail configured in the environment: the page says so, and that it wins over settings stored here', async () => {
      const envAdmin = await visitor(unreachable, 'admin')
      expect(await page('/admin/settings', envAdmin, unreachable)).toContain('The server&#x27;s environment (SMTP_* or RESEND_API_KEY)')
      expect((await form('/admin/settings/smtp', { host: 'mail.example.test', port: '2525', user: '', pass: '', from: '' }, envAdmin, {}, unreachable)).status).toBe(303)
      const body = await page('/admin/settings', envAdmin, unreachable)
      expect(body).toContain('<p class="flash warning">SMTP settings are stored here, but the environment&#x27;s mail settings are used: they take precedence</p>')
      expect(body).toContain('value="mail.example.test"')
    })

    it('single sign-on: the secret is kept when the field is left empty, never shown, and removed only on purpose', async () => {
      const fields = { 'oidc.issuer': 'https://idp.example.test/realms/clinic', 'oidc.client_id': 'clinic', 'oidc.button_label': 'Hospital sign-in' }
      expect((await form('/admin/settings/oidc', { ...fields, 'oidc.client_secret': OIDC_SECRET })).headers.get('location')).toBe('/admin/settings?notice=oidc')
      const sealed = await stored('oidc.client_secret')
      expect(t.booted.core.crypto.openText(sealed!)).toBe(OIDC_SECRET)
      const settings = await page('/admin/settings')
      expect(settings).toContain('value="https://idp.example.test/realms/clinic"')
      expect(settings).toContain('A secret is stored and is never shown. Leave this empty to keep it.')

      expect((await form('/admin/settings/oidc', { ...fields, 'oidc.enabled': 'true', 'oidc.client_secret': '' })).status).toBe(303)
      expect(await stored('oidc.client_secret')).toBe(sealed)
      expect(await stored('oidc.enabled')).toBe('true')

      const refused = await form('/admin/settings/oidc', { 'oidc.enabled': 'true', 'oidc.issuer': '', 'oidc.client_id': '', 'oidc.button_label': '' })
      expect(refused.status).toBe(422)
      expect(await refused.text()).toContain('<span class="field-error" id="oidc-enabled-error">')
      const badIssuer = await form('/admin/settings/oidc', { ...fields, 'oidc.issuer': 'ftp://idp' })
      expect(await badIssuer.text()).toContain('id="oidc-issuer-error"')

      expect((await form('/admin/settings/oidc', { ...fields, clear_secret: 'true' })).status).toBe(303)
      expect(await stored('oidc.client_secret')).toBe('')
    })

    it('registration switched off refuses a new account at POST /api/auth/register (403); switched on again', async () => {
      expect((await form('/admin/settings/registration', { enabled: 'false' })).headers.get('location')).toBe('/admin/settings?notice=registration_closed')
      expect(await page('/admin/settings?notice=registration_closed')).toMatch(/id="registration-closed" name="enabled" value="false" checked/)
      const register = () => t.post('/api/auth/register', { name: 'New Person', email: uniqueEmail('newcomer'), password: CLINICAL_PASSWORD }, { headers: MOBILE, ip: freshIp() })
      expect((await register()).status).toBe(403)
      expect((await form('/admin/settings/registration', { enabled: 'maybe' })).status).toBe(422)
      expect((await form('/admin/settings/registration', { enabled: 'true' })).status).toBe(303)
      expect((await register()).status).toBe(200)
    })
  })

  describe('prompts', () => {
    const chats = () => ai.requests.filter((r) => r.path === '/v1/chat/completions')
    const userPrompt = () => chats().at(-1)!.body.messages.find((m: { role: string }) => m.role === 'user').content as string

    it('an override saved through the form is sent by the next generation; reset brings the default back', async () => {
      const clinician = await signIn(t, (await visitor(t, 'user')).email, { ip: freshIp() })
      const shorten = async () => {
        const res = await t.post('/api/shorten', { document: 'Cough for two weeks.', model: TEST_MODEL }, { token: clinician.token, headers: MOBILE, ip: freshIp() })
        expect(res.status).toBe(200)
      }
      const prompts = await page('/admin/prompts')
      expect(prompts).toContain('<h2 id="prompt-shorten-title">Shorten a document</h2>')
      expect(prompts).toContain('Using the default.')
      expect(prompts).toContain('<summary>The default template</summary>')
      expect(prompts).not.toContain('action="/admin/prompts/prompt.shorten/reset"')

      const override = `${tag('OVERRIDE')} Shorten: {{document}}`
      const res = await form('/admin/prompts/prompt.shorten', { template: override })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/admin/prompts?notice=saved#prompt-shorten')
      await shorten()
      expect(userPrompt()).toBe(override.replace('{{document}}', 'Cough for two weeks.'))
      const after = await page('/admin/prompts?notice=saved')
      expect(after).toContain('The prompt is saved')
      expect(after).toContain('action="/admin/prompts/prompt.shorten/reset"')

      const reset = await form('/admin/prompts/prompt.shorten/reset', {}, admin, HTMX)
      expect(reset.status).toBe(200)
      const section = await reset.text()
      expect(section).toStartWith('<section id="prompt-shorten"')
      expect(section).toContain('Using the default.')
      expect(section).toContain('The default is back')
      await shorten()
      expect(userPrompt()).toStartWith(PROMPT_DEFAULTS['prompt.shorten'].slice(0, 40))
      expect(await stored('prompt.shorten')).toBeNull()

      const saved = await form('/admin/prompts/prompt.clarify', { template: 'Clarify {{document}}' }, admin, HTMX)
      expect(await saved.text()).toContain('Changed here: generation uses this template.')
      expect((await form('/admin/prompts/prompt.clarify/reset', {})).headers.get('location')).toBe('/admin/prompts?notice=reset#prompt-clarify')
      const tooLong = await form('/admin/prompts/prompt.clarify', { template: 'x'.repeat(20_001) }, admin, HTMX)
      expect(tooLong.status).toBe(422)
      expect(await tooLong.text()).toContain('id="prompt-clarify-text-error"')
      expect((await form('/admin/prompts/prompt.nope', { template: 'x' })).status).toBe(404)
    })
  })

  describe('AI models', () => {
    const entry = async (id: string) => (await (await t.get('/api/admin/config/models', { token: adminToken, headers: MOBILE, ip: freshIp() })).json() as Array<{ id: string; enabled: boolean; isDefault: boolean }>).find((m) => m.id === id)
    let adminToken = ''

    it('switches entries on and off, changes the default, refuses switching off the default, in words', async () => {
      adminToken = (await signIn(t, admin.email, { ip: freshIp() })).token
      const models = await page('/admin/models')
      for (const col of ['Name', 'Model id', 'Category', 'Status', 'Default', 'Actions']) expect(models).toContain(`<th scope="col">${col}</th>`)
      expect(models).toContain('<strong>Default</strong>')
      expect(models).toContain('aria-label="Switch on: GPT-4o"')

      const on = await form('/admin/models/toggle', { modelId: 'gpt-4o', enabled: 'true' })
      expect(on.headers.get('location')).toBe('/admin/models?notice=on')
      expect((await entry('gpt-4o'))!.enabled).toBe(true)
      const off = await form('/admin/models/toggle', { modelId: 'gpt-4o', enabled: 'false' }, admin, HTMX)
      const offBody = await off.text()
      expect(offBody).toStartWith('<div id="models-content">')
      expect(offBody).toContain('The model is switched off')
      expect((await entry('gpt-4o'))!.enabled).toBe(false)

      expect((await form('/admin/models/default', { modelId: 'o4-mini' })).headers.get('location')).toBe('/admin/models?notice=default')
      expect((await entry('o4-mini'))).toMatchObject({ enabled: true, isDefault: true })
      const refused = await form('/admin/models/toggle', { modelId: 'o4-mini', enabled: 'false' }, admin, HTMX)
      expect(refused.status).toBe(422)
      expect(await refused.text()).toContain('Not changed. The default model cannot be switched off')
      expect((await form('/admin/models/default', { modelId: TEST_MODEL })).status).toBe(303)
    })

    it('adds an entry of one\'s own; a taken id and a malformed one are refused by their fields', async () => {
      const id = tag('clinic-llm')
      expect((await form('/admin/models', { id, name: 'Clinic LLM', category: 'General' })).headers.get('location')).toBe('/admin/models?notice=added')
      expect(await entry(id)).toMatchObject({ enabled: true, isDefault: false })
      expect(await page('/admin/models')).toContain('Clinic LLM</span><span class="muted"> (added here)</span>')
      const taken = await form('/admin/models', { id, name: 'Again', category: 'general' })
      expect(taken.status).toBe(422)
      expect(await taken.text()).toMatch(/<span class="field-error" id="model-id-error">The model &quot;[^&]+&quot; is already in the catalogue<\/span>/)
      const malformed = await form('/admin/models', { id: 'has space', name: '', category: 'x' }, admin, HTMX)
      expect(malformed.status).toBe(422)
      const body = await malformed.text()
      expect(body).toContain('id="model-id-error"')
      expect(body).toContain('id="model-name-error"')
      expect(body).toContain('value="has space"')
    })

    it('discovers the gateway\'s models with Add for those not listed; no gateway and an unreachable one are said in words', async () => {
      const found = await page('/admin/models/discover')
      expect(found).toContain('The gateway serves 2 models.')
      expect(found).toMatch(/<code>test-model<\/code> <span class="muted">Listed<\/span>/)
      expect(found).toContain('aria-label="Add test-embedding"')
      const fragment = await (await get('/admin/models/discover', admin, HTMX)).text()
      expect(fragment).toStartWith('<div id="models-discovered">')

      const add = await form('/admin/models', { id: 'test-embedding', name: 'test-embedding', category: 'general', rediscover: 'true' })
      expect(add.headers.get('location')).toBe('/admin/models/discover?notice=added')
      expect(await page('/admin/models/discover?notice=added')).toMatch(/<code>test-embedding<\/code> <span class="muted">Listed<\/span>/)

      const none = await visitor(offline, 'admin')
      expect(await page('/admin/models/discover', none, offline)).toContain('No AI gateway is configured on this server')
      const down = await visitor(unreachable, 'admin')
      expect(await page('/admin/models/discover', down, unreachable)).toContain('The AI gateway could not be reached')
    })
  })

  describe('audit and secrecy', () => {
    it('every change made through the pages is audited with the admin', async () => {
      const rows = (await auditActions()).filter((r) => r.user_id === admin.id)
      const actions = new Set(rows.map((r) => r.action))
      for (const action of [
        'user_verified', 'user_disabled', 'user_enabled', 'user_sessions_ended', 'config_changed', 'smtp_settings_changed', 'config_test_email',
        'oidc_settings_changed', 'prompt_reset', 'model_enabled_changed', 'model_default_changed', 'model_added',
      ]) expect(actions.has(action), action).toBe(true)
      const everything = JSON.stringify(rows)
      for (const secret of [SMTP_PASS, OIDC_SECRET]) expect(everything).not.toContain(secret)
    })

    it('no page answer of the admin ever held a secret', () => {
      expect(answers.length).toBeGreaterThan(40)
      for (const text of answers) for (const secret of [SMTP_PASS, OIDC_SECRET]) expect(text).not.toContain(secret)
    })
  })
})

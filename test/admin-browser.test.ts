// The admin console in headless Chromium, through the pages alone: the first clinical user (the admin) opens the logs
// after real AI calls and sign-ins, and every chart is drawn (a canvas each, once, again after the API window changes
// and after a boosted navigation, in the dark scheme too); filters the audit log and the sign-in attempts; loads the
// default milestones; then edits the announcement and sees its banner, changes a prompt, points mail at a test SMTP
// server and sends a test email that arrives. Every page on the way has no console error, no serious axe violation
// (light and dark) and no broken link.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Page } from 'playwright-core'
import { TEST_MODEL } from './support/ai-server'
import { useBrowserHarness } from './support/browser'
import { startSmtpSink, type SmtpSink } from './support/smtp'

const ADMIN = { name: 'Console <Admin>', email: 'console-admin@example.test', password: 'Console-admin-password-5' }
const CHARTS = ['chart-usage-calls', 'chart-usage-tokens', 'chart-api-latency', 'chart-api-errors', 'chart-sign-ins']
/** The server stores its API figures every 5 s (API_LOG_FLUSH_MS): wait that long for the latency chart's points. */
const API_FLUSH_WAIT_MS = 5_500

const h = useBrowserHarness()
let sink: SmtpSink
beforeAll(async () => {
  sink = await startSmtpSink()
})
afterAll(() => sink?.close())

/** An API call of the server under test, expected to answer `status`: its JSON. */
async function api(path: string, body: unknown, opts: { token?: string; status?: number } = {}) {
  const res = await fetch(`${h.base}${path}`, {
    method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'x-client': 'mobile', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
  })
  expect(res.status, path).toBe(opts.status ?? 200)
  return res.json() as Promise<Record<string, unknown>>
}

/** The state of the charts on the page: uPlot roots, drawn figures with a canvas, figures still showing their text. */
const charts = (page: Page) => page.evaluate((ids) => ({
  roots: document.querySelectorAll('.uplot').length,
  drawn: ids.filter((id) => document.querySelector(`#${id}[data-drawn="true"] canvas`) !== null),
  fallback: ids.filter((id) => document.querySelector(`#${id} > p`) !== null),
}), CHARTS)

async function signIn(page: Page) {
  await page.goto('/')
  await page.getByLabel('Email').fill(ADMIN.email)
  await page.getByLabel('Password').fill(ADMIN.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL((url) => url.pathname !== '/')
}

describe('the admin console in headless Chromium', () => {
  it('logs with their charts, the audit log and the sign-ins filtered, the default milestones loaded', async () => {
    const problems: string[] = []
    const context = await h.newContext()
    const page = await h.newPage(context)
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto('/register')
    await page.getByLabel('Name').fill(ADMIN.name)
    await page.getByLabel('Email').fill(ADMIN.email)
    await page.getByLabel(/^Password/).fill(ADMIN.password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL('**/account')

    // Usage and sign-ins to show: AI calls through the API, a failed sign-in.
    const { token } = (await api('/api/auth/login', { email: ADMIN.email, password: ADMIN.password })) as { token: string }
    await api('/api/auth/login', { email: ADMIN.email, password: 'Not-the-password-1' }, { status: 401 })
    for (const document of ['a first note to shorten', 'a second note to shorten']) await api('/api/shorten', { document, model: TEST_MODEL }, { token })
    await Bun.sleep(API_FLUSH_WAIT_MS)

    problems.push(...(await h.visit(page, '/admin/logs')))
    await page.locator('#chart-sign-ins canvas').waitFor()
    expect(await charts(page)).toEqual({ roots: CHARTS.length, drawn: CHARTS, fallback: [] })
    expect(await page.locator('#usage-models').getByRole('rowheader', { name: TEST_MODEL }).count()).toBe(1)
    expect(await page.locator('#chart-api-latency').getAttribute('aria-labelledby')).toBe('chart-api-latency-title')
    await h.shot(page, 'admin-logs-light')

    // Another window: htmx swaps the API section, and its charts are drawn again (once each).
    await page.getByLabel('Window').selectOption('day')
    await page.waitForURL('**/admin/logs?window=day')
    await h.htmxSettled(page)
    await page.locator('#chart-api-latency[data-drawn="true"] canvas').waitFor()
    expect(await page.locator('#api-figures').getByText('over the last 24 hours', { exact: false }).count()).toBeGreaterThan(0)
    expect(await charts(page)).toEqual({ roots: CHARTS.length, drawn: CHARTS, fallback: [] })
    problems.push(...(await h.checkPage(page, 'logs, the last 24 hours', 200)))

    // The dark scheme: the charts are drawn again in its colours; a narrow window: they follow its width.
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.waitForFunction(() => {
      const marker = document.querySelector<HTMLElement>('#chart-usage-calls .u-legend .u-series:nth-child(2) .u-marker')
      return marker !== null && marker.style.borderColor === 'rgb(140, 196, 242)'
    })
    expect((await charts(page)).roots).toBe(CHARTS.length)
    await h.shot(page, 'admin-logs-dark')
    await page.emulateMedia({ colorScheme: 'light' })
    await page.setViewportSize({ width: 420, height: 900 })
    await page.waitForFunction(() => {
      const canvas = document.querySelector('#chart-sign-ins canvas')
      const figure = document.querySelector('#chart-sign-ins')
      return canvas !== null && figure !== null && canvas.getBoundingClientRect().width <= figure.getBoundingClientRect().width + 1
        && canvas.getBoundingClientRect().width < 400
    })
    await h.shot(page, 'admin-logs-narrow')
    // the wide table scrolls inside its own region, which the keyboard reaches
    expect(await page.locator('#api-figures .log-table').evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true)
    problems.push(...(await h.checkPage(page, 'logs, narrow', 200)))
    await page.setViewportSize({ width: 1280, height: 900 })

    // The audit log, filtered by action with htmx.
    problems.push(...(await h.visit(page, '/admin/logs/audit')))
    await page.getByLabel('Action').fill('login_failed')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL('**/admin/logs/audit?action=login_failed**')
    await h.htmxSettled(page)
    await page.locator('#audit-results').getByText('1 entry, newest first.').waitFor()
    problems.push(...(await h.checkPage(page, 'audit log, filtered', 200)))
    await h.shot(page, 'admin-audit-filtered')

    // The sign-in attempts, the failed ones.
    problems.push(...(await h.visit(page, '/admin/logs/access')))
    await page.getByLabel('Outcome').selectOption('failed')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL('**/admin/logs/access?**outcome=failed**')
    await h.htmxSettled(page)
    await page.locator('#access-results').getByRole('cell', { name: 'Failed: wrong password' }).waitFor()
    expect(await page.locator('#access-results tbody tr').count()).toBe(1)
    problems.push(...(await h.checkPage(page, 'sign-in attempts, failed', 200)))
    await h.shot(page, 'admin-access-failed')

    // The milestones: none, then the default set loaded (htmx), then again: the same count.
    problems.push(...(await h.visit(page, '/admin/milestones')))
    await page.getByText('No milestones yet').waitFor()
    await h.submit(page, 'Load the default milestones', (res) => res.url().endsWith('/admin/milestones/seed'))
    await page.getByRole('heading', { name: 'By 2 months' }).waitFor()
    const count = await page.locator('#milestone-count').textContent()
    expect(count).toMatch(/^\d+ milestones in 11 age groups\.$/)
    await h.submit(page, 'Load the default milestones', (res) => res.url().endsWith('/admin/milestones/seed'))
    await h.htmxSettled(page)
    expect(await page.locator('#milestone-count').textContent()).toBe(count)
    expect(await page.getByRole('heading', { level: 2, name: /^By / }).count()).toBe(11)
    problems.push(...(await h.checkPage(page, 'milestones, loaded', 200)))
    await h.shot(page, 'admin-milestones')

    // Back to the logs by the console's (boosted) link: the scripts run again and draw every chart once.
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Logs' }).click()
    await page.waitForURL('**/admin/logs')
    await page.locator('#chart-sign-ins[data-drawn="true"] canvas').waitFor()
    await page.locator('#chart-usage-calls[data-drawn="true"] canvas').waitFor()
    expect(await charts(page)).toEqual({ roots: CHARTS.length, drawn: CHARTS, fallback: [] })
    problems.push(...(await h.checkPage(page, 'logs after a boosted navigation', 200)))
    await context.close()
    expect(problems).toEqual([])
  }, 120_000)

  it('settings: the announcement shows as a banner, a prompt is changed, a test email arrives', async () => {
    const problems: string[] = []
    const context = await h.newContext()
    const page = await h.newPage(context)
    await signIn(page)

    problems.push(...(await h.visit(page, '/admin/settings')))
    await page.getByLabel('Show the announcement').check()
    await page.locator('#announcement-text').fill('Planned downtime on Sunday <02:00 UTC>')
    await page.locator('#announcement-preview').getByText('Planned downtime on Sunday <02:00 UTC>').waitFor()
    await h.submit(page, 'Save the announcement', (res) => res.url().endsWith('/admin/settings/announcement'))
    await page.locator('main > section.announcement').getByText('Planned downtime on Sunday <02:00 UTC>').waitFor()
    problems.push(...(await h.checkPage(page, 'settings, announcement saved', 200)))
    // every page shows it
    problems.push(...(await h.visit(page, '/admin/milestones')))
    expect(await page.locator('main > section.announcement').textContent()).toBe('Planned downtime on Sunday <02:00 UTC>')

    problems.push(...(await h.visit(page, '/admin/prompts')))
    const section = page.locator('section.admin-prompt').first()
    const template = section.locator('textarea')
    await template.fill(`${await template.inputValue()}\nKeep every sentence short.`)
    await section.getByRole('button', { name: /^Save / }).click()
    await section.getByText('The prompt is saved').waitFor()
    await h.htmxSettled(page)
    await page.locator('section.admin-prompt').first().getByText('Changed here').waitFor()
    problems.push(...(await h.checkPage(page, 'prompts, one changed', 200)))
    await h.shot(page, 'admin-prompts-changed')

    problems.push(...(await h.visit(page, '/admin/settings')))
    await page.locator('#smtp-host').fill('127.0.0.1')
    await page.locator('#smtp-port').fill(String(sink.port))
    await page.locator('#smtp-from').fill('Clinic <clinic@example.test>')
    await h.submit(page, 'Save the SMTP settings', (res) => res.url().endsWith('/admin/settings/smtp'))
    await page.locator('#mail-status').getByText(`127.0.0.1:${sink.port}`).waitFor()
    await page.locator('#test-email-to').fill('mail-check@example.test')
    await h.submit(page, 'Send a test email', (res) => res.url().endsWith('/admin/settings/test-email'))
    await page.locator('#test-email .flash.ok').waitFor()
    expect((await sink.waitFor((m) => m.to.includes('mail-check@example.test'))).subject).toBe('Test email')
    problems.push(...(await h.checkPage(page, 'settings, test email sent', 200)))
    await h.shot(page, 'admin-settings-mail')
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)
})

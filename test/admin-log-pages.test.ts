// The admin console's logs and milestones pages, through the real app on each database target with a clock the tests
// move: admins only (403 page for a user or a moderator, the sign-in page when signed out); the logs page's chart
// data (the JSON blocks admin-charts.js reads) matching the usage rows of real generation calls against the test
// gateway, the API figures of real requests and the sign-ins; the API window as a page and as the htmx fragment;
// the audit and sign-in filters as a page and as a fragment, with their messages; the milestones grouped by age,
// loaded twice as one set, and a cross-site load refused.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { apiSeries } from '../plugins/admin/services/logs'
import { OUTCOME_WORDS, type ChartData } from '../plugins/admin/views/logs'
import { MILESTONE_AGES_MONTHS, MILESTONE_DOMAIN_LABELS, milestoneAgeLabel } from '../plugins/clinical/defaults/milestones'
import { addCustomModel } from '../plugins/clinical/services/models'
import { defaultMilestones } from '../plugins/clinical/services/milestones'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  CLINICAL_PASSWORD, clinicalState, cookieValue, EVIL, flushAudit, freshIp, HTMX, insertUser, MOBILE, outsideAttributes, signIn, uniqueEmail,
  userWithSession, WEB, XSS, XSS_ESCAPED, type SignedIn,
} from './support/clinical'

setDefaultTimeout(60_000)

const DAY_MS = 86_400_000
const PAGES = ['/admin/logs', '/admin/logs/audit', '/admin/logs/access', '/admin/milestones', '/admin/milestones/seed']
/** Requests are measured just after their response: let that run before a flush. */
const measured = () => new Promise((resolve) => setImmediate(resolve))
const marker = (tag: string) => `${tag}_${crypto.randomUUID().slice(0, 8)}`
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The JSON block a chart is drawn from. */
function chartData(body: string, id: string): ChartData {
  const block = new RegExp(`<script type="application/json" id="${id}-data">([^<]*)</script>`).exec(body)
  expect(block, id).not.toBeNull()
  return JSON.parse(block![1]!) as ChartData
}
/** A series' value on a day (or at an instant) of the chart. */
const valueAt = (chart: ChartData, label: string, atMs: number) => {
  const series = chart.series.find((s) => s.label === label)
  expect(series, label).toBeDefined()
  const i = chart.x.indexOf(atMs / 1000)
  expect(i, `${label} at ${new Date(atMs).toISOString()}`).toBeGreaterThanOrEqual(0)
  return series!.values[i]
}

for (const target of databaseTargets()) {
  describe(`admin log and milestone pages [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    const clock = { now: Date.parse('2030-06-15T12:00:30Z') }
    let admin = ''
    let clinician: SignedIn & { email: string }

    const adminEmail = uniqueEmail('pages-admin')
    /** Signs in through the page form: the Cookie header of the web session. */
    const pageSignIn = async (email: string) => {
      const res = await t.form('/login', { email, password: CLINICAL_PASSWORD }, { ip: freshIp() })
      expect(res.status).toBe(303)
      return `app_auth=${cookieValue(res)}`
    }
    const pageUser = async (role: 'admin' | 'moderator' | 'user', email = uniqueEmail(`pages-${role}`)) => {
      await insertUser(t, { email, role, name: `Page ${role}` })
      return pageSignIn(email)
    }
    /** The clock moved past the web session's idle limit: the admin signs in again. */
    const moveClock = async (ms: number) => {
      clock.now += ms
      admin = await pageSignIn(adminEmail)
    }
    const get = (path: string, cookie = admin, headers: Record<string, string> = {}) =>
      t.get(path, { headers: { accept: 'text/html', cookie, ...headers }, ip: freshIp() })
    const page = async (path: string, headers: Record<string, string> = {}) => {
      const res = await get(path, admin, headers)
      const body = await res.text()
      expect(res.status, `${path}: ${body.slice(0, 300)}`).toBe(200)
      return body
    }
    const generate = (path: string, body: Record<string, unknown>) => t.post(path, body, { token: clinician.token, ip: freshIp(), headers: MOBILE })
    const flushApi = async () => {
      await measured()
      await t.booted.core.metrics.apiLog.flush()
    }

    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: ai.env, boot: { now: () => clock.now } })
      admin = await pageUser('admin', adminEmail)
      clinician = await userWithSession(t, 'user')
    })
    afterAll(async () => {
      await t.close()
      await ai.close()
    })

    it('admins only: a user or a moderator gets the 403 page; signed out, the sign-in page', async () => {
      const user = await pageUser('user')
      const moderator = await pageUser('moderator')
      for (const path of PAGES) {
        for (const cookie of [user, moderator]) {
          const res = await get(path, cookie)
          expect(res.status, path).toBe(403)
          expect(await res.text()).toContain('<h1>Not allowed</h1>')
        }
        const out = await t.get(path, { headers: { accept: 'text/html' } })
        expect(out.status, path).toBe(303)
        expect(out.headers.get('location')).toBe('/')
      }
      expect((await t.form('/admin/milestones/seed', {}, { headers: { cookie: moderator } })).status).toBe(403)
      expect((await t.form('/admin/milestones/seed', {})).status).toBe(303)
      expect(await t.db.sql`select id from clinical.milestones limit 1`).toEqual([])
    })

    it('the logs page: the charts hold the usage of real generation calls, the API figures of real requests and the sign-ins', async () => {
      const other = `custom/${marker('model')}`
      await addCustomModel(t.booted.core, { id: other, name: 'Other model', category: 'general' })
      const soap = (transcript: string) => ({ transcript, patientAge: '30 years', patientGender: 'female', type: 'follow-up visit', model: TEST_MODEL })
      const before = clock.now
      expect((await generate('/api/shorten', { document: 'two days ago', model: TEST_MODEL })).status).toBe(200)
      clock.now += 2 * DAY_MS + 3_600_000 // a fresh day, and an API window with nothing of the sign-ins in it
      admin = await pageSignIn(adminEmail)
      await flushApi()
      clock.now += 60_000
      const start = clock.now
      for (let i = 0; i < 2; i++) expect((await generate('/api/generate-soap', soap(`cough ${i}`))).status).toBe(200)
      expect((await generate('/api/shorten', { document: 'a long note', model: other })).status).toBe(200)
      ai.failNext(500)
      expect((await generate('/api/generate-soap', soap('fails'))).status).toBe(502)
      for (let i = 0; i < 2; i++) expect((await t.get('/api/health', { ip: freshIp() })).status).toBe(200)
      expect((await t.post('/api/auth/login', { email: clinician.email, password: 'wrong-password-1' }, { headers: MOBILE, ip: freshIp() })).status).toBe(401)
      await flushApi()
      clock.now += 60_000 // the page's own request falls in the next minute

      const body = await page('/admin/logs')
      expect(body).toContain('<script src="/static/uplot/uPlot.iife.min.js" defer></script><script src="/static/charts.js" defer></script><script src="/static/admin-charts.js" defer></script>')
      expect(body).toContain('<link rel="stylesheet" href="/static/uplot/uPlot.min.css"/>')
      // no inline script: each one is a file or a JSON block
      for (const tag of body.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/ src="|type="application\/json"/)
      expect(body).toContain('<a href="/admin/logs" aria-current="page">Logs</a>')

      // usage: every day of 30, each model's calls and tokens as the usage rows have them
      const calls = chartData(body, 'chart-usage-calls')
      const tokens = chartData(body, 'chart-usage-tokens')
      expect(calls.x).toHaveLength(30)
      expect(calls.x.at(-1)).toBe(Date.parse(`${dayOf(clock.now)}T00:00:00Z`) / 1000)
      expect(calls.series.map((s) => s.label)).toEqual([TEST_MODEL, other])
      const rows = await t.db.sql<{ day: string; model: string; n: number; tokens: number }>`
        select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, model, count(*)::int as n,
               coalesce(sum(coalesce(tokens_in, 0) + coalesce(tokens_out, 0)), 0)::float8 as tokens
        from clinical.ai_usage group by 1, 2`
      expect(rows.reduce((n, r) => n + r.n, 0)).toBe(5)
      for (const r of rows) {
        expect(valueAt(calls, r.model, Date.parse(`${r.day}T00:00:00Z`))).toBe(r.n)
        expect(valueAt(tokens, r.model, Date.parse(`${r.day}T00:00:00Z`))).toBe(r.tokens)
      }
      expect(valueAt(calls, TEST_MODEL, Date.parse(`${dayOf(before)}T00:00:00Z`))).toBe(1)
      expect(valueAt(calls, TEST_MODEL, Date.parse(`${dayOf(start)}T00:00:00Z`))).toBe(3)
      expect(calls.series.flatMap((s) => s.values).reduce((n: number, v) => n + (v ?? 0), 0)).toBe(5)
      expect(body).toContain(`5 calls in the last 30 days (${TEST_MODEL} 4, ${other} 1); the busiest day ${Number(dayOf(start).slice(8))} `)
      expect(body).toMatch(new RegExp(`<th scope="row">${TEST_MODEL}</th><td class="num">4</td>`))
      expect(body).toContain('<th scope="row"><code>/api/generate-soap</code></th><td class="num">3</td>')

      // the API: the minute of the requests, as the API log has it; the per-route table
      const latency = chartData(body, 'chart-api-latency')
      const errors = chartData(body, 'chart-api-errors')
      const minute = Math.floor(start / 60_000) * 60_000
      const [point] = (await apiSeries(t.booted.core, { service: 'clinical', minutes: 60, stepMinutes: 1 })).filter((p) => Date.parse(p.at) === minute)
      expect(point).toMatchObject({ count: 7, errors: 1 })
      expect(valueAt(errors, 'Error rate', minute)).toBe(Math.round((1 / 7) * 1000) / 10)
      expect(valueAt(latency, 'p50', minute)).toBe(point!.p50)
      expect(valueAt(latency, 'p95', minute)).toBe(point!.p95)
      expect(valueAt(latency, 'p50', minute + 60_000)).toBeNull() // nothing stored for the page's own minute yet
      expect(latency.x).toHaveLength(61)
      expect(body).toMatch(/<th scope="row"><code>\/api\/generate-soap<\/code><\/th><td>POST<\/td><td class="num">3<\/td><td class="num">1<\/td><td class="num">33.3%<\/td>/)
      const window = await apiSeries(t.booted.core, { service: 'clinical', minutes: 60, stepMinutes: 1 })
      expect(body).toContain(`1 of ${window.reduce((n, p) => n + p.count, 0)} requests in the last hour had a server error`)

      // sign-ins: each day and outcome as the access log has it
      const signIns = chartData(body, 'chart-sign-ins')
      expect(signIns.series.map((s) => s.label)).toEqual(['Signed in', 'Signed in with single sign-on', 'Failed', 'Blocked'])
      const access = await t.db.sql<{ day: string; outcome: keyof typeof OUTCOME_WORDS; n: number }>`
        select to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, outcome, count(*)::int as n from clinical.access_log group by 1, 2`
      expect(access.length).toBeGreaterThan(0)
      for (const r of access) expect(valueAt(signIns, OUTCOME_WORDS[r.outcome], Date.parse(`${r.day}T00:00:00Z`))).toBe(r.n)
      expect(valueAt(signIns, 'Failed', Date.parse(`${dayOf(start)}T00:00:00Z`))).toBe(1)
      // each chart: an image named by its heading and described by its summary
      for (const id of ['chart-usage-calls', 'chart-usage-tokens', 'chart-api-latency', 'chart-api-errors', 'chart-sign-ins']) {
        expect(body).toContain(`<div id="${id}" class="chart-plot" role="img" aria-labelledby="${id}-title" aria-describedby="${id}-summary" data-chart="${id}-data">`)
        expect(body).toContain(`<figcaption id="${id}-summary">`)
      }
    })

    it('the API window: a page for the last 24 hours or 7 days, and the API section alone for htmx', async () => {
      const day = await page('/admin/logs?window=day')
      expect(day).toContain('<option value="day" selected>Last 24 hours</option>')
      const x = chartData(day, 'chart-api-latency').x
      expect(x[1]! - x[0]!).toBe(15 * 60)
      const res = await get('/admin/logs?window=week', admin, HTMX)
      expect(res.status).toBe(200)
      expect(res.headers.get('vary')).toContain('HX-Request')
      const fragment = await res.text()
      expect(fragment).toStartWith('<section id="api-figures"')
      expect(fragment).not.toContain('<html')
      expect(fragment).toContain('over the last 7 days')
      const week = chartData(fragment, 'chart-api-errors').x
      expect(week[1]! - week[0]!).toBe(2 * 3600)
      expect(await page('/admin/logs?window=century')).toContain('<option value="hour" selected>Last hour</option>')
    })

    it('the audit log: filters by action, user (id or email), days and limit; the page and the htmx results; bad filters said', async () => {
      const audit = clinicalState(t).audit
      const action = marker('page_action')
      const ids: Record<string, number> = { admin: 0, clinician: clinician.user.id }
      ids.admin = (await t.db.sql<{ id: number }>`select id from clinical.users where role = 'admin' limit 1`)[0]!.id
      const day1 = clock.now
      audit.write({ action, userId: clinician.user.id, ip: '10.7.0.1', details: { note: `first ${XSS}` } })
      await moveClock(DAY_MS)
      audit.write({ action, userId: ids.admin, ip: '10.7.0.2', details: { note: 'second' } })
      clock.now += 60_000
      audit.write({ action, userId: clinician.user.id, ip: '10.7.0.3', details: { note: 'third' } })
      await flushAudit(t)

      const all = await page(`/admin/logs/audit?action=${action}`)
      expect(all).toContain('3 entries, newest first.')
      const order = [...all.matchAll(/<td>(10\.7\.0\.\d)<\/td>/g)].map((m) => m[1])
      expect(order).toEqual(['10.7.0.3', '10.7.0.2', '10.7.0.1'])
      expect(all).toContain(`value="${action}"`)
      expect(all).toContain(XSS_ESCAPED)
      expect(outsideAttributes(all)).not.toContain(XSS)
      expect(all).toContain(`<td>${clinician.email}</td>`)

      const byEmail = await page(`/admin/logs/audit?action=${action}&user=${encodeURIComponent(clinician.email.toUpperCase())}`)
      expect([...byEmail.matchAll(/<td>(10\.7\.0\.\d)<\/td>/g)].map((m) => m[1])).toEqual(['10.7.0.3', '10.7.0.1'])
      const byId = await page(`/admin/logs/audit?action=${action}&user=${ids.admin}`)
      expect([...byId.matchAll(/<td>(10\.7\.0\.\d)<\/td>/g)].map((m) => m[1])).toEqual(['10.7.0.2'])
      expect(await page(`/admin/logs/audit?action=${action}&user=nobody%40example.test`)).toContain('No entries match the filters.')
      const firstDay = await page(`/admin/logs/audit?action=${action}&from=${dayOf(day1)}&to=${dayOf(day1)}`)
      expect([...firstDay.matchAll(/<td>(10\.7\.0\.\d)<\/td>/g)].map((m) => m[1])).toEqual(['10.7.0.1'])
      expect(await page(`/admin/logs/audit?action=${action}&limit=2`)).toContain('The newest 2 entries: narrow the filters')

      const res = await get(`/admin/logs/audit?action=${action}&from=${dayOf(clock.now)}`, admin, HTMX)
      expect(res.status).toBe(200)
      const fragment = await res.text()
      expect(fragment).toStartWith('<div id="audit-results">')
      expect([...fragment.matchAll(/<td>(10\.7\.0\.\d)<\/td>/g)].map((m) => m[1])).toEqual(['10.7.0.3', '10.7.0.2'])

      const bad = await get('/admin/logs/audit?action=a%20b&limit=0&from=yesterday', admin)
      expect(bad.status).toBe(422)
      const badBody = await bad.text()
      expect(badBody).toMatch(/id="f-action"[^>]*aria-invalid="true"/)
      expect(badBody).toContain('<span class="field-error" id="f-limit-error">Enter a whole number from 1 to 1000</span>')
      expect(badBody).toContain('<span class="field-error" id="f-from-error">Enter a day as YYYY-MM-DD</span>')
      const reversed = await get(`/admin/logs/audit?from=${dayOf(clock.now)}&to=${dayOf(day1 - DAY_MS)}`, admin, HTMX)
      expect(reversed.status).toBe(422)
      expect(await reversed.text()).toContain('Check the filters: Choose a day on or after the From day')
    })

    it('the sign-in attempts: time, user, address, client and outcome in words; filters as a page and as htmx results', async () => {
      const email = uniqueEmail('access-page')
      await insertUser(t, { email, name: 'Access <Page>' })
      clock.now += 60_000
      await signIn(t, email, { headers: WEB, ip: '10.8.0.1' })
      clock.now += 60_000
      expect((await t.post('/api/auth/login', { email, password: 'wrong-password-1' }, { headers: MOBILE, ip: '10.8.0.2' })).status).toBe(401)

      const body = await page(`/admin/logs/access?user=${encodeURIComponent(email)}`)
      expect(body).toContain('2 attempts, newest first.')
      const rows = [...body.matchAll(/<tr id="access-\d+" class="log-(\w+)">([\s\S]*?)<\/tr>/g)].map((m) => m[2]!)
      expect(rows).toHaveLength(2)
      expect(rows[0]).toContain('<td>10.8.0.2</td><td>Mobile app</td><td>Failed: wrong password</td>')
      expect(rows[1]).toContain('<td>10.8.0.1</td><td>Web browser</td><td>Signed in</td>')
      expect(rows[1]).toContain('<span>Access &lt;Page&gt;</span>')
      expect(rows[1]).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC<\/time>/)

      const res = await get(`/admin/logs/access?user=${encodeURIComponent(email)}&outcome=failed&client=mobile`, admin, HTMX)
      const fragment = await res.text()
      expect(fragment).toStartWith('<div id="access-results">')
      expect(fragment).toContain('1 attempt, newest first.')
      expect(fragment).toContain('Failed: wrong password')
      expect(await page(`/admin/logs/access?user=${encodeURIComponent(email)}&client=web&from=${dayOf(clock.now)}`)).toContain('1 attempt, newest first.')
      const bad = await get('/admin/logs/access?outcome=maybe&user=not%20a%20user', admin)
      expect(bad.status).toBe(422)
      const badBody = await bad.text()
      expect(badBody).toContain('id="f-outcome-error">Choose an outcome from the list</span>')
      expect(badBody).toContain('id="f-user-error">Enter a user id (a number) or an email address</span>')
    })

    it('every link, form action and script of the logs and milestones pages answers a GET below 400', async () => {
      const seen = new Set<string>()
      for (const path of ['/admin/logs', '/admin/logs?window=week', '/admin/logs/audit', '/admin/logs/access', '/admin/milestones']) {
        const body = await page(path)
        for (const [, address] of body.matchAll(/\s(?:href|action|src)="(\/[^"#]*)/g)) {
          const url = address!.replace(/&amp;/g, '&')
          if (url === '/logout' || seen.has(url)) continue
          seen.add(url)
          expect((await get(url)).status, `${url} (on ${path})`).toBeLessThan(400)
        }
      }
      expect(seen).toContain('/admin/milestones/seed')
      expect(seen).toContain('/static/charts.js')
      expect(seen).toContain('/static/admin-charts.js')
    })

    it('milestones: grouped by age with every age group and domain; loading twice keeps one set; a cross-site load is refused', async () => {
      expect(await page('/admin/milestones')).toContain('No milestones yet: load the default set below.')
      expect((await t.form('/admin/milestones/seed', {}, { headers: { cookie: admin, ...EVIL } })).status).toBe(403)
      expect(await t.db.sql`select id from clinical.milestones limit 1`).toEqual([])

      const seeded = await t.form('/admin/milestones/seed', {}, { headers: { cookie: admin } })
      expect(seeded.status).toBe(303)
      expect(seeded.headers.get('location')).toBe('/admin/milestones?notice=seeded')
      const count = defaultMilestones().length
      const ids = await t.db.sql<{ id: number }>`select id from clinical.milestones order by id`
      expect(ids).toHaveLength(count)

      const body = await page('/admin/milestones?notice=seeded')
      expect(body).toContain('The default milestones are loaded. Loading them again does not duplicate them.')
      expect(body).toContain(`${count} milestones in ${MILESTONE_AGES_MONTHS.length} age groups.`)
      expect(body).toContain('<form class="stack ms-seed" action="/admin/milestones/seed" method="post" hx-post="/admin/milestones/seed"')
      const headings = [...body.matchAll(/<h2 id="age-(\d+)-title">By ([^<]+)<\/h2>/g)].map((m) => [Number(m[1]), m[2]])
      expect(headings).toEqual(MILESTONE_AGES_MONTHS.map((age) => [age, milestoneAgeLabel(age)]))
      const nine = body.slice(body.indexOf('<section class="ms-age" id="age-9"'), body.indexOf('<section class="ms-age" id="age-12"'))
      expect([...nine.matchAll(/<h3>([^<]+)<\/h3>/g)].map((m) => m[1])).toEqual(Object.values(MILESTONE_DOMAIN_LABELS))
      expect(nine).toContain('<li id="milestone-')

      // again, with htmx: the content only, the same set
      const again = await t.form('/admin/milestones/seed', {}, { headers: { cookie: admin, ...HTMX } })
      expect(again.status).toBe(200)
      const fragment = await again.text()
      expect(fragment).toStartWith('<div id="milestones">')
      expect(fragment).toContain('Loading them again does not duplicate them.')
      expect(fragment).toContain(`${count} milestones in`)
      expect(await t.db.sql<{ id: number }>`select id from clinical.milestones order by id`).toEqual(ids)
      await flushAudit(t)
      expect(await t.db.sql`select action from clinical.audit_log where action = 'milestones_seeded'`).toHaveLength(2)

      // the form's address answers a GET with its page
      const res = await get('/admin/milestones/seed')
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/admin/milestones')
    })
  })
}

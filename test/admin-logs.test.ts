// Spec 3, Logs (admin only), through the real app on each database target with a clock the tests move: the usage
// summary from real generation calls against the test gateway (by model and endpoint, the last 30 days only), the
// audit log's filters after the writer flushed, the API figures per route after a known number of requests (errors
// and percentiles included), the access entries of successful, failed and blocked sign-ins from web and mobile
// clients, the chart series, and each log's retention sweep deleting exactly what is past retention.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { Cron } from 'croner'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { ACCESS_LIMIT_MAX, AUDIT_LIMIT_DEFAULT, AUDIT_LIMIT_MAX } from '../plugins/admin/models/logs'
import {
  ACCESS_RETENTION_DAYS, API_METRICS_RETENTION_DAYS, apiSeries, AUDIT_RETENTION_DAYS, signInsByDay, usageByDay, USAGE_RETENTION_DAYS,
} from '../plugins/admin/services/logs'
import { addCustomModel } from '../plugins/clinical/services/models'
import { recordUsage } from '../plugins/clinical/services/usage'
import { openDb } from '../src/core/db'
import { LATENCY_BOUNDS_MS, latencyPercentile } from '../src/core/metrics'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  CLINICAL_PASSWORD, clinicalState, flushAudit, freshIp, insertUser, MOBILE, signIn, uniqueEmail, userWithSession, WEB, type SignedIn,
} from './support/clinical'

setDefaultTimeout(30_000)

const DAY_MS = 86_400_000
/** Requests are measured just after their response (Elysia's after-response hook): let that run before a flush. */
const measured = () => new Promise((resolve) => setImmediate(resolve))
const marker = (tag: string) => `${tag}_${crypto.randomUUID().slice(0, 8)}`
const ROUTES: Array<[string, string]> = [['GET', '/api/logs/usage'], ['GET', '/api/logs/audit'], ['GET', '/api/logs/api'], ['GET', '/api/logs/access']]

describe('latency percentiles from the histogram', () => {
  it('interpolates inside the slot that holds the rank; the overflow slot answers the highest bound; empty is null', () => {
    const counts = new Array(LATENCY_BOUNDS_MS.length + 1).fill(0)
    expect(latencyPercentile(counts, 0.5)).toBeNull()
    const slot100 = LATENCY_BOUNDS_MS.indexOf(100)
    counts[slot100] = 4 // four requests between 50 and 100 ms
    expect(latencyPercentile(counts, 0.5)).toBe(75)
    expect(latencyPercentile(counts, 1)).toBe(100)
    counts[LATENCY_BOUNDS_MS.length] = 4 // and four slower than every bound
    expect(latencyPercentile(counts, 0.99)).toBe(LATENCY_BOUNDS_MS.at(-1)!)
  })
})

describe('API log at shutdown', () => {
  it('booted.shutdown() stores the figures still held in memory', async () => {
    // A database whose close() is left to the test, so it can be read after the app shut down.
    const db = await openDb({ url: 'memory://', dataDir: tmpdir() })
    const t = await startTestApp({ boot: { db: { ...db, close: async () => {} } } })
    for (let i = 0; i < 3; i++) expect((await t.get('/api/health', { ip: freshIp() })).status).toBe(200)
    await measured()
    await t.booted.shutdown()
    const rows = await db.sql<{ n: number }>`select sum(requests)::int as n from core.api_metrics where route = '/api/health'`
    expect(rows).toEqual([{ n: 3 }])
    await db.close()
    rmSync(t.dataDir, { recursive: true, force: true })
  })
})

for (const target of databaseTargets()) {
  describe(`admin logs [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    const clock = { now: Date.parse('2030-06-15T12:00:00Z') }
    let admin: SignedIn & { email: string }
    let clinician: SignedIn & { email: string }

    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: ai.env, boot: { now: () => clock.now } })
      admin = await userWithSession(t, 'admin')
      clinician = await userWithSession(t, 'user')
    })
    afterAll(async () => {
      await t.close()
      await ai.close()
    })

    const get = (path: string, token = admin.token, ip = freshIp()) => t.get(path, { token, ip, headers: MOBILE })
    const json = async <T = any>(path: string): Promise<T> => {
      const res = await get(path)
      const body = await res.json()
      expect(res.status, JSON.stringify(body)).toBe(200)
      return body as T
    }
    const soap = (transcript: string) => ({ transcript, patientAge: '30 years', patientGender: 'female', type: 'follow-up visit', model: TEST_MODEL })
    const generate = (path: string, body: Record<string, unknown>) =>
      t.post(path, body, { token: clinician.token, ip: freshIp(), headers: MOBILE })

    it('every log answers 401 without a token and 403 to a user or a moderator', async () => {
      const moderator = await userWithSession(t, 'moderator')
      for (const [, path] of ROUTES) {
        expect((await t.get(path, { ip: freshIp() })).status, path).toBe(401)
        for (const who of [clinician, moderator]) {
          const res = await get(path, who.token)
          expect(res.status, `${path} as ${who.user.role}`).toBe(403)
          expect(await res.json()).toMatchObject({ success: false })
        }
      }
    })

    it('usage summary: real generation calls by model (with tokens) and by endpoint; calls older than 30 days are left out', async () => {
      const other = `custom/${marker('model')}`
      await addCustomModel(t.booted.core, { id: other, name: 'Other model', category: 'general' })
      expect((await generate('/api/shorten', { document: 'old call', model: TEST_MODEL })).status).toBe(200)
      clock.now += 31 * DAY_MS
      for (let i = 0; i < 2; i++) expect((await generate('/api/generate-soap', soap(`cough ${i}`))).status).toBe(200)
      expect((await generate('/api/shorten', { document: 'a long note', model: other })).status).toBe(200)
      ai.failNext(500)
      expect((await generate('/api/generate-soap', soap('fails'))).status).toBe(502)

      const tokensOf = async (model: string, days: number) => {
        const [row] = await t.db.sql<{ n: number }>`
          select coalesce(sum(coalesce(tokens_in, 0) + coalesce(tokens_out, 0)), 0)::float8 as n from clinical.ai_usage
          where model = ${model} and created_at >= ${new Date(clock.now - days * DAY_MS).toISOString()}`
        return row!.n
      }
      const summary = await json('/api/logs/usage')
      expect(summary).toEqual({
        days: 30,
        byModel: [
          { model: TEST_MODEL, count: 3, tokens: await tokensOf(TEST_MODEL, 30) },
          { model: other, count: 1, tokens: await tokensOf(other, 30) },
        ],
        byEndpoint: [{ endpoint: '/api/generate-soap', count: 3 }, { endpoint: '/api/shorten', count: 1 }],
      })
      expect(summary.byModel[0].tokens).toBeGreaterThan(0)
      // a longer window reaches the old call
      const longer = await json(`/api/logs/usage?days=40`)
      expect(longer.byModel.find((m: { model: string }) => m.model === TEST_MODEL).count).toBe(4)
      expect(longer.byEndpoint).toContainEqual({ endpoint: '/api/shorten', count: 2 })
      expect((await get(`/api/logs/usage?days=${USAGE_RETENTION_DAYS + 1}`)).status).toBe(400)

      const days = await usageByDay(t.booted.core, 40)
      const today = new Date(clock.now).toISOString().slice(0, 10)
      const then = new Date(clock.now - 31 * DAY_MS).toISOString().slice(0, 10)
      expect(days.filter((d) => d.day === then)).toEqual([{ day: then, model: TEST_MODEL, count: 1, tokens: expect.any(Number) }])
      expect(days.filter((d) => d.day === today).map((d) => [d.model, d.count])).toEqual([[TEST_MODEL, 3], [other, 1]])
    })

    it('audit: newest first, filtered by action, user and time range, with a default and a maximum limit', async () => {
      const audit = clinicalState(t).audit
      const action = marker('test_action')
      const times: number[] = []
      const writes: Array<[string, number]> = [[action, admin.user.id], [`${action}_other`, clinician.user.id], [action, clinician.user.id], [action, admin.user.id]]
      for (const [a, userId] of writes) {
        clock.now += 60_000
        times.push(clock.now)
        audit.write({ action: a, userId, ip: '10.1.2.3', details: { note: 'ok', email: 'someone@example.test' } })
      }
      await flushAudit(t)

      const all = await json<any[]>(`/api/logs/audit?action=${action}`)
      expect(all.map((e) => [e.userId, Date.parse(e.at)])).toEqual([[admin.user.id, times[3]], [clinician.user.id, times[2]], [admin.user.id, times[0]]])
      expect(Object.keys(all[0]).sort()).toEqual(['action', 'at', 'details', 'id', 'ip', 'userEmail', 'userId'])
      expect(all[0]).toMatchObject({ action, userEmail: admin.email, ip: '10.1.2.3' })
      expect(all[0].details).toContain('[EMAIL]')
      expect(all[0].details).not.toContain('someone@example.test')

      expect((await json<any[]>(`/api/logs/audit?action=${action}&userId=${admin.user.id}`)).map((e) => Date.parse(e.at))).toEqual([times[3]!, times[0]!])
      const from = new Date(times[1]!).toISOString()
      const to = new Date(times[3]!).toISOString()
      expect((await json<any[]>(`/api/logs/audit?action=${action}&from=${from}&to=${to}`)).map((e) => Date.parse(e.at))).toEqual([times[2]!])
      expect((await json<any[]>(`/api/logs/audit?userId=${clinician.user.id}&from=${from}&to=${to}`)).map((e) => e.action))
        .toEqual([action, `${action}_other`])
      expect((await json<any[]>(`/api/logs/audit?action=${action}&limit=1`)).map((e) => Date.parse(e.at))).toEqual([times[3]!])

      // the writer's own entries are there too: the sign-ins of the users
      const logins = await json<any[]>(`/api/logs/audit?action=login&userId=${clinician.user.id}`)
      expect(logins[0].details).toContain('mobile')

      const many = marker('test_many')
      for (let i = 0; i < AUDIT_LIMIT_DEFAULT + 5; i++) audit.write({ action: many })
      await flushAudit(t)
      expect(await json<any[]>(`/api/logs/audit?action=${many}`)).toHaveLength(AUDIT_LIMIT_DEFAULT)
      expect(await json<any[]>(`/api/logs/audit?action=${many}&limit=${AUDIT_LIMIT_MAX}`)).toHaveLength(AUDIT_LIMIT_DEFAULT + 5)

      for (const bad of [`limit=${AUDIT_LIMIT_MAX + 1}`, 'limit=0', 'from=yesterday', `from=${to}&to=${from}`, 'userId=abc', 'action=a%20b']) {
        const res = await get(`/api/logs/audit?${bad}`)
        expect(res.status, bad).toBe(400)
        expect(await res.json()).toMatchObject({ success: false })
      }
    })

    it('API metrics: per route over a window, with counts, 4xx and 5xx, error rate and percentiles; one additive row per minute', async () => {
      await measured() // the earlier tests' last requests are measured at their own time, before the clock moves
      clock.now += 3_600_000 // a fresh window: nothing of the earlier tests in the last 10 minutes
      const apiLog = t.booted.core.metrics.apiLog
      const ip = freshIp()
      for (let i = 0; i < 3; i++) expect((await get('/api/logs/usage', admin.token, ip)).status).toBe(200)
      await measured()
      await apiLog.flush()
      for (let i = 0; i < 3; i++) expect((await get('/api/logs/usage', admin.token, ip)).status).toBe(200)
      for (let i = 0; i < 2; i++) expect((await get('/api/logs/usage', clinician.token, ip)).status).toBe(403)
      ai.delayNext(150, 3)
      for (let i = 0; i < 3; i++) expect((await generate('/api/shorten', { document: `slow ${i}`, model: TEST_MODEL })).status).toBe(200)
      ai.failNext(500)
      expect((await generate('/api/shorten', { document: 'fails', model: TEST_MODEL })).status).toBe(502)
      expect((await t.get('/api/no-such-route', { ip })).status).toBe(404)
      await measured()
      await apiLog.flush()

      const entries = await json<any[]>('/api/logs/api?minutes=10')
      const usage = entries.find((e) => e.route === '/api/logs/usage' && e.method === 'GET')
      expect(usage).toMatchObject({ count: 8, clientErrors: 2, errors: 0, errorRate: 0 })
      const shorten = entries.find((e) => e.route === '/api/shorten' && e.method === 'POST')
      expect(shorten).toMatchObject({ count: 4, clientErrors: 0, errors: 1, errorRate: 0.25 })
      expect(shorten.p50).toBeGreaterThanOrEqual(100)
      expect(shorten.p50).toBeLessThanOrEqual(shorten.p95)
      expect(shorten.p95).toBeLessThanOrEqual(shorten.p99)
      expect(shorten.p99).toBeLessThanOrEqual(2_500)
      expect(shorten.meanMs).toBeGreaterThanOrEqual(100)
      expect(entries.find((e) => e.route === 'unmatched')).toMatchObject({ count: 1, clientErrors: 1 })
      expect(Object.keys(usage).sort()).toEqual(['clientErrors', 'count', 'errorRate', 'errors', 'meanMs', 'method', 'p50', 'p95', 'p99', 'route'])
      // busiest first
      expect(entries.map((e) => e.count)).toEqual([...entries.map((e) => e.count)].sort((a, b) => b - a))
      // two flushes into the same minute added into one row
      const rows = await t.db.sql<{ requests: number }>`
        select requests from core.api_metrics where route = '/api/logs/usage' and bucket_start >= ${new Date(clock.now - 60_000).toISOString()}`
      expect(rows).toEqual([{ requests: 8 }])

      const series = await apiSeries(t.booted.core, { service: 'clinical', minutes: 10, stepMinutes: 5, route: '/api/shorten' })
      expect(series.reduce((n, p) => n + p.count, 0)).toBe(4)
      expect(series.reduce((n, p) => n + p.errors, 0)).toBe(1)
      expect(series[0]!.p50).toBeGreaterThan(0)
      for (const bad of ['minutes=0', `minutes=${API_METRICS_RETENTION_DAYS * 1440 + 1}`, 'service=other']) {
        expect((await get(`/api/logs/api?${bad}`)).status, bad).toBe(400)
      }
    })

    it('API metrics from two processes on one database add into the same row', async () => {
      // A second app on the same database and clock stands in for another process: its own figures, its own flushes.
      const other = await startTestApp({ target: 'pglite', boot: { db: { ...t.db, close: async () => {} }, now: () => clock.now } })
      const route = '/api/logs/access'
      const ip = freshIp()
      for (let i = 0; i < 2; i++) expect((await get(route, admin.token, ip)).status).toBe(200)
      for (let i = 0; i < 3; i++) expect((await other.get(route, { token: admin.token, ip, headers: MOBILE })).status).toBe(200)
      await measured()
      await Promise.all([t.booted.core.metrics.apiLog.flush(), other.booted.core.metrics.apiLog.flush()])
      await other.close()
      const minute = new Date(Math.floor(clock.now / 60_000) * 60_000).toISOString()
      expect(await t.db.sql`select requests from core.api_metrics where route = ${route} and bucket_start = ${minute}`).toEqual([{ requests: 5 }])
      expect((await json<any[]>('/api/logs/api?minutes=1')).find((e) => e.route === route)).toMatchObject({ count: 5 })
    })

    it('access: successful, failed and blocked sign-ins with time, user, address, client kind and outcome', async () => {
      const email = uniqueEmail('access')
      const userId = await insertUser(t, { email, name: 'Access Tester' })
      const disabled = uniqueEmail('disabled')
      const disabledId = await insertUser(t, { email: disabled, disabled: true })
      const unverified = uniqueEmail('unverified')
      const unverifiedId = await insertUser(t, { email: unverified, verified: false })
      const unknown = uniqueEmail('nobody')
      const login = async (address: string, headers: Record<string, string>, ip: string, password = CLINICAL_PASSWORD) => {
        clock.now += 1_000
        return (await t.post('/api/auth/login', { email: address, password }, { headers, ip })).status
      }
      const start = new Date(clock.now).toISOString()
      await signIn(t, email, { headers: WEB, ip: '10.9.0.1' })
      await signIn(t, email, { headers: MOBILE, ip: '10.9.0.2' })
      expect(await login(email, MOBILE, '10.9.0.3', 'wrong-password-1')).toBe(401)
      expect(await login(unknown, WEB, '10.9.0.4')).toBe(401)
      expect(await login(disabled, MOBILE, '10.9.0.5')).toBe(401)
      expect(await login(unverified, WEB, '10.9.0.6')).toBe(403)

      const mine = await json<any[]>(`/api/logs/access?userId=${userId}`)
      expect(mine.map((e) => [e.outcome, e.client, e.ip, e.reason])).toEqual([
        ['failed', 'mobile', '10.9.0.3', 'wrong_password'], ['success', 'mobile', '10.9.0.2', null], ['success', 'web', '10.9.0.1', null],
      ])
      expect(mine[1]).toMatchObject({ userId, email, name: 'Access Tester' })
      expect(Object.keys(mine[0]).sort()).toEqual(['at', 'client', 'email', 'id', 'ip', 'name', 'outcome', 'reason', 'userId'])
      expect(Date.parse(mine[0].at)).toBeGreaterThan(Date.parse(mine[1].at))

      expect(await json(`/api/logs/access?email=${encodeURIComponent(unknown.toUpperCase())}`)).toMatchObject([
        { userId: null, email: unknown, name: null, client: 'web', outcome: 'failed', reason: 'unknown_email', ip: '10.9.0.4' },
      ])
      const blocked = await json<any[]>(`/api/logs/access?outcome=blocked&from=${start}`)
      expect(blocked.map((e) => [e.userId, e.client, e.reason])).toEqual([
        [unverifiedId, 'web', 'email_not_verified'], [disabledId, 'mobile', 'disabled'],
      ])
      expect(await json<any[]>(`/api/logs/access?from=${start}&client=web&outcome=success`)).toHaveLength(1)
      expect(await json<any[]>(`/api/logs/access?from=${start}&limit=2`)).toHaveLength(2)
      for (const bad of [`limit=${ACCESS_LIMIT_MAX + 1}`, 'outcome=maybe', 'client=tv', 'email=not-an-email', 'to=never']) {
        expect((await get(`/api/logs/access?${bad}`)).status, bad).toBe(400)
      }

      const [today] = (await signInsByDay(t.booted.core, 1))
      expect(today).toMatchObject({ day: new Date(clock.now).toISOString().slice(0, 10) })
      expect(today!.success).toBeGreaterThanOrEqual(2)
      expect(today!.failed).toBeGreaterThanOrEqual(2)
      expect(today!.blocked).toBeGreaterThanOrEqual(2)
      expect(await signInsByDay(t.booted.core, 7)).toHaveLength(7)
    })
  })

  describe(`admin logs retention [${target}]`, () => {
    let t: TestApp
    const T0 = Date.parse('2030-01-01T00:00:00Z')
    const clock = { now: T0 }

    beforeAll(async () => {
      t = await startTestApp({ target, boot: { now: () => clock.now } })
    })
    afterAll(() => t.close())

    /** One entry in each log, written through the app at the clock's time. */
    const writeOneOfEach = async () => {
      clinicalState(t).audit.write({ action: 'retention_probe' })
      await flushAudit(t)
      expect((await t.post('/api/auth/login', { email: uniqueEmail('ghost'), password: 'x-password-1' }, { headers: MOBILE, ip: freshIp() })).status).toBe(401)
      expect((await t.get('/api/health', { ip: freshIp() })).status).toBe(200)
      await measured()
      await t.booted.core.metrics.apiLog.flush()
      await recordUsage(t.booted.core, { userId: null, endpoint: '/api/shorten', model: TEST_MODEL, tokensIn: 1, tokensOut: 1, latencyMs: 5, outcome: 'ok' })
      await flushAudit(t)
    }
    const LOGS = [
      { schedule: 'admin.api-metrics.sweep', days: API_METRICS_RETENTION_DAYS, table: 'core.api_metrics' },
      { schedule: 'admin.access-log.sweep', days: ACCESS_RETENTION_DAYS, table: 'clinical.access_log' },
      { schedule: 'admin.audit-log.sweep', days: AUDIT_RETENTION_DAYS, table: 'clinical.audit_log' },
      { schedule: 'admin.usage-log.sweep', days: USAGE_RETENTION_DAYS, table: 'clinical.ai_usage' },
    ] as const
    it('each schedule is a valid croner pattern', () => {
      for (const { schedule } of LOGS) {
        const s = t.booted.schedules.find((x) => x.name === schedule)
        expect(s, schedule).toBeDefined()
        expect(new Cron(s!.cron, { paused: true }).nextRun()).toBeInstanceOf(Date)
      }
    })

    it('each sweep deletes exactly the entries past its retention, on a moved clock; running it twice changes nothing', async () => {
      await writeOneOfEach()
      clock.now = T0 + 10 * DAY_MS
      await writeOneOfEach()
      const split = T0 + DAY_MS
      for (const log of LOGS) {
        const run = () => t.booted.schedules.find((x) => x.name === log.schedule)!.run()
        const before = await tableCounts(t, log.table, split)
        expect(before.older, log.table).toBeGreaterThan(0)
        expect(before.newer, log.table).toBeGreaterThan(0)
        clock.now = T0 + log.days * DAY_MS - 60_000
        await run()
        expect(await tableCounts(t, log.table, split), `${log.table} a minute before`).toEqual(before)
        clock.now = T0 + log.days * DAY_MS + 60_000
        await run()
        expect(await tableCounts(t, log.table, split), `${log.table} a minute after`).toEqual({ older: 0, newer: before.newer })
        await run()
        expect(await tableCounts(t, log.table, split)).toEqual({ older: 0, newer: before.newer })
      }
    })
  })
}

/** Rows of a log table before and after an instant (the table and column names are the test's own constants). */
async function tableCounts(t: TestApp, table: string, splitMs: number) {
  const split = new Date(splitMs).toISOString()
  const query = {
    'core.api_metrics': () => t.db.sql<{ older: number; newer: number }>`
      select count(*) filter (where bucket_start < ${split})::int as older, count(*) filter (where bucket_start >= ${split})::int as newer from core.api_metrics`,
    'clinical.access_log': () => t.db.sql<{ older: number; newer: number }>`
      select count(*) filter (where at < ${split})::int as older, count(*) filter (where at >= ${split})::int as newer from clinical.access_log`,
    'clinical.audit_log': () => t.db.sql<{ older: number; newer: number }>`
      select count(*) filter (where at < ${split})::int as older, count(*) filter (where at >= ${split})::int as newer from clinical.audit_log`,
    'clinical.ai_usage': () => t.db.sql<{ older: number; newer: number }>`
      select count(*) filter (where created_at < ${split})::int as older, count(*) filter (where created_at >= ${split})::int as newer from clinical.ai_usage`,
  }[table]!
  const [row] = await query()
  return row!
}

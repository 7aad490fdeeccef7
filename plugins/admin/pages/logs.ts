// The admin console's logs and milestones pages (spec 3, Logs and milestones), admins only (anyone else: 403):
// /admin/logs (AI usage, API figures over a window, sign-ins: charts and tables), /admin/logs/audit and
// /admin/logs/access (filters as a GET form; htmx gets the results only), /admin/milestones with its idempotent
// load of the default set (Post/Redirect/Get). The charts' series are shaped here from services/logs.ts.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { API_LOG_BUCKET_S } from '../../../src/core/metrics'
import { INT4_MAX } from '../../../src/core/schema'
import { isFragment, type Errors } from '../../../views/layout'
import { FormBody, html, redirect } from '../../../views/page'
import { clinicalPageKit } from '../../clinical/pages/common'
import { listMilestones, listUserAccounts, seedMilestones, SIGN_IN_OUTCOMES, USAGE_SUMMARY_DAYS, type UsageSummary } from '../../clinical/exports'
import type { AdminState } from '../index'
import { ACCESS_LIMIT_DEFAULT, ACCESS_LIMIT_MAX, AUDIT_ACTION_MAX, AUDIT_LIMIT_DEFAULT, AUDIT_LIMIT_MAX, EMAIL_MAX } from '../models/logs'
import * as logs from '../services/logs'
import {
  AccessPage, AccessResults, API_WINDOWS, ApiFigures, AuditPage, AuditResults, dayWords, OUTCOME_WORDS, percentWords, plural, LogsPage,
  type ApiWindow, type Chart, type ChartData, type Filters,
} from '../views/logs'
import { MilestonesContent, MilestonesPage } from '../views/milestones'
import { noticeOf, requireAdmin } from './common'

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000
/** More models than the palette has colours are drawn as one line of the rest. */
const CHART_MODELS_MAX = 8
const NOTICES = { seeded: 'The default milestones are loaded. Loading them again does not duplicate them.' } as const

/** The pages' query: loose strings, checked below so the form can say what is wrong. */
const Text = t.Optional(t.String({ maxLength: 400 }))
const Query = t.Object({ window: Text, action: Text, user: Text, from: Text, to: Text, limit: Text, outcome: Text, client: Text, notice: Text })

// ---- the charts' series ----------------------------------------------------------------------------------------

/** The UTC days of the last `days` days up to today, oldest first (as the services count them). */
const lastDays = (nowMs: number, days: number) => {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10))
}
const daySeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000
const sum = (values: Array<number | null>) => values.reduce<number>((n, v) => n + (v ?? 0), 0)
/** The day of a series' highest value, in words. */
const busiestDay = (days: string[], totals: number[]) => {
  const top = Math.max(...totals)
  return top > 0 ? `; the busiest day ${dayWords(days[totals.indexOf(top)]!)} with ${top.toLocaleString('en-GB')}` : ''
}

type UsageDay = Awaited<ReturnType<typeof logs.usageByDay>>[number]

function usageCharts(days: string[], usage: UsageSummary, rows: UsageDay[]): { calls: Chart; tokens: Chart } {
  const models = [...new Set([...usage.byModel.map((m) => m.model), ...rows.map((r) => r.model)])]
  const drawn = models.length > CHART_MODELS_MAX ? models.slice(0, CHART_MODELS_MAX - 1) : models
  const lines = (field: 'count' | 'tokens') => {
    const of = (day: string, keep: (model: string) => boolean) => sum(rows.filter((r) => r.day === day && keep(r.model)).map((r) => r[field]))
    return [
      ...drawn.map((model) => ({ label: model, values: days.map((d) => of(d, (m) => m === model)) })),
      ...(drawn.length < models.length ? [{ label: 'Other models', values: days.map((d) => of(d, (m) => !drawn.includes(m))) }] : []),
    ]
  }
  const chart = (field: 'count' | 'tokens', id: string, title: string, one: string, many: string): Chart => {
    const series = lines(field)
    const totals = days.map((_, i) => sum(series.map((s) => s.values[i]!)))
    const all = sum(totals)
    const parts = series.filter((s) => sum(s.values) > 0).map((s) => `${s.label} ${sum(s.values).toLocaleString('en-GB')}`)
    return {
      id, title,
      summary: all === 0 ? `No AI ${many} in the last ${days.length} days.`
        : `${plural(all, one, many)} in the last ${days.length} days (${parts.join(', ')})${busiestDay(days, totals)}.`,
      data: { scale: 'day', x: days.map(daySeconds), unit: 'count', yLabel: field === 'count' ? 'Calls' : 'Tokens', series },
    }
  }
  return {
    calls: chart('count', 'chart-usage-calls', 'AI calls per day, by model', 'call', 'calls'),
    tokens: chart('tokens', 'chart-usage-tokens', 'Tokens per day, by model', 'token', 'tokens'),
  }
}

function apiCharts(points: logs.ApiSeriesPoint[], window: ApiWindow, nowMs: number): { latency: Chart; errorRate: Chart } {
  const w = API_WINDOWS[window]
  const stepMs = w.stepMinutes * MINUTE_MS
  // the services' window starts at the bucket the window reaches into; the points are the starts of whole steps
  const bucketMs = API_LOG_BUCKET_S * 1000
  const since = Math.floor((nowMs - w.minutes * MINUTE_MS) / bucketMs) * bucketMs
  const x: number[] = []
  for (let at = Math.floor(since / stepMs) * stepMs; at <= nowMs; at += stepMs) x.push(at / 1000)
  const byTime = new Map(points.map((p) => [Date.parse(p.at) / 1000, p]))
  const values = (pick: (p: logs.ApiSeriesPoint) => number) => x.map((s) => { const p = byTime.get(s); return p ? pick(p) : null })
  const requests = sum(points.map((p) => p.count))
  const errors = sum(points.map((p) => p.errors))
  const when = (p: logs.ApiSeriesPoint) => `${dayWords(p.at.slice(0, 10))} ${p.at.slice(11, 16)} UTC`
  const worst = <K extends 'p95' | 'errorRate'>(k: K) => points.reduce<logs.ApiSeriesPoint | null>((a, p) => (!a || p[k] > a[k] ? p : a), null)
  const slow = worst('p95')
  const failing = worst('errorRate')
  const none = `No requests in ${w.words}.`
  return {
    latency: {
      id: 'chart-api-latency', title: 'Latency: median (p50) and 95th percentile (p95)',
      summary: !slow ? none
        : `${plural(requests, 'request', 'requests')} in ${w.words}; the highest median was ${Math.max(...points.map((p) => p.p50))} ms, the highest 95th percentile ${slow.p95} ms (${when(slow)}).`,
      data: { scale: 'time', x, unit: 'ms', yLabel: 'Milliseconds', series: [{ label: 'p50', values: values((p) => p.p50) }, { label: 'p95', values: values((p) => p.p95) }] },
    },
    errorRate: {
      id: 'chart-api-errors', title: 'Error rate: requests answered with a server error (5xx)',
      summary: !failing ? none : errors === 0 ? `None of the ${plural(requests, 'request', 'requests')} in ${w.words} had a server error.`
        : `${errors.toLocaleString('en-GB')} of ${plural(requests, 'request', 'requests')} in ${w.words} had a server error (${percentWords(errors / requests)}); the highest rate was ${percentWords(failing.errorRate)} (${when(failing)}).`,
      data: { scale: 'time', x, unit: 'percent', yLabel: 'Error rate', series: [{ label: 'Error rate', values: values((p) => Math.round(p.errorRate * 1000) / 10) }] },
    },
  }
}

function signInChart(days: logs.SignInDay[]): Chart {
  // in the order of the table
  const outcomes = Object.keys(OUTCOME_WORDS) as Array<keyof typeof OUTCOME_WORDS>
  const series = outcomes.map((o) => ({ label: OUTCOME_WORDS[o], values: days.map((d) => d[o]) }))
  const totals = days.map((d) => sum(outcomes.map((o) => d[o])))
  const all = sum(totals)
  const parts = outcomes.map((o) => [sum(days.map((d) => d[o])), OUTCOME_WORDS[o].toLowerCase()] as const)
    .filter(([n]) => n > 0).map(([n, words]) => `${n.toLocaleString('en-GB')} ${words}`)
  const data: ChartData = { scale: 'day', x: days.map((d) => daySeconds(d.day)), unit: 'count', yLabel: 'Attempts', series }
  return {
    id: 'chart-sign-ins', title: 'Sign-in attempts per day, by outcome', data,
    summary: all === 0 ? `No sign-in attempts in the last ${days.length} days.`
      : `${plural(all, 'sign-in attempt', 'sign-in attempts')} in the last ${days.length} days: ${parts.join(', ')}${busiestDay(days.map((d) => d.day), totals)}.`,
  }
}

// ---- the filters -----------------------------------------------------------------------------------------------

const filtersOf = (q: Record<string, string | undefined>): Filters => ({
  action: q.action?.trim() ?? '', user: q.user?.trim() ?? '', from: q.from?.trim() ?? '', to: q.to?.trim() ?? '',
  limit: q.limit?.trim() ?? '', outcome: q.outcome ?? '', client: q.client ?? '',
})

/** A UTC day as an instant: its start (`from`), or the start of the next day (`to`, whose day is included). */
function dayBound(f: Filters, field: 'from' | 'to', errors: Errors): string | undefined {
  if (!f[field]) return undefined
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(f[field]) ? Date.parse(`${f[field]}T00:00:00Z`) : NaN
  if (!Number.isFinite(ms)) {
    errors[field] = 'Enter a day as YYYY-MM-DD'
    return undefined
  }
  return new Date(field === 'to' ? ms + DAY_MS : ms).toISOString()
}

/** The from/to days as the services' time range; the To day may not come before the From day. */
function rangeOf(f: Filters, errors: Errors): { from?: string; to?: string } {
  const range = { from: dayBound(f, 'from', errors), to: dayBound(f, 'to', errors) }
  if (range.from && range.to && range.from >= range.to) errors.to = 'Choose a day on or after the From day'
  return range
}

function limitOf(f: Filters, def: number, max: number, errors: Errors): number {
  if (!f.limit) return def
  const n = Number(f.limit)
  if (Number.isInteger(n) && n >= 1 && n <= max) return n
  errors.limit = `Enter a whole number from 1 to ${max}`
  return def
}

/** The user filter: a user id, or an email address (lower-cased, as stored). */
function userOf(f: Filters, errors: Errors): { userId?: number; email?: string } {
  if (!f.user) return {}
  if (/^\d+$/.test(f.user) && Number(f.user) >= 1 && Number(f.user) <= INT4_MAX) return { userId: Number(f.user) }
  if (/^[^\s@]+@[^\s@]+$/.test(f.user) && f.user.length <= EMAIL_MAX) return { email: f.user.toLowerCase() }
  errors.user = 'Enter a user id (a number) or an email address'
  return {}
}

/** The list of a filter form, or the form's messages (422) when a filter cannot be used. */
async function filtered<Entry>(errors: Errors, list: () => Promise<Entry[]>) {
  if (Object.keys(errors).length > 0) return { entries: [] as Entry[], errors, status: 422 }
  try {
    return { entries: await list(), status: 200 }
  } catch (err) {
    if (!(err instanceof HttpError) || err.status !== 400) throw err
    return { entries: [] as Entry[], errors: err.fields ?? {}, message: err.fields ? undefined : err.message, status: 422 }
  }
}

export const logPages = (state: AdminState) => {
  const { core, clinical } = state
  const base = core.config.clinicalBasePath
  const milestonesUrl = `${base}/admin/milestones`

  const apiFigures = async (window: ApiWindow) => {
    const w = API_WINDOWS[window]
    const [routes, points] = await Promise.all([
      logs.apiMetrics(core, 'clinical', w.minutes),
      logs.apiSeries(core, { service: 'clinical', minutes: w.minutes, stepMinutes: w.stepMinutes }),
    ])
    return { base, window, routes, ...apiCharts(points, window, core.now()) }
  }

  return new Elysia()
    .use(clinicalPageKit(clinical))

    // ---- logs ----
    .get('/admin/logs', async ({ request, user, query }) => {
      requireAdmin(user)
      const window: ApiWindow = query.window && query.window in API_WINDOWS ? (query.window as ApiWindow) : 'hour'
      if (isFragment(request)) return html(ApiFigures(await apiFigures(window)))
      const days = lastDays(core.now(), USAGE_SUMMARY_DAYS)
      const [usage, usageDays, api, signInDays] = await Promise.all([
        logs.usageLog(core, USAGE_SUMMARY_DAYS), logs.usageByDay(core, USAGE_SUMMARY_DAYS), apiFigures(window), logs.signInsByDay(core, USAGE_SUMMARY_DAYS),
      ])
      return html(LogsPage({ base, user, usage, usageDays, ...usageCharts(days, usage, usageDays), api, signIns: signInChart(signInDays), signInDays }))
    }, { signedIn: true, query: Query })
    .get('/admin/logs/audit', async ({ request, user, query }) => {
      requireAdmin(user)
      const filters = filtersOf(query)
      const errors: Errors = {}
      if (filters.action && (filters.action.length > AUDIT_ACTION_MAX || !/^[A-Za-z0-9_.:-]+$/.test(filters.action))) {
        errors.action = 'Letters, digits and _ . : - only'
      }
      const who = userOf(filters, errors)
      const range = rangeOf(filters, errors)
      const limit = limitOf(filters, AUDIT_LIMIT_DEFAULT, AUDIT_LIMIT_MAX, errors)
      const result = await filtered(errors, async () => {
        // an email names the account it belongs to; an email no account has matches no entry
        const userId = who.email ? (await listUserAccounts(core)).find((u) => u.email === who.email)?.id ?? null : who.userId
        if (userId === null) return []
        return logs.listAudit(core, { action: filters.action || undefined, userId, ...range }, limit)
      })
      const list = { entries: result.entries, limit, errors: result.errors, message: result.message }
      if (isFragment(request)) return html(AuditResults(list), { status: result.status })
      return html(AuditPage({ base, user, filters, limitMax: AUDIT_LIMIT_MAX, limitDefault: AUDIT_LIMIT_DEFAULT, ...list }), { status: result.status })
    }, { signedIn: true, query: Query })
    .get('/admin/logs/access', async ({ request, user, query }) => {
      requireAdmin(user)
      const filters = filtersOf(query)
      const errors: Errors = {}
      const outcome = filters.outcome ? SIGN_IN_OUTCOMES.find((o) => o === filters.outcome) : undefined
      if (filters.outcome && !outcome) errors.outcome = 'Choose an outcome from the list'
      const client = filters.client === 'web' || filters.client === 'mobile' ? filters.client : undefined
      if (filters.client && !client) errors.client = 'Choose a client from the list'
      const who = userOf(filters, errors)
      const range = rangeOf(filters, errors)
      const limit = limitOf(filters, ACCESS_LIMIT_DEFAULT, ACCESS_LIMIT_MAX, errors)
      const result = await filtered(errors, () => logs.listAccess(core, { ...who, outcome, client, ...range }, limit))
      const list = { entries: result.entries, limit, errors: result.errors, message: result.message }
      if (isFragment(request)) return html(AccessResults(list), { status: result.status })
      return html(AccessPage({ base, user, filters, limitMax: ACCESS_LIMIT_MAX, limitDefault: ACCESS_LIMIT_DEFAULT, ...list }), { status: result.status })
    }, { signedIn: true, query: Query })

    // ---- milestones ----
    .get('/admin/milestones', async ({ user, query }) => {
      requireAdmin(user)
      return html(MilestonesPage({ base, user, milestones: await listMilestones(core), flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: Query })
    .post('/admin/milestones/seed', async ({ request, user }) => {
      requireAdmin(user)
      const count = await seedMilestones(core)
      clinical.audit.write({ action: 'milestones_seeded', userId: user.id, ip: core.clientAddress(request), details: { adminId: user.id, count } })
      if (!isFragment(request)) return redirect(`${milestonesUrl}?notice=seeded`)
      return html(MilestonesContent({ base, milestones: await listMilestones(core), notice: NOTICES.seeded }))
    }, { signedIn: true, body: FormBody })
    // The load form posts; a GET of its address (a bookmark, a reload) shows the list.
    .get('/admin/milestones/seed', ({ user }) => {
      requireAdmin(user)
      return redirect(milestonesUrl)
    }, { signedIn: true })
}

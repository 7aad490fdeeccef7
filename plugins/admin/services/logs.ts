// Spec 3, Logs: the admin's read-only views of the four logs, the per-day and per-bucket series the console charts,
// and each log's retention with its sweep. The logs are written elsewhere: AI usage by the generation endpoints
// (clinical.ai_usage), audit entries by the batched writer (clinical.audit_log), sign-ins where the login rules
// decide them (clinical.access_log), API figures by the request hook (core.api_metrics).
import { fragment, joinFragments, type Fragment } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import { API_LOG_BUCKET_S, latencyPercentile } from '../../../src/core/metrics'
import type { Core } from '../../../src/plugin'
import { SIGN_IN_OUTCOMES, usageSummary, type SignInOutcome, type UsageSummary } from '../../clinical/exports'
import type { AccessEntry, AccessQuery, ApiMetricEntry, AuditEntry, AuditQuery } from '../models/logs'

// ---- retention: rows older than these go in the daily sweeps ---------------------------------------------

/** Audit entries: a year, the usual span of a security review. */
export const AUDIT_RETENTION_DAYS = 365
/** Sign-in attempts (they hold typed emails and addresses): a quarter. */
export const ACCESS_RETENTION_DAYS = 90
/** Per-minute API figures: a month, for the latency and error-rate charts. */
export const API_METRICS_RETENTION_DAYS = 30
/** AI usage rows: a year and a month, so a full year can be compared with the month before it. */
export const USAGE_RETENTION_DAYS = 400

const DAY_MS = 86_400_000
const MINUTE_MS = 60_000

const cutoff = (core: Core, days: number) => new Date(core.now() - days * DAY_MS).toISOString()
const deleted = async (rows: Promise<Array<{ n: number }>>) => (await rows)[0]?.n ?? 0

// Each sweep is one idempotent delete of what is past retention: several processes may run it at the same
// minute, and the later ones find nothing left to delete. Each answers how many rows went.
export const sweepAuditLog = (core: Core) => deleted(core.db.sql<{ n: number }>`
  with gone as (delete from clinical.audit_log where at < ${cutoff(core, AUDIT_RETENTION_DAYS)} returning 1) select count(*)::int as n from gone`)
export const sweepAccessLog = (core: Core) => deleted(core.db.sql<{ n: number }>`
  with gone as (delete from clinical.access_log where at < ${cutoff(core, ACCESS_RETENTION_DAYS)} returning 1) select count(*)::int as n from gone`)
export const sweepApiMetrics = (core: Core) => deleted(core.db.sql<{ n: number }>`
  with gone as (delete from core.api_metrics where bucket_start < ${cutoff(core, API_METRICS_RETENTION_DAYS)} returning 1) select count(*)::int as n from gone`)
export const sweepUsageLog = (core: Core) => deleted(core.db.sql<{ n: number }>`
  with gone as (delete from clinical.ai_usage where created_at < ${cutoff(core, USAGE_RETENTION_DAYS)} returning 1) select count(*)::int as n from gone`)

// ---- filters --------------------------------------------------------------------------------------------

/** An instant of a query, within what PostgreSQL and Date both hold; 400 otherwise. */
function instant(value: string | undefined, name: string): string | null {
  if (value === undefined) return null
  const ms = Date.parse(value)
  if (!Number.isFinite(ms) || ms < Date.UTC(1970, 0, 1) || ms > Date.UTC(9999, 11, 31)) {
    throw HttpError.badRequest('invalid_time', `${name}: not a time between 1970 and 9999`, { [name]: 'Not a time between 1970 and 9999' })
  }
  return new Date(ms).toISOString()
}

/** The `from`/`to` conditions on a timestamp column; 400 when `from` is after `to`. */
function timeRange(column: Fragment, query: { from?: string; to?: string }): Fragment[] {
  const from = instant(query.from, 'from')
  const to = instant(query.to, 'to')
  if (from && to && from > to) throw HttpError.badRequest('invalid_range', '`from` is after `to`', { from: 'After `to`' })
  return [
    ...(from ? [fragment`${column} >= ${from}::timestamptz`] : []),
    ...(to ? [fragment`${column} < ${to}::timestamptz`] : []),
  ]
}

const iso = (d: Date) => d.toISOString()

// ---- usage ----------------------------------------------------------------------------------------------

/** The usage summary: calls of the last `days` days by model (with tokens) and by endpoint. */
export const usageLog = (core: Core, days?: number): Promise<UsageSummary> => usageSummary(core, days)

/** The first instant of the UTC day `days - 1` days ago: `days` whole calendar days, today included. */
const sinceDays = (core: Core, days: number) => {
  const today = Math.floor(core.now() / DAY_MS) * DAY_MS
  return new Date(today - (days - 1) * DAY_MS).toISOString()
}

/** Calls and tokens per UTC day and model (for the usage chart); days without calls are left out. */
export async function usageByDay(core: Core, days: number): Promise<Array<{ day: string; model: string; count: number; tokens: number }>> {
  return core.db.sql`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, model, count(*)::int as count,
           coalesce(sum(coalesce(tokens_in, 0) + coalesce(tokens_out, 0)), 0)::float8 as tokens
    from clinical.ai_usage where created_at >= ${sinceDays(core, days)}
    group by 1, 2 order by 1, count desc, model`
}

// ---- audit ----------------------------------------------------------------------------------------------

/** Audit entries, newest first, by action, user and time range; at most `limit`. */
export async function listAudit(core: Core, query: AuditQuery, limit: number): Promise<AuditEntry[]> {
  const where = [
    ...(query.action !== undefined ? [fragment`a.action = ${query.action}`] : []),
    ...(query.userId !== undefined ? [fragment`a.user_id = ${query.userId}::integer`] : []),
    ...timeRange(fragment`a.at`, query),
  ]
  const rows = await core.db.sql<{ id: number; at: Date; action: string; user_id: number | null; email: string | null; ip_address: string | null; details: string }>`
    select a.id, a.at, a.action, a.user_id, u.email, a.ip_address, a.details
    from clinical.audit_log a left join clinical.users u on u.id = a.user_id
    where ${joinFragments(where, 'and')}
    order by a.at desc, a.id desc limit ${limit}`
  return rows.map((r) => ({
    id: r.id, at: iso(r.at), action: r.action, userId: r.user_id, userEmail: r.email, ip: r.ip_address, details: r.details,
  }))
}

// ---- API metrics ----------------------------------------------------------------------------------------

const slotCounts = (slots: Array<{ slot: number; n: number }>) => {
  const counts: number[] = []
  for (const { slot, n } of slots) counts[slot - 1] = (counts[slot - 1] ?? 0) + n
  return Array.from(counts, (n) => n ?? 0)
}
const roundMs = (ms: number | null) => Math.round((ms ?? 0) * 10) / 10
const percentiles = (counts: number[]) => ({
  p50: roundMs(latencyPercentile(counts, 0.5)), p95: roundMs(latencyPercentile(counts, 0.95)), p99: roundMs(latencyPercentile(counts, 0.99)),
})

/** The first bucket a window of `minutes` reaches into (partly covered buckets count whole). */
const windowStart = (core: Core, minutes: number) => {
  const bucketMs = API_LOG_BUCKET_S * 1000
  return new Date(Math.floor((core.now() - minutes * MINUTE_MS) / bucketMs) * bucketMs).toISOString()
}

/** Per route and method over the last `minutes`: counts, errors, error rate, mean and percentile latencies; busiest first. */
export async function apiMetrics(core: Core, service: string, minutes: number): Promise<ApiMetricEntry[]> {
  const since = windowStart(core, minutes)
  const [totals, slots] = await Promise.all([
    core.db.sql<{ route: string; method: string; count: number; client_errors: number; errors: number; duration_ms: number }>`
      select route, method, sum(requests)::float8 as count, sum(client_errors)::float8 as client_errors,
             sum(server_errors)::float8 as errors, sum(duration_ms)::float8 as duration_ms
      from core.api_metrics where service = ${service} and bucket_start >= ${since}
      group by route, method`,
    core.db.sql<{ route: string; method: string; slot: number; n: number }>`
      select m.route, m.method, u.i::int as slot, sum(u.n)::float8 as n
      from core.api_metrics m cross join lateral unnest(m.latency_counts) with ordinality as u(n, i)
      where m.service = ${service} and m.bucket_start >= ${since}
      group by m.route, m.method, u.i`,
  ])
  const key = (r: { route: string; method: string }) => `${r.method} ${r.route}`
  const histograms = Map.groupBy(slots, key)
  return totals
    .map((r) => ({
      route: r.route, method: r.method, count: r.count, clientErrors: r.client_errors, errors: r.errors,
      errorRate: r.count > 0 ? r.errors / r.count : 0, meanMs: roundMs(r.count > 0 ? r.duration_ms / r.count : 0),
      ...percentiles(slotCounts(histograms.get(key(r)) ?? [])),
    }))
    .sort((a, b) => b.count - a.count || a.route.localeCompare(b.route) || a.method.localeCompare(b.method))
}

export interface ApiSeriesPoint {
  /** The start of the time bucket. */
  at: string
  count: number
  clientErrors: number
  errors: number
  errorRate: number
  p50: number
  p95: number
  p99: number
}

/**
 * The API log over time (for the latency and error-rate charts): one point per `stepMinutes` bucket of the last
 * `minutes`, over every route or one; buckets without requests are left out.
 */
export async function apiSeries(
  core: Core, opts: { service: string; minutes: number; stepMinutes: number; route?: string },
): Promise<ApiSeriesPoint[]> {
  const since = windowStart(core, opts.minutes)
  const stepS = Math.max(API_LOG_BUCKET_S, Math.round(opts.stepMinutes * 60))
  const where = fragment`m.service = ${opts.service} and m.bucket_start >= ${since}${opts.route !== undefined ? fragment` and m.route = ${opts.route}` : fragment``}`
  const step = fragment`floor(extract(epoch from m.bucket_start)::float8 / ${stepS}::float8) * ${stepS}::float8`
  const [totals, slots] = await Promise.all([
    core.db.sql<{ t: number; count: number; client_errors: number; errors: number }>`
      select ${step} as t, sum(m.requests)::float8 as count, sum(m.client_errors)::float8 as client_errors,
             sum(m.server_errors)::float8 as errors
      from core.api_metrics m where ${where} group by 1 order by 1`,
    core.db.sql<{ t: number; slot: number; n: number }>`
      select ${step} as t, u.i::int as slot, sum(u.n)::float8 as n
      from core.api_metrics m cross join lateral unnest(m.latency_counts) with ordinality as u(n, i)
      where ${where} group by 1, 2`,
  ])
  const histograms = Map.groupBy(slots, (s) => s.t)
  return totals.map((r) => ({
    at: new Date(r.t * 1000).toISOString(), count: r.count, clientErrors: r.client_errors, errors: r.errors,
    errorRate: r.count > 0 ? r.errors / r.count : 0, ...percentiles(slotCounts(histograms.get(r.t) ?? [])),
  }))
}

// ---- access ---------------------------------------------------------------------------------------------

/** Sign-in attempts, newest first, by user, email, outcome, client kind and time range; at most `limit`. */
export async function listAccess(core: Core, query: AccessQuery, limit: number): Promise<AccessEntry[]> {
  const where = [
    ...(query.userId !== undefined ? [fragment`a.user_id = ${query.userId}::integer`] : []),
    ...(query.email !== undefined ? [fragment`a.email = ${query.email.trim().toLowerCase()}`] : []),
    ...(query.outcome !== undefined ? [fragment`a.outcome = ${query.outcome}`] : []),
    ...(query.client !== undefined ? [fragment`a.client = ${query.client}`] : []),
    ...timeRange(fragment`a.at`, query),
  ]
  const rows = await core.db.sql<{
    id: number; at: Date; user_id: number | null; email: string | null; name: string | null; ip_address: string | null
    client: 'web' | 'mobile'; outcome: SignInOutcome; reason: string | null
  }>`
    select a.id, a.at, a.user_id, a.email, u.name, a.ip_address, a.client, a.outcome, a.reason
    from clinical.access_log a left join clinical.users u on u.id = a.user_id
    where ${joinFragments(where, 'and')}
    order by a.at desc, a.id desc limit ${limit}`
  return rows.map((r) => ({
    id: r.id, at: iso(r.at), userId: r.user_id, email: r.email, name: r.name, ip: r.ip_address,
    client: r.client, outcome: r.outcome, reason: r.reason,
  }))
}

export type SignInDay = { day: string } & Record<SignInOutcome, number>

/** Sign-in attempts per UTC day and outcome (for the sign-ins chart): every day of the range, zeros included. */
export async function signInsByDay(core: Core, days: number): Promise<SignInDay[]> {
  const since = sinceDays(core, days)
  const rows = await core.db.sql<{ day: string; outcome: SignInOutcome; n: number }>`
    select to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, outcome, count(*)::int as n
    from clinical.access_log where at >= ${since} group by 1, 2`
  const start = Date.parse(since)
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(start + i * DAY_MS).toISOString().slice(0, 10)
    const counts = Object.fromEntries(SIGN_IN_OUTCOMES.map((o) => [o, rows.find((r) => r.day === day && r.outcome === o)?.n ?? 0]))
    return { day, ...counts } as SignInDay
  })
}

// Prometheus registry (prom-client). Names begin with `app_ai_` (spec 3, metrics); requests that match no
// route are labelled route="unmatched" so label values stay bounded. The same request hook also feeds the API
// log (core.api_metrics, read by the clinical admin's logs): per route and minute, counts and a latency histogram,
// held in memory and stored in batches, so a request never waits on the database.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { fragment, joinFragments } from './db'
import type { Core } from '../plugin'

export const UNMATCHED_ROUTE = 'unmatched'

/** The API log's time bucket: one row per service, route, method and minute. */
export const API_LOG_BUCKET_S = 60
/** How often held figures are stored (and at shutdown). */
export const API_LOG_FLUSH_MS = 5_000
/** Rows per upsert statement. */
export const API_LOG_BATCH_ROWS = 200
/** Buckets held at most while the database is unreachable; beyond it the oldest are dropped. */
export const API_LOG_HELD_MAX = 20_000
/**
 * Upper bounds (ms) of the API log's latency histogram; one more slot counts everything slower. Stored rows hold one
 * count per slot, so changing the bounds needs a migration of core.api_metrics.
 */
export const LATENCY_BOUNDS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const
/** Histogram slots: one per bound, then the overflow slot. */
const LATENCY_SLOTS = LATENCY_BOUNDS_MS.length + 1
/** Methods stored as they are; anything else is `OTHER`, so a client cannot widen the key. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

export interface ApiLog {
  /**
   * Adds one answered request to its route's current bucket (memory only). `slot` is its latency slot
   * (latencySlot(ms)); `cache`, kept by the caller for one service, method and route, lets the next request of it
   * find its bucket without building the key.
   */
  record(service: string, method: string, route: string, status: number, ms: number, slot?: number, cache?: ApiLogCache): void
  /** Starts storing into core.api_metrics every API_LOG_FLUSH_MS and at shutdown; the first call wins. */
  persist(core: Pick<Core, 'db' | 'log' | 'now' | 'onShutdown'>): void
  /** Stores what is held now; never throws (a failed batch is held again for the next flush). */
  flush(): Promise<void>
}

/** The bucket one service, method and route added to last, while it is still held as it was. */
export interface ApiLogCache { bucket: Bucket | null; startMs: number; generation: number }

export interface Metrics {
  readonly registry: Registry
  /** Call when a request starts; the returned function records it when the response is ready, and answers its duration (ms). */
  startRequest(service: string, method: string): (route: string | null, status: number) => number
  render(): Promise<string>
  /** The per-route figures behind the admin's API log. */
  readonly apiLog: ApiLog
}

/**
 * Prometheus' request duration buckets (seconds). Each is one of LATENCY_BOUNDS_MS, so the API log's latency slot
 * of a request also names its Prometheus bucket.
 */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const
/** The Prometheus bucket of each latency slot (the last: past every bound, +Inf only). */
export const BUCKET_OF_SLOT = [...LATENCY_BOUNDS_MS, Infinity].map((ms) => {
  const i = DURATION_BUCKETS_S.findIndex((s) => s * 1000 >= ms)
  return i === -1 ? DURATION_BUCKETS_S.length : i
})

const labelNames = ['service', 'method', 'route', 'status'] as const
type Labels = Record<(typeof labelNames)[number], string>

/** What one service, method, route and status has answered: counted here, handed to prom-client when scraped. */
interface Figures {
  labels: Labels
  /** Requests since the counter last collected them. */
  unreported: number
  /** The duration histogram: counts per DURATION_BUCKETS_S bucket (not cumulative; the last: past every bound). */
  buckets: number[]
  sum: number
  count: number
  api: ApiLogCache
}

const DURATION = 'app_ai_http_request_duration_seconds'

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'app_ai_' })
  // Every request's figures are kept in plain maps (service, method, route, status) and handed to prom-client when
  // it is scraped: its per-call label hashing and checks were most of what a request cost the metrics.
  const figures = new Map<string, Map<string, Map<string, Map<number, Figures>>>>()
  const all: Figures[] = []
  const flying = new Map<string, number>()
  const figuresOf = (service: string, method: string, route: string | null, status: number): Figures => {
    let byMethod = figures.get(service)
    if (!byMethod) figures.set(service, (byMethod = new Map()))
    let byRoute = byMethod.get(method)
    if (!byRoute) byMethod.set(method, (byRoute = new Map()))
    const routeKey = route ?? UNMATCHED_ROUTE
    let byStatus = byRoute.get(routeKey)
    if (!byStatus) byRoute.set(routeKey, (byStatus = new Map()))
    let f = byStatus.get(status)
    if (!f) {
      f = {
        labels: { service, method, route: routeKey, status: String(status) }, unreported: 0,
        buckets: new Array<number>(DURATION_BUCKETS_S.length + 1).fill(0), sum: 0, count: 0,
        api: { bucket: null, startMs: 0, generation: -1 },
      }
      byStatus.set(status, f)
      all.push(f)
    }
    return f
  }
  new Counter({
    name: 'app_ai_http_requests_total', help: 'HTTP requests', labelNames, registers: [registry],
    collect() {
      for (const f of all) {
        if (f.unreported > 0) this.inc(f.labels, f.unreported)
        f.unreported = 0
      }
    },
  })
  // The duration histogram in the shape prom-client's own Histogram hands the registry (cumulative `le` buckets,
  // then _sum and _count), from the counts above.
  const help = 'HTTP request duration in seconds'
  registry.registerMetric({
    name: DURATION, help, type: 'histogram', aggregator: 'sum',
    get: async () => ({
      name: DURATION, help, type: 'histogram', aggregator: 'sum',
      values: all.filter((f) => f.count > 0).flatMap((f) => {
        let cumulative = 0
        return [
          ...DURATION_BUCKETS_S.map((le, i) => ({ labels: { ...f.labels, le }, value: (cumulative += f.buckets[i]!), metricName: `${DURATION}_bucket` })),
          { labels: { ...f.labels, le: '+Inf' }, value: f.count, metricName: `${DURATION}_bucket` },
          { labels: f.labels, value: f.sum, metricName: `${DURATION}_sum` },
          { labels: f.labels, value: f.count, metricName: `${DURATION}_count` },
        ]
      }),
    }),
    reset() {
      for (const f of all) {
        f.buckets.fill(0)
        f.sum = 0
        f.count = 0
      }
    },
  } as unknown as Parameters<Registry['registerMetric']>[0])
  new Gauge({
    name: 'app_ai_http_requests_in_flight', help: 'HTTP requests being served', labelNames: ['service'], registers: [registry],
    collect() {
      for (const [service, n] of flying) this.set({ service }, n)
    },
  })
  const apiLog = createApiLog()
  return {
    registry,
    startRequest(service, method) {
      const started = performance.now()
      flying.set(service, (flying.get(service) ?? 0) + 1)
      return (route, status) => {
        flying.set(service, flying.get(service)! - 1)
        const ms = performance.now() - started
        const f = figuresOf(service, method, route, status)
        const slot = latencySlot(ms)
        f.unreported += 1
        f.buckets[BUCKET_OF_SLOT[slot]!]! += 1
        f.sum += ms / 1000
        f.count += 1
        apiLog.record(service, method, f.labels.route, status, ms, slot, f.api)
        return ms
      }
    },
    render: () => registry.metrics(),
    apiLog,
  }
}

/** The histogram slot of a latency: the first bound it does not exceed, else the last (overflow) slot. */
export function latencySlot(ms: number): number {
  let i = 0
  while (i < LATENCY_BOUNDS_MS.length && !(ms <= LATENCY_BOUNDS_MS[i]!)) i++
  return i
}

/**
 * The q-quantile (0..1) of a histogram of LATENCY_BOUNDS_MS slots, interpolated linearly inside its slot (as
 * Prometheus' histogram_quantile does); the overflow slot answers the highest bound. null for an empty histogram.
 */
export function latencyPercentile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0)
  if (total === 0) return null
  const rank = q * total
  let seen = 0
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0
    if (n > 0 && seen + n >= rank) {
      if (i >= LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!
      return lower + (LATENCY_BOUNDS_MS[i]! - lower) * ((rank - seen) / n)
    }
    seen += n
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!
}

interface Bucket {
  service: string
  route: string
  method: string
  startMs: number
  requests: number
  clientErrors: number
  serverErrors: number
  durationMs: number
  latency: number[]
}

const keyOf = (b: Pick<Bucket, 'service' | 'route' | 'method' | 'startMs'>) => `${b.service}\u0000${b.method}\u0000${b.route}\u0000${b.startMs}`

/** Adds `from` into `into` (both the same key). */
function addInto(into: Bucket, from: Bucket) {
  into.requests += from.requests
  into.clientErrors += from.clientErrors
  into.serverErrors += from.serverErrors
  into.durationMs += from.durationMs
  from.latency.forEach((n, i) => (into.latency[i]! += n))
}

function createApiLog(): ApiLog {
  let held = new Map<string, Bucket>()
  // Changes whenever a held bucket may have left `held` (a drain, an eviction): a cached bucket of another generation
  // is looked up again.
  let generation = 0
  let core: Pick<Core, 'db' | 'log' | 'now' | 'onShutdown'> | null = null
  let timer: ReturnType<typeof setTimeout> | null = null
  let chain: Promise<void> = Promise.resolve()
  let closed = false

  const hold = (bucket: Bucket) => {
    const key = keyOf(bucket)
    const existing = held.get(key)
    if (existing) addInto(existing, bucket)
    else held.set(key, bucket)
    // Map order is insertion order: the first keys are the oldest buckets.
    for (const oldest of held.keys()) {
      if (held.size <= API_LOG_HELD_MAX) break
      held.delete(oldest)
      generation++
    }
  }

  const schedule = () => {
    if (timer || closed || !core || held.size === 0) return
    timer = setTimeout(() => {
      timer = null
      void flush()
    }, API_LOG_FLUSH_MS)
    timer.unref?.()
  }

  // Additive upsert: several processes (or a retried batch) add into the same row, never overwrite it.
  const upsert = (target: NonNullable<typeof core>, rows: Bucket[]) => target.db.sql`
    insert into core.api_metrics (service, route, method, bucket_start, requests, client_errors, server_errors, duration_ms, latency_counts)
    values ${joinFragments(rows.map((b) => fragment`(${b.service}, ${b.route}, ${b.method}, ${new Date(b.startMs).toISOString()}::timestamptz,
      ${b.requests}::integer, ${b.clientErrors}::integer, ${b.serverErrors}::integer, ${b.durationMs}::float8,
      ${`{${b.latency.join(',')}}`}::integer[])`), ',')}
    on conflict (service, bucket_start, route, method) do update set
      requests = core.api_metrics.requests + excluded.requests,
      client_errors = core.api_metrics.client_errors + excluded.client_errors,
      server_errors = core.api_metrics.server_errors + excluded.server_errors,
      duration_ms = core.api_metrics.duration_ms + excluded.duration_ms,
      latency_counts = (select array_agg(coalesce(a, 0) + coalesce(b, 0) order by i)
                        from unnest(core.api_metrics.latency_counts, excluded.latency_counts) with ordinality as u(a, b, i))`

  const drain = async () => {
    const target = core
    if (!target || held.size === 0) return
    const rows = [...held.values()]
    held = new Map()
    generation++
    for (let i = 0; i < rows.length; i += API_LOG_BATCH_ROWS) {
      const batch = rows.slice(i, i + API_LOG_BATCH_ROWS)
      try {
        await upsert(target, batch)
      } catch (err) {
        target.log.warn({ err, buckets: rows.length - i }, 'api log: figures not stored, held for the next flush')
        for (const b of rows.slice(i)) hold(b)
        return
      }
    }
  }

  const flush = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer)
      timer = null
    }
    chain = chain.then(drain).catch(() => {}).finally(schedule)
    return chain
  }

  return {
    record(service, method, route, status, ms, slot = latencySlot(ms), cache) {
      if (closed) return
      const now = core ? core.now() : Date.now()
      const bucketMs = API_LOG_BUCKET_S * 1000
      const startMs = Math.floor(now / bucketMs) * bucketMs
      const clientErrors = status >= 400 && status < 500 ? 1 : 0
      const serverErrors = status >= 500 ? 1 : 0
      const durationMs = Number.isFinite(ms) ? Math.max(0, ms) : 0
      // Most requests add to a bucket already held: counted in place, without a new bucket to merge.
      let existing = cache && cache.generation === generation && cache.startMs === startMs ? cache.bucket : null
      if (!existing) {
        const key = { service, route, method: KNOWN_METHODS.has(method) ? method : 'OTHER', startMs }
        existing = held.get(keyOf(key)) ?? null
        if (!existing) {
          existing = { ...key, requests: 0, clientErrors: 0, serverErrors: 0, durationMs: 0, latency: new Array<number>(LATENCY_SLOTS).fill(0) }
          hold(existing) // held as it is: no bucket of its key to add it into
        }
        if (cache) Object.assign(cache, { bucket: existing, startMs, generation })
      }
      existing.requests += 1
      existing.clientErrors += clientErrors
      existing.serverErrors += serverErrors
      existing.durationMs += durationMs
      existing.latency[slot]! += 1
      schedule()
    },
    persist(target) {
      if (core) return
      core = target
      target.onShutdown(async () => {
        await flush()
        closed = true
        if (timer) clearTimeout(timer)
      })
      schedule()
    },
    flush,
  }
}

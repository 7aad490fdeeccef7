// The request figures behind /metrics: counted in plain maps and handed to prom-client when scraped, in the shape
// its own Counter and Histogram give (cumulative `le` buckets, _sum, _count).
import { describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { BUCKET_OF_SLOT, DURATION_BUCKETS_S, LATENCY_BOUNDS_MS, createMetrics, latencySlot } from '../src/core/metrics'

/** `name{labels} value` lines of an exposition, by their name and label text. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line)
    if (m) out.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]))
  }
  return out
}

describe('request metrics', () => {
  it('every Prometheus bucket bound is one of the API log bounds, so a latency slot names its bucket', () => {
    for (const le of DURATION_BUCKETS_S) expect(LATENCY_BOUNDS_MS as readonly number[]).toContain(le * 1000)
    fc.assert(fc.property(fc.double({ min: 0, max: 100_000, noNaN: true }), (ms) => {
      const direct = DURATION_BUCKETS_S.findIndex((le) => ms <= le * 1000)
      expect(BUCKET_OF_SLOT[latencySlot(ms)]).toBe(direct === -1 ? DURATION_BUCKETS_S.length : direct)
    }), { numRuns: 5_000 })
    for (const ms of [0, 5, 5.000001, 10, 30_000, 30_001, 60_000, 60_001]) {
      const direct = DURATION_BUCKETS_S.findIndex((le) => ms <= le * 1000)
      expect(BUCKET_OF_SLOT[latencySlot(ms)]).toBe(direct === -1 ? DURATION_BUCKETS_S.length : direct)
    }
  })

  it('counts requests and their durations per service, method, route and status, as prom-client exposes them', async () => {
    const metrics = createMetrics()
    const done = [1, 2, 3].map(() => metrics.startRequest('quiz', 'GET'))
    await Bun.sleep(6)
    done[0]!('/quiz/api/auth/me', 200)
    done[1]!('/quiz/api/auth/me', 200)
    done[2]!(null, 404)
    const inFlight = metrics.startRequest('clinical', 'POST')
    const first = samples(await metrics.render())
    const me = 'service="quiz",method="GET",route="/quiz/api/auth/me",status="200"'
    expect(first.get(`app_ai_http_requests_total{${me}}`)).toBe(2)
    expect(first.get('app_ai_http_requests_total{service="quiz",method="GET",route="unmatched",status="404"}')).toBe(1)
    expect(first.get('app_ai_http_requests_in_flight{service="clinical"}')).toBe(1)
    expect(first.get(`app_ai_http_request_duration_seconds_count{${me}}`)).toBe(2)
    expect(first.get(`app_ai_http_request_duration_seconds_bucket{${me},le="+Inf"}`)).toBe(2)
    // Each took at least 6 ms: none is in the 5 ms bucket, both are by 1 s; the buckets only grow.
    expect(first.get(`app_ai_http_request_duration_seconds_bucket{${me},le="0.005"}`)).toBe(0)
    expect(first.get(`app_ai_http_request_duration_seconds_bucket{${me},le="1"}`)).toBe(2)
    const cumulative = DURATION_BUCKETS_S.map((le) => first.get(`app_ai_http_request_duration_seconds_bucket{${me},le="${le}"}`)!)
    expect(cumulative).toEqual([...cumulative].sort((a, b) => a - b))
    expect(first.get(`app_ai_http_request_duration_seconds_sum{${me}}`)).toBeGreaterThanOrEqual(0.012)

    // The counter is cumulative across scrapes; the finished request leaves the in-flight gauge.
    inFlight('/api/notes', 201)
    metrics.startRequest('quiz', 'GET')('/quiz/api/auth/me', 200)
    const second = samples(await metrics.render())
    expect(second.get(`app_ai_http_requests_total{${me}}`)).toBe(3)
    expect(second.get(`app_ai_http_request_duration_seconds_count{${me}}`)).toBe(3)
    expect(second.get('app_ai_http_requests_in_flight{service="clinical"}')).toBe(0)
    expect(second.get('app_ai_http_requests_total{service="clinical",method="POST",route="/api/notes",status="201"}')).toBe(1)

    metrics.registry.resetMetrics()
    const reset = samples(await metrics.render())
    expect(reset.get(`app_ai_http_request_duration_seconds_count{${me}}`)).toBeUndefined()
  })
})

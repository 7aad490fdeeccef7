// Prometheus registry (prom-client). Names begin with `app_ai_` (spec 3, metrics); requests that match no
// route are labelled route="unmatched" so label values stay bounded.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export const UNMATCHED_ROUTE = 'unmatched'

export interface Metrics {
  readonly registry: Registry
  /** Call when a request starts; the returned function records it when the response is ready. */
  startRequest(service: string, method: string): (route: string | null, status: number) => void
  render(): Promise<string>
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'app_ai_' })
  const labelNames = ['service', 'method', 'route', 'status'] as const
  const requests = new Counter({ name: 'app_ai_http_requests_total', help: 'HTTP requests', labelNames, registers: [registry] })
  const duration = new Histogram({
    name: 'app_ai_http_request_duration_seconds',
    help: 'HTTP request duration in seconds',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const inFlight = new Gauge({ name: 'app_ai_http_requests_in_flight', help: 'HTTP requests being served', labelNames: ['service'], registers: [registry] })
  return {
    registry,
    startRequest(service, method) {
      const started = performance.now()
      inFlight.inc({ service })
      return (route, status) => {
        inFlight.dec({ service })
        const labels = { service, method, route: route ?? UNMATCHED_ROUTE, status: String(status) }
        requests.inc(labels)
        duration.observe(labels, (performance.now() - started) / 1000)
      }
    },
    render: () => registry.metrics(),
  }
}

// One JSON line per event (pino). Secrets never reach a line: the redact list covers the usual carriers.
import pino from 'pino'

export type Logger = pino.Logger

/**
 * Lines are buffered and written asynchronously (the request log line written synchronously cost about a third
 * of the throughput of a cheap request, scripts/bench/http.ts); call `flushLog` before the process exits.
 */
const destinations = new WeakMap<Logger, { flushSync(): void }>()

export function createLogger(level: string = 'info'): Logger {
  const destination = pino.destination({ dest: 1, sync: false })
  const log = pino({
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'api_key', '*.api_key', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  }, destination)
  destinations.set(log, destination)
  return log
}

/** Writes out buffered lines; for the moments before process.exit. */
export function flushLog(log: Logger): void {
  try {
    destinations.get(log)?.flushSync()
  } catch {
    // nothing buffered, or stdout already closed
  }
}

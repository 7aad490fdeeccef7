// One JSON line per event (pino). Secrets never reach a line: the redact list covers the usual carriers.
import pino from 'pino'

export type Logger = pino.Logger

/**
 * Lines are buffered and written asynchronously (the request log line written synchronously cost about a third
 * of the throughput of a cheap request, scripts/bench/http.ts); call `flushLog` before the process exits.
 */
/** SonicBoom, pino's destination: `_writing` is true while an asynchronous write is in flight. */
type Destination = { flushSync(): void; _writing?: boolean }
const destinations = new WeakMap<Logger, Destination>()

const loggerOptions = (level: string): pino.LoggerOptions => ({
  level,
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
  redact: {
    paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'api_key', '*.api_key', 'secret', '*.secret'],
    censor: '[redacted]',
  },
})

/**
 * A child of `log` without the redaction pass, for the one line per request whose fields the envelope fixes (method,
 * path without its query, route, status, time, address): redaction walks every line's object for ten paths and was
 * most of the line's cost (5.4 -> 1.3 us a line). Never give it an object from a body, a header or an error.
 */
export const unredactedLogger = (log: Logger): Logger => log.child({}, { redact: [] })

/** Receives every line (JSON and its newline) of every logger made while it is installed. */
export type LogSink = (line: string) => void
let capture: LogSink | null = null

/**
 * Tests only: from now on createLogger's loggers write every line, at the most verbose level, to `sink`, and
 * print to stdout only what the requested level lets through (nothing for 'silent'). null ends the capture.
 */
export function captureLogs(sink: LogSink | null): void {
  capture = sink
}

export function createLogger(level: string = 'info'): Logger {
  if (capture) return capturedLogger(level, capture)
  const destination = pino.destination({ dest: 1, sync: false })
  const log = pino(loggerOptions(level), destination)
  destinations.set(log, destination)
  return log
}

function capturedLogger(level: string, sink: LogSink): Logger {
  const captured = { write: sink }
  if (level === 'silent') return pino(loggerOptions('trace'), captured)
  const printed = pino.destination({ dest: 1, sync: true })
  return pino(loggerOptions('trace'), pino.multistream([{ level: 'trace', stream: captured }, { level: level as pino.Level, stream: printed }]))
}

/** Writes out buffered lines; for the moments before process.exit. */
export function flushLog(log: Logger): void {
  try {
    destinations.get(log)?.flushSync()
  } catch {
    // nothing buffered, or stdout already closed
  }
}

/**
 * Writes every buffered line, after waiting for an asynchronous write in flight: flushSync leaves that one to
 * finish on its own, and a process.exit right after it would cut it off (the last lines of a shutdown were lost
 * that way). For a clean shutdown; gives up waiting after `timeoutMs`.
 */
export async function drainLog(log: Logger, timeoutMs = 2_000): Promise<void> {
  const destination = destinations.get(log)
  const until = Date.now() + timeoutMs
  while (destination?._writing && Date.now() < until) await Bun.sleep(5)
  flushLog(log)
}

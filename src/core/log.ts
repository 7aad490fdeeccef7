// One JSON line per event (pino). Secrets never reach a line: the redact list covers the usual carriers.
import { tracingChannel } from 'node:diagnostics_channel'
import { writeSync } from 'node:fs'
import pino from 'pino'

// Bun 1.4.5's TracingChannel has no `hasSubscribers` (Node's since 20.13), and pino reads it before every line: taken
// as traced, each line went through the channel's traceSync and its store handling, a twentieth of a cheap
// authenticated read (scripts/bench/http.ts). Node's own definition, until Bun has it.
const tracingChannelProto = Object.getPrototypeOf(tracingChannel('app.log.probe')) as object
if (!('hasSubscribers' in tracingChannelProto)) {
  Object.defineProperty(tracingChannelProto, 'hasSubscribers', {
    get(this: Record<'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error', { hasSubscribers: boolean }>) {
      return this.start.hasSubscribers || this.end.hasSubscribers || this.asyncStart.hasSubscribers
        || this.asyncEnd.hasSubscribers || this.error.hasSubscribers
    },
  })
}

export type Logger = pino.Logger

/** Lines wait at most this long before they are written. */
const FLUSH_MS = 50
/** A batch is written at once when this many characters are waiting. */
const BATCH_CHARS = 64 * 1024
/** While stdout does not keep up, lines past this many waiting characters are dropped (and counted), not kept. */
const MAX_WAITING_CHARS = 16 * 1024 * 1024

/**
 * The server's pino destination: lines are collected and written together, FLUSH_MS after the first line of a
 * batch or once BATCH_CHARS are waiting, in one write to stdout. pino's own (sonic-boom, asynchronous) wrote each
 * event-loop turn's lines in a write of their own, 9 us of CPU per request line more than this one under load,
 * about a tenth of a cheap authenticated read (scripts/bench/http.ts). Lines still waiting when the process exits
 * are written synchronously on the way out (the 'exit' hook); a kill -9 loses at most FLUSH_MS of lines.
 */
export class LineBuffer {
  private lines: string[] = []
  private chars = 0
  private dropped = 0
  private timer: ReturnType<typeof setTimeout> | null = null
  private writing: Promise<void> | null = null
  /** A flush was asked for (a full batch, the timer, drain) while a write ran: it follows that write at once. */
  private again = false

  /** `writer` writes a batch asynchronously (stdout by default). */
  constructor(private readonly fd: number, private readonly writer: (text: string) => Promise<unknown> = (text) => Bun.write(Bun.file(fd), text)) {}

  write(line: string): void {
    if (this.chars >= MAX_WAITING_CHARS) {
      this.dropped++
      return
    }
    if (this.chars === 0) waiting.add(this)
    this.lines.push(line)
    this.chars += line.length
    if (this.chars >= BATCH_CHARS) this.flush()
    else this.arm()
  }

  /**
   * Starts writing what waits; lines that arrive while a write runs follow it in the next, once a flush is asked
   * for (a full batch, the timer). Not at the end of every write: under load that wrote the few lines of each
   * write's own time, one write after another, and the line per request cost the app a tenth of its requests
   * over HTTP (scripts/bench/README.md, "The request line's writes").
   */
  flush(): void {
    this.clearTimer()
    if (this.writing) {
      this.again = true
      return
    }
    this.again = false
    const text = this.take()
    if (!text) return
    this.writing = this.writer(text).then(
      () => {},
      () => {}, // stdout closed: nothing left to tell
    ).finally(() => {
      this.writing = null
      if (this.again || this.dropped > 0) this.flush()
      else if (this.chars > 0) this.arm()
    })
  }

  /** The timer of what waits, unless one runs: lines wait at most FLUSH_MS. */
  private arm(): void {
    if (this.timer) return
    this.timer = setTimeout(() => this.flush(), FLUSH_MS)
    this.timer.unref()
  }

  /** Resolves once nothing waits and no write runs, or after timeoutMs. */
  async drain(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs
    while ((this.writing || this.chars > 0) && Date.now() < until) {
      this.flush()
      await Promise.race([this.writing, Bun.sleep(Math.max(1, until - Date.now()))])
    }
  }

  /** Writes what waits now, blocking; for the moments before the process exits. */
  flushSync(): void {
    this.clearTimer()
    const text = this.take()
    if (!text) return
    const bytes = Buffer.from(text)
    const until = Date.now() + 2_000
    for (let at = 0; at < bytes.length;) {
      try {
        at += writeSync(this.fd, bytes, at)
      } catch (err) {
        // a full non-blocking pipe: wait for the reader a little; anything else (stdout closed) ends the attempt
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > until) return
        Bun.sleepSync(1)
      }
    }
  }

  private take(): string {
    if (this.dropped > 0) {
      this.lines.push(`${JSON.stringify({ level: 'warn', time: new Date().toISOString(), dropped: this.dropped, msg: 'log lines dropped: stdout did not keep up' })}\n`)
      this.dropped = 0
    }
    const text = this.lines.join('')
    this.lines = []
    this.chars = 0
    waiting.delete(this)
    return text
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
}

/** Buffers with lines not yet written: whatever way the process exits, they are written on the way out. */
const waiting = new Set<LineBuffer>()
process.once('exit', () => {
  for (const buffer of waiting) buffer.flushSync()
})

const destinations = new WeakMap<Logger, LineBuffer>()

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

/** The fields of the one line per request (src/envelope.ts observe), in the order the line has them. */
export interface RequestLine {
  service: string
  method: string
  path: string
  route: string | null
  status: number
  ms: number
  ip: string
}

/**
 * The writer of the line per request, or null when the logger's level leaves it out: the line pino writes for
 * `log.info(fields, 'request')` (level, time, the fields, msg), built in one JSON.stringify and handed to the server's
 * line buffer. pino's own path (redaction, then its loop over the fields and a line built from two dozen pieces,
 * flattened only when the batch is joined) was 7% of a cheap authenticated read in process (scripts/bench/README.md).
 * A logger without the line buffer (the tests' captures) writes through pino, without redaction. Nothing is
 * redacted either way: never give it anything but these fields.
 */
export function requestLineWriter(log: Logger): ((line: RequestLine) => void) | null {
  if (!log.isLevelEnabled('info')) return null
  const buffer = destinations.get(log)
  if (!buffer) {
    const unredacted = log.child({}, { redact: [] })
    return (line) => unredacted.info(line, 'request')
  }
  return ({ service, method, path, route, status, ms, ip }) => buffer.write(`${JSON.stringify({
    level: 'info', time: isoNow(), service, method, path, route, status, ms, ip, msg: 'request',
  })}\n`)
}

/** The time as pino's isoTime writes it; the lines of one millisecond (most, under load) share one string. */
let isoMs = -1
let isoText = ''
function isoNow(): string {
  const ms = Date.now()
  if (ms !== isoMs) {
    isoMs = ms
    isoText = new Date(ms).toISOString()
  }
  return isoText
}

/** Receives every line (JSON and its newline) of every logger made while it is installed. */
export type LogSink = (line: string) => void
let capture: LogSink | null = null

/**
 * Tests only: from now on createLogger's loggers write every line, at the most verbose level, to `sink`, and
 * print to stdout only what the requested level lets through (nothing for 'silent'). null ends the capture. Answers
 * the sink it replaces.
 */
export function captureLogs(sink: LogSink | null): LogSink | null {
  const previous = capture
  capture = sink
  return previous
}

/** The server's logger: JSON lines at `level` and above, to stdout through a LineBuffer (or `destination`). */
export function createLogger(level: string = 'info', destination = new LineBuffer(1)): Logger {
  if (capture) return capturedLogger(level, capture)
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
  destinations.get(log)?.flushSync()
}

/**
 * Writes every buffered line, after waiting for a write in flight (a synchronous write beside it could come out
 * before it); for a clean shutdown. Gives up waiting after `timeoutMs`, then writes the rest synchronously.
 */
export async function drainLog(log: Logger, timeoutMs = 2_000): Promise<void> {
  const destination = destinations.get(log)
  await destination?.drain(timeoutMs)
  destination?.flushSync()
}

// Small test helpers around ports and logs: a port nothing listens on (an unreachable server), and a logger whose
// lines a test can read (to prove a secret never reaches the log).
import { Writable } from 'node:stream'
import pino from 'pino'

/** A port nothing listens on: a server bound and closed at once. */
export function closedPort(): number {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = s.port!
  s.stop(true)
  return port
}

/** A pino logger at debug level whose every line is pushed to `lines`. */
export function capturingLogger(lines: string[]) {
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb() } })
  return pino({ level: 'debug' }, sink)
}

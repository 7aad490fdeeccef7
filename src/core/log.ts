// One JSON line per event (pino). Secrets never reach a line: the redact list covers the usual carriers.
import pino from 'pino'

export type Logger = pino.Logger

export function createLogger(level: string = 'info'): Logger {
  return pino({
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['password', '*.password', 'token', '*.token', 'authorization', '*.authorization', 'api_key', '*.api_key', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  })
}

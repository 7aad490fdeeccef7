// Entry: config -> database -> migrations -> apps -> listen; graceful shutdown on SIGTERM/SIGINT.
// Only what opens the database is imported up front: the app and its plugins load while it opens (on the embedded
// default PGlite starts on a thread of its own), so the two overlap on two cores.
import { ConfigError, loadConfig } from './config'
import { databaseOptions, openDb } from './core/db'
import { createLogger, drainLog, flushLog } from './core/log'
import { MigrationError } from './core/migrate'

/** Seconds a connection may stay silent (Bun's maximum is 255). */
const IDLE_TIMEOUT_S = 120

const SHUTDOWN_GRACE_MS = 15_000
/** The largest body any route accepts (quiz PDF upload, 25 MB transcription); routes check their own limits. */
const BODY_LIMIT_SLACK = 1024 * 1024

async function main() {
  let config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message)
      process.exit(1)
    }
    throw err
  }
  const log = createLogger(config.logLevel)
  const started = performance.now()
  // A signal during start-up lets the migrations finish, then stops cleanly once the server runs; a second one
  // (start-up hanging on an unreachable database, say) ends the process at once.
  let pendingSignal: string | null = null
  const early = (signal: NodeJS.Signals) => {
    if (pendingSignal) process.exit(1)
    pendingSignal = signal
    log.warn({ signal }, 'stopping once start-up has finished; send it again to stop at once')
  }
  process.on('SIGTERM', early)
  process.on('SIGINT', early)
  const db = openDb({
    ...databaseOptions(config),
    onRest: (rest) => log.info(rest, rest.event === 'suspended'
      ? 'embedded database closed while unused (PGLITE_SUSPEND_AFTER_S); the next query opens it'
      : 'embedded database opened again'),
  })
  db.catch(() => {}) // boot() awaits it and reports a failure
  let booted
  try {
    const [{ boot }, { plugins }] = await Promise.all([import('./app'), import('../plugins')])
    booted = await boot(config, plugins, { log, db })
  } catch (err) {
    if (err instanceof MigrationError) log.fatal({ file: err.file, error: (err.cause as Error)?.message }, err.message)
    else log.fatal({ err }, 'start-up failed')
    flushLog(log)
    process.exit(1)
  }
  const maxRequestBodySize = Math.max(config.maxUploadSize, 25 * 1024 * 1024) + BODY_LIMIT_SLACK
  // A 25 MB dictation on a slow clinic uplink (or waiting its turn under load) can be silent for more than Bun's
  // default 10 s between reads: a connection is closed only after IDLE_TIMEOUT_S without a byte.
  // Never Bun's development error page (it shows source lines): the apps answer every error themselves, and what
  // escapes them is a plain 500, logged.
  const listen = {
    hostname: config.host,
    maxRequestBodySize,
    idleTimeout: IDLE_TIMEOUT_S,
    development: false,
    error(err: Error) {
      log.error({ err }, 'unhandled error in the server')
      return new Response('Request failed', { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' } })
    },
  }
  const server = Bun.serve({ ...listen, port: config.port, fetch: booted.fetch })
  const quizServer = config.quizPort !== null ? Bun.serve({ ...listen, port: config.quizPort, fetch: booted.quizFetch }) : null
  const [{ startSchedules }, { watchSnapshotRequests }] = await Promise.all([import('./core/schedule'), import('./core/backup')])
  booted.core.jobs.start()
  const stopSchedules = startSchedules(booted.core, booted.schedules)
  // A running server owns its embedded database: it answers scripts/backup.ts with a snapshot (src/core/backup.ts).
  const snapshots = watchSnapshotRequests({
    db: booted.core.db, dataDir: config.dataDir, embedded: config.databaseUrl === null, encryptionKey: config.encryptionKey, log,
  })
  log.info({
    url: `http://${config.host}:${server.port}${config.clinicalBasePath}/`,
    quiz: `http://${config.host}:${server.port}${config.quizBasePath}/`,
    quizPort: quizServer?.port ?? null,
    workers: config.workers,
    database: booted.core.db.kind,
    ms: Math.round(performance.now() - started),
  }, 'listening')

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests')
    stopSchedules()
    const forced = setTimeout(() => {
      log.error('shutdown took too long; exiting')
      flushLog(log)
      process.exit(1)
    }, SHUTDOWN_GRACE_MS + 10_000)
    // Requests and running jobs share one grace period; jobs still running after it are handed back (claimable).
    await Promise.all([
      Promise.race([Promise.all([server.stop(false), quizServer?.stop(false)]), Bun.sleep(SHUTDOWN_GRACE_MS)]),
      booted.core.jobs.stop(SHUTDOWN_GRACE_MS),
    ])
    // A finished request is logged and measured in the immediate after its response (Elysia's after-response
    // hook): let those run before the database closes and the last line is written.
    await new Promise((resolve) => setImmediate(resolve))
    await snapshots.stop()
    await booted.shutdown()
    clearTimeout(forced)
    log.info('stopped')
    await drainLog(log)
    process.exit(0)
  }
  process.off('SIGTERM', early)
  process.off('SIGINT', early)
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  if (pendingSignal) void shutdown(pendingSignal)
}

await main()

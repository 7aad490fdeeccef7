// Composition root: opens the database, migrates, builds the Core, and builds the quiz app and the clinical
// app from the plugin list, each wrapped in its request envelope (src/envelope.ts: request log and metrics,
// security headers, and the service's own rules such as the clinical CORS and API rate rule). `fetch` only
// dispatches a request to the app mounted at its path (RUNTIME.md).
import { Elysia, type AnyElysia } from 'elysia'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Config } from './config'
import { clientAddress, rememberSocketAddress } from './auth/client-address'
import { createAi } from './core/ai'
import { createCrypto } from './core/crypto'
import { databaseOptions, openDb, type Db } from './core/db'
import { DATABASE_RETRY_AFTER_S, errorMapper, outageLog, reply, type OutageLog, type ServiceStyle } from './core/errors'
import { requestPathOf } from './core/request-url'
import { withTimeout } from './core/timeout'
import { createJobs, type JobsOptions } from './core/jobs'
import { createKv } from './core/kv'
import { createLogger, type Logger } from './core/log'
import { createMailer, storedSmtpSettings } from './core/mail'
import { createMetrics } from './core/metrics'
import { migrate } from './core/migrate'
import { textBody } from './core/one-send'
import { createRateLimiter } from './core/ratelimit'
import { createSettingsCache, SETTINGS_TTL_MS } from './core/settings'
import { coreSchedules } from './core/schedule'
import { createStorage } from './core/storage'
import { openVectors, type Vectors } from './core/vectors'
import { openPgVectors, PgvectorUnavailable } from './core/vectors-pg'
import type { Core, PluginDefinition, UsePlugin } from './plugin'
import type { BoundSchedule } from './core/schedule'
import { apiDocs, bodyLimitGate, finishObserved, hardening, observe, requestRecorder } from './envelope'
import { ErrorPage } from '../views/layout'
import { staticAssets } from '../views/static'

export const ROOT_DIR = join(import.meta.dir, '..')
/** A readiness probe answers within this, database or not. */
export const HEALTH_CHECK_TIMEOUT_MS = 3_000
/**
 * The settings admins change at run time (spec 3, Configuration). It is the clinical service's table, named here
 * because the shared mailer reads the SMTP settings stored in it as well (RUNTIME.md, Mail).
 */
export const SETTINGS_TABLE = 'clinical.app_config'

export interface BootOptions {
  log?: Logger
  /** An open database, or one still opening (src/main.ts opens it while the app's modules load). */
  db?: Db | Promise<Db>
  /** Dumped PGlite data directory to start an in-memory database from (tests). */
  pgliteTemplate?: Blob
  now?: () => number
  jobs?: Partial<JobsOptions>
  /** Lifetime of the settings cache (default SETTINGS_TTL_MS; 0 reads the table each time, for benchmarks). */
  settingsTtlMs?: number
}

export interface Booted {
  core: Core
  quiz: AnyElysia
  clinical: AnyElysia
  /** The state a plugin's setup built in this boot (its guard, its writers): for tests and operator scripts. */
  stateOf<S>(plugin: PluginDefinition<S>): S
  /** Every schedule with what it runs on bound: the core's sweeps and the plugins'. */
  schedules: BoundSchedule[]
  /** Dispatches by path: the quiz app under QUIZ_BASE_PATH, the clinical app everywhere else. */
  fetch(request: Request, server?: Server<unknown> | null): Promise<Response>
  /** The QUIZ_PORT server: the quiz app at the root of its own port. */
  quizFetch(request: Request, server?: Server<unknown> | null): Promise<Response>
  shutdown(): Promise<void>
}

export async function boot(config: Readonly<Config>, plugins: PluginDefinition<any>[], opts: BootOptions = {}): Promise<Booted> {
  const log = opts.log ?? createLogger(config.logLevel)
  for (const w of config.warnings) log.warn(w)
  const db = await (opts.db ?? openDb(databaseOptions(config, opts.pgliteTemplate)))
  const applied = await migrate(db, [
    { owner: 'core', dir: join(ROOT_DIR, 'sql') },
    ...plugins.map((p) => ({ owner: p.name, dir: join(p.dir, 'sql') })),
  ])
  if (applied.length > 0) log.info({ applied }, 'migrations applied')

  const vectors = await openVectorIndex(config, db, log)
  const shutdownTasks: Array<() => Promise<void> | void> = []
  const jobs = createJobs(db, log, {
    workers: config.workers, leaseMs: config.jobLeaseMs, heartbeatMs: config.jobHeartbeatMs, ...opts.jobs,
  })
  const now = opts.now ?? Date.now
  const crypto = createCrypto(config.encryptionKey)
  const settings = createSettingsCache(db, { table: SETTINGS_TABLE, ttlMs: opts.settingsTtlMs ?? SETTINGS_TTL_MS })
  // Read once now, so `mail.configured` knows about stored SMTP settings from the first request on.
  await settings.all().catch((err) => log.warn({ err }, 'the settings table could not be read at start-up'))
  const core: Core = {
    id: nextCoreId++,
    config,
    db,
    log,
    jobs,
    kv: createKv(db),
    // Batched rules flush their counts at shutdown, before the database closes.
    // On the embedded PGlite this process is the only one counting: batched rules need not read what it holds.
    rateLimit: createRateLimiter(db, now, { log, onShutdown: (fn) => void shutdownTasks.push(fn), solo: db.kind === 'pglite' }),
    mail: createMailer(config.mail, log, { stored: storedSmtpSettings(settings, crypto, log), outbox: { db, crypto, now } }),
    settings,
    metrics: createMetrics(),
    crypto,
    ai: createAi(config, log),
    vectors,
    storage: createStorage(config),
    now,
    inTransaction: false,
    transaction: (fn) => runInTransaction(core, fn),
    afterCommit: async (fn) => void (await fn()),
    clientAddress: (request) => clientAddress(request, config.trustProxy),
    onShutdown: (fn) => void shutdownTasks.push(fn),
  }

  // Each plugin's state, set up in list order so a plugin can build on one before it (UsePlugin).
  const states = new Map<PluginDefinition<any>, unknown>()
  const use: UsePlugin = <T>(plugin: PluginDefinition<T>): T => {
    if (!states.has(plugin)) throw new Error(`plugin "${plugin.name}" must come earlier in the plugin list`)
    return states.get(plugin) as T
  }
  for (const plugin of plugins) states.set(plugin, plugin.setup ? plugin.setup(core, use) : core)
  const stateOf = <S>(plugin: PluginDefinition<S>) => states.get(plugin) as S
  for (const plugin of plugins) {
    for (const [kind, handler] of Object.entries(plugin.jobs?.(stateOf(plugin)) ?? {})) jobs.register(kind, handler)
  }
  const schedules: BoundSchedule[] = [
    ...coreSchedules.map((s) => ({ ...s, run: () => s.run(core) })),
    ...plugins.flatMap((p) => (p.schedules ?? []).map((s) => ({ ...s, run: () => s.run(stateOf(p)) }))),
  ]

  const outage = outageLog(log, now)
  const quizService = buildApp(core, 'quiz', config.quizBasePath, plugins, stateOf, outage)
  const clinicalService = buildApp(core, 'clinical', config.clinicalBasePath, plugins, stateOf, outage)
  /** Completes each response's headers (security headers, the service's defaults): hardening in src/envelope.ts. */
  const completeHeaders = { quiz: quizService.complete, clinical: clinicalService.complete }
  const quiz = quizService.app
  const clinical = clinicalService.app
    .get('/api/health', async ({ status, set }) => {
      try {
        await withTimeout(db.sql`select 1`, HEALTH_CHECK_TIMEOUT_MS, 'the database health check')
      } catch (err) {
        outage(err)
        set.headers['retry-after'] = String(DATABASE_RETRY_AFTER_S)
        return status(503, { ok: false as const })
      }
      return { ok: true as const }
    }, { detail: { tags: ['Health'], summary: 'Readiness: answers once migrations ran and every plugin is mounted' } })
    .get('/metrics', async () => new Response(textBody(await core.metrics.render()), {
      headers: { 'content-type': core.metrics.registry.contentType },
    }), { detail: { tags: ['Health'], summary: 'Prometheus metrics (app_ai_*)' } })

  const under = (base: string, path: string) => base === '' || path === base || path.startsWith(base + '/')
  // The service with the longer matching base path serves the request, so either may sit at the root.
  const isQuizPath = (path: string) => under(config.quizBasePath, path)
    && (!under(config.clinicalBasePath, path) || config.quizBasePath.length > config.clinicalBasePath.length)

  // The socket's address is asked for only when the client address needs it (not behind a trusted proxy that names
  // the client), and before the response leaves (the request line is written by then): Bun forgets it once it has.
  const socketOf = (server: Server<unknown> | null | undefined, request: Request) =>
    server ? () => server.requestIP(request)?.address : null
  const serve = async (request: Request, service: ServiceStyle, socket: (() => string | undefined) | null): Promise<Response> => {
    rememberSocketAddress(request, socket)
    let response: Response
    try {
      // The app's compiled handler itself: `handle` is an async function around it, one promise more a request.
      response = await (service === 'quiz' ? quiz : clinical).fetch(request)
    } catch (err) {
      // Elysia answers errors through the service's error mapper; this is the last resort if that itself failed.
      log.error({ err }, 'unhandled error in request')
      response = reply(service, request, 500, 'internal', 'Request failed')
    }
    finishObserved(request, response.status)
    // The security headers (and the service's own defaults) of every response but the JSON ones that have them.
    return completeHeaders[service](response)
  }

  // A request Elysia never sees (the Host header cannot be part of a URL) is still a request: logged and counted.
  const recorders = { quiz: requestRecorder(core, 'quiz'), clinical: requestRecorder(core, 'clinical') }
  const refuseBadHost = (request: Request, service: ServiceStyle, socket: (() => string | undefined) | null): Response => {
    rememberSocketAddress(request, socket)
    const finish = recorders[service](request)
    const response = badHost(service, request)
    finish(null, 400)
    return completeHeaders[service](response)
  }

  return {
    core,
    quiz,
    clinical,
    stateOf: (plugin) => use(plugin),
    schedules,
    fetch(request, server) {
      const path = requestPathOf(request)
      const service = isQuizPath(path ?? request.url) ? 'quiz' : 'clinical'
      if (path === null) return Promise.resolve(refuseBadHost(request, service, socketOf(server, request)))
      return serve(request, service, socketOf(server, request))
    },
    quizFetch(request, server) {
      const path = requestPathOf(request)
      const socket = socketOf(server, request)
      if (path === null) return Promise.resolve(refuseBadHost(request, 'quiz', socket))
      if (!isQuizPath(path)) {
        const url = new URL(request.url)
        url.pathname = config.quizBasePath + url.pathname
        request = new Request(url, request)
      }
      return serve(request, 'quiz', socket)
    },
    async shutdown() {
      await jobs.stop()
      for (const task of shutdownTasks) {
        try {
          await task()
        } catch (err) {
          log.error({ err }, 'shutdown task failed')
        }
      }
      core.mail.close()
      vectors.close()
      await db.close()
    },
  }
}

/** Bun hands a handler the bare request target when the Host header cannot be part of a URL ("a/b", empty): a malformed request. */
const badHost = (service: ServiceStyle, request: Request) => reply(service, request, 400, 'bad_request', 'Bad Request: the Host header is not a valid host')

function buildApp(
  core: Core, style: ServiceStyle, base: string, plugins: PluginDefinition<any>[], stateOf: <S>(p: PluginDefinition<S>) => S, outage: OutageLog,
) {
  const owners = plugins.filter((p) => p.app === style && p.service)
  if (owners.length !== 1) throw new Error(`exactly one plugin must define the ${style} service, found ${owners.length}`)
  const owner = owners[0]!
  const service = owner.service!
  const limits = bodyLimitGate(core, style, service.bodyLimit)
  const hardened = hardening(core, style, service.headers)
  // encodeSchema off: a response is still cleaned and checked against its schema (compiled), but not run through
  // TypeBox's transform encoder, which walked every value of a response with an integer in it (Elysia's t.Integer is
  // a transform) and was a fifth of the bank listing's time. The only transforms in the response schemas are
  // t.Integer's, whose encode returns the value as it is (scripts/bench/http.ts, README there).
  let app: AnyElysia = new Elysia({ name: `app.${style}`, prefix: base, encodeSchema: false })
    .use(errorMapper(style, core.log, {
      outage,
      page: (status, message) => ErrorPage({ status, message, base, brand: service.brand }) as string,
    }))
    .use(observe(core, style))
    .use(hardened.plugin)
  for (const rules of service.envelope?.(stateOf(owner)) ?? []) app = app.use(rules)
  app = app.use(limits.plugin)
  app = app
    .use(apiDocs(core, base, { title: service.title, description: service.description, version: '1.0.0' }, service.securitySchemes))
    .use(staticAssets())
  for (const plugin of plugins) if (plugin.app === style) app = app.use(plugin.routes(stateOf(plugin)))
  limits.useRoutes(() => app.routes)
  return { app, complete: hardened.complete }
}

let nextCoreId = 1

/**
 * VECTOR_BACKEND: pgvector when asked, or (auto) when the database is a PostgreSQL server with the extension, so
 * every process shares one index; LanceDB in VECTOR_DIR otherwise. One line at start says which, and why.
 */
async function openVectorIndex(config: Readonly<Config>, db: Db, log: Logger): Promise<Vectors> {
  let reason = `VECTOR_BACKEND=${config.vectorBackend}`
  if (config.vectorBackend === 'pgvector' || (config.vectorBackend === 'auto' && db.kind === 'postgres')) {
    try {
      const vectors = await openPgVectors(db)
      log.info({ backend: 'pgvector', reason }, 'vector index: pgvector tables in the database (schema vectors)')
      return vectors
    } catch (err) {
      if (config.vectorBackend === 'pgvector' || !(err instanceof PgvectorUnavailable)) throw err
      reason = err.message
    }
  } else if (config.vectorBackend === 'auto') reason = 'the embedded database (PGlite)'
  log.info({ backend: 'lancedb', dir: config.vectorDir, reason }, 'vector index: LanceDB folder')
  return openVectors(config.vectorDir)
}

/**
 * core.transaction: one database transaction and a Core bound to it. Work deferred with afterCommit (inline jobs,
 * waking the workers) runs in order once the commit is done; a rollback drops it.
 */
async function runInTransaction<R>(root: Core, fn: (tx: Core) => Promise<R>): Promise<R> {
  const deferred: Array<() => Promise<void> | void> = []
  const result = await root.db.transaction((db) => {
    const afterCommit = (task: () => Promise<void> | void) => void deferred.push(task)
    const tx: Core = {
      ...root,
      db,
      jobs: root.jobs.bind(db, afterCommit),
      mail: root.mail.bind(db, afterCommit),
      vectors: root.vectors.bind(db),
      kv: createKv(db),
      rateLimit: root.rateLimit.bind(db),
      inTransaction: true,
      transaction: (inner) => inner(tx),
      afterCommit: async (task) => afterCommit(task),
    }
    return fn(tx)
  })
  for (const task of deferred) await task()
  return result
}

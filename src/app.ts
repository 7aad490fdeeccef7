// Composition root: opens the database, migrates, builds the Core, and builds the quiz app and the clinical
// app from the plugin list. `fetch` dispatches a request to the app mounted at its path (RUNTIME.md) and is
// the single place that measures, logs and stamps every response, and applies spec 2's security envelope
// (src/security.ts): CORS and the /api rate limit on the clinical app, the security headers on both apps.
import { Elysia, type AnyElysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Config } from './config'
import { clientAddress, rememberSocketAddress } from './auth/client-address'
import { createAi } from './core/ai'
import { createCrypto } from './core/crypto'
import { openDb, type Db } from './core/db'
import { errorMapper, reply, type ServiceStyle } from './core/errors'
import { createJobs, type JobsOptions } from './core/jobs'
import { createKv } from './core/kv'
import { createLogger, type Logger } from './core/log'
import { createMailer } from './core/mail'
import { createMetrics, type Metrics } from './core/metrics'
import { migrate } from './core/migrate'
import { createRateLimiter } from './core/ratelimit'
import { coreSchedules } from './core/schedule'
import { createLocalStorage } from './core/storage'
import { openVectors } from './core/vectors'
import type { Core, PluginDefinition, UsePlugin } from './plugin'
import type { BoundSchedule } from './core/schedule'
import {
  CLINICAL_API_RATE_RULE, STATE_CHANGING_METHODS, bodyLimit, contentSecurityPolicy, corsHeaders, isOriginAllowed, isPreflight,
  originPolicy, preflightHeaders, securityHeaders, varyOnOrigin, withScriptNonce,
} from './security'
import { staticAssets } from '../views/static'

export const ROOT_DIR = join(import.meta.dir, '..')

export interface BootOptions {
  log?: Logger
  db?: Db
  /** Dumped PGlite data directory to start an in-memory database from (tests). */
  pgliteTemplate?: Blob
  now?: () => number
  jobs?: Partial<JobsOptions>
}

export interface Booted {
  core: Core
  quiz: AnyElysia
  clinical: AnyElysia
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
  const db = opts.db ?? (await openDb({
    url: config.databaseUrl, dataDir: config.dataDir,
    poolSize: config.databasePoolSize, pgliteTemplate: opts.pgliteTemplate,
  }))
  const applied = await migrate(db, [
    { owner: 'core', dir: join(ROOT_DIR, 'sql') },
    ...plugins.map((p) => ({ owner: p.name, dir: join(p.dir, 'sql') })),
  ])
  if (applied.length > 0) log.info({ applied }, 'migrations applied')

  const vectors = await openVectors(config.vectorDir)
  const shutdownTasks: Array<() => Promise<void> | void> = []
  const jobs = createJobs(db, log, { workers: config.workers, ...opts.jobs })
  const now = opts.now ?? Date.now
  const root: Core = {
    id: nextCoreId++,
    config,
    db,
    log,
    jobs,
    kv: createKv(db),
    rateLimit: createRateLimiter(db, now),
    mail: createMailer(config.mail, log),
    metrics: createMetrics(),
    crypto: createCrypto(config.encryptionKey),
    ai: createAi(config, log),
    vectors,
    storage: createLocalStorage(join(config.dataDir, 'files')),
    now,
    inTransaction: false,
    transaction: (fn) => runInTransaction(root, fn),
    afterCommit: async (fn) => void (await fn()),
    clientAddress: (request) => clientAddress(request, config.trustProxy),
    onShutdown: (fn) => void shutdownTasks.push(fn),
  }
  const core = root

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
    ...coreSchedules.map((s) => ({ name: s.name, cron: s.cron, run: () => s.run(core) })),
    ...plugins.flatMap((p) => (p.schedules ?? []).map((s) => ({ name: s.name, cron: s.cron, run: () => s.run(stateOf(p)) }))),
  ]

  const routeOf = new WeakMap<Request, string>()
  const quiz = buildApp(core, 'quiz', config.quizBasePath, plugins, stateOf, routeOf)
  const clinical = buildApp(core, 'clinical', config.clinicalBasePath, plugins, stateOf, routeOf)
    .get('/api/health', async ({ status }) => {
      await db.sql`select 1`.catch(() => {
        throw status(503, { ok: false })
      })
      return { ok: true as const }
    }, { detail: { tags: ['Health'], summary: 'Readiness: answers once migrations ran and every plugin is mounted' } })
    .get('/metrics', async () => new Response(await core.metrics.render(), {
      headers: { 'content-type': core.metrics.registry.contentType },
    }), { detail: { tags: ['Health'], summary: 'Prometheus metrics (app_ai_*)' } })

  const under = (base: string, path: string) => base === '' || path === base || path.startsWith(base + '/')
  // The service with the longer matching base path serves the request, so either may sit at the root.
  const isQuizPath = (path: string) => under(config.quizBasePath, path)
    && (!under(config.clinicalBasePath, path) || config.quizBasePath.length > config.clinicalBasePath.length)

  // spec 2, CORS and limits: the clinical app's envelope. Requests without an Origin pass; an allowed origin gets
  // credentialed CORS headers; a disallowed one gets none, and its state-changing /api requests are refused.
  const origins = originPolicy(config)
  const clinicalApi = config.clinicalBasePath + '/api'
  const clinicalGate = async (request: Request, path: string, originAllowed: boolean): Promise<Response | null> => {
    const isApi = path === clinicalApi || path.startsWith(clinicalApi + '/')
    if (isApi && path !== clinicalApi + '/health') { // health is exempt: load balancers poll it
      const decision = await core.rateLimit.hit(CLINICAL_API_RATE_RULE, core.clientAddress(request))
      if (!decision.allowed) {
        return reply('clinical', request, 429, 'rate_limited', 'Too many requests, try again later', {
          headers: { 'retry-after': String(decision.retryAfterS) },
        })
      }
    }
    if (isPreflight(request)) {
      return new Response(null, { status: 204, headers: originAllowed ? preflightHeaders(request.headers.get('origin')!) : {} })
    }
    if (!originAllowed && isApi && STATE_CHANGING_METHODS.has(request.method)) {
      return reply('clinical', request, 403, 'origin_not_allowed', 'Origin not allowed')
    }
    const declared = Number(request.headers.get('content-length') ?? 0)
    const limit = isApi && declared > 0 ? bodyLimit(path.slice(clinicalApi.length), request.headers.get('content-type')) : null
    if (limit !== null && declared > limit) {
      return reply('clinical', request, 413, 'body_too_large', `Request body too large: at most ${limit} bytes here`)
    }
    return null
  }
  const defaultCsp = contentSecurityPolicy(config)
  const docsPath = (service: ServiceStyle) => (service === 'quiz' ? config.quizBasePath : config.clinicalBasePath) + '/docs'

  const serve = async (request: Request, path: string, service: ServiceStyle, server: Server<unknown> | null | undefined): Promise<Response> => {
    const started = performance.now()
    rememberSocketAddress(request, server?.requestIP(request)?.address)
    const done = core.metrics.startRequest(service, request.method)
    const app = service === 'quiz' ? quiz : clinical
    const origin = request.headers.get('origin')
    const originAllowed = isOriginAllowed(origin, origins, request.url)
    let response: Response
    try {
      response = (service === 'clinical' ? await clinicalGate(request, path, originAllowed) : null) ?? await app.handle(request)
    } catch (err) {
      log.error({ err }, 'unhandled error in request')
      response = new Response(JSON.stringify(service === 'quiz' ? { detail: 'Request failed' } : { success: false, error: 'Request failed' }), {
        status: 500, headers: { 'content-type': 'application/json' },
      })
    }
    const route = routeOf.get(request) ?? null
    done(route, response.status)
    // The Swagger UI page (@elysiajs/openapi) has one inline script: it runs under a per-response nonce.
    let nonce: string | undefined
    if (path === docsPath(service) && response.headers.get('content-type')?.startsWith('text/html')) {
      nonce = randomBytes(16).toString('base64')
      response = new Response(withScriptNonce(await response.text(), nonce), response)
    }
    setHeaders(response.headers, securityHeaders(nonce ? contentSecurityPolicy(config, nonce) : defaultCsp))
    if (service === 'clinical') {
      if (origin !== null && originAllowed && !response.headers.has('access-control-allow-origin')) setHeaders(response.headers, corsHeaders(origin))
      varyOnOrigin(response.headers)
    }
    if (log.isLevelEnabled('info') && !path.includes('/static/')) {
      log.info({
        service, method: request.method, path, route, status: response.status,
        ms: Math.round((performance.now() - started) * 10) / 10, ip: core.clientAddress(request),
      }, 'request')
    }
    return response
  }

  return {
    core,
    quiz,
    clinical,
    schedules,
    fetch(request, server) {
      const path = new URL(request.url).pathname
      return serve(request, path, isQuizPath(path) ? 'quiz' : 'clinical', server)
    },
    quizFetch(request, server) {
      const url = new URL(request.url)
      if (!isQuizPath(url.pathname)) {
        url.pathname = config.quizBasePath + url.pathname
        request = new Request(url, request)
      }
      return serve(request, url.pathname, 'quiz', server)
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

const DOCS: Record<ServiceStyle, { title: string; description: string }> = {
  quiz: {
    title: 'Quiz generation service',
    description: [
      'Turns PDFs into multiple-choice quizzes, keeps a shared question bank and records attempts (spec 1).',
      '',
      'Authentication: `Authorization: Bearer <access_token>` from register (first user) or login. Tokens are',
      'HS256 JWTs valid for 7 days; changing or resetting the password, or deleting the user, ends them (a role change applies at once).',
      '',
      'Errors are FastAPI-style: `{"detail": "message"}`; validation failures are 422 with',
      '`{"detail": [{"loc": ["body", "field"], "msg": "...", "type": "..."}]}`. Missing or invalid credentials: 401',
      '(with `WWW-Authenticate: Bearer`); a role below the route\'s minimum: 403; registration while disabled: 403;',
      'a rate limit: 429 with `Retry-After` in seconds.',
    ].join('\n'),
  },
  clinical: {
    title: 'Clinical documentation assistant',
    description: [
      'Clinical documentation assistant (specs 2 and 3).',
      '',
      'Authentication: sign in with `POST /api/auth/login`. Web clients (`X-Client: web` or `browser`, or a browser',
      'User-Agent) get a 30-day token in the httpOnly `app_auth` cookie (SameSite=Lax) and a 24-hour idle limit; mobile',
      'clients (`X-Client: mobile`, `ios`, `android` or `app`, or any other User-Agent) send the 365-day token as',
      '`Authorization: Bearer <token>`. The Bearer header is read first, then the cookie. Every token has a server-side',
      'session: after logout, a password change or reset, or an admin disabling the account, it answers 401. A token',
      'from before sessions were recorded (no session id) passes while its user has no sessions at all (spec 2). The',
      '24-hour idle limit belongs to sessions signed in as web, however the token is sent later.',
      '401 bodies: `Not authenticated`, `Invalid or expired token`, `Session revoked`, or `idleTimeout: true` after 24 idle hours',
      '(web). A role below the route\'s minimum: 403.',
      '',
      'Errors: `{"success": false, "error": "message", "code": "snake_case"}`; every 5xx answers only',
      '`Request failed` and the detail stays in the server log. Validation failures are 400 with `fields`.',
      'Rate limits per client address: all /api/* 200 per minute, login 10 per 15 minutes, register and forgot-password',
      '5 per hour, resend-verification 3 per 15 minutes, change-password and the 2FA routes 20 per 15 minutes; over a',
      'limit: 429 with `Retry-After` in seconds. A declared body over 64 KiB on /api/auth/* (2 MiB elsewhere, uploads',
      'excepted): 413. Cross-site writes from an origin outside APP_URL and CORS_ORIGINS: 403.',
    ].join('\n'),
  },
}

function buildApp(
  core: Core, style: ServiceStyle, base: string, plugins: PluginDefinition<any>[], stateOf: <S>(p: PluginDefinition<S>) => S,
  routeOf: WeakMap<Request, string>,
) {
  let app: AnyElysia = new Elysia({ name: `app.${style}`, prefix: base })
    .use(errorMapper(style, core.log))
    .onTransform({ as: 'global' }, ({ request, route }) => {
      routeOf.set(request, route)
    })
    .use(openapi({
      path: '/docs',
      provider: 'swagger-ui',
      documentation: {
        info: { title: DOCS[style].title, version: '1.0.0', description: DOCS[style].description },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      },
      swagger: {
        cdn: `${base}/static/swagger/swagger-ui-bundle.js`,
        theme: `${base}/static/swagger/swagger-ui.css`,
        autoDarkMode: false,
        persistAuthorization: true,
      },
      exclude: { paths: [/\/static\//] },
    }))
    .use(staticAssets())
  for (const plugin of plugins) if (plugin.app === style) app = app.use(plugin.routes(stateOf(plugin)))
  return app
}

let nextCoreId = 1

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
      kv: createKv(db),
      rateLimit: createRateLimiter(db, root.now),
      inTransaction: true,
      transaction: (inner) => inner(tx),
      afterCommit: async (task) => afterCommit(task),
    }
    return fn(tx)
  })
  for (const task of deferred) await task()
  return result
}

/** Sets each header the response does not set itself. */
function setHeaders(headers: Headers, values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) if (!headers.has(name)) headers.set(name, value)
}

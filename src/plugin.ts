// The plugin contract: what a plugin declares, and the Core every plugin receives.
import type { AnyElysia } from 'elysia'
import type { Config } from './config'
import type { Ai } from './core/ai'
import type { Crypto } from './core/crypto'
import type { Db } from './core/db'
import type { JobHandler, Jobs } from './core/jobs'
import type { Kv } from './core/kv'
import type { Logger } from './core/log'
import type { Mailer } from './core/mail'
import type { Metrics } from './core/metrics'
import type { RateLimiter } from './core/ratelimit'
import type { SettingsCache } from './core/settings'
import type { Storage } from './core/storage'
import type { Vectors } from './core/vectors'

/**
 * The shared services handed to every plugin. Inside `core.transaction(tx => ...)` the callback gets a Core of the
 * same shape whose `db`, `kv`, `rateLimit`, `jobs`, `mail` and `vectors` work inside that transaction (PocketBase's
 * `RunInTransaction(txApp)`), so services compose: each takes the Core it is given and never knows whether it is
 * the root or a transaction.
 */
export interface Core {
  /** Tells one booted Core from another (tests boot several): the `seed` of named Elysia plugins built over it. */
  readonly id: number
  readonly config: Readonly<Config>
  readonly db: Db
  readonly log: Logger
  /** Inside a transaction, `enqueue` inserts in it: the job is visible on commit only, and never on rollback. */
  readonly jobs: Jobs
  readonly kv: Kv
  readonly rateLimit: RateLimiter
  /** The environment's mail transport, or else the SMTP settings stored in `settings`. */
  readonly mail: Mailer
  /**
   * The settings admins change at run time (the key-value table the composition root names), read through one
   * short-lived cache: a write in this process is seen at once (invalidate after commit), another process's within
   * SETTINGS_TTL_MS. Shared by the transaction-bound Core; read the table itself inside a transaction.
   */
  readonly settings: SettingsCache
  readonly metrics: Metrics
  readonly crypto: Crypto
  readonly ai: Ai
  /** The vector index: LanceDB under VECTOR_DIR, or pgvector tables in the database (VECTOR_BACKEND); bound to the transaction inside one. */
  readonly vectors: Vectors
  /**
   * Files: local ones under DATA_DIR/files, the S3 bucket when S3_* is set (`s3`, else null), and the HMAC-signed
   * short-lived links (`signLink`/`verifyLink`) through which the app serves local files.
   */
  readonly storage: Storage
  /** Date.now, injectable so tests can move the clock (idle timeouts, expiries). */
  readonly now: () => number
  /** True for a Core bound to a transaction. */
  readonly inTransaction: boolean
  /**
   * Runs fn in one transaction with a Core bound to it; throwing rolls everything back (jobs enqueued included).
   * Work registered with `afterCommit` (inline jobs with WORKERS=0, waking the workers) runs once the commit
   * is done and before this returns. On a transaction-bound Core it joins the open transaction.
   */
  transaction<R>(fn: (tx: Core) => Promise<R>): Promise<R>
  /** Runs fn after the transaction commits (at once outside one); a rolled-back transaction drops it. */
  afterCommit(fn: () => Promise<void> | void): Promise<void>
  /** The client address of a request: socket address, or X-Forwarded-For when TRUST_PROXY=true. For the edge only. */
  clientAddress(request: Request): string
  /** Registers work to run at shutdown, after the servers stop accepting (e.g. draining a writer). */
  onShutdown(fn: () => Promise<void> | void): void
}

export interface Schedule<S = Core> {
  name: string
  /** croner pattern, e.g. every 10 minutes: `0 *\/10 * * * *` (seconds field first). */
  cron: string
  run(state: S): Promise<void>
  /**
   * While the embedded database rests (DbRest), skip the run instead of opening it: for a task that holds the
   * database open itself while it has work (a hold), so a resting database means it has none.
   */
  skipWhileAsleep?: boolean
}

/** The state of another plugin, set up earlier in the plugin list (the clinical family shares the clinical one's). */
export type UsePlugin = <T>(plugin: PluginDefinition<T>) => T

/**
 * What the one plugin that defines a service (quiz, clinical) says about it: its OpenAPI text, the body limit of
 * every route that declares none, and its own envelope rules (CORS, rate rules), used before any route.
 */
export interface ServiceDefinition<S = Core> {
  title: string
  /** The short name in the page header (the error pages use it too). */
  brand: string
  description: string
  /** OpenAPI security schemes besides `bearer` (a JWT in the Authorization header), which every service has. */
  securitySchemes?: Record<string, { type: 'apiKey'; in: 'cookie' | 'header'; name: string; description?: string }>
  /** Bytes; a route or controller declares its own with the `bodyLimit` macro (src/envelope.ts). */
  bodyLimit: number
  /** Headers every response of the service carries unless it sets its own, beside the security headers (src/envelope.ts). */
  headers?: Readonly<Record<string, string>>
  envelope?: (state: S) => AnyElysia[]
}

/**
 * A feature plugin. `setup` builds, once per boot, what its routes, jobs and schedules share (its guard, a
 * batched writer, the state of a plugin it builds on); without it they get the Core itself.
 */
export interface PluginDefinition<S = Core> {
  name: string
  app: 'quiz' | 'clinical'
  /** The plugin's folder (import.meta.dir); migrations are read from its sql/ subfolder. */
  dir: string
  setup?: (core: Core, use: UsePlugin) => S
  routes: (state: S) => AnyElysia
  jobs?: (state: S) => Record<string, JobHandler>
  schedules?: Schedule<S>[]
  /** Set by the plugin that defines its app's service (exactly one per app). */
  service?: ServiceDefinition<S>
}

export const definePlugin = <S = Core>(plugin: PluginDefinition<S>): PluginDefinition<S> => plugin

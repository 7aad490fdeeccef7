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
import type { Storage } from './core/storage'
import type { Vectors } from './core/vectors'

/** The shared services handed to every plugin. */
export interface Core {
  readonly config: Readonly<Config>
  readonly db: Db
  readonly log: Logger
  readonly jobs: Jobs
  readonly kv: Kv
  readonly rateLimit: RateLimiter
  readonly mail: Mailer
  readonly metrics: Metrics
  readonly crypto: Crypto
  readonly ai: Ai
  /** The vector index (LanceDB under VECTOR_DIR). */
  readonly vectors: Vectors
  /** Local files under DATA_DIR/files. */
  readonly storage: Storage
  /** Date.now, injectable so tests can move the clock (idle timeouts, expiries). */
  readonly now: () => number
  /** The client address of a request: socket address, or X-Forwarded-For when TRUST_PROXY=true. */
  clientAddress(request: Request): string
  /** Registers work to run at shutdown, after the servers stop accepting (e.g. draining a writer). */
  onShutdown(fn: () => Promise<void> | void): void
}

export interface Schedule {
  name: string
  /** croner pattern, e.g. every 10 minutes: `0 *\/10 * * * *` (seconds field first). */
  cron: string
  run(core: Core): Promise<void>
}

export interface PluginDefinition {
  name: string
  app: 'quiz' | 'clinical'
  /** The plugin's folder (import.meta.dir); migrations are read from its sql/ subfolder. */
  dir: string
  routes: (core: Core) => AnyElysia
  jobs?: (core: Core) => Record<string, JobHandler>
  schedules?: Schedule[]
}

export const definePlugin = (plugin: PluginDefinition): PluginDefinition => plugin

const seeds = new WeakMap<Core, number>()
let nextSeed = 1
/** A small number identifying one Core: the `seed` of named Elysia plugins that close over it. */
export function coreSeed(core: Core): number {
  let seed = seeds.get(core)
  if (seed === undefined) seeds.set(core, (seed = nextSeed++))
  return seed
}

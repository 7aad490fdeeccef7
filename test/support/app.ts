// Starts the real app for a test file: the same boot() as production, on an in-memory PGlite loaded from a
// migrated template (fast), or on a fresh database of the PostgreSQL server at TEST_DATABASE_URL.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { boot, ROOT_DIR, type Booted, type BootOptions } from '../../src/app'
import { loadConfig } from '../../src/config'
import { openDb, type Db } from '../../src/core/db'
import { createLogger } from '../../src/core/log'
import { migrate } from '../../src/core/migrate'
import { plugins } from '../../plugins'
import { createThrowawayDatabase, type ThrowawayDatabase } from './database'
import { captureLoggerLines, rememberEnvSecrets, watchExchange } from './secrets'

export type DatabaseTarget = 'pglite' | 'postgres'

/** PGlite always; the PostgreSQL server too when TEST_DATABASE_URL is set. */
export function databaseTargets(): DatabaseTarget[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite']
}

let template: Promise<Blob> | null = null
/** One migrated PGlite, dumped once per test process; every test app loads a copy of it. */
function pgliteTemplate(): Promise<Blob> {
  template ??= (async () => {
    const db = await openDb({ url: 'memory://', dataDir: tmpdir() })
    await migrate(db, [
      { owner: 'core', dir: join(ROOT_DIR, 'sql') },
      ...plugins.map((p) => ({ owner: p.name, dir: join(p.dir, 'sql') })),
    ])
    const dump = await db.dumpDataDir!()
    await db.close()
    return dump
  })()
  return template
}

/** A fresh, empty database on the server of TEST_DATABASE_URL; dropped by the returned function. */
export const freshServerDatabase = (): Promise<ThrowawayDatabase> => createThrowawayDatabase(process.env.TEST_DATABASE_URL!)

export async function openCoreDb(target: DatabaseTarget, poolSize = 4): Promise<{ db: Db; close(): Promise<void> }> {
  const server = target === 'postgres' ? await freshServerDatabase() : null
  const db = await openDb({ url: server?.url ?? 'memory://', dataDir: tmpdir(), poolSize })
  await migrate(db, [{ owner: 'core', dir: join(ROOT_DIR, 'sql') }])
  return {
    db,
    async close() {
      await db.close()
      await server?.drop()
    },
  }
}

export interface TestAppOptions {
  target?: DatabaseTarget
  env?: Record<string, string | undefined>
  boot?: BootOptions
}

export interface RequestOptions {
  token?: string
  headers?: Record<string, string>
  /** Client address (sent as X-Forwarded-For; test apps run with TRUST_PROXY=true). */
  ip?: string
}

export interface TestApp {
  booted: Booted
  db: Db
  dataDir: string
  request(path: string, init?: RequestInit & RequestOptions): Promise<Response>
  get(path: string, opts?: RequestOptions): Promise<Response>
  post(path: string, body?: unknown, opts?: RequestOptions): Promise<Response>
  put(path: string, body?: unknown, opts?: RequestOptions): Promise<Response>
  patch(path: string, body?: unknown, opts?: RequestOptions): Promise<Response>
  delete(path: string, opts?: RequestOptions): Promise<Response>
  /** Posts an HTML form (application/x-www-form-urlencoded), as a browser without JavaScript does. */
  form(path: string, fields: Record<string, string>, opts?: RequestOptions): Promise<Response>
  close(): Promise<void>
}

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const target = opts.target ?? 'pglite'
  const dataDir = mkdtempSync(join(tmpdir(), 'app-test-'))
  let server: Awaited<ReturnType<typeof freshServerDatabase>> | null = null
  let databaseUrl = 'memory://'
  if (target === 'postgres') {
    server = await freshServerDatabase()
    databaseUrl = server.url
  }
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    JWT_SECRET: 'test-secret-test-secret-test-secret-0123456789',
    DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1',
    WORKERS: '0',
    TRUST_PROXY: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL,
    DATABASE_POOL_SIZE: '4',
    ...opts.env,
  }
  rememberEnvSecrets(env)
  const config = loadConfig(env)
  const log = createLogger(config.logLevel)
  const bootOpts: BootOptions = { log, ...opts.boot }
  if (opts.boot?.log) captureLoggerLines(opts.boot.log, 'app, the test\'s logger')
  if (target === 'pglite' && !bootOpts.db) bootOpts.pgliteTemplate = await pgliteTemplate()
  const booted = await boot(config, plugins, bootOpts)

  // What a browser sends with every request of our own pages: Sec-Fetch-Site, which proves a cookie-authenticated
  // write same-origin. A test that plays another site or a non-browser client sets Origin or these headers itself.
  const ownOrigin = config.appUrl ? new URL(config.appUrl).origin : 'http://localhost'
  const request = (path: string, init: RequestInit & RequestOptions = {}) => {
    const { token, ip, headers, ...rest } = init
    const h = new Headers(headers)
    if (token) h.set('authorization', `Bearer ${token}`)
    h.set('x-forwarded-for', ip ?? '10.0.0.1')
    if (h.has('cookie') && !h.has('origin') && !h.has('sec-fetch-site') && !h.has('referer')) h.set('sec-fetch-site', 'same-origin')
    // Every exchange is checked for secrets where they must not be (test/support/secrets.ts).
    return watchExchange(new Request(`http://localhost${path}`, { ...rest, headers: h }), rest.body, (r) => booted.fetch(r))
  }
  const withBody = (method: string) => (path: string, body?: unknown, o: RequestOptions = {}) =>
    request(path, {
      method,
      ...o,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  return {
    booted,
    db: booted.core.db,
    dataDir,
    request,
    get: (path, o = {}) => request(path, { method: 'GET', ...o }),
    post: withBody('POST'),
    put: withBody('PUT'),
    patch: withBody('PATCH'),
    delete: (path, o = {}) => request(path, { method: 'DELETE', ...o }),
    form: (path, fields, o = {}) =>
      request(path, {
        method: 'POST',
        ...o,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: ownOrigin, ...o.headers },
        body: new URLSearchParams(fields).toString(),
      }),
    async close() {
      await booted.shutdown()
      await server?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

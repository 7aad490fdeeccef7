// The harness of the kill -9 tests (test/job-crash*.test.ts): the real server (`bun src/main.ts`) on a data directory
// of its own, with the test AI gateway, on one database target (a PostgreSQL throwaway database, or the embedded
// PGlite of the data directory with DATABASE_URL unset). A test starts it, kills it with SIGKILL at a moment it
// chooses from outside, starts a new process on the same data and times the recovery, then reads the database and the
// vector index as the processes left them.
import { expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb, type Db } from '../../src/core/db'
import { openVectors } from '../../src/core/vectors'
import { startAiServer, type AiServer } from './ai-server'
import type { DatabaseTarget } from './app'
import { createThrowawayDatabase, type ThrowawayDatabase } from './database'
import { startServer, type ServerProcess } from './server-process'
import { waitFor } from './wait'

/** Short beats, so a killed process is known dead within a second; the lease stays at its default on purpose. */
const HEARTBEAT_MS = 200
const LEASE_MS = 60_000
/** The gateway holds the chosen request longer than any test runs: the server is killed while it waits. */
export const HOLD_MS = 600_000

export interface CrashHarnessOptions {
  /** Prefix of the temporary data directory's name. */
  dirPrefix: string
  /** DATA_ENCRYPTION_KEY of the server (64 hex digits). */
  encryptionKey: string
  /** How long recover() waits for its probe, from the new process's spawn. */
  recoveryBudgetMs: number
  /** The first user registered by setUp(), whose token every call carries. */
  adminEmail: string
  /** Named in the timings line tearDown() prints, after the target. */
  label?: string
}

export interface CrashHarness {
  /** The test AI gateway, the server's only AI provider (set by setUp()). */
  readonly ai: AiServer
  readonly dataDir: string
  /** The throwaway PostgreSQL database, or null on the PGlite target. */
  readonly database: ThrowawayDatabase | null
  /** The server's environment, the same for every process. */
  readonly env: Record<string, string>
  /** The running process, null while none is (killed, stopped, or not started yet). */
  readonly server: ServerProcess | null
  /** Recovery times by the test's own names, printed by tearDown(). */
  readonly timings: Record<string, number>
  /** fetch on the running server, with the admin's token and a JSON content type for a string body. */
  call(path: string, init?: RequestInit): Promise<Response>
  /** call() answering the parsed body; throws on a status other than 2xx. */
  json<T>(path: string, init?: RequestInit): Promise<T>
  /** Starts a new process, after killing any still running. */
  start(): Promise<void>
  /** kill -9 of the running process. */
  kill(): Promise<void>
  /** Starts a new process and waits for the probe; answers its value and the time from spawn to the probe holding. */
  recover<T>(probe: () => Promise<T | null | false>, what: string): Promise<{ value: T; ms: number }>
  /** SIGTERM, which must end the process with exit code 0. */
  stopCleanly(): Promise<void>
  /** The database and the vector index as the server left them; the server must be stopped (PGlite is single-process). */
  inspect<T>(fn: (db: Db, indexed: (collection: string) => Promise<number>) => Promise<T>): Promise<T>
  /** For beforeAll: the gateway, the data directory and database, then a server to register the admin and run `seed`. */
  setUp(seed?: () => Promise<unknown>): Promise<void>
  /** For afterAll: kills the server, removes what setUp() made and prints the timings. */
  tearDown(): Promise<void>
}

export function crashHarness(target: DatabaseTarget, opts: CrashHarnessOptions): CrashHarness {
  let ai: AiServer
  let dataDir: string
  let database: ThrowawayDatabase | null = null
  let env: Record<string, string>
  let server: ServerProcess | null = null
  let token = ''
  const timings: Record<string, number> = {}

  const call = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    if (token) headers.set('authorization', `Bearer ${token}`)
    if (typeof init.body === 'string') headers.set('content-type', 'application/json')
    return fetch(`${server!.url}${path}`, { ...init, headers })
  }
  const json = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const res = await call(path, init)
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as T
  }
  const start = async () => {
    // One process per data directory: a server a failed test left running must not share it (PGlite would fork).
    await server?.kill9()
    server = await startServer(env)
  }
  const kill = async () => {
    await server!.kill9()
    server = null
  }
  const recover = async <T>(probe: () => Promise<T | null | false>, what: string): Promise<{ value: T; ms: number }> => {
    const began = performance.now()
    await start()
    const value = await waitFor(probe, what, opts.recoveryBudgetMs)
    return { value, ms: Math.round(performance.now() - began) }
  }
  const stopCleanly = async () => {
    expect(await server!.stop()).toBe(0)
    server = null
  }
  const inspect = async <T>(fn: (db: Db, indexed: (collection: string) => Promise<number>) => Promise<T>): Promise<T> => {
    expect(server).toBeNull()
    const db = await openDb({ url: database?.url ?? null, dataDir, poolSize: 1 })
    const vectors = await openVectors(join(dataDir, 'lance'))
    try {
      return await fn(db, (collection) => vectors.count(collection))
    } finally {
      vectors.close()
      await db.close()
    }
  }

  return {
    get ai() { return ai },
    get dataDir() { return dataDir },
    get database() { return database },
    get env() { return env },
    get server() { return server },
    timings,
    call,
    json,
    start,
    kill,
    recover,
    stopCleanly,
    inspect,
    async setUp(seed) {
      ai = await startAiServer()
      dataDir = mkdtempSync(join(tmpdir(), opts.dirPrefix))
      if (target === 'postgres') database = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!)
      env = {
        DATA_DIR: dataDir,
        ...(database ? { DATABASE_URL: database.url } : {}),
        JWT_SECRET: 'crash-test-secret-crash-test-secret-0123456789',
        DATA_ENCRYPTION_KEY: opts.encryptionKey,
        WORKERS: '1',
        JOB_HEARTBEAT_MS: String(HEARTBEAT_MS),
        JOB_LEASE_MS: String(LEASE_MS),
        LOG_LEVEL: 'info',
        TRUST_PROXY: 'false',
        ...ai.env,
        EMBEDDING_MODEL: 'test-embedding',
      }
      await start()
      const res = await call('/quiz/api/auth/register', {
        method: 'POST', body: JSON.stringify({ email: opts.adminEmail, password: 'correct-horse-1', name: 'Admin' }),
      })
      expect(res.status).toBe(200)
      token = ((await res.json()) as { access_token: string }).access_token
      await seed?.()
      await stopCleanly()
    },
    async tearDown() {
      await server?.kill9()
      await ai?.close()
      await database?.drop()
      if (dataDir) rmSync(dataDir, { recursive: true, force: true })
      console.info(`[${target}] ${opts.label ? `${opts.label}: ` : ''}recovery after kill -9 (spawn to job end, ms):`, timings)
    },
  }
}

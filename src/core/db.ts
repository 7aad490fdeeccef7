// One database interface over embedded PGlite and a PostgreSQL server. Services write tagged SQL and get
// plain row arrays on both; the drivers' differences end in this file. The server driver is Bun's SQL client:
// under sustained load it ran 3-5x the queries of postgres.js here (scripts/bench/db-drivers.ts).
import { AsyncLocalStorage } from 'node:async_hooks'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'

export type Row = Record<string, unknown>

/** A piece of SQL with its own parameters, spliced into a query: db.sql`select ... where ${fragment`a = ${x}`}`. */
export class Fragment {
  constructor(readonly strings: readonly string[], readonly values: readonly unknown[]) {}
}
export const fragment = (strings: TemplateStringsArray, ...values: unknown[]): Fragment => new Fragment(strings, values)
/** Constant SQL text (a column list, a keyword) as a fragment. Never pass input through it. */
export const rawSql = (text: string): Fragment => new Fragment([text], [])
/** Joins fragments with a separator, e.g. `and`: an empty list gives `true`. */
export const joinFragments = (parts: Fragment[], separator: string): Fragment => {
  if (parts.length === 0) return new Fragment(['true'], [])
  const strings: string[] = ['']
  const values: unknown[] = []
  parts.forEach((part, i) => {
    if (i > 0) strings[strings.length - 1] += ` ${separator} `
    values.push(part)
    strings.push('')
  })
  return new Fragment(strings, values)
}

export interface Db {
  readonly kind: 'pglite' | 'postgres'
  /**
   * A parameterised query: every `${value}` becomes `$n`, a `Fragment` is spliced in with its own parameters.
   * Pass `null`, never `undefined`; pass objects or arrays (not JSON strings) for jsonb parameters.
   * Rows have one shape on both drivers: timestamps are `Date`, int8 values (bigint ids, `count(*)`) are numbers
   * (and int8[] arrays of numbers), numeric stays a string (exact), jsonb is parsed.
   */
  sql<T = Row>(strings: TemplateStringsArray, ...values: unknown[]): Promise<T[]>
  /**
   * Runs fn in one transaction; throwing rolls it back. On a transaction handle it joins the outer one.
   * On PGlite (one connection) queries on the root handle made inside fn join the transaction too.
   */
  transaction<R>(fn: (tx: Db) => Promise<R>): Promise<R>
  /** Parameterless, possibly multi-statement SQL (migrations). */
  exec(text: string): Promise<void>
  close(): Promise<void>
  /** PGlite only: the data directory as a tarball (tests start in-memory copies of a migrated template). */
  dumpDataDir?(): Promise<Blob>
  /** The embedded database on disk when it may rest while unused (DbOptions.suspendAfterMs); absent elsewhere. */
  readonly rest?: DbRest
}

/**
 * A database that rests: once unused for a while it closes to give its memory back, and the next query opens it
 * again (a few hundred milliseconds). Background work tells it apart from use, and says when work is waiting.
 */
export interface DbRest {
  /** True while it is closed. A background task with nothing to do while it rests skips its query. */
  readonly asleep: boolean
  /** Runs fn with its queries not counted as use (polls, heartbeats, sweeps): they alone do not keep it open. */
  quietly<T>(fn: () => Promise<T>): Promise<T>
  /** A check asked before it rests: true (a job to run, a mail to retry) keeps it open. Answers the unregistering. */
  holdWhile(check: () => Promise<boolean>): () => void
}

/** Runs fn as background work of db (DbRest.quietly) on a database that rests; as it is elsewhere. */
export const quietly = <T>(db: Db, fn: () => Promise<T>): Promise<T> => (db.rest ? db.rest.quietly(fn) : fn())

export interface DbOptions {
  /** null: embedded PGlite under dataDir/pg; memory://: in-memory PGlite; postgres://: a server. */
  url: string | null
  dataDir: string
  poolSize?: number
  /** Start an in-memory PGlite from a dumped data directory (tests load a migrated template). */
  pgliteTemplate?: Blob
  /** PGlite only: load pgvector, so `create extension vector` works (the pgvector vector index on PGlite). */
  vector?: boolean
  /** PGlite only: run it on a thread of its own (the default; see openPglite). false keeps it on the calling thread. */
  pgliteThread?: boolean
  /** PGlite on disk, on its thread: rest after this long unused (DbRest); 0 or unset never rests. */
  suspendAfterMs?: number
  /** Told when a resting database closes and opens again (the server logs it). */
  onRest?: (event: { event: 'suspended'; idleMs: number } | { event: 'resumed'; ms: number }) => void
}

/** The options the server opens its database with, from its configuration. */
export const databaseOptions = (
  config: { databaseUrl: string | null; dataDir: string; databasePoolSize: number; vectorBackend: string; pgliteSuspendAfterMs: number },
  pgliteTemplate?: Blob,
): DbOptions => ({
  url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize, pgliteTemplate,
  vector: config.vectorBackend === 'pgvector', suspendAfterMs: config.pgliteSuspendAfterMs,
})

/**
 * A query's text, kept by its template's strings (the same array object at every call of one call site), so most
 * queries build their text once. A template whose fragments have no parameters of their own (a column list) is kept
 * too, with those fragment objects: the text is used again while the same objects stand in the same places.
 */
interface KnownText {
  text: string
  /** Per value: the parameter-free fragment that stood there, or null for a parameter; null when there were none. */
  fragments: readonly (Fragment | null)[] | null
}
const knownTexts = new WeakMap<readonly string[], KnownText>()

/** Whether `values` hold the same fragments in the same places as the kept text was built with. */
function sameFragments(known: KnownText, values: readonly unknown[]): boolean {
  const fragments = known.fragments
  if (fragments === null) return !values.some((v) => v instanceof Fragment)
  for (let i = 0; i < values.length; i++) {
    const kept = fragments[i]
    if (kept ? values[i] !== kept : values[i] instanceof Fragment) return false
  }
  return true
}

const undefinedParameter = (before: string) => new TypeError(`undefined passed as SQL parameter after: ${before.slice(-60)}`)

export function compile(strings: readonly string[], values: readonly unknown[]): { text: string; params: unknown[] } {
  const known = knownTexts.get(strings)
  if (known !== undefined && sameFragments(known, values)) {
    const fragments = known.fragments
    const params = fragments === null ? values as unknown[] : values.filter((_, i) => fragments[i] === null)
    const i = values.indexOf(undefined)
    if (i !== -1) throw undefinedParameter(strings[i]!)
    return { text: known.text, params }
  }
  const params: unknown[] = []
  let text = ''
  let keep = Object.isFrozen(strings)
  let hasFragments = false
  const walk = (ss: readonly string[], vs: readonly unknown[], top: boolean) => {
    ss.forEach((s, i) => {
      text += s
      if (i >= vs.length) return
      const v = vs[i]
      if (v instanceof Fragment) {
        hasFragments = true
        // Only fragments without parameters, straight in the template, build a text that can be kept.
        if (!top || v.values.length > 0) keep = false
        walk(v.strings, v.values, false)
      } else {
        if (v === undefined) throw undefinedParameter(s)
        params.push(v)
        text += `$${params.length}`
      }
    })
  }
  walk(strings, values, true)
  if (keep) {
    knownTexts.set(strings, { text, fragments: hasFragments ? values.map((v) => (v instanceof Fragment ? v : null)) : null })
  }
  return { text, params }
}

/** The SQLSTATE of a database error on either driver (PGlite: `code`; Bun: `errno`). */
export function pgErrorCode(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null
  const e = err as { code?: unknown; errno?: unknown }
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code
  if (typeof e.errno === 'string' && /^[0-9A-Z]{5}$/.test(e.errno)) return e.errno
  return null
}
export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === '23505'

/**
 * The database cannot be reached or dropped the connection (the server is down, restarting or unreachable), as
 * opposed to a query's own failure: Bun's client reports it as ERR_POSTGRES_CONNECTION_* (or a socket error), the
 * server as SQLSTATE class 08 or 57P01-57P03 (shutting down, starting up).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && (/^ERR_POSTGRES_(CONNECTION|IDLE_TIMEOUT|LIFETIME_TIMEOUT)/.test(code) || /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH)$/.test(code))) return true
  const state = pgErrorCode(err)
  return state !== null && (state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03')
}

export async function openDb(opts: DbOptions): Promise<Db> {
  if (opts.url && /^postgres(ql)?:\/\//.test(opts.url)) return openBunSql(opts.url, opts.poolSize ?? 10)
  return openPglite(opts)
}

/**
 * PostgreSQL settings for PGlite beyond its own defaults. The default shared_buffers (128 MB) is touched in full
 * inside PGlite's WebAssembly memory at start, most of an idle server's memory; with one connection and the data
 * files in the OS page cache (or in memory), a smaller pool costs little (scripts/bench/README.md, start-up).
 */
export const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB']

/**
 * The embedded database on a thread of its own (db-pglite-worker.ts), where PostgreSQL's work does not hold up the
 * HTTP thread and runs on a second core; with `pgliteThread: false` on the calling thread, as below.
 */
async function openPglite(opts: DbOptions): Promise<Db> {
  if (opts.pgliteThread ?? true) return (await import('./db-pglite-worker')).openPgliteWorker(opts)
  const { PGlite } = await import('@electric-sql/pglite')
  // The contrib extensions the migrations create (a PostgreSQL server ships them as packages): pg_trgm backs the
  // quiz bank's keyword search with a trigram index.
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm')
  // pgvector ships as its own package, loaded only when asked: it adds to every start's work.
  const extensions: Record<string, typeof pg_trgm> = { pg_trgm }
  if (opts.vector) extensions.vector = (await import('@electric-sql/pglite-pgvector')).vector
  const startParams = [...PGlite.defaultStartParams, ...PGLITE_SETTINGS]
  let pg: PGlite
  if (opts.url === 'memory://') pg = await PGlite.create({ ...(opts.pgliteTemplate ? { loadDataDir: opts.pgliteTemplate } : {}), extensions, startParams })
  else {
    const dir = join(opts.dataDir, 'pg')
    mkdirSync(dir, { recursive: true })
    pg = await PGlite.create({ dataDir: dir, extensions, startParams })
  }
  type Queryable = Pick<PGlite, 'query' | 'exec'>
  // PGlite is one connection: a query on the root handle waits until an open transaction ends. One made from
  // inside that transaction's callback (a job's ctx.step() inside its handler's transaction) would wait forever,
  // so it joins the open transaction instead.
  const openTx = new AsyncLocalStorage<{ tx: Db; open: boolean }>()
  const joined = (): Db | null => {
    const state = openTx.getStore()
    return state?.open ? state.tx : null
  }
  const make = (q: Queryable, inTx: boolean): Db => ({
    kind: 'pglite',
    async sql<T>(strings: TemplateStringsArray, ...values: unknown[]) {
      const tx = inTx ? null : joined()
      if (tx) return tx.sql<T>(strings, ...values)
      const { text, params } = compile(strings, values)
      return (await q.query<T>(text, params)).rows
    },
    transaction: inTx
      ? (fn) => fn(make(q, true))
      : (fn) => {
          const tx = joined()
          if (tx) return fn(tx)
          return pg.transaction(async (t) => {
            const state = { tx: make(t, true), open: true }
            try {
              return await openTx.run(state, () => fn(state.tx))
            } finally {
              state.open = false
            }
          })
        },
    async exec(text) {
      const tx = inTx ? null : joined()
      if (tx) return tx.exec(text)
      await q.exec(text)
    },
    close: () => pg.close(),
    dumpDataDir: () => pg.dumpDataDir('none'),
  })
  return make(pg, false)
}

const INT8 = 20
const INT8_ARRAY = 1016
/** An int8 as Bun's client returns it (a string) as a number; one beyond 2^53 stays a string rather than lose digits. */
const int8 = (v: unknown) => {
  if (typeof v !== 'string') return v
  const n = Number(v)
  return Number.isSafeInteger(n) ? n : v
}
/** Bun's client gives int8 as strings (PGlite gives numbers): turn them into numbers, by the result's column types. */
function normaliseInt8<T>(result: T[] & { columns?: Array<{ name: string; type: number }> }): T[] {
  const columns = (result.columns ?? []).filter((c) => c.type === INT8 || c.type === INT8_ARRAY)
  if (columns.length === 0) return [...result]
  return result.map((row) => {
    const r = row as Record<string, unknown>
    for (const c of columns) {
      const v = r[c.name]
      r[c.name] = c.type === INT8 ? int8(v) : Array.isArray(v) ? v.map(int8) : v
    }
    return row
  })
}

async function openBunSql(url: string, max: number): Promise<Db> {
  const { SQL } = await import('bun')
  // A server that is down fails a query within connectionTimeout (seconds) instead of holding the request.
  const client = new SQL({ url, max, idleTimeout: 30, connectionTimeout: 5, onconnect: undefined })
  type Runner = { unsafe: (text: string, params?: unknown[]) => Promise<unknown> }
  const make = (q: Runner, inTx: boolean): Db => ({
    kind: 'postgres',
    async sql<T>(strings: TemplateStringsArray, ...values: unknown[]) {
      const { text, params } = compile(strings, values)
      // Bun's result is an array with extra fields (count, command, columns); the rows come back as a plain array.
      return normaliseInt8((await q.unsafe(text, params)) as T[])
    },
    transaction: inTx
      ? (fn) => fn(make(q, true))
      : (fn) => client.begin((tx) => fn(make(tx as unknown as Runner, true))) as Promise<never>,
    async exec(text) {
      await q.unsafe(text)
    },
    close: () => client.close(),
  })
  await client.unsafe('select 1')
  return make(client as unknown as Runner, false)
}

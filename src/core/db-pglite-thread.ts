// The thread that owns the embedded PGlite (db-pglite-worker.ts is the other side): it opens the database it is
// told to, then runs each request as it arrives. PGlite's own locks order them: a query outside a transaction waits
// until the open one ends, as on the main thread before. Rows go back by structured clone, which keeps PGlite's
// types (Date, number, Uint8Array, parsed jsonb); a failure goes back as its message and SQLSTATE fields.
import { parse, PGlite, protocol, type Transaction } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { PGLITE_SETTINGS } from './db'
import type { ThreadError, ThreadOpen, ThreadReply, ThreadRequest } from './db-pglite-worker'

declare const self: Worker

/** The fields of PGlite's DatabaseError that travel back: the SQLSTATE and where it came from, not the query or its parameters. */
const ERROR_FIELDS = [
  'code', 'severity', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where', 'schema', 'table',
  'column', 'dataType', 'constraint', 'file', 'line', 'routine',
] as const

let pg: PGlite | null = null
let nextTx = 1
/** Open transactions: their handle, and how to end them (true commits). */
const open = new Map<number, { tx: Transaction; end: (commit: boolean) => void; done: Promise<unknown> }>()
const ROLLBACK = Symbol('rollback')

const reply = (message: ThreadReply) => self.postMessage(message)

/**
 * Each query text is parsed once, as a named prepared statement, with its parameter types (the server driver
 * prepares its statements the same way): later runs only bind and execute it, without PostgreSQL parsing and
 * analysing the text again. The STATEMENTS_KEPT used last are kept (one takes 10-40 KB of the database's memory,
 * which WebAssembly never gives back); after any statement that may change a table all are dropped (DEALLOCATE ALL)
 * and prepared again as they come.
 */
const statements = new Map<string, { name: string; types: number[] }>()
const STATEMENTS_KEPT = 300
let nextStatement = 1
/** A statement that may change a table's columns: a prepared statement's result shape may no longer hold. */
const SCHEMA_CHANGE = /^(CREATE|ALTER|DROP)\b/

/** Drops every prepared statement; `deallocate` runs DEALLOCATE ALL where the caller holds the database. */
async function forgetStatements(deallocate: (sql: string) => Promise<unknown>): Promise<void> {
  if (statements.size === 0) return
  statements.clear()
  await deallocate('DEALLOCATE ALL')
}

/**
 * The prepared statement for a query text: Parse and Describe once, in their own round trip (a failed Parse keeps
 * nothing), closing the one used longest ago when STATEMENTS_KEPT are held.
 */
async function prepared(db: PGlite, text: string): Promise<{ name: string; types: number[] }> {
  const known = statements.get(text)
  if (known) {
    // The Map's order is the order of use: this one goes last.
    statements.delete(text)
    statements.set(text, known)
    return known
  }
  const messages: Uint8Array[] = []
  if (statements.size >= STATEMENTS_KEPT) {
    const [oldestText, oldest] = statements.entries().next().value!
    statements.delete(oldestText)
    messages.push(protocol.serialize.close({ type: 'S', name: oldest.name }))
  }
  const name = `s${nextStatement++}`
  messages.push(protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name }), protocol.serialize.sync())
  const described = await db.execProtocol(Buffer.concat(messages), { syncToFs: false })
  const statement = { name, types: parse.parseDescribeStatementResults(described.messages) }
  statements.set(text, statement)
  return statement
}

/**
 * What PGlite's query() does (Parse, Bind, Describe, Execute, Sync; parameters serialised by their types, rows
 * parsed by PGlite's parsers), sent as one message instead of six, on a statement prepared once per query text.
 * Inside a transaction its lock is already held, so only the query lock is taken.
 */
async function query(db: PGlite, text: string, params: unknown[], inTransaction: boolean): Promise<unknown[]> {
  const run = () => db._runExclusiveQuery(async () => {
    const { name, types } = await prepared(db, text)
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null
      const serialize = db.serializers[types[i]!]
      return serialize ? serialize(value) : String(value)
    })
    const { messages } = await db.execProtocol(Buffer.concat([
      protocol.serialize.bind({ statement: name, values }), protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}), protocol.serialize.sync(),
    ]), { syncToFs: false })
    if (!inTransaction) await db.syncToFs()
    const [result] = parse.parseResults(messages, db.parsers)
    if (result?.command && SCHEMA_CHANGE.test(result.command)) {
      await forgetStatements((sql) => db.execProtocol(protocol.serialize.query(sql), { syncToFs: false }))
    }
    return result?.rows ?? []
  })
  return inTransaction ? run() : db._runExclusiveTransaction(run)
}

function describe(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { message: String(err), fields: {} }
  const fields: Record<string, unknown> = {}
  for (const key of ERROR_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[key]
    if (value !== undefined) fields[key] = value
  }
  return { message: err.message, fields }
}

async function start(options: ThreadOpen): Promise<void> {
  const extensions: Record<string, typeof pg_trgm> = { pg_trgm }
  if (options.vector) extensions.vector = (await import('@electric-sql/pglite-pgvector')).vector
  pg = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    ...(options.wasmModule ? { pgliteWasmModule: options.wasmModule } : {}),
    extensions,
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS],
  })
}

/** Opens a transaction and answers once BEGIN ran; the transaction lives until an `end` request for it. */
function begin(id: number, db: PGlite): Promise<void> {
  const txId = nextTx++
  return new Promise<void>((begun) => {
    let started = false
    const done = db.transaction(async (tx) => {
      const outcome = new Promise<boolean>((end) => open.set(txId, { tx, end, done }))
      started = true
      reply({ id, ok: true, value: txId })
      begun()
      if (!(await outcome)) throw ROLLBACK
    })
    done.catch((err) => {
      if (started) return // the `end` request answers
      reply({ id, ok: false, error: describe(err) })
      begun()
    })
  })
}

async function end(txId: number, commit: boolean): Promise<void> {
  const entry = open.get(txId)
  if (!entry) throw new Error('the transaction has already ended')
  open.delete(txId)
  entry.end(commit)
  try {
    await entry.done
  } catch (err) {
    if (err !== ROLLBACK) throw err
  }
}

const handle = (tx: number | undefined) => {
  if (!tx) return pg!
  const entry = open.get(tx)
  if (!entry) throw new Error('the transaction has already ended')
  return entry.tx
}

/** Requests under way, which a close waits for. */
const running = new Set<Promise<unknown>>()

async function run(request: ThreadRequest): Promise<unknown> {
  switch (request.op) {
    case 'open':
      return start(request.options)
    case 'query':
      if (request.tx) handle(request.tx) // refuses an ended transaction
      return query(pg!, request.text, request.params, !!request.tx)
    case 'exec':
      await handle(request.tx).exec(request.text)
      await forgetStatements((sql) => handle(request.tx).exec(sql))
      return undefined
    case 'end':
      return end(request.tx, request.commit)
    case 'dump':
      return pg!.dumpDataDir('none')
    case 'close':
      // What was asked before the close finishes first; a transaction left open is rolled back.
      // (The snapshot of `running` is taken before this request is added to it.)
      const earlier = [...running, ...[...open.values()].map((entry) => entry.done)]
      for (const entry of open.values()) entry.end(false)
      open.clear()
      await Promise.allSettled(earlier)
      await pg?.close()
      pg = null
      return undefined
  }
}

/**
 * A thread that goes quiet never allocates, so its collector never runs: what a burst left (initdb and the
 * migrations leave a few hundred MB of it on a fresh data directory) would stay resident for good. Once no request
 * has come for IDLE_COLLECT_MS after a burst, the garbage is collected; a busy thread is left to its own collector.
 */
const IDLE_COLLECT_MS = 1_000
let lastRequest = 0
let idleTimer: ReturnType<typeof setTimeout> | null = null
const collectWhenIdle = (inMs: number) => {
  idleTimer = setTimeout(() => {
    const quiet = performance.now() - lastRequest
    if (quiet < IDLE_COLLECT_MS) return collectWhenIdle(IDLE_COLLECT_MS - quiet)
    idleTimer = null
    Bun.gc(true)
  }, inMs)
  idleTimer.unref()
}
const noteRequest = () => {
  lastRequest = performance.now()
  if (!idleTimer) collectWhenIdle(IDLE_COLLECT_MS)
}

self.onmessage = (event: MessageEvent<ThreadRequest>) => {
  const request = event.data
  noteRequest()
  if (request.op === 'begin') {
    void begin(request.id, pg!)
    return
  }
  const work = run(request)
  running.add(work)
  work.finally(() => running.delete(work)).catch(() => {})
  work.then(
    (value) => reply({ id: request.id, ok: true, value }),
    (err) => reply({ id: request.id, ok: false, error: describe(err) }),
  )
}

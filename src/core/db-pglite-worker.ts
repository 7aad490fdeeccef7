// The embedded PGlite on a thread of its own (db-pglite-thread.ts), behind the same Db as the server driver. PGlite
// runs PostgreSQL as WebAssembly on the thread that calls it: on the HTTP thread every query's planning and execution
// held up the requests around it. Here each query is one message to the database thread and one back; the HTTP thread
// only sends, and a second core runs the database. A transaction is opened on the thread and named by an id that its
// queries carry; the rule that a root-handle query made inside a transaction's callback joins it stays on this side.
// A database on disk can rest while unused (DbOptions.suspendAfterMs): its thread closes and ends, which gives back
// the memory PGlite holds, and the next query opens it again (see `rest` below).
import { AsyncLocalStorage } from 'node:async_hooks'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { compile, type Db, type DbOptions, type DbRest } from './db'

export interface ThreadOpen {
  /** A data directory on disk; without it the database lives in memory. */
  dataDir?: string
  /** A dumped data directory to start the in-memory database from. */
  loadDataDir?: Blob
  vector: boolean
  wasmModule?: WebAssembly.Module
}
export type ThreadRequest =
  | { id: number; op: 'open'; options: ThreadOpen }
  | { id: number; op: 'query'; tx?: number; text: string; params: unknown[] }
  | { id: number; op: 'exec'; tx?: number; text: string }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'dump' }
  | { id: number; op: 'close' }
export interface ThreadError {
  message: string
  /** code (the SQLSTATE), severity, detail, constraint, ... as PGlite's DatabaseError has them. */
  fields: Record<string, unknown>
}
export type ThreadReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ThreadError }

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never

/** Bun's Worker: the DOM typings lack its ref/unref. */
type BunWorker = Worker & { ref(): void; unref(): void }

/**
 * PGlite's compiled WebAssembly, once per process: every database thread instantiates the same module. A resting
 * database lets go of it (forgetPgliteModule): the compiled code is some 40 MB of the process's memory.
 */
let wasmModule: Promise<WebAssembly.Module> | null = null
const pgliteModule = () =>
  (wasmModule ??= (async () => {
    const url = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'))
    return WebAssembly.compile(await Bun.file(url).arrayBuffer())
  })().catch((err) => {
    wasmModule = null
    throw err
  }))
const forgetPgliteModule = () => void (wasmModule = null)

/** A failure on the database thread, with the fields of the error it had there (pgErrorCode reads `code`). */
export class PgliteThreadError extends Error {
  constructor(error: ThreadError) {
    super(error.message)
    Object.assign(this, error.fields)
  }
}

/** One database thread, opened: `call` asks it, `close` ends it. */
interface Thread {
  call<T>(request: Request): Promise<T>
  close(): Promise<void>
  /** Requests sent and not yet answered. */
  readonly inFlight: number
}

/** Starts a thread and opens the database on it; `lost` is told if the thread ends other than by `close` (a crash). */
async function startThread(options: Omit<ThreadOpen, 'wasmModule'>, lost: (err: Error) => void): Promise<Thread> {
  // The thread starts (and loads PGlite's JavaScript) while this one compiles the WebAssembly.
  const worker = new Worker(new URL('./db-pglite-thread.ts', import.meta.url).href) as BunWorker
  let wasm: WebAssembly.Module
  try {
    wasm = await pgliteModule()
  } catch (err) {
    worker.terminate()
    throw err
  }
  const pending = new Map<number, { resolve: (value: any) => void; reject: (err: Error) => void }>()
  let nextId = 1
  let stopped: Error | null = null
  let closing = false
  // The thread keeps the process alive only while it has work: an idle database never holds an exit back.
  worker.unref()
  const settle = (id: number) => {
    const waiter = pending.get(id)
    pending.delete(id)
    if (pending.size === 0) worker.unref()
    return waiter
  }
  worker.onmessage = (event: MessageEvent<ThreadReply>) => {
    const message = event.data
    const waiter = settle(message.id)
    if (message.ok) waiter?.resolve(message.value)
    else waiter?.reject(new PgliteThreadError(message.error))
  }
  const fail = (err: Error) => {
    if (!stopped && !closing) lost(err)
    stopped ??= err
    for (const id of [...pending.keys()]) settle(id)?.reject(err)
  }
  worker.addEventListener('error', (event) => fail(new Error(`the embedded database thread failed: ${event.message}`)))
  worker.addEventListener('close', () => fail(new Error('the embedded database is closed')))

  const call = <T>(request: Request): Promise<T> => {
    if (stopped) return Promise.reject(stopped)
    const id = nextId++
    return new Promise<T>((resolve, reject) => {
      if (pending.size === 0) worker.ref()
      pending.set(id, { resolve, reject })
      try {
        worker.postMessage({ ...request, id })
      } catch (err) {
        settle(id)
        reject(err as Error) // a parameter that cannot be cloned (a function)
      }
    })
  }
  try {
    await call({ op: 'open', options: { ...options, wasmModule: wasm } })
  } catch (err) {
    closing = true
    worker.terminate()
    throw err
  }
  return {
    call,
    get inFlight() {
      return pending.size
    },
    async close() {
      closing = true
      try {
        await call({ op: 'close' })
      } finally {
        stopped ??= new Error('the embedded database is closed')
        worker.terminate()
      }
    },
  }
}

/** How often a database that may rest looks whether it has been unused long enough. */
const REST_CHECK_MS = 5_000

export async function openPgliteWorker(opts: DbOptions): Promise<Db> {
  const options: Omit<ThreadOpen, 'wasmModule'> = { vector: opts.vector ?? false }
  if (opts.url === 'memory://') {
    if (opts.pgliteTemplate) options.loadDataDir = opts.pgliteTemplate
  } else {
    options.dataDir = join(opts.dataDir, 'pg')
    mkdirSync(options.dataDir, { recursive: true })
  }
  let stopped: Error | null = null
  const lost = (err: Error) => void (stopped ??= err)
  let thread: Thread | null = await startThread(options, lost)

  // Resting (a database on disk, with suspendAfterMs): once no query but background ones (`quietly`: job polls,
  // heartbeats, scheduled sweeps) has come for suspendAfterMs, no background task and no transaction is under way,
  // and no hold says work is waiting, the thread closes the database and ends. The first query after that opens it
  // again on a new thread.
  const restAfterMs = options.dataDir ? opts.suspendAfterMs ?? 0 : 0
  const quiet = new AsyncLocalStorage<true>()
  const holds = new Set<() => Promise<boolean>>()
  let lastUse = performance.now()
  let openTransactions = 0
  let quietTasks = 0
  let suspending: Promise<void> | null = null
  let waking: Promise<Thread> | null = null

  const wake = () =>
    (waking ??= (async () => {
      await suspending
      if (thread) return thread
      if (stopped) throw stopped
      const started = performance.now()
      const opened = await startThread(options, lost)
      thread = opened
      opts.onRest?.({ event: 'resumed', ms: Math.round(performance.now() - started) })
      return opened
    })().finally(() => (waking = null)))

  const restIfUnused = async () => {
    const busy = () => !thread || suspending || waking || stopped || openTransactions > 0 || quietTasks > 0 || thread.inFlight > 0
    if (busy() || performance.now() - lastUse < restAfterMs) return
    const usedBefore = lastUse
    for (const hold of holds) {
      try {
        if (await quiet.run(true, hold)) return
      } catch {
        return // a check that fails keeps the database open: it is asked again at the next look
      }
    }
    if (busy() || lastUse !== usedBefore) return
    const closing = thread!
    const idleMs = Math.round(performance.now() - usedBefore)
    thread = null
    // The thread ends even when its close fails (Thread.close): the next query opens the database afresh.
    suspending = closing.close().catch(() => {}).finally(() => {
      suspending = null
      forgetPgliteModule()
      // Nothing runs now: a full collection hands back what the work before the rest left on this thread's heap
      // too (an idle thread never allocates, so its collector would not run).
      Bun.gc(true)
      opts.onRest?.({ event: 'suspended', idleMs })
    })
  }
  const restTimer = restAfterMs > 0 ? setInterval(() => void restIfUnused(), Math.min(REST_CHECK_MS, restAfterMs)) : null
  restTimer?.unref()
  const rest: DbRest | undefined = restTimer
    ? {
        get asleep() {
          return thread === null
        },
        async quietly(fn) {
          quietTasks++
          try {
            return await quiet.run(true, fn)
          } finally {
            quietTasks--
          }
        },
        holdWhile(check) {
          holds.add(check)
          return () => void holds.delete(check)
        },
      }
    : undefined

  const call = <T>(request: Request): Promise<T> => {
    if (stopped) return Promise.reject(stopped)
    if (restTimer && !quiet.getStore()) lastUse = performance.now()
    if (thread) return thread.call<T>(request)
    return wake().then((opened) => opened.call<T>(request))
  }

  // As on PGlite in this thread: a query on the root handle made from inside an open transaction's callback (a
  // job's ctx.step() inside its handler's transaction) joins it, where waiting for it to end would wait forever.
  const openTx = new AsyncLocalStorage<{ tx: Db; open: boolean }>()
  const joined = (): Db | null => {
    const state = openTx.getStore()
    return state?.open ? state.tx : null
  }
  let closing: Promise<void> | null = null
  const close = () =>
    (closing ??= (async () => {
      if (restTimer) clearInterval(restTimer)
      await waking?.catch(() => {})
      await suspending
      const last = thread
      thread = null
      stopped ??= new Error('the embedded database is closed')
      await last?.close()
    })())
  const dumpDataDir = () => call<Blob>({ op: 'dump' })

  const inTransaction = (tx: number): Db => {
    const handle: Db = {
      kind: 'pglite',
      sql<T>(strings: TemplateStringsArray, ...values: unknown[]) {
        const { text, params } = compile(strings, values)
        return call<T[]>({ op: 'query', tx, text, params })
      },
      transaction: (fn) => fn(handle),
      exec: (text) => call({ op: 'exec', tx, text }),
      close,
      dumpDataDir,
    }
    return handle
  }

  return {
    kind: 'pglite',
    rest,
    sql<T>(strings: TemplateStringsArray, ...values: unknown[]) {
      const tx = joined()
      if (tx) return tx.sql<T>(strings, ...values)
      const { text, params } = compile(strings, values)
      return call<T[]>({ op: 'query', text, params })
    },
    async transaction(fn) {
      const outer = joined()
      if (outer) return fn(outer)
      openTransactions++
      try {
        const id = await call<number>({ op: 'begin' })
        const state = { tx: inTransaction(id), open: true }
        let result
        try {
          result = await openTx.run(state, () => fn(state.tx))
        } catch (err) {
          state.open = false
          await call({ op: 'end', tx: id, commit: false }).catch(() => {})
          throw err
        }
        state.open = false
        await call({ op: 'end', tx: id, commit: true })
        return result
      } finally {
        openTransactions--
      }
    },
    async exec(text) {
      const tx = joined()
      if (tx) return tx.exec(text)
      await call({ op: 'exec', text })
    },
    close,
    dumpDataDir,
  }
}

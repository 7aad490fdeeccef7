// Consistent snapshots of the embedded database for scripts/backup.ts. PGlite's data folder belongs to the process
// that opened it (a second opener would corrupt it), so while the server runs the server itself dumps it: the backup
// script drops a request file in DATA_DIR/backups and the server writes the snapshot next to it. A file rather than
// a signal or a route: no port or token to guard, and the answer is a file anyway. The server's process id
// (server.pid) only says that a server holds the folder.
import { createHmac } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Db } from './db'
import type { Logger } from './log'

export const BACKUP_FOLDER = 'backups'
/** How often a running server looks for a request: a backup waits about this long before its snapshot starts. */
export const SNAPSHOT_POLL_MS = 1_000
const REQUEST_SUFFIX = '.request'
const SNAPSHOT_ID = /^[A-Za-z0-9_-]{1,100}$/

/**
 * The process id of the server that owns the embedded database, in DATA_DIR while it runs. PGlite's own
 * postmaster.pid is there only while the database is open, and a resting database (PGLITE_SUSPEND_AFTER_S) is closed,
 * though still the server's: the next request opens it again.
 */
export const SERVER_PID_FILE = 'server.pid'

/**
 * Whether a server holds the embedded database in dataDir, so no other process may open it: PGlite's postmaster.pid
 * is there (an open database, or what a crash left behind), or server.pid names a process that is alive.
 */
export function embeddedDatabaseHeld(dataDir: string): boolean {
  if (existsSync(join(dataDir, 'pg', 'postmaster.pid'))) return true
  let pid: number
  try {
    pid = Number(readFileSync(join(dataDir, SERVER_PID_FILE), 'utf8').trim())
  } catch {
    return false
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' // alive, another user's
  }
}

/** Where the request and the answers of one snapshot live, by its id. */
export function snapshotFiles(dataDir: string, id: string) {
  if (!SNAPSHOT_ID.test(id)) throw new Error(`invalid snapshot id: ${id}`)
  const dir = join(dataDir, BACKUP_FOLDER)
  return {
    dir,
    request: join(dir, `${id}${REQUEST_SUFFIX}`),
    database: join(dir, `${id}.database.tar`),
    /** Written last: its presence means the snapshot is complete. */
    done: join(dir, `${id}.done.json`),
    failed: join(dir, `${id}.failed.json`),
  }
}

export interface SnapshotDone {
  created_at: string
  key_fingerprint: string
  bytes: number
  ms: number
}

/**
 * A short fingerprint of the encryption key. A restore compares it with the key it is given, so a wrong key is
 * refused before anything is written, instead of showing up later as records nobody can read.
 */
export const keyFingerprint = (key: Uint8Array): string =>
  createHmac('sha256', key).update('backup.key-check.v1').digest('hex').slice(0, 16)

/**
 * Dumps the PGlite data folder into the snapshot's files. The dump runs inside a transaction of its own, which
 * PGlite grants only when no other transaction is open, so it never lands between two statements of a request.
 */
export async function writeSnapshot(db: Db, dataDir: string, id: string, encryptionKey: Uint8Array): Promise<SnapshotDone> {
  if (!db.dumpDataDir) throw new Error('only the embedded database (PGlite) can be snapshotted this way')
  const files = snapshotFiles(dataDir, id)
  const started = performance.now()
  const tarball = await db.transaction((tx) => tx.dumpDataDir!())
  await Bun.write(`${files.database}.part`, tarball)
  await rename(`${files.database}.part`, files.database)
  const done: SnapshotDone = {
    created_at: new Date().toISOString(),
    key_fingerprint: keyFingerprint(encryptionKey),
    bytes: tarball.size,
    ms: Math.round(performance.now() - started),
  }
  await writeWhole(files.done, JSON.stringify(done))
  return done
}

/** Written under another name, then renamed: the script polling for it never reads half a file. */
async function writeWhole(path: string, text: string): Promise<void> {
  await writeFile(`${path}.part`, text)
  await rename(`${path}.part`, path)
}

/**
 * Answers snapshot requests while the server runs on an embedded database in DATA_DIR/pg (nothing to do on a
 * PostgreSQL server, which pg_dump reads directly), and keeps server.pid meanwhile. stop() waits for a snapshot
 * under way, so shutdown can close the database after it.
 */
export function watchSnapshotRequests(opts: { db: Db; dataDir: string; embedded: boolean; encryptionKey: Uint8Array; log: Logger }): { stop(): Promise<void> } {
  if (!opts.embedded || !opts.db.dumpDataDir) return { stop: async () => {} }
  const dir = join(opts.dataDir, BACKUP_FOLDER)
  const pidFile = join(opts.dataDir, SERVER_PID_FILE)
  writeFileSync(pidFile, `${process.pid}\n`)
  let running: Promise<void> | null = null
  const answer = async (id: string) => {
    const files = snapshotFiles(opts.dataDir, id)
    await rm(files.request, { force: true }) // taken: a second look does not start it again
    try {
      const done = await writeSnapshot(opts.db, opts.dataDir, id, opts.encryptionKey)
      opts.log.info({ snapshot: id, bytes: done.bytes, ms: done.ms }, 'database snapshot written for a backup')
    } catch (err) {
      opts.log.error({ err, snapshot: id }, 'database snapshot failed')
      await writeWhole(files.failed, JSON.stringify({ error: err instanceof Error ? err.message : String(err) })).catch(() => {})
    }
  }
  const look = async () => {
    if (!existsSync(dir)) return
    const ids = (await readdir(dir)).filter((n) => n.endsWith(REQUEST_SUFFIX)).map((n) => n.slice(0, -REQUEST_SUFFIX.length))
    for (const id of ids) if (SNAPSHOT_ID.test(id)) await answer(id)
  }
  const timer = setInterval(() => {
    if (running) return
    running = look()
      .catch((err) => opts.log.error({ err }, 'looking for backup requests failed'))
      .finally(() => { running = null })
  }, SNAPSHOT_POLL_MS)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
      rmSync(pidFile, { force: true })
    },
  }
}

// Backup of everything the service keeps, into one .tar.gz: the database (a PGlite snapshot, or pg_dump of a
// PostgreSQL server), the local files (DATA_DIR/files), the generated secrets (DATA_DIR/secrets.json) when the keys
// come from there, and manifest.json saying what it holds. The vector index is not in it: scripts/restore.ts rebuilds
// it from the database. Run it with the server's own environment (DATA_DIR, DATABASE_URL, keys, S3_*):
//
//   npm run backup                                  (DATA_DIR/backups/backup-<time>.tar.gz)
//   npm run backup -- --out /mnt/offsite/clinic.tar.gz
//   npm run backup -- --offline                     (the server is stopped; PGlite is read directly)
//
// On PGlite the running server takes the snapshot itself (src/core/backup.ts): the script asks through a request
// file and waits for the answer, while the server keeps serving.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve, sep } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig, type Config } from '../src/config'
import { embeddedDatabaseHeld, keyFingerprint, SERVER_PID_FILE, snapshotFiles, writeSnapshot, type SnapshotDone } from '../src/core/backup'
import { openDb } from '../src/core/db'

export const MANIFEST_FORMAT = 1
export const SECRETS_FILE = 'secrets.json'
/** How long a running server has to take a request before the backup gives up (it looks every second). */
const TAKE_TIMEOUT_MS = 30_000
/** How long a taken snapshot may run: the dump holds the whole data folder in memory, so a large one takes a while. */
const SNAPSHOT_TIMEOUT_MS = 30 * 60_000

export interface Manifest {
  format: number
  created_at: string
  app_version: string
  database: { kind: 'pglite' | 'postgres'; file: string; taken: 'online' | 'offline' | 'pg_dump' }
  files: { included: boolean; count: number; bytes: number }
  /** Clinical documents in an S3 bucket are not copied here: the bucket is backed up with S3 tools. */
  object_storage: { endpoint: string; bucket: string; included: false } | null
  secrets: { included: boolean; source: 'secrets.json' | 'environment'; key_fingerprint: string }
  vector_index: { included: false; rebuilt_on_restore: true }
}

export class BackupError extends Error {}

/**
 * The server's configuration, read without side effects: a key that is neither set nor kept in DATA_DIR is an
 * error here, never generated (loadConfig would generate one outside production).
 */
export function readConfig(env: Record<string, string | undefined>): Readonly<Config> {
  const dataDir = resolve(env.DATA_DIR?.trim() || './data')
  if (!env.DATA_ENCRYPTION_KEY?.trim() && !existsSync(join(dataDir, SECRETS_FILE))) {
    throw new BackupError(`no encryption key: DATA_ENCRYPTION_KEY is not set and ${join(dataDir, SECRETS_FILE)} does not exist. `
      + 'Run with the environment the server runs with')
  }
  // JWT_SECRET plays no part here; a stand-in keeps loadConfig from generating one into DATA_DIR.
  return loadConfig({ ...env, JWT_SECRET: env.JWT_SECRET?.trim() || 'not-used-by-backup-or-restore-0123456789' })
}

/** Runs a command; throws with its error output unless it exits 0 (or `tolerate` accepts its failure). */
export async function run(cmd: string[], opts: { tolerate?: (code: number, stderr: string) => boolean } = {}): Promise<void> {
  const proc = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  if (code === 0 || opts.tolerate?.(code, stderr)) {
    if (stderr.trim()) console.warn(stderr.trim())
    return
  }
  throw new BackupError(`${cmd[0]} exited with ${code}: ${stderr.trim()}`)
}

/** GNU tar exits 1 when a file changed or went away while it was read (an upload or a delete during the backup). */
const changedWhileRead = (code: number, stderr: string) =>
  code === 1 && stderr.split('\n').filter((l) => l.trim()).every((l) => /changed as we read it|removed before we read it|file changed/i.test(l))

const walk = (dir: string): { count: number; bytes: number } => {
  let count = 0
  let bytes = 0
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    count++
    bytes += statSync(join(entry.parentPath, entry.name)).size
  }
  return { count, bytes }
}

const waitFor = async <T>(check: () => T | null, timeoutMs: number, what: string): Promise<T> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== null) return value
    if (Date.now() > until) throw new BackupError(what)
    await Bun.sleep(200)
  }
}

/** The PGlite snapshot: asked of the running server, or taken directly when none holds the data folder. */
async function snapshotPglite(config: Readonly<Config>, id: string, offline: boolean): Promise<SnapshotDone & { taken: 'online' | 'offline' }> {
  const files = snapshotFiles(config.dataDir, id)
  mkdirSync(files.dir, { recursive: true })
  // A running server holds the folder, its database open or resting (after a crash: --offline is for that case).
  if (offline || !embeddedDatabaseHeld(config.dataDir)) {
    if (!existsSync(join(config.dataDir, 'pg', 'PG_VERSION'))) throw new BackupError(`no embedded database in ${join(config.dataDir, 'pg')}`)
    const db = await openDb({ url: null, dataDir: config.dataDir })
    try {
      return { ...(await writeSnapshot(db, config.dataDir, id, config.encryptionKey)), taken: 'offline' }
    } finally {
      await db.close()
    }
  }
  writeFileSync(files.request, '')
  const failed = () => (existsSync(files.failed) ? (JSON.parse(readFileSync(files.failed, 'utf8')) as { error: string }) : null)
  try {
    await waitFor(() => (existsSync(files.request) ? null : true), TAKE_TIMEOUT_MS,
      `no running server took the snapshot request within ${TAKE_TIMEOUT_MS / 1000} s. If the server is stopped (a crash leaves `
      + `${join(config.dataDir, 'pg', 'postmaster.pid')} or ${join(config.dataDir, SERVER_PID_FILE)} behind), run again with --offline`)
    const done = await waitFor(() => {
      const failure = failed()
      if (failure) throw new BackupError(`the server could not take the snapshot: ${failure.error}`)
      return existsSync(files.done) ? (JSON.parse(readFileSync(files.done, 'utf8')) as SnapshotDone) : null
    }, SNAPSHOT_TIMEOUT_MS, 'the server took the snapshot request but did not finish it in time')
    return { ...done, taken: 'online' }
  } finally {
    rmSync(files.request, { force: true })
    rmSync(files.failed, { force: true })
  }
}

export async function backup(env: Record<string, string | undefined>, opts: { out?: string; offline?: boolean } = {}) {
  const started = performance.now()
  const config = readConfig(env)
  if (config.databaseUrl === 'memory://') throw new BackupError('DATABASE_URL=memory:// keeps nothing to back up')
  const id = `backup-${new Date().toISOString().replace(/[:.]/g, '-')}`
  const out = resolve(opts.out ?? join(config.dataDir, 'backups', `${id}.tar.gz`))
  const snapshot = snapshotFiles(config.dataDir, id)
  const staging = join(snapshot.dir, id)
  mkdirSync(staging, { recursive: true })
  try {
    // The database first, then the files: a file deleted after the snapshot is the only thing the archive can miss.
    let database: Manifest['database']
    let fingerprint: string
    if (config.databaseUrl === null) {
      const done = await snapshotPglite(config, id, opts.offline ?? false)
      renameSync(snapshot.database, join(staging, 'database.tar'))
      database = { kind: 'pglite', file: 'database.tar', taken: done.taken }
      fingerprint = done.key_fingerprint
    } else {
      // pg_dump reads one consistent snapshot of the server while the service keeps running.
      await run(['pg_dump', '--format=custom', '--no-owner', `--file=${join(staging, 'database.dump')}`, `--dbname=${config.databaseUrl}`])
      database = { kind: 'postgres', file: 'database.dump', taken: 'pg_dump' }
      fingerprint = keyFingerprint(config.encryptionKey)
    }
    const filesDir = join(config.dataDir, 'files')
    const files = existsSync(filesDir) ? { included: true, ...walk(filesDir) } : { included: false, count: 0, bytes: 0 }
    const keysFromFile = !env.DATA_ENCRYPTION_KEY?.trim()
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      created_at: new Date().toISOString(),
      app_version: (JSON.parse(readFileSync(join(import.meta.dir, '..', 'package.json'), 'utf8')) as { version: string }).version,
      database,
      files,
      object_storage: config.s3 ? { endpoint: config.s3.endpoint, bucket: config.s3.bucket, included: false } : null,
      secrets: { included: keysFromFile, source: keysFromFile ? 'secrets.json' : 'environment', key_fingerprint: fingerprint },
      vector_index: { included: false, rebuilt_on_restore: true },
    }
    writeFileSync(join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2))
    const fromDataDir = [...(files.included ? ['files'] : []), ...(keysFromFile ? [SECRETS_FILE] : [])]
    mkdirSync(dirname(out), { recursive: true })
    // Created 0600 before tar writes into it: with secrets.json inside, the archive is as secret as the key.
    writeFileSync(`${out}.part`, '', { mode: 0o600 })
    await run(['tar', '-czf', `${out}.part`, '-C', staging, 'manifest.json', database.file,
      ...(fromDataDir.length > 0 ? ['-C', config.dataDir, ...fromDataDir] : [])], { tolerate: changedWhileRead })
    renameSync(`${out}.part`, out)
    return { out, manifest, dataDir: config.dataDir, bytes: statSync(out).size, ms: Math.round(performance.now() - started) }
  } finally {
    rmSync(staging, { recursive: true, force: true })
    for (const leftover of [snapshot.database, snapshot.done, `${out}.part`]) rmSync(leftover, { force: true })
  }
}

const size = (bytes: number) => (bytes < 1e6 ? `${Math.ceil(bytes / 1e3)} kB` : `${(bytes / 1e6).toFixed(1)} MB`)

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, offline: { type: 'boolean' } } })
  try {
    const made = await backup(process.env, { out: values.out, offline: values.offline })
    const m = made.manifest
    console.log(`backup written: ${made.out} (${size(made.bytes)} in ${made.ms} ms)`)
    console.log(`  database: ${m.database.kind} (${m.database.taken}); files: ${m.files.count} (${size(m.files.bytes)})`)
    console.log(m.secrets.included
      ? '  secrets.json is inside: keep this archive as safe as the key itself'
      : '  the keys come from the environment and are not inside: keep DATA_ENCRYPTION_KEY to restore it')
    if (m.object_storage) console.log(`  the S3 bucket ${m.object_storage.bucket} is not inside: back it up with an S3 tool (README, Backup and restore)`)
    if (made.out.startsWith(made.dataDir + sep)) console.log('  it lies under DATA_DIR: copy it to another disk')
  } catch (err) {
    console.error(`backup failed: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  }
}

// Restore of an archive made by scripts/backup.ts into a fresh DATA_DIR (and, for a PostgreSQL deployment, an empty
// database at DATABASE_URL), then the vector index rebuilt from the restored database by the jobs that rebuild it in
// normal operation. Run it with the environment the restored server will run with, before starting it:
//
//   DATA_DIR=/srv/clinic npm run restore -- /mnt/offsite/clinic.tar.gz
//   DATA_DIR=/srv/clinic npm run restore -- /mnt/offsite/clinic.tar.gz --force   (replace what is already there)
//   DATA_DIR=/srv/clinic npm run restore -- --reindex-only                          (rebuild the vector index only)
//
// The encryption key is checked before anything is written: the one in the archive's secrets.json, or
// DATA_ENCRYPTION_KEY when the backup was taken from a server that had it from its environment.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import { parseArgs } from 'node:util'
import { boot } from '../src/app'
import { embeddedDatabaseHeld, keyFingerprint } from '../src/core/backup'
import { createLogger, drainLog } from '../src/core/log'
import { plugins } from '../plugins'
import { reindexAllContent } from '../plugins/learning/service-search'
import { REGENERATE_JOB_KIND } from '../plugins/quiz/services/ai-models'
import { BackupError, MANIFEST_FORMAT, readConfig, run, SECRETS_FILE, type Manifest } from './backup'

type Env = Record<string, string | undefined>

const isEmpty = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0
/** VECTOR_DIR may be an object-store URI LanceDB accepts; only a local folder is cleared here. */
const isLocalFolder = (uri: string) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)

async function refuseNonEmptyDatabase(url: string): Promise<void> {
  const { SQL } = await import('bun')
  const db = new SQL({ url, max: 1, connectionTimeout: 10 })
  try {
    const [row] = (await db.unsafe(
      `select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')`,
    )) as Array<{ n: number }>
    if (row!.n > 0) throw new BackupError(`the database at DATABASE_URL already holds ${row!.n} tables: restore into an empty database, or pass --force to replace them`)
  } finally {
    await db.close()
  }
}

/**
 * Rebuilds the vector index from the database: the question bank by the admins' regenerate job
 * (quiz.embedding.regenerate), the learning hub's collection by its reindex. The server must be stopped: an
 * embedded database has one owner.
 */
export async function reindex(env: Env, opts: { force?: boolean } = {}): Promise<{ questions: number; contents: number }> {
  const config = readConfig({ ...env, WORKERS: '0' })
  if (config.databaseUrl === null && embeddedDatabaseHeld(config.dataDir) && !opts.force) {
    throw new BackupError(`a server seems to hold ${join(config.dataDir, 'pg')}: stop it first (after a crash, pass --force)`)
  }
  const log = createLogger(env.LOG_LEVEL ?? 'warn')
  // Config's notes on generated keys would mislead here: the keys are the restored ones.
  const booted = await boot({ ...config, warnings: [] }, plugins, { log })
  try {
    const job = await booted.core.jobs.enqueue(REGENERATE_JOB_KIND, {}, { service: 'quiz', title: 'Rebuild question embeddings after a restore' })
    if (job.status !== 'completed') {
      throw new BackupError(`the question bank's index could not be rebuilt (${job.error ?? job.status}): the data is restored; `
        + 'run again with --reindex-only once the embedding model answers')
    }
    const questions = (job.result as { embedded?: number } | null)?.embedded ?? 0
    const contents = await reindexAllContent(booted.core)
    return { questions, contents }
  } finally {
    await booted.shutdown()
    await drainLog(log)
  }
}

export async function restore(env: Env, archive: string, opts: { force?: boolean } = {}) {
  const started = performance.now()
  const dataDir = resolve(env.DATA_DIR?.trim() || './data')
  const url = env.DATABASE_URL?.trim() || null
  if (url === 'memory://') throw new BackupError('DATABASE_URL=memory:// keeps nothing: restore into DATA_DIR or a PostgreSQL database')
  if (!existsSync(archive)) throw new BackupError(`no such archive: ${archive}`)
  const force = opts.force ?? false
  const vectorUri = env.VECTOR_DIR?.trim() || join(dataDir, 'lance')
  const vectorDir = isLocalFolder(vectorUri) ? resolve(vectorUri) : vectorUri
  const wasEmpty = isEmpty(dataDir)
  if (!wasEmpty && !force) throw new BackupError(`${dataDir} is not empty: restore into a fresh DATA_DIR, or pass --force to replace what it holds`)
  if (isLocalFolder(vectorDir) && !vectorDir.startsWith(dataDir + sep) && !isEmpty(vectorDir) && !force) {
    throw new BackupError(`VECTOR_DIR ${vectorDir} is not empty: pass --force to clear it (the index is rebuilt from the database)`)
  }
  mkdirSync(dataDir, { recursive: true })
  const staging = join(dataDir, '.restore')
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging)
  let manifestRead: Manifest
  try {
    await run(['tar', '-xzf', resolve(archive), '-C', staging])
    if (!existsSync(join(staging, 'manifest.json'))) throw new BackupError(`${archive} holds no manifest.json: not a backup of this service`)
    const manifest = JSON.parse(readFileSync(join(staging, 'manifest.json'), 'utf8')) as Manifest
    if (manifest.format !== MANIFEST_FORMAT) throw new BackupError(`backup format ${manifest.format} is not known here (this version reads ${MANIFEST_FORMAT})`)
    const kind = url ? 'postgres' : 'pglite'
    if (manifest.database.kind !== kind) {
      throw new BackupError(manifest.database.kind === 'pglite'
        ? 'this backup holds an embedded (PGlite) database: restore it with DATABASE_URL unset'
        : 'this backup holds a pg_dump of a PostgreSQL server: restore it with DATABASE_URL set to an empty database')
    }
    if (url && !force) await refuseNonEmptyDatabase(url)

    // The key before anything else: a wrong one would leave records and sealed files nobody can read.
    if (manifest.secrets.included) {
      copyFileSync(join(staging, SECRETS_FILE), join(dataDir, SECRETS_FILE))
      chmodSync(join(dataDir, SECRETS_FILE), 0o600)
    } else if (!env.DATA_ENCRYPTION_KEY?.trim()) {
      throw new BackupError('this backup does not hold the encryption key (the server had it from its environment): '
        + 'set DATA_ENCRYPTION_KEY to that key')
    }
    const config = readConfig({ ...env, DATA_DIR: dataDir })
    if (keyFingerprint(config.encryptionKey) !== manifest.secrets.key_fingerprint) {
      throw new BackupError('the encryption key differs from the one the backup was taken with'
        + (manifest.secrets.included && env.DATA_ENCRYPTION_KEY ? ' (DATA_ENCRYPTION_KEY is set and wins over the secrets.json of the backup)' : '')
        + ': encrypted records and sealed files would be unreadable. Restore with the key of the backed-up server')
    }

    const databaseFile = join(staging, manifest.database.file)
    if (url) {
      await run(['pg_restore', '--no-owner', '--exit-on-error', ...(force ? ['--clean', '--if-exists'] : []), `--dbname=${url}`, databaseFile])
    } else {
      rmSync(join(dataDir, 'pg'), { recursive: true, force: true })
      const { PGlite } = await import('@electric-sql/pglite')
      const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm')
      const pg = await PGlite.create({ dataDir: join(dataDir, 'pg'), loadDataDir: Bun.file(databaseFile), extensions: { pg_trgm } })
      await pg.close()
    }
    if (existsSync(join(staging, 'files'))) {
      rmSync(join(dataDir, 'files'), { recursive: true, force: true })
      renameSync(join(staging, 'files'), join(dataDir, 'files'))
    }
    if (isLocalFolder(config.vectorDir)) rmSync(config.vectorDir, { recursive: true, force: true })
    manifestRead = manifest
  } catch (err) {
    // A restore into a fresh DATA_DIR that failed leaves it fresh, so it can simply be run again.
    if (wasEmpty) for (const entry of readdirSync(dataDir)) rmSync(join(dataDir, entry), { recursive: true, force: true })
    throw err
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  // The data is in place from here on; a failed rebuild says so and can be run again alone.
  const indexed = await reindex({ ...env, DATA_DIR: dataDir }, { force })
  return { manifest: manifestRead, dataDir, ...indexed, ms: Math.round(performance.now() - started) }
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true, options: { force: { type: 'boolean' }, 'reindex-only': { type: 'boolean' } },
  })
  try {
    if (values['reindex-only']) {
      const { questions, contents } = await reindex(process.env, { force: values.force })
      console.log(`vector index rebuilt: ${questions} questions, ${contents} learning items`)
    } else {
      if (positionals.length !== 1) throw new BackupError('usage: npm run restore -- <backup.tar.gz> [--force]   or   npm run restore -- --reindex-only')
      const done = await restore(process.env, positionals[0]!, { force: values.force })
      console.log(`restored ${done.manifest.database.kind} backup of ${done.manifest.created_at} into ${done.dataDir} in ${done.ms} ms`)
      console.log(`  files: ${done.manifest.files.count}; vector index rebuilt: ${done.questions} questions, ${done.contents} learning items`)
      if (done.manifest.object_storage) console.log(`  clinical documents live in the S3 bucket ${done.manifest.object_storage.bucket}: restore it with an S3 tool`)
      console.log('  start the server with the same environment')
    }
  } catch (err) {
    console.error(`restore failed: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  }
}

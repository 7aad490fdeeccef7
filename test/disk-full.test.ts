// A full disk under DATA_DIR, met by the real server (`bun src/main.ts`) on each database target: DATA_DIR is a small
// tmpfs, filled up with a filler file once the server runs (for PGlite the database lives there too, in DATA_DIR/pg),
// and every upload route that writes under DATA_DIR/files must answer 507 disk_full, keep no row and no partial file,
// and take the same upload once the filler is deleted, with no restart. Mounting needs root (CAP_SYS_ADMIN): where it
// is refused the tests are skipped and say so.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Elysia } from 'elysia'
import { mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hashPassword } from '../src/auth/password'
import { createCrypto } from '../src/core/crypto'
import { openDb } from '../src/core/db'
import { DISK_FULL_MESSAGE, DISK_FULL_NOTHING_SAVED, errorMapper } from '../src/core/errors'
import { createLogger } from '../src/core/log'
import { PARTIAL_SUFFIX } from '../src/core/storage'
import { databaseTargets } from './support/app'
import { createThrowawayDatabase, type ThrowawayDatabase } from './support/database'
import { makePdf, numberedPages } from './support/pdf'
import { startServer, type ServerProcess } from './support/server-process'
import { waitFor } from './support/wait'

const QUIZ_API = '/quiz/api'
/** Room for a migrated PGlite, its vector index and the uploads; the filler takes whatever is left. */
const TMPFS_SIZE = '160m'
const CLINICAL_PASSWORD = 'Correct-horse-battery-9'
const DISK_FULL_TIMEOUT_MS = 60_000
/** Each upload meets a disk with no byte free, then one with this much (a whole number of pages), less than the upload. */
const DISK_LEFTS = [0, 64 * 1024]

const run = (cmd: string[]) => Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' })

/** Whether this machine lets the tests mount a tmpfs (root, or CAP_SYS_ADMIN): tried once on a probe folder. */
function tmpfsPermitted(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'disk-full-probe-'))
  try {
    if (!run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).success) return false
    run(['umount', probe])
    return true
  } catch {
    return false // no mount program at all
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}

const MOUNTABLE = tmpfsPermitted()
if (!MOUNTABLE) console.info('test/disk-full.test.ts skipped: mounting a tmpfs is not permitted here (it needs root or CAP_SYS_ADMIN)')

/** A small tmpfs at a new folder; `unmount` is safe to call twice. */
function mountTmpfs(prefix: string, size: string): { dir: string; unmount: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const mounted = run(['mount', '-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
  if (!mounted.success) throw new Error(`mount failed: ${mounted.stderr.toString()}`)
  let done = false
  return {
    dir,
    unmount() {
      if (done) return
      done = true
      // Lazily when still busy, so a failed test never leaves the mount behind.
      if (!run(['umount', dir]).success) run(['umount', '-l', dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Every file under a folder (relative paths, sorted); none when it does not exist. */
function filesUnder(dir: string): string[] {
  try {
    return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<{ isFile(): boolean; parentPath: string; name: string }>)
      .filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort()
  } catch {
    return []
  }
}

/**
 * Fills the file system with one file until the kernel refuses more, then gives `leftBytes` back (a write then
 * starts and is cut short); answers the filler's path.
 */
function fillDisk(dir: string, leftBytes: number): string {
  const filler = join(dir, 'filler')
  run(['dd', 'if=/dev/zero', `of=${filler}`, 'bs=1M'])
  if (leftBytes > 0) run(['truncate', `--size=-${leftBytes}`, filler])
  const { bavail, bsize } = statfsSync(dir)
  expect(bavail * bsize).toBe(leftBytes)
  return filler
}

/** A WAV recording whose samples are noise, so gzip cannot shrink it to nothing. */
function noisyWav(bytes: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(44 + bytes)
  const view = new DataView(out.buffer)
  const text = (at: number, s: string) => out.set(new TextEncoder().encode(s), at)
  text(0, 'RIFF'); view.setUint32(4, 36 + bytes, true); text(8, 'WAVE'); text(12, 'fmt ')
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true)
  view.setUint32(24, 8000, true); view.setUint32(28, 8000, true); view.setUint16(32, 1, true); view.setUint16(34, 8, true)
  text(36, 'data'); view.setUint32(40, bytes, true)
  crypto.getRandomValues(out.subarray(44, 44 + Math.min(bytes, 65_536)))
  for (let at = 44 + 65_536; at < out.length; at += 65_536) out.copyWithin(at, 44, Math.min(44 + 65_536, 44 + out.length - at))
  return out
}

for (const target of databaseTargets()) {
  describe(`a full disk under DATA_DIR [${target}]`, () => {
    let tmpfs: ReturnType<typeof mountTmpfs> | null = null
    let database: ThrowawayDatabase | null = null
    let env: Record<string, string>
    let server: ServerProcess | null = null
    let quizToken = ''
    let clinicalToken = ''
    const dataDir = () => tmpfs!.dir
    const filesDir = () => join(dataDir(), 'files')

    const call = (path: string, token: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers)
      headers.set('authorization', `Bearer ${token}`)
      headers.set('x-client', 'mobile')
      return fetch(`${server!.url}${path}`, { ...init, headers })
    }
    const listed = async <T>(path: string, token: string, pick: (body: any) => T[]): Promise<T[]> => {
      const res = await call(path, token)
      expect(res.status).toBe(200)
      return pick(await res.json())
    }

    /**
     * The rule for one upload route: on a full disk 507 disk_full with the service's error body, no new file under
     * DATA_DIR/files (not even a partial one) and nothing new listed; once the filler is gone, the same upload is stored.
     */
    const refusedThenStored = async (send: () => Promise<Response>, list: () => Promise<unknown[]>, style: 'quiz' | 'clinical'): Promise<any> => {
      const files = filesUnder(filesDir())
      const before = await list()
      for (const left of DISK_LEFTS) {
        const filler = fillDisk(dataDir(), left)
        try {
          const res = await send()
          expect(filesUnder(filesDir())).toEqual(files)
          expect(await list()).toEqual(before)
          const body = await res.json()
          expect(res.status, JSON.stringify(body)).toBe(507)
          // Spec 2: a clinical 5xx says only "Request failed"; its code says why.
          expect(body).toEqual(style === 'quiz' ? { detail: DISK_FULL_MESSAGE } : { success: false, error: 'Request failed', code: 'disk_full' })
        } finally {
          rmSync(filler, { force: true })
        }
      }
      const res = await send()
      const stored = await res.json()
      expect(res.status, JSON.stringify(stored)).toBe(200)
      const added = filesUnder(filesDir()).filter((f) => !files.includes(f))
      expect(added).toHaveLength(1)
      expect(added[0]).not.toEndWith(PARTIAL_SUFFIX)
      expect(await list()).toHaveLength(before.length + 1)
      return stored
    }

    beforeAll(async () => {
      if (!MOUNTABLE) return
      tmpfs = mountTmpfs('disk-full-', TMPFS_SIZE)
      if (target === 'postgres') database = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!)
      env = {
        DATA_DIR: dataDir(),
        ...(database ? { DATABASE_URL: database.url } : {}),
        JWT_SECRET: 'disk-full-secret-disk-full-secret-0123456789',
        DATA_ENCRYPTION_KEY: '0'.repeat(63) + '4',
        WORKERS: '1',
        LOG_LEVEL: 'info',
        TRUST_PROXY: 'false',
      }
      server = await startServer(env)
      const res = await fetch(`${server.url}${QUIZ_API}/auth/register`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'disk-full-admin@example.test', password: 'correct-horse-1', name: 'Admin' }),
      })
      expect(res.status).toBe(200)
      quizToken = ((await res.json()) as { access_token: string }).access_token
      // A clinician, written while the server is stopped (an embedded PGlite has one process at a time).
      expect(await server.stop()).toBe(0)
      server = null
      const db = await openDb({ url: database?.url ?? null, dataDir: dataDir(), poolSize: 1 })
      try {
        await db.sql`
          insert into clinical.users (name, email, password_hash, role, email_verified, disabled)
          values ('Clinician', 'disk-full-clinician@example.test', ${await hashPassword(CLINICAL_PASSWORD)}, 'user', true, false)`
      } finally {
        await db.close()
      }
      server = await startServer(env)
      const login = await fetch(`${server.url}/api/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'mobile' },
        body: JSON.stringify({ email: 'disk-full-clinician@example.test', password: CLINICAL_PASSWORD }),
      })
      expect(login.status).toBe(200)
      clinicalToken = ((await login.json()) as { token: string }).token
    }, 90_000)
    afterAll(async () => {
      await server?.kill9()
      await database?.drop()
      tmpfs?.unmount()
    }, 30_000)

    it.skipIf(!MOUNTABLE)('quiz PDF upload (POST /quiz/api/documents/upload): 507 disk_full, no row, no file; stored once space is freed', async () => {
      const pdf = await makePdf(numberedPages(40, 30))
      expect(pdf.length).toBeGreaterThan(DISK_LEFTS.at(-1)!)
      const doc = await refusedThenStored(() => {
        const form = new FormData()
        form.append('file', new File([pdf], 'full-disk.pdf', { type: 'application/pdf' }))
        return call(`${QUIZ_API}/documents/upload`, quizToken, { method: 'POST', body: form })
      }, () => listed(`${QUIZ_API}/documents`, quizToken, (body: unknown[]) => body), 'quiz')
      // Processed from the stored file, and done before the next test fills the disk again.
      const status = async () => (await (await call(`${QUIZ_API}/documents/${doc.id}/status`, quizToken)).json()) as { status: string }
      expect(await waitFor(async () => ((await status()).status !== 'processing' ? status() : null), 'the stored document processed', 20_000))
        .toMatchObject({ status: 'ready' })
    }, DISK_FULL_TIMEOUT_MS)

    it.skipIf(!MOUNTABLE)('clinical document upload (POST /api/documents/upload, local storage): 507 disk_full, no row, no file; stored once space is freed', async () => {
      const text = 'A referral letter stored on a full disk.\n'.repeat(4_000)
      await refusedThenStored(() => {
        const form = new FormData()
        form.append('file', new File([text], 'referral.txt', { type: 'text/plain' }))
        form.append('description', 'kept whole or not at all')
        return call('/api/documents/upload', clinicalToken, { method: 'POST', body: form })
      }, () => listed('/api/documents', clinicalToken, (body: { documents: unknown[] }) => body.documents), 'clinical')
    }, DISK_FULL_TIMEOUT_MS)

    it.skipIf(!MOUNTABLE)('clinical audio backup (POST /api/audio-backups): 507 disk_full, no row, no file; stored once space is freed', async () => {
      const recording = noisyWav(512 * 1024)
      await refusedThenStored(() => {
        const form = new FormData()
        form.append('audio', new File([recording], 'recording.wav', { type: 'audio/wav' }))
        return call('/api/audio-backups', clinicalToken, { method: 'POST', body: form })
      }, () => listed('/api/audio-backups', clinicalToken, (body: { backups: unknown[] }) => body.backups), 'clinical')
    }, DISK_FULL_TIMEOUT_MS)

    it.skipIf(!MOUNTABLE)('the database holds the stored uploads only, each naming a whole file', async () => {
      expect(await server!.stop()).toBe(0)
      server = null
      const db = await openDb({ url: database?.url ?? null, dataDir: dataDir(), poolSize: 1 })
      try {
        const keys = [
          ...await db.sql<{ storage_key: string }>`select storage_key from quiz.documents`,
          ...await db.sql<{ storage_key: string }>`select storage_key from clinical.documents`,
          ...await db.sql<{ storage_key: string }>`select storage_key from clinical.audio_backups`,
        ].map((r) => r.storage_key).sort()
        expect(keys).toHaveLength(3)
        expect(filesUnder(filesDir())).toEqual(keys)
      } finally {
        await db.close()
      }
    }, DISK_FULL_TIMEOUT_MS)
  })
}

describe('a full disk under the streamed envelope (audio backups are written through it)', () => {
  it.skipIf(!MOUNTABLE)('a write the disk cuts short fails with ENOSPC instead of leaving a shorter file that claims to be whole', async () => {
    const tmpfs = mountTmpfs('disk-full-seal-', '1m')
    try {
      const sealer = createCrypto(new Uint8Array(32).fill(9))
      // One chunk larger than the disk: the kernel takes part of it and refuses the rest.
      const chunk = new Uint8Array(3 * 1024 * 1024).fill(7)
      const source = new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(chunk), c.close()) })
      const failure = await sealer.sealToFile(source, join(tmpfs.dir, 'recording.sealed')).then(() => null, (err: { code?: string }) => err)
      expect(failure?.code).toBe('ENOSPC')
    } finally {
      tmpfs.unmount()
    }
  })
})

describe('the one mapping of a full disk (src/core/errors.ts): no room, no quota, a file too large, or the database\'s disk_full', () => {
  const failures: Record<string, () => Error> = {
    enospc: () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' }),
    edquot: () => Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT', errno: -122, syscall: 'write' }),
    efbig: () => Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG', errno: -27, syscall: 'write' }),
    sqlstate: () => Object.assign(new Error('could not extend file "base/5/16384": No space left on device'), { code: '53100' }),
  }
  const build = (style: 'quiz' | 'clinical') => {
    const app = new Elysia().use(errorMapper(style, createLogger('silent')))
    for (const [name, failure] of Object.entries(failures)) app.get(`/api/${name}`, () => { throw failure() })
    return app
  }
  for (const name of Object.keys(failures)) {
    it(`${name}: 507 disk_full in both services' bodies, never a 500`, async () => {
      const quiz = await build('quiz').handle(new Request(`http://localhost/api/${name}`))
      expect(quiz.status).toBe(507)
      expect(await quiz.json()).toEqual({ detail: DISK_FULL_NOTHING_SAVED })
      const clinical = await build('clinical').handle(new Request(`http://localhost/api/${name}`))
      expect(clinical.status).toBe(507)
      expect(await clinical.json()).toEqual({ success: false, error: 'Request failed', code: 'disk_full' })
    })
  }
})

// Backup and restore end to end (scripts/backup.ts, scripts/restore.ts): the real server on a fresh DATA_DIR gets
// records of both services through its API (an encrypted encounter, a memory, a document, a sealed audio backup, a
// directory entry, learning content, a quiz user's processed PDF with its quiz and questions); the backup is taken
// while the server runs and answers requests; the data folder (and database) is then thrown away, the archive
// restored into a new one, and a server started there answers every read as before: the same records, the same
// file bytes, the same keyword and semantic search results (the vector index rebuilt from the database).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PAGE_BREAK } from '../plugins/quiz/services/regex-extract'
import type { Manifest } from '../scripts/backup'
import { createThrowawayDatabase, type ThrowawayDatabase } from './support/database'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions } from './support/mcq-fixtures'
import { makePdf } from './support/pdf'
import { freshIp } from './support/quiz'
import { startServer, type ServerProcess } from './support/server-process'
import { waitFor } from './support/wait'

setDefaultTimeout(120_000)

const ROOT = join(import.meta.dir, '..')
const PASSWORD = 'Backup-restore-password-7'
const PG_TOOLS = Bun.which('pg_dump') !== null && Bun.which('pg_restore') !== null
const TRANSCRIPT = 'Mother reports three days of fever and a barking cough, worse at night. No stridor at rest.'
const NOTE = 'S: 3-year-old with barking cough.\nA: Croup, mild.\nP: Dexamethasone once; return precautions given.'
const ASTHMA = { title: 'Asthma inhaler technique', body: 'Use a spacer with every metered dose inhaler. Shake it and take five tidal breaths.' }

interface ScriptRun { code: number; out: string; ms: number }
/** Runs an operator script as an operator would, with nothing of the test's environment but PATH, HOME and TMPDIR. */
async function script(name: 'backup' | 'restore', args: string[], env: Record<string, string>): Promise<ScriptRun> {
  const base = Object.fromEntries(['PATH', 'HOME', 'TMPDIR'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!]))
  const started = performance.now()
  const proc = Bun.spawn([process.execPath, `scripts/${name}.ts`, ...args], { cwd: ROOT, env: { ...base, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  return { code, out: stdout + stderr, ms: Math.round(performance.now() - started) }
}

/** A client of one server: JSON calls from a fresh address each (TRUST_PROXY), so no rate rule gets in the way. */
function client(server: ServerProcess) {
  const call = (path: string, init: RequestInit & { token?: string } = {}) => {
    const headers = new Headers(init.headers)
    headers.set('x-forwarded-for', freshIp())
    headers.set('x-client', 'mobile')
    if (init.token) headers.set('authorization', `Bearer ${init.token}`)
    if (typeof init.body === 'string') headers.set('content-type', 'application/json')
    return fetch(new URL(path, server.url), { ...init, headers })
  }
  const json = async <T = any>(path: string, init: RequestInit & { token?: string } = {}): Promise<T> => {
    const res = await call(path, init)
    const text = await res.text()
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text}`)
    return JSON.parse(text) as T
  }
  const bytes = async (path: string, token?: string) => {
    const res = await call(path, { token })
    expect(res.status).toBe(200)
    return new Uint8Array(await res.arrayBuffer())
  }
  const post = <T = any>(path: string, body: unknown, token?: string) => json<T>(path, { method: 'POST', body: JSON.stringify(body), token })
  const upload = <T = any>(path: string, field: string, file: File, token: string) => {
    const form = new FormData()
    form.append(field, file)
    return json<T>(path, { method: 'POST', body: form, token })
  }
  return { call, json, bytes, post, upload }
}
type Client = ReturnType<typeof client>

/** A mono 8-bit WAV: enough for the audio backup to take it as audio. */
function wav(samples: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(44 + samples)
  const view = new DataView(out.buffer)
  const text = (at: number, s: string) => [...s].forEach((c, i) => view.setUint8(at + i, c.charCodeAt(0)))
  text(0, 'RIFF'); view.setUint32(4, 36 + samples, true); text(8, 'WAVE'); text(12, 'fmt ')
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true); view.setUint32(24, 8000, true)
  view.setUint32(28, 8000, true); view.setUint16(32, 1, true); view.setUint16(34, 8, true); text(36, 'data'); view.setUint32(40, samples, true)
  for (let i = 0; i < samples; i++) out[44 + i] = 128 + Math.round(60 * Math.sin(i / 5))
  return out
}

interface Seeded {
  clinicalEmail: string; quizEmail: string; busyEmail: string
  encounterId: number; documentId: number; audioId: number; quizId: number
  documentPdf: Uint8Array<ArrayBuffer>; audio: Uint8Array<ArrayBuffer>; quizPdf: Uint8Array<ArrayBuffer>
}

/** Everything the test reads back, through the API, the same way before the backup and after the restore. */
async function readAll(c: Client, s: Seeded, tokens: { clinical: string; quiz: string }) {
  const { clinical, quiz } = tokens
  const documents = await c.json(`/api/documents`, { token: clinical })
  const link = await c.json<{ url: string }>(`/api/documents/${s.documentId}/download`, { token: clinical })
  return {
    encounter: (await c.json(`/api/encounters/saved/${s.encounterId}`, { token: clinical })).encounter,
    encounters: (await c.json('/api/encounters/saved', { token: clinical })).encounters,
    memories: (await c.json('/api/memories', { token: clinical })).memories,
    documents: documents.documents,
    documentBytes: await c.bytes(link.url),
    audioBackups: (await c.json('/api/audio-backups', { token: clinical })).backups,
    audioBytes: await c.bytes(`/api/audio-backups/${s.audioId}/audio`, clinical),
    directory: (await c.json('/api/extensions', { token: clinical })).items,
    learningKeyword: await c.json(`/api/learning/search?q=inhaler`, { token: clinical }),
    learningSemantic: await c.json(`/api/learning/search/semantic?q=${encodeURIComponent('inhaller spaser')}`, { token: clinical }),
    quizDocuments: await c.json('/quiz/api/documents', { token: quiz }),
    quizQuestions: await c.json(`/quiz/api/quizzes/${s.quizId}/questions`, { token: quiz }),
    bankKeyword: await c.json(`/quiz/api/questions/bank?search_mode=keyword&q=${encodeURIComponent('left atrium')}`, { token: quiz }),
    bankSemantic: await c.json(`/quiz/api/questions/bank?search_mode=semantic&q=${encodeURIComponent('Which valve seperates the left atrum from the left ventrical')}`, { token: quiz }),
    quizSearch: await c.json(`/quiz/api/quizzes/search?q=${encodeURIComponent('heart valve')}`, { token: quiz }),
  }
}

async function seed(c: Client): Promise<Seeded & { tokens: { clinical: string; quiz: string } }> {
  const tag = crypto.randomUUID().slice(0, 8)
  const clinicalEmail = `clinician-${tag}@example.test`
  const registered = await c.post('/api/auth/register', { name: 'Dr Backup', email: clinicalEmail, password: PASSWORD })
  const clinical = registered.token as string
  const busyEmail = `busy-${tag}@example.test`
  await c.post('/api/auth/register', { name: 'Busy Clinician', email: busyEmail, password: PASSWORD })
  const { id: encounterId } = await c.post('/api/encounters/saved', { label: 'Bed 4, croup', enc_type: 'soap', transcript: TRANSCRIPT, generated_note: NOTE }, clinical)
  await c.post('/api/memories', { category: 'custom', name: 'Dosing habit', content: 'Dexamethasone 0.6 mg/kg for croup.' }, clinical)
  const documentPdf = await makePdf([['Dietitian plan for the croup clinic.']])
  const { id: documentId } = await c.upload('/api/documents/upload', 'file', new File([documentPdf], 'plan.pdf', { type: 'application/pdf' }), clinical)
  const audio = wav(4000)
  const { id: audioId } = await c.upload('/api/audio-backups', 'audio', new File([audio], 'recording.wav', { type: 'audio/wav' }), clinical)
  await c.post('/api/extensions', { location: 'Ward 4', name: 'Charge nurse', number: '4401', type: 'Pager', notes: 'nights' }, clinical)
  const { id: categoryId } = await c.post('/api/admin/learning/categories', { name: 'Paediatrics', slug: `paeds-${tag}` }, clinical)
  await c.post('/api/admin/learning/content', { ...ASTHMA, slug: `asthma-${tag}`, categoryId }, clinical)

  const quizEmail = `teacher-${tag}@example.test`
  const quiz = (await c.post('/quiz/api/auth/register', { email: quizEmail, password: PASSWORD, name: 'Teacher' })).access_token as string
  const pages = renderQuestions(KNOWN, { name: 'inline', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', pageLines: 18 })
    .split(PAGE_BREAK).map((page) => page.split('\n'))
  const quizPdf = await makePdf(pages)
  const doc = await c.upload('/quiz/api/documents/upload', 'file', new File([quizPdf], 'cardiology.pdf', { type: 'application/pdf' }), quiz)
  await waitFor(async () => (await c.json(`/quiz/api/documents/${doc.id}/status`, { token: quiz })).status === 'ready', 'the quiz PDF processed', 30_000)
  const section = await c.post(`/quiz/api/documents/${doc.id}/sections`, { name: 'All', start_page: 1, end_page: pages.length }, quiz)
  const started = await c.post('/quiz/api/quizzes/', {
    section_id: section.id, title: 'Cardiology basics', mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex',
  }, quiz)
  const job = await waitFor(async () => {
    const j = await c.json(`/quiz/api/quizzes/job/${started.job_id}`, { token: quiz })
    return j.status === 'completed' || j.status === 'failed' ? j : null
  }, 'the quiz extracted', 30_000)
  expect(job.status).toBe('completed')
  return {
    clinicalEmail, quizEmail, busyEmail, encounterId, documentId, audioId, quizId: job.quiz_id, documentPdf, audio, quizPdf,
    tokens: { clinical, quiz },
  }
}

const targets = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])] as const

for (const target of targets) {
  describe(`backup and restore of everything the service keeps [${target}]`, () => {
    if (target === 'postgres' && !PG_TOOLS) {
      it.skip('needs pg_dump and pg_restore on PATH, which this machine does not have', () => {})
      return
    }
    const work = mkdtempSync(join(tmpdir(), 'backup-restore-'))
    const archive = join(work, 'clinic.tar.gz')
    const oldDir = join(work, 'old')
    const newDir = join(work, 'new')
    const databases: ThrowawayDatabase[] = []
    let server: ServerProcess | null = null
    let seeded: Awaited<ReturnType<typeof seed>>
    let before: Awaited<ReturnType<typeof readAll>>
    let busyCreated = 0
    // The embedded run keeps its generated keys in DATA_DIR/secrets.json (so they travel in the archive); the
    // PostgreSQL run has them from the environment (so the restore must be given the key).
    const keys: Record<string, string> = target === 'postgres'
      ? { JWT_SECRET: 'backup-restore-secret-backup-restore-secret', DATA_ENCRYPTION_KEY: 'ab'.repeat(32) }
      : {}
    const envFor = (dataDir: string, database: ThrowawayDatabase | undefined): Record<string, string> => ({
      DATA_DIR: dataDir, WORKERS: '0', LOG_LEVEL: 'warn', TRUST_PROXY: 'true', ...keys,
      ...(database ? { DATABASE_URL: database.url } : {}),
    })
    const freshDatabase = async () => {
      if (target !== 'postgres') return undefined
      const db = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!, 'backup')
      databases.push(db)
      return db
    }
    let newDatabase: ThrowawayDatabase | undefined
    const timings: Record<string, number> = {}

    beforeAll(async () => {
      const oldDatabase = await freshDatabase()
      server = await startServer(envFor(oldDir, oldDatabase), { bare: true })
      seeded = await seed(client(server))
      before = await readAll(client(server), seeded, seeded.tokens)
      newDatabase = await freshDatabase()
    })
    afterAll(async () => {
      await server?.kill9()
      for (const db of databases) await db.drop()
      rmSync(work, { recursive: true, force: true })
      console.info(`[${target}] backup and restore:`, timings)
    })

    it('the records read back before the backup are the ones written', () => {
      expect(before.encounter).toMatchObject({ transcript: TRANSCRIPT, generated_note: NOTE })
      expect(before.memories).toHaveLength(1)
      expect(before.documentBytes).toEqual(seeded.documentPdf)
      expect(before.audioBytes).toEqual(seeded.audio)
      expect(before.directory).toHaveLength(1)
      expect(before.learningKeyword[0]?.title).toBe(ASTHMA.title)
      expect(before.learningSemantic[0]?.title).toBe(ASTHMA.title)
      expect(before.quizDocuments[0]?.status).toBe('ready')
      expect(before.quizQuestions.length).toBe(KNOWN.length)
      expect(before.bankKeyword.total).toBe(1)
      expect(before.bankSemantic.questions[0]?.question_text).toBe(KNOWN[0]!.question_text)
      expect(before.quizSearch[0]?.quiz_id).toBe(seeded.quizId)
    })

    it('takes the backup while the server runs, and the server keeps answering meanwhile', async () => {
      const c = client(server!)
      const busy = (await c.post('/api/auth/login', { email: seeded.busyEmail, password: PASSWORD })).token as string
      const backup = script('backup', ['--out', archive], envFor(oldDir, databases[0]))
      let finished = false
      void backup.then(() => { finished = true })
      const answered: number[] = []
      while (!finished) {
        const [read, write] = await Promise.all([
          c.call(`/api/encounters/saved/${seeded.encounterId}`, { token: seeded.tokens.clinical }),
          c.call('/api/extensions', { method: 'POST', token: busy, body: JSON.stringify({ name: `During backup ${busyCreated}`, number: String(5000 + busyCreated) }) }),
        ])
        answered.push(read.status, write.status)
        if (write.status === 200) busyCreated++
        await Bun.sleep(20)
      }
      const made = await backup
      expect(made.code, made.out).toBe(0)
      timings.backupMs = made.ms
      timings.backupBytes = Bun.file(archive).size
      expect(answered.length).toBeGreaterThan(2)
      expect(answered.every((s) => s === 200)).toBe(true)
      expect(await server!.stop()).toBe(0)
      server = null

      const entries = Bun.spawnSync(['tar', '-tzf', archive]).stdout.toString().split('\n').filter(Boolean)
      const manifest = JSON.parse(Bun.spawnSync(['tar', '-xOzf', archive, 'manifest.json']).stdout.toString()) as Manifest
      expect(manifest).toMatchObject({
        format: 1,
        database: target === 'postgres' ? { kind: 'postgres', file: 'database.dump', taken: 'pg_dump' } : { kind: 'pglite', file: 'database.tar', taken: 'online' },
        secrets: { included: target === 'pglite', source: target === 'pglite' ? 'secrets.json' : 'environment' },
        vector_index: { included: false, rebuilt_on_restore: true },
        object_storage: null,
      })
      // The clinical document, the sealed audio backup and the quiz PDF.
      expect(manifest.files.count).toBe(3)
      expect(entries).toContain(manifest.database.file)
      expect(entries.includes('secrets.json')).toBe(target === 'pglite')
      expect(entries.some((e) => e.startsWith('lance'))).toBe(false)
      expect((await Bun.file(archive).stat()).mode & 0o077).toBe(0)

      // The disk is lost: nothing of the old deployment remains but the archive.
      rmSync(oldDir, { recursive: true, force: true })
      if (target === 'postgres') await databases[0]!.drop()
    })

    it('refuses a DATA_DIR that holds something, and a key that is missing or not the backup\'s', async () => {
      const occupied = join(work, 'occupied')
      rmSync(occupied, { recursive: true, force: true })
      await Bun.write(join(occupied, 'keep.txt'), 'operator file')
      const refused = await script('restore', [archive], envFor(occupied, newDatabase))
      expect(refused.code).toBe(1)
      expect(refused.out).toContain('is not empty')
      expect(readdirSync(occupied)).toEqual(['keep.txt'])

      const wrongKey = await script('restore', [archive], { ...envFor(join(work, 'wrong-key'), newDatabase), DATA_ENCRYPTION_KEY: 'cd'.repeat(32) })
      expect(wrongKey.code).toBe(1)
      expect(wrongKey.out).toContain('encryption key differs')
      expect(existsSync(join(work, 'wrong-key')) ? readdirSync(join(work, 'wrong-key')) : []).toEqual([])
      if (target === 'postgres') {
        const { DATA_ENCRYPTION_KEY: _, ...withoutKey } = envFor(join(work, 'no-key'), newDatabase)
        const noKey = await script('restore', [archive], withoutKey)
        expect(noKey.code).toBe(1)
        expect(noKey.out).toContain('does not hold the encryption key')
      }
    })

    it('restores into a fresh DATA_DIR, and a server there finds every record, file and search result again', async () => {
      const restored = await script('restore', [archive], envFor(newDir, newDatabase))
      expect(restored.code, restored.out).toBe(0)
      timings.restoreMs = restored.ms
      expect(restored.out).toContain(`vector index rebuilt: ${KNOWN.length} questions, 1 learning items`)
      expect(existsSync(join(newDir, '.restore'))).toBe(false)

      server = await startServer(envFor(newDir, newDatabase), { bare: true })
      const c = client(server)
      // Passwords, keys and sessions came back with the data: the same accounts sign in again.
      const clinical = (await c.post('/api/auth/login', { email: seeded.clinicalEmail, password: PASSWORD })).token as string
      const quiz = (await c.post('/quiz/api/auth/login', { email: seeded.quizEmail, password: PASSWORD })).access_token as string
      const after = await readAll(c, seeded, { clinical, quiz })
      expect(after).toEqual(before)
      expect(after.documentBytes).toEqual(seeded.documentPdf)
      expect(after.audioBytes).toEqual(seeded.audio)
      const stored = join(newDir, 'files', 'quiz', 'documents', after.quizDocuments[0].filename)
      expect(new Uint8Array(readFileSync(stored))).toEqual(seeded.quizPdf)

      // Entries written while the backup ran are in it or not, each whole: never more than were made.
      const busy = (await c.post('/api/auth/login', { email: seeded.busyEmail, password: PASSWORD })).token as string
      const during = (await c.json('/api/extensions', { token: busy })).items as Array<{ name: string }>
      expect(during.length).toBeLessThanOrEqual(busyCreated)
      for (const entry of during) expect(entry.name).toMatch(/^During backup \d+$/)
      timings.entriesWrittenDuringBackup = busyCreated
      timings.ofThemInBackup = during.length
    })
  })
}

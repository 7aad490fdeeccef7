// Jobs against a crash from outside: the real server (`bun src/main.ts`) on each database target (a PostgreSQL
// throwaway database, and an embedded PGlite data directory with DATABASE_URL unset) is killed with SIGKILL at a
// chosen moment, a new process starts on the same data, and the job must end as if it had run once, within seconds
// rather than the lease. The moment is chosen from outside: the test AI gateway holds the job's embedding request
// (so the job is mid-indexing, its earlier work committed) and the test kills the server once that request arrives.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MESSAGES as DOCUMENT_MESSAGES } from '../plugins/quiz/services/documents'
import { QUESTIONS_COLLECTION } from '../plugins/quiz/services/question-index'
import { PAGE_BREAK } from '../plugins/quiz/services/regex-extract'
import { openDb, type Db } from '../src/core/db'
import { openVectors } from '../src/core/vectors'
import { startAiServer, type AiServer } from './support/ai-server'
import { databaseTargets } from './support/app'
import { createThrowawayDatabase, type ThrowawayDatabase } from './support/database'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions } from './support/mcq-fixtures'
import { makePdf } from './support/pdf'
import { startServer, type ServerProcess } from './support/server-process'
import { waitFor } from './support/wait'

const API = '/quiz/api'
/** Short beats, so a killed process is known dead within a second; the lease stays at its default on purpose. */
const HEARTBEAT_MS = 200
const LEASE_MS = 60_000
/** From the new process's spawn to the job's end: start-up plus a few heartbeats, far below the lease. */
const RECOVERY_BUDGET_MS = 15_000
/** The gateway holds the chosen request longer than any test runs: the server is killed while it waits. */
const HOLD_MS = 600_000
const CRASH_TEST_TIMEOUT_MS = 50_000

interface DocumentStatusBody { id: number; status: string; total_pages: number; error_message: string | null }
interface StepBody { name: string; status: string; message: string }
interface JobBody { job_id: string; status: string; steps: Array<{ message: string }>; quiz_id?: number; error?: string }

const embeddingInputs = (ai: AiServer): string[] =>
  ai.requests.filter((r) => r.path === '/v1/embeddings').flatMap((r) => (Array.isArray(r.body?.input) ? r.body.input : [r.body?.input]))

for (const target of databaseTargets()) {
  describe(`jobs survive kill -9 of the real server [${target}]`, () => {
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
    /** Kills the server once the gateway holds an embedding request whose texts pass `match`. */
    const killWhenEmbedding = async (match: (inputs: string[]) => boolean, what: string) => {
      await waitFor(async () => match(embeddingInputs(ai)), what, 20_000)
      await server!.kill9()
      server = null
    }
    /** Starts a new process and waits for the probe; answers the time from spawn to the probe holding. */
    const recover = async <T>(probe: () => Promise<T | null | false>, what: string): Promise<{ value: T; ms: number }> => {
      const began = performance.now()
      await start()
      const value = await waitFor(probe, what, RECOVERY_BUDGET_MS)
      return { value, ms: Math.round(performance.now() - began) }
    }
    /** The database and the vector index as the server left them; the server must be stopped (PGlite is single-process). */
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
    const stopCleanly = async () => {
      expect(await server!.stop()).toBe(0)
      server = null
    }
    const uploadPdf = async (name: string) => {
      const pages = renderQuestions(KNOWN, { name: 'inline', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', pageLines: 18 })
        .split(PAGE_BREAK).map((page) => page.split('\n'))
      const form = new FormData()
      form.append('file', new File([await makePdf(pages)], name, { type: 'application/pdf' }))
      const doc = await json<{ id: number; status: string }>(`${API}/documents/upload`, { method: 'POST', body: form })
      expect(doc.status).toBe('processing')
      return { id: doc.id, pages: pages.length }
    }
    const documentStatus = (id: number) => json<DocumentStatusBody>(`${API}/documents/${id}/status`)
    const documentSteps = async (id: number) => (await json<{ steps: StepBody[] }>(`${API}/documents/${id}/processing-steps`)).steps

    beforeAll(async () => {
      ai = await startAiServer()
      dataDir = mkdtempSync(join(tmpdir(), 'job-crash-'))
      if (target === 'postgres') database = await createThrowawayDatabase(process.env.TEST_DATABASE_URL!)
      env = {
        DATA_DIR: dataDir,
        ...(database ? { DATABASE_URL: database.url } : {}),
        JWT_SECRET: 'crash-test-secret-crash-test-secret-0123456789',
        DATA_ENCRYPTION_KEY: '0'.repeat(63) + '2',
        WORKERS: '1',
        JOB_HEARTBEAT_MS: String(HEARTBEAT_MS),
        JOB_LEASE_MS: String(LEASE_MS),
        LOG_LEVEL: 'info',
        TRUST_PROXY: 'false',
        ...ai.env,
        EMBEDDING_MODEL: 'test-embedding',
      }
      await start()
      const res = await call(`${API}/auth/register`, {
        method: 'POST', body: JSON.stringify({ email: 'crash-admin@example.test', password: 'correct-horse-1', name: 'Admin' }),
      })
      expect(res.status).toBe(200)
      token = ((await res.json()) as { access_token: string }).access_token
      await stopCleanly()
    }, 60_000)
    afterAll(async () => {
      await server?.kill9()
      await ai?.close()
      await database?.drop()
      if (dataDir) rmSync(dataDir, { recursive: true, force: true })
      console.info(`[${target}] recovery after kill -9 (spawn to job end, ms):`, timings)
    }, 30_000)

    it('a document killed mid-indexing is processed again by the next process within seconds: ready, every page once, every chunk indexed once', async () => {
      await start()
      ai.reset()
      ai.delayNext(HOLD_MS)
      const doc = await uploadPdf('killed-mid-indexing.pdf')
      await killWhenEmbedding((inputs) => inputs.length > 0, 'the document\'s chunks sent for embedding')

      ai.reset()
      const { ms } = await recover(async () => (await documentStatus(doc.id)).status === 'ready', 'the document ready after the restart')
      timings.document = ms
      expect(ms).toBeLessThan(RECOVERY_BUDGET_MS)
      expect(await documentStatus(doc.id)).toMatchObject({ status: 'ready', total_pages: doc.pages, error_message: null })
      const steps = await documentSteps(doc.id)
      expect(steps.some((s) => s.message === DOCUMENT_MESSAGES.restarted(2, 3))).toBe(true)
      expect(steps.at(-1)).toMatchObject({ name: 'done', status: 'completed' })
      const chunks = embeddingInputs(ai).length
      await stopCleanly()

      await inspect(async (db, indexed) => {
        const [pages] = await db.sql<{ n: number; distinct_pages: number }>`
          select count(*)::int as n, count(distinct page_number)::int as distinct_pages from quiz.document_pages where document_id = ${doc.id}`
        expect(pages).toEqual({ n: doc.pages, distinct_pages: doc.pages })
        expect(chunks).toBeGreaterThan(0)
        expect(await indexed(`quiz_doc_${doc.id}`)).toBe(chunks)
        const [job] = await db.sql<{ status: string; attempts: number }>`
          select j.status, j.attempts from core.jobs j join quiz.documents d on d.processing_job_id = j.id where d.id = ${doc.id}`
        expect(job).toEqual({ status: 'completed', attempts: 2 })
        // The killed process's heartbeat row was swept, and the clean stop removed the last one's.
        expect(await db.sql`select id from core.job_workers`).toEqual([])
      })
    }, CRASH_TEST_TIMEOUT_MS)

    it('an extraction killed after its quiz was saved, while indexing, finishes that quiz on restart: one quiz, each question once, none orphaned, all indexed', async () => {
      await start()
      ai.reset()
      const doc = await uploadPdf('extraction-source.pdf')
      await waitFor(async () => (await documentStatus(doc.id)).status === 'ready', 'the source document ready', 15_000)
      const section = await json<{ id: number }>(`${API}/documents/${doc.id}/sections`, {
        method: 'POST', body: JSON.stringify({ name: 'All questions', start_page: 1, end_page: doc.pages }),
      })
      ai.reset()
      ai.delayNext(HOLD_MS)
      const started = await json<{ job_id: string }>(`${API}/quizzes/`, {
        method: 'POST',
        body: JSON.stringify({ section_id: section.id, title: 'Saved before the crash', mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex' }),
      })
      // Questions are embedded only after the quiz's transaction committed.
      await killWhenEmbedding((inputs) => inputs.some((t) => t.startsWith(KNOWN[0]!.question_text)), 'the saved questions sent for embedding')

      ai.reset()
      const { value: done, ms } = await recover(async () => {
        const job = await json<JobBody>(`${API}/quizzes/job/${started.job_id}`)
        return job.status === 'completed' || job.status === 'failed' ? job : null
      }, 'the extraction job finished after the restart')
      timings.extraction = ms
      expect(ms).toBeLessThan(RECOVERY_BUDGET_MS)
      expect(done.status).toBe('completed')
      expect(done.steps.some((s) => s.message.startsWith(`Resuming after a restart: quiz ${done.quiz_id} was already saved`))).toBe(true)
      await stopCleanly()

      await inspect(async (db, indexed) => {
        const quizzes = await db.sql<{ id: number }>`select id from quiz.quizzes where section_id = ${section.id}`
        expect(quizzes).toEqual([{ id: done.quiz_id! }])
        const [linked] = await db.sql<{ n: number; texts: number }>`
          select count(*)::int as n, count(distinct q.question_text)::int as texts
          from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id where qq.quiz_id = ${done.quiz_id}`
        expect(linked).toEqual({ n: KNOWN.length, texts: KNOWN.length })
        // Orphans: bank questions no quiz links to (a re-run from scratch left the first quiz's behind).
        const orphans = await db.sql`
          select q.id from quiz.questions q where not exists (select 1 from quiz.quiz_questions qq where qq.question_id = q.id)`
        expect(orphans).toEqual([])
        expect(await indexed(QUESTIONS_COLLECTION)).toBe(KNOWN.length)
        expect(await db.sql`select id from core.job_workers`).toEqual([])
      })
    }, CRASH_TEST_TIMEOUT_MS)

    it('a document whose server is killed on every attempt ends failed with a message saying what to do, a final failed step, and sections refused with that state', async () => {
      await start()
      ai.reset()
      ai.delayNext(HOLD_MS)
      const doc = await uploadPdf('kills-every-server.pdf')
      await killWhenEmbedding((inputs) => inputs.length > 0, 'attempt 1 sending chunks for embedding')
      for (const attempt of [2, 3]) {
        ai.reset()
        ai.delayNext(HOLD_MS)
        await start()
        await killWhenEmbedding((inputs) => inputs.length > 0, `attempt ${attempt} sending chunks for embedding`)
      }

      ai.reset()
      const { value: final, ms } = await recover(async () => {
        const status = await documentStatus(doc.id)
        return status.status !== 'processing' ? status : null
      }, 'the document settled after its last attempt')
      timings.abandoned = ms
      expect(final).toMatchObject({ status: 'failed', error_message: DOCUMENT_MESSAGES.abandoned(3) })
      expect((await documentSteps(doc.id)).at(-1)).toMatchObject({ name: 'done', status: 'failed', message: DOCUMENT_MESSAGES.abandoned(3) })
      const refused = await call(`${API}/documents/${doc.id}/sections`, {
        method: 'POST', body: JSON.stringify({ name: 'Too late', start_page: 1, end_page: 2 }),
      })
      expect(refused.status).toBe(400)
      await stopCleanly()

      await inspect(async (db) => {
        const [job] = await db.sql<{ status: string; attempts: number; error: string }>`
          select j.status, j.attempts, j.error from core.jobs j join quiz.documents d on d.processing_job_id = j.id where d.id = ${doc.id}`
        expect(job).toEqual({ status: 'failed', attempts: 4, error: DOCUMENT_MESSAGES.abandoned(3) })
        expect(await db.sql`select id from core.job_workers`).toEqual([])
      })
    }, CRASH_TEST_TIMEOUT_MS)
  })
}

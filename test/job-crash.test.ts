// Jobs against a crash from outside: the real server (`bun src/main.ts`) on each database target (a PostgreSQL
// throwaway database, and an embedded PGlite data directory with DATABASE_URL unset) is killed with SIGKILL at a
// chosen moment, a new process starts on the same data, and the job must end as if it had run once, within seconds
// rather than the lease. The moment is chosen from outside: the test AI gateway holds the job's embedding request
// (so the job is mid-indexing, its earlier work committed) and the test kills the server once that request arrives.
// The harness that starts, kills and restarts the server and reads its data afterwards is test/support/crash-harness.ts.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { MESSAGES as DOCUMENT_MESSAGES } from '../plugins/quiz/services/documents'
import { QUESTIONS_COLLECTION } from '../plugins/quiz/services/question-index'
import { PAGE_BREAK } from '../plugins/quiz/services/regex-extract'
import type { AiServer } from './support/ai-server'
import { databaseTargets } from './support/app'
import { crashHarness, HOLD_MS } from './support/crash-harness'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions } from './support/mcq-fixtures'
import { makePdf } from './support/pdf'
import { waitFor } from './support/wait'

const API = '/quiz/api'
/** From the new process's spawn to the job's end: start-up plus a few heartbeats, far below the lease. */
const RECOVERY_BUDGET_MS = 15_000
const CRASH_TEST_TIMEOUT_MS = 50_000

interface DocumentStatusBody { id: number; status: string; total_pages: number; error_message: string | null }
interface StepBody { name: string; status: string; message: string }
interface JobBody { job_id: string; status: string; steps: Array<{ message: string }>; quiz_id?: number; error?: string }

const embeddingInputs = (ai: AiServer): string[] =>
  ai.requests.filter((r) => r.path === '/v1/embeddings').flatMap((r) => (Array.isArray(r.body?.input) ? r.body.input : [r.body?.input]))

for (const target of databaseTargets()) {
  describe(`jobs survive kill -9 of the real server [${target}]`, () => {
    const crash = crashHarness(target, {
      dirPrefix: 'job-crash-', encryptionKey: '0'.repeat(63) + '2', adminEmail: 'crash-admin@example.test', recoveryBudgetMs: RECOVERY_BUDGET_MS,
    })
    const { call, json, start, kill, recover, stopCleanly, inspect, timings } = crash

    /** Kills the server once the gateway holds an embedding request whose texts pass `match`. */
    const killWhenEmbedding = async (match: (inputs: string[]) => boolean, what: string) => {
      await waitFor(async () => match(embeddingInputs(crash.ai)), what, 20_000)
      await kill()
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

    beforeAll(() => crash.setUp(), 60_000)
    afterAll(() => crash.tearDown(), 30_000)

    it('a document killed mid-indexing is processed again by the next process within seconds: ready, every page once, every chunk indexed once', async () => {
      await start()
      crash.ai.reset()
      crash.ai.delayNext(HOLD_MS)
      const doc = await uploadPdf('killed-mid-indexing.pdf')
      await killWhenEmbedding((inputs) => inputs.length > 0, 'the document\'s chunks sent for embedding')

      crash.ai.reset()
      const { ms } = await recover(async () => (await documentStatus(doc.id)).status === 'ready', 'the document ready after the restart')
      timings.document = ms
      expect(ms).toBeLessThan(RECOVERY_BUDGET_MS)
      expect(await documentStatus(doc.id)).toMatchObject({ status: 'ready', total_pages: doc.pages, error_message: null })
      const steps = await documentSteps(doc.id)
      expect(steps.some((s) => s.message === DOCUMENT_MESSAGES.restarted(2, 3))).toBe(true)
      expect(steps.at(-1)).toMatchObject({ name: 'done', status: 'completed' })
      const chunks = embeddingInputs(crash.ai).length
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
      crash.ai.reset()
      const doc = await uploadPdf('extraction-source.pdf')
      await waitFor(async () => (await documentStatus(doc.id)).status === 'ready', 'the source document ready', 15_000)
      const section = await json<{ id: number }>(`${API}/documents/${doc.id}/sections`, {
        method: 'POST', body: JSON.stringify({ name: 'All questions', start_page: 1, end_page: doc.pages }),
      })
      crash.ai.reset()
      crash.ai.delayNext(HOLD_MS)
      const started = await json<{ job_id: string }>(`${API}/quizzes/`, {
        method: 'POST',
        body: JSON.stringify({ section_id: section.id, title: 'Saved before the crash', mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex' }),
      })
      // Questions are embedded only after the quiz's transaction committed.
      await killWhenEmbedding((inputs) => inputs.some((t) => t.startsWith(KNOWN[0]!.question_text)), 'the saved questions sent for embedding')

      crash.ai.reset()
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
      crash.ai.reset()
      crash.ai.delayNext(HOLD_MS)
      const doc = await uploadPdf('kills-every-server.pdf')
      await killWhenEmbedding((inputs) => inputs.length > 0, 'attempt 1 sending chunks for embedding')
      for (const attempt of [2, 3]) {
        crash.ai.reset()
        crash.ai.delayNext(HOLD_MS)
        await start()
        await killWhenEmbedding((inputs) => inputs.length > 0, `attempt ${attempt} sending chunks for embedding`)
      }

      crash.ai.reset()
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

// Spec 1's jobs after their process died, in one process on each database target: a run reclaimed after a crash
// ends as one run would (extraction resumes after its saved quiz, document processing and re-embedding start over
// idempotently), and a job that gives up leaves what it worked on failed with a message a person can act on.
// Each test puts the job row in the state a SIGKILL at that moment leaves (held by a dead worker, lease over, what
// the attempt committed still there) and runs the queue by hand; test/job-crash.test.ts kills real processes.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { EXTRACTION_JOB_KIND } from '../plugins/quiz/models/extraction'
import { aiModelJobs, REGENERATE_JOB_KIND } from '../plugins/quiz/services/ai-models'
import { documentCollection, documentJobs, MESSAGES, PROCESS_DOCUMENT_JOB } from '../plugins/quiz/services/documents'
import { extractionJobs } from '../plugins/quiz/services/extraction'
import { QUESTIONS_COLLECTION, unindexQuestions } from '../plugins/quiz/services/question-index'
import { PAGE_BREAK } from '../plugins/quiz/services/regex-extract'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions } from './support/mcq-fixtures'
import { makePdf } from './support/pdf'
import { API, registerAdmin, upload, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface JobBody { job_id: string; status: string; steps: Array<{ message: string }>; quiz_id?: number; error?: string }
interface StepBody { name: string; status: string; message: string }

const questionPages = () =>
  renderQuestions(KNOWN, { name: 'inline', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', pageLines: 18 })
    .split(PAGE_BREAK).map((page) => page.split('\n'))

for (const target of databaseTargets()) {
  describe(`quiz jobs after a crash [${target}]`, () => {
    let t: TestApp
    let admin: Account
    const jobs = () => t.booted.core.jobs

    /** The job as a SIGKILL leaves it: running under a worker that is gone, its lease over, `attempts` counted. */
    const diedDuring = (jobId: string, attempts: number) => t.db.sql`
      update core.jobs set status = 'running', locked_by = 'dead-process:w0', locked_process = null, attempts = ${attempts},
        started_at = coalesce(started_at, now()), finished_at = null, lease_until = now() - interval '1 second'
      where id = ${jobId}`
    const documentJob = async (documentId: number) => {
      const [row] = await t.db.sql<{ processing_job_id: string }>`select processing_job_id from quiz.documents where id = ${documentId}`
      return row!.processing_job_id
    }
    const uploadPending = async (name: string) => {
      const res = await upload(t, admin.token, await makePdf(questionPages()), name)
      expect(res.status).toBe(200)
      const { id } = (await res.json()) as { id: number }
      return id
    }
    const documentStatus = async (id: number) =>
      (await (await t.get(`${API}/documents/${id}/status`, { token: admin.token })).json()) as { status: string; total_pages: number; error_message: string | null }
    const documentSteps = async (id: number) =>
      ((await (await t.get(`${API}/documents/${id}/processing-steps`, { token: admin.token })).json()) as { steps: StepBody[] }).steps
    const extractionJob = async (jobId: string) => (await (await t.get(`${API}/quizzes/job/${jobId}`, { token: admin.token })).json()) as JobBody
    const startExtraction = async (sectionId: number, title: string) => {
      const res = await t.post(`${API}/quizzes/`, {
        section_id: sectionId, title, mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex',
      }, { token: admin.token })
      expect(res.status).toBe(200)
      return ((await res.json()) as { job_id: string }).job_id
    }
    let sectionId: number

    beforeAll(async () => {
      // WORKERS=1 with the loops not started: each test runs the queue by hand with runOnce().
      t = await startTestApp({ target, env: { WORKERS: '1' } })
      admin = await registerAdmin(t)
      const doc = await uploadPending('questions.pdf')
      expect(await jobs().runOnce()).toBe(true)
      const res = await t.post(`${API}/documents/${doc}/sections`, { name: 'All', start_page: 1, end_page: (await documentStatus(doc)).total_pages }, { token: admin.token })
      expect(res.status).toBe(200)
      sectionId = ((await res.json()) as { id: number }).id
    })
    afterAll(() => t?.close())

    describe('extraction', () => {
      it('a run reclaimed after its quiz was saved (killed while indexing) finishes that quiz: no second quiz, no orphaned question, every question indexed', async () => {
        const title = `Saved once ${crypto.randomUUID().slice(0, 8)}`
        const jobId = await startExtraction(sectionId, title)
        expect(await jobs().runOnce()).toBe(true)
        const first = await extractionJob(jobId)
        expect(first.status).toBe('completed')
        const quizId = first.quiz_id!
        const ids = (await t.db.sql<{ id: number }>`select question_id as id from quiz.quiz_questions where quiz_id = ${quizId}`).map((r) => r.id)
        // What a kill during indexing leaves: the quiz and the recorded result committed, the index not written, the job running.
        await unindexQuestions(t.booted.core, ids)
        const indexedBefore = await t.booted.core.vectors.count(QUESTIONS_COLLECTION)
        await diedDuring(jobId, 1)

        expect(await jobs().runOnce()).toBe(true)
        const done = await extractionJob(jobId)
        expect(done).toMatchObject({ status: 'completed', quiz_id: quizId })
        expect(done.steps.some((s) => s.message.startsWith(`Resuming after a restart: quiz ${quizId} was already saved`))).toBe(true)
        expect(await t.db.sql`select id from quiz.quizzes where title = ${title}`).toEqual([{ id: quizId }])
        const orphans = await t.db.sql`
          select q.id from quiz.questions q where not exists (select 1 from quiz.quiz_questions qq where qq.question_id = q.id)`
        expect(orphans).toEqual([])
        expect(await t.booted.core.vectors.count(QUESTIONS_COLLECTION)).toBe(indexedBefore + KNOWN.length)
        // A second reclaim (killed again at the same place) changes nothing more.
        await diedDuring(jobId, 2)
        expect(await jobs().runOnce()).toBe(true)
        expect(await t.db.sql`select id from quiz.quizzes where title = ${title}`).toEqual([{ id: quizId }])
        expect(await t.booted.core.vectors.count(QUESTIONS_COLLECTION)).toBe(indexedBefore + KNOWN.length)
      })

      it('abandoned before its save: the job fails saying no quiz was saved and to start the extraction again', async () => {
        const title = `Never saved ${crypto.randomUUID().slice(0, 8)}`
        const jobId = await startExtraction(sectionId, title)
        await diedDuring(jobId, 3)
        expect(await jobs().runOnce()).toBe(true)
        const failed = await extractionJob(jobId)
        expect(failed.status).toBe('failed')
        expect(failed.error).toBe('Extraction stopped after 3 attempts: the server running it stopped each time, and no quiz was saved. ' +
          'Start the extraction again; if it keeps happening, try a shorter section')
        expect(failed.steps.at(-1)!.message).toBe(failed.error!)
        expect(await t.db.sql`select id from quiz.quizzes where title = ${title}`).toEqual([])
      })
    })

    describe('document processing', () => {
      it('a run reclaimed mid-processing starts over and ends as one run: ready, each page once, each chunk indexed once, a step saying it restarted', async () => {
        const doc = await uploadPending('restarted.pdf')
        expect(await jobs().runOnce()).toBe(true)
        const once = await documentStatus(doc)
        expect(once.status).toBe('ready')
        const chunks = await t.booted.core.vectors.count(documentCollection(doc))
        expect(chunks).toBeGreaterThan(0)
        // Killed while indexing: pages stored, the collection half written, the document still processing.
        await t.db.sql`update quiz.documents set status = 'processing' where id = ${doc}`
        await diedDuring(await documentJob(doc), 1)

        expect(await jobs().runOnce()).toBe(true)
        expect(await documentStatus(doc)).toEqual({ ...once })
        const [pages] = await t.db.sql<{ n: number; distinct_pages: number }>`
          select count(*)::int as n, count(distinct page_number)::int as distinct_pages from quiz.document_pages where document_id = ${doc}`
        expect(pages).toEqual({ n: once.total_pages, distinct_pages: once.total_pages })
        expect(await t.booted.core.vectors.count(documentCollection(doc))).toBe(chunks)
        const steps = await documentSteps(doc)
        expect(steps).toContainEqual(expect.objectContaining({ name: 'start', status: 'running', message: MESSAGES.restarted(2, 3) }))
        expect(steps.at(-1)).toMatchObject({ name: 'done', status: 'completed' })
      })

      it('abandoned after its attempts: failed with a message saying to upload again, a final failed step, and sections refused', async () => {
        const doc = await uploadPending('abandoned.pdf')
        const jobId = await documentJob(doc)
        await diedDuring(jobId, 3)
        expect(await jobs().runOnce()).toBe(true)
        expect(await documentStatus(doc)).toMatchObject({ status: 'failed', error_message: MESSAGES.abandoned(3) })
        expect(MESSAGES.abandoned(3)).toContain('Upload the file again')
        expect((await documentSteps(doc)).at(-1)).toMatchObject({ name: 'done', status: 'failed', message: MESSAGES.abandoned(3) })
        expect((await jobs().get(jobId))!).toMatchObject({ status: 'failed', error: MESSAGES.abandoned(3) })
        const refused = await t.post(`${API}/documents/${doc}/sections`, { name: 'Late', start_page: 1, end_page: 2 }, { token: admin.token })
        expect(refused.status).toBe(400)
      })

      it('a run killed after the document failed, before the job was marked, ends the job failed with the document\'s message', async () => {
        const doc = await uploadPending('failed-then-killed.pdf')
        await t.db.sql`update quiz.documents set status = 'failed', error_message = ${MESSAGES.unreadable} where id = ${doc}`
        const jobId = await documentJob(doc)
        await diedDuring(jobId, 1)
        expect(await jobs().runOnce()).toBe(true)
        expect((await jobs().get(jobId))!).toMatchObject({ status: 'failed', error: MESSAGES.unreadable })
        expect(await documentStatus(doc)).toMatchObject({ status: 'failed', error_message: MESSAGES.unreadable })
      })
    })

    describe('re-embedding', () => {
      it('a run reclaimed mid-way rebuilds the whole index once; one abandoned says search may miss questions until it runs again', async () => {
        const start = async () => {
          const res = await t.post(`${API}/admin/embedding/regenerate`, undefined, { token: admin.token })
          expect(res.status).toBe(200)
          return ((await res.json()) as { job_id: string }).job_id
        }
        const [{ total } = { total: 0 }] = await t.db.sql<{ total: number }>`select count(*)::int as total from quiz.questions`
        expect(total).toBeGreaterThan(0)
        const jobId = await start()
        expect(await jobs().runOnce()).toBe(true)
        expect(await t.booted.core.vectors.count(QUESTIONS_COLLECTION)).toBe(total)
        // Killed after the drop, part-way through the batches.
        const some = (await t.db.sql<{ id: number }>`select id from quiz.questions order by id limit 3`).map((r) => r.id)
        await unindexQuestions(t.booted.core, some)
        await diedDuring(jobId, 1)
        expect(await jobs().runOnce()).toBe(true)
        const rerun = (await jobs().get(jobId))!
        expect(rerun.status).toBe('completed')
        expect(rerun.steps.some((s) => s.message.startsWith('Restarted from the beginning (attempt 2 of 3)'))).toBe(true)
        expect(await t.booted.core.vectors.count(QUESTIONS_COLLECTION)).toBe(total)

        const abandoned = await start()
        await diedDuring(abandoned, 3)
        expect(await jobs().runOnce()).toBe(true)
        const failed = (await jobs().get(abandoned))!
        expect(failed).toMatchObject({ kind: REGENERATE_JOB_KIND, status: 'failed' })
        expect(failed.error).toStartWith('Regenerating embeddings stopped after 3 attempts')
        expect(failed.error).toContain('start it again')
      })
    })

    it('every quiz job kind says what becomes of its work when it gives up', () => {
      const core = t.booted.core
      const handlers = { ...documentJobs(core), ...extractionJobs(core), ...aiModelJobs(core) }
      expect(Object.keys(handlers).sort()).toEqual([PROCESS_DOCUMENT_JOB, REGENERATE_JOB_KIND, EXTRACTION_JOB_KIND].sort())
      for (const handler of Object.values(handlers)) expect(typeof handler.onGiveUp).toBe('function')
    })
  })
}

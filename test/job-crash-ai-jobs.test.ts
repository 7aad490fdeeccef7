// The quiz's AI batch jobs against a crash from outside, as in test/job-crash.test.ts and with its harness
// (test/support/crash-harness.ts): the real server on each database target is killed with SIGKILL while the test AI
// gateway holds one of the job's requests (so the batches before it are committed), a new process starts on the same
// data, and the job must end as one run would. Tag classification resumes after its committed batches (they are not
// asked again); embedding regeneration starts over and leaves one vector per question.
import * as lancedb from '@lancedb/lancedb'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { BANK_LIMIT_MAX } from '../plugins/quiz/models/bank'
import { TAG_BATCH_SIZE } from '../plugins/quiz/models/tags'
import { REGENERATE_BATCH } from '../plugins/quiz/services/ai-models'
import { QUESTIONS_COLLECTION } from '../plugins/quiz/services/question-index'
import type { AiServer, ChatRequest } from './support/ai-server'
import { databaseTargets } from './support/app'
import { crashHarness, HOLD_MS } from './support/crash-harness'
import { makePdf } from './support/pdf'
import { questionsText } from './support/quiz'
import { waitFor } from './support/wait'

const API = '/quiz/api'
/** From the new process's spawn to the job's end: start-up plus a few heartbeats, far below the lease. */
const RECOVERY_BUDGET_MS = 20_000
const CRASH_TEST_TIMEOUT_MS = 90_000
/** Questions for the classification: three batches, the last one short. */
const TAG_QUESTIONS = 2 * TAG_BATCH_SIZE + 5
/** Questions per PDF page: the regex extractor reads a page's questions whole. */
const QUESTIONS_PER_PAGE = 5

interface JobBody { job_id: string; status: string; steps: Array<{ message: string }>; error?: string | null; quiz_id?: number }
interface BankBody { questions: Array<{ id: number; question_text: string; options: string[] }>; total: number }

/** The question ids a classification request asks about: the JSON between the prompt's markers. */
const askedIds = (req: ChatRequest): number[] => {
  const text = String(req.messages.find((m) => m.role === 'user')?.content ?? '')
  const json = /<<<QUESTIONS\n([\s\S]*)\nQUESTIONS>>>/.exec(text)?.[1]
  if (!json) throw new Error('no questions in the classification prompt')
  return (JSON.parse(json) as Array<{ id: number }>).map((q) => q.id)
}
const chats = (ai: AiServer) => ai.requests.filter((r) => r.path === '/v1/chat/completions')
const embeddingCalls = (ai: AiServer) => ai.requests.filter((r) => r.path === '/v1/embeddings')
/** The sizes of the regeneration's batch calls (a search embeds one text, the job's check one too). */
const batchSizes = (ai: AiServer) =>
  embeddingCalls(ai).map((r) => (Array.isArray(r.body?.input) ? r.body.input.length : 1)).filter((n) => n > 1)

/**
 * The gateway's classification answer: one subject for all (spelled in another case every other batch, so a
 * repeated tag would show), a disease shared by a few questions, and two keywords, one of them the question's own.
 */
const tagAnswer = (req: ChatRequest, n: number) => ({
  questions: askedIds(req).map((id) => ({
    id,
    subjects: [n % 2 === 1 ? 'Cardiology' : 'cardiology'],
    diseases: [`Disease ${id % 4}`],
    keywords: [`Keyword ${id}`, 'Shared term'],
  })),
})
const LINKS_PER_QUESTION = 4

/** Every id the collection holds, repeats included, sorted (read from the LanceDB table itself, not a count). */
async function indexedIds(lanceDir: string, collection: string): Promise<number[]> {
  const conn = await lancedb.connect(lanceDir)
  try {
    const rows = (await (await conn.openTable(collection)).query().select(['id']).toArray()) as Array<{ id: string }>
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b)
  } finally {
    conn.close()
  }
}

for (const target of databaseTargets()) {
  describe(`AI batch jobs survive kill -9 of the real server [${target}]`, () => {
    const crash = crashHarness(target, {
      dirPrefix: 'job-crash-ai-', encryptionKey: '0'.repeat(63) + '3', adminEmail: 'crash-ai-admin@example.test',
      recoveryBudgetMs: RECOVERY_BUDGET_MS, label: 'AI jobs',
    })
    const { json, start, kill, recover, stopCleanly, inspect, timings } = crash
    let release: (() => void) | null = null

    /** The id semantic search ranks first for the text the question is embedded by. */
    const semanticTop = async (q: BankBody['questions'][number]) => {
      const text = encodeURIComponent(`${q.question_text}\n${q.options.join('\n')}`)
      return (await json<BankBody>(`${API}/questions/bank?search_mode=semantic&limit=1&q=${text}`)).questions[0]?.id ?? null
    }
    const finished = (path: string) => async () => {
      const job = await json<JobBody>(path)
      return job.status === 'completed' || job.status === 'failed' ? job : null
    }
    /** n new bank questions, made as a moderator makes them: a PDF uploaded, a section, a regex extraction. */
    const addQuestions = async (tag: string, n: number): Promise<number> => {
      const questions = questionsText(tag, n).split('\n\n')
      const pages: string[][] = []
      for (let i = 0; i < questions.length; i += QUESTIONS_PER_PAGE) pages.push(questions.slice(i, i + QUESTIONS_PER_PAGE).join('\n\n').split('\n'))
      const form = new FormData()
      form.append('file', new File([await makePdf(pages)], `${tag}.pdf`, { type: 'application/pdf' }))
      const doc = await json<{ id: number }>(`${API}/documents/upload`, { method: 'POST', body: form })
      await waitFor(async () => (await json<{ status: string }>(`${API}/documents/${doc.id}/status`)).status === 'ready', `${tag}.pdf ready`, 30_000)
      const section = await json<{ id: number }>(`${API}/documents/${doc.id}/sections`, {
        method: 'POST', body: JSON.stringify({ name: 'All', start_page: 1, end_page: pages.length }),
      })
      const started = await json<{ job_id: string }>(`${API}/quizzes/`, {
        method: 'POST',
        body: JSON.stringify({ section_id: section.id, title: `Quiz ${tag}`, mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex' }),
      })
      const job = await waitFor(finished(`${API}/quizzes/job/${started.job_id}`), `the ${tag} extraction`, 30_000)
      expect(job.status).toBe('completed')
      const quiz = await json<{ questions: unknown[] }>(`${API}/quizzes/${job.quiz_id}`)
      expect(quiz.questions).toHaveLength(n)
      return job.quiz_id!
    }

    beforeAll(() => crash.setUp(() => addQuestions('tagcrash', TAG_QUESTIONS)), 120_000)
    afterAll(async () => {
      release?.()
      await crash.tearDown()
    }, 30_000)

    it('tag classification killed while the AI holds its 2nd batch resumes after the saved batch: every question tagged once per tag, no batch asked twice', async () => {
      await start()
      crash.ai.reset()
      const held = new Promise<void>((resolve) => (release = resolve))
      let seen = 0
      crash.ai.reply(async (req) => {
        const n = ++seen
        if (n === 2) await held
        return tagAnswer(req, n)
      })
      const started = await json<{ job_id: string }>(`${API}/tags/classify`, { method: 'POST' })
      await waitFor(async () => chats(crash.ai).length === 2, 'the 2nd batch sent to the AI', 20_000)
      const firstBatch = askedIds(chats(crash.ai)[0]!.body)
      expect(firstBatch).toHaveLength(TAG_BATCH_SIZE)
      await kill()
      release!()

      crash.ai.reset()
      let resumed = 0
      crash.ai.reply((req) => tagAnswer(req, ++resumed))
      const { value: done, ms } = await recover(finished(`${API}/tags/status/${started.job_id}`), 'the classification finished after the restart')
      timings.tags = ms
      expect(done).toMatchObject({ status: 'completed', error: null })
      expect(done.steps.some((s) => s.message.startsWith('Resumed after a restart (attempt 2 of 3)'))).toBe(true)
      expect(done.steps.at(-1)!.message).toStartWith(`Done: ${TAG_QUESTIONS - TAG_BATCH_SIZE} questions tagged`)
      const askedAgain = chats(crash.ai).flatMap((r) => askedIds(r.body))
      // The saved batch is not asked again; the rest is asked once each.
      expect(askedAgain.filter((id) => firstBatch.includes(id))).toEqual([])
      expect(askedAgain).toHaveLength(TAG_QUESTIONS - TAG_BATCH_SIZE)
      expect(new Set(askedAgain).size).toBe(askedAgain.length)
      const tags = await json<{ subjects: Array<{ name: string; count: number }>; diseases: unknown[]; keywords: unknown[] }>(`${API}/tags`)
      expect(tags.subjects).toEqual([expect.objectContaining({ name: 'Cardiology', count: TAG_QUESTIONS })])
      expect(tags.diseases).toHaveLength(4)
      expect(tags.keywords).toHaveLength(TAG_QUESTIONS + 1)
      await stopCleanly()

      await inspect(async (db) => {
        const [questions] = await db.sql<{ n: number; untagged: number }>`
          select count(*)::int as n, count(*) filter (where tagged_at is null)::int as untagged from quiz.questions`
        expect(questions).toEqual({ n: TAG_QUESTIONS, untagged: 0 })
        const perQuestion = await db.sql<{ links: number; tags: number }>`
          select count(*)::int as links, count(distinct qt.tag_id)::int as tags
          from quiz.questions q left join quiz.question_tags qt on qt.question_id = q.id group by q.id`
        expect(perQuestion).toHaveLength(TAG_QUESTIONS)
        for (const row of perQuestion) expect(row).toEqual({ links: LINKS_PER_QUESTION, tags: LINKS_PER_QUESTION })
        expect(await db.sql`select kind, lower(name) from quiz.tags group by kind, lower(name) having count(*) > 1`).toEqual([])
        const [job] = await db.sql<{ status: string; attempts: number }>`select status, attempts from core.jobs where id = ${started.job_id}`
        expect(job).toEqual({ status: 'completed', attempts: 2 })
        expect(await db.sql`select id from core.job_workers`).toEqual([])
      })
    }, CRASH_TEST_TIMEOUT_MS)

    it('embedding regeneration killed while the gateway holds a batch starts over on restart: one vector per question, and semantic search finds them', async () => {
      await start()
      // Enough questions for three batches, so the kill falls after one batch was written to the fresh index.
      const total = 2 * REGENERATE_BATCH + 5
      await addQuestions('regencrash', total - TAG_QUESTIONS)
      const bank = await json<BankBody>(`${API}/questions/bank?limit=${BANK_LIMIT_MAX}`)
      expect(bank.total).toBe(total)
      crash.ai.reset()
      // The job's calls: the embedder check, batch 1, then batch 2, which the gateway holds.
      crash.ai.delayNext(0, 2)
      crash.ai.delayNext(HOLD_MS)
      const started = await json<{ job_id: string }>(`${API}/admin/embedding/regenerate`, { method: 'POST' })
      await waitFor(async () => embeddingCalls(crash.ai).length === 3, 'the 2nd batch sent for embedding', 20_000)
      expect(batchSizes(crash.ai)).toEqual([REGENERATE_BATCH, REGENERATE_BATCH])
      await kill()
      await inspect(async (_db, indexed) => {
        // The index was dropped and holds the first batch only: the kill fell mid-way.
        expect(await indexed(QUESTIONS_COLLECTION)).toBe(REGENERATE_BATCH)
      })

      crash.ai.reset()
      // No route reports this job's state: the gateway shows the run's batches, semantic search the index it built,
      // and the clean stop below lets a job still finishing end (the queue's grace) before the row is read.
      // Newest first: the first question listed is in the last batch.
      const last = bank.questions[0]!
      const { ms } = await recover(async () => {
        if (batchSizes(crash.ai).reduce((a, b) => a + b, 0) < total) return null
        return (await semanticTop(last)) === last.id
      }, 'the regeneration re-embedding every question after the restart')
      timings.regenerate = ms
      expect(batchSizes(crash.ai)).toEqual([REGENERATE_BATCH, REGENERATE_BATCH, total - 2 * REGENERATE_BATCH])
      // The text a question is embedded by finds it first, by similarity alone.
      for (const q of [last, bank.questions[REGENERATE_BATCH]!, bank.questions.at(-1)!]) expect(await semanticTop(q)).toBe(q.id)
      await stopCleanly()

      await inspect(async (db, indexed) => {
        const ids = (await db.sql<{ id: number }>`select id from quiz.questions order by id`).map((r) => r.id)
        expect(ids).toHaveLength(total)
        expect(await indexed(QUESTIONS_COLLECTION)).toBe(total)
        expect(await indexedIds(join(crash.dataDir, 'lance'), QUESTIONS_COLLECTION)).toEqual(ids)
        const [job] = await db.sql<{ status: string; attempts: number; steps: Array<{ message: string }> }>`
          select status, attempts, steps from core.jobs where id = ${started.job_id}`
        expect(job).toMatchObject({ status: 'completed', attempts: 2 })
        expect(job!.steps.some((s) => s.message.startsWith('Restarted from the beginning (attempt 2 of 3)'))).toBe(true)
        expect(job!.steps.at(-1)!.message).toBe(`Embedded ${total} of ${total} questions`)
        expect(await db.sql`select id from core.job_workers`).toEqual([])
      })
    }, CRASH_TEST_TIMEOUT_MS)
  })
}

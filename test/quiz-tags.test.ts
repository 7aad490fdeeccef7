// Spec 1, Tags: GET /api/tags, POST /api/tags/classify (the AI classification job) and GET /api/tags/status/{job_id},
// through the real app on each database target, with the AI test server standing in for the gateway. Questions are
// made by extraction in `regex` mode (no AI).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { TAG_BATCH_SIZE, TAG_CLASSIFY_JOB_KIND, TAG_NAME_MAX, TAGS_PER_KIND_MAX } from '../plugins/quiz/models/tags'
import { startAiServer, type AiServer, type ChatRequest } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

interface TagEntry { id: number; name: string; count: number }
interface TagsBody { subjects: TagEntry[]; diseases: TagEntry[]; keywords: TagEntry[] }
interface StatusBody { job_id: string; status: string; steps: Array<{ message: string; at: string }>; error: string | null }
interface AiTags { id: number; subjects: string[]; diseases: string[]; keywords: string[] }

/** The questions a classification request sends: the JSON between the prompt's markers. */
function askedQuestions(req: ChatRequest): Array<{ id: number; question: string; options: string[]; answer: string }> {
  const user = req.messages.find((m) => m.role === 'user')
  const text = String(user?.content ?? '')
  const json = /<<<QUESTIONS\n([\s\S]*)\nQUESTIONS>>>/.exec(text)?.[1]
  if (!json) throw new Error('no questions in the prompt')
  return JSON.parse(json)
}
const chats = (ai: AiServer) => ai.requests.filter((r) => r.path.endsWith('/chat/completions'))

for (const target of databaseTargets()) {
  describe(`quiz tags [${target}]`, () => {
    let ai: AiServer
    let t: TestApp
    let admin: Account
    let moderator: Account
    let user: Account

    const classify = async (who: Account = moderator): Promise<string> => {
      const res = await t.post(`${API}/tags/classify`, undefined, { token: who.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { job_id: string; status: string }
      expect(body).toEqual({ job_id: expect.any(String), status: 'started' })
      return body.job_id
    }
    const status = async (jobId: string, who: Account = user): Promise<StatusBody> => {
      const res = await t.get(`${API}/tags/status/${jobId}`, { token: who.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as StatusBody
      expect(Object.keys(body).sort()).toEqual(['error', 'job_id', 'status', 'steps'])
      return body
    }
    const tags = async (who: Account = user): Promise<TagsBody> => {
      const res = await t.get(`${API}/tags`, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as TagsBody
    }
    /** The bank question ids of a fresh regex quiz of n questions, in id order. */
    const freshQuestions = async (n: number): Promise<number[]> => {
      const { quizId } = await makeRegexQuiz(t, moderator, { n })
      const rows = await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by question_id`
      expect(rows).toHaveLength(n)
      return rows.map((r) => r.question_id)
    }
    /** Marks every question classified, so a test starts from its own untagged questions only. */
    const classifyAllByHand = () => t.db.sql`update quiz.questions set tagged_at = now() where tagged_at is null`
    const untagged = async (ids: number[]) =>
      (await t.db.sql<{ id: number }>`select id from quiz.questions where id = any(${ids}::int[]) and tagged_at is null order by id`).map((r) => r.id)
    const tagNamesOf = async (questionId: number) =>
      (await t.db.sql<{ kind: string; name: string }>`
        select t.kind, t.name from quiz.question_tags qt join quiz.tags t on t.id = qt.tag_id
        where qt.question_id = ${questionId}`).map((r) => `${r.kind}:${r.name}`).sort()
    const linkCount = async (ids: number[]) =>
      (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.question_tags where question_id = any(${ids}::int[])`)[0]!.n
    const tagCount = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.tags`)[0]!.n
    const entry = (list: TagEntry[], name: string) => list.find((e) => e.name === name)

    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: ai.env })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
      user = await createAccount(t, admin, 'user', 'reader')
    })
    afterAll(async () => {
      await t?.close()
      await ai?.close()
    })

    it('classifies the untagged questions in batches of 20, each saved with its step, and GET /api/tags counts them', async () => {
      expect(await tags()).toEqual({ subjects: [], diseases: [], keywords: [] })
      const ids = await freshQuestions(TAG_BATCH_SIZE + 5)
      ai.reset()
      ai.reply((req) => ({
        questions: askedQuestions(req).map((q, i): AiTags => ({
          id: q.id,
          // repeats in any case and padding collapse to one tag, spelled as first given
          subjects: ['Cardiology', ' cardiology ', 'CARDIOLOGY'],
          diseases: q.id % 2 === 0 ? ['Heart failure'] : [],
          keywords: ['Troponin', 'x'.repeat(TAG_NAME_MAX + 1), '', '   ', `Key ${i % 3}`],
        })),
      }))
      const jobId = await classify()
      const job = await status(jobId)
      expect(job.error).toBeNull()
      expect(job.status).toBe('completed')
      const messages = job.steps.map((s) => s.message)
      expect(messages).toContain('Batch 1/2: 20 questions tagged (6 new tags)')
      expect(messages).toContain('Batch 2/2: 5 questions tagged (0 new tags)')
      expect(messages.at(-1)).toBe('Done: 25 questions tagged in 2 batches, 6 new tags')
      for (const s of job.steps) expect(Number.isNaN(Date.parse(s.at))).toBe(false)

      // one structured request per batch, 20 then 5 questions in id order, each with its text, options and answer
      const sent = chats(ai)
      expect(sent).toHaveLength(2)
      expect(Object.keys(sent[0]!.body.response_format.json_schema.schema.properties)).toEqual(['questions'])
      const batches = sent.map((r) => askedQuestions(r.body as ChatRequest))
      expect(batches.map((b) => b.map((q) => q.id))).toEqual([ids.slice(0, 20), ids.slice(20)])
      expect(batches[0]![0]!.question).toContain('number 1?')
      expect(batches[0]![0]!.options).toHaveLength(4)
      expect(batches[0]![0]!.answer).toContain('Beta')

      expect(await untagged(ids)).toEqual([])
      expect(await tagNamesOf(ids[0]!)).toEqual(['keyword:Key 0', 'keyword:Troponin', 'subject:Cardiology'].concat(ids[0]! % 2 === 0 ? ['disease:Heart failure'] : []).sort())

      const evens = ids.filter((id) => id % 2 === 0).length
      const keyCounts = [0, 1, 2].map((k) => ids.filter((_, i) => (i % 20) % 3 === k).length)
      const listed = await tags()
      expect(listed.subjects.map(({ name, count }) => ({ name, count }))).toEqual([{ name: 'Cardiology', count: 25 }])
      expect(listed.diseases.map(({ name, count }) => ({ name, count }))).toEqual([{ name: 'Heart failure', count: evens }])
      // most used first, then by name
      expect(listed.keywords.map(({ name, count }) => ({ name, count }))).toEqual([
        { name: 'Troponin', count: 25 },
        ...[0, 1, 2].map((k) => ({ name: `Key ${k}`, count: keyCounts[k]! })).sort((a, b) => b.count - a.count || a.name.localeCompare(b.name)),
      ])
      for (const e of [...listed.subjects, ...listed.diseases, ...listed.keywords]) {
        expect(Object.keys(e).sort()).toEqual(['count', 'id', 'name'])
        expect(Number.isInteger(e.id)).toBe(true)
      }
      // the job belongs to the caller, under its title
      const [row] = await t.db.sql<{ kind: string; owner_id: number; title: string }>`select kind, owner_id, title from core.jobs where id = ${jobId}`
      expect(row).toEqual({ kind: TAG_CLASSIFY_JOB_KIND, owner_id: moderator.id, title: 'Tag classification' })
    })

    it('a classification with nothing untagged completes with "No untagged questions" and asks the AI nothing', async () => {
      await classifyAllByHand()
      ai.reset()
      const before = await tags()
      const job = await status(await classify())
      expect(job).toMatchObject({ status: 'completed', error: null })
      expect(job.steps.map((s) => s.message)).toEqual(['No untagged questions'])
      expect(chats(ai)).toHaveLength(0)
      expect(await tags()).toEqual(before)
    })

    it('tag names are one per kind whatever the case, kinds stay apart, and the AI\'s odd answers are checked', async () => {
      await classifyAllByHand()
      const ids = await freshQuestions(4)
      const [first, second, third, skipped] = ids as [number, number, number, number]
      const tagsBefore = await tagCount()
      const cardiologyBefore = entry((await tags()).subjects, 'Cardiology')!
      ai.reset()
      ai.reply(() => ({
        questions: [
          { id: first, subjects: ['cardiology', 'Endocrinology'], diseases: ['Diabetes'], keywords: ['DIABETES', 'diabetes', 'Insulin'] },
          { id: second, subjects: ['diabetes'], diseases: ['DIABETES mellitus ', 'diabetes'], keywords: Array.from({ length: 8 }, (_, k) => `Term ${k}`) },
          // a repeated id keeps its first answer; an id outside the batch is ignored
          { id: first, subjects: ['Ignored'], diseases: [], keywords: [] },
          { id: 2_000_000_000, subjects: ['Nowhere'], diseases: [], keywords: [] },
          // no tag at all: still classified, so it is not sent again
          { id: third, subjects: [], diseases: [], keywords: [] },
          // `skipped` is left out of the answer
        ],
      }))
      const job = await status(await classify())
      expect(job).toMatchObject({ status: 'completed', error: null })
      const messages = job.steps.map((s) => s.message)
      // new: Endocrinology, diabetes (subject), Diabetes (disease), DIABETES mellitus, DIABETES (keyword), Insulin, Term 0-4
      expect(messages).toContain(`Batch 1/1: 3 questions tagged (${6 + TAGS_PER_KIND_MAX} new tags), 1 skipped by the AI and left untagged for the next run; 1 answer for questions not in the batch ignored`)
      expect(messages.at(-1)).toBe(`Done: 3 questions tagged in 1 batch, ${6 + TAGS_PER_KIND_MAX} new tags; 1 left untagged for the next run`)
      expect(await tagCount()).toBe(tagsBefore + 6 + TAGS_PER_KIND_MAX)

      // "cardiology" reuses the existing subject, spelled as it was first stored
      expect(await tagNamesOf(first)).toEqual(['disease:Diabetes', 'keyword:DIABETES', 'keyword:Insulin', 'subject:Cardiology', 'subject:Endocrinology'])
      expect(entry((await tags()).subjects, 'Cardiology')).toEqual({ ...cardiologyBefore, count: cardiologyBefore.count + 1 })
      // one name, three kinds: three tags; the same name in another case is the same tag
      const diabetes = await t.db.sql<{ kind: string; name: string }>`select kind, name from quiz.tags where lower(name) = 'diabetes' order by kind`
      expect(diabetes).toEqual([{ kind: 'disease', name: 'Diabetes' }, { kind: 'keyword', name: 'DIABETES' }, { kind: 'subject', name: 'diabetes' }])
      expect(await tagNamesOf(second)).toEqual([
        'disease:DIABETES mellitus', 'disease:Diabetes',
        ...Array.from({ length: TAGS_PER_KIND_MAX }, (_, k) => `keyword:Term ${k}`), 'subject:diabetes',
      ])
      expect(await tagNamesOf(third)).toEqual([])
      expect(await t.db.sql`select id from quiz.tags where name in ('Ignored', 'Nowhere', 'Term 5')`).toHaveLength(0)
      expect(await untagged(ids)).toEqual([skipped])
      const listed = await tags()
      expect(entry(listed.subjects, 'diabetes')?.count).toBe(1)
      expect(entry(listed.diseases, 'Diabetes')?.count).toBe(2)
      expect(entry(listed.keywords, 'DIABETES')?.count).toBe(1)

      // the next run takes the skipped question only
      ai.reset()
      ai.reply((req) => ({ questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: ['Endocrinology'], diseases: [], keywords: [] })) }))
      const again = await status(await classify())
      expect(again.steps.map((s) => s.message)).toContain('Batch 1/1: 1 question tagged (0 new tags)')
      expect(chats(ai).map((r) => askedQuestions(r.body as ChatRequest).map((q) => q.id))).toEqual([[skipped]])
      expect(await untagged(ids)).toEqual([])
      expect(entry((await tags()).subjects, 'Endocrinology')?.count).toBe(2)
    })

    it('a batch classified again (as after a crash) links nothing twice', async () => {
      await classifyAllByHand()
      const ids = await freshQuestions(3)
      ai.reset()
      ai.reply((req) => ({ questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: ['Nephrology'], diseases: ['Renal failure'], keywords: ['Creatinine'] })) }))
      expect((await status(await classify())).status).toBe('completed')
      expect(await linkCount(ids)).toBe(9)
      const before = await tags()
      // the same questions unclassified again and the same answers: same links, same tags, same counts
      await t.db.sql`update quiz.questions set tagged_at = null where id = any(${ids}::int[])`
      const job = await status(await classify())
      expect(job.steps.map((s) => s.message)).toContain('Batch 1/1: 3 questions tagged (0 new tags)')
      expect(await linkCount(ids)).toBe(9)
      expect(await tags()).toEqual(before)
      expect(entry(before.subjects, 'Nephrology')?.count).toBe(3)
    })

    it('an answer in the wrong shape fails the job on its batch: earlier batches stay, nothing of that batch is saved', async () => {
      await classifyAllByHand()
      const ids = await freshQuestions(TAG_BATCH_SIZE + 2)
      const tagsBefore = await tagCount()
      ai.reset()
      let calls = 0
      ai.reply((req) => {
        calls++
        if (calls === 1) return { questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: ['Oncology'], diseases: [], keywords: [] })) }
        // the second batch's answer: questions whose tag lists are missing or not lists
        return { questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: 'Hematology', diseases: ['Anemia'] })) }
      })
      const job = await status(await classify())
      expect(job.status).toBe('failed')
      expect(job.error).toContain('AI classification failed on batch 2/2')
      expect(job.error).toContain('The AI service gave an answer that could not be used')
      expect(job.error).toContain('The 20 questions tagged in earlier batches keep their tags')
      expect(job.steps.map((s) => s.message)).toContain('Batch 1/2: 20 questions tagged (1 new tag)')
      expect(await untagged(ids)).toEqual(ids.slice(20))
      expect(await linkCount(ids.slice(20))).toBe(0)
      expect(await tagCount()).toBe(tagsBefore + 1)
      expect(await t.db.sql`select id from quiz.tags where name in ('Hematology', 'Anemia')`).toHaveLength(0)

      // a new run goes on with what is left
      ai.reset()
      ai.reply((req) => ({ questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: ['Oncology'], diseases: [], keywords: [] })) }))
      const again = await status(await classify())
      expect(again).toMatchObject({ status: 'completed', error: null })
      expect(again.steps.map((s) => s.message)).toContain('Batch 1/1: 2 questions tagged (0 new tags)')
      expect(await untagged(ids)).toEqual([])
    })

    it('an AI gateway error fails the job with a plain message and tags nothing', async () => {
      await classifyAllByHand()
      const ids = await freshQuestions(2)
      ai.reset()
      ai.failNext(500)
      const job = await status(await classify())
      expect(job.status).toBe('failed')
      expect(job.error).toBe('AI classification failed on batch 1/1: The AI service answered with an error. ' +
        'No question was tagged; start the classification again once the AI service works')
      expect(await untagged(ids)).toEqual(ids)
      expect(await linkCount(ids)).toBe(0)
    })

    it('a cancel between batches stops the job: the batch saved before stays, the one in flight is not saved', async () => {
      await classifyAllByHand()
      const ids = await freshQuestions(TAG_BATCH_SIZE + 3)
      ai.reset()
      let calls = 0
      ai.reply(async (req) => {
        calls++
        if (calls === 2) {
          const [running] = await t.db.sql<{ id: string }>`select id from core.jobs where kind = ${TAG_CLASSIFY_JOB_KIND} and status = 'running'`
          expect(await t.booted.core.jobs.cancel(running!.id)).toBe('cancelled')
        }
        return { questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: ['Neurology'], diseases: [], keywords: [] })) }
      })
      const job = await status(await classify())
      expect(job.status).toBe('cancelled')
      expect(job.error).toBeNull()
      expect(job.steps.map((s) => s.message)).toContain('Batch 1/2: 20 questions tagged (1 new tag)')
      expect(job.steps.some((s) => s.message.startsWith('Batch 2/2'))).toBe(false)
      expect(await untagged(ids)).toEqual(ids.slice(20))
      expect(await linkCount(ids.slice(20))).toBe(0)
    })

    it('a classification already running is answered instead of starting a second; a dead one does not block', async () => {
      await classifyAllByHand()
      await freshQuestions(2)
      ai.reset()
      ai.reply((req) => ({ questions: askedQuestions(req).map((q) => ({ id: q.id, subjects: ['Pulmonology'], diseases: [], keywords: [] })) }))
      ai.delayNext(1_500)
      const countJobs = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from core.jobs where kind = ${TAG_CLASSIFY_JOB_KIND}`)[0]!.n
      const jobsBefore = await countJobs()
      const first = classify()
      await Bun.sleep(300) // the first job is waiting on the AI
      const second = await classify(admin)
      expect(second).toBe(await first)
      expect(await countJobs()).toBe(jobsBefore + 1)
      expect(chats(ai)).toHaveLength(1)
      expect((await status(second)).status).toBe('completed')

      // a job left `running` by a process that stopped (its lease ran out) does not hold up a new one
      const dead = crypto.randomUUID()
      await t.db.sql`
        insert into core.jobs (id, kind, service, owner_id, title, status, locked_by, lease_until, attempts, started_at)
        values (${dead}, ${TAG_CLASSIFY_JOB_KIND}, 'quiz', ${moderator.id}, 'Tag classification', 'running', 'gone:w0',
          now() - interval '1 minute', 1, now() - interval '5 minutes')`
      const fresh = await classify()
      expect(fresh).not.toBe(dead)
      expect((await status(fresh)).status).toBe('completed')
      await t.db.sql`delete from core.jobs where id = ${dead}`
    })

    it('roles: users read tags and job status, only moderators start a classification, nobody without a token', async () => {
      const jobId = await classify(admin) // a higher role may do what a moderator may
      await expectDetail(await t.post(`${API}/tags/classify`, undefined, { token: user.token }), 403)
      await expectDetail(await t.post(`${API}/tags/classify`), 401)
      await expectDetail(await t.get(`${API}/tags`), 401)
      await expectDetail(await t.get(`${API}/tags/status/${jobId}`), 401)
      expect((await t.get(`${API}/tags`, { token: user.token })).status).toBe(200)
      expect((await status(jobId, user)).job_id).toBe(jobId)
    })

    it('status: 404 for an unknown job or another kind of job, 422 for an id that is not a UUID', async () => {
      expect(await expectDetail(await t.get(`${API}/tags/status/${crypto.randomUUID()}`, { token: user.token }), 404)).toContain('not found')
      const { jobId: extractionJob } = await makeRegexQuiz(t, moderator, { n: 1 })
      await expectDetail(await t.get(`${API}/tags/status/${extractionJob}`, { token: user.token }), 404)
      for (const bad of ['not-a-uuid', '12345', `${crypto.randomUUID()}x`]) {
        expect((await t.get(`${API}/tags/status/${bad}`, { token: user.token })).status).toBe(422)
      }
    })
  })

  describe(`quiz tags without a keyword model [${target}]`, () => {
    let down: AiServer
    let t: TestApp
    let admin: Account
    let moderator: Account

    beforeAll(async () => {
      // A gateway address with nothing listening, and no server default model.
      down = await startAiServer()
      await down.close()
      t = await startTestApp({ target, env: { AI_BASE_URL: down.url, AI_API_KEY: 'test-key' } })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
    })
    afterAll(() => t?.close())

    it('503 naming how to configure one, and no job is started', async () => {
      const detail = await expectDetail(await t.post(`${API}/tags/classify`, undefined, { token: moderator.token }), 503)
      expect(detail).toContain('No keyword model is configured')
      expect(detail).toContain('task keyword')
      expect(await t.db.sql`select id from core.jobs where kind = ${TAG_CLASSIFY_JOB_KIND}`).toHaveLength(0)
    })

    it('with a keyword model on a gateway that is down, the job fails with a plain message', async () => {
      const created = await t.post(`${API}/admin/models`, {
        name: 'Tagger', model_id: 'tagger-1', task: 'keyword', is_active: true, is_default: true, api_key: null,
      }, { token: admin.token })
      expect(created.status).toBe(200)
      const { quizId } = await makeRegexQuiz(t, moderator, { n: 2 })
      const res = await t.post(`${API}/tags/classify`, undefined, { token: moderator.token })
      expect(res.status).toBe(200)
      const { job_id } = (await res.json()) as { job_id: string }
      const job = (await (await t.get(`${API}/tags/status/${job_id}`, { token: moderator.token })).json()) as StatusBody
      expect(job.status).toBe('failed')
      expect(job.error).toContain('AI classification failed on batch 1/1: The AI service could not be reached')
      expect(job.steps.map((s) => s.message)).toContain('Classifying 2 untagged questions in 1 batch of up to 20 with the keyword model Tagger (tagger-1)')
      const left = await t.db.sql`
        select q.id from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
        where qq.quiz_id = ${quizId} and q.tagged_at is null`
      expect(left).toHaveLength(2)
    })
  })
}

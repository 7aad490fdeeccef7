// Spec 1, Quizzes: POST /api/quizzes/ (extraction jobs in every mode), GET /api/quizzes/jobs, GET /api/quizzes/job/{id},
// POST /api/quizzes/job/{id}/cancel and the Extraction job states, through the real app on each database target,
// with the AI test server standing in for the gateway.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { EXTRACTION_JOB_KIND, LAST_STEP_MAX } from '../plugins/quiz/models/extraction'
import { CHUNK_CHARS } from '../plugins/quiz/services/ai-extract'
import { QUESTIONS_COLLECTION } from '../plugins/quiz/services/question-index'
import { PAGE_BREAK } from '../plugins/quiz/services/regex-extract'
import { startAiServer, type AiServer, type ChatRequest } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { KNOWN, NUMBERINGS, OPTIONS, renderQuestions, type Layout } from './support/mcq-fixtures'
import { makePdf } from './support/pdf'
import { API, createAccount, expectDetail, expectValidation, registerAdmin, upload, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface JobBody { job_id: string; title: string; status: string; steps: Array<{ message: string }>; quiz_id?: number; error?: string }
interface ListItem { job_id: string; title: string; status: string; steps_count: number; last_step: string; quiz_id: number | null }
interface QuestionRow {
  id: number; question_text: string; options: string[]; correct_answer: string; explanation: string
  question_category_id: number | null; source_quiz_id: number; created_by: number; position: number
}

/** A document in the given state with these page texts, and one section over all its pages. */
async function sectionOver(t: TestApp, owner: Account, pages: string[], opts: { status?: string; name?: string } = {}): Promise<number> {
  const [doc] = await t.db.sql<{ id: number }>`
    insert into quiz.documents (user_id, filename, original_filename, status, total_pages, storage_key, size_bytes)
    values (${owner.id}, 'test.pdf', 'questions.pdf', ${opts.status ?? 'ready'}, ${pages.length}, 'test/none.pdf', 0)
    returning id`
  for (const [i, text] of pages.entries()) {
    await t.db.sql`insert into quiz.document_pages (document_id, page_number, text) values (${doc!.id}, ${i + 1}, ${text})`
  }
  const [section] = await t.db.sql<{ id: number }>`
    insert into quiz.sections (document_id, name, start_page, end_page)
    values (${doc!.id}, ${opts.name ?? 'Chapter 1'}, 1, ${Math.max(2, pages.length)})
    returning id`
  return section!.id
}

/**
 * A real PDF (makePdf) with the known questions twice, uploaded and processed, and one section over each copy:
 * pages of the first copy use `1.` / `A)` / `Answer: B` lines, the second `Q1.` / `(a)` and an answer key at the end.
 * Both have a running header and a page-number footer on every page, and makePdf wraps the long lines.
 */
async function uploadKnownPdf(t: TestApp, moderator: Account): Promise<{ inline: number; keyed: number }> {
  const layouts: Layout[] = [
    { name: 'inline', numbering: NUMBERINGS.dot!, option: OPTIONS.upperParen!, answer: 'answer', explanation: 'after', pageLines: 18 },
    { name: 'keyed', numbering: NUMBERINGS.q!, option: OPTIONS.lowerBoth!, answer: 'key-paren', explanation: 'before', pageLines: 18 },
  ]
  const parts = layouts.map((layout) => renderQuestions(KNOWN, layout).split(PAGE_BREAK).map((page) => page.split('\n')))
  const res = await upload(t, moderator.token, await makePdf(parts.flat()), 'cardiology-questions.pdf')
  expect(res.status).toBe(200)
  const { id } = (await res.json()) as { id: number }
  const status = (await (await t.get(`${API}/documents/${id}/status`, { token: moderator.token })).json()) as { status: string; total_pages: number }
  expect(status).toMatchObject({ status: 'ready', total_pages: parts[0]!.length + parts[1]!.length })
  const section = async (name: string, start_page: number, end_page: number) => {
    const r = await t.post(`${API}/documents/${id}/sections`, { name, start_page, end_page }, { token: moderator.token })
    expect(r.status).toBe(200)
    return ((await r.json()) as { id: number }).id
  }
  return {
    inline: await section('Inline answers', 1, parts[0]!.length),
    keyed: await section('Answer key at the end', parts[0]!.length + 1, parts[0]!.length + parts[1]!.length),
  }
}

const body = (sectionId: number, extra: Record<string, unknown> = {}) => ({
  section_id: sectionId, title: `Quiz ${crypto.randomUUID().slice(0, 8)}`, mode: 'learning', time_limit_minutes: null,
  model_id: null, question_category_id: null, extraction_mode: 'regex', ...extra,
})

async function createQuiz(t: TestApp, who: Account, payload: Record<string, unknown>): Promise<string> {
  const res = await t.post(`${API}/quizzes/`, payload, { token: who.token })
  expect(res.status).toBe(200)
  const started = (await res.json()) as { job_id: string; status: string }
  expect(started).toEqual({ job_id: expect.any(String), status: 'pending' })
  return started.job_id
}

async function job(t: TestApp, who: Account, jobId: string): Promise<JobBody> {
  const res = await t.get(`${API}/quizzes/job/${jobId}`, { token: who.token })
  expect(res.status).toBe(200)
  return (await res.json()) as JobBody
}

async function quizQuestions(t: TestApp, quizId: number): Promise<QuestionRow[]> {
  return t.db.sql<QuestionRow>`
    select q.id, q.question_text, q.options, q.correct_answer, q.explanation, q.question_category_id, q.source_quiz_id, q.created_by, qq.position
    from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
    where qq.quiz_id = ${quizId} order by qq.position`
}

const expectedKnown = (withExplanations = true) => KNOWN.map((q) => ({
  question_text: q.question_text, options: q.options, correct_answer: q.options[q.correct]!, explanation: withExplanations ? q.explanation : '',
}))
const shape = (rows: QuestionRow[]) => rows.map(({ question_text, options, correct_answer, explanation }) => ({ question_text, options, correct_answer, explanation }))

/** The kind of structured answer a chat request asks for: the top-level keys of its JSON schema. */
const asks = (req: ChatRequest) => Object.keys(req.response_format?.json_schema?.schema?.properties ?? {}).join(',')
const userText = (req: ChatRequest) => String(req.messages.find((m) => m.role === 'user')?.content ?? '')
const chats = (ai: AiServer) => ai.requests.filter((r) => r.path.endsWith('/chat/completions'))

const q = (question_text: string, options: string[], correct_answer: string, explanation = '') => ({ question_text, options, correct_answer, explanation })

for (const target of databaseTargets()) {
  describe(`quiz extraction [${target}]`, () => {
    let ai: AiServer
    let t: TestApp
    let admin: Account
    let moderator: Account
    let otherModerator: Account
    let user: Account
    let knownSection: number
    let keyedSection: number
    const indexCount = () => t.booted.core.vectors.count(QUESTIONS_COLLECTION)

    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: ai.env })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
      otherModerator = await createAccount(t, admin, 'moderator', 'mod2')
      user = await createAccount(t, admin, 'user', 'user')
      ;({ inline: knownSection, keyed: keyedSection } = await uploadKnownPdf(t, moderator))
    })
    afterAll(async () => {
      await t?.close()
      await ai?.close()
    })

    describe('POST /api/quizzes/ regex mode', () => {
      it('builds a quiz whose questions are exactly the source\'s, in the bank, linked in order, indexed; answers pending at once', async () => {
        const before = await indexCount()
        const payload = body(knownSection, { mode: 'timed', time_limit_minutes: 25 })
        const jobId = await createQuiz(t, moderator, payload)
        const done = await job(t, moderator, jobId)
        expect(done.status).toBe('completed')
        expect(done.error).toBeUndefined()
        const quizId = done.quiz_id!
        expect(typeof quizId).toBe('number')
        expect(done.steps.length).toBeGreaterThanOrEqual(4)
        expect(done.steps.some((s) => s.message.includes(`Found ${KNOWN.length} questions`))).toBe(true)

        const [quiz] = await t.db.sql<{ section_id: number; user_id: number; title: string; mode: string; time_limit_minutes: number; is_published: boolean; deleted_at: unknown }>`
          select section_id, user_id, title, mode, time_limit_minutes, is_published, deleted_at from quiz.quizzes where id = ${quizId}`
        expect(quiz).toEqual({ section_id: knownSection, user_id: moderator.id, title: payload.title, mode: 'timed', time_limit_minutes: 25, is_published: false, deleted_at: null })
        const rows = await quizQuestions(t, quizId)
        expect(shape(rows)).toEqual(expectedKnown())
        expect(rows.map((r) => r.position)).toEqual(KNOWN.map((_, i) => i + 1))
        for (const r of rows) expect(r).toMatchObject({ source_quiz_id: quizId, created_by: moderator.id, question_category_id: null })
        expect(await indexCount()).toBe(before + KNOWN.length)
        expect(chats(ai)).toHaveLength(0)
      })

      it('reads an answer key at the end of the section; gives every question the question category; stores mode learning', async () => {
        const [category] = await t.db.sql<{ id: number }>`insert into quiz.question_categories (name) values (${`Cardiology ${crypto.randomUUID()}`}) returning id`
        const jobId = await createQuiz(t, moderator, body(keyedSection, { question_category_id: category!.id }))
        const done = await job(t, moderator, jobId)
        expect(done.status).toBe('completed')
        const rows = await quizQuestions(t, done.quiz_id!)
        expect(shape(rows)).toEqual(expectedKnown())
        for (const r of rows) expect(r.question_category_id).toBe(category!.id)
        const [quiz] = await t.db.sql<{ mode: string; time_limit_minutes: number | null }>`select mode, time_limit_minutes from quiz.quizzes where id = ${done.quiz_id!}`
        expect(quiz).toEqual({ mode: 'learning', time_limit_minutes: null })
      })

      it('a section with no numbered questions fails the job with a clear error and writes no quiz', async () => {
        const section = await sectionOver(t, moderator, ['The heart has four chambers.', 'Blood flows from the atria to the ventricles.'])
        const payload = body(section)
        const done = await job(t, moderator, await createQuiz(t, moderator, payload))
        expect(done.status).toBe('failed')
        expect(done.error).toContain('No questions found')
        expect(done.quiz_id).toBeUndefined()
        expect(await t.db.sql`select id from quiz.quizzes where title = ${payload.title}`).toHaveLength(0)
      })
    })

    describe('POST /api/quizzes/ input', () => {
      it('refuses a user (403), an unknown section or question category (404), a document not ready (400), an unknown mode (422)', async () => {
        await expectDetail(await t.post(`${API}/quizzes/`, body(knownSection), { token: user.token }), 403)
        await expectDetail(await t.post(`${API}/quizzes/`, body(knownSection), {}), 401)
        await expectDetail(await t.post(`${API}/quizzes/`, body(999_999), { token: moderator.token }), 404)
        await expectDetail(await t.post(`${API}/quizzes/`, body(knownSection, { question_category_id: 999_999 }), { token: moderator.token }), 404)
        const processing = await sectionOver(t, moderator, ['1. Q?', 'A) a', 'B) b', 'Answer: A'], { status: 'processing' })
        expect(await expectDetail(await t.post(`${API}/quizzes/`, body(processing), { token: moderator.token }), 400)).toContain('not ready')
        await expectValidation(await t.post(`${API}/quizzes/`, body(knownSection, { extraction_mode: 'magic' }), { token: moderator.token }), 'extraction_mode')
        await expectValidation(await t.post(`${API}/quizzes/`, body(knownSection, { mode: 'exam' }), { token: moderator.token }), 'mode')
        await expectDetail(await t.post(`${API}/quizzes/`, body(knownSection, { extraction_mode: 'standard', model_id: 999_999 }), { token: moderator.token }), 404)
        const [jobs] = await t.db.sql<{ n: number }>`select count(*)::int as n from core.jobs where owner_id = ${user.id}`
        expect(jobs!.n).toBe(0)
      })
    })

    describe('POST /api/quizzes/ AI modes', () => {
      const section = async (pages = ['Cardiology notes. 1. Which valve separates the left atrium from the left ventricle? A) Tricuspid B) Mitral', 'More notes.']) =>
        sectionOver(t, moderator, pages)

      it('standard: keeps valid questions, maps a letter answer to its option, drops and counts invalid ones', async () => {
        ai.reset()
        ai.reply(() => ({
          questions: [
            q('Which valve separates the left atrium from the left ventricle?', ['Tricuspid valve', 'Mitral valve'], 'Mitral valve', 'The mitral valve.'),
            q('Which of these drugs is a loop diuretic?', ['Spironolactone', 'Furosemide', 'Hydrochlorothiazide'], 'B', 'Loop of Henle.'),
            q('Which chamber has the thickest wall?', ['A) Right atrium', 'B) Left ventricle', 'C) Right ventricle'], 'left ventricle'),
            q('Only one option?', ['Yes'], 'Yes'),
            q('Repeated options?', ['Same', 'same'], 'Same'),
            q('Answer not an option?', ['One', 'Two'], 'Three'),
            q('   ', ['One', 'Two'], 'One'),
          ],
        }))
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(), { extraction_mode: 'standard' })))
        expect(done.status).toBe('completed')
        expect(shape(await quizQuestions(t, done.quiz_id!))).toEqual([
          q('Which valve separates the left atrium from the left ventricle?', ['Tricuspid valve', 'Mitral valve'], 'Mitral valve', 'The mitral valve.'),
          q('Which of these drugs is a loop diuretic?', ['Spironolactone', 'Furosemide', 'Hydrochlorothiazide'], 'Furosemide', 'Loop of Henle.'),
          q('Which chamber has the thickest wall?', ['Right atrium', 'Left ventricle', 'Right ventricle'], 'Left ventricle'),
        ])
        const dropped = done.steps.find((s) => s.message.includes('invalid dropped'))!
        expect(dropped.message).toContain('3 questions kept, 4 invalid dropped')
        const sent = chats(ai)
        expect(sent).toHaveLength(1)
        expect(sent[0]!.body.model).toBe(ai.env.AI_DEFAULT_MODEL)
        expect(asks(sent[0]!.body)).toBe('questions')
        expect(userText(sent[0]!.body)).toContain('Which valve separates')
      })

      it('questions_only: asks the AI to work out the answers', async () => {
        ai.reset()
        ai.reply(() => ({ questions: [q('What is the normal resting heart rate?', ['20-40', '60-100'], '60-100', 'Normal adult range.')] }))
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(), { extraction_mode: 'questions_only' })))
        expect(done.status).toBe('completed')
        expect(shape(await quizQuestions(t, done.quiz_id!))).toEqual([q('What is the normal resting heart rate?', ['20-40', '60-100'], '60-100', 'Normal adult range.')])
        const sent = chats(ai)
        expect(sent).toHaveLength(1)
        expect(String(sent[0]!.body.messages[0]?.content)).toContain('Decide the correct answer yourself')
      })

      it('two_step: locates the question blocks, then structures them', async () => {
        ai.reset()
        ai.reply((req) => asks(req) === 'blocks'
          ? { blocks: ['1. Which valve? A) Tricuspid B) Mitral Answer: B', '2. Loop diuretic? A) Furosemide B) Spironolactone Answer: A'] }
          : { questions: [q('Which valve?', ['Tricuspid', 'Mitral'], 'B'), q('Loop diuretic?', ['Furosemide', 'Spironolactone'], 'A')] })
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(), { extraction_mode: 'two_step' })))
        expect(done.status).toBe('completed')
        expect(shape(await quizQuestions(t, done.quiz_id!))).toEqual([q('Which valve?', ['Tricuspid', 'Mitral'], 'Mitral'), q('Loop diuretic?', ['Furosemide', 'Spironolactone'], 'Furosemide')])
        const sent = chats(ai)
        expect(sent.map((r) => asks(r.body))).toEqual(['blocks', 'questions'])
        expect(userText(sent[1]!.body)).toContain('[Block 2]')
        expect(done.steps.some((s) => s.message.includes('located 2 question blocks'))).toBe(true)
      })

      it('ai_decide: the AI chooses to generate, then writes questions from the content', async () => {
        ai.reset()
        ai.reply((req) => asks(req).startsWith('decision')
          ? { decision: 'generate', reason: 'The text is lecture notes without questions.' }
          : { questions: [q('Where is the SA node?', ['Right atrium', 'Left ventricle'], 'Right atrium', 'It sits in the right atrial wall.')] })
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(['The SA node lies in the right atrium.', 'It sets the heart rate.']), { extraction_mode: 'ai_decide' })))
        expect(done.status).toBe('completed')
        expect(shape(await quizQuestions(t, done.quiz_id!))).toHaveLength(1)
        const sent = chats(ai)
        expect(sent.map((r) => asks(r.body))).toEqual(['decision,reason', 'questions'])
        expect(userText(sent[1]!.body)).toContain('Write 10 questions')
        expect(done.steps.some((s) => s.message.includes('chose to write new questions'))).toBe(true)
      })

      it('ai_decide: the AI chooses to extract, then extracts', async () => {
        ai.reset()
        ai.reply((req) => asks(req).startsWith('decision')
          ? { decision: 'extract', reason: 'Numbered questions with options.' }
          : { questions: [q('Which valve?', ['Tricuspid', 'Mitral'], 'Mitral')] })
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(), { extraction_mode: 'ai_decide' })))
        expect(done.status).toBe('completed')
        expect(userText(chats(ai)[1]!.body)).toContain('Extract the questions')
      })

      it('generate: writes new questions from the content', async () => {
        ai.reset()
        ai.reply(() => ({ questions: [q('What does the SA node do?', ['Sets the heart rate', 'Stores glycogen'], 'Sets the heart rate')] }))
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(['The SA node sets the heart rate.', '']), { extraction_mode: 'generate' })))
        expect(done.status).toBe('completed')
        expect(shape(await quizQuestions(t, done.quiz_id!))).toEqual([q('What does the SA node do?', ['Sets the heart rate', 'Stores glycogen'], 'Sets the heart rate')])
        expect(String(chats(ai)[0]!.body.messages[0]?.content)).toContain('Write new questions')
      })

      it('reads a long section in chunks split at page boundaries, one step and one AI call each', async () => {
        ai.reset()
        const page = (n: number) => `Page ${n} marker-${n}. ` + 'The cardiac cycle has systole and diastole. '.repeat(Math.ceil((CHUNK_CHARS * 0.4) / 44))
        const pages = [1, 2, 3, 4, 5].map(page)
        let call = 0
        ai.reply(() => {
          call++
          return { questions: [q(`Question from call ${call}?`, ['Yes', 'No'], 'Yes')] }
        })
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(pages), { extraction_mode: 'standard' })))
        expect(done.status).toBe('completed')
        const sent = chats(ai)
        expect(sent).toHaveLength(3)
        expect(sent.map((r) => ['marker-1', 'marker-2', 'marker-3', 'marker-4', 'marker-5'].filter((m) => userText(r.body).includes(m))))
          .toEqual([['marker-1', 'marker-2'], ['marker-3', 'marker-4'], ['marker-5']])
        for (const r of sent) expect(userText(r.body).length).toBeLessThan(CHUNK_CHARS + 500)
        expect(done.steps.filter((s) => /^Chunk \d\/3 \(pages? [\d-]+\): extracting/.test(s.message)).map((s) => s.message.split(':')[0]))
          .toEqual(['Chunk 1/3 (pages 1-2)', 'Chunk 2/3 (pages 3-4)', 'Chunk 3/3 (page 5)'])
        expect((await quizQuestions(t, done.quiz_id!)).map((r) => r.question_text)).toEqual(['Question from call 1?', 'Question from call 2?', 'Question from call 3?'])
      })

      it('uses the model configuration named by model_id', async () => {
        ai.reset()
        const [model] = await t.db.sql<{ id: number }>`
          insert into quiz.ai_models (name, model_id, task, is_active, is_default) values ('Other', ${`other-model-${crypto.randomUUID().slice(0, 6)}`}, 'extraction', true, false)
          returning id`
        ai.reply(() => ({ questions: [q('Which valve?', ['Tricuspid', 'Mitral'], 'Mitral')] }))
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(), { extraction_mode: 'standard', model_id: model!.id })))
        expect(done.status).toBe('completed')
        expect(String(chats(ai)[0]!.body.model)).toStartWith('other-model-')
        expect(done.steps.some((s) => s.message.startsWith('Using the extraction model Other (other-model-'))).toBe(true)
      })

      it('an AI answer with no usable question fails the job with a clear error', async () => {
        ai.reset()
        ai.reply(() => ({ questions: [q('Only one option?', ['Yes'], 'Yes')] }))
        const payload = body(await section(), { extraction_mode: 'standard' })
        const done = await job(t, moderator, await createQuiz(t, moderator, payload))
        expect(done.status).toBe('failed')
        expect(done.error).toContain('No usable questions found')
        expect(await t.db.sql`select id from quiz.quizzes where title = ${payload.title}`).toHaveLength(0)
      })

      it('an AI gateway failure fails the job with the chunk and the reason', async () => {
        ai.reset()
        ai.failNext(500, 5)
        const done = await job(t, moderator, await createQuiz(t, moderator, body(await section(), { extraction_mode: 'standard' })))
        expect(done.status).toBe('failed')
        expect(done.error).toContain('AI extraction failed on chunk 1/1')
        expect(done.error).toContain('The AI service answered with an error')
        ai.reset()
      })
    })

    describe('GET /api/quizzes/jobs and GET /api/quizzes/job/{job_id}', () => {
      it('lists the caller\'s extraction jobs only, newest first, with last_step cut to 80 characters', async () => {
        const longName = `Section ${'with a very long name '.repeat(6)}`
        const empty = await sectionOver(t, otherModerator, ['   ', ''], { name: longName })
        const failed = await createQuiz(t, otherModerator, body(empty))
        const completed = await createQuiz(t, otherModerator, body(knownSection))
        // Document-processing jobs of the same owner are not extraction jobs, and more of them, newer, hide none of ours.
        await t.db.sql`
          insert into core.jobs (id, kind, service, owner_id, title, status, created_at)
          select gen_random_uuid(), 'quiz.document', 'quiz', ${otherModerator.id}, 'doc', 'completed', now() + n * interval '1 second'
          from generate_series(1, 150) as n`
        const res = await t.get(`${API}/quizzes/jobs`, { token: otherModerator.token })
        expect(res.status).toBe(200)
        const list = (await res.json()) as ListItem[]
        expect(list.map((j) => j.job_id)).toEqual([completed, failed])
        const [c, f] = list
        expect(Object.keys(c!).sort()).toEqual(['job_id', 'last_step', 'quiz_id', 'status', 'steps_count', 'title'])
        expect(c).toMatchObject({ status: 'completed', quiz_id: expect.any(Number), steps_count: expect.any(Number) })
        expect(c!.last_step).toStartWith('Quiz ')
        expect(f).toMatchObject({ status: 'failed', quiz_id: null, steps_count: 1 })
        const full = (await job(t, otherModerator, failed)).steps.at(-1)!.message
        expect(full.length).toBeGreaterThan(LAST_STEP_MAX)
        expect(f!.last_step).toBe(full.slice(0, LAST_STEP_MAX))
        expect((await job(t, otherModerator, failed)).error).toContain('no text')
        // A plain user sees their (empty) list, never another's jobs.
        expect(await (await t.get(`${API}/quizzes/jobs`, { token: user.token })).json()).toEqual([])
      })

      it('job detail: steps, quiz_id when completed, error when failed; moderators only; 404 unknown, 422 malformed', async () => {
        const jobId = await createQuiz(t, moderator, body(knownSection))
        const detail = await job(t, otherModerator, jobId)
        expect(detail).toMatchObject({ job_id: jobId, status: 'completed', quiz_id: expect.any(Number) })
        expect(detail.steps.every((s) => typeof s.message === 'string')).toBe(true)
        expect('error' in detail).toBe(false)
        await expectDetail(await t.get(`${API}/quizzes/job/${jobId}`, { token: user.token }), 403)
        await expectDetail(await t.get(`${API}/quizzes/job/${crypto.randomUUID()}`, { token: moderator.token }), 404)
        expect((await t.get(`${API}/quizzes/job/not-a-uuid`, { token: moderator.token })).status).toBe(422)
        const [other] = await t.db.sql<{ id: string }>`insert into core.jobs (id, kind, service, owner_id, title) values (${crypto.randomUUID()}, 'quiz.document', 'quiz', ${moderator.id}, 'doc') returning id`
        await expectDetail(await t.get(`${API}/quizzes/job/${other!.id}`, { token: moderator.token }), 404)
      })
    })

    describe('POST /api/quizzes/job/{job_id}/cancel on finished jobs', () => {
      it('403 for anyone but the owner (admins too), 400 once completed or failed, 404 unknown', async () => {
        const completed = await createQuiz(t, moderator, body(knownSection))
        await expectDetail(await t.post(`${API}/quizzes/job/${completed}/cancel`, undefined, { token: otherModerator.token }), 403)
        await expectDetail(await t.post(`${API}/quizzes/job/${completed}/cancel`, undefined, { token: admin.token }), 403)
        expect(await expectDetail(await t.post(`${API}/quizzes/job/${completed}/cancel`, undefined, { token: moderator.token }), 400)).toContain('not running')
        const failed = await createQuiz(t, moderator, body(await sectionOver(t, moderator, ['no questions here', ''])))
        await expectDetail(await t.post(`${API}/quizzes/job/${failed}/cancel`, undefined, { token: moderator.token }), 400)
        await expectDetail(await t.post(`${API}/quizzes/job/${crypto.randomUUID()}/cancel`, undefined, { token: moderator.token }), 404)
        expect((await job(t, moderator, completed)).status).toBe('completed')
      })
    })
  })

  describe(`quiz extraction: cancelling pending and running jobs [${target}]`, () => {
    let ai: AiServer
    let t: TestApp
    let moderator: Account
    let sectionId: number
    beforeAll(async () => {
      ai = await startAiServer()
      // WORKERS=1 but the workers are not started: jobs stay pending until the test runs one with runOnce().
      t = await startTestApp({ target, env: { ...ai.env, WORKERS: '1' } })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
      sectionId = await sectionOver(t, moderator, ['1. Which valve? A) Tricuspid B) Mitral', 'Answer: B'])
    })
    afterAll(async () => {
      await t?.close()
      await ai?.close()
    })

    it('a pending job is cancelled and never runs', async () => {
      const payload = body(sectionId)
      const jobId = await createQuiz(t, moderator, payload)
      expect((await job(t, moderator, jobId)).status).toBe('pending')
      expect(await (await t.post(`${API}/quizzes/job/${jobId}/cancel`, undefined, { token: moderator.token })).json()).toEqual({ status: 'cancelled' })
      expect(await t.booted.core.jobs.runOnce()).toBe(false)
      expect((await job(t, moderator, jobId)).status).toBe('cancelled')
      await expectDetail(await t.post(`${API}/quizzes/job/${jobId}/cancel`, undefined, { token: moderator.token }), 400)
      expect(await t.db.sql`select id from quiz.quizzes where title = ${payload.title}`).toHaveLength(0)
    })

    it('a running job stops at once (its AI call aborted) and leaves no quiz and no questions', async () => {
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      ai.reply(async () => {
        await held
        return { questions: [q('Which valve?', ['Tricuspid', 'Mitral'], 'Mitral')] }
      })
      const [{ n: questionsBefore }] = (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions`) as [{ n: number }]
      const payload = body(sectionId, { extraction_mode: 'standard' })
      const jobId = await createQuiz(t, moderator, payload)
      const worker = t.booted.core.jobs.runOnce()
      try {
        const until = Date.now() + 10_000
        while (chats(ai).length === 0 && Date.now() < until) await Bun.sleep(20)
        const running = await job(t, moderator, jobId)
        expect(running.status).toBe('running')
        expect(running.steps.at(-1)!.message).toContain('extracting questions')
        const res = await t.post(`${API}/quizzes/job/${jobId}/cancel`, undefined, { token: moderator.token })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ status: 'cancelled' })
        expect(await worker).toBe(true)
      } finally {
        release()
      }
      const after = await job(t, moderator, jobId)
      expect(after.status).toBe('cancelled')
      expect(after.quiz_id).toBeUndefined()
      expect(await t.db.sql`select id from quiz.quizzes where title = ${payload.title}`).toHaveLength(0)
      const [{ n: questionsAfter }] = (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions`) as [{ n: number }]
      expect(questionsAfter).toBe(questionsBefore)
      const [row] = await t.db.sql<{ kind: string }>`select kind from core.jobs where id = ${jobId}`
      expect(row!.kind).toBe(EXTRACTION_JOB_KIND)
    })
  })

  describe(`quiz extraction with no AI configured [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let sectionId: number
    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
      sectionId = await sectionOver(t, moderator, ['1. Which valve separates the left atrium from the left ventricle?', 'A) Tricuspid valve\nB) Mitral valve\nAnswer: B'])
    })
    afterAll(() => t?.close())

    it('every AI mode fails its job with a clear error; regex still builds the quiz', async () => {
      for (const mode of ['standard', 'questions_only', 'two_step', 'ai_decide', 'generate']) {
        const done = await job(t, moderator, await createQuiz(t, moderator, body(sectionId, { extraction_mode: mode })))
        expect(done.status).toBe('failed')
        expect(done.error).toContain('No extraction model is configured')
        expect(done.error).toContain('regex')
      }
      const done = await job(t, moderator, await createQuiz(t, moderator, body(sectionId)))
      expect(done.status).toBe('completed')
      expect(shape(await quizQuestions(t, done.quiz_id!))).toEqual([q('Which valve separates the left atrium from the left ventricle?', ['Tricuspid valve', 'Mitral valve'], 'Mitral valve')])
    })
  })
}

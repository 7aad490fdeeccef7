// Spec 1, Quizzes: extraction jobs that turn a section's pages into a quiz. POST /api/quizzes/ checks its input
// and enqueues a job; the job reads the pages, extracts questions (regex or an AI mode), then writes the quiz and
// its questions in ONE transaction, so a cancelled or failed job leaves nothing behind, and indexes the questions.
// The bank holds one copy of a question: an extracted question identical to a bank question (same fingerprint:
// text and options, ignoring case, spacing and option order) is referenced, not inserted again, and only the new
// ones are embedded.
// The save records the job's result in that transaction: a run reclaimed after a crash finds it and only indexes
// the saved quiz again (an upsert by question id), so a crash never makes a second quiz.
import { HttpError } from '../../../src/core/errors'
import {
  defineJob, JobCancelled, type GiveUpContext, type GiveUpOutcome, type JobContext, type JobHandler, type JobRecord,
} from '../../../src/core/jobs'
import type { Db } from '../../../src/core/db'
import type { Core } from '../../../src/plugin'
import type { DocumentStatus, SectionResponse } from '../models/documents'
import {
  DEFAULT_EXTRACTION_MODE, EXTRACTION_JOB_KIND, LAST_STEP_MAX, type CreateQuizBody, type ExtractedQuestion, type ExtractionMode,
} from '../models/extraction'
import { checkQuestion, chunkPages, decideMode, questionsFromChunk, type AiRun, type SectionPage } from './ai-extract'
import { resolveModel } from './ai-models'
import { indexQuestions, optionsOf, type IndexableQuestion } from './question-index'
import { extractQuestionsByRegex, PAGE_BREAK } from './regex-extract'

/** Jobs shown by GET /api/quizzes/jobs: the caller's most recent extraction jobs. */
export const RECENT_JOBS = 20
const SERVICE = 'quiz'
/** The advisory lock every extraction's save takes, so two saves never add one new question twice. */
const SAVE_LOCK = 'quiz.extraction.save'

export interface ExtractionPayload {
  section_id: number
  title: string
  mode: 'timed' | 'learning'
  time_limit_minutes: number | null
  model_id: number | null
  question_category_id: number | null
  extraction_mode: ExtractionMode
}

/** A section with the status of its document (extraction needs a ready one). */
type SectionWithStatus = SectionResponse & { document_status: DocumentStatus }

async function findSection(core: Core, sectionId: number): Promise<SectionWithStatus | null> {
  const [row] = await core.db.sql<SectionWithStatus>`
    select s.id, s.name, s.start_page, s.end_page, s.document_id, d.status as document_status
    from quiz.sections s join quiz.documents d on d.id = s.document_id
    where s.id = ${sectionId}`
  return row ?? null
}

/** Checks the request and enqueues the job. With WORKERS=0 the job has run (and finished) when this returns. */
export async function startExtraction(core: Core, userId: number, body: CreateQuizBody): Promise<{ job_id: string; status: 'pending' }> {
  const section = await findSection(core, body.section_id)
  if (!section) throw HttpError.notFound('section_not_found', 'Section not found')
  if (section.document_status !== 'ready') {
    throw HttpError.badRequest('document_not_ready', `The section's document is not ready (status: ${section.document_status})`)
  }
  if (body.question_category_id != null) {
    const [category] = await core.db.sql`select id from quiz.question_categories where id = ${body.question_category_id}`
    if (!category) throw HttpError.notFound('question_category_not_found', 'Question category not found')
  }
  const extractionMode = body.extraction_mode ?? DEFAULT_EXTRACTION_MODE
  // A named model must exist, be for extraction and be active (404/400 now, not a failed job later). With no
  // model named, the job picks the default and fails with a clear error when there is none.
  if (extractionMode !== 'regex' && body.model_id != null) await resolveModel(core, 'extraction', body.model_id)
  const payload: ExtractionPayload = {
    section_id: section.id,
    title: body.title.trim(),
    mode: body.mode,
    time_limit_minutes: body.time_limit_minutes ?? null,
    model_id: body.model_id ?? null,
    question_category_id: body.question_category_id ?? null,
    extraction_mode: extractionMode,
  }
  const job = await core.jobs.enqueue(EXTRACTION_JOB_KIND, payload, { service: SERVICE, ownerId: userId, title: payload.title })
  // spec 1: the answer is `pending` even when no worker ran the job inline; clients poll the job.
  return { job_id: job.id, status: 'pending' }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
const pageRange = (a: number, b: number) => (a === b ? `page ${a}` : `pages ${a}-${b}`)

async function extractWithAi(core: Core, ctx: JobContext<ExtractionPayload>, pages: SectionPage[]): Promise<ExtractedQuestion[]> {
  const p = ctx.payload
  let target
  try {
    target = await resolveModel(core, 'extraction', p.model_id)
  } catch (err) {
    if (err instanceof HttpError && err.status === 503) {
      throw new Error(`No extraction model is configured: an admin can add one under AI models (task extraction), or the server can set ` +
        `AI_BASE_URL and AI_DEFAULT_MODEL. Extraction mode "regex" works without AI.`)
    }
    throw err
  }
  await ctx.step(`Using the extraction model ${target.name} (${target.model})`)
  const run: AiRun = { core, target, signal: ctx.signal, step: (m) => ctx.step(m) }
  const chunks = chunkPages(pages)
  const failed = (label: string, err: unknown) => {
    if (err instanceof JobCancelled || ctx.signal.aborted) return err
    return new Error(`AI extraction failed on ${label}: ${err instanceof Error ? err.message : String(err)}`)
  }
  let mode: 'standard' | 'questions_only' | 'two_step' | 'generate'
  if (p.extraction_mode === 'ai_decide') {
    await ctx.step('Asking the AI whether to extract the questions in the text or to write new ones')
    try {
      const decision = await decideMode(run, chunks[0]!.text)
      mode = decision.mode
      await ctx.step(`The AI chose to ${mode === 'generate' ? 'write new questions from the content' : 'extract the questions in the text'}` +
        (decision.reason ? `: ${decision.reason}` : ''))
    } catch (err) {
      throw failed('the decision', err)
    }
  } else mode = p.extraction_mode as typeof mode

  const questions: ExtractedQuestion[] = []
  const seen = new Set<string>()
  for (const [i, chunk] of chunks.entries()) {
    const label = `chunk ${i + 1}/${chunks.length} (${pageRange(chunk.first_page, chunk.last_page)})`
    await ctx.step(`${label[0]!.toUpperCase()}${label.slice(1)}: ${mode === 'generate' ? 'writing questions' : 'extracting questions'}`)
    let raw
    try {
      raw = await questionsFromChunk(run, mode, chunk, label)
    } catch (err) {
      throw failed(label, err)
    }
    let kept = 0
    let repeated = 0
    const reasons = new Map<string, number>()
    for (const candidate of raw) {
      const checked = checkQuestion(candidate)
      if (!checked.ok) {
        reasons.set(checked.reason, (reasons.get(checked.reason) ?? 0) + 1)
        continue
      }
      const key = checked.question.question_text.toLowerCase()
      if (seen.has(key)) {
        repeated++
        continue
      }
      seen.add(key)
      questions.push(checked.question)
      kept++
    }
    const dropped = [...reasons.values()].reduce((a, b) => a + b, 0)
    const detail = [...reasons].map(([reason, n]) => `${n} ${reason}`).join(', ')
    await ctx.step(`Chunk ${i + 1}/${chunks.length}: ${plural(kept, 'question')} kept` +
      (dropped ? `, ${dropped} invalid dropped (${detail})` : '') + (repeated ? `, ${repeated} repeated skipped` : ''))
  }
  return questions
}

/** What the save records on the job: the quiz it made. */
type ExtractionResult = { quiz_id: number }
const savedQuizOf = (recorded: unknown): number | null => {
  const id = (recorded as { quiz_id?: unknown } | null)?.quiz_id
  return typeof id === 'number' ? id : null
}

async function runExtraction(core: Core, ctx: JobContext<ExtractionPayload>): Promise<ExtractionResult> {
  const p = ctx.payload
  // An earlier run saved the quiz and stopped before the end: only what follows the save is done again.
  const savedQuiz = savedQuizOf(ctx.recorded)
  if (savedQuiz !== null) return resumeAfterSave(core, ctx, savedQuiz)
  const section = await findSection(core, p.section_id)
  if (!section) throw new Error('The section no longer exists')
  await ctx.step(`Reading ${pageRange(section.start_page, section.end_page)} of section "${section.name}"`)
  const pages = await core.db.sql<SectionPage>`
    select page_number, text from quiz.document_pages
    where document_id = ${section.document_id} and page_number between ${section.start_page} and ${section.end_page}
    order by page_number`
  const characters = pages.reduce((n, pg) => n + pg.text.trim().length, 0)
  if (characters === 0) throw new Error(`Section "${section.name}" has no text to extract from (scanned pages without a text layer?)`)

  let questions: ExtractedQuestion[]
  if (p.extraction_mode === 'regex') {
    await ctx.step(`Matching question patterns in ${plural(pages.length, 'page')} (${characters.toLocaleString('en')} characters), no AI`)
    const result = extractQuestionsByRegex(pages.map((pg) => pg.text).join(`\n${PAGE_BREAK}`))
    questions = result.questions.map(({ number: _n, ...q }) => q)
    await ctx.step(`Found ${plural(questions.length, 'question')}` +
      (result.skipped ? `; ${result.skipped} numbered block${result.skipped === 1 ? '' : 's'} skipped (missing options or answer)` : ''))
  } else {
    await ctx.step(`Read ${plural(pages.length, 'page')} (${characters.toLocaleString('en')} characters)`)
    questions = await extractWithAi(core, ctx, pages)
  }
  if (questions.length === 0) {
    throw new Error(p.extraction_mode === 'regex'
      ? `No questions found in section "${section.name}": regex mode needs numbered questions with lettered options and an answer line or an answer key`
      : `No usable questions found in section "${section.name}"`)
  }

  // What the save will do, said before it (no step is written inside the transaction: a step needs a connection of
  // its own, and waiting for one while holding the save lock could stall every save). The save plans again under its
  // lock; a save that ended otherwise (another one came between) says so after the commit.
  const preview = saveStep(await planSave(core.db, questions, false))
  await ctx.step(preview)
  // Last look before writing: a cancel that came during extraction leaves no quiz at all.
  await ctx.throwIfCancelled()
  const saved = await core.db.transaction(async (tx) => {
    // One save at a time: two extractions of one new question must not both add it to the bank.
    await tx.sql`select pg_advisory_xact_lock(hashtext(${SAVE_LOCK}))`
    const plan = await planSave(tx, questions, true)
    const [quiz] = await tx.sql<{ id: number }>`
      insert into quiz.quizzes (section_id, user_id, title, mode, time_limit_minutes)
      values (${p.section_id}, ${ctx.ownerId}, ${p.title}, ${p.mode}, ${p.time_limit_minutes})
      returning id`
    // From here a cancel is refused; one that came first rolls this transaction back.
    await ctx.recordResult(tx, { quiz_id: quiz!.id })
    const fresh = plan.fresh.map((i) => questions[i]!)
    const inserted = fresh.length === 0 ? [] : await tx.sql<{ id: number; fingerprint: string }>`
      insert into quiz.questions (question_text, options, correct_answer, explanation, question_category_id, source_quiz_id, created_by)
      select e.q ->> 'question_text', e.q -> 'options', e.q ->> 'correct_answer', e.q ->> 'explanation',
        ${p.question_category_id}, ${quiz!.id}, ${ctx.ownerId}
      from jsonb_array_elements(${{ value: fresh }}::jsonb -> 'value') with ordinality as e(q, n)
      order by e.n
      returning id, fingerprint`
    const idOf = new Map(plan.existing)
    for (const row of inserted) idOf.set(row.fingerprint, row.id)
    // The quiz's questions in extracted order, each once (a repeat keeps its first place).
    const ids = [...new Set(plan.fingerprints.map((fp) => idOf.get(fp)!))]
    await tx.sql`
      insert into quiz.quiz_questions (quiz_id, question_id, position)
      select ${quiz!.id}, e.id::int, e.n from jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value') with ordinality as e(id, n)`
    // A reused question keeps its text and any category a moderator gave it; an uncategorized one takes the category
    // this extraction asked for, so every question of the new quiz is in it.
    const reusedIds = [...new Set(plan.existing.values())]
    if (p.question_category_id != null && reusedIds.length > 0) {
      await tx.sql`
        update quiz.questions set question_category_id = ${p.question_category_id}, updated_at = now()
        where question_category_id is null and id in (select jsonb_array_elements_text(${{ value: reusedIds }}::jsonb -> 'value')::int)`
    }
    const toIndex: IndexableQuestion[] = fresh.map((q, i) => ({
      id: idOf.get(plan.fingerprints[plan.fresh[i]!]!)!, question_text: q.question_text, options: q.options,
    }))
    return { quizId: quiz!.id, count: ids.length, toIndex, step: saveStep(plan) }
  })
  if (saved.step !== preview) await afterSaveStep(ctx, saved.step.replace(/^Saving/, 'Saved'))
  // Only the new questions are embedded: a reused one is in the index already.
  return indexSavedQuiz(core, ctx, saved.quizId, saved.toIndex, saved.count)
}

/** How the extracted questions map onto the bank: what is reused, what is new, what repeats within the extraction. */
interface SavePlan {
  /** Each extracted question's fingerprint, in extracted order. */
  fingerprints: string[]
  /** Fingerprint -> the bank question it reuses (the lowest id of those with that fingerprint). */
  existing: Map<string, number>
  /** Indexes (into the extracted list) of the questions to insert: the first of each new fingerprint. */
  fresh: number[]
  /** Extracted questions that are already in the bank. */
  reused: number
  /** Extracted questions identical to an earlier one of the same extraction (kept once). */
  repeated: number
}

/**
 * Fingerprints the extracted questions the way the bank's generated column does (quiz.question_fingerprint: text
 * and options trimmed, lower-cased, white space collapsed, options in any order) and finds the bank questions they
 * match. With `lock` (inside the save) the matched rows are locked (for share) so none is deleted before the quiz
 * links to it.
 */
async function planSave(db: Db, questions: ExtractedQuestion[], lock: boolean): Promise<SavePlan> {
  const rows = await db.sql<{ n: number; fingerprint: string }>`
    select e.n::int as n, quiz.question_fingerprint(e.q ->> 'question_text', e.q -> 'options') as fingerprint
    from jsonb_array_elements(${{ value: questions }}::jsonb -> 'value') with ordinality as e(q, n)
    order by e.n`
  const fingerprints = rows.map((r) => r.fingerprint)
  const wanted = { value: [...new Set(fingerprints)] }
  const matches = lock
    ? await db.sql<{ id: number; fingerprint: string }>`
        select id, fingerprint from quiz.questions
        where fingerprint in (select jsonb_array_elements_text(${wanted}::jsonb -> 'value'))
        order by id
        for share`
    : await db.sql<{ id: number; fingerprint: string }>`
        select id, fingerprint from quiz.questions
        where fingerprint in (select jsonb_array_elements_text(${wanted}::jsonb -> 'value'))
        order by id`
  const existing = new Map<string, number>()
  for (const m of matches) if (!existing.has(m.fingerprint)) existing.set(m.fingerprint, m.id)
  const plan: SavePlan = { fingerprints, existing, fresh: [], reused: 0, repeated: 0 }
  const seen = new Set<string>()
  fingerprints.forEach((fp, i) => {
    if (seen.has(fp)) plan.repeated++
    else if (existing.has(fp)) plan.reused++
    else plan.fresh.push(i)
    seen.add(fp)
  })
  return plan
}

function saveStep(plan: SavePlan): string {
  const total = plan.fresh.length + plan.reused
  const parts = plan.reused === 0 ? [`all new`] : [`${plan.fresh.length} new`, `${plan.reused} already in the question bank (reused)`]
  const repeats = plan.repeated === 0 ? ''
    : `; ${plan.repeated} extracted ${plan.repeated === 1 ? 'question repeats' : 'questions repeat'} an earlier one and ${plan.repeated === 1 ? 'is' : 'are'} kept once`
  return `Saving the quiz with ${plural(total, 'question')}: ${parts.join(', ')}${repeats}`
}

/** A reclaimed run of a job whose quiz is saved: the quiz's questions as stored, indexed again. */
async function resumeAfterSave(core: Core, ctx: JobContext<ExtractionPayload>, quizId: number): Promise<ExtractionResult> {
  await afterSaveStep(ctx, `Resuming after a restart: quiz ${quizId} was already saved, so only its search index is rebuilt`)
  const questions = await core.db.sql<IndexableQuestion>`
    select q.id, q.question_text, q.options from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
    where qq.quiz_id = ${quizId} order by qq.position`
  return indexSavedQuiz(core, ctx, quizId, questions.map((q) => ({ ...q, options: optionsOf(q.options) })), questions.length)
}

// The quiz exists once saved: a cancel arriving from then on cannot undo it, so the steps after the save go on.
async function afterSaveStep(ctx: JobContext<ExtractionPayload>, message: string) {
  try {
    await ctx.step(message)
  } catch (err) {
    if (!(err instanceof JobCancelled)) throw err
  }
}

/**
 * The steps after the save; safe to repeat (indexing upserts by question id and replaces a question's near-duplicate
 * pairs), so a reclaimed run may redo them, and may index reused questions again.
 */
async function indexSavedQuiz(
  core: Core, ctx: JobContext<ExtractionPayload>, quizId: number, questions: IndexableQuestion[], total: number,
): Promise<ExtractionResult> {
  if (questions.length > 0) await afterSaveStep(ctx, `Indexing ${plural(questions.length, questions.length === total ? 'question' : 'new question')} for search`)
  try {
    await indexQuestions(core, questions)
  } catch (err) {
    // The database is the source of truth; the admin's regenerate job rebuilds the index.
    core.log.warn({ err, quiz: quizId }, 'indexing extracted questions failed')
    await afterSaveStep(ctx, 'Search index not updated (an admin can regenerate embeddings)')
  }
  await afterSaveStep(ctx, `Quiz ${quizId} created with ${plural(total, 'question')}`)
  return { quiz_id: quizId }
}

/** The job gave up: say what became of the quiz, in words its owner can act on. */
async function giveUpExtraction(job: GiveUpContext<ExtractionPayload>): Promise<GiveUpOutcome | void> {
  // A handler that threw already said why (its error is the job's); nothing was saved unless it recorded a quiz.
  if (job.reason.kind !== 'abandoned') return
  const quizId = savedQuizOf(job.recorded)
  return {
    message: quizId !== null
      ? `Quiz ${quizId} was saved, but indexing its questions for search stopped after ${job.reason.attempts} attempts: the server ` +
        'running it stopped each time. The quiz can be used; an admin can regenerate embeddings to make its questions searchable'
      : `Extraction stopped after ${job.reason.attempts} attempts: the server running it stopped each time, and no quiz was saved. ` +
        'Start the extraction again; if it keeps happening, try a shorter section',
  }
}

export const extractionJobs = (core: Core): Record<string, JobHandler> => ({
  [EXTRACTION_JOB_KIND]: defineJob((ctx: JobContext<ExtractionPayload>) => runExtraction(core, ctx), {
    onGiveUp: (_tx, job) => giveUpExtraction(job),
  }),
})

const quizIdOf = (job: JobRecord): number | null => {
  const id = (job.result as { quiz_id?: unknown } | null)?.quiz_id
  return job.status === 'completed' && typeof id === 'number' ? id : null
}

/** GET /api/quizzes/jobs: the caller's recent extraction jobs, newest first. */
export async function listExtractionJobs(core: Core, userId: number) {
  const jobs = await core.jobs.listForOwner(SERVICE, userId, RECENT_JOBS, EXTRACTION_JOB_KIND)
  return jobs.map((j) => ({
    job_id: j.id,
    title: j.title,
    status: j.status,
    steps_count: j.steps.length,
    last_step: (j.steps[j.steps.length - 1]?.message ?? '').slice(0, LAST_STEP_MAX),
    quiz_id: quizIdOf(j),
  }))
}

async function findJob(core: Core, jobId: string): Promise<JobRecord> {
  const job = await core.jobs.get(jobId)
  if (!job || job.kind !== EXTRACTION_JOB_KIND) throw HttpError.notFound('job_not_found', 'Job not found')
  return job
}

/** GET /api/quizzes/job/{job_id}: any extraction job, for moderators. */
export async function getExtractionJob(core: Core, jobId: string) {
  const job = await findJob(core, jobId)
  const quizId = quizIdOf(job)
  return {
    job_id: job.id,
    title: job.title,
    status: job.status,
    steps: job.steps,
    ...(quizId !== null ? { quiz_id: quizId } : {}),
    ...(job.status === 'failed' ? { error: job.error ?? 'Extraction failed' } : {}),
  }
}

/**
 * POST /api/quizzes/job/{job_id}/cancel: the owner only (403 for anyone else, admins included, as spec 1's table
 * says). A pending job counts as running here: it has not started, and cancelling it is what its owner expects.
 */
export async function cancelExtractionJob(core: Core, userId: number, jobId: string): Promise<{ status: 'cancelled' }> {
  const job = await findJob(core, jobId)
  if (job.owner_id !== userId) throw HttpError.forbidden('not_job_owner', 'Not your job')
  if (job.status !== 'pending' && job.status !== 'running') throw HttpError.badRequest('job_not_running', `The job is not running (status: ${job.status})`)
  const outcome = await core.jobs.cancel(job.id)
  if (outcome !== 'cancelled') throw HttpError.badRequest('job_not_running', 'The job is not running: its quiz is already saved')
  return { status: 'cancelled' }
}

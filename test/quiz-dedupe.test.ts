// Spec 1, the shared question bank without copies: extraction reuses a bank question identical to an extracted one
// (same text and options, whatever their case, spacing or option order) instead of adding it again, and indexing
// records near-duplicates (embeddings with cosine >= 0.95) for moderators, through the real app on each database
// target. Quizzes are made by extraction in `regex` mode, which needs no AI.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import {
  indexQuestions, NEAR_DUPLICATE_MIN, nearDuplicatesOf, QUESTIONS_COLLECTION, questionText, quizEmbedder,
} from '../plugins/quiz/services/question-index'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, questionsText, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface JobBody { status: string; steps: Array<{ message: string }>; quiz_id?: number }
interface ItemBody { id: number; question_text: string; options: string[]; correct_answer: string }
interface Pair { low_id: number; high_id: number; similarity: number }

/** Page text the regex extractor reads, one numbered question per entry (answer: the option given, by letter). */
const page = (questions: Array<{ text: string; options: string[]; answer: number }>) =>
  questions.map((q, i) => [`${i + 1}. ${q.text}`, ...q.options.map((o, k) => `${String.fromCharCode(65 + k)}) ${o}`),
    `Answer: ${String.fromCharCode(65 + q.answer)}`].join('\n')).join('\n\n')

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0)

for (const target of databaseTargets()) {
  describe(`question bank without copies [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account
    let seq = 0
    const tag = () => `d${++seq}${crypto.randomUUID().slice(0, 6)}`

    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'mod')
    })
    afterAll(() => t?.close())

    const bankCount = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions`)[0]!.n
    const indexCount = () => t.booted.core.vectors.count(QUESTIONS_COLLECTION)
    const links = (quizId: number) => t.db.sql<{ question_id: number; position: number }>`
      select question_id, position from quiz.quiz_questions where quiz_id = ${quizId} order by position`
    const idsOf = async (quizId: number) => (await links(quizId)).map((l) => l.question_id)
    const steps = async (jobId: string) => {
      const res = await t.get(`${API}/quizzes/job/${jobId}`, { token: moderator.token })
      expect(res.status).toBe(200)
      return ((await res.json()) as JobBody).steps.map((s) => s.message)
    }
    const items = async (quizId: number) => {
      const res = await t.get(`${API}/quizzes/${quizId}/questions`, { token: moderator.token })
      expect(res.status).toBe(200)
      return (await res.json()) as ItemBody[]
    }
    /** A bank question written directly, as another path (an import, an old copy) might have left it. */
    const insertQuestion = async (question_text: string, options: string[], categoryId: number | null = null) => {
      const [row] = await t.db.sql<{ id: number }>`
        insert into quiz.questions (question_text, options, correct_answer, question_category_id)
        values (${question_text}, ${{ value: options }}::jsonb -> 'value', ${options[0]!}, ${categoryId}) returning id`
      return row!.id
    }
    const category = async (name: string) =>
      (await t.db.sql<{ id: number }>`insert into quiz.question_categories (name) values (${`${name} ${crypto.randomUUID()}`}) returning id`)[0]!.id
    const pairsOf = (ids: number[]) => t.db.sql<Pair>`
      select low_id, high_id, similarity from quiz.near_duplicates
      where low_id in (select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int)
         or high_id in (select jsonb_array_elements_text(${{ value: ids }}::jsonb -> 'value')::int)
      order by low_id, high_id`

    describe('extraction reuses identical bank questions', () => {
      it('the same text extracted twice: the second quiz references the same questions, the bank and index do not grow, a step says so', async () => {
        const text = questionsText(tag(), 3)
        const first = await makeRegexQuiz(t, moderator, { text })
        expect(await steps(first.jobId)).toContain('Saving the quiz with 3 questions: all new')
        const firstIds = await idsOf(first.quizId)
        expect(firstIds).toHaveLength(3)
        const bank = await bankCount()
        const indexed = await indexCount()

        const second = await makeRegexQuiz(t, moderator, { text })
        expect(second.quizId).not.toBe(first.quizId)
        expect(await links(second.quizId)).toEqual(firstIds.map((question_id, i) => ({ question_id, position: i + 1 })))
        expect(await bankCount()).toBe(bank)
        expect(await indexCount()).toBe(indexed)
        const said = await steps(second.jobId)
        expect(said).toContain('Saving the quiz with 3 questions: 0 new, 3 already in the question bank (reused)')
        expect(said.some((s) => s.startsWith('Indexing'))).toBe(false)
        expect(said.at(-1)).toBe(`Quiz ${second.quizId} created with 3 questions`)
        // The reused questions still name the quiz they were first extracted for.
        const sources = await t.db.sql<{ source_quiz_id: number }>`
          select source_quiz_id from quiz.questions where id in (select question_id from quiz.quiz_questions where quiz_id = ${second.quizId})`
        expect(sources.map((r) => r.source_quiz_id)).toEqual([first.quizId, first.quizId, first.quizId])
        const quiz = await t.get(`${API}/quizzes/${second.quizId}`, { token: moderator.token })
        expect(((await quiz.json()) as { questions_count: number }).questions_count).toBe(3)
      })

      it('case, spacing and option order do not make a question new; a changed option does', async () => {
        const k = tag()
        const stored = await insertQuestion(`  WHICH   valve ${k}\tcloses first?  `, ['  MITRAL valve', 'Aortic   valve ', 'tricuspid VALVE'])
        const bank = await bankCount()
        const same = await makeRegexQuiz(t, moderator, {
          text: page([{ text: `Which valve ${k} closes first?`, options: ['Tricuspid valve', 'Aortic valve', 'Mitral valve'], answer: 2 }]),
        })
        expect(await idsOf(same.quizId)).toEqual([stored])
        expect(await bankCount()).toBe(bank)
        // Reused as it is: its text and options are not rewritten by the extraction.
        const [row] = await t.db.sql<{ question_text: string; options: string[] }>`select question_text, options from quiz.questions where id = ${stored}`
        expect(row).toEqual({ question_text: `  WHICH   valve ${k}\tcloses first?  `, options: ['  MITRAL valve', 'Aortic   valve ', 'tricuspid VALVE'] })

        const changed = await makeRegexQuiz(t, moderator, {
          text: page([{ text: `Which valve ${k} closes first?`, options: ['Pulmonary valve', 'Aortic valve', 'Mitral valve'], answer: 2 }]),
        })
        const [fresh] = await idsOf(changed.quizId)
        expect(fresh).not.toBe(stored)
        expect(await bankCount()).toBe(bank + 1)
        expect(await steps(changed.jobId)).toContain('Saving the quiz with 1 question: all new')
      })

      it('the lowest id wins among identical bank questions', async () => {
        const k = tag()
        const low = await insertQuestion(`Twin ${k}?`, ['Yes', 'No'])
        const high = await insertQuestion(`twin ${k}?`, ['no', 'yes'])
        expect(high).toBeGreaterThan(low)
        const quiz = await makeRegexQuiz(t, moderator, { text: page([{ text: `Twin ${k}?`, options: ['Yes', 'No'], answer: 0 }]) })
        expect(await idsOf(quiz.quizId)).toEqual([low])
      })

      it('identical questions within one extraction become one; positions follow the extracted order, reused ones in place', async () => {
        const k = tag()
        const existing = await makeRegexQuiz(t, moderator, { text: page([{ text: `Existing ${k}?`, options: ['One', 'Two'], answer: 0 }]) })
        const [existingId] = await idsOf(existing.quizId)
        const bank = await bankCount()
        const quiz = await makeRegexQuiz(t, moderator, {
          text: page([
            { text: `First new ${k}?`, options: ['Red', 'Blue'], answer: 1 },
            { text: `Existing ${k}?`, options: ['One', 'Two'], answer: 0 },
            { text: `Second new ${k}?`, options: ['Up', 'Down'], answer: 0 },
            { text: `FIRST new ${k}?`, options: ['blue', 'red'], answer: 0 },
          ]),
        })
        const said = await steps(quiz.jobId)
        expect(said).toContain('Saving the quiz with 3 questions: 2 new, 1 already in the question bank (reused); ' +
          '1 extracted question repeats an earlier one and is kept once')
        expect(said).toContain('Indexing 2 new questions for search')
        expect(await bankCount()).toBe(bank + 2)
        const listed = await items(quiz.quizId)
        expect(listed.map((q) => q.question_text)).toEqual([`First new ${k}?`, `Existing ${k}?`, `Second new ${k}?`])
        expect(listed.map((q) => q.id)[1]).toBe(existingId!)
        // The reused question (the lowest id) sits second: positions are the extracted order, not id order.
        expect(existingId!).toBeLessThan(listed[0]!.id)
        expect((await links(quiz.quizId)).map((l) => l.position)).toEqual([1, 2, 3])
        const [first] = await t.db.sql<{ correct_answer: string; source_quiz_id: number }>`
          select correct_answer, source_quiz_id from quiz.questions where id = ${listed[0]!.id}`
        expect(first).toEqual({ correct_answer: 'Blue', source_quiz_id: quiz.quizId })
      })

      it('an edit through one quiz shows in every quiz that reuses the question', async () => {
        const text = questionsText(tag(), 2)
        const a = await makeRegexQuiz(t, moderator, { text })
        const b = await makeRegexQuiz(t, moderator, { text })
        const [shared] = await idsOf(a.quizId)
        const res = await t.patch(`${API}/quizzes/${a.quizId}/questions/${shared}`, { question_text: 'Edited once, seen twice?' }, { token: moderator.token })
        expect(res.status).toBe(200)
        expect((await items(b.quizId))[0]).toMatchObject({ id: shared, question_text: 'Edited once, seen twice?' })
        expect((await items(a.quizId))[0]).toMatchObject({ id: shared, question_text: 'Edited once, seen twice?' })
      })

      it('a question category names the new questions and uncategorized reused ones; a reused question keeps the category it has', async () => {
        const k = tag()
        const cardiology = await category('Cardiology')
        const renal = await category('Renal')
        const kept = await insertQuestion(`Kept category ${k}?`, ['A1', 'B1'], renal)
        const filled = await insertQuestion(`No category yet ${k}?`, ['A2', 'B2'])
        const quiz = await makeRegexQuiz(t, moderator, {
          question_category_id: cardiology,
          text: page([
            { text: `Kept category ${k}?`, options: ['A1', 'B1'], answer: 0 },
            { text: `No category yet ${k}?`, options: ['A2', 'B2'], answer: 0 },
            { text: `Brand new ${k}?`, options: ['A3', 'B3'], answer: 0 },
          ]),
        })
        const rows = await t.db.sql<{ id: number; question_category_id: number | null }>`
          select q.id, q.question_category_id from quiz.quiz_questions qq join quiz.questions q on q.id = qq.question_id
          where qq.quiz_id = ${quiz.quizId} order by qq.position`
        expect(rows.slice(0, 2)).toEqual([{ id: kept, question_category_id: renal }, { id: filled, question_category_id: cardiology }])
        expect(rows[2]!.question_category_id).toBe(cardiology)
      })

      it('two extractions of the same new questions at once add them to the bank once', async () => {
        const text = questionsText(tag(), 4)
        const bank = await bankCount()
        const [a, b] = await Promise.all([makeRegexQuiz(t, moderator, { text }), makeRegexQuiz(t, moderator, { text })])
        expect(await bankCount()).toBe(bank + 4)
        expect(await idsOf(b.quizId)).toEqual(await idsOf(a.quizId))
        // The later save found the earlier one's questions: its steps say they were reused (before the save, or after it
        // when the other save came in between).
        const said = [...await steps(a.jobId), ...await steps(b.jobId)]
        expect(said.filter((s) => /^Sav(ing|ed) the quiz with 4 questions: 0 new, 4 already in the question bank \(reused\)$/.test(s))).toHaveLength(1)
      })
    })

    describe('near-duplicates', () => {
      const options = ['Left ventricle', 'Right atrium', 'Left atrium', 'Right ventricle']
      const stem = 'Which chamber of the heart pumps oxygenated blood into the aorta during systole?'
      const reworded = 'Which chamber of the heart pumps the oxygenated blood into the aorta during systole?'

      it('two questions one small word apart are recorded once as a pair; an unrelated edit ends it, editing back restores it, deleting removes it', async () => {
        const k = tag()
        const a = { question_text: `${stem} (${k})`, options }
        const b = { question_text: `${reworded} (${k})`, options }
        // The premise: the embedder puts these two above the threshold.
        const [va, vb] = await (await quizEmbedder(t.booted.core)).embed([questionText({ id: 0, ...a }), questionText({ id: 0, ...b })])
        const measured = cosine(va!, vb!)
        expect(measured).toBeGreaterThanOrEqual(NEAR_DUPLICATE_MIN)
        expect(measured).toBeLessThan(0.9999)

        const quiz = await makeRegexQuiz(t, moderator, {
          text: page([
            { text: a.question_text, options, answer: 0 },
            { text: `What is the normal resting heart rate of a healthy adult (${k})?`, options: ['50 to 60', '60 to 100', '100 to 120'], answer: 1 },
            { text: b.question_text, options, answer: 0 },
          ]),
        })
        const [idA, unrelated, idB] = await idsOf(quiz.quizId)
        const pairs = await pairsOf([idA!, unrelated!, idB!])
        expect(pairs).toHaveLength(1)
        expect(pairs[0]).toMatchObject({ low_id: Math.min(idA!, idB!), high_id: Math.max(idA!, idB!) })
        expect(pairs[0]!.similarity).toBeCloseTo(measured, 3)

        const both = await nearDuplicatesOf(t.booted.core, [idA!, idB!, unrelated!])
        expect(both.get(idA!)).toEqual([{ id: idB!, similarity: expect.closeTo(measured, 3) }])
        expect(both.get(idB!)).toEqual([{ id: idA!, similarity: expect.closeTo(measured, 3) }])
        expect(both.get(unrelated!)).toEqual([])
        expect([...(await nearDuplicatesOf(t.booted.core, [])).keys()]).toEqual([])

        const edit = (question_text: string) =>
          t.patch(`${API}/quizzes/${quiz.quizId}/questions/${idB}`, { question_text }, { token: moderator.token })
        expect((await edit(`Which enzyme breaks down starch in saliva (${k})?`)).status).toBe(200)
        expect(await pairsOf([idA!, idB!])).toEqual([])
        expect((await nearDuplicatesOf(t.booted.core, [idA!])).get(idA!)).toEqual([])

        expect((await edit(b.question_text)).status).toBe(200)
        expect(await pairsOf([idA!, idB!])).toHaveLength(1)

        // B is only in this quiz, so removing it deletes it from the bank, and its pair with it.
        const removed = await t.delete(`${API}/quizzes/${quiz.quizId}/questions/${idB}`, { token: moderator.token })
        expect(removed.status).toBe(204)
        expect(await pairsOf([idA!, idB!])).toEqual([])
      })

      it('exact copies made by another path are recorded with similarity 1; nothing is merged', async () => {
        const k = tag()
        const one = await insertQuestion(`Copied by hand ${k}?`, ['Yes', 'No'])
        const two = await insertQuestion(`Copied by hand ${k}?`, ['Yes', 'No'])
        await indexQuestions(t.booted.core, [one, two].map((id) => ({ id, question_text: `Copied by hand ${k}?`, options: ['Yes', 'No'] })))
        const pairs = await pairsOf([one, two])
        expect(pairs).toHaveLength(1)
        expect(pairs[0]!).toMatchObject({ low_id: one, high_id: two })
        expect(pairs[0]!.similarity).toBeCloseTo(1, 4)
        expect(await t.db.sql`select id from quiz.questions where id in (${one}, ${two}) order by id`).toEqual([{ id: one }, { id: two }])
      })

      it('regenerating embeddings recomputes the pairs: real ones stay, a stale one goes', async () => {
        const k = tag()
        const quiz = await makeRegexQuiz(t, moderator, {
          text: page([
            { text: `${stem} <${k}>`, options, answer: 0 },
            { text: `${reworded} <${k}>`, options, answer: 0 },
            { text: `Which bone is the longest in the human body <${k}>?`, options: ['Femur', 'Tibia'], answer: 0 },
          ]),
        })
        const [idA, idB, other] = await idsOf(quiz.quizId)
        // A pair no embedding supports, as an older model might have left.
        await t.db.sql`insert into quiz.near_duplicates (low_id, high_id, similarity) values (${idA!}, ${other!}, 0.97)`
        const res = await t.post(`${API}/admin/embedding/regenerate`, undefined, { token: admin.token })
        expect(res.status).toBe(200)
        expect(((await res.json()) as { message: string }).message).toContain('regenerated')
        // (The bank holds near-duplicates of these from the earlier tests too: only pairs among these three count.)
        const mine = new Set([idA!, idB!, other!])
        const pairs = (await pairsOf([...mine])).filter((p) => mine.has(p.low_id) && mine.has(p.high_id))
        expect(pairs.map((p) => [p.low_id, p.high_id])).toEqual([[Math.min(idA!, idB!), Math.max(idA!, idB!)]])
        expect(await indexCount()).toBe(await bankCount())
      })
    })
  })
}

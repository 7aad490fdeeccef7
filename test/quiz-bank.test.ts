// Spec 1, Questions: the shared question bank API (listing, filters, keyword, semantic and hybrid matching, paging,
// the ids of every match), a question's category one at a time and in bulk, and a quiz made from bank questions,
// through the real app on each database target. Quizzes come from regex extraction, so their questions are indexed
// with the local (deterministic) embedder.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { BANK_LIMIT_MAX, FROM_BANK_MAX } from '../plugins/quiz/models/bank'
import { INT4_MAX } from '../src/core/schema'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, expectValidation, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

interface Tag { id: number; name: string; kind: string }
interface BankQuestion {
  id: number; quiz_id: number | null; quiz_title: string | null; question_category_id: number | null; question_category_name: string | null
  question_text: string; question_type: string; options: string[]; correct_answer: string; explanation: string; image_path: string | null; tags: Tag[]
}
interface BankPage { total: number; questions: BankQuestion[] }

const QUESTION_KEYS = ['correct_answer', 'explanation', 'id', 'image_path', 'options', 'question_category_id', 'question_category_name',
  'question_text', 'question_type', 'quiz_id', 'quiz_title', 'tags']

interface PlainQuestion { text: string; options: string[]; answer?: number }
/** Page text the regex extractor reads, for hand-written questions (answer: the index of the correct option). */
function quizText(questions: PlainQuestion[]): string {
  return questions.map((q, k) => [
    `${k + 1}. ${q.text}`, ...q.options.map((o, i) => `${'ABCDEFGH'[i]}) ${o}`), `Answer: ${'ABCDEFGH'[q.answer ?? 0]}`, 'Explanation: See the notes.',
  ].join('\n')).join('\n\n')
}

/** A query-parameter 422 naming the field. */
async function expectQueryProblem(res: Response, field: string) {
  expect(res.status).toBe(422)
  const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string }> }
  expect(body.detail.some((d) => d.loc[0] === 'query' && d.loc[d.loc.length - 1] === field)).toBe(true)
  for (const d of body.detail) expect(d.msg.length).toBeGreaterThan(0)
}

/**
 * A number out of its range: 422 whose message gives the bound. (The validator reports a coerced query number's
 * range without the parameter's name.)
 */
/** A 422 for a query number out of range: the message states the bound and the problem names the parameter. */
async function expectRangeProblem(res: Response, bound: string, param?: string) {
  expect(res.status).toBe(422)
  const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string }> }
  const problem = body.detail.find((d) => d.msg.includes(bound))
  expect(problem).toBeDefined()
  if (param) expect(problem!.loc).toEqual(['query', param])
}

for (const target of databaseTargets()) {
  describe(`question bank [${target}]`, () => {
    let t: TestApp
    let admin: Account
    let moderator: Account
    let user: Account
    let otherUser: Account
    const tok = `k${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`

    const makeQuiz = async (questions: PlainQuestion[], title?: string) =>
      (await makeRegexQuiz(t, moderator, { text: quizText(questions), title })).quizId
    const questionIds = async (quizId: number) =>
      (await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`).map((r) => r.question_id)
    const bank = async (query: string, who: Account = moderator): Promise<BankPage> => {
      const res = await t.get(`${API}/questions/bank?${query}`, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as BankPage
    }
    const ids = async (query: string, who: Account = moderator): Promise<number[]> => {
      const res = await t.get(`${API}/questions/bank/ids?${query}`, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as number[]
    }
    const category = async (name: string) =>
      (await t.db.sql<{ id: number }>`insert into quiz.question_categories (name) values (${`${name} ${tok}`}) returning id`)[0]!.id
    const tag = async (kind: string, name: string) =>
      (await t.db.sql<{ id: number }>`insert into quiz.tags (kind, name) values (${kind}, ${`${name} ${tok}`}) returning id`)[0]!.id
    const categoryOf = async (questionId: number) =>
      (await t.db.sql<{ c: number | null }>`select question_category_id as c from quiz.questions where id = ${questionId}`)[0]?.c
    const q = encodeURIComponent

    // The main fixture: quiz A with four questions about one made-up word; quiz B with two.
    let quizA = 0
    let quizB = 0
    let a: number[] = []
    let b: number[] = []

    beforeAll(async () => {
      t = await startTestApp({ target })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'bankmod')
      user = await createAccount(t, admin, 'user', 'bankuser')
      otherUser = await createAccount(t, admin, 'user', 'bankother')
      quizA = await makeQuiz([
        { text: `Which organ makes ${tok}alpha enzyme?`, options: ['Liver', 'Spleen', 'Kidney'], answer: 0 },
        { text: `Where is ${tok}beta stored?`, options: ['Bone', 'Fat', 'Skin'], answer: 1 },
        { text: `How is ${tok}gamma cleared?`, options: ['Urine', 'Bile', 'Sweat'], answer: 2 },
        { text: `When does ${tok}delta peak?`, options: ['Morning', 'Noon', 'Night'], answer: 0 },
      ], `Bank fixture A ${tok}`)
      quizB = await makeQuiz([
        { text: `What blocks ${tok}epsilon receptors?`, options: ['Drug one', 'Drug two'], answer: 1 },
        { text: `Who first described ${tok}zeta?`, options: ['Osler', 'Virchow'], answer: 0 },
      ], `Bank fixture B ${tok}`)
      a = await questionIds(quizA)
      b = await questionIds(quizB)
      expect(a.length).toBe(4)
      expect(b.length).toBe(2)
    })
    afterAll(() => t?.close())

    describe('GET /api/questions/bank', () => {
      it('answers {total, questions}: the Question resource with its source quiz, category and tags, newest first', async () => {
        const page = await bank(`quiz_id=${quizA}`)
        expect(page.total).toBe(4)
        expect(page.questions.map((x) => x.id)).toEqual([...a].sort((x, y) => y - x))
        const first = page.questions.find((x) => x.id === a[0])!
        expect(Object.keys(first).sort()).toEqual(QUESTION_KEYS)
        expect(first).toMatchObject({
          quiz_id: quizA, quiz_title: `Bank fixture A ${tok}`, question_category_id: null, question_category_name: null,
          question_text: `Which organ makes ${tok}alpha enzyme?`, question_type: 'multiple_choice', options: ['Liver', 'Spleen', 'Kidney'],
          correct_answer: 'Liver', image_path: null, tags: [],
        })
      })

      it('needs credentials; a regular user reads the whole bank, and the listing is the same for them', async () => {
        expect((await t.get(`${API}/questions/bank`)).status).toBe(401)
        const forUser = await bank(`q=${tok}&search_mode=keyword`, user)
        expect(forUser.total).toBe(6)
        expect(forUser.questions.map((x) => x.id).sort()).toEqual([...a, ...b].sort())
      })

      it('a source quiz that is not published is named to moderators only; one in the trash to nobody', async () => {
        const asUser = (await bank(`q=${tok}epsilon&search_mode=keyword`, user)).questions[0]!
        expect(asUser.quiz_id).toBeNull()
        expect(asUser.quiz_title).toBeNull()
        expect((await bank(`q=${tok}epsilon&search_mode=keyword`)).questions[0]!.quiz_id).toBe(quizB)
        const other = await makeQuiz([{ text: `Trash test ${tok}eta one?`, options: ['Yes', 'No'] }])
        const [id] = await questionIds(other)
        expect((await t.delete(`${API}/quizzes/${other}`, { token: moderator.token })).status).toBe(204)
        const hidden = (await bank(`q=${tok}eta&search_mode=keyword`)).questions.find((x) => x.id === id)!
        expect(hidden.quiz_id).toBeNull()
        // referenced by a visible quiz as well: that one is named
        const res = await t.post(`${API}/questions/from-bank`, { title: `Holder ${tok}`, question_ids: [id], mode: 'learning' }, { token: moderator.token })
        const holder = ((await res.json()) as { id: number }).id
        const shown = (await bank(`q=${tok}eta&search_mode=keyword`)).questions.find((x) => x.id === id)!
        expect(shown).toMatchObject({ quiz_id: holder, quiz_title: `Holder ${tok}` })
      })

      it('limit and offset page through the matches; the total counts them all; limit 200 is accepted, 201 is 422', async () => {
        const first = await bank(`quiz_id=${quizA}&limit=3`)
        const second = await bank(`quiz_id=${quizA}&limit=3&offset=3`)
        expect(first.total).toBe(4)
        expect(second.total).toBe(4)
        expect(first.questions.length).toBe(3)
        expect(second.questions.length).toBe(1)
        expect([...first.questions, ...second.questions].map((x) => x.id)).toEqual([...a].sort((x, y) => y - x))
        expect((await bank(`quiz_id=${quizA}&offset=10`)).questions).toEqual([])
        expect((await bank(`limit=${BANK_LIMIT_MAX}`)).questions.length).toBeGreaterThanOrEqual(6)
        await expectRangeProblem(await t.get(`${API}/questions/bank?limit=${BANK_LIMIT_MAX + 1}`, { token: moderator.token }), String(BANK_LIMIT_MAX), 'limit')
        await expectRangeProblem(await t.get(`${API}/questions/bank?limit=0`, { token: moderator.token }), '1', 'limit')
        await expectRangeProblem(await t.get(`${API}/questions/bank?offset=-1`, { token: moderator.token }), '0', 'offset')
        await expectQueryProblem(await t.get(`${API}/questions/bank?limit=many`, { token: moderator.token }), 'limit')
        await expectQueryProblem(await t.get(`${API}/questions/bank?search_mode=fuzzy`, { token: moderator.token }), 'search_mode')
        await expectQueryProblem(await t.get(`${API}/questions/bank?favorites_only=yes`, { token: moderator.token }), 'favorites_only')
      })

      it('quiz_id: only that quiz\'s questions, if the caller may see the quiz (404 otherwise); out-of-range ids are 422', async () => {
        expect((await bank(`quiz_id=${quizB}`)).questions.map((x) => x.id).sort()).toEqual([...b].sort())
        expect(await expectDetail(await t.get(`${API}/questions/bank?quiz_id=${quizB}`, { token: user.token }), 404)).toMatch(/quiz/i)
        expect((await t.get(`${API}/questions/bank/ids?quiz_id=${quizB}`, { token: user.token })).status).toBe(404)
        expect((await t.patch(`${API}/quizzes/${quizB}/publish`, undefined, { token: moderator.token })).status).toBe(200)
        expect((await bank(`quiz_id=${quizB}`, user)).total).toBe(2)
        expect((await t.patch(`${API}/quizzes/${quizB}/publish?published=false`, undefined, { token: moderator.token })).status).toBe(200)
        expect((await t.get(`${API}/questions/bank?quiz_id=${INT4_MAX}`, { token: moderator.token })).status).toBe(404)
        await expectRangeProblem(await t.get(`${API}/questions/bank?quiz_id=0`, { token: moderator.token }), '1', 'quiz_id')
        await expectRangeProblem(await t.get(`${API}/questions/bank?quiz_id=${INT4_MAX + 1}`, { token: moderator.token }), String(INT4_MAX), 'quiz_id')
        await expectQueryProblem(await t.get(`${API}/questions/bank?quiz_id=abc`, { token: moderator.token }), 'quiz_id')
      })

      it('category_id, category_ids (any of them) and uncategorized, alone and combined with other filters', async () => {
        const cardio = await category('Cardio')
        const renal = await category('Renal')
        for (const [id, c] of [[a[0]!, cardio], [a[1]!, renal], [b[0]!, cardio]] as const) {
          const res = await t.patch(`${API}/questions/${id}/category?category_id=${c}`, undefined, { token: moderator.token })
          expect(res.status).toBe(200)
        }
        const one = await bank(`category_id=${cardio}`)
        expect(one.total).toBe(2)
        expect(one.questions.map((x) => x.id).sort()).toEqual([a[0]!, b[0]!].sort())
        expect(one.questions[0]!.question_category_name).toBe(`Cardio ${tok}`)
        const anyOf = await bank(`category_ids=${cardio},${renal}`)
        expect(anyOf.questions.map((x) => x.id).sort()).toEqual([a[0]!, a[1]!, b[0]!].sort())
        expect(anyOf.total).toBe(3)
        expect((await bank(`category_ids=${encodeURIComponent(` ${renal} , ${renal}`)}`)).questions.map((x) => x.id)).toEqual([a[1]!])
        const inA = await bank(`quiz_id=${quizA}&category_ids=${cardio},${renal}`)
        expect(inA.questions.map((x) => x.id).sort()).toEqual([a[0]!, a[1]!].sort())
        expect(inA.total).toBe(2)
        const uncategorized = await bank(`quiz_id=${quizA}&uncategorized=true`)
        expect(uncategorized.questions.map((x) => x.id).sort()).toEqual([a[2]!, a[3]!].sort())
        expect(uncategorized.total).toBe(2)
        expect((await bank(`uncategorized=true&category_id=${cardio}`)).total).toBe(0)
        expect((await bank(`category_id=${cardio}&quiz_id=${quizB}`)).questions.map((x) => x.id)).toEqual([b[0]!])
        expect((await bank(`category_ids=${INT4_MAX}`)).total).toBe(0)
        // blank lists are no filter
        expect((await bank(`quiz_id=${quizA}&category_ids=&tag_ids=`)).total).toBe(4)
        // reset for the other tests
        await t.post(`${API}/questions/bulk-category`, { question_ids: [...a, ...b], category_id: null }, { token: moderator.token })
      })

      it('malformed comma lists are 422 naming the field', async () => {
        for (const [field, value] of [['category_ids', '1,x'], ['category_ids', '0'], ['category_ids', `${INT4_MAX + 1}`], ['category_ids', '1,,2'],
          ['tag_ids', 'abc'], ['tag_ids', '1;2'], ['tag_ids', '-3'], ['tag_ids', '1.5']] as const) {
          await expectQueryProblem(await t.get(`${API}/questions/bank?${field}=${encodeURIComponent(value)}`, { token: user.token }), field)
          await expectQueryProblem(await t.get(`${API}/questions/bank/ids?${field}=${encodeURIComponent(value)}`, { token: user.token }), field)
        }
      })

      it('favorites_only: the caller\'s own favorites only', async () => {
        await t.db.sql`insert into quiz.favorites (user_id, question_id) values (${user.id}, ${a[2]!}), (${user.id}, ${b[1]!}), (${otherUser.id}, ${a[3]!})`
        const mine = await bank('favorites_only=true', user)
        expect(mine.questions.map((x) => x.id).sort()).toEqual([a[2]!, b[1]!].sort())
        expect(mine.total).toBe(2)
        expect((await t.patch(`${API}/quizzes/${quizA}/publish`, undefined, { token: moderator.token })).status).toBe(200)
        expect((await bank(`favorites_only=true&quiz_id=${quizA}`, user)).questions.map((x) => x.id)).toEqual([a[2]!])
        expect((await t.patch(`${API}/quizzes/${quizA}/publish?published=false`, undefined, { token: moderator.token })).status).toBe(200)
        expect((await bank('favorites_only=true', otherUser)).questions.map((x) => x.id)).toEqual([a[3]!])
        expect((await bank('favorites_only=true')).total).toBe(0)
        expect((await bank('favorites_only=false', user)).total).toBeGreaterThanOrEqual(6)
      })

      it('tag_ids: questions that carry every listed tag; each question lists its tags', async () => {
        const heart = await tag('subject', 'Heart')
        const failure = await tag('disease', 'Failure')
        await t.db.sql`insert into quiz.question_tags (question_id, tag_id) values (${a[0]!}, ${heart}), (${a[0]!}, ${failure}), (${a[1]!}, ${heart})`
        const both = await bank(`tag_ids=${heart},${failure}`)
        expect(both.questions.map((x) => x.id)).toEqual([a[0]!])
        expect(both.total).toBe(1)
        expect(both.questions[0]!.tags).toEqual([
          { id: failure, name: `Failure ${tok}`, kind: 'disease' }, { id: heart, name: `Heart ${tok}`, kind: 'subject' },
        ])
        const one = await bank(`tag_ids=${heart}`)
        expect(one.questions.map((x) => x.id).sort()).toEqual([a[0]!, a[1]!].sort())
        expect((await bank(`tag_ids=${heart},${heart}`)).total).toBe(2)
        expect((await bank(`tag_ids=${heart}&uncategorized=true&q=${tok}beta`)).questions.map((x) => x.id)).toEqual([a[1]!])
        expect((await bank(`tag_ids=${heart},${INT4_MAX}`)).total).toBe(0)
      })

      it('keyword: a case-insensitive substring of the text; % and _ match themselves', async () => {
        const upper = await bank(`q=${q(`${tok.toUpperCase()}GAM`)}&search_mode=keyword`)
        expect(upper.questions.map((x) => x.id)).toEqual([a[2]!])
        expect(upper.total).toBe(1)
        const middle = await bank(`q=${q('ich organ makes')}&search_mode=keyword&quiz_id=${quizA}`)
        expect(middle.questions.map((x) => x.id)).toEqual([a[0]!])
        const quiz = await makeQuiz([
          { text: `Dose of ${tok} is 50%_off today?`, options: ['Yes', 'No'] },
          { text: `Dose of ${tok} is 50xyoff today?`, options: ['Yes', 'No'] },
        ])
        const [pct, plain] = await questionIds(quiz)
        expect((await bank(`q=${q('50%_off')}&search_mode=keyword`)).questions.map((x) => x.id)).toEqual([pct!])
        expect((await bank(`q=${q('50xyoff')}&search_mode=keyword`)).questions.map((x) => x.id)).toEqual([plain!])
        expect((await bank(`q=${q(`${tok}omega-nothing`)}&search_mode=keyword`)).total).toBe(0)
        // text with no words: nothing matches by meaning, and % matches only itself
        for (const mode of ['keyword', 'semantic', 'hybrid']) expect((await bank(`q=${q('%%')}&search_mode=${mode}`)).total).toBe(0)
        // blank text is no text filter
        expect((await bank(`q=${q('   ')}&quiz_id=${quizA}`)).total).toBe(4)
      })

      it('semantic finds a reworded question that no keyword matches, under the other filters too', async () => {
        const quiz = await makeQuiz([
          { text: 'Which chamber of the heart pumps oxygenated blood to the body?', options: ['Left ventricle', 'Right atrium', 'Right ventricle', 'Left atrium'] },
        ])
        const [heart] = await questionIds(quiz)
        const reworded = 'which heart chamber pumps oxygenated blood to the body'
        const semantic = await bank(`q=${q(reworded)}&search_mode=semantic`)
        expect(semantic.questions.map((x) => x.id)).toEqual([heart!])
        expect(semantic.total).toBe(1)
        expect(semantic.questions[0]!.correct_answer).toBe('Left ventricle')
        expect((await bank(`q=${q(reworded)}&search_mode=keyword`)).total).toBe(0)
        expect((await bank(`q=${q(reworded)}`)).questions.map((x) => x.id)).toEqual([heart!])
        expect((await bank(`q=${q(reworded)}&search_mode=semantic&quiz_id=${quizA}`)).total).toBe(0)
        expect((await bank(`q=${q(reworded)}&search_mode=semantic&quiz_id=${quiz}`)).total).toBe(1)
        // an unrelated text matches nothing by meaning
        expect((await bank(`q=${q('renal tubular acidosis bicarbonate')}&search_mode=semantic`)).total).toBe(0)
      })

      it('hybrid: semantic matches first (most similar first), then keyword-only matches by id desc, each question once', async () => {
        // A made-up word keeps these questions apart from every other test's (scores with the local embedder:
        // both 0.83, semOnly 0.80, kw1 0.46, kw2 0.42 against the query).
        const w = 'qzwvx'
        const quiz = await makeQuiz([
          { text: `${w} lorem ipsum dolor?`, options: ['Sit', 'Amet'] },
          { text: `Lorem ipsum dolor ${w}?`, options: ['Sit', 'Amet'] },
          { text: `During the long ward round the registrar briefly mentioned ${w} lorem ipsum dolor while discussing fluid balance, electrolytes, antibiotics, mobility and the discharge plan for tomorrow morning?`, options: ['Potassium', 'Sodium', 'Chloride'] },
          { text: `A patient with chronic cough, weight loss and night sweats had ${w} lorem ipsum dolor noted on imaging by the radiology team last week?`, options: ['Tuberculosis', 'Sarcoidosis', 'Lymphoma'] },
        ])
        const [both, semOnly, kw1, kw2] = await questionIds(quiz)
        const query = `q=${q(`${w} lorem ipsum dolor`)}`
        expect((await bank(`${query}&search_mode=semantic`)).questions.map((x) => x.id)).toEqual([both!, semOnly!])
        expect((await bank(`${query}&search_mode=keyword`)).questions.map((x) => x.id)).toEqual([kw2!, kw1!, both!])
        const hybrid = await bank(query)
        expect(hybrid.questions.map((x) => x.id)).toEqual([both!, semOnly!, kw2!, kw1!])
        expect(hybrid.total).toBe(4)
        expect((await bank(`${query}&search_mode=hybrid`)).questions.map((x) => x.id)).toEqual([both!, semOnly!, kw2!, kw1!])
        // paging across the two groups keeps the order and the total
        const pages: number[] = []
        for (let offset = 0; offset < 4; offset++) {
          const page = await bank(`${query}&limit=1&offset=${offset}`)
          expect(page.total).toBe(4)
          pages.push(...page.questions.map((x) => x.id))
        }
        expect(pages).toEqual([both!, semOnly!, kw2!, kw1!])
        const split = [...(await bank(`${query}&limit=3`)).questions, ...(await bank(`${query}&limit=3&offset=3`)).questions]
        expect(split.map((x) => x.id)).toEqual([both!, semOnly!, kw2!, kw1!])
        expect(await ids(query)).toEqual([both!, semOnly!, kw2!, kw1!])
        // the filters apply to both groups
        expect((await bank(`${query}&category_id=${INT4_MAX}`)).total).toBe(0)
      })
    })

    describe('GET /api/questions/bank/ids', () => {
      it('equals the union of every page of the listing, in order, under the same filters', async () => {
        for (const query of [`q=${q(tok)}`, `quiz_id=${quizA}`, `q=${q(tok)}&favorites_only=true`, '']) {
          const who = query.includes('favorites') ? user : moderator
          const all = await ids(query, who)
          const total = (await bank(`${query}&limit=1`, who)).total
          const paged: number[] = []
          for (let offset = 0; offset < total; offset += 2) paged.push(...(await bank(`${query}&limit=2&offset=${offset}`, who)).questions.map((x) => x.id))
          expect(all).toEqual(paged)
          expect(all.length).toBe(total)
        }
        expect(await ids(`quiz_id=${quizA}`)).toEqual([...a].sort((x, y) => y - x))
        expect((await t.get(`${API}/questions/bank/ids`)).status).toBe(401)
      })
    })

    describe('PATCH /api/questions/{question_id}/category', () => {
      it('sets and removes the category; 404 for an unknown question or category; 403 for a user; 422 for a bad value', async () => {
        const c = await category('Patch')
        const res = await t.patch(`${API}/questions/${b[1]!}/category?category_id=${c}`, undefined, { token: moderator.token })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ question_id: b[1]!, question_category_id: c })
        expect(await categoryOf(b[1]!)).toBe(c)
        const cleared = await t.patch(`${API}/questions/${b[1]!}/category?category_id=null`, undefined, { token: moderator.token })
        expect(await cleared.json()).toEqual({ question_id: b[1]!, question_category_id: null })
        expect(await categoryOf(b[1]!)).toBeNull()
        await t.patch(`${API}/questions/${b[1]!}/category?category_id=${c}`, undefined, { token: moderator.token })
        expect((await (await t.patch(`${API}/questions/${b[1]!}/category`, undefined, { token: moderator.token })).json())).toMatchObject({ question_category_id: null })
        expect(await expectDetail(await t.patch(`${API}/questions/${INT4_MAX}/category?category_id=${c}`, undefined, { token: moderator.token }), 404)).toMatch(/question/i)
        expect(await expectDetail(await t.patch(`${API}/questions/${b[1]!}/category?category_id=${INT4_MAX}`, undefined, { token: moderator.token }), 404)).toMatch(/category/i)
        expect(await categoryOf(b[1]!)).toBeNull()
        expect((await t.patch(`${API}/questions/${b[1]!}/category?category_id=${c}`, undefined, { token: user.token })).status).toBe(403)
        expect(await categoryOf(b[1]!)).toBeNull()
        for (const bad of ['abc', '0', `${INT4_MAX + 1}`, '1,2']) {
          await expectQueryProblem(await t.patch(`${API}/questions/${b[1]!}/category?category_id=${bad}`, undefined, { token: moderator.token }), 'category_id')
        }
        expect((await t.patch(`${API}/questions/0/category`, undefined, { token: moderator.token })).status).toBe(422)
      })
    })

    describe('POST /api/questions/from-bank', () => {
      it('makes an unpublished quiz that references the questions in the given order, without copying them', async () => {
        const before = (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions`)[0]!.n
        const order = [b[1]!, a[2]!, a[0]!, a[2]!]
        const res = await t.post(`${API}/questions/from-bank`, { title: `  From bank ${tok} `, question_ids: order, mode: 'timed', time_limit_minutes: 15 }, { token: moderator.token })
        expect(res.status).toBe(200)
        const body = (await res.json()) as { id: number; title: string; questions_count: number }
        expect(body).toEqual({ id: body.id, title: `From bank ${tok}`, questions_count: 3 })
        expect(await questionIds(body.id)).toEqual([b[1]!, a[2]!, a[0]!])
        const [row] = await t.db.sql<{ mode: string; time_limit_minutes: number; is_published: boolean; user_id: number }>`
          select mode, time_limit_minutes, is_published, user_id from quiz.quizzes where id = ${body.id}`
        expect(row).toEqual({ mode: 'timed', time_limit_minutes: 15, is_published: false, user_id: moderator.id })
        expect((await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions`)[0]!.n).toBe(before)
        // the bank lists the quiz's questions under the quiz filter
        expect((await bank(`quiz_id=${body.id}`)).total).toBe(3)
      })

      it('refuses unknown ids (404, no quiz), a blank title, an empty or too long list (422), and regular users (403)', async () => {
        const count = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.quizzes`)[0]!.n
        const before = await count()
        const missing = await t.post(`${API}/questions/from-bank`, { title: 'Nope', question_ids: [a[0]!, INT4_MAX], mode: 'learning' }, { token: moderator.token })
        expect(await expectDetail(missing, 404)).toContain(String(INT4_MAX))
        await expectValidation(await t.post(`${API}/questions/from-bank`, { title: '   ', question_ids: [a[0]!], mode: 'learning' }, { token: moderator.token }), 'title')
        await expectValidation(await t.post(`${API}/questions/from-bank`, { title: 'Empty', question_ids: [], mode: 'learning' }, { token: moderator.token }), 'question_ids')
        const tooMany = Array.from({ length: FROM_BANK_MAX + 1 }, (_, i) => i + 1)
        await expectValidation(await t.post(`${API}/questions/from-bank`, { title: 'Many', question_ids: tooMany, mode: 'learning' }, { token: moderator.token }), 'question_ids')
        await expectValidation(await t.post(`${API}/questions/from-bank`, { title: 'Mode', question_ids: [a[0]!], mode: 'exam' }, { token: moderator.token }), 'mode')
        expect((await t.post(`${API}/questions/from-bank`, { title: 'Bad id', question_ids: [0], mode: 'learning' }, { token: moderator.token })).status).toBe(422)
        expect((await t.post(`${API}/questions/from-bank`, { title: 'User', question_ids: [a[0]!], mode: 'learning' }, { token: user.token })).status).toBe(403)
        expect(await count()).toBe(before)
      })
    })

    describe('POST /api/questions/bulk-category', () => {
      it('sets or removes the category of many questions; unknown ids are skipped and not counted', async () => {
        const c = await category('Bulk')
        const res = await t.post(`${API}/questions/bulk-category`, { question_ids: [a[0]!, a[1]!, a[0]!, INT4_MAX], category_id: c }, { token: moderator.token })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ updated: 2, question_category_id: c })
        expect(await categoryOf(a[0]!)).toBe(c)
        expect(await categoryOf(a[1]!)).toBe(c)
        expect(await categoryOf(a[2]!)).toBeNull()
        expect((await bank(`category_id=${c}`)).total).toBe(2)
        const cleared = await t.post(`${API}/questions/bulk-category`, { question_ids: [a[0]!], category_id: null }, { token: moderator.token })
        expect(await cleared.json()).toEqual({ updated: 1, question_category_id: null })
        expect(await categoryOf(a[0]!)).toBeNull()
        const none = await t.post(`${API}/questions/bulk-category`, { question_ids: [INT4_MAX], category_id: c }, { token: moderator.token })
        expect(await none.json()).toEqual({ updated: 0, question_category_id: c })
      })

      it('404 for an unknown category (nothing changes), 422 for an empty list or a missing category_id, 403 for a user', async () => {
        const c = await category('Bulk keep')
        await t.post(`${API}/questions/bulk-category`, { question_ids: [b[0]!], category_id: c }, { token: moderator.token })
        expect(await expectDetail(await t.post(`${API}/questions/bulk-category`, { question_ids: [b[0]!], category_id: INT4_MAX }, { token: moderator.token }), 404)).toMatch(/category/i)
        expect(await categoryOf(b[0]!)).toBe(c)
        await expectValidation(await t.post(`${API}/questions/bulk-category`, { question_ids: [], category_id: c }, { token: moderator.token }), 'question_ids')
        await expectValidation(await t.post(`${API}/questions/bulk-category`, { question_ids: [b[0]!] }, { token: moderator.token }), 'category_id')
        expect((await t.post(`${API}/questions/bulk-category`, { question_ids: [b[0]!], category_id: null }, { token: user.token })).status).toBe(403)
        expect(await categoryOf(b[0]!)).toBe(c)
        await t.post(`${API}/questions/bulk-category`, { question_ids: [b[0]!], category_id: null }, { token: moderator.token })
      })
    })

    it('the keyword query can use the trigram index quiz.questions_text_trgm', async () => {
      const plan = await t.db.transaction(async (tx) => {
        await tx.sql`set local enable_seqscan = off`
        return tx.sql<Record<string, string>>`explain select q.id from quiz.questions q where q.question_text ilike ${`%${tok}gam%`}`
      })
      const text = plan.map((r) => Object.values(r)[0]).join('\n')
      expect(text).toContain('questions_text_trgm')
    })
  })
}

// Spec 1, Quizzes: the quiz search (GET /api/quizzes/search): keyword and semantic matching of quiz titles and of
// their questions, the three modes, match types, ordering, visibility (published for users, never the trash), the
// q length rule, and the path not being read as a quiz id; through the real app on each database target.
// Made-up words keep each case apart; similarities quoted are the local embedder's (deterministic).
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { MATCHING_QUESTIONS_MAX, SEARCH_Q_MAX } from '../plugins/quiz/models/search'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, questionsText, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

interface PlainQuestion { text: string; options: string[] }
/** Page text the regex extractor reads, for hand-written questions (the first option is correct). */
const quizText = (questions: PlainQuestion[]) =>
  questions.map((q, k) => [`${k + 1}. ${q.text}`, ...q.options.map((o, i) => `${'ABCDEFGH'[i]}) ${o}`), 'Answer: A'].join('\n')).join('\n\n')

interface Result { quiz_id: number; quiz_title: string; match_type: string; matching_questions: Array<{ id: number; question_text: string }> }

async function expectQueryProblem(res: Response, field: string) {
  expect(res.status).toBe(422)
  const body = (await res.json()) as { detail: Array<{ loc: string[]; msg: string }> }
  expect(body.detail.some((d) => d.loc[0] === 'query' && d.loc[d.loc.length - 1] === field)).toBe(true)
}

for (const target of databaseTargets()) {
  describe(`quiz search [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let user: Account

    // A quiz without questions of its own gets two plain ones with a fixed word (`filler1`...), not the helper's
    // random tag: the local embedder hashes a random tag's trigrams, and about one tag in 700 lands within the
    // semantic threshold of an unrelated query such as `xylophone marmalade`.
    let fillers = 0
    const makeQuiz = async (title: string, questions?: PlainQuestion[], publish = true) => {
      const text = questions ? quizText(questions) : questionsText(`filler${++fillers}`, 2)
      const { quizId } = await makeRegexQuiz(t, moderator, { title, n: 2, text })
      if (publish) expect((await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })).status).toBe(200)
      return quizId
    }
    const questionIds = async (quizId: number) =>
      (await t.db.sql<{ question_id: number }>`select question_id from quiz.quiz_questions where quiz_id = ${quizId} order by position`).map((r) => r.question_id)
    const search = async (query: string, who: Account = user): Promise<Result[]> => {
      const res = await t.get(`${API}/quizzes/search?${query}`, { token: who.token })
      expect(res.status).toBe(200)
      return (await res.json()) as Result[]
    }
    const find = (results: Result[], quizId: number) => results.find((r) => r.quiz_id === quizId)

    let titled = 0
    let hidden = 0
    let trashed = 0
    let byQuestions = 0
    let both = 0
    let many = 0
    let kidney = 0
    let kidneyQuestion = 0
    let heart = 0

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'searchmod')
      user = await createAccount(t, admin, 'user', 'searchuser')
      titled = await makeQuiz('Zorbflux cardiology review')
      hidden = await makeQuiz('Zorbflux hidden draft', undefined, false)
      trashed = await makeQuiz('Zorbflux trashed')
      expect((await t.delete(`${API}/quizzes/${trashed}`, { token: moderator.token })).status).toBe(204)
      byQuestions = await makeQuiz('Renal set alpha', [
        { text: 'Where is quintaxel stored in the body?', options: ['Bone', 'Fat'] },
        { text: 'What is the usual dose of QUINTAXEL in adults?', options: ['5 mg', '50 mg'] },
        { text: 'Which ion does the loop of Henle reabsorb?', options: ['Sodium', 'Iron'] },
      ])
      both = await makeQuiz('Morvanite overview', [{ text: 'How is morvanite toxicity treated?', options: ['Chelation', 'Dialysis'] }])
      many = await makeQuiz('Plexiwarm drill', Array.from({ length: 7 }, (_, i) => ({ text: `Plexiwarm fact number ${i + 1}?`, options: ['True', 'False'] })))
      kidney = await makeQuiz('Kidney and renal physiology quiz') // "kidney physiology": 0.60 to the title, no substring
      kidneyQuestion = await makeQuiz('Filtration basics', [{ text: 'What does kidney physiology teach about filtration?', options: ['Pressure', 'Colour'] }])
      heart = await makeQuiz('Heart pump questions', [
        { text: 'Which chamber of the heart pumps oxygenated blood to the body?', options: ['Left ventricle', 'Right atrium', 'Right ventricle', 'Left atrium'] },
      ])
    })
    afterAll(() => t?.close())

    it('title mode: a case-insensitive substring of the title; users see published quizzes only, nobody the trash', async () => {
      const forUser = await search('q=ZORBflux&mode=title')
      expect(find(forUser, titled)).toEqual({ quiz_id: titled, quiz_title: 'Zorbflux cardiology review', match_type: 'title', matching_questions: [] })
      expect(find(forUser, hidden)).toBeUndefined()
      expect(find(forUser, trashed)).toBeUndefined()
      const forModerator = await search('q=zorbflux&mode=title', moderator)
      expect(find(forModerator, titled)).toBeDefined()
      expect(find(forModerator, hidden)?.match_type).toBe('title')
      expect(find(forModerator, trashed)).toBeUndefined()
      // a substring inside a word
      expect(find(await search('q=rbflu&mode=title'), titled)?.match_type).toBe('title')
    })

    it('questions mode: the quizzes whose questions contain q, with those questions; titles are not looked at', async () => {
      const [stored, dose] = await questionIds(byQuestions)
      const results = await search('q=quintaxel&mode=questions')
      expect(find(results, byQuestions)).toEqual({
        quiz_id: byQuestions, quiz_title: 'Renal set alpha', match_type: 'question',
        matching_questions: [{ id: stored!, question_text: 'Where is quintaxel stored in the body?' }, { id: dose!, question_text: 'What is the usual dose of QUINTAXEL in adults?' }],
      })
      expect(find(await search('q=zorbflux&mode=questions'), titled)).toBeUndefined()
      expect(find(await search('q=quintaxel&mode=title'), byQuestions)).toBeUndefined()
    })

    it('all mode (the default): title and questions, match_type title_and_question when both match', async () => {
      const [question] = await questionIds(both)
      const all = find(await search('q=morvanite'), both)
      expect(all).toEqual({ quiz_id: both, quiz_title: 'Morvanite overview', match_type: 'title_and_question', matching_questions: [{ id: question!, question_text: 'How is morvanite toxicity treated?' }] })
      expect(find(await search('q=morvanite&mode=all'), both)?.match_type).toBe('title_and_question')
      expect(find(await search('q=morvanite&mode=questions'), both)?.match_type).toBe('question')
      expect(find(await search('q=morvanite&mode=title'), both)).toMatchObject({ match_type: 'title', matching_questions: [] })
      expect(find(await search('q=zorbflux'), titled)?.match_type).toBe('title')
      expect(find(await search('q=quintaxel'), byQuestions)?.match_type).toBe('question')
    })

    it(`matching_questions holds at most ${MATCHING_QUESTIONS_MAX} questions per quiz`, async () => {
      const result = find(await search('q=plexiwarm%20fact&mode=questions'), many)!
      expect(result.matching_questions.length).toBe(MATCHING_QUESTIONS_MAX)
      const ids = await questionIds(many)
      for (const m of result.matching_questions) expect(ids).toContain(m.id)
    })

    it('semantic: a title or a question close in meaning matches without sharing the exact words', async () => {
      const titleHit = find(await search('q=kidney%20physiology&mode=title'), kidney)
      expect(titleHit).toEqual({ quiz_id: kidney, quiz_title: 'Kidney and renal physiology quiz', match_type: 'title', matching_questions: [] })
      const [heartQuestion] = await questionIds(heart)
      const questionHit = find(await search(`q=${encodeURIComponent('which heart chamber pumps oxygenated blood')}&mode=questions`), heart)
      expect(questionHit).toEqual({
        quiz_id: heart, quiz_title: 'Heart pump questions', match_type: 'question',
        matching_questions: [{ id: heartQuestion!, question_text: 'Which chamber of the heart pumps oxygenated blood to the body?' }],
      })
      expect(await search(`q=${encodeURIComponent('xylophone marmalade')}`)).toEqual([])
    })

    it('orders by the best match: a substring match before a semantic one', async () => {
      const results = await search('q=kidney%20physiology')
      const order = results.map((r) => r.quiz_id)
      expect(order).toContain(kidney)
      expect(order).toContain(kidneyQuestion)
      expect(order.indexOf(kidneyQuestion)).toBeLessThan(order.indexOf(kidney))
      expect(find(results, kidneyQuestion)?.match_type).toBe('question')
    })

    it('a question shared with an unpublished quiz shows under the published one only, for users', async () => {
      const [stored] = await questionIds(byQuestions)
      const res = await t.post(`${API}/questions/from-bank`, { title: 'Unpublished copy', question_ids: [stored!], mode: 'learning' }, { token: moderator.token })
      expect(res.status).toBe(200)
      const draft = ((await res.json()) as { id: number }).id
      expect(find(await search('q=quintaxel%20stored&mode=questions'), draft)).toBeUndefined()
      expect(find(await search('q=quintaxel%20stored&mode=questions'), byQuestions)).toBeDefined()
      expect(find(await search('q=quintaxel%20stored&mode=questions', moderator), draft)?.matching_questions.map((m) => m.id)).toEqual([stored!])
    })

    it(`q must be 2 to ${SEARCH_Q_MAX} characters once trimmed (422 naming q); mode must be one of the three`, async () => {
      await expectQueryProblem(await t.get(`${API}/quizzes/search`, { token: user.token }), 'q')
      await expectQueryProblem(await t.get(`${API}/quizzes/search?q=a`, { token: user.token }), 'q')
      await expectQueryProblem(await t.get(`${API}/quizzes/search?q=${encodeURIComponent('   a   ')}`, { token: user.token }), 'q')
      await expectQueryProblem(await t.get(`${API}/quizzes/search?q=${'x'.repeat(SEARCH_Q_MAX + 1)}`, { token: user.token }), 'q')
      await expectQueryProblem(await t.get(`${API}/quizzes/search?q=zorbflux&mode=everything`, { token: user.token }), 'mode')
      expect((await t.get(`${API}/quizzes/search?q=${'x'.repeat(SEARCH_Q_MAX)}`, { token: user.token })).status).toBe(200)
      expect((await t.get(`${API}/quizzes/search?q=ab`, { token: user.token })).status).toBe(200)
      // no words at all (a zero vector for the embedder) is a search like any other
      const symbols = await t.get(`${API}/quizzes/search?q=${encodeURIComponent('%%_')}`, { token: user.token })
      expect(symbols.status).toBe(200)
      expect(await symbols.json()).toEqual([])
      expect((await t.get(`${API}/quizzes/search?q=zorbflux`)).status).toBe(401)
    })

    it('/api/quizzes/search is the search, never read as a quiz id; quiz ids still reach the quiz routes', async () => {
      const res = await t.get(`${API}/quizzes/search?q=zorbflux`, { token: user.token })
      expect(res.status).toBe(200)
      expect(Array.isArray(await res.json())).toBe(true)
      const noQ = await t.get(`${API}/quizzes/search`, { token: user.token })
      const body = (await noQ.json()) as { detail: Array<{ loc: string[] }> }
      expect(body.detail.every((d) => !d.loc.includes('quiz_id'))).toBe(true)
      const quiz = await t.get(`${API}/quizzes/${titled}`, { token: user.token })
      expect(quiz.status).toBe(200)
      expect(((await quiz.json()) as { id: number }).id).toBe(titled)
    })
  })
}

// A learner's hot paths on PostgreSQL, through the real app in-process (app.fetch: routing, token check, validation,
// the service, the database; no sockets): the submit of a 100-question attempt (answers stored, scored, FSRS cards
// moved, in one transaction), and the saved-progress autosave of LEARNERS learners at once, each with its device
// lock. Prints figures, asserts nothing.
//
//   bun scripts/bench/attempts.ts    SUBMITS=100 LEARNERS=50 DURATION_S=10 QUESTIONS=100
import { rmSync } from 'node:fs'
import { bootForBench, formatMs, freshDataDir, freshServerDatabase, percentile, redact, SERVER_URL, serverAvailable } from './support'

const SUBMITS = Number(process.env.SUBMITS ?? 100)
const LEARNERS = Number(process.env.LEARNERS ?? 50)
const DURATION_S = Number(process.env.DURATION_S ?? 10)
const QUESTIONS = Number(process.env.QUESTIONS ?? 100)
const PASSWORD = 'bench-password-1'


if (!(await serverAvailable())) {
  console.log(`PostgreSQL at ${redact(SERVER_URL)} does not answer: this benchmark needs it`)
  process.exit(0)
}
const dataDir = freshDataDir('bench-attempts')
const server = await freshServerDatabase('bench_attempts')
const booted = await bootForBench({ DATA_DIR: dataDir, DATABASE_URL: server.url, TRUST_PROXY: 'true', DATABASE_POOL_SIZE: '20' })
const call = async (path: string, init: { method?: string; token?: string; body?: unknown; ip?: string; headers?: Record<string, string> } = {}) => {
  const headers: Record<string, string> = { 'x-forwarded-for': init.ip ?? '10.9.0.1', ...init.headers }
  if (init.token) headers.authorization = `Bearer ${init.token}`
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const res = await booted.fetch(new Request(`http://localhost/quiz/api${path}`, {
    method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body),
  }))
  if (res.status >= 300) throw new Error(`${init.method ?? 'GET'} ${path} answered ${res.status}: ${await res.text()}`)
  return res.status === 204 ? null : res.json()
}

try {
  const { access_token: admin } = await call('/auth/register', { method: 'POST', body: { email: 'bench-admin@example.test', password: PASSWORD, name: 'Admin' } }) as { access_token: string }
  // A published quiz of QUESTIONS questions, written directly (extraction is not what is measured).
  const db = booted.core.db
  const [quiz] = await db.sql<{ id: number }>`insert into quiz.quizzes (user_id, title, mode, is_published) values (1, 'Bench quiz', 'timed', true) returning id`
  const questions = Array.from({ length: QUESTIONS }, (_, i) => ({
    question_text: `Bench question ${i + 1}?`, options: ['Alpha', 'Beta', 'Gamma', 'Delta'].map((o) => `${o} ${i + 1}`), correct_answer: `Beta ${i + 1}`, explanation: '',
  }))
  const ids = await db.sql<{ id: number }>`
    insert into quiz.questions (question_text, options, correct_answer, explanation)
    select e.q ->> 'question_text', e.q -> 'options', e.q ->> 'correct_answer', e.q ->> 'explanation'
    from jsonb_array_elements(${{ value: questions }}::jsonb -> 'value') with ordinality as e(q, n) order by e.n returning id`
  await db.sql`insert into quiz.quiz_questions (quiz_id, question_id, position)
    select ${quiz!.id}, e.id::int, e.n from jsonb_array_elements_text(${{ value: ids.map((r) => r.id) }}::jsonb -> 'value') with ordinality as e(id, n)`
  const answers = ids.map((r, i) => ({ question_id: r.id, user_answer: i % 3 === 0 ? `Alpha ${i + 1}` : `Beta ${i + 1}` }))

  const learners: string[] = []
  for (let i = 0; i < LEARNERS; i++) {
    const email = `learner-${i}@example.test`
    await call('/admin/users', { method: 'POST', token: admin, body: { email, password: PASSWORD, name: `Learner ${i}` } })
    const { access_token } = await call('/auth/login', { method: 'POST', body: { email, password: PASSWORD }, ip: `10.9.${Math.floor(i / 200)}.${(i % 200) + 2}` }) as { access_token: string }
    learners.push(access_token)
  }

  // 1. Submit of a QUESTIONS-question attempt, one at a time (a fresh attempt each, by one learner).
  const submitTimes: number[] = []
  for (let i = 0; i < SUBMITS + 5; i++) {
    const attempt = await call(`/attempts/start?quiz_id=${quiz!.id}&fresh=true`, { method: 'POST', token: learners[0] }) as { id: number }
    const start = performance.now()
    await call(`/attempts/${attempt.id}/submit`, { method: 'POST', token: learners[0], body: { answers } })
    if (i >= 5) submitTimes.push(performance.now() - start)
  }
  submitTimes.sort((a, b) => a - b)
  console.log(`submit of a ${QUESTIONS}-question attempt, ${SUBMITS} in a row: p50 ${formatMs(percentile(submitTimes, 50))} ms, ` +
    `p95 ${formatMs(percentile(submitTimes, 95))} ms, p99 ${formatMs(percentile(submitTimes, 99))} ms`)

  // 2. Autosave: every learner saves their progress again and again, with their device's lock, for DURATION_S.
  const attempts = await Promise.all(learners.map((token) => call(`/attempts/start?quiz_id=${quiz!.id}&fresh=true`, { method: 'POST', token }) as Promise<{ id: number }>))
  const saveTimes: number[] = []
  const deadline = performance.now() + DURATION_S * 1000
  const began = performance.now()
  await Promise.all(learners.map(async (token, i) => {
    let n = 0
    while (performance.now() < deadline) {
      const progress = {
        quiz_id: quiz!.id, attempt_id: attempts[i]!.id, current_idx: n % QUESTIONS, mode: 'timed', voice: null,
        answers: Object.fromEntries(answers.slice(0, (n % QUESTIONS) + 1).map((a) => [String(a.question_id), a.user_answer])),
        time_left: 1200 - n, started_at: new Date().toISOString(), total_time: 1800,
      }
      const start = performance.now()
      await call('/attempts/progress', { method: 'POST', token, body: progress, headers: { 'x-quiz-session': `device-${i}` } })
      saveTimes.push(performance.now() - start)
      n++
    }
  }))
  const seconds = (performance.now() - began) / 1000
  saveTimes.sort((a, b) => a - b)
  console.log(`progress save, ${LEARNERS} learners at once for ${DURATION_S} s: ${Math.round(saveTimes.length / seconds)} req/s, ` +
    `p50 ${formatMs(percentile(saveTimes, 50))} ms, p99 ${formatMs(percentile(saveTimes, 99))} ms (${saveTimes.length} saves)`)
} finally {
  await booted.shutdown()
  await server.drop()
  rmSync(dataDir, { recursive: true, force: true })
}

// Soak: DURATION_S (default 600) of mixed traffic against the real server (`bun src/main.ts` in its own process,
// LOG_LEVEL=info as shipped) from a load tool (autocannon, scripts/bench/soak-load.mjs under Node), four kinds of
// request at once, each with its own connections and latency histogram:
//   sign-in          POST {quiz}/api/auth/login and clinical POST /api/auth/login, taking turns
//   bank search      GET {quiz}/api/questions/bank?q=... (keyword and hybrid, the latter embeds the query)
//   progress save    POST {quiz}/api/attempts/progress for LEARNERS learners, each on their own attempt
//   note generation  POST /api/generate-soap against the project's test AI gateway (answers at once)
// Prints per kind: requests, req/s, non-2xx, errors, timeouts, p50/p90/p99/max; the server's RSS after set-up,
// after the first minute, at the end and its peak; and the error lines of the server's log. Exits 1 on any error.
//
//   bun scripts/bench/soak.ts    (DURATION_S=600 TARGET=postgres|pglite LEARNERS=8 QUESTIONS=200 CONNECTIONS=4)
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAiServer, TEST_MODEL } from '../../test/support/ai-server'
import { makePdf } from '../../test/support/pdf'
import { freshDataDir, freshServerDatabase, redact, ROOT_DIR, rssMb, SERVER_URL, serverAvailable, spawnServer } from './support'

const DURATION_S = Number(process.env.DURATION_S ?? 600)
const LEARNERS = Number(process.env.LEARNERS ?? 8)
const QUESTIONS = Number(process.env.QUESTIONS ?? 200)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 4)
const TARGET = (process.env.TARGET ?? ((await serverAvailable()) ? 'postgres' : 'pglite')) as 'postgres' | 'pglite'
/** RSS may grow this much from the end of the first minute (caches filled, JIT done) to the end. */
const RSS_GROWTH_BOUND_MB = 50
const PASSWORD = 'soak-password-correct-1'
const QUIZ = '/quiz/api'

const gateway = await startAiServer()
gateway.reply(() => 'SUBJECTIVE: Two weeks of dry cough. OBJECTIVE: Afebrile, lungs clear. ASSESSMENT: Viral cough. PLAN: Fluids.')

const dataDir = freshDataDir('bench-soak')
const database = TARGET === 'postgres' ? await freshServerDatabase('bench_soak') : null
const server = await spawnServer({
  cmd: [process.execPath, 'src/main.ts'],
  env: {
    DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', LOG_LEVEL: 'info', TRUST_PROXY: 'true',
    JWT_SECRET: `soak-${crypto.randomUUID()}-${crypto.randomUUID()}`, DATA_ENCRYPTION_KEY: '0'.repeat(63) + '5',
    WORKERS: '1', ...gateway.env, EMBEDDING_MODEL: 'test-embedding',
  },
  readyPath: '/api/health',
})
const base = `http://127.0.0.1:${server.port}`
const logFile = join('/tmp', `bench-server-${server.port}.log`)

let setupAddress = 0
async function call<T>(path: string, init: { method?: string; token?: string; body?: unknown; form?: FormData; headers?: Record<string, string> } = {}): Promise<T> {
  setupAddress++
  const headers: Record<string, string> = { 'x-forwarded-for': `192.168.${setupAddress >> 8}.${setupAddress & 255}`, ...init.headers }
  if (init.token) headers.authorization = `Bearer ${init.token}`
  if (init.body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body !== undefined || init.form ? 'POST' : 'GET'), headers,
    body: init.form ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as T
}
const until = async (what: string, probe: () => Promise<boolean>) => {
  for (const started = Date.now(); !(await probe()); await Bun.sleep(200)) {
    if (Date.now() - started > 120_000) throw new Error(`timed out waiting for ${what}`)
  }
}

/** Five questions a page, options A-D, the answer and an explanation each: the regex extractor reads them. */
function questionPages(n: number): string[][] {
  const pages: string[][] = []
  for (let i = 1; i <= n; i++) {
    if ((i - 1) % 5 === 0) pages.push([])
    const topic = ['asthma', 'fractions', 'anaemia', 'photosynthesis', 'hypertension', 'grammar'][i % 6]
    pages.at(-1)!.push(`${i}. Which statement about ${topic} item ${i} is right?`, `A) First ${topic} ${i}`, `B) Second ${topic} ${i}`,
      `C) Third ${topic} ${i}`, `D) Fourth ${topic} ${i}`, 'Answer: B', `Explanation: The second, for ${topic} ${i}.`, '')
  }
  return pages
}

async function setUp() {
  const admin = await call<{ access_token: string }>(`${QUIZ}/auth/register`, { body: { email: 'soak-admin@example.test', password: PASSWORD, name: 'Soak admin' } })
  const form = new FormData()
  form.append('file', new File([await makePdf(questionPages(QUESTIONS))], 'soak-questions.pdf', { type: 'application/pdf' }))
  const doc = await call<{ id: number; total_pages?: number }>(`${QUIZ}/documents/upload`, { form, token: admin.access_token })
  await until('the document ready', async () => (await call<{ status: string }>(`${QUIZ}/documents/${doc.id}/status`, { token: admin.access_token })).status === 'ready')
  const pages = Math.ceil(QUESTIONS / 5)
  const section = await call<{ id: number }>(`${QUIZ}/documents/${doc.id}/sections`, { token: admin.access_token, body: { name: 'All', start_page: 1, end_page: pages } })
  const job = await call<{ job_id: string }>(`${QUIZ}/quizzes/`, {
    token: admin.access_token,
    body: { section_id: section.id, title: 'Soak quiz', mode: 'learning', time_limit_minutes: null, model_id: null, question_category_id: null, extraction_mode: 'regex' },
  })
  let quizId = 0
  await until('the extraction', async () => {
    const j = await call<{ status: string; quiz_id?: number; error?: string }>(`${QUIZ}/quizzes/job/${job.job_id}`, { token: admin.access_token })
    if (j.status === 'failed') throw new Error(`extraction failed: ${j.error}`)
    quizId = j.quiz_id ?? 0
    return j.status === 'completed'
  })
  await call(`${QUIZ}/quizzes/${quizId}/publish?published=true`, { method: 'PATCH', token: admin.access_token })
  const listed = await call<Array<{ id: number }> | { questions: Array<{ id: number }> }>(`${QUIZ}/quizzes/${quizId}/questions`, { token: admin.access_token })
  const questionIds = (Array.isArray(listed) ? listed : listed.questions).map((q) => q.id).slice(0, 20)

  const learners: Array<{ token: string; attemptId: number; session: string }> = []
  for (let i = 0; i < LEARNERS; i++) {
    const email = `soak-learner-${i}@example.test`
    await call(`${QUIZ}/admin/users`, { token: admin.access_token, body: { email, password: PASSWORD, name: `Learner ${i}` } })
    const { access_token } = await call<{ access_token: string }>(`${QUIZ}/auth/login`, { body: { email, password: PASSWORD } })
    const started = await call<{ id: number }>(`${QUIZ}/attempts/start?quiz_id=${quizId}`, { token: access_token, body: {} })
    learners.push({ token: access_token, attemptId: started.id, session: `soak-device-${i}` })
  }
  await call('/api/auth/register', { body: { email: 'soak-clinician@example.test', password: PASSWORD, name: 'Soak clinician' } })
  const { token: clinicalToken } = await call<{ token: string }>('/api/auth/login', {
    headers: { 'x-client': 'mobile' }, body: { email: 'soak-clinician@example.test', password: PASSWORD },
  })
  return { quizId, questionIds, learners, clinicalToken, adminToken: admin.access_token }
}

const setup = await setUp()
const json = { 'content-type': 'application/json' }
const plan = {
  url: base,
  durationS: DURATION_S,
  kinds: [
    {
      name: 'sign-in', connections: CONNECTIONS, method: 'POST', path: `${QUIZ}/auth/login`, headers: json,
      rotate: [
        { path: `${QUIZ}/auth/login`, body: JSON.stringify({ email: 'soak-learner-0@example.test', password: PASSWORD }) },
        { path: '/api/auth/login', headers: { 'x-client': 'mobile' }, body: JSON.stringify({ email: 'soak-clinician@example.test', password: PASSWORD }) },
      ],
    },
    {
      name: 'bank search', connections: CONNECTIONS, method: 'GET', path: `${QUIZ}/questions/bank`,
      headers: { authorization: `Bearer ${setup.adminToken}` },
      rotate: ['asthma', 'fractions item 1', 'anaemia', 'second', 'photosynthesis item 3'].flatMap((q) => ['keyword', 'hybrid'].map((mode) => ({
        path: `${QUIZ}/questions/bank?q=${encodeURIComponent(q)}&search_mode=${mode}&limit=20`,
      }))),
    },
    {
      name: 'progress save', connections: CONNECTIONS, method: 'POST', path: `${QUIZ}/attempts/progress`, headers: json,
      rotate: setup.learners.map((l, i) => ({
        headers: { authorization: `Bearer ${l.token}`, 'x-quiz-session': l.session },
        body: JSON.stringify({
          quiz_id: setup.quizId, attempt_id: l.attemptId, current_idx: i % 20, mode: 'learning', voice: null, time_left: null,
          started_at: null, total_time: null, answers: Object.fromEntries(setup.questionIds.slice(0, 1 + (i % 20)).map((id) => [String(id), 'Second'])),
        }),
      })),
    },
    {
      name: 'note generation', connections: CONNECTIONS, method: 'POST', path: '/api/generate-soap',
      headers: { ...json, authorization: `Bearer ${setup.clinicalToken}` },
      body: JSON.stringify({
        transcript: 'Doctor: What brings you in? Patient: This cough for two weeks, worse at night, no fever. '.repeat(20),
        patientAge: '34 years', patientGender: 'female', type: 'follow-up', model: TEST_MODEL, physicianMemories: 'Bullet the plan.',
      }),
    },
  ],
}
const planFile = join(dataDir, 'soak-plan.json')
writeFileSync(planFile, JSON.stringify(plan))

const rss = { setup: rssMb(server.proc.pid), firstMinute: NaN, end: NaN, peak: 0 }
const began = Date.now()
const sampler = setInterval(() => {
  const now = rssMb(server.proc.pid)
  rss.peak = Math.max(rss.peak, now)
  if (Number.isNaN(rss.firstMinute) && Date.now() - began >= Math.min(60_000, (DURATION_S * 1000) / 2)) rss.firstMinute = now
}, 1_000)
console.log(`soak: ${DURATION_S} s on ${TARGET === 'postgres' ? `PostgreSQL (${redact(SERVER_URL)})` : 'PGlite'}, ` +
  `${plan.kinds.length} kinds x ${CONNECTIONS} connections, ${LEARNERS} learners, ${QUESTIONS} questions, bun ${Bun.version}`)
const load = Bun.spawn(['node', join(ROOT_DIR, 'scripts/bench/soak-load.mjs'), planFile], { cwd: ROOT_DIR, stdout: 'pipe', stderr: 'inherit' })
const out = await new Response(load.stdout).text()
if ((await load.exited) !== 0) throw new Error('the load tool failed')
clearInterval(sampler)
rss.end = rssMb(server.proc.pid)

interface KindResult { name: string; requests: number; rps: number; non2xx: number; errors: number; timeouts: number; statusCodes: Record<string, { count: number }>; p50: number; p90: number; p99: number; max: number }
const results = out.trim().split('\n').map((line) => JSON.parse(line) as KindResult)
const errorLines = readFileSync(logFile, 'utf8').split('\n').filter((l) => /"level":"(error|fatal)"/.test(l))
await server.stop()
await gateway.close()
await database?.drop()
rmSync(dataDir, { recursive: true, force: true })

const header = ['kind', 'requests', 'req/s', 'non-2xx', 'errors', 'timeouts', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms']
const rows = results.map((r) => [r.name, String(r.requests), r.rps.toFixed(0), String(r.non2xx), String(r.errors), String(r.timeouts),
  String(r.p50), String(r.p90), String(r.p99), String(r.max)])
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
console.log(line(header))
for (const row of rows) console.log(line(row))
const growth = rss.end - rss.firstMinute
console.log(`server RSS: ${rss.setup.toFixed(0)} MB after set-up, ${rss.firstMinute.toFixed(0)} MB after the first minute, ` +
  `${rss.end.toFixed(0)} MB at the end (growth ${growth.toFixed(0)} MB, bound ${RSS_GROWTH_BOUND_MB} MB), peak ${rss.peak.toFixed(0)} MB`)
for (const r of results) if (r.non2xx) console.log(`${r.name}: status codes ${JSON.stringify(r.statusCodes)}`)
console.log(`server log: ${errorLines.length} error lines${errorLines.length ? `, first: ${errorLines[0]!.slice(0, 300)}` : ''}`)
const failed = results.some((r) => r.non2xx || r.errors || r.timeouts) || errorLines.length > 0 || growth > RSS_GROWTH_BOUND_MB
console.log(failed ? 'soak: FAILED' : 'soak: zero errors, memory within its bound')
process.exit(failed ? 1 : 0)

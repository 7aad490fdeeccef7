// Note generation (issue 15): what the service adds around the AI gateway call. The project's test gateway
// (test/support/ai-server.ts) answers at once, so the figures are the overhead alone: the same SOAP request
// - straight to the gateway (one HTTP POST to /v1/chat/completions, the floor),
// - through the core's gateway client (core.ai.generate: the AI SDK, the timeout, the error mapping),
// - through the app (POST /api/generate-soap via app.fetch: session check, field checks, model catalogue, prompt
//   template and memories, the gateway call, the usage row), as JSON and as an event stream read to its end,
// - and, for scale, GET /api/models: any signed-in request's cost (envelope, rate rule, session, one query).
// Each figure's p50 and p99, and the service's overhead over the bare call. In-memory PGlite, and PostgreSQL when
// BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) answers. Settings: ROUNDS (default 300).
import { hashPassword } from '../../src/auth/password'
import { startAiServer, TEST_MODEL } from '../../test/support/ai-server'
import { bootForBench, freshDataDir, freshServerDatabase, quantile, redact, sampleMs, SERVER_URL, serverAvailable } from './support'

const ROUNDS = Number(process.env.ROUNDS ?? 300)
const PASSWORD = 'Correct-horse-battery-9'
const NOTE = 'SUBJECTIVE: Two weeks of dry cough, worse at night. OBJECTIVE: Afebrile, lungs clear. '.repeat(8)
const SOAP = {
  transcript: 'Doctor: What brings you in? Patient: This cough for two weeks, worse at night, no fever. '.repeat(40),
  patientAge: '34 years', patientGender: 'female', type: 'follow-up', model: TEST_MODEL,
  physicianMemories: 'Bullet the plan. Metric units.',
}

const gateway = await startAiServer()
gateway.reply(() => NOTE)



async function run(target: 'pglite' | 'postgres'): Promise<void> {
  const server = target === 'postgres' ? await freshServerDatabase('bench_generation') : null
  const app = await bootForBench({
    DATA_DIR: freshDataDir('bench-generation'), DATABASE_URL: server?.url ?? 'memory://', TRUST_PROXY: 'true', LOG_LEVEL: 'silent', ...gateway.env,
  })
  try {
    await app.core.db.sql`
      insert into clinical.users (name, email, password_hash, email_verified) values ('Bench', 'bench@example.test', ${await hashPassword(PASSWORD)}, true)`
    const login = await app.fetch(new Request('http://localhost/api/auth/login', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'mobile' },
      body: JSON.stringify({ email: 'bench@example.test', password: PASSWORD }),
    }))
    const { token } = (await login.json()) as { token: string }

    let ip = 0
    const viaApp = (accept: string) => async () => {
      // A new client address per request: the API-wide limit (200 per minute per address) must not answer instead.
      ip++
      const res = await app.fetch(new Request('http://localhost/api/generate-soap', {
        method: 'POST',
        headers: {
          'content-type': 'application/json', accept, authorization: `Bearer ${token}`,
          'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`,
        },
        body: JSON.stringify(SOAP),
      }))
      const text = await res.text()
      if (res.status !== 200 || !text.includes('SUBJECTIVE')) throw new Error(`generate-soap answered ${res.status}: ${text.slice(0, 200)}`)
    }
    const listing = async () => {
      ip++
      const res = await app.fetch(new Request('http://localhost/api/models', {
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}` },
      }))
      if (res.status !== 200) throw new Error(`GET /api/models answered ${res.status}`)
      await res.arrayBuffer()
    }
    const prompt = `Write a SOAP note from this visit.\n${SOAP.transcript}`
    const bare = async () => {
      const res = await fetch(`${gateway.url}/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.env.AI_API_KEY}` },
        body: JSON.stringify({ model: TEST_MODEL, messages: [{ role: 'system', content: 'You are a clinical documentation assistant.' }, { role: 'user', content: prompt }] }),
      })
      await res.json()
    }
    const core = async () => {
      await app.core.ai.generate({ model: TEST_MODEL }, { system: 'You are a clinical documentation assistant.', messages: [{ role: 'user', content: prompt }] })
    }

    const figures: Array<[string, number[]]> = [
      ['gateway, bare HTTP call', await sampleMs(ROUNDS, bare)],
      ['gateway through core.ai.generate', await sampleMs(ROUNDS, core)],
      ['POST /api/generate-soap (JSON)', await sampleMs(ROUNDS, viaApp('application/json'))],
      ['POST /api/generate-soap (event stream)', await sampleMs(ROUNDS, viaApp('text/event-stream'))],
      ['GET /api/models (a signed-in request, for scale)', await sampleMs(ROUNDS, listing)],
    ]
    const fmt = (ms: number) => ms.toFixed(2).padStart(8)
    console.log(`\n${target}${server ? ` (${redact(SERVER_URL)})` : ''}: ${ROUNDS} requests per figure, one at a time (ms)`)
    console.log(`${'figure'.padEnd(50)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}`)
    for (const [name, samples] of figures) console.log(`${name.padEnd(50)} ${fmt(quantile(samples, 0.5))} ${fmt(quantile(samples, 0.99))}`)
    const base = figures[0]![1]
    for (const [name, samples] of figures.slice(2, 4)) {
      console.log(`overhead of ${name.replace('POST /api/generate-soap ', '')} over the bare call: p50 ${(quantile(samples, 0.5) - quantile(base, 0.5)).toFixed(2)} ms, p99 ${(quantile(samples, 0.99) - quantile(base, 0.99)).toFixed(2)} ms`)
    }
    const [usage] = await app.core.db.sql<{ n: number }>`select count(*)::int as n from clinical.ai_usage`
    console.log(`usage rows written: ${usage!.n}`)
  } finally {
    await app.shutdown()
    await server?.drop()
  }
}

await run('pglite')
if (await serverAvailable()) await run('postgres')
else console.log(`\nPostgreSQL at ${redact(SERVER_URL)} does not answer: skipped`)
await gateway.close()

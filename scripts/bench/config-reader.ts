// The configuration reader's cost on a generation request: POST /api/generate-soap through the app (app.fetch, in
// process) against the project's test gateway answering at once, with the settings cache as shipped
// (SETTINGS_TTL_MS) and with its TTL at 0 (every read queries clinical.app_config, as before the cache). Each figure
// is CONCURRENCY requests in flight for DURATION_S seconds after a warm-up: req/s, p50 and p99, and the settings
// queries per request (counted by a wrapper around the app's Db). The two variants alternate over ROUNDS so a
// busier moment of the machine does not favour one. In-memory PGlite, and PostgreSQL when BENCH_DATABASE_URL
// (default postgres://postgres@127.0.0.1:5432/postgres) answers.
// Settings: CONCURRENCY (default 8), DURATION_S (default 10), ROUNDS (default 2), WARMUP (requests, default 100).
import { hashPassword } from '../../src/auth/password'
import { boot, type Booted } from '../../src/app'
import { loadConfig } from '../../src/config'
import { compile, openDb, type Db } from '../../src/core/db'
import { createLogger } from '../../src/core/log'
import { SETTINGS_TTL_MS } from '../../src/core/settings'
import { plugins } from '../../plugins'
import { startAiServer, TEST_MODEL } from '../../test/support/ai-server'
import { freshDataDir, freshServerDatabase, quantile, redact, SERVER_URL, serverAvailable } from './support'

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8)
const DURATION_S = Number(process.env.DURATION_S ?? 10)
const ROUNDS = Number(process.env.ROUNDS ?? 2)
const WARMUP = Number(process.env.WARMUP ?? 100)
const PASSWORD = 'Correct-horse-battery-9'
const SOAP = {
  transcript: 'Doctor: What brings you in? Patient: This cough for two weeks, worse at night, no fever. '.repeat(40),
  patientAge: '34 years', patientGender: 'female', type: 'follow-up', model: TEST_MODEL,
}

const gateway = await startAiServer()
gateway.reply(() => 'SUBJECTIVE: Two weeks of dry cough. OBJECTIVE: Lungs clear. ASSESSMENT: Cough. PLAN: Review.')

/** The app's Db, counting the queries that read the settings table (transactions included). */
function counting(db: Db, counter: { settings: number }): Db {
  return {
    ...db,
    sql: (strings, ...values) => {
      if (compile(strings, values).text.includes('app_config')) counter.settings++
      return db.sql(strings, ...values)
    },
    transaction: (fn) => db.transaction((tx) => fn(counting(tx, counter))),
  }
}


interface Figure { reqPerS: number; p50: number; p99: number; settingsPerRequest: number }

async function startApp(target: 'pglite' | 'postgres', ttlMs: number) {
  const server = target === 'postgres' ? await freshServerDatabase('bench_config') : null
  const dataDir = freshDataDir('bench-config')
  const counter = { settings: 0 }
  const db = counting(await openDb({ url: server?.url ?? 'memory://', dataDir }), counter)
  const config = loadConfig({
    DATA_DIR: dataDir, DATABASE_URL: server?.url ?? 'memory://', TRUST_PROXY: 'true', LOG_LEVEL: 'silent', WORKERS: '0',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123456789', DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1', ...gateway.env,
  })
  const app: Booted = await boot(config, plugins, { log: createLogger('silent'), db, settingsTtlMs: ttlMs })
  await db.sql`insert into clinical.users (name, email, password_hash, email_verified) values ('Bench', 'bench@example.test', ${await hashPassword(PASSWORD)}, true)`
  const login = await app.fetch(new Request('http://localhost/api/auth/login', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'mobile' },
    body: JSON.stringify({ email: 'bench@example.test', password: PASSWORD }),
  }))
  const { token } = (await login.json()) as { token: string }
  return {
    app, counter, token,
    async close() {
      await app.shutdown()
      await server?.drop()
    },
  }
}

async function measure(started: Awaited<ReturnType<typeof startApp>>): Promise<Figure> {
  let ip = 0
  const once = async () => {
    // A new client address per request: the API-wide limit (200 per minute per address) must not answer instead.
    ip++
    const res = await started.app.fetch(new Request('http://localhost/api/generate-soap', {
      method: 'POST',
      headers: {
        'content-type': 'application/json', authorization: `Bearer ${started.token}`,
        'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`,
      },
      body: JSON.stringify(SOAP),
    }))
    const text = await res.text()
    if (res.status !== 200) throw new Error(`generate-soap answered ${res.status}: ${text.slice(0, 200)}`)
  }
  for (let i = 0; i < WARMUP; i++) await once()
  const latencies: number[] = []
  const queriesBefore = started.counter.settings
  const until = performance.now() + DURATION_S * 1000
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) {
      const s = performance.now()
      await once()
      latencies.push(performance.now() - s)
    }
  }))
  const elapsedS = (performance.now() - t0) / 1000
  latencies.sort((a, b) => a - b)
  return {
    reqPerS: latencies.length / elapsedS, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99),
    settingsPerRequest: (started.counter.settings - queriesBefore) / latencies.length,
  }
}

async function run(target: 'pglite' | 'postgres'): Promise<void> {
  const variants: Array<[string, number]> = [[`cache (TTL ${SETTINGS_TTL_MS} ms)`, SETTINGS_TTL_MS], ['no cache (TTL 0)', 0]]
  const results = new Map<string, Figure[]>(variants.map(([name]) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const [name, ttlMs] of order) {
      const started = await startApp(target, ttlMs)
      try {
        results.get(name)!.push(await measure(started))
      } finally {
        await started.close()
      }
    }
  }
  console.log(`\n${target}${target === 'postgres' ? ` (${redact(SERVER_URL)})` : ''}: POST /api/generate-soap, ${CONCURRENCY} in flight, ${DURATION_S} s x ${ROUNDS} rounds`)
  console.log(`${'reader'.padEnd(26)} ${'req/s'.padStart(16)} ${'p50 ms'.padStart(16)} ${'p99 ms'.padStart(16)} ${'settings q/req'.padStart(15)}`)
  const each = (figures: Figure[], pick: (f: Figure) => number, digits: number) => figures.map((f) => pick(f).toFixed(digits)).join(' / ')
  for (const [name, figures] of results) {
    console.log(`${name.padEnd(26)} ${each(figures, (f) => f.reqPerS, 0).padStart(16)} ${each(figures, (f) => f.p50, 2).padStart(16)} `
      + `${each(figures, (f) => f.p99, 2).padStart(16)} ${each(figures, (f) => f.settingsPerRequest, 3).padStart(15)}`)
  }
}

await run('pglite')
if (await serverAvailable()) await run('postgres')
else console.log(`\nPostgreSQL at ${redact(SERVER_URL)} does not answer: skipped`)
await gateway.close()

// Spec 2, login rule 1: unknown email, wrong password and disabled account must cost the same time, so the
// answer's timing does not tell which accounts exist. Times POST /api/auth/login through the real app
// (app.handle, in-memory PGlite) for the three cases, interleaved so drift hits them alike, and prints each
// case's median, p10 and p90, and the largest difference of medians. A correct login is printed for scale.
// Settings: ROUNDS (default 60) requests per case.
import { tmpdir } from 'node:os'
import { boot } from '../../src/app'
import { loadConfig } from '../../src/config'
import { hashPassword } from '../../src/auth/password'
import { createLogger } from '../../src/core/log'
import { plugins } from '../../plugins'
import { quantile } from './support'

const ROUNDS = Number(process.env.ROUNDS ?? 60)
const PASSWORD = 'Correct-horse-battery-9'

const config = loadConfig({
  DATA_DIR: tmpdir(), DATABASE_URL: 'memory://', WORKERS: '0', TRUST_PROXY: 'true', LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123', DATA_ENCRYPTION_KEY: 'a'.repeat(64),
})
const app = await boot(config, plugins, { log: createLogger('silent') })
const hash = await hashPassword(PASSWORD)
await app.core.db.sql`
  insert into clinical.users (name, email, password_hash, email_verified, disabled)
  values ('Active', 'active@example.test', ${hash}, true, false), ('Disabled', 'disabled@example.test', ${hash}, true, true)`

const cases = {
  'unknown email': { email: 'nobody@example.test', password: PASSWORD },
  'wrong password': { email: 'active@example.test', password: 'Wrong-password-123' },
  'disabled account': { email: 'disabled@example.test', password: PASSWORD },
  'correct (for scale)': { email: 'active@example.test', password: PASSWORD },
} as const
type Case = keyof typeof cases

let ip = 0
async function once(name: Case): Promise<number> {
  // A new client address each time: the login limit (10 per 15 minutes per address) must not answer instead.
  ip++
  const started = performance.now()
  const res = await app.fetch(new Request('http://localhost/api/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-client': 'mobile', 'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}` },
    body: JSON.stringify(cases[name]),
  }))
  await res.arrayBuffer()
  const ms = performance.now() - started
  const expected = name === 'correct (for scale)' ? 200 : 401
  if (res.status !== expected) throw new Error(`${name}: expected ${expected}, got ${res.status}`)
  return ms
}

const names = Object.keys(cases) as Case[]
for (const name of names) await once(name) // warm-up: the dummy hash, JIT, the first queries
const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<Case, number[]>
for (let round = 0; round < ROUNDS; round++) {
  for (const name of names) samples[name].push(await once(name))
}

const fmt = (ms: number) => ms.toFixed(1).padStart(7)
console.log(`POST /api/auth/login, ${ROUNDS} requests per case, interleaved (ms)\n`)
console.log(`${'case'.padEnd(22)} ${'median'.padStart(7)} ${'p10'.padStart(7)} ${'p90'.padStart(7)}`)
for (const name of names) {
  console.log(`${name.padEnd(22)} ${fmt(quantile(samples[name], 0.5))} ${fmt(quantile(samples[name], 0.1))} ${fmt(quantile(samples[name], 0.9))}`)
}
const medians = names.slice(0, 3).map((n) => quantile(samples[n], 0.5))
const spread = Math.max(...medians) - Math.min(...medians)
console.log(`\nlargest difference of the three refusal medians: ${spread.toFixed(1)} ms (${((spread / Math.min(...medians)) * 100).toFixed(1)}%)`)
await app.shutdown()

// A property-based fuzzer over every operation of both OpenAPI documents (spec 1 and 2, Errors): requests made
// from each operation's own schemas, valid and mutated (test/support/fuzz.ts), sent anonymously and as an admin
// of the operation's service. The properties: no answer is a 5xx; every 4xx carries a message in the service's
// error shape; a refused request to a state-changing operation changes no stored row. FUZZ_SEED replays a run,
// FUZZ_RUNS sets the runs per operation (signed in; anonymous runs are a third of that).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { rawSql } from '../src/core/db'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { MOBILE, userWithSession } from './support/clinical'
import { anonymousHeadersArb, readOperations, render, requestArb, type FuzzRequest, type Hints, type Operation, type Parts } from './support/fuzz'
import { API, createAccount, makeRegexQuiz, registerAdmin, type Account } from './support/quiz'

const SEED = Number(process.env.FUZZ_SEED ?? 20_250_611)
const RUNS = Number(process.env.FUZZ_RUNS ?? 70)
/** At the default runs a run sends at least this many requests per database (the issue's floor). */
const MIN_REQUESTS = 20_000
const DEFAULT_RUNS = RUNS === 70
/** Only the operations whose `METHOD /path` contains this text, to replay one. */
const ONLY = process.env.FUZZ_ONLY ?? ''
/** Refused requests checked against one fingerprint pair; 1 names the very request that changed a row. */
const BATCH = Number(process.env.FUZZ_BATCH ?? 10)

/** Values the servers hold that no schema lists: the AI gateway's model (test/support/ai-server.ts). */
const HINTS: Hints = {
  model: [TEST_MODEL], model_id: [TEST_MODEL], stt_model: [TEST_MODEL], voice: ['alloy', `${TEST_MODEL}:alloy`],
}

/**
 * Operations that change what every later request meets, run after the others: mail transport settings (a
 * fuzzed SMTP host would make each later mail wait for its timeout), AI model entries (a fuzzed gateway address
 * makes the AI routes answer 502 as documented), sign-in and registration rules.
 */
const SETTINGS = new Set([
  'PUT /api/auth/oidc/config', 'POST /api/admin/settings/registration', 'PUT /api/admin/config/smtp', 'PUT /api/admin/config/{key}',
  'POST /api/admin/config/reset-defaults', 'POST /api/admin/config/prompts/{key}/reset', 'PUT /api/admin/config/models/toggle',
  'PUT /api/admin/config/models/default', 'POST /api/admin/config/models/custom',
  'PUT /quiz/api/admin/settings', 'POST /quiz/api/admin/models', 'PUT /quiz/api/admin/models/{model_id}', 'DELETE /quiz/api/admin/models/{model_id}',
  'POST /quiz/api/admin/models/{model_id}/test',
])

/**
 * Operations that end a session or an account when they succeed: run last, each by a throwaway admin of its own,
 * since a fuzzed id can name the main callers (disable, delete) or the caller itself (logout).
 */
const SESSION_ENDING = new Set([
  'POST /api/auth/logout', 'POST /api/auth/change-password', 'POST /api/admin/users/{id}/disable', 'DELETE /quiz/api/admin/users/{user_id}',
])

/**
 * Operations whose job is to reach a service outside this one (a provider, or an address the caller names): their
 * documents give 502 for one that cannot be reached, which here, without a network, is each of them.
 */
const UPSTREAM = new Set([
  'POST /quiz/api/admin/litellm/models', 'POST /quiz/api/admin/tts/voices', 'POST /quiz/api/admin/models/{model_id}/test',
  'POST /quiz/api/admin/embedding/test', 'POST /quiz/api/nextcloud/test', 'POST /quiz/api/nextcloud/files', 'POST /quiz/api/nextcloud/download',
  'POST /api/nextcloud/connect', 'GET /api/admin/learning/webdav-browse', 'GET /api/admin/config/models/discover',
])
/**
 * Operations documented to answer an HTML page (links followed from a mail or by a browser), refusals included;
 * any other may answer one to a client that asks for HTML.
 */
const PAGES = new Set(['GET /api/auth/verify-email', 'GET /api/auth/oidc', 'GET /api/auth/oidc/callback'])

// Test apps mail through the log transport (no SMTP_HOST or RESEND_API_KEY reaches them), so the operations that
// mail (register, forgot-password, contact, the test mail) run in the loop like the others and nothing is sent.
/** Operations that mail after their answer, writing the mail's one-time token then: a success waits for it. */
const MAILING = new Set([
  'POST /api/auth/register', 'POST /api/auth/resend-verification', 'POST /api/auth/forgot-password',
  'POST /quiz/api/auth/register', 'POST /quiz/api/auth/resend-verification', 'POST /quiz/api/auth/forgot-password', 'POST /quiz/api/contact',
])

/** Tables left out of the fingerprint: each is written by refused requests on purpose. */
const UNFINGERPRINTED_TABLES: Record<string, string> = {
  'clinical.audit_log': 'failed sign-ins and denied actions are audited',
  'clinical.access_log': 'every sign-in attempt is recorded, failed ones too',
}
/** Columns left out: counters and touches every request moves. */
const UNFINGERPRINTED_COLUMNS: Record<string, string[]> = {
  'clinical.users': ['api_calls'], // counts API calls, refused ones included
  'clinical.user_sessions': ['last_activity'], // the sliding session's touch
}
// The core schema (rate-limit hits, API metrics, the job queue, the temporary store) is not fingerprinted: rate
// limits and metrics count every request by design.

interface Caller {
  name: 'anonymous' | 'admin'
  token?: string
}

interface Failure { service: Operation['service']; op: string; caller: string; problem: string; request: string }

describe.each(databaseTargets())('OpenAPI fuzzer (%s)', (target) => {
  let app: TestApp
  let ai: AiServer
  let ops: Operation[]
  let clinicalAdmin: Caller
  let quizAdmin: Account
  let fingerprintSql: ReturnType<typeof rawSql>
  const failures: Failure[] = []
  const statuses = new Map<number, number>()
  let requests = 0
  /** Operations that answered the admin with a success at least once: how far past validation the run got. */
  const succeeded = new Set<string>()
  let checkedRefusals = 0
  let uncheckedRefusals = 0

  beforeAll(async () => {
    ai = await startAiServer()
    app = await startTestApp({ target, env: { ...ai.env } })
    quizAdmin = await registerAdmin(app)
    clinicalAdmin = { name: 'admin', token: (await userWithSession(app, 'admin')).token }
    // quizzes with questions, so that small ids name rows and the handlers past the lookups run
    for (const mode of ['learning', 'timed', 'learning'] as const) await makeRegexQuiz(app, quizAdmin, { n: 4, mode })
    ops = [
      ...readOperations((await (await app.get('/docs/json')).json()) as never, 'clinical'),
      ...readOperations((await (await app.get(`/quiz/docs/json`)).json()) as never, 'quiz'),
    ].filter((op) => op.key.includes(ONLY))
      // deletions last, so the rows the other operations name are still there for them
      .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))
    fingerprintSql = await fingerprintQuery()
    console.log(`fuzz ${target}: seed ${SEED} (FUZZ_SEED), ${RUNS} runs per operation (FUZZ_RUNS), ${ops.length} operations`)
  }, 120_000)
  afterAll(async () => {
    const counts = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(' ')
    console.log(`fuzz ${target}: ${requests} requests; ${succeeded.size} of ${ops.length} operations answered a success; ` +
      `${checkedRefusals} refusals checked against the fingerprint (${uncheckedRefusals} not: a success in their batch); statuses ${counts}`)
    await app.close()
    await ai.close()
  })

  /** One query over every fingerprinted table: its row count and a hash of its rows. */
  async function fingerprintQuery() {
    const tables = await app.db.sql<{ name: string }>`
      select table_schema || '.' || table_name as name from information_schema.tables
      where table_schema in ('clinical', 'quiz') and table_type = 'BASE TABLE' order by 1`
    const parts = tables.filter((t) => !(t.name in UNFINGERPRINTED_TABLES)).map(({ name }) => {
      const drop = UNFINGERPRINTED_COLUMNS[name]
      const row = drop ? `(to_jsonb(x)${drop.map((c) => ` - '${c}'`).join('')})::text` : 'x::text'
      // a sum of row hashes: independent of row order, so no sort
      return `select '${name}' as t, count(*)::int as n, coalesce(sum(hashtextextended(${row}, 0)), 0)::text as h from ${name} x`
    })
    return rawSql(parts.join(' union all '))
  }
  async function fingerprint(): Promise<Map<string, string>> {
    const rows = await app.db.sql<{ t: string; n: number; h: string }>`${fingerprintSql}`
    return new Map(rows.map((r) => [r.t, `${r.n}:${r.h}`]))
  }
  const changedTables = (a: Map<string, string>, b: Map<string, string>) => [...a].filter(([t, v]) => b.get(t) !== v).map(([t]) => t)
  /**
   * The fingerprint once what a success left running after its answer has landed (registration writes the
   * verification token in the background): two equal readings a moment apart.
   */
  async function settledFingerprint(waitMs = 5): Promise<Map<string, string>> {
    let last = await fingerprint()
    for (let i = 0; i < 20; i++) {
      await Bun.sleep(waitMs)
      const next = await fingerprint()
      if (changedTables(last, next).length === 0) return next
      last = next
    }
    return last
  }

  // Fresh client addresses, so the per-address limits (200 API requests a minute, 10 logins) never answer in place
  // of the handler.
  let ipSeq = 0
  const nextIp = () => {
    const n = ipSeq++
    return `10.${100 + (Math.floor(n / 62_500) % 100)}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`
  }

  async function send(op: Operation, req: FuzzRequest, caller: Caller): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...(op.service === 'clinical' ? MOBILE : {}), ...req.headers }
    return app.request(req.url, { method: req.method, headers, body: req.body, token: caller.token, ip: nextIp() })
  }

  /** What is wrong with an answer: a 5xx, or a 4xx without the service's message; null when nothing is. */
  async function problemOf(op: Operation, req: FuzzRequest, res: Response): Promise<string | null> {
    const text = await res.text()
    if ((res.status === 502 || res.status === 504) && UPSTREAM.has(op.key)) return messageOf(op, text) ? null : `${res.status} without a message: ${text.slice(0, 200)}`
    if (res.status >= 500) return `${res.status}: ${text.slice(0, 200)}`
    if (res.status < 400) return null
    const page = PAGES.has(op.key) || (req.headers.accept ?? '').includes('text/html')
    if (page && res.headers.get('content-type')?.startsWith('text/html')) return /<h1|<p/.test(text) ? null : `${res.status} page without a message`
    return messageOf(op, text) ? null : `${res.status} without the service's error message: ${text.slice(0, 200)}`
  }

  /** Whether an error body is JSON in the service's shape with a message. */
  function messageOf(op: Operation, text: string): boolean {
    let body: Record<string, unknown>
    try {
      body = JSON.parse(text)
    } catch {
      return false
    }
    if (op.service === 'clinical') {
      const message = typeof body.error === 'string' && body.error ? body.error : typeof body.message === 'string' ? body.message : ''
      return body.success === false && message.trim() !== ''
    }
    const detail = body.detail
    return (typeof detail === 'string' && detail.trim() !== '') ||
      (Array.isArray(detail) && detail.length > 0 && detail.every((d) => typeof d?.msg === 'string' && d.msg !== ''))
  }

  const seedOf = (op: Operation, caller: Caller) => (SEED + [...`${op.key} ${caller.name}`].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 0)) | 0

  async function fuzz(op: Operation, caller: Caller, numRuns: number) {
    const fails = (problem: string, reqs: FuzzRequest[]) => {
      if (failures.filter((f) => f.op === op.key && f.caller === caller.name).length >= 3) return
      const request = reqs.slice(0, 5).map((r) => `${r.label} [${r.mutation}]`).join('\n    ')
      failures.push({ service: op.service, op: op.key, caller: caller.name, problem, request })
    }
    // Refused requests are checked in batches, a fingerprint before and after each: a batch ends before a request
    // that may well succeed (a valid one), at any answer that is not a refusal, and after BATCH refusals.
    let before = op.method !== 'GET' ? await settledFingerprint() : null
    let batch: FuzzRequest[] = []
    const closeBatch = async () => {
      const after = await fingerprint()
      const changed = changedTables(before!, after)
      if (changed.length > 0) fails(`refused, yet changed ${changed.join(', ')} (one of ${batch.length}; FUZZ_BATCH=1 names it)`, batch)
      checkedRefusals += batch.length
      before = after
      batch = []
    }
    const arb: fc.Arbitrary<Parts> = caller.token
      ? requestArb(op, HINTS)
      : fc.tuple(requestArb(op, HINTS), anonymousHeadersArb).map(([parts, headers]) => ({ ...parts, headers: { ...parts.headers, ...headers } }))
    await fc.assert(fc.asyncProperty(arb, async (parts) => {
      if (before && batch.length > 0 && parts.mutation === 'valid') await closeBatch()
      const req = render(op, parts)
      const res = await send(op, req, caller)
      requests++
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (caller.token && res.status < 300) succeeded.add(op.key)
      const problem = await problemOf(op, req, res)
      if (problem) fails(problem, [req])
      if (!before) return
      if (res.status >= 400 && res.status < 500) {
        batch.push(req)
        if (batch.length >= BATCH) await closeBatch()
      } else {
        // an unexpected success inside a batch leaves its refusals unchecked: counted, not failed
        uncheckedRefusals += batch.length
        batch = []
        before = await settledFingerprint(MAILING.has(op.key) ? 50 : 5)
      }
    }), { seed: seedOf(op, caller), numRuns })
    if (before && batch.length > 0) await closeBatch()
  }

  /** The admin's session still works; when an operation ended it, that is a failure and a new session goes on. */
  async function stillSignedIn(op: Operation) {
    if (op.service === 'clinical') {
      if ((await app.get('/api/auth/me', { token: clinicalAdmin.token, headers: MOBILE })).status === 200) return
      failures.push({ service: op.service, op: op.key, caller: 'admin', problem: 'ended the caller\'s session', request: '' })
      clinicalAdmin = { name: 'admin', token: (await userWithSession(app, 'admin')).token }
    } else {
      if ((await app.get(`${API}/auth/me`, { token: quizAdmin.token })).status === 200) return
      failures.push({ service: op.service, op: op.key, caller: 'admin', problem: 'ended the caller\'s session', request: '' })
      quizAdmin = await createAccount(app, quizAdmin, 'admin')
    }
  }

  const caller = (op: Operation): Caller => (op.service === 'clinical' ? clinicalAdmin : { name: 'admin', token: quizAdmin.token })
  const report = (group: string, service?: Operation['service']) => failures
    .filter((f) => groupOf(f.op) === group && (!service || f.service === service))
    .map((f) => `${f.op} (${f.caller}): ${f.problem}\n    ${f.request}`)
  const groupOf = (key: string) => (SETTINGS.has(key) ? 'settings' : SESSION_ENDING.has(key) ? 'session' : 'main')

  // Defects the fuzzer found, pinned as requests of their own.
  describe('found by the fuzzer', () => {
    const json = { 'content-type': 'application/json' }

    it('a body key named like an Object member (constructor, __proto__) is a 422 naming it, not a 500', async () => {
      const body = `{"transcript":"Cough for two days.","patientAge":"7 years","patientGender":"female","model":"${TEST_MODEL}",` +
        '"type":"follow-up","constructor":"x","__proto__":{"role":"admin"}}'
      const res = await app.request('/api/generate-soap', { method: 'POST', body, headers: { ...MOBILE, ...json }, token: clinicalAdmin.token, ip: nextIp() })
      expect(res.status).toBe(422)
      const answer = (await res.json()) as { success: boolean; error: string; fields: Record<string, string> }
      expect(answer).toMatchObject({ success: false, code: 'invalid_fields' })
      expect(Object.keys(answer.fields)).toEqual(expect.arrayContaining(['constructor', '__proto__']))
      expect(answer.error).toStartWith('constructor: ')
    })

    it('text with an unpaired surrogate is a 400 invalid_text where it would be stored as JSON, and nothing is stored', async () => {
      const before = await (await app.get(`${API}/admin/settings`, { token: quizAdmin.token })).json()
      for (const [path, body] of [[`${API}/admin/settings`, '{"embedding_model":"\\ud800"}'], [`${API}/auth/me/settings`, '{"theme":"x\\udc00"}']] as const) {
        const res = await app.request(path, { method: 'PUT', body, headers: json, token: quizAdmin.token, ip: nextIp() })
        expect(res.status).toBe(400)
        expect(((await res.json()) as { detail: string }).detail).toContain('surrogate')
      }
      expect(await (await app.get(`${API}/admin/settings`, { token: quizAdmin.token })).json()).toEqual(before)
      expect(await (await app.get(`${API}/auth/me/settings`, { token: quizAdmin.token })).json()).not.toHaveProperty('theme')
    })

    it('an AI model whose name or model_id is only white space is refused (422), not stored empty to fail every use with 503', async () => {
      const blank = { name: 'Blank', model_id: '   ', task: 'teach' }
      const created = await app.post(`${API}/admin/models`, blank, { token: quizAdmin.token, ip: nextIp() })
      expect(created.status).toBe(422)
      const [{ n }] = (await app.db.sql<{ n: number }>`select count(*)::int as n from quiz.ai_models where btrim(model_id) = '' or btrim(name) = ''`) as [{ n: number }]
      expect(n).toBe(0)
      const ok = await app.post(`${API}/admin/models`, { ...blank, model_id: 'test-model' }, { token: quizAdmin.token, ip: nextIp() })
      expect(ok.status).toBe(200)
      const { id } = (await ok.json()) as { id: number }
      for (const change of [{ model_id: ' ' }, { name: '\t' }]) {
        expect((await app.put(`${API}/admin/models/${id}`, change, { token: quizAdmin.token, ip: nextIp() })).status).toBe(422)
      }
      expect((await app.delete(`${API}/admin/models/${id}`, { token: quizAdmin.token, ip: nextIp() })).status).toBeLessThan(300)
    })
  })

  for (const service of ['clinical', 'quiz'] as const) {
    it(`${service} operations: no 5xx, every 4xx with a message, refused requests change no row`, async () => {
      for (const op of ops.filter((o) => o.service === service && groupOf(o.key) === 'main')) {
        await fuzz(op, { name: 'anonymous' }, Math.ceil(RUNS / 3))
        await fuzz(op, caller(op), RUNS)
        await stillSignedIn(op)
      }
      expect(report('main', service)).toEqual([])
    }, 600_000)
  }

  it('settings operations (run after the others): the same properties', async () => {
    for (const op of ops.filter((o) => groupOf(o.key) === 'settings')) {
      await fuzz(op, { name: 'anonymous' }, Math.ceil(RUNS / 3))
      await fuzz(op, caller(op), RUNS)
    }
    expect(report('settings')).toEqual([])
  }, 300_000)

  it('session-ending operations, each by a throwaway admin: the same properties', async () => {
    const sessionOps = ops.filter((o) => groupOf(o.key) === 'session')
    // made before any of them runs: a fuzzed id may disable or delete the admin that makes the others
    const throwaways = new Map<string, Caller>()
    for (const op of sessionOps) {
      throwaways.set(op.key, op.service === 'clinical'
        ? { name: 'admin', token: (await userWithSession(app, 'admin', 'throwaway')).token }
        : { name: 'admin', token: (await createAccount(app, quizAdmin, 'admin', 'throwaway')).token })
    }
    for (const op of sessionOps) {
      await fuzz(op, { name: 'anonymous' }, Math.ceil(RUNS / 3))
      await fuzz(op, throwaways.get(op.key)!, RUNS)
    }
    expect(report('session')).toEqual([])
    if (DEFAULT_RUNS && !ONLY) expect(requests).toBeGreaterThanOrEqual(MIN_REQUESTS)
  }, 300_000)
})

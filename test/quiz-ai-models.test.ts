// Spec 1, Admin: AI model configuration and the embedding rows of Admin: settings and embeddings, through the
// real app against a real OpenAI-compatible test server and small fakes of the ElevenLabs and Azure voice APIs.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { LOCAL_DIMENSIONS } from '../src/core/embedder'
import {
  API_BASE_RULE, GATEWAY_PROBE_TIMEOUTS_MS, OPENAI_VOICES, REGENERATE_BATCH, REGENERATE_JOB_KIND, resolveModel, SERVER_DEFAULT_NAME, VOICE_PROVIDER_URLS,
} from '../plugins/quiz/services/ai-models'
import { QUESTIONS_COLLECTION } from '../plugins/quiz/services/question-index'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

interface ModelBody {
  id: number; name: string; model_id: string; task: string; is_active: boolean; is_default: boolean
  api_key: string | null; api_base: string | null
}
interface Available { id: number | null; name: string; model_id: string; is_default: boolean }

let modelSeq = 0
const uniqueModel = (tag: string) => `${tag}-${Date.now().toString(36)}-${++modelSeq}`

/** A small stand-in for a voice provider's HTTP API: answers `body` at any path and records what it got. */
function startVoiceFake(body: unknown, status = 200) {
  const seen: Array<{ path: string; headers: Headers }> = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      seen.push({ path: new URL(req.url).pathname, headers: req.headers })
      return Response.json(body, { status })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, seen, close: () => server.stop(true) }
}

/** A URL where nothing listens: a server started and stopped again. */
async function deadUrl(): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const url = `http://127.0.0.1:${server.port}`
  await server.stop(true)
  return url
}

for (const target of databaseTargets()) {
  describe(`quiz admin: AI models [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    let other: AiServer
    /** A gateway nobody allowed: on 127.0.0.1 like the others, at a port neither AI_BASE_URL nor AI_ALLOWED_HOSTS names. */
    let trap: AiServer
    /** An allowed address where nothing listens. */
    let dead: string
    let admin: Account
    let userToken: string
    let moderatorToken: string

    const create = (body: Record<string, unknown>) => t.post(`${API}/admin/models`, body, { token: admin.token })
    async function createOk(body: Record<string, unknown>): Promise<ModelBody> {
      const res = await create(body)
      expect(res.status).toBe(200)
      return (await res.json()) as ModelBody
    }
    const update = (id: number, body: Record<string, unknown>) => t.put(`${API}/admin/models/${id}`, body, { token: admin.token })
    const list = async () => (await (await t.get(`${API}/admin/models`, { token: admin.token })).json()) as ModelBody[]
    const defaultsOf = async (task: string) =>
      t.db.sql<{ id: number }>`select id from quiz.ai_models where task = ${task} and is_default`
    const available = async (task: string, token = userToken) => {
      const res = await t.get(`${API}/admin/models/available?task=${task}`, { token })
      expect(res.status).toBe(200)
      return (await res.json()) as Available[]
    }

    beforeAll(async () => {
      ai = await startAiServer()
      other = await startAiServer({ apiKey: 'sk-other-gateway-key-0001', models: ['other-a', 'other-b'] })
      trap = await startAiServer({ models: ['trapped'] })
      dead = await deadUrl()
      // AI_BASE_URL (ai) is allowed by itself; the other gateway, the dead port and a name of the tests by the operator's list.
      const allowed = [new URL(other.url).host, new URL(dead).host, 'gateway.example.test'].join(',')
      t = await startTestApp({ target, env: { ...ai.env, AI_ALLOWED_HOSTS: allowed } })
      admin = await registerAdmin(t)
      userToken = (await createAccount(t, admin, 'user')).token
      moderatorToken = (await createAccount(t, admin, 'moderator')).token
    })
    afterAll(async () => {
      await t.close()
      await ai.close()
      await other.close()
      await trap.close()
    })

    it('the first model created for a task becomes its default; later ones do not', async () => {
      const first = await createOk({ name: 'First', model_id: uniqueModel('first'), task: 'keyword', is_active: true, is_default: false, api_key: null })
      expect(first).toMatchObject({ task: 'keyword', is_active: true, is_default: true, api_key: '' })
      const second = await createOk({ name: 'Second', model_id: uniqueModel('second'), task: 'keyword', is_active: true, is_default: false, api_key: null })
      expect(second.is_default).toBe(false)
      expect((await defaultsOf('keyword')).map((r) => r.id)).toEqual([first.id])
    })

    it('one default per task: choosing another default on create or update unsets the previous one', async () => {
      const a = await createOk({ name: 'A', model_id: uniqueModel('a'), task: 'teach' })
      expect(a.is_default).toBe(true)
      const b = await createOk({ name: 'B', model_id: uniqueModel('b'), task: 'teach', is_default: true })
      expect(b.is_default).toBe(true)
      expect((await defaultsOf('teach')).map((r) => r.id)).toEqual([b.id])
      const res = await update(a.id, { is_default: true })
      expect(res.status).toBe(200)
      expect(((await res.json()) as ModelBody).is_default).toBe(true)
      expect((await defaultsOf('teach')).map((r) => r.id)).toEqual([a.id])
      const listed = await list()
      expect(listed.find((m) => m.id === b.id)?.is_default).toBe(false)
      // other tasks' defaults are untouched
      expect((await defaultsOf('keyword')).length).toBe(1)
    })

    it('two first models of a new task created at once: exactly one becomes the default', async () => {
      const task = 'tts'
      expect(await defaultsOf(task)).toHaveLength(0)
      const [r1, r2] = await Promise.all([
        create({ name: 'Voice 1', model_id: uniqueModel('voice'), task }),
        create({ name: 'Voice 2', model_id: uniqueModel('voice'), task }),
      ])
      expect([r1.status, r2.status]).toEqual([200, 200])
      const bodies = [(await r1.json()) as ModelBody, (await r2.json()) as ModelBody]
      expect(bodies.filter((b) => b.is_default)).toHaveLength(1)
      expect(await defaultsOf(task)).toHaveLength(1)
    })

    it('(model_id, task) is unique: a second configuration is 409; the same model_id for another task is fine', async () => {
      const modelId = uniqueModel('pair')
      await createOk({ name: 'Pair', model_id: modelId, task: 'extraction' })
      await expectDetail(await create({ name: 'Pair again', model_id: modelId, task: 'extraction' }), 409)
      await createOk({ name: 'Pair for teach', model_id: modelId, task: 'teach' })
      const [{ n }] = (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.ai_models where model_id = ${modelId}`) as [{ n: number }]
      expect(n).toBe(2)
      // an update onto an existing pair is 409 too, and changes nothing
      const moved = await createOk({ name: 'Mover', model_id: uniqueModel('mover'), task: 'extraction' })
      await expectDetail(await update(moved.id, { model_id: modelId }), 409)
      expect((await list()).find((m) => m.id === moved.id)?.model_id).toBe(moved.model_id)
    })

    it('the API key is sealed in the database and masked in every response (create, list, update)', async () => {
      const key = 'sk-secret-0123456789-abcd'
      const created = await createOk({ name: 'Keyed', model_id: uniqueModel('keyed'), task: 'extraction', api_key: key })
      const [row] = await t.db.sql<{ api_key: string }>`select api_key from quiz.ai_models where id = ${created.id}`
      expect(row!.api_key.startsWith('enc:v1:')).toBe(true)
      expect(row!.api_key).not.toContain(key)
      expect(row!.api_key).not.toContain('abcd')
      const check = (body: ModelBody) => {
        expect(body.api_key).not.toBeNull()
        expect(body.api_key).not.toContain('secret')
        expect(body.api_key!.endsWith('abcd')).toBe(true)
        expect(body.api_key!.replace(/^[a-z]+-/i, '').replace('…', '').length).toBeLessThanOrEqual(4)
      }
      check(created)
      check((await list()).find((m) => m.id === created.id)!)
      const renamed = await update(created.id, { name: 'Keyed, renamed' })
      check((await renamed.json()) as ModelBody)
      const newKey = 'sk-another-secret-key-wxyz'
      const rekeyed = (await (await update(created.id, { api_key: newKey })).json()) as ModelBody
      expect(rekeyed.api_key!.endsWith('wxyz')).toBe(true)
      expect(rekeyed.api_key).not.toContain('another')
      const [after] = await t.db.sql<{ api_key: string }>`select api_key from quiz.ai_models where id = ${created.id}`
      expect(after!.api_key.startsWith('enc:v1:')).toBe(true)
      expect(after!.api_key).not.toContain(newKey)
      // a short key shows none of its characters
      const short = await createOk({ name: 'Short key', model_id: uniqueModel('short'), task: 'extraction', api_key: 'abc123' })
      expect(short.api_key).not.toContain('abc')
      expect(short.api_key).not.toContain('123')
      for (const m of await list()) expect(m.api_key === null || !m.api_key.includes('secret')).toBe(true)
    })

    it('PUT is a partial update: fields present change, absent keep; api_key null clears it', async () => {
      const created = await createOk({
        name: 'Partial', model_id: uniqueModel('partial'), task: 'extraction', api_key: 'sk-partial-key-000011112222',
        api_base: 'http://gateway.example.test/v1',
      })
      let res = await update(created.id, { name: 'Partial 2' })
      expect(res.status).toBe(200)
      let body = (await res.json()) as ModelBody
      expect(body).toMatchObject({
        id: created.id, name: 'Partial 2', model_id: created.model_id, task: 'extraction', is_active: true,
        is_default: created.is_default, api_key: created.api_key, api_base: 'http://gateway.example.test/v1',
      })
      res = await update(created.id, { is_active: false, api_base: null })
      body = (await res.json()) as ModelBody
      expect(body).toMatchObject({ name: 'Partial 2', is_active: false, api_base: null, api_key: created.api_key })
      res = await update(created.id, { api_key: null })
      body = (await res.json()) as ModelBody
      expect(body.api_key).toBe('')
      const [row] = await t.db.sql<{ api_key: string | null }>`select api_key from quiz.ai_models where id = ${created.id}`
      expect(row!.api_key).toBeNull()
      res = await update(created.id, { task: 'unknown' })
      expect(res.status).toBe(422)
      await expectDetail(await update(987654, { name: 'Nobody' }), 404)
    })

    it('unsetting or moving away the default promotes another active model of the task', async () => {
      const task = 'extraction'
      const fresh = await createOk({ name: 'Promote me', model_id: uniqueModel('promote'), task, is_default: true })
      expect((await defaultsOf(task)).map((r) => r.id)).toEqual([fresh.id])
      const res = await update(fresh.id, { is_default: false })
      expect(((await res.json()) as ModelBody).is_default).toBe(false)
      const [promoted] = await defaultsOf(task)
      expect(promoted).toBeDefined()
      expect(promoted!.id).not.toBe(fresh.id)
      // moving the default to another task: the old task gets another default, the new one keeps its own
      expect((await update(fresh.id, { is_default: true })).status).toBe(200)
      const [teachDefault] = await defaultsOf('teach')
      expect(teachDefault).toBeDefined()
      const moved = (await (await update(fresh.id, { task: 'teach' })).json()) as ModelBody
      expect(moved).toMatchObject({ id: fresh.id, task: 'teach', is_default: false })
      expect((await defaultsOf('teach')).map((r) => r.id)).toEqual([teachDefault!.id])
      const [next] = await defaultsOf(task)
      expect(next).toBeDefined()
      expect(next!.id).not.toBe(fresh.id)
      // moving with is_default true takes over the new task's default
      const back = (await (await update(fresh.id, { task, is_default: true })).json()) as ModelBody
      expect(back).toMatchObject({ task, is_default: true })
      expect((await defaultsOf(task)).map((r) => r.id)).toEqual([fresh.id])
      expect((await defaultsOf('teach')).map((r) => r.id)).toEqual([teachDefault!.id])
    })

    it('DELETE is 204, 404 for an unknown id; deleting the default promotes another active model, or leaves none', async () => {
      const base = uniqueModel('del')
      const a = await createOk({ name: 'Del A', model_id: `${base}-a`, task: 'tts', is_default: true })
      await createOk({ name: 'Del B', model_id: `${base}-b`, task: 'tts' })
      let res = await t.delete(`${API}/admin/models/${a.id}`, { token: admin.token })
      expect(res.status).toBe(204)
      expect(await res.text()).toBe('')
      const [promoted] = await defaultsOf('tts')
      expect(promoted).toBeDefined()
      expect(promoted!.id).not.toBe(a.id)
      expect((await list()).some((m) => m.id === a.id)).toBe(false)
      await expectDetail(await t.delete(`${API}/admin/models/${a.id}`, { token: admin.token }), 404)
      // delete every tts model: the task is left without a default
      for (const m of (await list()).filter((x) => x.task === 'tts')) {
        expect((await t.delete(`${API}/admin/models/${m.id}`, { token: admin.token })).status).toBe(204)
      }
      expect(await defaultsOf('tts')).toHaveLength(0)
      // an inactive model is never promoted
      const c = await createOk({ name: 'Del C', model_id: `${base}-c`, task: 'tts' })
      const d = await createOk({ name: 'Del D', model_id: `${base}-d`, task: 'tts', is_active: false })
      expect(c.is_default).toBe(true)
      expect((await t.delete(`${API}/admin/models/${c.id}`, { token: admin.token })).status).toBe(204)
      expect(await defaultsOf('tts')).toHaveLength(0)
      expect((await t.delete(`${API}/admin/models/${d.id}`, { token: admin.token })).status).toBe(204)
    })

    it('GET /models/available (any user): the active models of the task, default first; the environment default when none', async () => {
      // keyword has models from the first test; add an inactive one, which is not listed
      const inactive = await createOk({ name: 'Inactive', model_id: uniqueModel('inactive'), task: 'keyword', is_active: false })
      const listed = await available('keyword')
      expect(listed.length).toBeGreaterThan(0)
      expect(listed[0]!.is_default).toBe(true)
      expect(listed.filter((m) => m.is_default)).toHaveLength(1)
      expect(listed.some((m) => m.id === inactive.id)).toBe(false)
      for (const m of listed) expect(Object.keys(m).sort()).toEqual(['id', 'is_default', 'model_id', 'name'])
      const active = (await list()).filter((m) => m.task === 'keyword' && m.is_active).map((m) => m.id).sort()
      expect(listed.map((m) => m.id).sort()).toEqual(active)
      // no tts model configured, and no TTS_MODEL: empty
      expect(await available('tts')).toEqual([])
      // default task is extraction
      const res = await t.get(`${API}/admin/models/available`, { token: moderatorToken })
      expect(res.status).toBe(200)
      const extraction = (await res.json()) as Available[]
      expect(extraction.length).toBeGreaterThan(0)
      const ids = (await list()).filter((m) => m.task === 'extraction' && m.is_active).map((m) => m.id).sort()
      expect(extraction.map((m) => m.id).sort()).toEqual(ids)
      expect((await t.get(`${API}/admin/models/available?task=bogus`, { token: userToken })).status).toBe(422)
      expect((await t.get(`${API}/admin/models/available`)).status).toBe(401)
    })

    it('POST /models/{id}/test: 400 for a speech model; a real chat request answers; 502 when the gateway fails or is down', async () => {
      const speech = await createOk({ name: 'Speech', model_id: uniqueModel('speech'), task: 'tts' })
      const before = ai.requests.length
      const refused = await t.post(`${API}/admin/models/${speech.id}/test`, undefined, { token: admin.token })
      expect(await expectDetail(refused, 400)).toMatch(/speech/i)
      expect(ai.requests.length).toBe(before)

      const chat = await createOk({ name: 'Chatty', model_id: uniqueModel('chat'), task: 'teach', api_key: 'sk-model-own-key-9876' })
      ai.reset()
      const res = await t.post(`${API}/admin/models/${chat.id}/test`, undefined, { token: admin.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ message: 'Model Chatty answered' })
      const sent = ai.requests.find((r) => r.path === '/v1/chat/completions')
      expect(sent?.body.model).toBe(chat.model_id)
      expect(sent?.headers.authorization).toBe('Bearer sk-model-own-key-9876')

      ai.failNext(500)
      await expectDetail(await t.post(`${API}/admin/models/${chat.id}/test`, undefined, { token: admin.token }), 502)

      const down = await createOk({ name: 'Down', model_id: uniqueModel('down'), task: 'teach', api_base: `${dead}/v1` })
      await expectDetail(await t.post(`${API}/admin/models/${down.id}/test`, undefined, { token: admin.token }), 502)

      // its own api_base and key
      const elsewhere = await createOk({ name: 'Elsewhere', model_id: uniqueModel('elsewhere'), task: 'teach', api_base: other.url, api_key: 'sk-other-gateway-key-0001' })
      expect((await t.post(`${API}/admin/models/${elsewhere.id}/test`, undefined, { token: admin.token })).status).toBe(200)
      expect(other.requests.some((r) => r.path === '/v1/chat/completions' && r.body.model === elsewhere.model_id)).toBe(true)

      await expectDetail(await t.post(`${API}/admin/models/987654/test`, undefined, { token: admin.token }), 404)
    })

    it('POST /litellm/models lists a gateway\'s models: the given api_base with its key, or the server\'s own', async () => {
      let res = await t.post(`${API}/admin/litellm/models`, { api_key: null, api_base: null }, { token: admin.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ models: [TEST_MODEL, 'test-embedding'].sort(), source: 'environment' })

      other.reset()
      res = await t.post(`${API}/admin/litellm/models`, { api_key: 'sk-other-gateway-key-0001', api_base: other.url }, { token: admin.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ models: ['other-a', 'other-b'], source: 'openai-compatible' })
      expect(other.requests.at(-1)?.headers.authorization).toBe('Bearer sk-other-gateway-key-0001')

      await expectDetail(await t.post(`${API}/admin/litellm/models`, { api_key: 'x', api_base: `${dead}/v1` }, { token: admin.token }), 502)
      expect((await t.post(`${API}/admin/litellm/models`, { api_base: 'not a url' }, { token: admin.token })).status).toBe(422)
    })

    describe('gateway address rule (shared with the identity provider, src/core/outbound.ts)', () => {
      const UNREACHABLE = 'The AI service could not be reached'
      const KEY = 'sk-must-never-leave-0001'
      const trapPort = () => new URL(trap.url).port
      /** Loopback in every spelling, at the trap's port, and the other refused ranges. */
      const refusedBases = () => [
        `http://127.0.0.1:${trapPort()}/v1`, `http://127.1:${trapPort()}/v1`, `http://0x7f000001:${trapPort()}/v1`,
        `http://2130706433:${trapPort()}/v1`, `http://0177.0.0.1:${trapPort()}/v1`, `http://[::1]:${trapPort()}/v1`,
        `http://[::ffff:127.0.0.1]:${trapPort()}/v1`, `http://localhost:${trapPort()}/v1`, `http://LOCALHOST.:${trapPort()}/v1`,
        `http://0.0.0.0:${trapPort()}/v1`, 'http://10.0.0.1/v1', 'http://192.168.0.10/v1', 'http://169.254.169.254/latest',
        'http://[fe80::1]/v1', 'http://[fd00:ec2::254]/v1', 'http://224.0.0.1/v1', 'http://168.63.129.16/v1',
      ]
      const listAt = (api_base: string) => t.post(`${API}/admin/litellm/models`, { api_key: KEY, api_base }, { token: admin.token })
      const bodyOf = async (res: Response) => ({ status: res.status, body: await res.text() })
      /** What a closed port answers: every refusal must answer exactly this. */
      const closedPort = async () => bodyOf(await listAt(`${dead}/v1`))

      it('POST /litellm/models refuses loopback in every spelling, private, link-local, unique-local, multicast, unspecified and metadata addresses: the closed-port answer, no request, no key', async () => {
        trap.reset()
        const closed = await closedPort()
        expect(closed).toEqual({ status: 502, body: JSON.stringify({ detail: UNREACHABLE }) })
        for (const base of refusedBases()) expect({ base, ...(await bodyOf(await listAt(base))) }).toEqual({ base, ...closed })
        expect(trap.requests).toHaveLength(0)
      })

      it('a timeout and a gateway answering too slowly look the same as a refusal (no port scanning by status or text)', async () => {
        const saved = { ...GATEWAY_PROBE_TIMEOUTS_MS }
        GATEWAY_PROBE_TIMEOUTS_MS.listModels = 200
        GATEWAY_PROBE_TIMEOUTS_MS.modelTest = 200
        try {
          other.reset()
          other.delayNext(1_000)
          const slow = await bodyOf(await t.post(`${API}/admin/litellm/models`, { api_key: 'sk-other-gateway-key-0001', api_base: other.url }, { token: admin.token }))
          expect(slow).toEqual(await closedPort())
          const model = await createOk({ name: 'Slow', model_id: uniqueModel('slow'), task: 'teach', api_base: other.url, api_key: 'sk-other-gateway-key-0001' })
          other.delayNext(1_000)
          const tested = await bodyOf(await t.post(`${API}/admin/models/${model.id}/test`, undefined, { token: admin.token }))
          expect(tested).toEqual({ status: 502, body: JSON.stringify({ detail: UNREACHABLE }) })
        } finally {
          Object.assign(GATEWAY_PROBE_TIMEOUTS_MS, saved)
        }
      })

      it('AI_BASE_URL\'s own host and port and the AI_ALLOWED_HOSTS entries are allowed; another port of the same host is not', async () => {
        let res = await listAt(ai.url)
        expect(res.status).toBe(200)
        res = await t.post(`${API}/admin/litellm/models`, { api_key: 'sk-other-gateway-key-0001', api_base: other.url }, { token: admin.token })
        expect(res.status).toBe(200)
        // the trap shares AI_BASE_URL's host (127.0.0.1), not its port
        expect((await listAt(trap.url)).status).toBe(502)
        expect((await create({ name: 'Own', model_id: uniqueModel('own'), task: 'teach', api_base: ai.url })).status).toBe(200)
      })

      it('create and update refuse a stored api_base that breaks the rule: 400 naming it, nothing stored', async () => {
        for (const api_base of [`http://localhost:${trapPort()}/v1`, 'http://[::1]/v1', 'http://169.254.169.254/v1', `http://127.1:${trapPort()}/v1`]) {
          const model_id = uniqueModel('refused')
          const message = await expectDetail(await create({ name: 'Refused', model_id, task: 'teach', api_base, api_key: KEY }), 400)
          expect(message).toBe(API_BASE_RULE)
          expect(await t.db.sql`select id from quiz.ai_models where model_id = ${model_id}`).toHaveLength(0)
        }
        const unresolvable = await expectDetail(await create({ name: 'Nowhere', model_id: uniqueModel('nowhere'), task: 'teach', api_base: 'http://no-such-gateway.invalid/v1' }), 400)
        expect(unresolvable).toContain(API_BASE_RULE)
        const kept = await createOk({ name: 'Kept', model_id: uniqueModel('kept'), task: 'teach', api_base: other.url })
        expect(await expectDetail(await update(kept.id, { api_base: `http://0x7f000001:${trapPort()}/v1` }), 400)).toBe(API_BASE_RULE)
        expect((await list()).find((m) => m.id === kept.id)?.api_base).toBe(other.url)
        expect(trap.requests).toHaveLength(0)
      })

      it('a stored api_base is checked again at call time (DNS changes): the model test and extraction\'s model answer 502 unreachable, no key sent', async () => {
        trap.reset()
        const core = t.booted.core
        const model_id = uniqueModel('rebound')
        // as if saved while its name still resolved to a public address
        const [row] = await t.db.sql<{ id: number }>`
          insert into quiz.ai_models (name, model_id, task, is_active, is_default, api_key, api_base)
          values ('Rebound', ${model_id}, 'extraction', true, false, ${core.crypto.sealText(KEY)}, ${`http://localhost:${trapPort()}/v1`})
          returning id`
        const tested = await t.post(`${API}/admin/models/${row!.id}/test`, undefined, { token: admin.token })
        expect(await bodyOf(tested)).toEqual(await closedPort())
        const refusal = await resolveModel(core, 'extraction', row!.id).catch((err: unknown) => err)
        expect(refusal).toMatchObject({ status: 502, message: UNREACHABLE })
        expect(trap.requests).toHaveLength(0)
      })
    })

    describe('POST /tts/voices', () => {
      const saved = { ...VOICE_PROVIDER_URLS }
      afterAll(() => Object.assign(VOICE_PROVIDER_URLS, saved))
      const voices = (body: Record<string, unknown>) => t.post(`${API}/admin/tts/voices`, body, { token: admin.token })

      it('openai: the fixed built-in list, no key needed, no call made', async () => {
        const res = await voices({ provider: 'openai', api_key: null, region: null })
        expect(res.status).toBe(200)
        const body = (await res.json()) as { voices: Array<{ model_id: string; name: string; labels: Record<string, string> }> }
        expect(body.voices.map((v) => v.model_id)).toEqual([...OPENAI_VOICES])
        expect(body.voices.map((v) => v.model_id)).toEqual(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'])
        for (const v of body.voices) expect(typeof v.labels).toBe('object')
      })

      it('elevenlabs: GET /v1/voices with xi-api-key; 400 without a key, 400 for a rejected key, 502 when unreachable', async () => {
        const fake = startVoiceFake({
          voices: [
            { voice_id: 'v-rachel', name: 'Rachel', category: 'premade', labels: { accent: 'american', gender: 'female' } },
            { voice_id: 'v-adam', name: 'Adam', labels: { gender: 'male', age: null } },
          ],
        })
        try {
          VOICE_PROVIDER_URLS.elevenlabs = fake.url
          const res = await voices({ provider: 'elevenlabs', api_key: 'xi-key-123', region: null })
          expect(res.status).toBe(200)
          expect(await res.json()).toEqual({
            voices: [
              { model_id: 'v-rachel', name: 'Rachel', labels: { accent: 'american', gender: 'female', category: 'premade', provider: 'elevenlabs' } },
              { model_id: 'v-adam', name: 'Adam', labels: { gender: 'male', provider: 'elevenlabs' } },
            ],
          })
          expect(fake.seen.at(-1)?.path).toBe('/v1/voices')
          expect(fake.seen.at(-1)?.headers.get('xi-api-key')).toBe('xi-key-123')
          const calls = fake.seen.length
          await expectDetail(await voices({ provider: 'elevenlabs', api_key: null }), 400)
          expect(fake.seen.length).toBe(calls)
        } finally {
          await fake.close()
        }
        const rejecting = startVoiceFake({ detail: { status: 'invalid_api_key' } }, 401)
        try {
          VOICE_PROVIDER_URLS.elevenlabs = rejecting.url
          await expectDetail(await voices({ provider: 'elevenlabs', api_key: 'wrong' }), 400)
        } finally {
          await rejecting.close()
        }
        const broken = startVoiceFake({ error: 'boom' }, 500)
        try {
          VOICE_PROVIDER_URLS.elevenlabs = broken.url
          await expectDetail(await voices({ provider: 'elevenlabs', api_key: 'k' }), 502)
        } finally {
          await broken.close()
        }
        VOICE_PROVIDER_URLS.elevenlabs = await deadUrl()
        await expectDetail(await voices({ provider: 'elevenlabs', api_key: 'k' }), 502)
      })

      it('azure: GET {region}/cognitiveservices/voices/list with Ocp-Apim-Subscription-Key; 400 without key or region', async () => {
        const fake = startVoiceFake([
          { Name: 'Microsoft Server Speech Text to Speech Voice (en-US, JennyNeural)', DisplayName: 'Jenny', LocalName: 'Jenny', ShortName: 'en-US-JennyNeural', Gender: 'Female', Locale: 'en-US', LocaleName: 'English (United States)', VoiceType: 'Neural' },
          { DisplayName: 'No short name' },
        ])
        try {
          VOICE_PROVIDER_URLS.azure = `${fake.url}/{region}`
          const res = await voices({ provider: 'azure', api_key: 'az-key', region: 'westeurope' })
          expect(res.status).toBe(200)
          expect(await res.json()).toEqual({
            voices: [{
              model_id: 'en-US-JennyNeural', name: 'Jenny',
              labels: { gender: 'Female', locale: 'en-US', locale_name: 'English (United States)', voice_type: 'Neural', local_name: 'Jenny', provider: 'azure' },
            }],
          })
          expect(fake.seen.at(-1)?.path).toBe('/westeurope/cognitiveservices/voices/list')
          expect(fake.seen.at(-1)?.headers.get('ocp-apim-subscription-key')).toBe('az-key')
          const calls = fake.seen.length
          await expectDetail(await voices({ provider: 'azure', api_key: 'az-key', region: null }), 400)
          await expectDetail(await voices({ provider: 'azure', api_key: null, region: 'westeurope' }), 400)
          await expectDetail(await voices({ provider: 'azure', api_key: 'az-key', region: 'evil.example.com/x' }), 400)
          expect(fake.seen.length).toBe(calls)
        } finally {
          await fake.close()
        }
        VOICE_PROVIDER_URLS.azure = `${await deadUrl()}/{region}`
        await expectDetail(await voices({ provider: 'azure', api_key: 'az-key', region: 'westeurope' }), 502)
      })

      it('an unknown provider is 422', async () => {
        expect((await voices({ provider: 'googlecloud', api_key: 'k' })).status).toBe(422)
      })
    })

    it('POST /embedding/test: the local embedder by default; the gateway model when set; 502 when it fails', async () => {
      let res = await t.post(`${API}/admin/embedding/test`, undefined, { token: admin.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ model: 'local', dimensions: LOCAL_DIMENSIONS, status: 'ok' })
      expect((await t.put(`${API}/admin/settings`, { embedding_model: 'test-embedding' }, { token: admin.token })).status).toBe(200)
      try {
        res = await t.post(`${API}/admin/embedding/test`, undefined, { token: admin.token })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ model: 'test-embedding', dimensions: 64, status: 'ok' })
        ai.failNext(503)
        await expectDetail(await t.post(`${API}/admin/embedding/test`, undefined, { token: admin.token }), 502)
      } finally {
        expect((await t.put(`${API}/admin/settings`, { embedding_model: 'local' }, { token: admin.token })).status).toBe(200)
      }
    })

    it('POST /embedding/regenerate: a job that rebuilds the question index from every question, in batches', async () => {
      const core = t.booted.core
      const total = REGENERATE_BATCH * 2 + 34
      await t.db.sql`
        insert into quiz.questions (question_text, options, correct_answer)
        select 'Which enzyme number ' || g || '?', jsonb_build_array('Enzyme A' || g, 'Enzyme B' || g), 'Enzyme A' || g
        from generate_series(1, ${total}::int) as g`
      // a stale entry with no question behind it: gone after the rebuild
      await core.vectors.upsert(QUESTIONS_COLLECTION, [{ id: '99999999', vector: Array(LOCAL_DIMENSIONS).fill(0.01), text: 'stale' }])
      const res = await t.post(`${API}/admin/embedding/regenerate`, undefined, { token: admin.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { job_id: string; message: string }
      expect(typeof body.message).toBe('string')
      const job = await core.jobs.get(body.job_id)
      expect(job).toMatchObject({ kind: REGENERATE_JOB_KIND, service: 'quiz', owner_id: admin.id, status: 'completed' })
      const [{ n }] = (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.questions`) as [{ n: number }]
      expect(await core.vectors.count(QUESTIONS_COLLECTION)).toBe(n)
      const messages = job!.steps.map((s) => s.message)
      expect(messages).toContain(`Embedded ${REGENERATE_BATCH} of ${n} questions`)
      expect(messages.at(-1)).toBe(`Embedded ${n} of ${n} questions`)
      // the rebuilt index finds a question by its text
      const [probe] = await t.db.sql<{ id: number }>`select id from quiz.questions where question_text = 'Which enzyme number 7?'`
      const { localEmbedding } = await import('../src/core/embedder')
      const [best] = await core.vectors.search(QUESTIONS_COLLECTION, localEmbedding('Which enzyme number 7?\nEnzyme A7\nEnzyme B7'), { topK: 1 })
      expect(best?.id).toBe(String(probe!.id))
    })

    it('every admin route is Admin only: no token 401, a user or a moderator 403', async () => {
      const [some] = await list()
      const calls: Array<[string, string, unknown]> = [
        ['GET', '/admin/models', undefined],
        ['POST', '/admin/models', { name: 'X', model_id: uniqueModel('x'), task: 'teach' }],
        ['PUT', `/admin/models/${some!.id}`, { name: 'Hijacked' }],
        ['DELETE', `/admin/models/${some!.id}`, undefined],
        ['POST', `/admin/models/${some!.id}/test`, undefined],
        ['POST', '/admin/litellm/models', { api_key: null, api_base: null }],
        ['POST', '/admin/tts/voices', { provider: 'openai' }],
        ['POST', '/admin/embedding/test', undefined],
        ['POST', '/admin/embedding/regenerate', undefined],
      ]
      const before = await list()
      for (const [method, path, body] of calls) {
        const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' }
        const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }
        await expectDetail(await t.request(`${API}${path}`, init), 401)
        for (const token of [userToken, moderatorToken]) await expectDetail(await t.request(`${API}${path}`, { ...init, token }), 403)
      }
      expect(await list()).toEqual(before)
    })
  })

  describe(`quiz admin: AI models with no gateway configured [${target}]`, () => {
    let t: TestApp
    let adminToken: string
    beforeAll(async () => {
      t = await startTestApp({ target })
      adminToken = (await registerAdmin(t)).token
    })
    afterAll(() => t.close())

    it('available is [] with no configuration and no environment default; a configured model is listed', async () => {
      expect(await (await t.get(`${API}/admin/models/available?task=extraction`, { token: adminToken })).json()).toEqual([])
      const res = await t.post(`${API}/admin/models`, { name: 'Configured', model_id: 'gpt-x', task: 'extraction' }, { token: adminToken })
      const created = (await res.json()) as ModelBody
      expect(await (await t.get(`${API}/admin/models/available`, { token: adminToken })).json())
        .toEqual([{ id: created.id, name: 'Configured', model_id: 'gpt-x', is_default: true }])
    })

    it('litellm listing without api_base is 503; testing a model with nowhere to send it is 503', async () => {
      await expectDetail(await t.post(`${API}/admin/litellm/models`, {}, { token: adminToken }), 503)
      const created = (await (await t.post(`${API}/admin/models`, { name: 'Nowhere', model_id: 'gpt-y', task: 'teach' }, { token: adminToken })).json()) as ModelBody
      await expectDetail(await t.post(`${API}/admin/models/${created.id}/test`, undefined, { token: adminToken }), 503)
    })
  })

  describe(`quiz admin: the environment default model [${target}]`, () => {
    let ai: AiServer
    let t: TestApp
    let adminToken: string
    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: { ...ai.env, TTS_MODEL: 'env-voice' } })
      adminToken = (await registerAdmin(t)).token
    })
    afterAll(async () => {
      await t.close()
      await ai.close()
    })

    it('with nothing configured, available lists the server default with a null id (TTS_MODEL for tts)', async () => {
      expect(await (await t.get(`${API}/admin/models/available?task=extraction`, { token: adminToken })).json())
        .toEqual([{ id: null, name: SERVER_DEFAULT_NAME, model_id: TEST_MODEL, is_default: true }])
      expect(await (await t.get(`${API}/admin/models/available?task=tts`, { token: adminToken })).json())
        .toEqual([{ id: null, name: SERVER_DEFAULT_NAME, model_id: 'env-voice', is_default: true }])
    })
  })
}

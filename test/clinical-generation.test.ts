// Issue 15, note generation: the thirteen generation endpoints and GET /api/models through the real app, with the
// project's OpenAI-compatible test gateway, on each database target. What the gateway received (the fields, the
// clinician's memories and physicianMemories, a prompt override), the model rules (400 unknown or disabled), the
// field rules (422), the gateway's failures (503 none, 502 failing, 504 slow), the usage rows (and that they hold no
// text), and the event stream (deltas then done; an error event when the gateway breaks off; a client that leaves
// cancels the gateway call). A small stand-in gateway in this file breaks or drips its streams on purpose.
import { afterAll, beforeAll, beforeEach, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { TRANSCRIPT_MAX } from '../plugins/clinical/models/generation'
import { setConfigValues } from '../plugins/clinical/services/app-config'
import { GENERATIONS, describeAnswers } from '../plugins/clinical/services/generation'
import { createMemory } from '../plugins/clinical/services/memories'
import {
  addCustomModel, listModelEntries, MODELS_CATALOG_KEY, setDefaultModel, setModelEnabled, WELL_KNOWN_MODELS,
} from '../plugins/clinical/services/models'
import { fillTemplate, PROMPT_DEFAULTS, promptKeys } from '../plugins/clinical/services/prompts'
import { recordUsage, usageSummary } from '../plugins/clinical/services/usage'
import { startAiServer, TEST_MODEL, type AiServer, type LoggedRequest } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { freshIp, userWithSession, type SignedIn } from './support/clinical'
import { waitFor } from './support/wait'

setDefaultTimeout(30_000)

const marker = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}`

interface UsageRow {
  user_id: number | null
  endpoint: string
  model: string
  tokens_in: number | null
  tokens_out: number | null
  latency_ms: number
  outcome: string
  everything: string
}

const usageRows = (app: TestApp, userId: number) => app.db.sql<UsageRow>`
  select user_id, endpoint, model, tokens_in, tokens_out, latency_ms, outcome, row_to_json(u)::text as everything
  from clinical.ai_usage u where user_id = ${userId} order by id`

interface SseEvent {
  event: string
  data: any
}

function parseEvents(text: string): SseEvent[] {
  return text.split('\n\n').filter((block) => block.trim() !== '').map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message'
    const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')
    return { event, data: JSON.parse(data) }
  })
}

/**
 * A gateway that streams on purpose badly, spoken over a raw socket so it can cut a response off: `break` sends
 * two pieces, then closes the connection without ending the stream; `drip` sends a piece every 50 ms for ten
 * seconds and counts the callers that hang up before the end.
 */
function startStandInGateway() {
  const state = { mode: 'break' as 'break' | 'drip', hungUp: 0 }
  const chunk = (content: string) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: TEST_MODEL, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`
  interface Conn { received: Buffer; answered: boolean; finished: boolean; timer: ReturnType<typeof setInterval> | null }
  const server = Bun.listen<Conn>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { received: Buffer.alloc(0), answered: false, finished: false, timer: null }
      },
      data(socket, bytes) {
        const conn = socket.data
        conn.received = Buffer.concat([conn.received, bytes])
        const headEnd = conn.received.indexOf('\r\n\r\n')
        if (conn.answered || headEnd < 0) return
        const length = Number(/content-length:\s*(\d+)/i.exec(conn.received.subarray(0, headEnd).toString())?.[1] ?? 0)
        if (conn.received.length - (headEnd + 4) < length) return
        conn.answered = true
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n')
        const send = (text: string) => {
          const body = Buffer.from(text)
          socket.write(`${body.length.toString(16)}\r\n`)
          socket.write(body)
          socket.write('\r\n')
        }
        if (state.mode === 'break') {
          send(chunk('Partial '))
          send(chunk('note '))
          setTimeout(() => {
            conn.finished = true
            socket.end()
          }, 50)
          return
        }
        let n = 0
        conn.timer = setInterval(() => {
          send(chunk(`piece ${++n} `))
          if (n < 200) return
          clearInterval(conn.timer!)
          conn.finished = true
          socket.end('0\r\n\r\n')
        }, 50)
      },
      close(socket) {
        const conn = socket.data
        if (conn.timer) clearInterval(conn.timer)
        if (conn.answered && !conn.finished) state.hungUp++
      },
    },
  })
  return { url: `http://127.0.0.1:${server.port}/v1`, state, close: () => server.stop(true) }
}

// ---- pure parts ---------------------------------------------------------------------------------------

describe('prompt templates', () => {
  it('every endpoint has its own prompt key with a default, plus the shared system prompt', () => {
    const used = Object.values(GENERATIONS).map((g) => g.prompt)
    expect(new Set(used).size).toBe(13)
    for (const key of used) expect(promptKeys).toContain(key)
    expect(promptKeys).toContain('prompt.system')
    for (const key of promptKeys) expect(PROMPT_DEFAULTS[key].length).toBeGreaterThan(200)
  })

  it('each default template uses every field of its endpoint as a placeholder, and no other', () => {
    for (const kind of Object.values(GENERATIONS)) {
      const names = [...PROMPT_DEFAULTS[kind.prompt].matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1])
      expect(new Set(names)).toEqual(new Set(kind.fields))
    }
  })

  it('fills placeholders in one pass: a value that looks like a placeholder stays as written', () => {
    const filled = fillTemplate('A {{ transcript }} B {{type}} C {{unknown}}', { transcript: 'says {{type}} and $& $1', type: 'follow-up' })
    expect(filled).toBe('A says {{type}} and $& $1 B follow-up C ')
  })

  it('structured answers become readable lines', () => {
    expect(describeAnswers({ school: 'grade 9, doing well', smokes: false, friends: ['Ana', 'Bo'], mood: null }))
      .toBe('- school: grade 9, doing well\n- smokes: no\n- friends:\n  - Ana\n  - Bo\n- mood: no answer')
    expect(describeAnswers([{ milestone: 'walks alone', status: 'met' }, 'says mama'])).toBe('- milestone: walks alone, status: met\n- says mama')
  })
})

for (const target of databaseTargets()) {
  describe(`note generation (${target})`, () => {
    let ai: AiServer
    let app: TestApp
    let offline: TestApp
    let standIn: ReturnType<typeof startStandInGateway>
    let broken: TestApp
    let clinician: SignedIn
    let savedPreference: string

    beforeAll(async () => {
      ai = await startAiServer()
      standIn = startStandInGateway()
      ;[app, offline, broken] = await Promise.all([
        startTestApp({ target, env: { ...ai.env, AI_TIMEOUT_MS: '1000' } }),
        startTestApp({ target }),
        startTestApp({ target, env: { AI_BASE_URL: standIn.url, AI_API_KEY: 'k', AI_DEFAULT_MODEL: TEST_MODEL } }),
      ])
      clinician = await userWithSession(app, 'user', 'clinician')
      savedPreference = marker('Always list allergies first')
      await createMemory(app.booted.core, clinician.user.id, { category: 'note_style', name: 'Allergies', content: savedPreference })
    }, 180_000)
    afterAll(async () => {
      await Promise.all([app?.close(), offline?.close(), broken?.close()])
      await ai?.close()
      await standIn?.close()
    })
    beforeEach(() => ai.reset())

    const post = (path: string, body: unknown, headers: Record<string, string> = {}, who: SignedIn = clinician, on: TestApp = app) =>
      on.post(path, body, { token: who.token, ip: freshIp(), headers })
    const chats = (): LoggedRequest[] => ai.requests.filter((r) => r.path === '/v1/chat/completions')
    const lastChat = () => {
      const chat = chats().at(-1)
      if (!chat) throw new Error('the gateway got no chat request')
      return chat
    }
    const messageOf = (req: LoggedRequest, role: string): string => req.body.messages.find((m: { role: string }) => m.role === role)?.content ?? ''

    // One valid request per endpoint, with the values its prompt must carry.
    const endpoints = () => {
      const m = marker('case')
      return [
        { path: '/api/generate-hpi-encounter', key: 'hpi', memories: true, body: { transcript: `Mom says fever since Tuesday ${m}`, patientAge: '4 years', patientGender: 'female', setting: 'urgent care clinic', model: TEST_MODEL } },
        { path: '/api/generate-hpi-dictation', key: 'hpi', memories: true, body: { transcript: `Patient is a 40 year old with chest pain ${m}`, patientAge: '40 years', patientGender: 'male', setting: 'emergency department', model: TEST_MODEL } },
        { path: '/api/generate-soap', key: 'soap', memories: true, body: { transcript: `Cough for two weeks ${m}`, patientAge: '30 years', patientGender: 'female', type: 'follow-up visit', additionalInstructions: 'Bullet the plan', model: TEST_MODEL } },
        { path: '/api/generate-chart-review', key: 'chartReview', memories: false, body: { notes: `2024-01-02 A1c 8.1 ${m}`, visitType: 'diabetes follow-up', model: TEST_MODEL } },
        { path: '/api/generate-hospital-course', key: 'hospitalCourse', memories: true, body: { notes: `Admitted for pneumonia ${m}`, patientAge: '70 years', patientGender: 'male', format: 'day-by-day', model: TEST_MODEL } },
        { path: '/api/well-visit/shadess', key: 'assessment', memories: false, body: { responses: { school: `grade 9 ${m}`, vapes: true, friends: ['Ana', 'Bo'] }, patientAge: '15 years', model: TEST_MODEL } },
        { path: '/api/sick-visit/note', key: 'note', memories: true, body: { chiefComplaint: `Ear pain ${m}`, dictation: 'Left TM bulging', patientAge: '3 years', patientGender: 'male', ros: 'Fever yes, vomiting no', physicalExam: 'T 38.9', diagnoses: 'Acute otitis media', model: TEST_MODEL } },
        { path: '/api/patient-education', key: 'handout', memories: false, body: { noteText: `Acute otitis media, amoxicillin ${m}`, diagnosis: 'Ear infection', medications: 'Amoxicillin 90 mg/kg/day', patientAge: '3 years', language: 'Spanish', readingLevel: '5th grade', model: TEST_MODEL } },
        { path: '/api/generate-milestone-narrative', key: 'narrative', memories: false, body: { milestones: [{ milestone: `walks alone ${m}`, domain: 'gross motor', status: 'met' }, 'says three words'], patientAge: '15 months', patientGender: 'female', model: TEST_MODEL } },
        { path: '/api/generate-milestone-summary', key: 'summary', memories: false, body: { narrative: `Walks alone; says three words ${m}`, model: TEST_MODEL } },
        { path: '/api/refine', key: 'document', memories: false, body: { currentDocument: `Plan: rest ${m}`, instructions: 'Add fluids to the plan', sourceContext: 'Drink plenty of fluids', model: TEST_MODEL } },
        { path: '/api/shorten', key: 'document', memories: false, body: { document: `A very long note ${m}`, model: TEST_MODEL } },
        { path: '/api/clarify', key: 'document', memories: false, body: { document: `Pt c/o SOB ${m}`, context: 'Adult asthma clinic', model: TEST_MODEL } },
      ]
    }

    describe('each endpoint answers {success, <text>, model} and sends its fields to the gateway', () => {
      for (const { path, key } of endpoints()) {
        it(`${path}: \`${key}\` holds the gateway's text; the prompt holds every field value`, async () => {
          const one = endpoints().find((e) => e.path === path)!
          const written = marker('GENERATED TEXT')
          ai.reply(() => `  ${written}\n`)
          const res = await post(path, one.body)
          const body = await res.json()
          expect(res.status, JSON.stringify(body)).toBe(200)
          expect(body).toEqual({ success: true, [key]: written, model: TEST_MODEL })

          const chat = lastChat()
          expect(chat.body.model).toBe(TEST_MODEL)
          const prompt = messageOf(chat, 'user')
          const system = messageOf(chat, 'system')
          for (const [field, value] of Object.entries(one.body)) {
            if (field === 'model') continue
            const texts = typeof value === 'string' ? [value] : describeAnswers(value).split('\n').map((l) => l.replace(/^\s*- /, ''))
            for (const text of texts) expect(prompt, `${field} in the prompt of ${path}`).toContain(text)
          }
          expect(prompt).not.toContain('{{')
          expect(system).toStartWith(PROMPT_DEFAULTS['prompt.system'].slice(0, 60))
          // The clinician's saved AI-context memory is in every system prompt, inside the preferences markers.
          const preferences = /<clinician_preferences>([\s\S]*)<\/clinician_preferences>/.exec(system)?.[1] ?? ''
          expect(preferences).toContain(savedPreference)
          expect(prompt).not.toContain(savedPreference)
        })
      }

      it('physicianMemories go into the system prompt as the clinician\'s preferences, never into the user prompt', async () => {
        for (const e of endpoints().filter((x) => x.memories)) {
          const own = marker('Prefers metric units')
          const res = await post(e.path, { ...e.body, physicianMemories: own })
          expect(res.status).toBe(200)
          const chat = lastChat()
          const preferences = /<clinician_preferences>([\s\S]*)<\/clinician_preferences>/.exec(messageOf(chat, 'system'))?.[1] ?? ''
          expect(preferences, e.path).toContain(own)
          expect(preferences).toContain(savedPreference)
          expect(messageOf(chat, 'user')).not.toContain(own)
        }
      })

      it('a clinician without memories gets the bare system prompt', async () => {
        const other = await userWithSession(app, 'user', 'plain')
        const res = await post('/api/shorten', { document: 'Long note', model: TEST_MODEL }, {}, other)
        expect(res.status).toBe(200)
        expect(messageOf(lastChat(), 'system')).toBe(PROMPT_DEFAULTS['prompt.system'])
      })

      it('an absent optional field reads as its default, not as an empty gap', async () => {
        const res = await post('/api/patient-education', { noteText: 'Viral cold' })
        expect(res.status).toBe(200)
        const prompt = messageOf(lastChat(), 'user')
        expect(prompt).toContain('write the whole handout in English')
        expect(prompt).toContain('6th-grade reading level')
      })
    })

    describe('prompt overrides', () => {
      it('a prompt.* value in the configuration wins over the default; removing it restores the default', async () => {
        const core = app.booted.core
        await setConfigValues(core, { 'prompt.soap': 'CUSTOM SOAP for {{type}}:\n{{transcript}}' })
        try {
          const transcript = `Knee pain, asks about {{type}} ${marker('t')}`
          const res = await post('/api/generate-soap', { transcript, patientAge: '50', patientGender: 'male', type: 'new patient', model: TEST_MODEL })
          expect(res.status).toBe(200)
          // the clinician's text is inserted as it is: its {{type}} is not filled
          expect(messageOf(lastChat(), 'user')).toBe(`CUSTOM SOAP for new patient:\n${transcript}`)
        } finally {
          await setConfigValues(core, { 'prompt.soap': null })
        }
        await post('/api/generate-soap', { transcript: 'Knee pain', patientAge: '50', patientGender: 'male', type: 'new patient', model: TEST_MODEL })
        expect(messageOf(lastChat(), 'user')).toStartWith('Write a SOAP note from this visit.')
      })

      it('the system prompt can be overridden too', async () => {
        const core = app.booted.core
        const system = marker('You are a terse scribe')
        await setConfigValues(core, { 'prompt.system': system })
        try {
          expect((await post('/api/shorten', { document: 'x', model: TEST_MODEL })).status).toBe(200)
          expect(messageOf(lastChat(), 'system')).toStartWith(`${system}\n\n`)
        } finally {
          await setConfigValues(core, { 'prompt.system': null })
        }
      })
    })

    describe('models', () => {
      it('GET /api/models lists the models that are on, with the default; the well-known ones stay off until switched on', async () => {
        const res = await app.get('/api/models', { token: clinician.token, ip: freshIp() })
        expect(res.status).toBe(200)
        const body = await res.json()
        expect(body.success).toBe(true)
        expect(body.provider).toBe('litellm')
        expect(body.defaultModel).toBe(TEST_MODEL)
        expect(body.models).toContainEqual({ id: TEST_MODEL, name: TEST_MODEL, cost: 'unknown', category: 'general' })
        for (const known of WELL_KNOWN_MODELS) expect(body.models.map((m: { id: string }) => m.id)).not.toContain(known.id)
        const entries = await listModelEntries(app.booted.core)
        expect(entries.find((e) => e.id === 'gpt-4o')).toMatchObject({ enabled: false, isDefault: false, cost: 'medium' })
      })

      it('GET /api/models without a gateway: provider none, no models', async () => {
        const someone = await userWithSession(offline)
        const res = await offline.get('/api/models', { token: someone.token, ip: freshIp() })
        expect(res.status).toBe(200)
        expect(await res.json()).toEqual({ success: true, provider: 'none', models: [], defaultModel: null })
      })

      it('an unknown model is 400 unknown_model, a switched-off one 400 model_disabled; neither reaches the gateway', async () => {
        const unknown = await post('/api/generate-soap', { transcript: 'x', patientAge: '', patientGender: '', type: '', model: 'no-such-model' })
        expect(unknown.status).toBe(400)
        expect(await unknown.json()).toMatchObject({ success: false, code: 'unknown_model' })
        const off = await post('/api/refine', { currentDocument: 'x', instructions: 'y', model: 'gpt-4o' })
        expect(off.status).toBe(400)
        const body = await off.json()
        expect(body.code).toBe('model_disabled')
        expect(body.error).toContain('gpt-4o')
        expect(chats()).toHaveLength(0)
      })

      it('an admin\'s custom model can be used once added, and is refused once switched off', async () => {
        const core = app.booted.core
        const id = `custom/${marker('model')}`
        await addCustomModel(core, { id, name: 'Clinic model', category: 'General' })
        const listed = await (await app.get('/api/models', { token: clinician.token, ip: freshIp() })).json()
        expect(listed.models).toContainEqual({ id, name: 'Clinic model', cost: 'unknown', category: 'general' })
        const res = await post('/api/shorten', { document: 'x', model: id })
        expect(res.status).toBe(200)
        expect((await res.json()).model).toBe(id)
        expect(lastChat().body.model).toBe(id)

        await setModelEnabled(core, id, false)
        const refused = await post('/api/shorten', { document: 'x', model: id })
        expect(refused.status).toBe(400)
        expect((await refused.json()).code).toBe('model_disabled')
      })

      it('patient education without a model uses the default; a new default takes over; the default cannot be switched off', async () => {
        const core = app.booted.core
        expect((await (await post('/api/patient-education', { noteText: 'Cold' })).json()).model).toBe(TEST_MODEL)
        const id = marker('default-model')
        await addCustomModel(core, { id, name: 'New default', category: 'fast' })
        await setDefaultModel(core, id)
        try {
          const res = await post('/api/patient-education', { noteText: 'Cold' })
          expect((await res.json()).model).toBe(id)
          expect(lastChat().body.model).toBe(id)
          expect((await (await app.get('/api/models', { token: clinician.token, ip: freshIp() })).json()).defaultModel).toBe(id)
          const err = await setModelEnabled(core, id, false).then(() => null, (e: unknown) => e)
          expect(err).toMatchObject({ status: 400, code: 'default_model' })
        } finally {
          await setDefaultModel(core, TEST_MODEL)
        }
      })

      it('catalogue rules: unknown id 404, duplicate 409, malformed 422; parallel changes all land', async () => {
        const core = app.booted.core
        expect(await setModelEnabled(core, 'nope', true).then(() => null, (e: unknown) => e)).toMatchObject({ status: 404, code: 'unknown_model' })
        expect(await addCustomModel(core, { id: TEST_MODEL, name: 'x', category: 'x' }).then(() => null, (e: unknown) => e)).toMatchObject({ status: 409 })
        expect(await addCustomModel(core, { id: 'has space', name: '', category: 'x' }).then(() => null, (e: unknown) => e))
          .toMatchObject({ status: 422, fields: { id: expect.any(String), name: expect.any(String) } })
        const ids = Array.from({ length: 6 }, () => marker('parallel'))
        await Promise.all(ids.map((id) => addCustomModel(core, { id, name: id, category: 'general' })))
        await Promise.all([setModelEnabled(core, 'gpt-4o-mini', true), setModelEnabled(core, 'o4-mini', true)])
        const entries = await listModelEntries(core)
        for (const id of ids) expect(entries.find((e) => e.id === id)?.enabled).toBe(true)
        expect(entries.filter((e) => e.id === 'gpt-4o-mini' || e.id === 'o4-mini').every((e) => e.enabled)).toBe(true)
        await Promise.all([setModelEnabled(core, 'gpt-4o-mini', false), setModelEnabled(core, 'o4-mini', false)])
      })

      it('a catalogue setting that is not valid JSON falls back to the built-in models', async () => {
        const core = app.booted.core
        const [saved] = await app.db.sql<{ value: string }>`select value from clinical.app_config where key = ${MODELS_CATALOG_KEY}`
        await setConfigValues(core, { [MODELS_CATALOG_KEY]: '{not json' })
        try {
          const res = await app.get('/api/models', { token: clinician.token, ip: freshIp() })
          expect(res.status).toBe(200)
          expect((await res.json()).models.map((m: { id: string }) => m.id)).toEqual([TEST_MODEL])
        } finally {
          await setConfigValues(core, { [MODELS_CATALOG_KEY]: saved?.value ?? null })
        }
      })
    })

    describe('field rules', () => {
      it('missing, too long or wrongly typed fields are 422 invalid_fields naming each field; nothing reaches the gateway', async () => {
        const res = await post('/api/generate-soap', { transcript: 'x'.repeat(TRANSCRIPT_MAX + 1), patientAge: 4, type: 'x', model: TEST_MODEL })
        expect(res.status).toBe(422)
        const body = await res.json()
        expect(body).toMatchObject({ success: false, code: 'invalid_fields' })
        expect(body.fields.transcript).toBe(`At most ${TRANSCRIPT_MAX} characters`)
        expect(body.fields.patientAge).toBe('Must be text')
        expect(body.fields.patientGender).toBe('Required')
        expect(Object.keys(body.fields).sort()).toEqual(['patientAge', 'patientGender', 'transcript'])

        const cases: Array<[string, unknown, string]> = [
          ['/api/generate-hpi-encounter', { transcript: '', patientAge: '', patientGender: '', setting: '', model: TEST_MODEL }, 'transcript'],
          ['/api/generate-chart-review', { notes: 'x', visitType: 'x' }, 'model'],
          ['/api/well-visit/shadess', { responses: 'all fine', patientAge: '15', model: TEST_MODEL }, 'responses'],
          ['/api/well-visit/shadess', { responses: { school: { nested: 'object' } }, patientAge: '15', model: TEST_MODEL }, 'responses'],
          ['/api/generate-milestone-narrative', { milestones: [], patientAge: '1', patientGender: 'f', model: TEST_MODEL }, 'milestones'],
          ['/api/sick-visit/note', { patientAge: '3', patientGender: 'm', model: TEST_MODEL }, 'chiefComplaint'],
          ['/api/patient-education', { noteText: 'x', model: '' }, 'model'],
          ['/api/refine', { currentDocument: 'x', model: TEST_MODEL }, 'instructions'],
          ['/api/clarify', [], 'body'],
        ]
        for (const [path, payload, field] of cases) {
          const r = await post(path, payload)
          expect(r.status, `${path} ${JSON.stringify(payload)}`).toBe(422)
          expect(Object.keys((await r.json()).fields)).toContain(field)
        }
        expect(chats()).toHaveLength(0)
      })

      it('without a session: 401, before anything reaches the gateway', async () => {
        const res = await app.post('/api/generate-soap', { transcript: 'x', patientAge: '', patientGender: '', type: '', model: TEST_MODEL }, { ip: freshIp() })
        expect(res.status).toBe(401)
        expect((await app.get('/api/models', { ip: freshIp() })).status).toBe(401)
        expect(chats()).toHaveLength(0)
      })
    })

    describe('gateway failures and the usage log', () => {
      const soap = (transcript: string) => ({ transcript, patientAge: '30', patientGender: 'female', type: 'follow-up', model: TEST_MODEL })

      it('a successful call writes one usage row: user, endpoint, model, tokens, latency, ok; no text at all', async () => {
        const user = await userWithSession(app, 'user', 'usage')
        const secret = marker('Patient Jane Roe DOB 2010-01-01')
        ai.reply(() => `Note about ${secret}`)
        const res = await post('/api/generate-soap', soap(secret), {}, user)
        expect(res.status).toBe(200)
        const rows = await usageRows(app, user.user.id)
        expect(rows).toHaveLength(1)
        const [row] = rows
        expect(row).toMatchObject({ user_id: user.user.id, endpoint: '/api/generate-soap', model: TEST_MODEL, outcome: 'ok' })
        expect(row!.tokens_in).toBeGreaterThan(0)
        expect(row!.tokens_out).toBeGreaterThan(0)
        expect(row!.latency_ms).toBeGreaterThanOrEqual(0)
        expect(row!.everything).not.toContain(secret)
        expect(row!.everything).not.toContain('Jane')
      })

      it('no gateway configured: 503 ai_not_configured, and no usage row (nothing was called)', async () => {
        const someone = await userWithSession(offline)
        const res = await offline.post('/api/generate-soap', soap('x'), { token: someone.token, ip: freshIp() })
        expect(res.status).toBe(503)
        expect(await res.json()).toEqual({ success: false, error: 'Request failed', code: 'ai_not_configured' })
        const pe = await offline.post('/api/patient-education', { noteText: 'x' }, { token: someone.token, ip: freshIp() })
        expect(pe.status).toBe(503)
        expect(await usageRows(offline, someone.user.id)).toHaveLength(0)
      })

      it('a failing gateway: 502 ai_unreachable, with a usage row for the failure', async () => {
        const user = await userWithSession(app, 'user', 'fail')
        ai.failNext(500)
        const res = await post('/api/generate-soap', soap('x'), {}, user)
        expect(res.status).toBe(502)
        expect(await res.json()).toEqual({ success: false, error: 'Request failed', code: 'ai_unreachable' })
        const rows = await usageRows(app, user.user.id)
        expect(rows).toHaveLength(1)
        expect(rows[0]).toMatchObject({ outcome: 'ai_unreachable', tokens_in: null, tokens_out: null, endpoint: '/api/generate-soap' })
      })

      it('an empty answer is 502 ai_invalid_output', async () => {
        ai.reply(() => '   ')
        const res = await post('/api/shorten', { document: 'x', model: TEST_MODEL })
        expect(res.status).toBe(502)
        expect((await res.json()).code).toBe('ai_invalid_output')
      })

      it('a gateway slower than AI_TIMEOUT_MS: 504 ai_timeout when the timeout passes, with a usage row', async () => {
        const user = await userWithSession(app, 'user', 'slow')
        ai.delayNext(4000)
        const started = performance.now()
        const res = await post('/api/generate-soap', soap('x'), {}, user)
        expect(res.status).toBe(504)
        expect((await res.json()).code).toBe('ai_timeout')
        expect(performance.now() - started).toBeLessThan(3000)
        expect((await usageRows(app, user.user.id)).map((r) => r.outcome)).toEqual(['ai_timeout'])
      })

      it('usageSummary counts the last 30 days by model (with tokens) and by endpoint', async () => {
        const core = app.booted.core
        const model = marker('summary-model')
        const base = { userId: clinician.user.id, endpoint: '/api/refine', model, latencyMs: 5, outcome: 'ok' }
        await recordUsage(core, { ...base, tokensIn: 10, tokensOut: 5 })
        await recordUsage(core, { ...base, endpoint: '/api/shorten', tokensIn: null, tokensOut: 7, outcome: 'ai_timeout' })
        await app.db.sql`insert into clinical.ai_usage (user_id, endpoint, model, tokens_in, tokens_out, latency_ms, outcome, created_at)
          values (${clinician.user.id}, '/api/refine', ${model}, 100, 100, 1, 'ok', ${new Date(Date.now() - 31 * 86_400_000).toISOString()})`
        const summary = await usageSummary(core)
        expect(summary.byModel.find((m) => m.model === model)).toEqual({ model, count: 2, tokens: 22 })
        expect(summary.byEndpoint.find((e) => e.endpoint === '/api/refine')!.count).toBeGreaterThanOrEqual(1)
        expect((await usageSummary(core, 40)).byModel.find((m) => m.model === model)).toEqual({ model, count: 3, tokens: 222 })
      })
    })

    describe('streaming (Accept: text/event-stream)', () => {
      const SSE = { accept: 'text/event-stream' }

      it('delta events as the text is written, then done with the JSON answer; no-store; a usage row with tokens', async () => {
        const user = await userWithSession(app, 'user', 'stream')
        const note = `SUBJECTIVE: cough for two weeks. OBJECTIVE: clear lungs. ${marker('end')}`
        ai.reply(() => note)
        const res = await post('/api/generate-soap', { transcript: 'x', patientAge: '', patientGender: '', type: '', model: TEST_MODEL }, SSE, user)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toStartWith('text/event-stream')
        expect(res.headers.get('cache-control')).toBe('no-store')
        const events = parseEvents(await res.text())
        const deltas = events.filter((e) => e.event === 'delta')
        expect(deltas.length).toBeGreaterThan(2)
        expect(deltas.map((d) => d.data.text).join('')).toBe(note)
        expect(events.at(-1)).toEqual({ event: 'done', data: { success: true, soap: note, model: TEST_MODEL } })
        expect(events.filter((e) => e.event === 'done')).toHaveLength(1)
        expect(lastChat().body.stream).toBe(true)
        const rows = await usageRows(app, user.user.id)
        expect(rows).toHaveLength(1)
        expect(rows[0]).toMatchObject({ outcome: 'ok', endpoint: '/api/generate-soap' })
        expect(rows[0]!.tokens_out).toBeGreaterThan(0)
      })

      it('every endpoint streams', async () => {
        for (const e of endpoints()) {
          ai.reply(() => 'Streamed text')
          const res = await post(e.path, e.body, SSE)
          expect(res.headers.get('content-type'), e.path).toStartWith('text/event-stream')
          const events = parseEvents(await res.text())
          expect(events.at(-1), e.path).toEqual({ event: 'done', data: { success: true, [e.key]: 'Streamed text', model: TEST_MODEL } })
        }
      })

      it('a gateway failure before the first piece is the JSON error with its status (502)', async () => {
        ai.failNext(500)
        const res = await post('/api/shorten', { document: 'x', model: TEST_MODEL }, SSE)
        expect(res.status).toBe(502)
        expect(res.headers.get('content-type')).toStartWith('application/json')
        expect((await res.json()).code).toBe('ai_unreachable')
      })

      it('rules are checked before the stream: 400 unknown model, 422 fields, as JSON', async () => {
        expect((await post('/api/shorten', { document: 'x', model: 'nope' }, SSE)).status).toBe(400)
        expect((await post('/api/shorten', { model: TEST_MODEL }, SSE)).status).toBe(422)
      })

      it('a gateway that breaks off mid-way: the deltas so far, then an error event; the usage row records the failure', async () => {
        const user = await userWithSession(broken, 'user', 'broken')
        standIn.state.mode = 'break'
        const res = await post('/api/shorten', { document: 'x', model: TEST_MODEL }, SSE, user, broken)
        expect(res.status).toBe(200)
        const events = parseEvents(await res.text())
        expect(events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('')).toBe('Partial note ')
        expect(events.at(-1)).toEqual({ event: 'error', data: { error: 'Request failed', code: 'ai_unreachable' } })
        expect(events.some((e) => e.event === 'done')).toBe(false)
        const rows = await usageRows(broken, user.user.id)
        expect(rows.map((r) => r.outcome)).toEqual(['ai_unreachable'])
      })

      it('a client that closes the stream cancels the gateway call; the usage row says cancelled', async () => {
        const user = await userWithSession(broken, 'user', 'leaver')
        standIn.state.mode = 'drip'
        const hungUpBefore = standIn.state.hungUp
        const res = await post('/api/shorten', { document: 'x', model: TEST_MODEL }, SSE, user, broken)
        expect(res.status).toBe(200)
        const reader = res.body!.getReader()
        const first = await reader.read()
        expect(new TextDecoder().decode(first.value)).toContain('event: delta')
        await reader.cancel()
        await waitFor(async () => standIn.state.hungUp > hungUpBefore, 'the gateway call to be cancelled', 3000)
        const rows = await waitFor(async () => {
          const r = await usageRows(broken, user.user.id)
          return r.length > 0 ? r : null
        }, 'the usage row', 3000)
        expect(rows.map((r) => r.outcome)).toEqual(['cancelled'])
      })
    })
  })
}

// Spec 1, Speech: the voice list (cloud voices of the active tts configurations, the built-in voices), speaking
// through the gateway (`<gateway_route>:<speaker>`) and offline, the limits and the errors, through the real app
// and the project's OpenAI-compatible test server.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { SPEECH_TEXT_MAX } from '../plugins/quiz/models/speech'
import { SPEECH_RULE } from '../plugins/quiz/services/speech'
import { startAiServer, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, expectDetail, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(60_000)

interface Voice { id: string; name: string; is_default: boolean }

/** MPEG audio frame sync (0xFF then 0xFB, 0xF3 or 0xE3) or an ID3 tag at the start. */
const looksLikeMp3 = (b: Uint8Array) =>
  (b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33) || (b[0] === 0xff && [0xfb, 0xf3, 0xe3].includes(b[1]!))

for (const target of databaseTargets()) {
  describe(`speech [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    let admin: Account
    let user: Account

    const speak = (body: Record<string, unknown>, who: Account = user) => t.post(`${API}/tts/speak`, body, { token: who.token })
    const voices = async (): Promise<Voice[]> => {
      const res = await t.get(`${API}/tts/voices`, { token: user.token })
      expect(res.status).toBe(200)
      return (await res.json()) as Voice[]
    }
    const speechRequests = () => ai.requests.filter((r) => r.path === '/v1/audio/speech')
    const addTts = async (body: Record<string, unknown>) => {
      const res = await t.post(`${API}/admin/models`, { task: 'tts', ...body }, { token: admin.token })
      expect(res.status).toBe(200)
      return ((await res.json()) as { id: number }).id
    }
    const prefill = (who: Account, n: number) =>
      t.db.sql`insert into core.rate_hits (rule, subject, at) select ${SPEECH_RULE.name}, ${String(who.id)}, now() from generate_series(1, ${n})`

    beforeAll(async () => {
      ai = await startAiServer()
      // A gateway, but no TTS_MODEL and no tts configuration yet.
      t = await startTestApp({ target, env: ai.env })
      admin = await registerAdmin(t)
      user = await createAccount(t, admin, 'user')
    })
    afterAll(async () => {
      await t?.close()
      await ai?.close()
    })

    it('with no speech model: the built-in voices, English the default, and speak answers offline MP3', async () => {
      const list = await voices()
      expect(list[0]).toEqual({ id: 'offline:en', name: 'Built-in voice (offline)', is_default: true })
      expect(list.filter((v) => v.is_default).length).toBe(1)
      expect(list.every((v) => v.id.startsWith('offline:'))).toBe(true)
      ai.reset()
      const res = await speak({ text: 'The pancreas produces insulin.', voice: null })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('audio/mpeg')
      const audio = new Uint8Array(await res.arrayBuffer())
      expect(looksLikeMp3(audio)).toBe(true)
      // About two seconds at 48 kbit/s: kilobytes, not bytes and not megabytes.
      expect(audio.length).toBeGreaterThan(5_000)
      expect(audio.length).toBeLessThan(200_000)
      expect(speechRequests().length).toBe(0)
      const german = await speak({ text: 'Guten Tag', voice: 'offline:de' })
      expect(german.status).toBe(200)
      expect(looksLikeMp3(new Uint8Array(await german.arrayBuffer()))).toBe(true)
      const unknown = await speak({ text: 'Hello', voice: 'offline:xx' })
      expect(unknown.status).toBe(422)
      expect(JSON.stringify(await unknown.json())).toContain('voice')
    })

    it('lists active tts configurations (default first and the default voice) and leaves disabled providers out', async () => {
      await addTts({ name: 'Nova', model_id: 'tts-route:nova' })
      await addTts({ name: 'Echo', model_id: 'tts-route:echo' })
      await addTts({ name: 'Disabled provider', model_id: 'off-route:sam', is_active: false })
      await addTts({ name: 'A reader', model_id: 'teach-only', task: 'teach' })
      const list = await voices()
      expect(list.slice(0, 2)).toEqual([
        { id: 'tts-route:nova', name: 'Nova', is_default: true },
        { id: 'tts-route:echo', name: 'Echo', is_default: false },
      ])
      expect(list.map((v) => v.id)).not.toContain('off-route:sam')
      expect(list.map((v) => v.id)).not.toContain('teach-only')
      expect(list.find((v) => v.id === 'offline:en')).toEqual({ id: 'offline:en', name: 'Built-in voice (offline)', is_default: false })
      expect(list.filter((v) => v.is_default).length).toBe(1)
      expect((await t.get(`${API}/tts/voices`)).status).toBe(401)
    })

    it('speaks through the gateway: route as the model, speaker as the voice', async () => {
      ai.reset()
      const named = await speak({ text: 'Hello there', voice: 'tts-route:shimmer' })
      expect(named.status).toBe(200)
      expect(named.headers.get('content-type')).toBe('audio/mpeg')
      expect(looksLikeMp3(new Uint8Array(await named.arrayBuffer()))).toBe(true)
      const byDefault = await speak({ text: 'Default voice' })
      expect(byDefault.status).toBe(200)
      const routeOnly = await speak({ text: 'Route only', voice: 'plain-route' })
      expect(routeOnly.status).toBe(200)
      const sent = speechRequests().map((r) => ({ model: r.body.model, voice: r.body.voice, input: r.body.input, format: r.body.response_format }))
      expect(sent).toEqual([
        { model: 'tts-route', voice: 'shimmer', input: 'Hello there', format: 'mp3' },
        { model: 'tts-route', voice: 'nova', input: 'Default voice', format: 'mp3' },
        // No colon: the route's default speaker.
        { model: 'plain-route', voice: 'alloy', input: 'Route only', format: 'mp3' },
      ])
    })

    it('a disabled provider is refused; a failing gateway is 502, never replaced by the built-in voice', async () => {
      ai.reset()
      await expectDetail(await speak({ text: 'Hi', voice: 'off-route:sam' }), 400)
      await expectDetail(await speak({ text: 'Hi', voice: 'off-route:other' }), 400)
      expect(speechRequests().length).toBe(0)
      ai.failNext(500)
      expect(await expectDetail(await speak({ text: 'Hi', voice: 'tts-route:nova' }), 502)).toContain('AI service')
      ai.failNext(503)
      await expectDetail(await speak({ text: 'Hi' }), 502)
      expect(speechRequests().length).toBe(2)
    })

    it('text: 1 to 2000 characters, else 422', async () => {
      ai.reset()
      expect((await speak({ text: 'x'.repeat(SPEECH_TEXT_MAX), voice: 'tts-route:nova' })).status).toBe(200)
      expect(speechRequests()[0]!.body.input.length).toBe(SPEECH_TEXT_MAX)
      for (const body of [{ text: 'x'.repeat(SPEECH_TEXT_MAX + 1) }, { text: '' }, { text: '   ' }, {}, { text: 5 }, { text: 'hi', voice: 'v'.repeat(301) }]) {
        expect((await speak(body)).status).toBe(422)
      }
      expect(speechRequests().length).toBe(1)
    })

    it('60 requests per hour: the 61st is 429 with Retry-After; admins and unthrottled users are exempt', async () => {
      const learner = await createAccount(t, admin, 'user', 'listener')
      await prefill(learner, 59)
      expect((await speak({ text: 'Sixtieth', voice: 'tts-route:nova' }, learner)).status).toBe(200)
      const limited = await speak({ text: 'One too many', voice: 'tts-route:nova' }, learner)
      expect(await expectDetail(limited, 429)).toContain('60')
      const retry = Number(limited.headers.get('retry-after'))
      expect(retry).toBeGreaterThan(3000)
      expect(retry).toBeLessThanOrEqual(3600)
      // The offline voice counts too.
      expect((await speak({ text: 'Offline', voice: 'offline:en' }, learner)).status).toBe(429)

      await prefill(admin, 80)
      expect((await speak({ text: 'Admin', voice: 'tts-route:nova' }, admin)).status).toBe(200)
      expect((await t.put(`${API}/admin/users/${learner.id}/unthrottle`, { unthrottled: true }, { token: admin.token })).status).toBe(200)
      expect((await speak({ text: 'Unthrottled', voice: 'tts-route:nova' }, learner)).status).toBe(200)
    })
  })
}

describe('speech without a gateway', () => {
  it('the built-in voice speaks; a cloud voice is 503', async () => {
    const t = await startTestApp()
    try {
      const admin = await registerAdmin(t)
      const voices = (await (await t.get(`${API}/tts/voices`, { token: admin.token })).json()) as Voice[]
      expect(voices.find((v) => v.is_default)?.id).toBe('offline:en')
      const res = await speak(t, admin, { text: 'Offline only.' })
      expect(res.status).toBe(200)
      expect(looksLikeMp3(new Uint8Array(await res.arrayBuffer()))).toBe(true)
      await expectDetail(await speak(t, admin, { text: 'Hi', voice: 'tts-1:alloy' }), 503)
    } finally {
      await t.close()
    }
  })
})

function speak(t: TestApp, who: Account, body: Record<string, unknown>) {
  return t.post(`${API}/tts/speak`, body, { token: who.token })
}

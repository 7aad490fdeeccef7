// Dictation and speech of the clinical service: GET /api/transcribe/status, POST /api/transcribe (multipart audio,
// 25 MB refused before it is read, the duration read from the recording), POST /api/text-to-speech (the gateway's
// voices and the built-in offline voice, X-TTS-Provider), the preferences and their options, and the usage rows of
// every gateway call, through the real app, with the project's OpenAI-compatible test server and without any gateway.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { TRANSCRIBE_MAX_BYTES, SPEECH_TEXT_MAX } from '../plugins/clinical/models/speech'
import { TRANSCRIBE_BODY_LIMIT } from '../plugins/clinical/routes/speech'
import { setConfigValues } from '../plugins/clinical/services/app-config'
import { DEFAULT_STT_MODEL } from '../plugins/clinical/services/preferences'
import { SESSION_TOUCH_THROTTLE_MS } from '../plugins/clinical/services/sessions'
import { OFFLINE_VOICES } from '../src/core/speech'
import { startAiServer, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { cookieValue, signIn, userWithSession, WEB, withCookie, type SignedIn } from './support/clinical'

setDefaultTimeout(60_000)

const MiB = 1024 * 1024
const SAMPLE_RATE = 16_000

/** A real PCM WAV file (16-bit mono, 16 kHz): a 440 Hz tone of `seconds`, or exactly `bytes` long. */
function makeWav(opts: { seconds?: number; bytes?: number }): Uint8Array {
  const dataBytes = opts.bytes !== undefined ? opts.bytes - 44 : Math.round((opts.seconds ?? 1) * SAMPLE_RATE) * 2
  const out = new Uint8Array(44 + dataBytes)
  const view = new DataView(out.buffer)
  const ascii = (at: number, s: string) => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)))
  ascii(0, 'RIFF')
  view.setUint32(4, 36 + dataBytes, true)
  ascii(8, 'WAVE')
  ascii(12, 'fmt ')
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // PCM
  view.setUint16(22, 1, true) // mono
  view.setUint32(24, SAMPLE_RATE, true)
  view.setUint32(28, SAMPLE_RATE * 2, true)
  view.setUint16(32, 2, true)
  view.setUint16(34, 16, true)
  ascii(36, 'data')
  view.setUint32(40, dataBytes, true)
  // A tone for short files; long ones (the size limits) stay silent, which is as valid and much faster to make.
  if (dataBytes <= 10 * SAMPLE_RATE * 2) {
    for (let i = 0; i < dataBytes / 2; i++) view.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), true)
  }
  return out
}

/** MPEG audio frame sync or an ID3 tag at the start. */
const looksLikeMp3 = (b: Uint8Array) =>
  (b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33) || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0)

/**
 * A multipart body with one `audio` part of `fileBytes` bytes, produced on demand in 64 KiB chunks, so a test can
 * see how much of it the server pulled. `declare` sends a Content-Length (the real one unless a number is given).
 */
function streamedUpload(fileBytes: number, declare: boolean | number) {
  const boundary = '----speech-test-boundary'
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="audio"; filename="long.wav"\r\nContent-Type: audio/wav\r\n\r\n`)
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`)
  const wavHead = makeWav({ seconds: 0 }).slice(0, 44)
  const total = head.length + fileBytes + tail.length
  let sent = 0
  const chunk = 64 * 1024
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) {
        controller.enqueue(head)
        controller.enqueue(wavHead)
        sent = head.length + wavHead.length
        return
      }
      const fileLeft = head.length + fileBytes - sent
      if (fileLeft <= 0) {
        controller.enqueue(tail)
        sent += tail.length
        controller.close()
        return
      }
      const n = Math.min(chunk, fileLeft)
      controller.enqueue(new Uint8Array(n))
      sent += n
    },
  })
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  if (declare !== false) headers['content-length'] = String(declare === true ? total : declare)
  return { body, headers, total, pulled: () => sent }
}

interface UsageRow { user_id: number | null; endpoint: string; model: string; tokens_in: number | null; tokens_out: number | null; latency_ms: number; outcome: string }

for (const target of databaseTargets()) {
  describe(`dictation and speech with a gateway [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    let clinician: SignedIn & { email: string }

    const upload = (audio: Blob | Uint8Array, opts: { token?: string | null; name?: string; type?: string; headers?: Record<string, string> } = {}) => {
      const form = new FormData()
      form.append('audio', audio instanceof Blob ? audio : new File([audio as Uint8Array<ArrayBuffer>], opts.name ?? 'dictation.wav', { type: opts.type ?? 'audio/wav' }))
      return t.request('/api/transcribe', { method: 'POST', body: form, token: opts.token === null ? undefined : (opts.token ?? clinician.token), headers: opts.headers })
    }
    const speak = (body: Record<string, unknown>, token = clinician.token) => t.post('/api/text-to-speech', body, { token })
    const usageRows = (userId: number, endpoint: string) => t.db.sql<UsageRow>`
      select user_id, endpoint, model, tokens_in, tokens_out, latency_ms, outcome from clinical.ai_usage
      where user_id = ${userId} and endpoint = ${endpoint} order by id`
    const gatewayCalls = (path: string) => ai.requests.filter((r) => r.path === path)
    const sendStreamed = (up: ReturnType<typeof streamedUpload>, token?: string) =>
      t.request('/api/transcribe', { method: 'POST', body: up.body, headers: up.headers, token, duplex: 'half' } as Parameters<TestApp['request']>[1])

    beforeAll(async () => {
      ai = await startAiServer({ transcript: 'Three days of cough and fever.' })
      t = await startTestApp({ target, env: { ...ai.env, STT_MODEL: 'whisper-test', TTS_MODEL: 'tts-test' } })
      clinician = await userWithSession(t)
    })
    afterAll(async () => {
      await t?.close()
      await ai?.close()
    })

    it('status: available through the gateway', async () => {
      const res = await t.get('/api/transcribe/status', { token: clinician.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ available: true, provider: 'litellm' })
    })

    it('the API document shows the upload as a multipart form with its body limit, and speech as audio/mpeg', async () => {
      const doc = (await (await t.get('/docs/json')).json()) as { paths: Record<string, Record<string, any>> }
      const upload = doc.paths['/api/transcribe']?.post
      expect(Object.keys(upload?.requestBody?.content ?? {})).toEqual(['multipart/form-data'])
      expect(upload?.['x-body-limit']?.bytes).toBe(TRANSCRIBE_BODY_LIMIT.bytes)
      expect(Object.keys(doc.paths['/api/text-to-speech']?.post?.responses?.['200']?.content ?? {})).toEqual(['audio/mpeg'])
    })

    it('transcribes a real WAV: the text, provider, its duration read from the file, STT_MODEL, and one usage row', async () => {
      ai.reset()
      const wav = makeWav({ seconds: 2.5 })
      const res = await upload(wav, { name: 'blob', type: 'application/octet-stream' })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true, text: 'Three days of cough and fever.', provider: 'litellm', duration: 2.5 })
      const [call] = gatewayCalls('/v1/audio/transcriptions')
      expect(call?.body.model).toBe('whisper-test')
      // the gateway is told the container by the file name, from the leading bytes (the upload was named "blob")
      expect(call?.body.file).toMatchObject({ name: 'audio.wav', size: wav.length })
      const rows = await usageRows(clinician.user.id, '/api/transcribe')
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ model: 'whisper-test', tokens_in: null, tokens_out: null, outcome: 'ok' })
      expect(rows[0]!.latency_ms).toBeGreaterThanOrEqual(0)
    })

    it('a file exactly 25 MB is accepted (duration from its header); one byte more is 413 and the gateway is not called', async () => {
      const user = await userWithSession(t)
      ai.reset()
      const atLimit = makeWav({ bytes: TRANSCRIBE_MAX_BYTES })
      const ok = await upload(atLimit, { token: user.token })
      expect(ok.status).toBe(200)
      const samples = (TRANSCRIBE_MAX_BYTES - 44) / 2
      expect(((await ok.json()) as { duration: number }).duration).toBe(Math.round((samples / SAMPLE_RATE) * 100) / 100)
      expect(gatewayCalls('/v1/audio/transcriptions')[0]?.body.file.size).toBe(TRANSCRIBE_MAX_BYTES)

      ai.reset()
      const over = makeWav({ bytes: TRANSCRIBE_MAX_BYTES + 1 })
      const res = await upload(over, { token: user.token })
      expect(res.status).toBe(413)
      expect(await res.json()).toMatchObject({ success: false, code: 'audio_too_large' })
      expect(gatewayCalls('/v1/audio/transcriptions')).toHaveLength(0)
      expect(await usageRows(user.user.id, '/api/transcribe')).toHaveLength(1)
    })

    it('26 MB with its Content-Length is refused with 413 before the body is read', async () => {
      ai.reset()
      const up = streamedUpload(26 * MiB, true)
      expect(up.total).toBeGreaterThan(TRANSCRIBE_BODY_LIMIT.bytes)
      const res = await sendStreamed(up, clinician.token)
      expect(res.status).toBe(413)
      expect(await res.json()).toMatchObject({ success: false, code: 'audio_too_large' })
      // the stream's first pull at most (the part head and the WAV header): nothing of the 26 MB was asked for
      expect(up.pulled()).toBeLessThan(64 * 1024)
      expect(gatewayCalls('/v1/audio/transcriptions')).toHaveLength(0)
    })

    it('a chunked 40 MB body (no Content-Length) is cut off at the limit with 413, not read to its end', async () => {
      const up = streamedUpload(40 * MiB, false)
      const res = await sendStreamed(up, clinician.token)
      expect(res.status).toBe(413)
      expect(up.pulled()).toBeLessThan(TRANSCRIBE_BODY_LIMIT.bytes + 4 * 64 * 1024)
    })

    it('401 without a session, before the upload is read; nothing reaches the gateway', async () => {
      ai.reset()
      const up = streamedUpload(10 * MiB, true)
      const res = await sendStreamed(up)
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ success: false })
      expect(up.pulled()).toBeLessThan(64 * 1024)
      expect((await upload(makeWav({ seconds: 1 }), { token: null })).status).toBe(401)
      expect((await t.get('/api/transcribe/status')).status).toBe(401)
      expect((await t.post('/api/text-to-speech', { text: 'Hello' })).status).toBe(401)
      expect((await t.get('/api/user/preferences')).status).toBe(401)
      expect((await t.post('/api/user/preferences', { tts_voice: 'offline:en' })).status).toBe(401)
      expect((await t.get('/api/user/preferences/options')).status).toBe(401)
      expect(gatewayCalls('/v1/audio/transcriptions')).toHaveLength(0)
    })

    it('a web session (cookie) uploads too, and an upload after 10 idle minutes re-issues its cookie', async () => {
      const web = await signIn(t, clinician.email, { headers: WEB })
      const fresh = await upload(makeWav({ seconds: 1 }), { token: null, headers: withCookie(web.token) })
      expect(fresh.status).toBe(200)
      expect(((await fresh.json()) as { duration: number }).duration).toBe(1)
      expect(cookieValue(fresh)).toBeNull()
      const idle = new Date(Date.now() - SESSION_TOUCH_THROTTLE_MS - 60_000).toISOString()
      await t.db.sql`update clinical.user_sessions set last_activity = ${idle} where id = ${web.sessionId}`
      const later = await upload(makeWav({ seconds: 1 }), { token: null, headers: withCookie(web.token) })
      expect(later.status).toBe(200)
      expect(cookieValue(later)).toBe(web.token)
    })

    it('bad uploads: empty 400, missing field 400, not a recording 415; no gateway call', async () => {
      ai.reset()
      const empty = await upload(new Uint8Array(0))
      expect(empty.status).toBe(400)
      expect(await empty.json()).toMatchObject({ code: 'empty_audio' })
      const form = new FormData()
      form.append('file', new File([makeWav({ seconds: 1 }) as Uint8Array<ArrayBuffer>], 'a.wav'))
      expect((await t.request('/api/transcribe', { method: 'POST', body: form, token: clinician.token })).status).toBe(400)
      const text = await upload(new TextEncoder().encode('Patient notes, not audio at all.'), { name: 'notes.wav', type: 'audio/wav' })
      expect(text.status).toBe(415)
      expect(await text.json()).toMatchObject({ success: false, code: 'unsupported_audio' })
      const json = await t.post('/api/transcribe', { audio: 'UklGRg==' }, { token: clinician.token })
      expect(json.status).toBe(400)
      expect(gatewayCalls('/v1/audio/transcriptions')).toHaveLength(0)
    })

    it('a WAV whose header is cut short still transcribes, with duration 0 (the rule when the length cannot be read)', async () => {
      const wav = makeWav({ seconds: 1 }).slice(0, 40) // RIFF and fmt, no data chunk
      const res = await upload(wav)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ success: true, duration: 0 })
    })

    it('a failing gateway is 502 with the generic body, and the usage row says so, for a transcription and for speech', async () => {
      const user = await userWithSession(t)
      ai.reset()
      ai.failNext(500)
      const res = await upload(makeWav({ seconds: 1 }), { token: user.token })
      expect(res.status).toBe(502)
      expect(await res.json()).toEqual({ success: false, error: 'Request failed', code: 'ai_unreachable' })
      const rows = await usageRows(user.user.id, '/api/transcribe')
      expect(rows.map((r) => r.outcome)).toEqual(['ai_unreachable'])

      ai.failNext(503)
      const speech = await speak({ text: 'Take one tablet twice a day.' }, user.token)
      expect(speech.status).toBe(502)
      expect((await usageRows(user.user.id, '/api/text-to-speech')).map((r) => r.outcome)).toEqual(['ai_unreachable'])
    })

    it('a gateway slower than AI_TIMEOUT_MS is 504 ai_timeout for a transcription and for speech, with usage rows', async () => {
      const slow = await startTestApp({ target, env: { ...ai.env, TTS_MODEL: 'tts-test', AI_TIMEOUT_MS: '500' } })
      try {
        const user = await userWithSession(slow)
        ai.reset()
        ai.delayNext(1500, 2)
        const form = new FormData()
        form.append('audio', new File([makeWav({ seconds: 1 }) as Uint8Array<ArrayBuffer>], 'a.wav', { type: 'audio/wav' }))
        const res = await slow.request('/api/transcribe', { method: 'POST', body: form, token: user.token })
        expect(res.status).toBe(504)
        expect(await res.json()).toMatchObject({ success: false, code: 'ai_timeout' })
        expect((await slow.post('/api/text-to-speech', { text: 'Hello' }, { token: user.token })).status).toBe(504)
        const rows = await slow.db.sql<UsageRow>`select endpoint, model, outcome from clinical.ai_usage where user_id = ${user.user.id} order by id`
        expect(rows.map((r) => [r.endpoint, r.model, r.outcome])).toEqual([
          ['/api/transcribe', DEFAULT_STT_MODEL, 'ai_timeout'], ['/api/text-to-speech', 'tts-test', 'ai_timeout'],
        ])
      } finally {
        await slow.close()
      }
    })

    it('options: the default transcription model first, the gateway voices then the built-in ones; the admin settings add more', async () => {
      const res = await t.get('/api/user/preferences/options', { token: clinician.token })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { sttModels: { value: string; label: string }[]; ttsVoices: { value: string; label: string }[]; sttProvider: string; ttsProvider: string }
      expect(body).toMatchObject({ success: true, sttProvider: 'litellm', ttsProvider: 'litellm' })
      expect(body.sttModels).toEqual([{ value: 'whisper-test', label: 'whisper-test (default)' }])
      expect(body.ttsVoices[0]).toEqual({ value: 'tts-test:alloy', label: 'Alloy (tts-test)' })
      expect(body.ttsVoices.map((v) => v.value)).toContain('tts-test:nova')
      expect(body.ttsVoices.slice(-OFFLINE_VOICES.length).map((v) => v.value)).toEqual(OFFLINE_VOICES.map((v) => v.id))

      await setConfigValues(t.booted.core, { 'stt.models': 'whisper-large, whisper-test', 'tts.voices': 'nova,shimmer' })
      try {
        const more = (await (await t.get('/api/user/preferences/options', { token: clinician.token })).json()) as typeof body
        expect(more.sttModels.map((m) => m.value)).toEqual(['whisper-test', 'whisper-large'])
        expect(more.ttsVoices.map((v) => v.value).slice(0, 3)).toEqual(['tts-test:nova', 'tts-test:shimmer', 'offline:en'])
      } finally {
        await setConfigValues(t.booted.core, { 'stt.models': null, 'tts.voices': null })
      }
    })

    it('preferences: the defaults, a valid choice stored and used, an unknown one 422 with nothing stored, empty resets', async () => {
      const user = await userWithSession(t)
      const get = async () => (await (await t.get('/api/user/preferences', { token: user.token })).json()) as Record<string, unknown>
      expect(await get()).toEqual({ success: true, stt_model: 'whisper-test', tts_voice: 'tts-test:alloy' })

      await setConfigValues(t.booted.core, { 'stt.models': 'whisper-large' })
      try {
        const ok = await t.post('/api/user/preferences', { stt_model: 'whisper-large', tts_voice: 'tts-test:nova' }, { token: user.token })
        expect(ok.status).toBe(200)
        expect(await ok.json()).toEqual({ success: true })
        expect(await get()).toEqual({ success: true, stt_model: 'whisper-large', tts_voice: 'tts-test:nova' })

        // the chosen model is the one the gateway is asked for, and the usage row names it
        ai.reset()
        expect((await upload(makeWav({ seconds: 1 }), { token: user.token })).status).toBe(200)
        expect(gatewayCalls('/v1/audio/transcriptions')[0]?.body.model).toBe('whisper-large')
        expect((await usageRows(user.user.id, '/api/transcribe')).map((r) => r.model)).toEqual(['whisper-large'])
        // and the chosen voice speaks when no voice is named
        expect((await speak({ text: 'Drink plenty of fluids.' }, user.token)).headers.get('x-tts-provider')).toBe('litellm')
        expect(gatewayCalls('/v1/audio/speech')[0]?.body).toMatchObject({ model: 'tts-test', voice: 'nova' })

        const bad = await t.post('/api/user/preferences', { stt_model: 'gpt-unknown', tts_voice: 'offline:xx' }, { token: user.token })
        expect(bad.status).toBe(422)
        expect(((await bad.json()) as { fields: Record<string, string> }).fields).toHaveProperty('stt_model')
        const badVoice = await t.post('/api/user/preferences', { tts_voice: 'tts-test:robot' }, { token: user.token })
        expect(badVoice.status).toBe(422)
        expect(((await badVoice.json()) as { fields: Record<string, string> }).fields).toHaveProperty('tts_voice')
        expect(await get()).toEqual({ success: true, stt_model: 'whisper-large', tts_voice: 'tts-test:nova' })

        // one field alone leaves the other; empty goes back to the default
        expect((await t.post('/api/user/preferences', { tts_voice: 'offline:de' }, { token: user.token })).status).toBe(200)
        expect(await get()).toEqual({ success: true, stt_model: 'whisper-large', tts_voice: 'offline:de' })
        expect((await t.post('/api/user/preferences', { stt_model: '' }, { token: user.token })).status).toBe(200)
        expect(await get()).toEqual({ success: true, stt_model: 'whisper-test', tts_voice: 'offline:de' })
        expect((await t.post('/api/user/preferences', { stt_model: 'whisper-large' }, { token: user.token })).status).toBe(200)
      } finally {
        await setConfigValues(t.booted.core, { 'stt.models': null })
      }
      // a choice the server no longer offers is set aside: the default applies
      expect((await get()).stt_model).toBe('whisper-test')
      const [stored] = await t.db.sql<{ stt_model: string }>`select stt_model from clinical.user_preferences where user_id = ${user.user.id}`
      expect(stored?.stt_model).toBe('whisper-large')
      // another user's preferences are their own
      expect((await (await t.get('/api/user/preferences', { token: clinician.token })).json())).toMatchObject({ tts_voice: 'tts-test:alloy' })
    })

    it('text-to-speech through the gateway: audio/mpeg, X-TTS-Provider litellm, the default voice, a usage row', async () => {
      const user = await userWithSession(t)
      ai.reset()
      const res = await speak({ text: 'Give paracetamol every six hours.' }, user.token)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('audio/mpeg')
      expect(res.headers.get('x-tts-provider')).toBe('litellm')
      expect(looksLikeMp3(new Uint8Array(await res.arrayBuffer()))).toBe(true)
      expect(gatewayCalls('/v1/audio/speech')[0]?.body).toMatchObject({ model: 'tts-test', voice: 'alloy', input: 'Give paracetamol every six hours.', response_format: 'mp3' })
      const rows = await usageRows(user.user.id, '/api/text-to-speech')
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ model: 'tts-test', outcome: 'ok', tokens_in: null })
    })

    it('a named voice: a gateway voice, a bare speaker, a built-in voice (offline, no usage row); unknown ones 422', async () => {
      const user = await userWithSession(t)
      ai.reset()
      expect((await speak({ text: 'One', voice: 'tts-test:shimmer' }, user.token)).status).toBe(200)
      expect((await speak({ text: 'Two', voice: 'nova' }, user.token)).status).toBe(200)
      expect(gatewayCalls('/v1/audio/speech').map((r) => r.body.voice)).toEqual(['shimmer', 'nova'])

      const offline = await speak({ text: 'Keep the wound clean and dry.', voice: 'offline:en' }, user.token)
      expect(offline.status).toBe(200)
      expect(offline.headers.get('x-tts-provider')).toBe('offline')
      expect(offline.headers.get('content-type')).toBe('audio/mpeg')
      const mp3 = new Uint8Array(await offline.arrayBuffer())
      expect(looksLikeMp3(mp3)).toBe(true)
      expect(mp3.length).toBeGreaterThan(2000)
      expect(gatewayCalls('/v1/audio/speech')).toHaveLength(2)
      expect(await usageRows(user.user.id, '/api/text-to-speech')).toHaveLength(2)

      for (const voice of ['offline:xx', 'tts-test:robot', 'other-model:alloy', 'robot']) {
        const res = await speak({ text: 'Hello', voice }, user.token)
        expect(res.status, voice).toBe(422)
        expect(await res.json()).toMatchObject({ success: false, code: 'unknown_voice' })
      }
      expect(gatewayCalls('/v1/audio/speech')).toHaveLength(2)
    })

    it('text limits: 1 to the maximum characters; empty and too long are 400, only spaces 422', async () => {
      ai.reset()
      expect((await speak({ text: '' })).status).toBe(400)
      expect((await speak({ text: 'x'.repeat(SPEECH_TEXT_MAX + 1) })).status).toBe(400)
      expect((await speak({})).status).toBe(400)
      const blank = await speak({ text: '   \n ' })
      expect(blank.status).toBe(422)
      expect(await blank.json()).toMatchObject({ code: 'blank_text' })
      expect(gatewayCalls('/v1/audio/speech')).toHaveLength(0)
      expect((await speak({ text: 'x'.repeat(SPEECH_TEXT_MAX) })).status).toBe(200)
    })
  })

  describe(`dictation and speech without a gateway [${target}]`, () => {
    let t: TestApp
    let clinician: SignedIn & { email: string }

    beforeAll(async () => {
      t = await startTestApp({ target, env: { AI_BASE_URL: undefined, STT_MODEL: 'whisper-test', TTS_MODEL: 'tts-test' } })
      clinician = await userWithSession(t)
    })
    afterAll(() => t?.close())

    it('status says unavailable, and a transcription is 503 transcription_unavailable with no usage row', async () => {
      expect(await (await t.get('/api/transcribe/status', { token: clinician.token })).json()).toEqual({ available: false, provider: 'none' })
      const form = new FormData()
      form.append('audio', new File([makeWav({ seconds: 1 }) as Uint8Array<ArrayBuffer>], 'a.wav', { type: 'audio/wav' }))
      const res = await t.request('/api/transcribe', { method: 'POST', body: form, token: clinician.token })
      expect(res.status).toBe(503)
      expect(await res.json()).toEqual({ success: false, error: 'Request failed', code: 'transcription_unavailable' })
      const [{ n }] = (await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.ai_usage where user_id = ${clinician.user.id}`) as [{ n: number }]
      expect(n).toBe(0)
    })

    it('speech falls back to the built-in voice: MP3 with X-TTS-Provider offline, default and named', async () => {
      const res = await t.post('/api/text-to-speech', { text: 'Rest and drink fluids.' }, { token: clinician.token })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-tts-provider')).toBe('offline')
      expect(res.headers.get('content-type')).toBe('audio/mpeg')
      const mp3 = new Uint8Array(await res.arrayBuffer())
      expect(looksLikeMp3(mp3)).toBe(true)
      expect(mp3.length).toBeGreaterThan(2000)
      const french = await t.post('/api/text-to-speech', { text: 'Bonjour', voice: 'offline:fr' }, { token: clinician.token })
      expect(french.status).toBe(200)
      expect(french.headers.get('x-tts-provider')).toBe('offline')
      // no gateway, so its voices are not offered: TTS_MODEL alone does not make one
      const cloud = await t.post('/api/text-to-speech', { text: 'Hello', voice: 'tts-test:alloy' }, { token: clinician.token })
      expect(cloud.status).toBe(422)
      expect((await t.post('/api/text-to-speech', { text: 'Hello', voice: 'offline:xx' }, { token: clinician.token })).status).toBe(422)
    })

    it('options and preferences offline: no transcription models, the built-in voices; a voice can be chosen', async () => {
      const options = await (await t.get('/api/user/preferences/options', { token: clinician.token })).json()
      expect(options).toEqual({
        success: true, sttModels: [], sttProvider: 'none', ttsProvider: 'offline',
        ttsVoices: OFFLINE_VOICES.map((v) => ({ value: v.id, label: v.name })),
      })
      expect(await (await t.get('/api/user/preferences', { token: clinician.token })).json()).toEqual({ success: true, stt_model: '', tts_voice: 'offline:en' })
      const refused = await t.post('/api/user/preferences', { stt_model: DEFAULT_STT_MODEL }, { token: clinician.token })
      expect(refused.status).toBe(422)
      expect(((await refused.json()) as { fields: Record<string, string> }).fields.stt_model).toContain('not available')
      expect((await t.post('/api/user/preferences', { tts_voice: 'offline:es' }, { token: clinician.token })).status).toBe(200)
      expect(await (await t.get('/api/user/preferences', { token: clinician.token })).json()).toEqual({ success: true, stt_model: '', tts_voice: 'offline:es' })
    })
  })
}

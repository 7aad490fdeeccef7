// Spec 1, Speech: the voices a learner may pick and text-to-speech. Cloud voices are the `tts` model
// configurations (the gateway route and speaker in their model_id, `<gateway_route>:<speaker>`), spoken through the
// AI gateway; the built-in voices (src/core/speech.ts) speak offline and are always offered, so speech works on a
// server with no gateway or speech model at all.
import type { AiTarget } from '../../../src/core/ai'
import { aiNotConfigured } from '../../../src/core/ai'
import { HttpError } from '../../../src/core/errors'
import type { RateRule } from '../../../src/core/ratelimit'
import { offlineSpeech } from '../../../src/core/speech'
import type { Core } from '../../../src/plugin'
import type { SpeakBody, SpeechVoice } from '../models/speech'
import type { QuizUser } from './accounts'
import { environmentModel, resolveModel, SERVER_DEFAULT_NAME } from './ai-models'
import { isExempt } from './tutor'

/** spec 1, limits: 60 speech requests per user per hour; admins and unthrottled users are exempt. */
export const SPEECH_RULE: RateRule = {
  name: 'quiz.speech', limit: 60, windowS: 3600, message: 'Too many speech requests: at most 60 per hour, try again later',
}

interface TtsRow { id: number; name: string; model_id: string; is_active: boolean; is_default: boolean }

/** `<gateway_route>:<speaker>`: the route (the gateway's model) and the speaker, null when the id has no colon or nothing after it. */
export function splitVoice(voice: string): { route: string; speaker: string | null } {
  const at = voice.indexOf(':')
  if (at < 0) return { route: voice, speaker: null }
  return { route: voice.slice(0, at), speaker: voice.slice(at + 1) || null }
}

/** What speak uses when no voice is named: the active default tts model, else TTS_MODEL on the server's gateway, else the built-in voice. */
async function defaultVoice(core: Core): Promise<{ kind: 'row'; row: TtsRow } | { kind: 'environment'; model: string } | { kind: 'offline' }> {
  const [row] = await core.db.sql<TtsRow>`
    select id, name, model_id, is_active, is_default from quiz.ai_models where task = 'tts' and is_default and is_active`
  if (row) return { kind: 'row', row }
  const model = environmentModel(core, 'tts')
  return model ? { kind: 'environment', model } : { kind: 'offline' }
}

/**
 * The active tts configurations (a disabled one is left out), default first; the server's TTS_MODEL when it is the
 * default; then the built-in voices. Exactly one entry is the default: what speak uses with no voice.
 */
export async function listVoices(core: Core): Promise<SpeechVoice[]> {
  const rows = await core.db.sql<TtsRow>`
    select id, name, model_id, is_active, is_default from quiz.ai_models
    where task = 'tts' and is_active
    order by is_default desc, name, id`
  const fallback = await defaultVoice(core)
  const voices: SpeechVoice[] = rows.map((r) => ({ id: r.model_id, name: r.name, is_default: fallback.kind === 'row' && fallback.row.id === r.id }))
  if (fallback.kind === 'environment' && !voices.some((v) => v.id === fallback.model)) {
    voices.unshift({ id: fallback.model, name: SERVER_DEFAULT_NAME, is_default: true })
  }
  for (const v of offlineSpeech.voices) {
    voices.push({ id: v.id, name: v.name, is_default: fallback.kind === 'offline' && v.id === offlineSpeech.defaultVoice })
  }
  return voices
}

const voiceDisabled = (name: string) => HttpError.badRequest('voice_disabled', `The voice ${name} is disabled`)

/** The gateway call for a named cloud voice: its configuration's gateway and key when one matches, else the server's gateway. */
async function cloudTarget(core: Core, voice: string): Promise<AiTarget> {
  const { route } = splitVoice(voice)
  const rows = await core.db.sql<TtsRow>`
    select id, name, model_id, is_active, is_default from quiz.ai_models where task = 'tts' order by is_default desc, id`
  const exact = rows.find((r) => r.model_id === voice)
  if (exact) {
    if (!exact.is_active) throw voiceDisabled(exact.name)
    return resolveModel(core, 'tts', exact.id)
  }
  // Another speaker of a configured route: that configuration's gateway and key; a route whose configurations are all disabled is disabled.
  const sameRoute = rows.filter((r) => splitVoice(r.model_id).route === route)
  if (sameRoute.length > 0) {
    const active = sameRoute.find((r) => r.is_active)
    if (!active) throw voiceDisabled(route)
    return resolveModel(core, 'tts', active.id)
  }
  if (!core.config.ai.baseUrl) throw aiNotConfigured(`No AI gateway is configured for the voice ${voice}`)
  return { model: route, baseUrl: core.config.ai.baseUrl, apiKey: core.config.ai.apiKey }
}

/**
 * Speaks the text: MP3 bytes. The voice is resolved first (422 unknown built-in voice, 400 disabled, 503 a cloud
 * voice with no gateway), then the caller's limit is counted (429), then the audio is made: a cloud voice that
 * fails is a 502 (504 on timeout), never silently replaced by the built-in voice.
 */
export async function speak(core: Core, user: QuizUser, body: SpeakBody): Promise<Uint8Array> {
  if (body.text.trim() === '') throw HttpError.unprocessable('blank_text', 'There is no text to speak', { text: 'blank' })
  const asked = body.voice?.trim() || null
  let plan: { offline: string } | { target: AiTarget; speaker: string | null }
  if (asked && offlineSpeech.isOfflineVoice(asked)) {
    if (!offlineSpeech.voices.some((v) => v.id === asked)) {
      throw HttpError.unprocessable('unknown_voice', `Unknown built-in voice ${asked}; known: ${offlineSpeech.voices.map((v) => v.id).join(', ')}`, { voice: 'unknown built-in voice' })
    }
    plan = { offline: asked }
  } else if (asked) {
    const target = await cloudTarget(core, asked)
    plan = { target: { ...target, model: splitVoice(asked).route }, speaker: splitVoice(asked).speaker }
  } else {
    const fallback = await defaultVoice(core)
    if (fallback.kind === 'offline') plan = { offline: offlineSpeech.defaultVoice }
    else if (fallback.kind === 'environment') {
      const { route, speaker } = splitVoice(fallback.model)
      plan = { target: { model: route, baseUrl: core.config.ai.baseUrl, apiKey: core.config.ai.apiKey }, speaker }
    } else {
      const target = await resolveModel(core, 'tts', fallback.row.id)
      const { route, speaker } = splitVoice(fallback.row.model_id)
      plan = { target: { ...target, model: route }, speaker }
    }
  }

  if (!isExempt(user)) await core.rateLimit.consume(SPEECH_RULE, String(user.id))

  if ('offline' in plan) return offlineSpeech.speak(body.text, plan.offline)
  if (!core.ai.speech) throw aiNotConfigured('Speech is not available on this server\'s AI gateway')
  const { audio } = await core.ai.speech(plan.target, { text: body.text, voice: plan.speaker, format: 'mp3' })
  return audio
}

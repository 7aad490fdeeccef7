// Spec 2, Preferences: the transcription model and the voice a user picks from what the server offers, and the
// offer itself. The offer comes from the environment (AI_BASE_URL, STT_MODEL, TTS_MODEL) and from the admin's
// settings under `stt.` and `tts.` (SPEECH_CONFIG_KEYS); the built-in voices (src/core/speech.ts) are always offered.
import { HttpError } from '../../../src/core/errors'
import { offlineSpeech } from '../../../src/core/speech'
import type { Core } from '../../../src/plugin'
import type { Option, PreferencesBody } from '../models/speech'
import { getConfigValues } from './app-config'

/** The transcription model when neither the admin (`stt.model`) nor STT_MODEL names one: the usual gateway name of Whisper. */
export const DEFAULT_STT_MODEL = 'whisper-1'
/** The speakers offered for the gateway's speech model when the admin lists none (`tts.voices`): the OpenAI set. */
export const DEFAULT_GATEWAY_SPEAKERS = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'] as const

/** The admin settings read here (values are strings; lists are comma-separated). */
export const SPEECH_CONFIG_KEYS = {
  /** The default transcription model (wins over STT_MODEL). */
  sttModel: 'stt.model',
  /** More transcription models users may choose. */
  sttModels: 'stt.models',
  /** The gateway's speech model (wins over TTS_MODEL). */
  ttsModel: 'tts.model',
  /** The speakers of that model users may choose. */
  ttsVoices: 'tts.voices',
} as const

export interface SpeechOffer {
  sttProvider: 'litellm' | 'none'
  ttsProvider: 'litellm' | 'offline'
  /** Default first; empty without a gateway. */
  sttModels: Option[]
  /** The gateway's voices (`<model>:<speaker>`, default first) when it has a speech model, then the built-in voices. */
  ttsVoices: Option[]
  defaultSttModel: string | null
  defaultTtsVoice: string
  /** The gateway's speech model, null when speech is offline only. */
  ttsModel: string | null
}

const listOf = (value: string | undefined) => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)
const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** What the server offers now. */
export async function speechOffer(core: Core): Promise<SpeechOffer> {
  const gateway = core.ai.configured
  const config = gateway ? await getConfigValues(core, Object.values(SPEECH_CONFIG_KEYS)) : {}
  const defaultSttModel = gateway
    ? config[SPEECH_CONFIG_KEYS.sttModel]?.trim() || core.config.ai.sttModel || DEFAULT_STT_MODEL
    : null
  const sttIds = defaultSttModel ? [...new Set([defaultSttModel, ...listOf(config[SPEECH_CONFIG_KEYS.sttModels])])] : []
  const sttModels = sttIds.map((id) => ({ value: id, label: id === defaultSttModel ? `${id} (default)` : id }))

  const ttsModel = gateway && core.ai.speech ? config[SPEECH_CONFIG_KEYS.ttsModel]?.trim() || core.config.ai.ttsModel || null : null
  const speakers = ttsModel ? [...new Set(listOf(config[SPEECH_CONFIG_KEYS.ttsVoices]))] : []
  const gatewayVoices = ttsModel
    ? (speakers.length > 0 ? speakers : [...DEFAULT_GATEWAY_SPEAKERS]).map((s) => ({ value: `${ttsModel}:${s}`, label: `${capitalised(s)} (${ttsModel})` }))
    : []
  const offlineVoices = offlineSpeech.voices.map((v) => ({ value: v.id, label: v.name }))
  return {
    sttProvider: gateway ? 'litellm' : 'none',
    ttsProvider: ttsModel ? 'litellm' : 'offline',
    sttModels,
    ttsVoices: [...gatewayVoices, ...offlineVoices],
    defaultSttModel,
    defaultTtsVoice: gatewayVoices[0]?.value ?? offlineSpeech.defaultVoice,
    ttsModel,
  }
}

interface StoredPreferences { stt_model: string | null; tts_voice: string | null }

async function storedPreferences(core: Core, userId: number): Promise<StoredPreferences> {
  const [row] = await core.db.sql<StoredPreferences>`
    select stt_model, tts_voice from clinical.user_preferences where user_id = ${userId}`
  return row ?? { stt_model: null, tts_voice: null }
}

const offers = (options: Option[], value: string | null): value is string => value !== null && options.some((o) => o.value === value)

export interface EffectivePreferences {
  /** Null without a gateway. */
  sttModel: string | null
  ttsVoice: string
  offer: SpeechOffer
}

/** The user's choices where the server still offers them, else its defaults. */
export async function effectivePreferences(core: Core, userId: number): Promise<EffectivePreferences> {
  const [offer, stored] = await Promise.all([speechOffer(core), storedPreferences(core, userId)])
  return {
    sttModel: offers(offer.sttModels, stored.stt_model) ? stored.stt_model : offer.defaultSttModel,
    ttsVoice: offers(offer.ttsVoices, stored.tts_voice) ? stored.tts_voice : offer.defaultTtsVoice,
    offer,
  }
}

export async function getPreferences(core: Core, userId: number): Promise<{ stt_model: string; tts_voice: string }> {
  const { sttModel, ttsVoice } = await effectivePreferences(core, userId)
  return { stt_model: sttModel ?? '', tts_voice: ttsVoice }
}

/**
 * Stores the fields given (an absent one is unchanged; empty or null goes back to the server default). Each value
 * must be one the server offers now: 422 naming the field otherwise, and nothing is stored.
 */
export async function setPreferences(core: Core, userId: number, body: PreferencesBody): Promise<void> {
  const offer = await speechOffer(core)
  const stt = body.stt_model === undefined ? undefined : body.stt_model?.trim() || null
  const tts = body.tts_voice === undefined ? undefined : body.tts_voice?.trim() || null
  const fields: Record<string, string> = {}
  if (stt && !offers(offer.sttModels, stt)) {
    fields.stt_model = offer.sttModels.length === 0
      ? 'Transcription is not available on this server'
      : `Not one of the transcription models offered: ${offer.sttModels.map((o) => o.value).join(', ')}`
  }
  if (tts && !offers(offer.ttsVoices, tts)) fields.tts_voice = 'Not one of the voices offered (see the options)'
  if (Object.keys(fields).length > 0) {
    throw HttpError.unprocessable('invalid_preference', Object.values(fields)[0]!, fields)
  }
  if (stt === undefined && tts === undefined) return
  await core.db.sql`
    insert into clinical.user_preferences (user_id, stt_model, tts_voice, updated_at)
    values (${userId}, ${stt ?? null}, ${tts ?? null}, ${new Date(core.now()).toISOString()})
    on conflict (user_id) do update set
      stt_model = case when ${stt !== undefined}::boolean then excluded.stt_model else clinical.user_preferences.stt_model end,
      tts_voice = case when ${tts !== undefined}::boolean then excluded.tts_voice else clinical.user_preferences.tts_voice end,
      updated_at = excluded.updated_at`
}

// Spec 2, Transcription and speech: dictation to text through the AI gateway, and text to speech through the gateway's
// speech model or, without one, the built-in offline voice the quiz service uses too (src/core/speech.ts). Every
// gateway call writes one usage row (services/usage.ts): the endpoint, model, latency and outcome, never any text.
import { HttpError } from '../../../src/core/errors'
import { offlineSpeech } from '../../../src/core/speech'
import type { Core } from '../../../src/plugin'
import { SPEECH_TEXT_MAX, TRANSCRIBE_MAX_BYTES, type SpeechBody } from '../models/speech'
import { effectivePreferences } from './preferences'
import { recordUsage } from './usage'

export const TRANSCRIBE_ENDPOINT = '/api/transcribe'
export const SPEECH_ENDPOINT = '/api/text-to-speech'

/**
 * The containers a recording may come in, by what its leading bytes are (never its name or declared type), and the
 * file extension the gateway is told (gateways pick the decoder by the file name). Ogg Opus is an Ogg file.
 */
const AUDIO_EXTENSIONS: Record<string, string> = {
  wav: 'wav', mp3: 'mp3', m4a: 'm4a', mp4: 'mp4', ogg: 'ogg', oga: 'ogg', opus: 'ogg', webm: 'webm', flac: 'flac', mpga: 'mp3',
}
export const TRANSCRIBE_FORMATS = 'WAV, MP3, M4A/MP4, OGG/Opus, WebM or FLAC'

export function transcriptionStatus(core: Core): { available: boolean; provider: 'litellm' | 'none' } {
  const available = core.ai.configured && core.ai.transcribe !== undefined
  return { available, provider: available ? 'litellm' : 'none' }
}

/** Records a gateway call's usage; a failure to record is logged, never the caller's failure. */
async function usage(core: Core, userId: number, endpoint: string, model: string, started: number, outcome: string) {
  await recordUsage(core, {
    userId, endpoint, model, tokensIn: null, tokensOut: null, latencyMs: Math.round(performance.now() - started), outcome,
  }).catch((err) => core.log.warn({ err, endpoint }, 'usage row not written'))
}

const outcomeOf = (err: unknown) => (err instanceof HttpError ? err.code : 'failed')

/**
 * The recording's length in seconds (two decimals), read from its own headers, or by scanning the file when its
 * headers do not say (MP3 without a frame count). 0 when it cannot be read: a recorder's live WebM often carries
 * no length at all, and a damaged file none that can be trusted.
 */
export async function audioDuration(core: Core, audio: Blob): Promise<number> {
  try {
    const { format } = await (await import('music-metadata')).parseBlob(audio, { duration: true, skipCovers: true })
    const seconds = format.duration
    return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 100) / 100 : 0
  } catch (err) {
    core.log.debug({ err }, 'audio length not readable')
    return 0
  }
}

/**
 * The transcript of a recording. 503 without a gateway; 413 over TRANSCRIBE_MAX_BYTES; 400 empty; 415 when the
 * leading bytes are no audio container the gateway decodes; the gateway's failures 502 (504 on its timeout).
 * The model is the user's preference while the server offers it, else the default.
 */
export async function transcribe(core: Core, userId: number, audio: Blob): Promise<{ text: string; duration: number; model: string }> {
  if (!transcriptionStatus(core).available) {
    throw HttpError.unavailable('transcription_unavailable', 'Transcription is not available: no AI gateway is configured on this server')
  }
  // The body limit refused a larger request before it was read; the file's own size decides what is left.
  if (audio.size > TRANSCRIBE_MAX_BYTES) throw HttpError.tooLarge('audio_too_large', `The audio file is larger than 25 MB (${TRANSCRIBE_MAX_BYTES} bytes)`)
  if (audio.size === 0) throw HttpError.badRequest('empty_audio', 'The audio file is empty')
  const kind = await (await import('file-type')).fileTypeFromBlob(audio).catch(() => undefined)
  const extension = kind ? AUDIO_EXTENSIONS[kind.ext] : undefined
  if (!extension) {
    throw new HttpError(415, 'unsupported_audio', `The file is not a recording this service reads (${TRANSCRIBE_FORMATS})`)
  }
  const { sttModel } = await effectivePreferences(core, userId)
  const model = sttModel!
  const started = performance.now()
  const [duration, text] = await Promise.all([
    audioDuration(core, audio),
    core.ai.transcribe!({ model }, audio, { filename: `audio.${extension}` }).then(
      async (text) => {
        await usage(core, userId, TRANSCRIBE_ENDPOINT, model, started, 'ok')
        return text
      },
      async (err: unknown) => {
        await usage(core, userId, TRANSCRIBE_ENDPOINT, model, started, outcomeOf(err))
        throw err
      },
    ),
  ])
  return { text, duration, model }
}

const unknownVoice = (voice: string) =>
  HttpError.unprocessable('unknown_voice', `Unknown voice ${voice.slice(0, 60)}: GET /api/user/preferences/options lists the voices`,
    { voice: 'not one of the voices offered' })

/**
 * Speech of a text: MP3 bytes and who spoke them. The voice is the one asked (it must be offered: 422 otherwise;
 * a bare speaker such as `nova` means that speaker of the gateway's speech model), else the user's preferred voice,
 * else the default: the gateway's first voice when it has a speech model, else the built-in voice. A gateway voice
 * that fails is 502 (504 on timeout), never silently replaced by the built-in voice.
 */
export async function speak(core: Core, userId: number, body: SpeechBody): Promise<{ audio: Uint8Array; provider: 'litellm' | 'offline'; voice: string }> {
  if (body.text.trim() === '') throw HttpError.unprocessable('blank_text', 'There is no text to speak', { text: 'blank' })
  if (body.text.length > SPEECH_TEXT_MAX) {
    throw HttpError.unprocessable('text_too_long', `The text is longer than ${SPEECH_TEXT_MAX} characters`, { text: 'too long' })
  }
  const { ttsVoice, offer } = await effectivePreferences(core, userId)
  const asked = body.voice?.trim() || null
  let voice = ttsVoice
  if (asked) {
    const named = !asked.includes(':') && offer.ttsModel ? `${offer.ttsModel}:${asked}` : asked
    // The core names the built-in voices it knows when one is not among them.
    if (offlineSpeech.isOfflineVoice(named)) voice = named
    else if (offer.ttsVoices.some((v) => v.value === named)) voice = named
    else throw unknownVoice(asked)
  }

  if (offlineSpeech.isOfflineVoice(voice)) return { audio: await offlineSpeech.speak(body.text, voice), provider: 'offline', voice }

  const at = voice.lastIndexOf(':')
  const model = voice.slice(0, at)
  const speaker = voice.slice(at + 1)
  const started = performance.now()
  try {
    const { audio } = await core.ai.speech!({ model }, { text: body.text, voice: speaker, format: 'mp3' })
    await usage(core, userId, SPEECH_ENDPOINT, model, started, 'ok')
    return { audio, provider: 'litellm', voice }
  } catch (err) {
    await usage(core, userId, SPEECH_ENDPOINT, model, started, outcomeOf(err))
    throw err
  }
}

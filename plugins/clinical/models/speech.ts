// TypeBox models of dictation (transcription), speech and the speech preferences; the OpenAPI docs come from them.
import { t } from 'elysia'
import { OFFLINE_TEXT_MAX } from '../../../src/core/speech'

/** The largest audio file a transcription takes: 25 MB (MiB), the gateway's own limit for one file. */
export const TRANSCRIBE_MAX_BYTES = 25 * 1024 * 1024
/** Text-to-speech takes 1 to this many characters: the built-in voice's own limit, so both voices take the same texts. */
export const SPEECH_TEXT_MAX = OFFLINE_TEXT_MAX
/** Longest model or voice id a preference or a request may name. */
export const SPEECH_ID_MAX = 200

export const TranscribeStatus = t.Object({
  available: t.Boolean({ description: 'True when POST /api/transcribe can work: an AI gateway is configured' }),
  provider: t.Union([t.Literal('litellm'), t.Literal('none')], { description: '`litellm` (the AI gateway) or `none`' }),
})

export const TranscribeBody = t.Object({
  audio: t.File({ description: 'The recording: WAV, MP3, M4A/MP4, OGG/Opus, WebM or FLAC, at most 25 MB (26,214,400 bytes)' }),
})

export const TranscribeResponse = t.Object({
  success: t.Literal(true),
  text: t.String({ description: 'The transcript' }),
  provider: t.Literal('litellm'),
  duration: t.Number({ description: 'Length of the recording in seconds, read from the file (0 when it cannot be read)' }),
})

export const SpeechBody = t.Object({
  text: t.String({ minLength: 1, maxLength: SPEECH_TEXT_MAX, description: `The text to speak, 1 to ${SPEECH_TEXT_MAX} characters` }),
  voice: t.Optional(t.Nullable(t.String({
    maxLength: SPEECH_ID_MAX,
    description: 'A voice of GET /api/user/preferences/options (`ttsVoices[].value`); absent: the user\'s preferred voice, else the default',
  }))),
})
export type SpeechBody = typeof SpeechBody.static

export const Option = t.Object({ value: t.String(), label: t.String() })
export type Option = typeof Option.static

export const PreferencesResponse = t.Object({
  success: t.Literal(true),
  stt_model: t.String({ description: 'The transcription model in use for this user (their choice, else the default; empty with no gateway)' }),
  tts_voice: t.String({ description: 'The voice in use for this user (their choice, else the default)' }),
})

export const PreferencesBody = t.Object({
  stt_model: t.Optional(t.Nullable(t.String({
    maxLength: SPEECH_ID_MAX, description: 'One of `sttModels[].value`; empty or null: the server default; absent: unchanged',
  }))),
  tts_voice: t.Optional(t.Nullable(t.String({
    maxLength: SPEECH_ID_MAX, description: 'One of `ttsVoices[].value`; empty or null: the server default; absent: unchanged',
  }))),
})
export type PreferencesBody = typeof PreferencesBody.static

export const PreferenceOptions = t.Object({
  success: t.Literal(true),
  sttModels: t.Array(Option, { description: 'Transcription models, the default first; empty with no gateway' }),
  ttsVoices: t.Array(Option, { description: 'Voices: the gateway\'s (when a speech model is configured), then the built-in voices, always listed' }),
  sttProvider: t.Union([t.Literal('litellm'), t.Literal('none')]),
  ttsProvider: t.Union([t.Literal('litellm'), t.Literal('offline')], { description: 'What speaks when no voice is named' }),
})
export type PreferenceOptions = typeof PreferenceOptions.static

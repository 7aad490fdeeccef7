// TypeBox models of spec 1's Speech; the OpenAPI docs come from them.
import { t } from 'elysia'

/** spec 1, limits: speech text at most 2000 characters. */
export const SPEECH_TEXT_MAX = 2000
export const VOICE_MAX = 300

export const SpeechVoice = t.Object({
  id: t.String({ description: 'The voice to send to POST /api/tts/speak: a speech model\'s model_id (`<gateway_route>:<speaker>` or a route alone), or `offline:<language>` for a built-in voice' }),
  name: t.String(),
  is_default: t.Boolean({ description: 'The voice used when speak names none; exactly one voice is the default' }),
})
export type SpeechVoice = typeof SpeechVoice.static

export const SpeakBody = t.Object({
  text: t.String({ minLength: 1, maxLength: SPEECH_TEXT_MAX, description: `The text to speak, 1 to ${SPEECH_TEXT_MAX} characters` }),
  voice: t.Optional(t.Nullable(t.String({
    maxLength: VOICE_MAX,
    description: 'A voice id from GET /api/tts/voices, or any `<gateway_route>:<speaker>`; null or absent: the default voice',
  }))),
})
export type SpeakBody = typeof SpeakBody.static

// Spec 1, Speech, the JSON API. Routing, guards, validation and response shaping only.
import { Elysia, t } from 'elysia'
import { DEFAULT_OFFLINE_VOICE, OFFLINE_VOICES } from '../../../src/core/speech'
import { SpeakBody, SpeechVoice, SPEECH_TEXT_MAX } from '../models/speech'
import * as speech from '../services/speech'
import type { QuizState } from '../state'

const tags = ['Speech']

export const speechRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/tts' })
    .use(auth)
    .get('/voices', () => speech.listVoices(core), {
      role: 'user', response: t.Array(SpeechVoice),
      detail: {
        tags, summary: 'Voices for text-to-speech',
        description: [
          'The active `tts` model configurations (`id` is the model_id; a disabled configuration, and so a disabled provider\'s',
          'voices, is left out), the default first; when none is the default and the server has an AI gateway with TTS_MODEL,',
          `that model (name "Server default"). Then the built-in voices, always listed: ${OFFLINE_VOICES.map((v) => `\`${v.id}\``).join(', ')},`,
          'spoken on the server without any gateway. Exactly one voice has `is_default: true`: the default tts configuration, else',
          `TTS_MODEL, else \`${DEFAULT_OFFLINE_VOICE}\`.`,
        ].join(' '),
      },
    })
    .post('/speak', async ({ user, body }) => {
      const audio = await speech.speak(core, user, body)
      return new Response(audio as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'audio/mpeg', 'cache-control': 'no-store' } })
    }, {
      role: 'user', body: SpeakBody,
      detail: {
        tags, summary: 'Speak a text',
        description: [
          `The text (1 to ${SPEECH_TEXT_MAX} characters, else 422) as MP3 audio (\`audio/mpeg\`). \`voice\`:`,
          '`<gateway_route>:<speaker>` sends the speaker to that gateway route (the gateway\'s model); a voice without a colon is',
          'a route whose default speaker is used (`alloy` unless the route maps it); `offline:<language>` is a built-in voice',
          '(422 for one not listed). A cloud voice uses the gateway and key of the tts configuration with that model_id, else of',
          'one with the same route (another speaker of a configured provider), else the server\'s own gateway (503 when there is',
          'none); 400 when those configurations are disabled. With no voice: the default voice of',
          `GET ${api}/tts/voices: the default tts configuration, else TTS_MODEL, else the built-in voice, so a server with no`,
          'speech configuration still speaks (never 503 for that). A cloud voice whose gateway fails answers 502 (504 on a timeout):',
          'it is not replaced by the built-in voice, since the caller asked for that voice. Limit: 60 requests per user per hour,',
          'counted once the voice is resolved; over it, 429 with a `Retry-After` header (seconds). Admins and unthrottled users are exempt.',
        ].join(' '),
        responses: {
          200: { description: 'MP3 audio', content: { 'audio/mpeg': { schema: { type: 'string', format: 'binary' } } } },
        },
      },
    })
}

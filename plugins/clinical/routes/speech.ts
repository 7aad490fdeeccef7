// Spec 2, Transcription and speech, and Preferences (the speech model and voice). Routing, guards, validation and
// response shaping only; the rules live in services/speech.ts and services/preferences.ts.
import { Elysia } from 'elysia'
import { bodyLimits, type BodyLimit } from '../../../src/envelope'
import { OFFLINE_VOICES } from '../../../src/core/speech'
import { checkSession } from '../guard'
import { Success } from '../models/accounts'
import {
  PreferenceOptions, PreferencesBody, PreferencesResponse, SpeechBody, SPEECH_TEXT_MAX, TRANSCRIBE_MAX_BYTES, TranscribeBody,
  TranscribeResponse, TranscribeStatus,
} from '../models/speech'
import { DEFAULT_GATEWAY_SPEAKERS, DEFAULT_STT_MODEL, getPreferences, setPreferences, SPEECH_CONFIG_KEYS, speechOffer } from '../services/preferences'
import * as speech from '../services/speech'
import type { ClinicalState } from '../state'

/** Room for the multipart framing (boundary, part headers, a form field or two) around a file of the limit's size. */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024
/** The transcription upload's body limit: a 25 MB file with its framing; anything more is refused before it is read. */
export const TRANSCRIBE_BODY_LIMIT = {
  bytes: TRANSCRIBE_MAX_BYTES + MULTIPART_OVERHEAD_BYTES,
  code: 'audio_too_large',
  message: `The audio file is larger than 25 MB (${TRANSCRIBE_MAX_BYTES} bytes)`,
} satisfies BodyLimit

const OFFLINE_IDS = OFFLINE_VOICES.map((v) => `\`${v.id}\``).join(', ')
const MODEL_RULE = `The transcription model is the user's preference while it is offered, else the admin setting \`${SPEECH_CONFIG_KEYS.sttModel}\`, `
  + `else STT_MODEL, else \`${DEFAULT_STT_MODEL}\`.`

export const speechRoutes = ({ core, audit, auth }: ClinicalState) =>
  new Elysia()
    .use(auth)
    .use(bodyLimits)
    .get('/api/transcribe/status', () => speech.transcriptionStatus(core), {
      auth: 'user', response: TranscribeStatus,
      detail: {
        tags: ['Transcription and speech'], summary: 'Whether dictation can be transcribed',
        description: '`available` is true and `provider` `litellm` when an AI gateway is configured (AI_BASE_URL); otherwise false and `none`, and POST /api/transcribe answers 503.',
      },
    })
    .post('/api/transcribe', async ({ user, body }) => {
      const { text, duration } = await speech.transcribe(core, user.id, body.audio)
      return { success: true as const, text, provider: 'litellm' as const, duration }
    }, {
      auth: 'user', body: TranscribeBody, response: TranscribeResponse,
      bodyLimit: TRANSCRIBE_BODY_LIMIT,
      // The session is checked before the upload is read: a request without one is refused with 401 at once.
      // Then the body is read as the multipart form it must be (the named parser also documents it as such).
      parse: [async ({ request, set }) => {
        const { auth: session, refusal, cookie } = await checkSession(core, audit, request)
        if (!session) throw refusal
        if (cookie) set.headers['set-cookie'] = cookie
      }, 'formdata'],
      detail: {
        tags: ['Transcription and speech'], summary: 'Transcribe a recording',
        description: [
          `Multipart form with the field \`audio\`: a recording (${speech.TRANSCRIBE_FORMATS}, recognised by its leading bytes, not its name`,
          `or declared type) of at most 25 MB (${TRANSCRIBE_MAX_BYTES} bytes). Answers the transcript, \`provider\` \`litellm\` and \`duration\`:`,
          'the recording\'s length in seconds (two decimals) read from the file itself; 0 when the file does not tell it (a browser',
          `recorder's WebM usually carries no length). ${MODEL_RULE}`,
          'Errors: 401 without a session (before the upload is read); 413 `audio_too_large` for a declared Content-Length over the limit',
          '(refused before the body is read) or a file over it; 400 for a missing field or an empty file; 415 `unsupported_audio` for a',
          'file that is no such recording; 503 `transcription_unavailable` when no AI gateway is configured (see GET /api/transcribe/status);',
          '502 when the gateway fails or cannot be reached, 504 when it does not answer in time. Every gateway call, failed or not, is',
          'written to the usage log (model, time taken, outcome; never the audio or the transcript).',
        ].join(' '),
      },
    })
    .post('/api/text-to-speech', async ({ user, body }) => {
      const { audio, provider } = await speech.speak(core, user.id, body)
      return new Response(audio as Uint8Array<ArrayBuffer>, {
        headers: { 'content-type': 'audio/mpeg', 'x-tts-provider': provider, 'cache-control': 'no-store' },
      })
    }, {
      auth: 'user', body: SpeechBody,
      detail: {
        tags: ['Transcription and speech'], summary: 'Speak a text',
        description: [
          `\`text\` (1 to ${SPEECH_TEXT_MAX} characters; a longer one is 400, one of only spaces 422) as MP3 audio (\`audio/mpeg\`).`,
          'The header `X-TTS-Provider` says who spoke: `litellm` (the AI gateway\'s speech model) or `offline` (the built-in voice,',
          'made on this server). `voice` must be one of `ttsVoices` of GET /api/user/preferences/options: a gateway voice',
          '`<model>:<speaker>` (a bare speaker such as `nova` names that speaker of the gateway\'s model) or a built-in voice',
          `(${OFFLINE_IDS}); any other is 422 \`unknown_voice\`. Without \`voice\`: the user's preferred voice while it is offered,`,
          'else the default: the gateway\'s first voice when a speech model is configured (admin setting',
          `\`${SPEECH_CONFIG_KEYS.ttsModel}\`, else TTS_MODEL) with a gateway, else the built-in English voice, so speech works without`,
          'any gateway. A gateway voice that fails answers 502 (504 on a timeout), never replaced by the built-in voice; each gateway',
          'call is written to the usage log. 504 too when the built-in voice does not finish within a minute.',
        ].join(' '),
        responses: {
          200: { description: 'MP3 audio', content: { 'audio/mpeg': { schema: { type: 'string', format: 'binary' } } } },
        },
      },
    })
    .get('/api/user/preferences', async ({ user }) => ({ success: true as const, ...(await getPreferences(core, user.id)) }), {
      auth: 'user', response: PreferencesResponse,
      detail: {
        tags: ['Preferences'], summary: 'The user\'s transcription model and voice',
        description: 'The values in use: the user\'s choice while the server still offers it, else the default (the first entry of each list of '
          + 'GET /api/user/preferences/options). `stt_model` is empty when the server has no AI gateway.',
      },
    })
    .post('/api/user/preferences', async ({ user, body }) => {
      await setPreferences(core, user.id, body)
      return { success: true as const }
    }, {
      auth: 'user', body: PreferencesBody, response: Success,
      detail: {
        tags: ['Preferences'], summary: 'Choose the transcription model and voice',
        description: 'Body `{stt_model, tts_voice}`, each optional (absent: unchanged; empty or null: back to the server default). Each '
          + 'must be a `value` of GET /api/user/preferences/options: 422 naming the field otherwise, and nothing is stored. A stored '
          + 'choice the server stops offering is set aside on use (the default applies) until it is offered again.',
      },
    })
    .get('/api/user/preferences/options', async () => {
      const offer = await speechOffer(core)
      return {
        success: true as const, sttModels: offer.sttModels, ttsVoices: offer.ttsVoices, sttProvider: offer.sttProvider, ttsProvider: offer.ttsProvider,
      }
    }, {
      auth: 'user', response: PreferenceOptions,
      detail: {
        tags: ['Preferences'], summary: 'The transcription models and voices offered',
        description: [
          '`sttModels`: with an AI gateway, the default transcription model first (admin setting',
          `\`${SPEECH_CONFIG_KEYS.sttModel}\`, else STT_MODEL, else \`${DEFAULT_STT_MODEL}\`), then the models of the admin setting`,
          `\`${SPEECH_CONFIG_KEYS.sttModels}\` (comma-separated); none without a gateway (\`sttProvider\` \`none\`).`,
          '`ttsVoices`: with a gateway and a speech model (admin setting',
          `\`${SPEECH_CONFIG_KEYS.ttsModel}\`, else TTS_MODEL), its speakers as \`<model>:<speaker>\` (the admin setting`,
          `\`${SPEECH_CONFIG_KEYS.ttsVoices}\`, comma-separated, else ${DEFAULT_GATEWAY_SPEAKERS.join(', ')}), the first being the default`,
          `(\`ttsProvider\` \`litellm\`); then always the built-in voices ${OFFLINE_IDS}, spoken on this server`,
          `(\`ttsProvider\` \`offline\` when they are all there is).`,
        ].join(' '),
      },
    })

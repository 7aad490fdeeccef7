// The clinician's records: saved encounters, memories and audio backups (JSON API, signed-in users, own records
// only). Routing, guards, validation and response shaping only; the rules live in services/encounters.ts,
// services/memories.ts and services/audio-backups.ts.
import { Elysia } from 'elysia'
import { bodyLimits } from '../../../src/envelope'
import { Success } from '../models/accounts'
import {
  AUDIO_BACKUP_LIFETIME_HOURS, AUDIO_BACKUP_LIST_MAX, AUDIO_BACKUP_MAX_BYTES, AudioBackupCreated, AudioBackupList, AudioBackupParams,
  AudioBackupUpload, CONTEXT_CATEGORIES, ENC_TYPE_MAX, ENCOUNTER_LIFETIME_DAYS, ENCOUNTER_LIST_DEFAULT, ENCOUNTER_TEXT_MAX, EncounterList,
  EncounterListQuery, EncounterParams, EncounterResponse, MEMORY_CONTEXT_MAX, MEMORY_LIST_MAX, MemoryBody, MemoryContext,
  LABEL_MAX, MemoryCreated, MemoryList, MemoryParams, PARTIAL_DATA_MAX, PREVIEW_CHARS, SaveEncounterBody, SaveEncounterResponse,
} from '../models/records'
import * as audioBackups from '../services/audio-backups'
import * as encounters from '../services/encounters'
import * as memories from '../services/memories'
import type { ClinicalState } from '../state'

/** A save carries two texts of ENCOUNTER_TEXT_MAX characters (up to 4 bytes each as UTF-8 JSON) and partial_data. */
export const ENCOUNTER_BODY_LIMIT = 4 * 1024 * 1024
/** A memory is a name and at most MEMORY_CONTENT_MAX characters. */
export const MEMORY_BODY_LIMIT = 256 * 1024

const NOT_YOURS = '404 for an id that is not one of the caller\'s (another user\'s records are never shown).'
const SESSION = '401 without a session.'
const ENCRYPTED = 'Stored gzip-compressed, then encrypted (AES-256-GCM with DATA_ENCRYPTION_KEY).'

const encounterRoutes = ({ core, auth }: ClinicalState) => {
  const tags = ['Saved encounters']
  return new Elysia({ prefix: '/api/encounters/saved' })
    .use(auth)
    .use(bodyLimits)
    .get('', async ({ user, query }) => ({ success: true as const, encounters: await encounters.listEncounters(core, user.id, query) }), {
      auth: 'user', query: EncounterListQuery, response: EncounterList,
      detail: {
        tags, summary: 'The caller\'s saved encounters',
        description: [
          `Unexpired encounters only, the most recently saved first (\`limit\`, default ${ENCOUNTER_LIST_DEFAULT}, and \`offset\` page through them).`,
          `Each has \`transcript_preview\` and \`note_preview\`: the first ${PREVIEW_CHARS} characters of the text with white space`,
          'collapsed, followed by … when the text goes on; never the full texts (read one encounter for those).',
          `An encounter expires ${ENCOUNTER_LIFETIME_DAYS} days after its last save (\`expires_at\`) and is then deleted. ${SESSION}`,
        ].join(' '),
      },
    })
    .get('/:id', async ({ user, params }) => ({ success: true as const, encounter: await encounters.getEncounter(core, user.id, params.id) }), {
      auth: 'user', params: EncounterParams, response: EncounterResponse,
      detail: {
        tags, summary: 'One saved encounter',
        description: '`partial_data` is the saved object as a JSON string (null when none). `version` is what the next save sends '
          + `as \`expected_version\`. 404 once it has expired. ${NOT_YOURS} ${SESSION}`,
      },
    })
    .post('', async ({ user, body }) => ({ success: true as const, ...(await encounters.saveEncounter(core, user.id, body)) }), {
      auth: 'user', body: SaveEncounterBody, response: SaveEncounterResponse, bodyLimit: ENCOUNTER_BODY_LIMIT,
      detail: {
        tags, summary: 'Save an encounter (create, or update with id)',
        description: [
          'Without `id` this creates an encounter: `label` and `enc_type` are needed (422 otherwise), the texts default to empty and',
          '`status` to `draft`. With `idempotency_key` the create happens once: the same key (per user) sent again, also at the same',
          'time, answers the same `id` and stores nothing more, for as long as that encounter exists.',
          '',
          'With `id` this updates the caller\'s encounter: the fields sent replace the saved ones, the others stay. With',
          '`expected_version`, a save over another version is refused with 409 `version_conflict` and the `current_version` in the',
          'body, and nothing is written; without it the save always applies. Each save adds one to `version` (answered) and moves',
          `\`expires_at\` to ${ENCOUNTER_LIFETIME_DAYS} days later. \`idempotency_key\` is ignored on updates.`,
          '',
          '`status`: `draft` (a generated note, not yet checked) or `reviewed` (the clinician checked it); anything else is 422.',
          'A save that changes `generated_note` without sending `status` puts the encounter back to `draft`.',
          '',
          `Limits: \`label\` ${LABEL_MAX} characters, \`enc_type\` ${ENC_TYPE_MAX}, \`transcript\` and \`generated_note\` ${ENCOUNTER_TEXT_MAX} characters each`,
          `(400 above), \`partial_data\` ${PARTIAL_DATA_MAX} characters as JSON (422 above); the body ${ENCOUNTER_BODY_LIMIT} bytes (413).`,
          `Label, transcript, note and partial data are encrypted at rest: ${ENCRYPTED}`,
          `404 for an \`id\` that is expired or not the caller's. ${SESSION}`,
        ].join('\n'),
      },
    })
    .delete('/:id', async ({ user, params }) => {
      await encounters.deleteEncounter(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: EncounterParams, response: Success,
      detail: { tags, summary: 'Delete a saved encounter', description: `${NOT_YOURS} ${SESSION}` },
    })
}

const memoryRoutes = ({ core, auth }: ClinicalState) => {
  const tags = ['Memories']
  const categories = 'Categories: `note_style`, `abbreviations`, `templates`, `ai_context` (added to the AI prompts) and `custom` '
    + '(the clinician\'s own notes, never sent to the AI); anything else is 422. Memories from older versions may carry a '
    + '`correction_*` category: they are listed, can be edited keeping it, and are never sent to the AI.'
  return new Elysia({ prefix: '/api/memories' })
    .use(auth)
    .use(bodyLimits)
    .get('', async ({ user }) => ({ success: true as const, memories: await memories.listMemories(core, user.id) }), {
      auth: 'user', response: MemoryList,
      detail: { tags, summary: 'The caller\'s memories', description: `Newest first, at most ${MEMORY_LIST_MAX}. ${SESSION}` },
    })
    // Before /:id, so `context` is never taken for an id.
    .get('/context', async ({ user }) => ({ success: true as const, context: await memories.memoryContext(core, user.id) }), {
      auth: 'user', response: MemoryContext,
      detail: {
        tags, summary: 'The caller\'s memories as AI prompt context',
        description: [
          `The memories of the categories ${CONTEXT_CATEGORIES.map((c) => `\`${c}\``).join(', ')}, formatted for a prompt: an opening line,`,
          'then one section per category in that order ("Note style:", "Abbreviations:", "Templates:", "Practice context:"), each',
          'memory oldest first as "- name: content". `custom` and `correction_*` memories are never included. Memories that would',
          `take the text past ${MEMORY_CONTEXT_MAX} characters are left out. Empty when there is nothing to add. ${SESSION}`,
        ].join(' '),
      },
    })
    .post('', async ({ user, body }) => ({ success: true as const, ...(await memories.createMemory(core, user.id, body)) }), {
      auth: 'user', body: MemoryBody, response: MemoryCreated, bodyLimit: MEMORY_BODY_LIMIT,
      detail: {
        tags, summary: 'Add a memory',
        description: `${categories} \`originalSize\` is the content's size in bytes (UTF-8), \`compressedSize\` its gzip size. `
          + `The content is encrypted at rest: ${ENCRYPTED} ${SESSION}`,
      },
    })
    .put('/:id', async ({ user, params, body }) => {
      await memories.updateMemory(core, user.id, params.id, body)
      return { success: true as const }
    }, {
      auth: 'user', params: MemoryParams, body: MemoryBody, response: Success, bodyLimit: MEMORY_BODY_LIMIT,
      detail: { tags, summary: 'Replace a memory', description: `Category, name and content replace the saved ones. ${categories} ${NOT_YOURS} ${SESSION}` },
    })
    .delete('/:id', async ({ user, params }) => {
      await memories.deleteMemory(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: MemoryParams, response: Success,
      detail: { tags, summary: 'Delete a memory', description: `${NOT_YOURS} ${SESSION}` },
    })
}

const audioBackupRoutes = ({ core, auth }: ClinicalState) => {
  const tags = ['Audio backups']
  return new Elysia({ prefix: '/api/audio-backups' })
    .use(auth)
    .use(bodyLimits)
    .post('', async ({ user, body }) => ({ success: true as const, ...(await audioBackups.createAudioBackup(core, user.id, body.audio, body.module)) }), {
      auth: 'user', parse: 'formdata', body: AudioBackupUpload, response: AudioBackupCreated, bodyLimit: audioBackups.uploadBodyLimit,
      detail: {
        tags, summary: 'Keep a recording as an audio backup',
        description: [
          'Multipart form with the field `audio` (the recording) and optionally `module`. The recording is kept',
          `${AUDIO_BACKUP_LIFETIME_HOURS} hours, then deleted; delete it sooner once its note is saved.`,
          'The stored type (`mime_type`) is the audio type the leading bytes show (WebM, Ogg, MP4, MP3, WAV, FLAC, ...; a sound-only',
          'WebM is audio/webm), else the one the file name\'s extension gives (e.g. `recording.webm`); parameters such as codecs are',
          'dropped. 415 when it is not audio: bytes that are plainly something else, or neither bytes nor name telling an audio type.',
          `400 for an empty file or no \`audio\` field; 413 over ${AUDIO_BACKUP_MAX_BYTES} bytes (a declared Content-Length over the limit is`,
          'refused before the body is read). The file is gzip-compressed, then encrypted (AES-256-GCM with DATA_ENCRYPTION_KEY,',
          'a leading version byte 0x01). 507 `disk_full` when the server\'s disk has no room for it (nothing is kept).',
          SESSION,
        ].join(' '),
      },
    })
    .get('', async ({ user }) => ({ success: true as const, backups: await audioBackups.listAudioBackups(core, user.id) }), {
      auth: 'user', response: AudioBackupList,
      detail: {
        tags, summary: 'The caller\'s audio backups',
        description: `Unexpired backups only, newest first, at most ${AUDIO_BACKUP_LIST_MAX}. \`size_bytes\` is the recording's size, `
          + `\`compressed_bytes\` its gzip size. ${SESSION}`,
      },
    })
    .get('/:id/audio', async ({ user, params }) => {
      const audio = await audioBackups.openAudioBackup(core, user.id, params.id)
      return new Response(audio.body, {
        headers: {
          'content-type': audio.mimeType, 'content-length': String(audio.size),
          'content-disposition': 'inline', 'cache-control': 'private, no-store',
        },
      })
    }, {
      auth: 'user', params: AudioBackupParams,
      detail: {
        tags, summary: 'The recording of an audio backup',
        description: 'The decompressed recording, streamed, with the content type it was stored with. The stored file is '
          + 'authenticated before a byte is sent. 404 once it has expired. '
          + `${NOT_YOURS} ${SESSION}`,
        responses: {
          200: { description: 'The recording', content: { 'audio/*': { schema: { type: 'string', format: 'binary' } } } },
        },
      },
    })
    .delete('/:id', async ({ user, params }) => {
      await audioBackups.deleteAudioBackup(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: AudioBackupParams, response: Success,
      detail: { tags, summary: 'Delete an audio backup', description: `Removes the row and the file. ${NOT_YOURS} ${SESSION}` },
    })
}

export const recordRoutes = (state: ClinicalState) =>
  new Elysia()
    .use(encounterRoutes(state))
    .use(memoryRoutes(state))
    .use(audioBackupRoutes(state))

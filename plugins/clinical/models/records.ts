// TypeBox models of the clinician's records: saved encounters, memories and audio backups; the OpenAPI docs
// come from them. The limits are named here, once; the services enforce the rules TypeBox cannot say.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

const Timestamp = (description?: string) => t.String({ format: 'date-time', ...(description ? { description } : {}) })

// ---- saved encounters -----------------------------------------------------------------------------------

/** `draft`: as generated or typed, not yet checked; `reviewed`: the clinician checked it. */
export const ENCOUNTER_STATUSES = ['draft', 'reviewed'] as const
export type EncounterStatus = (typeof ENCOUNTER_STATUSES)[number]
export const LABEL_MAX = 200
export const ENC_TYPE_MAX = 50
/** Characters of a transcript or a note. */
export const ENCOUNTER_TEXT_MAX = 200_000
/** Characters of partial_data once written as JSON. */
export const PARTIAL_DATA_MAX = 100_000
export const IDEMPOTENCY_KEY_MAX = 200
/** Characters of a listing preview (white space collapsed), before the `…` that marks a cut. */
export const PREVIEW_CHARS = 120
/** A saved encounter expires this many days after its last save (sliding). */
export const ENCOUNTER_LIFETIME_DAYS = 30
export const ENCOUNTER_LIST_DEFAULT = 200
export const ENCOUNTER_LIST_MAX = 1000

export const EncounterParams = t.Object({ id: RowId('The saved encounter\'s id') })

export const EncounterListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: ENCOUNTER_LIST_MAX, default: ENCOUNTER_LIST_DEFAULT, description: `At most this many (default ${ENCOUNTER_LIST_DEFAULT})` })),
  offset: t.Optional(t.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Skip this many of the newest first' })),
})

const Status = t.String({ description: '`draft` (the default; a generated note is a draft) or `reviewed` (the clinician checked it)' })
const EncType = t.String({
  minLength: 1, maxLength: ENC_TYPE_MAX,
  description: `The kind of note, a free label of 1 to ${ENC_TYPE_MAX} characters. The workspace uses \`hpi\`, \`soap\`, \`sick_visit\`, `
    + '`well_visit`, `chart_review`, `hospital_course`, `milestones`, `handout` and `dictation`.',
})

export const EncounterListing = t.Object({
  id: Int(),
  label: t.String(),
  enc_type: t.String(),
  status: Status,
  version: Int({ minimum: 1 }),
  transcript_preview: t.String({ description: `The transcript's first ${PREVIEW_CHARS} characters (white space collapsed), with … when cut` }),
  note_preview: t.String({ description: `The note's first ${PREVIEW_CHARS} characters (white space collapsed), with … when cut` }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  expires_at: Timestamp(`${ENCOUNTER_LIFETIME_DAYS} days after the last save`),
})
export type EncounterListing = typeof EncounterListing.static
export const EncounterList = t.Object({ success: t.Literal(true), encounters: t.Array(EncounterListing) })

export const Encounter = t.Object({
  id: Int(),
  label: t.String(),
  enc_type: t.String(),
  status: Status,
  version: Int({ minimum: 1, description: 'Send it back as expected_version when saving' }),
  transcript: t.String(),
  generated_note: t.String(),
  partial_data: t.Nullable(t.String({ description: 'The saved partial_data object as a JSON string' }), { description: 'null when none was saved' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  expires_at: Timestamp(`${ENCOUNTER_LIFETIME_DAYS} days after the last save`),
})
export type Encounter = typeof Encounter.static
export const EncounterResponse = t.Object({ success: t.Literal(true), encounter: Encounter })

export const SaveEncounterBody = t.Object({
  id: t.Optional(RowId('Present: update this encounter; absent: create one')),
  label: t.Optional(t.String({ maxLength: LABEL_MAX, description: `Required to create; at most ${LABEL_MAX} characters` })),
  enc_type: t.Optional(EncType),
  transcript: t.Optional(t.String({ maxLength: ENCOUNTER_TEXT_MAX, description: `At most ${ENCOUNTER_TEXT_MAX} characters` })),
  generated_note: t.Optional(t.String({ maxLength: ENCOUNTER_TEXT_MAX, description: `At most ${ENCOUNTER_TEXT_MAX} characters` })),
  // Checked by the service (an object or null, else 422): a typed object here would let arrays through as objects.
  partial_data: t.Optional(t.Unknown({
    type: ['object', 'null'],
    description: `A JSON object of the client's unfinished work, at most ${PARTIAL_DATA_MAX} characters as JSON (422 above, `
      + 'or for anything but an object); null clears it',
  })),
  status: t.Optional(t.String({ maxLength: 20, description: '`draft` or `reviewed`; anything else is 422' })),
  idempotency_key: t.Optional(t.String({
    minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX,
    description: 'Creates only: the same key (per user) answers the same encounter, however often it is sent',
  })),
  expected_version: t.Optional(t.Integer({ minimum: 1, description: 'Updates only: the version the client last read; another is 409' })),
})
export type SaveEncounterBody = typeof SaveEncounterBody.static

export const SaveEncounterResponse = t.Object({
  success: t.Literal(true),
  id: Int(),
  version: Int({ minimum: 1, description: 'The encounter\'s version after this save' }),
})

// ---- memories -------------------------------------------------------------------------------------------

/** Memory categories added to the AI prompt context, in this order. */
export const CONTEXT_CATEGORIES = ['note_style', 'abbreviations', 'templates', 'ai_context'] as const
/** Categories a memory can be created with: the context ones, and `custom` (the clinician's own, never sent to the AI). */
export const MEMORY_CATEGORIES = [...CONTEXT_CATEGORIES, 'custom'] as const
/** Legacy categories, kept on existing rows and never added to the prompt context. */
export const LEGACY_CATEGORY_PREFIX = 'correction_'
export const MEMORY_NAME_MAX = 120
export const MEMORY_CONTENT_MAX = 10_000
export const MEMORY_LIST_MAX = 200
/** Characters of the prompt context at most: memories that would pass it are left out. */
export const MEMORY_CONTEXT_MAX = 16_000

export const MemoryParams = t.Object({ id: RowId('The memory\'s id') })

export const MemoryBody = t.Object({
  category: t.String({
    minLength: 1, maxLength: 60,
    description: '`note_style`, `abbreviations`, `templates`, `ai_context` (all four added to the AI prompt context) or `custom` '
      + '(kept out of it); anything else is 422. A memory already in a legacy `correction_*` category can keep it.',
  }),
  name: t.String({ minLength: 1, maxLength: MEMORY_NAME_MAX }),
  content: t.String({ minLength: 1, maxLength: MEMORY_CONTENT_MAX, description: `At most ${MEMORY_CONTENT_MAX} characters` }),
})
export type MemoryBody = typeof MemoryBody.static

export const Memory = t.Object({
  id: Int(),
  category: t.String(),
  name: t.String(),
  content: t.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Memory = typeof Memory.static
export const MemoryList = t.Object({ success: t.Literal(true), memories: t.Array(Memory, { maxItems: MEMORY_LIST_MAX }) })
export const MemoryCreated = t.Object({
  success: t.Literal(true),
  id: Int(),
  originalSize: Int({ description: 'Bytes of the content (UTF-8)' }),
  compressedSize: Int({ description: 'Bytes of the content once gzipped, as stored before encryption' }),
})
export const MemoryContext = t.Object({
  success: t.Literal(true),
  context: t.String({ description: 'Empty when there is nothing to add' }),
})

// ---- audio backups --------------------------------------------------------------------------------------

/** Bytes of a recording at most (as the transcription upload). */
export const AUDIO_BACKUP_MAX_BYTES = 25 * 1024 * 1024
export const AUDIO_BACKUP_LIFETIME_HOURS = 24
export const MODULE_PATTERN = '^[a-z0-9][a-z0-9_-]{0,49}$'
export const DEFAULT_MODULE = 'dictation'
export const AUDIO_BACKUP_LIST_MAX = 200

export const AudioBackupParams = t.Object({ id: RowId('The audio backup\'s id') })

export const AudioBackupUpload = t.Object({
  audio: t.File({ description: `The recording (WebM, Ogg, MP4, MP3, WAV, ...; a file name with its extension, e.g. recording.webm), at most ${AUDIO_BACKUP_MAX_BYTES} bytes` }),
  module: t.Optional(t.String({
    pattern: MODULE_PATTERN,
    description: `The part of the workspace that recorded it: 1 to 50 lowercase letters, digits, _ or - (e.g. \`soap\`, \`hpi\`, \`sick_visit\`); default \`${DEFAULT_MODULE}\``,
  })),
})

export const AudioBackup = t.Object({
  id: Int(),
  module: t.String(),
  mime_type: t.String(),
  size_bytes: Int({ description: 'Bytes of the recording' }),
  compressed_bytes: Int({ description: 'Bytes of the recording once gzipped (before encryption)' }),
  created_at: Timestamp(),
  expires_at: Timestamp(`${AUDIO_BACKUP_LIFETIME_HOURS} hours after created_at`),
})
export type AudioBackup = typeof AudioBackup.static
export const AudioBackupList = t.Object({ success: t.Literal(true), backups: t.Array(AudioBackup) })
export const AudioBackupCreated = t.Object({ success: t.Literal(true), id: Int() })

// Saved encounters: the clinician's transcript, note and unfinished work, kept for ENCOUNTER_LIFETIME_DAYS after
// the last save. Creates are idempotent by idempotency_key (per user), updates are guarded by expected_version,
// and every patient text (label, transcript, note, partial data, previews) is gzipped and sealed at rest.
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import {
  ENCOUNTER_LIFETIME_DAYS, ENCOUNTER_LIST_DEFAULT, ENCOUNTER_STATUSES, PARTIAL_DATA_MAX, PREVIEW_CHARS,
  type Encounter, type EncounterListing, type EncounterStatus, type SaveEncounterBody,
} from '../models/records'
import { packText, unpackText } from './memories'

const DAY_MS = 24 * 3600 * 1000
export const ENCOUNTER_LIFETIME_MS = ENCOUNTER_LIFETIME_DAYS * DAY_MS

export const MESSAGES = {
  notFound: 'Saved encounter not found',
  status: `Status must be one of: ${ENCOUNTER_STATUSES.join(', ')}`,
  labelRequired: 'A label is needed to save a new encounter',
  encTypeRequired: 'An encounter type is needed to save a new encounter',
  blankEncType: 'The encounter type must not be blank',
  blankLabel: 'The label must not be blank',
  keyBusy: 'Another save with this idempotency_key is changing the same encounter; send it again',
  partialNotObject: 'partial_data must be a JSON object (or null)',
  partialTooLarge: `partial_data must be at most ${PARTIAL_DATA_MAX} characters as JSON`,
  conflict: (current: number) =>
    `This encounter was saved elsewhere in the meantime (it is now at version ${current}). Reload it, then save again.`,
} as const

/** What a listing shows of an encounter, sealed in one value so a listing opens no full text. */
interface Summary {
  label: string
  transcript_preview: string
  note_preview: string
}

interface SummaryRow {
  id: number
  enc_type: string
  status: EncounterStatus
  version: number
  summary: Uint8Array
  created_at: Date
  updated_at: Date
  expires_at: Date
}

interface EncounterRow extends SummaryRow {
  transcript: Uint8Array
  generated_note: Uint8Array
  partial_data: Uint8Array | null
}

/** The first PREVIEW_CHARS characters with white space collapsed, and … when the text goes on. */
export function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  const chars = Array.from(flat)
  return chars.length <= PREVIEW_CHARS ? flat : `${chars.slice(0, PREVIEW_CHARS).join('').trimEnd()}…`
}

const summaryOf = (label: string, transcript: string, note: string): Summary =>
  ({ label, transcript_preview: preview(transcript), note_preview: preview(note) })

const openSummary = (core: Core, sealed: Uint8Array): Summary => JSON.parse(unpackText(core, sealed)) as Summary

const iso = (d: Date) => d.toISOString()

function toListing(core: Core, row: SummaryRow): EncounterListing {
  const summary = openSummary(core, row.summary)
  return {
    id: row.id, label: summary.label, enc_type: row.enc_type, status: row.status, version: row.version,
    transcript_preview: summary.transcript_preview, note_preview: summary.note_preview,
    created_at: iso(row.created_at), updated_at: iso(row.updated_at), expires_at: iso(row.expires_at),
  }
}

function toEncounter(core: Core, row: EncounterRow): Encounter {
  return {
    id: row.id, label: openSummary(core, row.summary).label, enc_type: row.enc_type, status: row.status, version: row.version,
    transcript: unpackText(core, row.transcript),
    generated_note: unpackText(core, row.generated_note),
    partial_data: row.partial_data ? unpackText(core, row.partial_data) : null,
    created_at: iso(row.created_at), updated_at: iso(row.updated_at), expires_at: iso(row.expires_at),
  }
}

/** The user's unexpired encounters, most recently saved first. */
export async function listEncounters(core: Core, userId: number, page: { limit?: number; offset?: number } = {}): Promise<EncounterListing[]> {
  const now = new Date(core.now()).toISOString()
  const rows = await core.db.sql<SummaryRow>`
    select id, enc_type, status, version, summary, created_at, updated_at, expires_at
    from clinical.saved_encounters
    where user_id = ${userId} and expires_at > ${now}
    order by updated_at desc, id desc
    limit ${page.limit ?? ENCOUNTER_LIST_DEFAULT} offset ${page.offset ?? 0}`
  return rows.map((row) => toListing(core, row))
}

/** One of the user's unexpired encounters; 404 for an expired one, another user's, or an unknown id. */
export async function getEncounter(core: Core, userId: number, id: number): Promise<Encounter> {
  const now = new Date(core.now()).toISOString()
  const [row] = await core.db.sql<EncounterRow>`
    select id, enc_type, status, version, summary, transcript, generated_note, partial_data, created_at, updated_at, expires_at
    from clinical.saved_encounters
    where id = ${id} and user_id = ${userId} and expires_at > ${now}`
  if (!row) throw HttpError.notFound('encounter_not_found', MESSAGES.notFound)
  return toEncounter(core, row)
}

function checkStatus(status: string | undefined): EncounterStatus | undefined {
  if (status === undefined) return undefined
  if (!(ENCOUNTER_STATUSES as readonly string[]).includes(status)) {
    throw HttpError.unprocessable('invalid_status', MESSAGES.status, { status: MESSAGES.status })
  }
  return status as EncounterStatus
}

/** partial_data as the JSON text that is stored, null to clear, undefined to keep. */
function partialJson(data: unknown): string | null | undefined {
  if (data === undefined || data === null) return data
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw HttpError.unprocessable('invalid_partial_data', MESSAGES.partialNotObject, { partial_data: MESSAGES.partialNotObject })
  }
  const json = JSON.stringify(data)
  if (json.length > PARTIAL_DATA_MAX) {
    throw HttpError.unprocessable('partial_data_too_large', MESSAGES.partialTooLarge, { partial_data: MESSAGES.partialTooLarge })
  }
  return json
}

function cleanLabel(label: string | undefined): string | undefined {
  if (label === undefined) return undefined
  const clean = label.trim()
  if (!clean) throw HttpError.unprocessable('invalid_label', MESSAGES.blankLabel, { label: MESSAGES.blankLabel })
  return clean
}

function cleanEncType(encType: string | undefined): string | undefined {
  if (encType === undefined) return undefined
  const clean = encType.trim()
  if (!clean) throw HttpError.unprocessable('invalid_enc_type', MESSAGES.blankEncType, { enc_type: MESSAGES.blankEncType })
  return clean
}

export interface SavedEncounter {
  id: number
  version: number
}

/**
 * POST /api/encounters/saved: `id` present updates that encounter, absent creates one. Every rule is checked
 * before anything is written, so a refused save changes nothing.
 */
export function saveEncounter(core: Core, userId: number, input: SaveEncounterBody): Promise<SavedEncounter> {
  const status = checkStatus(input.status)
  const partial = partialJson(input.partial_data)
  const encType = cleanEncType(input.enc_type)
  const label = cleanLabel(input.label)
  return input.id === undefined
    ? createEncounter(core, userId, input, { status, partial, encType, label })
    : updateEncounter(core, userId, input.id, input, { status, partial, encType, label })
}

interface Checked {
  status: EncounterStatus | undefined
  partial: string | null | undefined
  encType: string | undefined
  label: string | undefined
}

/**
 * A new encounter. With an idempotency_key the insert is one statement that either adds the row or finds the
 * user's row with that key (the unique index decides between parallel requests), so a repeated create answers
 * the first one's id and current version and stores nothing more. A key whose encounter has expired is free again.
 */
async function createEncounter(core: Core, userId: number, input: SaveEncounterBody, checked: Checked): Promise<SavedEncounter> {
  const problems: Record<string, string> = {}
  if (checked.label === undefined) problems.label = MESSAGES.labelRequired
  if (checked.encType === undefined) problems.enc_type = MESSAGES.encTypeRequired
  if (Object.keys(problems).length > 0) throw HttpError.unprocessable('missing_fields', Object.values(problems)[0]!, problems)

  const label = checked.label!
  const transcript = input.transcript ?? ''
  const note = input.generated_note ?? ''
  const now = core.now()
  const at = new Date(now).toISOString()
  const expires = new Date(now + ENCOUNTER_LIFETIME_MS).toISOString()
  const key = input.idempotency_key ?? null

  const sealed = {
    summary: packText(core, JSON.stringify(summaryOf(label, transcript, note))).sealed,
    transcript: packText(core, transcript).sealed,
    note: packText(core, note).sealed,
    partial: checked.partial ? packText(core, checked.partial).sealed : null,
  }
  if (key !== null) {
    // An expired encounter is gone for the user: its key no longer names anything.
    await core.db.sql`
      delete from clinical.saved_encounters where user_id = ${userId} and idempotency_key = ${key} and expires_at <= ${at}`
  }
  // Twice at most: the second round only runs when the row that held the key was deleted between the statements.
  for (let attempt = 0; attempt < 2; attempt++) {
    const [created] = await core.db.sql<SavedEncounter>`
      insert into clinical.saved_encounters
        (user_id, enc_type, status, summary, transcript, generated_note, partial_data, idempotency_key, created_at, updated_at, expires_at)
      values (${userId}, ${checked.encType!}, ${checked.status ?? 'draft'}, ${sealed.summary}, ${sealed.transcript}, ${sealed.note},
              ${sealed.partial}, ${key}, ${at}, ${at}, ${expires})
      on conflict (user_id, idempotency_key) where idempotency_key is not null do nothing
      returning id, version`
    if (created) return created
    const [existing] = await core.db.sql<SavedEncounter>`
      select id, version from clinical.saved_encounters where user_id = ${userId} and idempotency_key = ${key}`
    if (existing) return existing
  }
  throw HttpError.conflict('idempotency_conflict', MESSAGES.keyBusy)
}

/**
 * An update of the user's unexpired encounter: the fields sent replace the stored ones, the others stay. With
 * expected_version, another current version is 409 (`current_version` in the body) and nothing is written. A note
 * that changes without a `status` in the same save goes back to `draft`: the clinician has not checked the new text.
 * Each update adds one to the version and moves expires_at to ENCOUNTER_LIFETIME_DAYS from now.
 */
async function updateEncounter(core: Core, userId: number, id: number, input: SaveEncounterBody, checked: Checked): Promise<SavedEncounter> {
  const now = core.now()
  const at = new Date(now).toISOString()
  const expires = new Date(now + ENCOUNTER_LIFETIME_MS).toISOString()
  return core.db.transaction(async (db) => {
    const [row] = await db.sql<EncounterRow>`
      select id, enc_type, status, version, summary, transcript, generated_note, partial_data, created_at, updated_at, expires_at
      from clinical.saved_encounters
      where id = ${id} and user_id = ${userId} and expires_at > ${at}
      for update`
    if (!row) throw HttpError.notFound('encounter_not_found', MESSAGES.notFound)
    if (input.expected_version !== undefined && input.expected_version !== row.version) {
      throw new HttpError(409, 'version_conflict', MESSAGES.conflict(row.version), undefined, { extra: { current_version: row.version } })
    }
    const current = toEncounter(core, row)
    const next = {
      label: checked.label ?? current.label,
      transcript: input.transcript ?? current.transcript,
      note: input.generated_note ?? current.generated_note,
    }
    const noteChanged = next.note !== current.generated_note
    const status = checked.status ?? (noteChanged ? 'draft' : current.status)
    const partial = checked.partial === undefined ? row.partial_data : checked.partial === null ? null : packText(core, checked.partial).sealed
    const summary = packText(core, JSON.stringify(summaryOf(next.label, next.transcript, next.note))).sealed
    const transcript = input.transcript === undefined ? row.transcript : packText(core, next.transcript).sealed
    const note = input.generated_note === undefined ? row.generated_note : packText(core, next.note).sealed
    const [updated] = await db.sql<SavedEncounter>`
      update clinical.saved_encounters
      set enc_type = ${checked.encType ?? row.enc_type}, status = ${status}, summary = ${summary}, transcript = ${transcript},
          generated_note = ${note}, partial_data = ${partial}, version = version + 1, updated_at = ${at}, expires_at = ${expires}
      where id = ${id} and user_id = ${userId}
      returning id, version`
    return updated!
  })
}

/** Deletes one of the user's encounters; 404 when there is none (or it had expired: it goes all the same). */
export async function deleteEncounter(core: Core, userId: number, id: number): Promise<void> {
  const now = core.now()
  const [row] = await core.db.sql<{ expires_at: Date }>`
    delete from clinical.saved_encounters where id = ${id} and user_id = ${userId} returning expires_at`
  if (!row || row.expires_at.getTime() <= now) throw HttpError.notFound('encounter_not_found', MESSAGES.notFound)
}

/** Deletes expired saved encounters; how many went. */
export async function sweepExpiredEncounters(core: Core): Promise<number> {
  const rows = await core.db.sql`
    delete from clinical.saved_encounters where expires_at <= ${new Date(core.now()).toISOString()} returning id`
  return rows.length
}

// The phone directory's entries: one list per user, searched, edited, moved to the trash and back, purged.
// Entries belong to their user only: another user's id is answered exactly like an id that does not exist (404).
// Plain functions over the Core (or a transaction's Core); import and export are in transfer.ts.
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import {
  DEFAULT_ENTRY_TYPE, DIRECTORY_ENTRIES_MAX, ENTRY_TYPES, LOCATION_MAX, NAME_MAX, NOTES_MAX, NUMBER_MAX,
  type Entry, type EntryInput, type EntryType, type ListQuery,
} from './model'

export const MESSAGES = {
  notFound: 'Entry not found',
  numberRequired: 'Enter the number',
  whoRequired: 'Enter a location or a name',
  type: `Type must be ${ENTRY_TYPES.join(' or ')}`,
  tooLong: (max: number) => `Must be at most ${max} characters`,
  notText: 'Must be text',
  trashed: 'The entry is in the trash: restore it first',
  notTrashed: 'Only an entry in the trash can be restored or deleted for good: move it to the trash first',
  full: `Your directory is full: it holds at most ${DIRECTORY_ENTRIES_MAX} entries, the trash included. Delete some from the trash first.`,
} as const

/** The advisory lock key (with the user's id) that makes one user's directory writes take turns. */
const LOCK_KEY = 0x0d1c

/** Makes the user's directory writes in this transaction wait for the ones already running (cap, import rules). */
export async function lockDirectory(core: Core, userId: number): Promise<void> {
  await core.db.sql`select pg_advisory_xact_lock(${LOCK_KEY}::int, ${userId}::int)`
}

// ---- the rules of an entry ---------------------------------------------------------------------------------------

const LIMITS = { location: LOCATION_MAX, name: NAME_MAX, number: NUMBER_MAX, notes: NOTES_MAX } as const
type TextField = keyof typeof LIMITS

/** A text field as stored: trimmed; a number (a JSON number for `number`) as its text; absent or null is ''. */
function text(raw: Record<string, unknown>, field: TextField, errors: Record<string, string>): string {
  const value = raw[field]
  if (value === undefined || value === null) return ''
  if (field === 'number' && typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value !== 'string') {
    errors[field] = MESSAGES.notText
    return ''
  }
  const clean = value.trim()
  if (clean.length > LIMITS[field]) errors[field] = MESSAGES.tooLong(LIMITS[field])
  return clean
}

/**
 * An entry as sent (API body, form, imported item) checked against the directory's rules: the number is required,
 * and a location or a name; type `extension` (the default) or `pager`, in any letter case; texts are trimmed and
 * within their limits. Answers the clean entry or each field's message.
 */
export function checkEntry(raw: unknown): { entry: EntryInput; errors: null } | { entry: null; errors: Record<string, string> } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { entry: null, errors: { entry: 'Not an entry object' } }
  const r = raw as Record<string, unknown>
  const errors: Record<string, string> = {}
  const location = text(r, 'location', errors)
  const name = text(r, 'name', errors)
  const number = text(r, 'number', errors)
  const notes = text(r, 'notes', errors)
  if (!number && !errors.number) errors.number = MESSAGES.numberRequired
  if (!location && !name && !errors.location && !errors.name) errors.location = MESSAGES.whoRequired
  let type: string = DEFAULT_ENTRY_TYPE
  if (r.type !== undefined && r.type !== null && r.type !== '') {
    type = typeof r.type === 'string' ? r.type.trim().toLowerCase() : ''
    if (!(ENTRY_TYPES as readonly string[]).includes(type)) errors.type = MESSAGES.type
  }
  if (Object.keys(errors).length > 0) return { entry: null, errors }
  return { entry: { location, name, number, type: type as EntryType, notes }, errors: null }
}

/** The entry, or 422 naming each field that breaks a rule. */
export function validEntry(raw: unknown): EntryInput {
  const { entry, errors } = checkEntry(raw)
  if (entry) return entry
  const first = Object.values(errors)[0]!
  throw HttpError.unprocessable('invalid_entry', first, errors)
}

// ---- reading -----------------------------------------------------------------------------------------------------

interface EntryRow {
  id: number
  location: string
  name: string
  number: string
  type: string
  notes: string
  trashed_at: Date | null
  created_at: Date
  updated_at: Date
}

const toEntry = (r: EntryRow): Entry => ({
  id: r.id,
  location: r.location,
  name: r.name,
  number: r.number,
  type: r.type,
  notes: r.notes,
  trashed_at: r.trashed_at ? r.trashed_at.toISOString() : null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
})

/** `trash=1|true` (any letter case) lists the trash; anything else the active entries. */
export const wantsTrash = (trash: string | undefined) => trash !== undefined && /^(1|true)$/i.test(trash.trim())

/** A LIKE pattern matching the text anywhere, its own %, _ and \ taken literally; line breaks become spaces. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\r\n]+/g, ' ').replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/**
 * The user's active entries by location, then name (or the trash, the latest trashed first), all of them or those
 * whose location, name, number or notes hold `q`, ignoring letter case.
 */
export async function listEntries(core: Core, userId: number, query: ListQuery = {}): Promise<Entry[]> {
  const trash = wantsTrash(query.trash)
  const q = (query.q ?? '').trim()
  const pattern = q ? containsPattern(q) : null
  // one query per listing: the user's rows by the index, then the filter (fields joined by a line break, which a
  // search never holds, so no match spans two fields)
  const rows = trash
    ? await core.db.sql<EntryRow>`
        select id, location, name, number, type, notes, trashed_at, created_at, updated_at from clinical.phone_directory
        where user_id = ${userId} and trashed_at is not null
          and (${pattern}::text is null or (location || E'\n' || name || E'\n' || number || E'\n' || notes) ilike ${pattern})
        order by trashed_at desc, id desc`
    : await core.db.sql<EntryRow>`
        select id, location, name, number, type, notes, trashed_at, created_at, updated_at from clinical.phone_directory
        where user_id = ${userId} and trashed_at is null
          and (${pattern}::text is null or (location || E'\n' || name || E'\n' || number || E'\n' || notes) ilike ${pattern})
        order by location, name, id`
  return rows.map(toEntry)
}

/** One of the user's entries (active or trashed); 404 for any other id. */
export async function getEntry(core: Core, userId: number, id: number): Promise<Entry> {
  const [row] = await core.db.sql<EntryRow>`
    select id, location, name, number, type, notes, trashed_at, created_at, updated_at from clinical.phone_directory
    where id = ${id} and user_id = ${userId}`
  if (!row) throw HttpError.notFound('entry_not_found', MESSAGES.notFound)
  return toEntry(row)
}

/** How many entries (active and trashed) the user keeps. */
export async function countEntries(core: Core, userId: number): Promise<number> {
  const [row] = await core.db.sql<{ n: number }>`select count(*)::int as n from clinical.phone_directory where user_id = ${userId}`
  return row!.n
}

// ---- writing -----------------------------------------------------------------------------------------------------

/** Adds an active entry; 422 for a rule, 409 when the directory is full. */
export async function createEntry(core: Core, userId: number, body: unknown): Promise<{ id: number }> {
  const e = validEntry(body)
  return core.transaction(async (tx) => {
    await lockDirectory(tx, userId)
    if ((await countEntries(tx, userId)) >= DIRECTORY_ENTRIES_MAX) throw HttpError.conflict('directory_full', MESSAGES.full)
    const now = new Date(core.now())
    const [row] = await tx.db.sql<{ id: number }>`
      insert into clinical.phone_directory (user_id, location, name, number, type, notes, created_at, updated_at)
      values (${userId}, ${e.location}, ${e.name}, ${e.number}, ${e.type}, ${e.notes}, ${now}, ${now})
      returning id`
    return { id: row!.id }
  })
}

/**
 * Replaces an active entry's fields (the ones left out take their defaults, as on create). 404 for an id that is not
 * the user's; 409 for an entry in the trash.
 */
export async function updateEntry(core: Core, userId: number, id: number, body: unknown): Promise<void> {
  const e = validEntry(body)
  const rows = await core.db.sql<{ trashed: boolean }>`
    update clinical.phone_directory
    set location = ${e.location}, name = ${e.name}, number = ${e.number}, type = ${e.type}, notes = ${e.notes},
        updated_at = ${new Date(core.now())}
    where id = ${id} and user_id = ${userId} and trashed_at is null
    returning false as trashed`
  if (rows.length === 0) await refuse(core, userId, id, 'active')
}

/** Moves an active entry to the trash. */
export async function trashEntry(core: Core, userId: number, id: number): Promise<void> {
  const now = new Date(core.now())
  const rows = await core.db.sql`
    update clinical.phone_directory set trashed_at = ${now}, updated_at = ${now}
    where id = ${id} and user_id = ${userId} and trashed_at is null
    returning id`
  if (rows.length === 0) await refuse(core, userId, id, 'active')
}

/** Brings a trashed entry back. */
export async function restoreEntry(core: Core, userId: number, id: number): Promise<void> {
  const rows = await core.db.sql`
    update clinical.phone_directory set trashed_at = null, updated_at = ${new Date(core.now())}
    where id = ${id} and user_id = ${userId} and trashed_at is not null
    returning id`
  if (rows.length === 0) await refuse(core, userId, id, 'trashed')
}

/** Deletes a trashed entry for good; an active one is refused (409): only the trash is purged. */
export async function purgeEntry(core: Core, userId: number, id: number): Promise<void> {
  const rows = await core.db.sql`
    delete from clinical.phone_directory where id = ${id} and user_id = ${userId} and trashed_at is not null
    returning id`
  if (rows.length === 0) await refuse(core, userId, id, 'trashed')
}

/** Why a write that needed the entry in `wanted` state changed nothing: 404 when it is not the user's, else 409. */
async function refuse(core: Core, userId: number, id: number, wanted: 'active' | 'trashed'): Promise<never> {
  const entry = await getEntry(core, userId, id)
  if (wanted === 'active' && entry.trashed_at) throw HttpError.conflict('entry_trashed', MESSAGES.trashed)
  throw HttpError.conflict('entry_not_trashed', MESSAGES.notTrashed)
}

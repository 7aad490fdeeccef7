// TypeBox models of the phone directory: entries, their listing and import/export bodies; the OpenAPI docs come
// from them. Every limit is named here once; the service checks the rules TypeBox cannot say (blank fields, the
// type, lengths as 422 with the field named), the same for the API, the pages and every imported entry.
import { t } from 'elysia'
import { Int, RowId } from '../../src/core/schema'

export const ENTRY_TYPES = ['extension', 'pager'] as const
export type EntryType = (typeof ENTRY_TYPES)[number]
/** The type of an entry sent without one. */
export const DEFAULT_ENTRY_TYPE: EntryType = 'extension'
export const LOCATION_MAX = 200
export const NAME_MAX = 200
export const NUMBER_MAX = 50
export const NOTES_MAX = 2_000
/** Characters of a search. */
export const QUERY_MAX = 200
/** Entries (active and trashed) one user may keep: bounds a listing, an export and an import's work. */
export const DIRECTORY_ENTRIES_MAX = 10_000

/** A file import is at most this many bytes (the JSON export or the zip); a JSON import body too. */
export const IMPORT_MAX_BYTES = 1024 * 1024
/** At most this many valid entries of one import are processed; the ones after them are left out. */
export const IMPORT_VALID_MAX = 1000
/** The zip's one JSON file, inflated, is at most this many bytes: more is refused while inflating (a zip bomb). */
export const ZIP_UNCOMPRESSED_MAX_BYTES = 4 * 1024 * 1024
/** Entries a zip may hold: the export holds exactly one file, and nothing else is read. */
export const ZIP_ENTRIES_MAX = 1
export const EXPORT_FORMAT = 'app-phone-directory'
export const EXPORT_VERSION = 1
export const EXPORT_FILE_NAME = 'app-extensions.json'
export const EXPORT_ZIP_NAME = 'app-extensions.zip'
/** Invalid entries a preview lists one by one (all are counted). */
export const PREVIEW_INVALID_LISTED_MAX = 100

const Timestamp = (description?: string) => t.String({ format: 'date-time', ...(description ? { description } : {}) })

export const EntryParams = t.Object({ id: RowId('The entry\'s id') })

export const ListQuery = t.Object({
  trash: t.Optional(t.String({ maxLength: 10, description: '`1` or `true`: list the trashed entries instead of the active ones; any other value lists the active ones' })),
  q: t.Optional(t.String({ maxLength: QUERY_MAX, description: `Case-insensitive text searched for in location, name, number and notes (at most ${QUERY_MAX} characters)` })),
})
export type ListQuery = typeof ListQuery.static

export const EntryBody = t.Object({
  location: t.Optional(t.String({ description: `Ward, unit or place, at most ${LOCATION_MAX} characters` })),
  name: t.Optional(t.String({ description: `Person, role or service, at most ${NAME_MAX} characters` })),
  number: t.String({ description: `The extension or pager number, 1 to ${NUMBER_MAX} characters (required)` }),
  type: t.Optional(t.String({ description: `\`extension\` or \`pager\` (default \`${DEFAULT_ENTRY_TYPE}\`)` })),
  notes: t.Optional(t.String({ description: `Free text, at most ${NOTES_MAX} characters` })),
})
export type EntryBody = typeof EntryBody.static

/** An entry as checked and stored: trimmed texts, a known type. */
export interface EntryInput {
  location: string
  name: string
  number: string
  type: EntryType
  notes: string
}

export const Entry = t.Object({
  id: Int(),
  location: t.String(),
  name: t.String(),
  number: t.String(),
  type: t.String({ description: '`extension` or `pager`' }),
  notes: t.String(),
  trashed_at: t.Nullable(Timestamp('When it was moved to the trash'), { description: 'null for an active entry' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Entry = typeof Entry.static

export const EntryList = t.Object({ success: t.Literal(true), items: t.Array(Entry) })
export const EntryCreated = t.Object({ success: t.Literal(true), id: Int() })

// ---- export and import -----------------------------------------------------------------------------------------

/** An entry of the export file: no database or user identifiers. */
export const ExportItem = t.Object({ location: t.String(), name: t.String(), number: t.String(), type: t.String(), notes: t.String() })
export type ExportItem = typeof ExportItem.static

export interface ExportFile {
  format: typeof EXPORT_FORMAT
  version: typeof EXPORT_VERSION
  exported_at: string
  items: ExportItem[]
}

export const ImportOptions = t.Object({
  restoreTrashed: t.Optional(t.Boolean({ description: 'Restore a trashed entry the import holds exactly (default false: skipped)' })),
  importPossibleDuplicates: t.Optional(t.Boolean({ description: 'Import possible duplicates too (default false: skipped)' })),
})
export type ImportOptions = typeof ImportOptions.static

const ImportItems = t.Array(t.Unknown(), {
  description: 'Entries `{location, name, number, type, notes}`. An entry that is not valid is counted as `invalid`, not refused.',
})

export const ImportBody = t.Union([
  ImportItems,
  t.Object({
    format: t.Optional(t.String({ description: `\`${EXPORT_FORMAT}\` when present` })),
    version: t.Optional(t.Number({ description: `${EXPORT_VERSION} when present` })),
    exported_at: t.Optional(t.String()),
    items: ImportItems,
    options: t.Optional(ImportOptions),
  }),
], { description: 'An export payload object, an array of entries, or an object with `items` and `options`' })
export type ImportBody = typeof ImportBody.static

export const ImportFileBody = t.Object({
  file: t.File({ description: `The export: \`${EXPORT_ZIP_NAME}\` or its \`${EXPORT_FILE_NAME}\`, at most ${IMPORT_MAX_BYTES} bytes` }),
  restoreTrashed: t.Optional(t.String({ description: '`true` restores trashed entries the file holds exactly' })),
  importPossibleDuplicates: t.Optional(t.String({ description: '`true` imports possible duplicates too' })),
})
export const ImportFilePreviewBody = t.Object({ file: ImportFileBody.properties.file })

const Count = (description: string) => Int({ minimum: 0, description })

export const ImportResult = t.Object({
  success: t.Literal(true),
  imported: Count('Entries added (new ones, and possible duplicates when importPossibleDuplicates is true)'),
  restored: Count('Trashed entries restored (restoreTrashed true)'),
  skipped: Count('Exact duplicates of active entries, and of trashed ones not restored'),
  possibleSkipped: Count('Possible duplicates left out (importPossibleDuplicates false)'),
  total: Count('Entries in the body or file, valid or not'),
  invalid: Count('Entries that are not valid (left out)'),
  overLimit: Count(`Entries after the first ${IMPORT_VALID_MAX} valid ones (left out)`),
})
export type ImportResult = typeof ImportResult.static

export const PREVIEW_STATUSES = ['new', 'exactActive', 'exactTrashed', 'possible', 'invalid'] as const
export type PreviewStatus = (typeof PREVIEW_STATUSES)[number]
export const PREVIEW_ACTIONS = ['import', 'restore', 'skip'] as const
export type PreviewAction = (typeof PREVIEW_ACTIONS)[number]

export const PreviewEntry = t.Object({
  index: Int({ minimum: 0, description: 'The entry\'s position in the items, from 0' }),
  status: t.String({
    description: '`new`; `exactActive` (the same as an active entry); `exactTrashed` (the same as a trashed entry); `possible` '
      + '(same location and number, or same number and type, as an active entry); `invalid`',
  }),
  action: t.String({ description: 'What the import with the same options does: `import`, `restore` or `skip`' }),
  entry: t.Nullable(ExportItem, { description: 'The entry as it would be stored; null when invalid' }),
  matchId: t.Nullable(Int(), { description: 'The id of the entry it duplicates; null when none, or when it duplicates an entry earlier in the same import' }),
  error: t.Nullable(t.String(), { description: 'Why it is invalid; null otherwise' }),
})
export type PreviewEntry = typeof PreviewEntry.static

export const PreviewSummary = t.Object({
  total: Count('Entries in the body or file, valid or not'),
  new: Count('Entries that are new'),
  exactActive: Count('Exact duplicates of active entries'),
  exactTrashed: Count('Exact matches of trashed entries'),
  possible: Count('Possible duplicates'),
  invalid: Count('Entries that are not valid'),
  overLimit: Count(`Entries after the first ${IMPORT_VALID_MAX} valid ones`),
})
export type PreviewSummary = typeof PreviewSummary.static

export const ImportPreview = t.Object({
  success: t.Literal(true),
  preview: t.Object({ summary: PreviewSummary, entries: t.Array(PreviewEntry) }),
})
export type ImportPreview = typeof ImportPreview.static

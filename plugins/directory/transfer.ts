// The phone directory's export (a zip holding app-extensions.json) and import (JSON bodies, the JSON file or the
// zip), with its preview. The four import rules, in order, for each valid entry:
//   1. an exact duplicate of an active entry is skipped;
//   2. an exact match of a trashed entry is restored when restoreTrashed is true (else skipped);
//   3. a possible duplicate (same location and number, or same number and type, as an active entry) is skipped
//      unless importPossibleDuplicates is true;
//   4. at most IMPORT_VALID_MAX valid entries are processed, and a file is at most IMPORT_MAX_BYTES.
// Entries earlier in the same import count as active for the ones after them. Comparisons ignore letter case and
// repeated or surrounding spaces; numbers also ignore spaces, dashes, dots and brackets ("555-0101" is "5550101").
// An import is one transaction, under the user's directory lock: all of it is stored, or nothing.
// The zip is untrusted input: zip.ts reads it.
import { strToU8, zipSync } from 'fflate'
import { randomToken } from '../../src/core/crypto'
import { HttpError } from '../../src/core/errors'
import type { BodyLimit } from '../../src/envelope'
import type { Core } from '../../src/plugin'
import {
  DIRECTORY_ENTRIES_MAX, EXPORT_FILE_NAME, EXPORT_FORMAT, EXPORT_VERSION, IMPORT_MAX_BYTES, IMPORT_VALID_MAX,
  PREVIEW_INVALID_LISTED_MAX,
  type EntryInput, type ExportFile, type ExportItem, type ImportOptions, type ImportResult, type PreviewAction, type PreviewEntry,
  type PreviewStatus, type PreviewSummary,
} from './model'
import { checkEntry, lockDirectory, MESSAGES as ENTRY_MESSAGES } from './service'
import { isZip, unzipExport } from './zip'

export const MESSAGES = {
  shape: 'Send an export file, an array of entries, or an object with `items` (and `options`)',
  format: `This is not a phone directory export: \`format\` must be \`${EXPORT_FORMAT}\``,
  version: `This export's version cannot be read here: \`version\` must be ${EXPORT_VERSION}`,
  emptyFile: 'The file is empty',
  tooLarge: `The file is too large: at most ${IMPORT_MAX_BYTES} bytes (1 MB)`,
  bodyTooLarge: `The import is too large: at most ${IMPORT_MAX_BYTES} bytes (1 MB)`,
  notUtf8: 'The file is not UTF-8 text',
  notJson: 'The file is not valid JSON',
  importNotFound: 'This import has expired or does not exist: upload the file again',
} as const

/** Room for the multipart framing and the two option fields around a file at the limit. */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024
/** The JSON import's body limit, and the file import's: a file at the limit with its framing; more is 413 before it is read. */
export const IMPORT_BODY_LIMIT: BodyLimit = { bytes: IMPORT_MAX_BYTES, code: 'body_too_large', message: MESSAGES.bodyTooLarge }
export const IMPORT_FILE_BODY_LIMIT: BodyLimit = { bytes: IMPORT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES, code: 'file_too_large', message: MESSAGES.tooLarge }

// ---- export ------------------------------------------------------------------------------------------------------

/** The user's active entries as the export file's items: no ids, by location then name. */
export async function exportItems(core: Core, userId: number): Promise<ExportItem[]> {
  return core.db.sql<ExportItem>`
    select location, name, number, type, notes from clinical.phone_directory
    where user_id = ${userId} and trashed_at is null
    order by location, name, id`
}

/** The export: a zip holding exactly app-extensions.json, and how many entries it holds. */
export async function exportZip(core: Core, userId: number): Promise<{ zip: Uint8Array; count: number }> {
  const items = await exportItems(core, userId)
  const file: ExportFile = { format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: new Date(core.now()).toISOString(), items }
  const zip = zipSync({ [EXPORT_FILE_NAME]: strToU8(JSON.stringify(file, null, 2)) }, { level: 6, mtime: new Date(core.now()) })
  return { zip, count: items.length }
}

// ---- reading what is imported ------------------------------------------------------------------------------------

/** The entries and options of a JSON import body: an export payload, an array of entries, or `{items, options}`. */
export function payloadOf(body: unknown): { items: unknown[]; options: ImportOptions } {
  if (Array.isArray(body)) return { items: body, options: {} }
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { items?: unknown }).items)) {
    throw HttpError.badRequest('invalid_import', MESSAGES.shape)
  }
  const b = body as { items: unknown[]; format?: unknown; version?: unknown; options?: unknown }
  if (b.format !== undefined && b.format !== EXPORT_FORMAT) throw HttpError.badRequest('unsupported_format', MESSAGES.format)
  if (b.version !== undefined && b.version !== EXPORT_VERSION) throw HttpError.badRequest('unsupported_version', MESSAGES.version)
  const o = (typeof b.options === 'object' && b.options !== null ? b.options : {}) as Record<string, unknown>
  return { items: b.items, options: { restoreTrashed: o.restoreTrashed === true, importPossibleDuplicates: o.importPossibleDuplicates === true } }
}

/** UTF-8 JSON text as a value; 400 for anything else. */
function parseJson(bytes: Uint8Array): unknown {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw HttpError.badRequest('invalid_encoding', MESSAGES.notUtf8)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw HttpError.badRequest('invalid_json', MESSAGES.notJson)
  }
}

/** An uploaded import file (the JSON export or the zip holding it) as its JSON value. */
export async function readImportFile(file: File): Promise<unknown> {
  // The declared length may be absent or wrong (chunked bodies): the actual size decides.
  if (file.size > IMPORT_MAX_BYTES) throw HttpError.tooLarge('file_too_large', MESSAGES.tooLarge)
  if (file.size === 0) throw HttpError.badRequest('empty_file', MESSAGES.emptyFile)
  const bytes = new Uint8Array(await file.arrayBuffer())
  return parseJson(isZip(bytes) ? unzipExport(bytes) : bytes)
}

/** The entries of an uploaded file; the file's own `options`, if any, are not used (the form's fields decide). */
export const fileItems = (value: unknown): unknown[] => payloadOf(value).items

// ---- the rules ---------------------------------------------------------------------------------------------------

/** The items of an import checked one by one: the valid entries (the first IMPORT_VALID_MAX), the invalid ones. */
export interface ParsedImport {
  total: number
  valid: Array<{ index: number; entry: EntryInput }>
  /** The first PREVIEW_INVALID_LISTED_MAX invalid items, with why. */
  invalidListed: Array<{ index: number; error: string }>
  invalid: number
  overLimit: number
}

export function parseItems(items: unknown[]): ParsedImport {
  const parsed: ParsedImport = { total: items.length, valid: [], invalidListed: [], invalid: 0, overLimit: 0 }
  for (let index = 0; index < items.length; index++) {
    if (parsed.valid.length >= IMPORT_VALID_MAX) {
      parsed.overLimit = items.length - index
      break
    }
    const { entry, errors } = checkEntry(items[index])
    if (entry) parsed.valid.push({ index, entry })
    else {
      parsed.invalid++
      if (parsed.invalidListed.length < PREVIEW_INVALID_LISTED_MAX) {
        parsed.invalidListed.push({ index, error: Object.entries(errors).map(([f, m]) => (f === 'entry' ? m : `${f}: ${m}`)).join('; ') })
      }
    }
  }
  return parsed
}

const words = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase()
const digits = (n: string) => n.toLowerCase().replace(/[\s\-.()]/g, '')
const exactKey = (e: EntryInput) => JSON.stringify([words(e.location), words(e.name), digits(e.number), e.type, words(e.notes)])
const placeNumberKey = (e: EntryInput) => JSON.stringify(['ln', words(e.location), digits(e.number)])
const numberTypeKey = (e: EntryInput) => JSON.stringify(['nt', digits(e.number), e.type])

interface Existing extends EntryInput { id: number; trashed: boolean }

interface Plan {
  decisions: Array<{ index: number; status: PreviewStatus; action: PreviewAction; entry: EntryInput; matchId: number | null }>
  inserts: EntryInput[]
  restores: number[]
}

/** Each valid entry's status and what the import does with it, in order (the four rules). */
function plan(existing: Existing[], parsed: ParsedImport, options: ImportOptions): Plan {
  // active: exact key -> id (null: an entry earlier in this import); trashed: exact key -> ids not yet restored
  const active = new Map<string, number | null>()
  const trashed = new Map<string, number[]>()
  const possible = new Map<string, number | null>()
  const activate = (e: EntryInput, id: number | null) => {
    if (!active.has(exactKey(e))) active.set(exactKey(e), id)
    if (!possible.has(placeNumberKey(e))) possible.set(placeNumberKey(e), id)
    if (!possible.has(numberTypeKey(e))) possible.set(numberTypeKey(e), id)
  }
  for (const e of existing) {
    if (e.trashed) trashed.set(exactKey(e), [...(trashed.get(exactKey(e)) ?? []), e.id])
    else activate(e, e.id)
  }
  const out: Plan = { decisions: [], inserts: [], restores: [] }
  for (const { index, entry } of parsed.valid) {
    const key = exactKey(entry)
    const decide = (status: PreviewStatus, action: PreviewAction, matchId: number | null) => out.decisions.push({ index, status, action, entry, matchId })
    if (active.has(key)) {
      decide('exactActive', 'skip', active.get(key)!)
      continue
    }
    const inTrash = trashed.get(key)
    if (inTrash && inTrash.length > 0) {
      const id = inTrash[0]!
      if (options.restoreTrashed) {
        inTrash.shift()
        out.restores.push(id)
        activate(entry, id)
        decide('exactTrashed', 'restore', id)
      } else decide('exactTrashed', 'skip', id)
      continue
    }
    const like = possible.has(placeNumberKey(entry)) ? placeNumberKey(entry) : possible.has(numberTypeKey(entry)) ? numberTypeKey(entry) : null
    if (like) {
      const matchId = possible.get(like)!
      if (options.importPossibleDuplicates) {
        out.inserts.push(entry)
        activate(entry, null)
        decide('possible', 'import', matchId)
      } else decide('possible', 'skip', matchId)
      continue
    }
    out.inserts.push(entry)
    activate(entry, null)
    decide('new', 'import', null)
  }
  return out
}

async function existingEntries(core: Core, userId: number): Promise<Existing[]> {
  return core.db.sql<Existing>`
    select id, location, name, number, type, notes, trashed_at is not null as trashed from clinical.phone_directory
    where user_id = ${userId} order by id`
}

const countOf = (p: Plan, status: PreviewStatus) => p.decisions.filter((d) => d.status === status).length

/** What an import of these items would do, without doing it: the summary and each entry's status and action. */
export async function previewParsed(core: Core, userId: number, parsed: ParsedImport, options: ImportOptions = {}): Promise<{ summary: PreviewSummary; entries: PreviewEntry[] }> {
  const p = plan(await existingEntries(core, userId), parsed, options)
  const entries: PreviewEntry[] = [
    ...p.decisions.map((d) => ({ index: d.index, status: d.status, action: d.action, entry: d.entry, matchId: d.matchId, error: null })),
    ...parsed.invalidListed.map((i) => ({ index: i.index, status: 'invalid' as const, action: 'skip' as const, entry: null, matchId: null, error: i.error })),
  ].sort((a, b) => a.index - b.index)
  const summary: PreviewSummary = {
    total: parsed.total, new: countOf(p, 'new'), exactActive: countOf(p, 'exactActive'), exactTrashed: countOf(p, 'exactTrashed'),
    possible: countOf(p, 'possible'), invalid: parsed.invalid, overLimit: parsed.overLimit,
  }
  return { summary, entries }
}

/** Imports the items by the four rules, in one transaction under the user's directory lock. */
export async function importParsed(core: Core, userId: number, parsed: ParsedImport, options: ImportOptions = {}): Promise<ImportResult> {
  return core.transaction(async (tx) => {
    await lockDirectory(tx, userId)
    const existing = await existingEntries(tx, userId)
    const p = plan(existing, parsed, options)
    if (existing.length + p.inserts.length > DIRECTORY_ENTRIES_MAX) throw HttpError.conflict('directory_full', ENTRY_MESSAGES.full)
    const now = new Date(core.now())
    if (p.inserts.length > 0) {
      // one statement for the batch; the entries travel as one jsonb parameter
      await tx.db.sql`
        insert into clinical.phone_directory (user_id, location, name, number, type, notes, created_at, updated_at)
        select ${userId}, x.location, x.name, x.number, x.type, x.notes, ${now}, ${now}
        from jsonb_to_recordset(${{ items: p.inserts }}::jsonb -> 'items') as x(location text, name text, number text, type text, notes text)`
    }
    if (p.restores.length > 0) {
      await tx.db.sql`
        update clinical.phone_directory set trashed_at = null, updated_at = ${now}
        where user_id = ${userId} and id in (select (jsonb_array_elements_text(${{ ids: p.restores }}::jsonb -> 'ids'))::int)`
    }
    const count = (status: PreviewStatus, action: PreviewAction) => p.decisions.filter((d) => d.status === status && d.action === action).length
    return {
      success: true as const,
      imported: p.inserts.length,
      restored: p.restores.length,
      skipped: count('exactActive', 'skip') + count('exactTrashed', 'skip'),
      possibleSkipped: count('possible', 'skip'),
      total: parsed.total,
      invalid: parsed.invalid,
      overLimit: parsed.overLimit,
    }
  })
}

export const previewItems = (core: Core, userId: number, items: unknown[], options: ImportOptions = {}) => previewParsed(core, userId, parseItems(items), options)
export const importItems = (core: Core, userId: number, items: unknown[], options: ImportOptions = {}) => importParsed(core, userId, parseItems(items), options)

/** The two options as a form sends them: `true` enables. */
export const formOptions = (f: { restoreTrashed?: string; importPossibleDuplicates?: string }): ImportOptions => ({
  restoreTrashed: f.restoreTrashed === 'true', importPossibleDuplicates: f.importPossibleDuplicates === 'true',
})

// ---- a file import in two steps (the pages): upload and preview, then choose the options and import ------------

/** An uploaded file waits this long for its import. */
export const STAGED_IMPORT_TTL_S = 60 * 60

export interface StagedImport {
  fileName: string
  parsed: ParsedImport
  /** Set once it is imported: the import's answer, shown again instead of importing twice. */
  result: ImportResult | null
}

const stagedKey = (userId: number, token: string) => `directory.import:${userId}:${token}`
const TOKEN = /^[A-Za-z0-9_-]{16,64}$/

/** Reads and checks an uploaded file and keeps its entries for the import; answers the token of the staged import. */
export async function stageImport(core: Core, userId: number, file: File): Promise<string> {
  const parsed = parseItems(fileItems(await readImportFile(file)))
  const token = randomToken(18)
  const staged: StagedImport = { fileName: (file.name || 'file').replace(/^.*[/\\]/, '').slice(0, 200), parsed, result: null }
  await core.kv.set(stagedKey(userId, token), staged, STAGED_IMPORT_TTL_S)
  return token
}

/** The user's staged import; 404 when it expired, never existed or is another user's. */
export async function stagedImport(core: Core, userId: number, token: string): Promise<StagedImport> {
  const staged = TOKEN.test(token) ? await core.kv.get<StagedImport>(stagedKey(userId, token)) : null
  if (!staged) throw HttpError.notFound('import_not_found', MESSAGES.importNotFound)
  return staged
}

/** Imports a staged file once: sent again (a second click), it answers the first import's result and stores nothing. */
export async function importStaged(core: Core, userId: number, token: string, options: ImportOptions): Promise<ImportResult> {
  return core.transaction(async (tx) => {
    await lockDirectory(tx, userId)
    const staged = await stagedImport(tx, userId, token)
    if (staged.result) return staged.result
    const result = await importParsed(tx, userId, staged.parsed, options)
    await tx.kv.set(stagedKey(userId, token), { ...staged, result }, STAGED_IMPORT_TTL_S)
    return result
  })
}

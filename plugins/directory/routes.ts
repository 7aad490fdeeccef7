// The phone directory's JSON API (signed-in clinical users, own entries only) and its pages (pages.ts). Routing,
// guards, validation and response shaping only; the rules live in service.ts and transfer.ts.
import { Elysia } from 'elysia'
import { bodyLimits } from '../../src/envelope'
import { Success } from '../clinical/exports'
import type { DirectoryState } from './index'
import {
  DIRECTORY_ENTRIES_MAX, EntryBody, EntryCreated, EntryList, EntryParams, EXPORT_FILE_NAME, EXPORT_FORMAT, EXPORT_ZIP_NAME, IMPORT_MAX_BYTES,
  IMPORT_VALID_MAX, ImportBody, ImportFileBody, ImportFilePreviewBody, ImportPreview, ImportResult, ListQuery, LOCATION_MAX, NAME_MAX,
  NOTES_MAX, NUMBER_MAX, QUERY_MAX, ZIP_ENTRIES_MAX, ZIP_UNCOMPRESSED_MAX_BYTES,
} from './model'
import { directoryPages } from './pages'
import * as directory from './service'
import * as transfer from './transfer'

const tags = ['Phone directory']
const SESSION = '401 without a session.'
const NOT_YOURS = '404 for an id that is not one of the caller\'s entries (another user\'s entries are never shown).'
const RULES = [
  `Rules: \`number\` is required (1 to ${NUMBER_MAX} characters), and a \`location\` or a \`name\`; \`type\` is \`extension\``,
  `(the default) or \`pager\`, in any letter case; \`location\` and \`name\` at most ${LOCATION_MAX} and ${NAME_MAX} characters,`,
  `\`notes\` at most ${NOTES_MAX}. Texts are stored trimmed; a field left out is stored empty. A rule broken: 422 with \`fields\`.`,
].join(' ')
const IMPORT_RULES = [
  'Each valid entry, in order: (1) an exact duplicate of an active entry is skipped; (2) an exact match of a trashed entry is',
  'restored when `restoreTrashed` is true, else skipped; (3) a possible duplicate (same location and number, or same number',
  'and type, as an active entry) is skipped unless `importPossibleDuplicates` is true; otherwise the entry is imported.',
  'Entries earlier in the same import count as active for the ones after them. Comparisons ignore letter case and repeated',
  'or surrounding spaces; numbers also ignore spaces, dashes, dots and brackets.',
  `At most ${IMPORT_VALID_MAX} valid entries are processed: the items after them are counted in \`overLimit\` and left out.`,
  'An entry that breaks a rule of the entries is counted in `invalid` and left out; the rest is imported.',
  `The import is one transaction: all of it is stored or nothing (409 \`directory_full\` when the directory would pass ${DIRECTORY_ENTRIES_MAX} entries).`,
].join(' ')
const FILE_RULES = [
  `Multipart form with the field \`file\`: the export zip (\`${EXPORT_ZIP_NAME}\`) or its JSON file (\`${EXPORT_FILE_NAME}\`), told apart`,
  `by their leading bytes; at most ${IMPORT_MAX_BYTES} bytes (413 \`file_too_large\`; a declared Content-Length over it is refused`,
  'before the body is read). 400 for an empty file, a file that is not UTF-8 JSON (`invalid_json`), or not an export',
  `(\`invalid_import\`, \`unsupported_format\`, \`unsupported_version\`). The zip must hold exactly one file, \`${EXPORT_FILE_NAME}\`,`,
  `at its top: more than ${ZIP_ENTRIES_MAX} entry (\`zip_too_many_entries\`), a path with \`..\`, a leading \`/\` or a folder`,
  '(`zip_unsafe_path`), an archive inside it (`zip_nested_archive`), another file (`zip_unexpected_file`) or none',
  `(\`zip_missing_file\`) is 400; content over ${ZIP_UNCOMPRESSED_MAX_BYTES} bytes once inflated is 413 \`zip_too_large\`, refused while`,
  'inflating. A damaged zip is 400 `invalid_zip`. Nothing is imported on any refusal.',
].join(' ')

const apiRoutes = ({ core, clinical: { auth } }: DirectoryState) =>
  new Elysia({ prefix: '/api/extensions' })
    .use(auth)
    .use(bodyLimits)
    .get('', async ({ user, query }) => ({ success: true as const, items: await directory.listEntries(core, user.id, query) }), {
      auth: 'user', query: ListQuery, response: EntryList,
      detail: {
        tags, summary: 'The caller\'s phone directory',
        description: [
          'The active entries, ordered by location, then name; with `trash=1` or `trash=true` the trashed entries instead, the',
          `latest trashed first. \`q\` keeps the entries whose location, name, number or notes contain it, ignoring letter case (at most ${QUERY_MAX}`,
          `characters; \`%\` and \`_\` are plain characters). ${SESSION}`,
        ].join(' '),
      },
    })
    .post('', async ({ user, body }) => ({ success: true as const, ...(await directory.createEntry(core, user.id, body)) }), {
      auth: 'user', body: EntryBody, response: EntryCreated,
      detail: {
        tags, summary: 'Add an entry',
        description: `${RULES} A directory holds at most ${DIRECTORY_ENTRIES_MAX} entries, the trash included: 409 \`directory_full\` past that. ${SESSION}`,
      },
    })
    .get('/export', async ({ user }) => {
      const { zip, count } = await transfer.exportZip(core, user.id)
      return new Response(zip as Uint8Array<ArrayBuffer>, {
        headers: {
          'content-type': 'application/zip',
          'content-disposition': `attachment; filename="${EXPORT_ZIP_NAME}"`,
          'x-export-count': String(count),
          'cache-control': 'private, no-store',
        },
      })
    }, {
      auth: 'user',
      detail: {
        tags, summary: 'Export the directory as a zip',
        description: [
          `A zip named \`${EXPORT_ZIP_NAME}\` holding one file, \`${EXPORT_FILE_NAME}\`: \`{format: "${EXPORT_FORMAT}", version: 1, exported_at,`,
          'items}`, the items being the active entries as `{location, name, number, type, notes}` (no ids), by location, then name.',
          `\`X-Export-Count\` is the number of entries exported. ${SESSION}`,
        ].join(' '),
        responses: {
          200: {
            description: 'The zip',
            headers: {
              'Content-Disposition': { description: `\`attachment; filename="${EXPORT_ZIP_NAME}"\``, schema: { type: 'string' } },
              'X-Export-Count': { description: 'The number of entries exported', schema: { type: 'integer' } },
            },
            content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
          },
        },
      },
    })
    .post('/import', async ({ user, body }) => {
      const { items, options } = transfer.payloadOf(body)
      return transfer.importItems(core, user.id, items, options)
    }, {
      auth: 'user', body: ImportBody, response: ImportResult, bodyLimit: transfer.IMPORT_BODY_LIMIT,
      detail: {
        tags, summary: 'Import entries (JSON)',
        description: [
          'The body: an export payload object (its `format` and `version`, when present, must be the export\'s: 400 otherwise), an',
          'array of entries, or an object with `items` and `options` `{restoreTrashed, importPossibleDuplicates}` (both default',
          `false; an export payload may carry \`options\` too). ${IMPORT_RULES} Malformed JSON: 400, nothing imported. The body is at`,
          `most ${IMPORT_MAX_BYTES} bytes (413). ${SESSION}`,
        ].join(' '),
      },
    })
    .post('/import/preview', async ({ user, body }) => {
      const { items, options } = transfer.payloadOf(body)
      return { success: true as const, preview: await transfer.previewItems(core, user.id, items, options) }
    }, {
      auth: 'user', body: ImportBody, response: ImportPreview, bodyLimit: transfer.IMPORT_BODY_LIMIT,
      detail: {
        tags, summary: 'Preview a JSON import (dry run)',
        description: [
          'What POST /api/extensions/import does with the same body, without storing anything: the summary counts every entry by',
          'status (`new`, `exactActive`, `exactTrashed`, `possible`, `invalid`, `overLimit`; `total` is every item sent), and',
          '`entries` lists the processed entries in order with their `status`, the `action` the import takes with the options sent',
          '(`import`, `restore` or `skip`), the entry as it would be stored, the id of the entry it duplicates (`matchId`) and, for',
          `an invalid one, \`error\` (the first 100 invalid entries are listed; all are counted). ${IMPORT_RULES} ${SESSION}`,
        ].join(' '),
      },
    })
    .post('/import-file', async ({ user, body }) => {
      const items = transfer.fileItems(await transfer.readImportFile(body.file))
      return transfer.importItems(core, user.id, items, transfer.formOptions(body))
    }, {
      auth: 'user', parse: 'formdata', body: ImportFileBody, response: ImportResult, bodyLimit: transfer.IMPORT_FILE_BODY_LIMIT,
      detail: {
        tags, summary: 'Import the export file (zip or JSON)',
        description: [
          `${FILE_RULES} Optional form fields \`restoreTrashed\` and \`importPossibleDuplicates\`: \`true\` enables (options inside the`,
          `file are not used). ${IMPORT_RULES} ${SESSION}`,
        ].join(' '),
      },
    })
    .post('/import-file/preview', async ({ user, body }) => {
      const items = transfer.fileItems(await transfer.readImportFile(body.file))
      return { success: true as const, preview: await transfer.previewItems(core, user.id, items) }
    }, {
      auth: 'user', parse: 'formdata', body: ImportFilePreviewBody, response: ImportPreview, bodyLimit: transfer.IMPORT_FILE_BODY_LIMIT,
      detail: {
        tags, summary: 'Preview a file import (dry run)',
        description: `The preview of POST /api/extensions/import/preview for the file, with both options false. ${FILE_RULES} ${SESSION}`,
      },
    })
    .put('/:id', async ({ user, params, body }) => {
      await directory.updateEntry(core, user.id, params.id, body)
      return { success: true as const }
    }, {
      auth: 'user', params: EntryParams, body: EntryBody, response: Success,
      detail: {
        tags, summary: 'Replace an entry',
        description: `The fields sent replace the entry's; ${RULES} 409 \`entry_trashed\` for an entry in the trash (restore it first). ${NOT_YOURS} ${SESSION}`,
      },
    })
    .delete('/:id', async ({ user, params }) => {
      await directory.trashEntry(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: EntryParams, response: Success,
      detail: {
        tags, summary: 'Move an entry to the trash',
        description: `Soft delete: \`trashed_at\` is set and the entry is listed with \`trash=1\`. 409 \`entry_trashed\` when it already is. ${NOT_YOURS} ${SESSION}`,
      },
    })
    .post('/:id/restore', async ({ user, params }) => {
      await directory.restoreEntry(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: EntryParams, response: Success,
      detail: {
        tags, summary: 'Restore an entry from the trash',
        description: `It is active again (\`trashed_at\` null). 409 \`entry_not_trashed\` for an active entry. ${NOT_YOURS} ${SESSION}`,
      },
    })
    .delete('/:id/purge', async ({ user, params }) => {
      await directory.purgeEntry(core, user.id, params.id)
      return { success: true as const }
    }, {
      auth: 'user', params: EntryParams, response: Success,
      detail: {
        tags, summary: 'Delete a trashed entry for good',
        description: `Only an entry in the trash can be purged: 409 \`entry_not_trashed\` for an active one (move it to the trash first). ${NOT_YOURS} ${SESSION}`,
      },
    })

export const directoryRoutes = (state: DirectoryState) =>
  new Elysia()
    .use(apiRoutes(state))
    .use(directoryPages(state))

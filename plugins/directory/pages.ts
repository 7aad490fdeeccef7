// The phone directory pages: /directory (search as you type, add, click-to-edit rows, move to the trash, export),
// /directory/trash (restore, delete for good after a confirm step) and /directory/import (upload a file, see the
// preview, choose the two options, import). One URL serves a page and its htmx fragment; every form also works
// without JavaScript (Post/Redirect/Get, 422 re-render with the messages next to the fields). The rules stay in
// service.ts and transfer.ts; another user's entry is their 404.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../src/core/errors'
import { RowId } from '../../src/core/schema'
import { bodyLimits } from '../../src/envelope'
import { isFragment, type Flash } from '../../views/layout'
import { FormBody, formFailure, formFields, html, noticeOf, redirect } from '../../views/page'
import { clinicalPageKit } from '../clinical/pages/common'
import type { ClinicalUser } from '../clinical/exports'
import type { DirectoryState } from './index'
import { EXPORT_ZIP_NAME, QUERY_MAX, type Entry } from './model'
import * as directory from './service'
import * as transfer from './transfer'
import {
  DirectoryContent, DirectoryPage, DirectoryResults, EntryEditRow, EntryRow, ImportPage, ImportPreviewPage, PurgePage, TrashList, TrashPage, TrashRow,
  withQuery, type DirectoryView, type EntryEditing, type EntryFormState, type EntryValues,
} from './views/directory'

const IdParams = t.Object({ id: RowId() })
const TokenParams = t.Object({ token: t.String({ maxLength: 64 }) })
const SearchQuery = t.Object({ q: t.Optional(t.String({ maxLength: QUERY_MAX })), notice: t.Optional(t.String()) })

/** Notices of the Post/Redirect/Get answers, by the `notice` query value: fixed texts, never the query's. */
const NOTICES = {
  added: 'The entry was added.',
  saved: 'The entry was saved.',
  trashed: 'The entry was moved to the trash. You can restore it from the trash.',
  restored: 'The entry was restored.',
  purged: 'The entry was deleted for good.',
} as const

const entryValues = (f: Record<string, string>): EntryValues => ({
  location: f.location ?? '', name: f.name ?? '', number: f.number ?? '', type: f.type ?? '', notes: f.notes ?? '',
})
const valuesOf = (e: Entry): EntryValues => ({ location: e.location, name: e.name, number: e.number, type: e.type, notes: e.notes })
/** A rule failure as the form shows it: the field messages, or one line when no field is named. */
const formState = (values: EntryValues, err: unknown): { state: EntryFormState; headers: Record<string, string> } => {
  const { errors, flash, headers } = formFailure(err)
  return { state: { values, errors, message: errors ? undefined : flash.text }, headers }
}

export const directoryPages = (state: DirectoryState) => {
  const { core } = state
  const base = core.config.clinicalBasePath
  const home = `${base}/directory`

  const page = async (user: ClinicalUser, view: Partial<DirectoryView> & { flash?: Flash } = {}, status = 200, headers: Record<string, string> = {}) => {
    const q = view.q ?? ''
    const entries = view.entries ?? (await directory.listEntries(core, user.id, { q }))
    return html(DirectoryPage({ base, user, ...view, entries, q }), { status, headers })
  }
  const results = async (userId: number, q: string, notice?: string) =>
    html(DirectoryResults({ base, entries: await directory.listEntries(core, userId, { q }), q, notice }))
  const trashList = async (userId: number, notice?: string) =>
    html(TrashList({ base, entries: await directory.listEntries(core, userId, { trash: '1' }), notice }))

  return new Elysia()
    .use(clinicalPageKit(state.clinical))
    .use(bodyLimits)

    // ---- the directory ----
    .get('/directory', async ({ request, user, query }) => {
      const q = (query.q ?? '').trim()
      if (isFragment(request)) return results(user.id, q)
      return page(user, { q, flash: noticeOf(NOTICES, query.notice) })
    }, { signedIn: true, query: SearchQuery })
    .post('/directory', async ({ request, user, body }) => {
      const values = entryValues(formFields(body))
      try {
        await directory.createEntry(core, user.id, values)
        if (!isFragment(request)) return redirect(`${home}?notice=added`)
        const entries = await directory.listEntries(core, user.id)
        return html(DirectoryContent({ base, entries, q: '', notice: NOTICES.added }))
      } catch (err) {
        const { state: add, headers } = formState(values, err)
        if (!isFragment(request)) return page(user, { add }, 422, headers)
        return html(DirectoryContent({ base, entries: await directory.listEntries(core, user.id), q: '', add }), { status: 422, headers })
      }
    }, { signedIn: true, body: FormBody })
    .get('/directory/export', async ({ user }) => {
      const { zip, count } = await transfer.exportZip(core, user.id)
      return new Response(zip as Uint8Array<ArrayBuffer>, {
        headers: {
          'content-type': 'application/zip', 'content-disposition': `attachment; filename="${EXPORT_ZIP_NAME}"`,
          'x-export-count': String(count), 'cache-control': 'private, no-store',
        },
      })
    }, { signedIn: true })

    // ---- the trash ----
    .get('/directory/trash', async ({ request, user, query }) => {
      if (isFragment(request)) return trashList(user.id)
      const entries = await directory.listEntries(core, user.id, { trash: '1' })
      return html(TrashPage({ base, user, entries, flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: SearchQuery })

    // ---- import: upload and preview, then the options and the import ----
    .get('/directory/import', ({ user }) => html(ImportPage({ base, user })), { signedIn: true })
    // Without htmx (the form is not boosted): Post/Redirect/Get to the preview, or the form again with the refusal.
    .post('/directory/import', async ({ user, body }) => {
      const file = ((body ?? {}) as Record<string, unknown>).file
      try {
        // A form sent without a file chosen carries an empty, nameless file part (or none at all).
        if (!(file instanceof File) || (file.size === 0 && !file.name)) {
          throw HttpError.unprocessable('no_file', 'Choose a file to import', { file: 'Choose a file to import' })
        }
        const token = await transfer.stageImport(core, user.id, file)
        return redirect(`${home}/import/${token}`)
      } catch (err) {
        const { errors, flash, headers } = formFailure(err)
        return html(ImportPage({ base, user, error: errors?.file ?? flash.text }), { status: err instanceof HttpError && err.status === 413 ? 413 : 422, headers })
      }
    }, { signedIn: true, body: FormBody, bodyLimit: transfer.IMPORT_FILE_BODY_LIMIT })
    .get('/directory/import/:token', async ({ user, params }) => {
      const staged = await transfer.stagedImport(core, user.id, params.token)
      const { summary, entries } = await transfer.previewParsed(core, user.id, staged.parsed)
      return html(ImportPreviewPage({ base, user, token: params.token, fileName: staged.fileName, summary, entries, result: staged.result }))
    }, { signedIn: true, params: TokenParams })
    .post('/directory/import/:token', async ({ user, params, body }) => {
      await transfer.importStaged(core, user.id, params.token, transfer.formOptions(formFields(body)))
      return redirect(`${home}/import/${params.token}`)
    }, { signedIn: true, params: TokenParams, body: FormBody })

    // ---- one entry ----
    .get('/directory/:id', async ({ request, user, params, query }) => {
      const e = await directory.getEntry(core, user.id, params.id)
      if (!isFragment(request)) return redirect(`${e.trashed_at ? `${home}/trash` : withQuery(home, query.q ?? '')}#entry-${e.id}`)
      return html(e.trashed_at ? TrashRow({ base, e }) : EntryRow({ base, e, q: query.q ?? '' }))
    }, { signedIn: true, params: IdParams, query: SearchQuery })
    .get('/directory/:id/edit', async ({ request, user, params, query }) => {
      const e = await directory.getEntry(core, user.id, params.id)
      if (e.trashed_at) return redirect(`${home}/trash#entry-${e.id}`)
      const q = query.q ?? ''
      const editing: EntryEditing = { id: e.id, state: { values: valuesOf(e) } }
      if (isFragment(request)) return html(EntryEditRow({ base, id: e.id, q, state: editing.state }))
      return page(user, { q, editing })
    }, { signedIn: true, params: IdParams, query: SearchQuery })
    .post('/directory/:id', async ({ request, user, params, body }) => {
      const f = formFields(body)
      const values = entryValues(f)
      const q = (f.q ?? '').slice(0, QUERY_MAX)
      try {
        await directory.updateEntry(core, user.id, params.id, values)
        if (!isFragment(request)) return redirect(`${withQuery(`${home}?notice=saved`, q)}#entry-${params.id}`)
        return html(EntryRow({ base, e: await directory.getEntry(core, user.id, params.id), q, saved: true }))
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) throw err
        const { state: editState, headers } = formState(values, err)
        if (isFragment(request)) return html(EntryEditRow({ base, id: params.id, q, state: editState }), { status: 422, headers })
        return page(user, { q, editing: { id: params.id, state: editState } }, 422, headers)
      }
    }, { signedIn: true, params: IdParams, body: FormBody })
    .post('/directory/:id/trash', async ({ request, user, params, body }) => {
      const q = (formFields(body).q ?? '').slice(0, QUERY_MAX)
      await directory.trashEntry(core, user.id, params.id)
      if (!isFragment(request)) return redirect(withQuery(`${home}?notice=trashed`, q))
      return results(user.id, q, NOTICES.trashed)
    }, { signedIn: true, params: IdParams, body: FormBody })
    // The move and restore forms post; a GET of their address (a bookmark, a reload) shows the entry where it is.
    .get('/directory/:id/trash', ({ params }) => redirect(`${home}/${params.id}`), { signedIn: true, params: IdParams })
    .get('/directory/:id/restore', ({ params }) => redirect(`${home}/${params.id}`), { signedIn: true, params: IdParams })
    .post('/directory/:id/restore', async ({ request, user, params }) => {
      await directory.restoreEntry(core, user.id, params.id)
      if (!isFragment(request)) return redirect(`${home}/trash?notice=restored`)
      return trashList(user.id, NOTICES.restored)
    }, { signedIn: true, params: IdParams, body: FormBody })
    .get('/directory/:id/purge', async ({ request, user, params }) => {
      const e = await directory.getEntry(core, user.id, params.id)
      if (!e.trashed_at) return redirect(`${home}#entry-${e.id}`)
      return html(isFragment(request) ? TrashRow({ base, e, confirm: true }) : PurgePage({ base, user, e }))
    }, { signedIn: true, params: IdParams })
    .post('/directory/:id/purge', async ({ request, user, params }) => {
      await directory.purgeEntry(core, user.id, params.id)
      if (!isFragment(request)) return redirect(`${home}/trash?notice=purged`)
      return trashList(user.id, NOTICES.purged)
    }, { signedIn: true, params: IdParams, body: FormBody })
}

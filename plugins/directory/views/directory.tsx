// The phone directory pages: the searchable table (search as you type, add, click-to-edit rows, move to the trash),
// the trash (restore, delete for good with a confirm step), and the import in two steps (upload and preview, then
// the options and the import). Each page includes its fragments, so one source serves the page and the htmx answer;
// every form has action + method and works without JavaScript. Every user or database string is a `safe` text child
// or an attribute.
import { describedBy, type Errors, Field, FieldNotes, type Flash, Notice, Problem, When } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'
import {
  ENTRY_TYPES, EXPORT_FILE_NAME, EXPORT_ZIP_NAME, IMPORT_VALID_MAX, LOCATION_MAX, NAME_MAX, NOTES_MAX, NUMBER_MAX, QUERY_MAX,
  type Entry, type ImportResult, type PreviewEntry, type PreviewSummary,
} from '../model'

// ---- shared pieces ---------------------------------------------------------------------------------------------

const TYPE_WORDS: Record<string, string> = { extension: 'Extension', pager: 'Pager' }
export const typeWords = (type: string) => TYPE_WORDS[type] ?? type

/** A query string keeping the search, for the links and redirects of a filtered list. */
export const withQuery = (url: string, q: string) => (q ? `${url}${url.includes('?') ? '&' : '?'}q=${encodeURIComponent(q)}` : url)

// ---- the entry form --------------------------------------------------------------------------------------------

export type EntryValues = { location: string; name: string; number: string; type: string; notes: string }
export const blankEntry: EntryValues = { location: '', name: '', number: '', type: 'extension', notes: '' }
export interface EntryFormState { values: EntryValues; errors?: Errors; message?: string }

const EntryFields = ({ idPrefix, state }: { idPrefix: string; state: EntryFormState }) => {
  const { values, errors } = state
  const typeId = `${idPrefix}-type`
  const notesId = `${idPrefix}-notes`
  return (
    <div class="dir-fields">
      <Field label="Location" name="location" id={`${idPrefix}-location`} value={values.location} error={errors?.location} maxlength={LOCATION_MAX} />
      <Field label="Name" name="name" id={`${idPrefix}-name`} value={values.name} error={errors?.name} maxlength={NAME_MAX} />
      <Field label="Number" name="number" id={`${idPrefix}-number`} value={values.number} error={errors?.number} maxlength={NUMBER_MAX} required />
      <label for={typeId}>
        <span>Type</span>
        <select id={typeId} name="type" aria-invalid={errors?.type ? 'true' : undefined} aria-describedby={describedBy(typeId, undefined, errors?.type)}>
          {ENTRY_TYPES.map((t) => <option value={t} selected={values.type === t ? true : undefined} safe>{typeWords(t)}</option>)}
        </select>
        <FieldNotes id={typeId} error={errors?.type} />
      </label>
      <Field label="Notes" name="notes" id={notesId} value={values.notes} error={errors?.notes} maxlength={NOTES_MAX} />
    </div>
  )
}

const entryUrl = (base: string, id: number) => `${base}/directory/${id}`

/** The cells both lists show of an entry: location (the row's header), name, number, type. */
const EntryCells = ({ e }: { e: Entry }) => (
  <>
    <th scope="row" safe>{e.location}</th>
    <td safe>{e.name}</td>
    <td><span class="dir-number" safe>{e.number}</span></td>
    <td safe>{typeWords(e.type)}</td>
  </>
)

// ---- the directory -----------------------------------------------------------------------------------------------

export const EntryRow = (p: { base: string; e: Entry; q: string; saved?: boolean }) => {
  const { e } = p
  const url = entryUrl(p.base, e.id)
  const label = e.name || e.location
  return (
    <tr id={`entry-${e.id}`}>
      <EntryCells e={e} />
      <td safe>{e.notes}</td>
      <td>
        <div class="actions">
          <a href={withQuery(`${url}/edit`, p.q)} hx-get={withQuery(`${url}/edit`, p.q)} hx-target={`#entry-${e.id}`} hx-swap="outerHTML"
            aria-label={`Edit: ${label}`}>Edit</a>
          <form class="inline" action={`${url}/trash`} method="post" hx-post={`${url}/trash`} hx-target="#dir-results" hx-swap="outerHTML">
            <input type="hidden" name="q" value={p.q} />
            <button type="submit" class="secondary" aria-label={`Move to trash: ${label}`}>Move to trash</button>
          </form>
          {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
        </div>
      </td>
    </tr>
  )
}

/** An entry's edit form in place of its row (click to edit); saving swaps the row back. */
export const EntryEditRow = (p: { base: string; id: number; q: string; state: EntryFormState }) => {
  const url = entryUrl(p.base, p.id)
  return (
    <tr id={`entry-${p.id}`}>
      <td colspan="6">
        <form class="stack" action={url} method="post" hx-post={url} hx-target={`#entry-${p.id}`} hx-swap="outerHTML">
          <h3 class="rec-edit-title" safe>{`Edit “${p.state.values.name || p.state.values.location || 'entry'}”`}</h3>
          <Problem text={p.state.message} />
          <input type="hidden" name="q" value={p.q} />
          <EntryFields idPrefix={`entry-${p.id}`} state={p.state} />
          <div class="actions">
            <button type="submit">Save entry</button>
            <a href={withQuery(url, p.q)} hx-get={withQuery(url, p.q)} hx-target={`#entry-${p.id}`} hx-swap="outerHTML">Cancel</a>
          </div>
        </form>
      </td>
    </tr>
  )
}

export interface EntryEditing { id: number; state: EntryFormState }

const countWords = (n: number, q: string) => (q ? `${n} ${n === 1 ? 'entry matches' : 'entries match'} “${q}”.` : `${n} ${n === 1 ? 'entry' : 'entries'}.`)

/** The table: the fragment of a search (and of a move to the trash), part of the page. */
export const DirectoryResults = (p: { base: string; entries: Entry[]; q: string; editing?: EntryEditing; notice?: string | null }) => (
  <div id="dir-results">
    <Notice text={p.notice} />
    <p class="muted" id="dir-count" role="status" safe>{countWords(p.entries.length, p.q)}</p>
    {p.entries.length === 0 ? (
      <p class="muted">{p.q ? 'Nothing found: try fewer letters, or another word.' : 'No entries yet: add one below, or import a file.'}</p>
    ) : (
      <table>
        <caption class="visually-hidden">Your phone directory, by location and name</caption>
        <thead>
          <tr>
            <th scope="col">Location</th><th scope="col">Name</th><th scope="col">Number</th><th scope="col">Type</th>
            <th scope="col">Notes</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody id="dir-rows">
          {p.entries.map((e) => (p.editing?.id === e.id
            ? <EntryEditRow base={p.base} id={e.id} q={p.q} state={p.editing.state} />
            : <EntryRow base={p.base} e={e} q={p.q} />))}
        </tbody>
      </table>
    )}
  </div>
)

export const AddForm = (p: { base: string; state: EntryFormState }) => (
  <form id="dir-add" class="stack" action={`${p.base}/directory`} method="post" hx-post={`${p.base}/directory`} hx-target="#dir-content" hx-swap="outerHTML">
    <Problem text={p.state.message} />
    <p class="muted">The number is needed, and a location or a name.</p>
    <EntryFields idPrefix="dir-new" state={p.state} />
    <div>
      <button type="submit">Add entry</button>
    </div>
  </form>
)

export interface DirectoryView { base: string; entries: Entry[]; q: string; add?: EntryFormState; editing?: EntryEditing; notice?: string | null }

/** The search, the table and the add form: the fragment of an add. */
export const DirectoryContent = (p: DirectoryView) => (
  <div id="dir-content">
    <h2 class="visually-hidden">Your entries</h2>
    <form class="actions dir-search" action={`${p.base}/directory`} method="get" role="search">
      <label for="dir-q" class="visually-hidden">Search the directory</label>
      <input type="search" id="dir-q" name="q" value={p.q} maxlength={QUERY_MAX} placeholder="Search location, name, number or notes"
        autocomplete="off" hx-get={`${p.base}/directory`} hx-trigger="input changed delay:200ms, search" hx-target="#dir-results"
        hx-swap="outerHTML" hx-push-url="true" />
      <button type="submit">Search</button>
      {p.q ? <a href={`${p.base}/directory`}>Show all</a> : ''}
    </form>
    <DirectoryResults base={p.base} entries={p.entries} q={p.q} editing={p.editing} notice={p.notice} />
    <section>
      <h2>Add an entry</h2>
      <AddForm base={p.base} state={p.add ?? { values: blankEntry }} />
    </section>
  </div>
)

export const DirectoryPage = (p: DirectoryView & { user: NavUser; flash?: Flash }) => (
  <ClinicalLayout title="Phone directory" base={p.base} user={p.user} flash={p.flash}>
    <h1>Phone directory</h1>
    <p>Your own list of extensions and pagers. Only you see it.</p>
    <nav class="actions dir-tools" aria-label="Directory">
      <a class="button secondary" href={`${p.base}/directory/export`} hx-boost="false" download={EXPORT_ZIP_NAME}>Export (zip)</a>
      <a href={`${p.base}/directory/import`}>Import a file</a>
      <a href={`${p.base}/directory/trash`}>Trash</a>
    </nav>
    <DirectoryContent {...p} />
  </ClinicalLayout>
)

// ---- the trash ---------------------------------------------------------------------------------------------------

export const TrashRow = (p: { base: string; e: Entry; confirm?: boolean }) => {
  const { e } = p
  const url = entryUrl(p.base, e.id)
  const label = e.name || e.location
  return (
    <tr id={`entry-${e.id}`}>
      <EntryCells e={e} />
      <td>{e.trashed_at ? <When iso={e.trashed_at} /> : ''}</td>
      <td>
        {p.confirm ? (
          <form class="rec-confirm" action={`${url}/purge`} method="post" hx-post={`${url}/purge`} hx-target="#dir-trash-list" hx-swap="outerHTML">
            <span safe>{`Delete “${label}” for good?`}</span>{' '}
            <button type="submit" class="danger" autofocus>Delete for good</button>{' '}
            <a href={`${p.base}/directory/trash`} hx-get={url} hx-target={`#entry-${e.id}`} hx-swap="outerHTML">Keep it</a>
          </form>
        ) : (
          <div class="actions">
            <form class="inline" action={`${url}/restore`} method="post" hx-post={`${url}/restore`} hx-target="#dir-trash-list" hx-swap="outerHTML">
              <button type="submit" aria-label={`Restore: ${label}`}>Restore</button>
            </form>
            <a href={`${url}/purge`} hx-get={`${url}/purge`} hx-target={`#entry-${e.id}`} hx-swap="outerHTML" aria-label={`Delete for good: ${label}`}>Delete for good</a>
          </div>
        )}
      </td>
    </tr>
  )
}

export const TrashList = (p: { base: string; entries: Entry[]; notice?: string | null }) => (
  <div id="dir-trash-list">
    <Notice text={p.notice} />
    {p.entries.length === 0 ? <p class="muted">The trash is empty.</p> : (
      <table>
        <caption class="visually-hidden">Entries in the trash, the latest moved first</caption>
        <thead>
          <tr>
            <th scope="col">Location</th><th scope="col">Name</th><th scope="col">Number</th><th scope="col">Type</th>
            <th scope="col">Moved to trash</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {p.entries.map((e) => <TrashRow base={p.base} e={e} />)}
        </tbody>
      </table>
    )}
  </div>
)

export const TrashPage = (p: { base: string; user: NavUser; entries: Entry[]; flash?: Flash }) => (
  <ClinicalLayout title="Directory trash" base={p.base} user={p.user} flash={p.flash}>
    <h1>Directory trash</h1>
    <p>Entries moved to the trash stay here until you restore them or delete them for good.</p>
    <p><a href={`${p.base}/directory`}>Back to the directory</a></p>
    <TrashList base={p.base} entries={p.entries} />
  </ClinicalLayout>
)

/** The confirm step as a page, where the link lands without JavaScript. */
export const PurgePage = (p: { base: string; user: NavUser; e: Entry }) => (
  <ClinicalLayout title="Delete an entry for good" base={p.base} user={p.user}>
    <h1>Delete an entry for good</h1>
    <p safe>{`Delete “${p.e.name || p.e.location}” (${p.e.number}) for good?`}</p>
    <p class="muted">It cannot be restored afterwards.</p>
    <form class="actions" action={`${entryUrl(p.base, p.e.id)}/purge`} method="post">
      <button type="submit" class="danger">Delete for good</button>
      <a href={`${p.base}/directory/trash`}>No, keep it</a>
    </form>
  </ClinicalLayout>
)

// ---- import ------------------------------------------------------------------------------------------------------

const FILE_HINT = `The ${EXPORT_ZIP_NAME} file the Export button gives, or the ${EXPORT_FILE_NAME} inside it; at most 1 MB.`

export const ImportPage = (p: { base: string; user: NavUser; error?: string }) => (
  <ClinicalLayout title="Import into the directory" base={p.base} user={p.user}>
    <h1>Import into the directory</h1>
    <p>Choose an export file. You see what it holds, and choose how to treat duplicates, before anything is imported.</p>
    {/* A plain upload, not boosted: every refusal, even the 413 of a body over the limit, is then shown as a page. */}
    <form class="stack" action={`${p.base}/directory/import`} method="post" enctype="multipart/form-data" hx-boost="false">
      <label for="dir-file">
        <span>Export file</span>
        <input id="dir-file" name="file" type="file" accept=".zip,.json,application/zip,application/json" required
          aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy('dir-file', FILE_HINT, p.error)} />
        <FieldNotes id="dir-file" hint={FILE_HINT} error={p.error} />
      </label>
      <div>
        <button type="submit">Preview the import</button>
      </div>
    </form>
    <p><a href={`${p.base}/directory`}>Back to the directory</a></p>
  </ClinicalLayout>
)

const STATUS_WORDS: Record<string, string> = {
  new: 'New',
  exactActive: 'Already in your directory',
  exactTrashed: 'In your trash',
  possible: 'Possible duplicate',
  invalid: 'Cannot be imported',
}

const SummaryList = ({ summary }: { summary: PreviewSummary }) => (
  <dl class="facts" id="dir-summary">
    <dt>Entries in the file</dt><dd safe>{String(summary.total)}</dd>
    <dt>New</dt><dd safe>{String(summary.new)}</dd>
    <dt>Already in your directory (skipped)</dt><dd safe>{String(summary.exactActive)}</dd>
    <dt>The same as an entry in your trash</dt><dd safe>{String(summary.exactTrashed)}</dd>
    <dt>Possible duplicates (same location and number, or same number and type)</dt><dd safe>{String(summary.possible)}</dd>
    <dt>Cannot be imported (a rule is not met)</dt><dd safe>{String(summary.invalid)}</dd>
    {summary.overLimit > 0 ? <><dt>{`Beyond the first ${IMPORT_VALID_MAX} entries (left out)`}</dt><dd safe>{String(summary.overLimit)}</dd></> : ''}
  </dl>
)

export interface ImportPreviewView {
  base: string
  user: NavUser
  token: string
  fileName: string
  summary: PreviewSummary
  entries: PreviewEntry[]
  result: ImportResult | null
}

const ResultList = ({ result }: { result: ImportResult }) => (
  <dl class="facts" id="dir-result">
    <dt>Imported</dt><dd safe>{String(result.imported)}</dd>
    <dt>Restored from the trash</dt><dd safe>{String(result.restored)}</dd>
    <dt>Skipped as duplicates</dt><dd safe>{String(result.skipped)}</dd>
    <dt>Possible duplicates skipped</dt><dd safe>{String(result.possibleSkipped)}</dd>
    <dt>Could not be imported</dt><dd safe>{String(result.invalid + result.overLimit)}</dd>
    <dt>Entries in the file</dt><dd safe>{String(result.total)}</dd>
  </dl>
)

export const ImportPreviewPage = (p: ImportPreviewView) => (
  <ClinicalLayout title={p.result ? 'Import done' : 'Check the import'} base={p.base} user={p.user}
    flash={p.result ? { kind: 'ok', text: 'The import is done.' } : null}>
    <h1>{p.result ? 'Import done' : 'Check the import'}</h1>
    <p safe>{`File: ${p.fileName}`}</p>
    {p.result ? (
      <>
        <ResultList result={p.result} />
        <p><a href={`${p.base}/directory`}>Open the directory</a></p>
      </>
    ) : (
      <>
        <h2>What the file holds</h2>
        <SummaryList summary={p.summary} />
        <h2>Import</h2>
        <form class="stack" action={`${p.base}/directory/import/${p.token}`} method="post">
          <fieldset>
            <legend>Duplicates</legend>
            <label class="choice" for="dir-restore">
              <input type="checkbox" id="dir-restore" name="restoreTrashed" value="true" />
              <span>Restore entries from the trash that the file holds exactly</span>
            </label>
            <label class="choice" for="dir-possible">
              <input type="checkbox" id="dir-possible" name="importPossibleDuplicates" value="true" />
              <span>Import possible duplicates too</span>
            </label>
          </fieldset>
          <p class="muted">Entries already in your directory are always skipped.</p>
          <div class="actions">
            <button type="submit">Import</button>
            <a href={`${p.base}/directory/import`}>Choose another file</a>
          </div>
        </form>
        {p.entries.length > 0 ? (
          <>
            <h2>The entries</h2>
            <table id="dir-preview">
              <caption class="visually-hidden">The entries of the file and what happens to each</caption>
              <thead>
                <tr>
                  <th scope="col">#</th><th scope="col">Location</th><th scope="col">Name</th><th scope="col">Number</th>
                  <th scope="col">Type</th><th scope="col">Found</th>
                </tr>
              </thead>
              <tbody>
                {p.entries.map((e) => (
                  <tr>
                    <th scope="row" safe>{String(e.index + 1)}</th>
                    <td safe>{e.entry?.location ?? ''}</td>
                    <td safe>{e.entry?.name ?? ''}</td>
                    <td safe>{e.entry?.number ?? ''}</td>
                    <td safe>{e.entry ? typeWords(e.entry.type) : ''}</td>
                    <td>
                      <span safe>{STATUS_WORDS[e.status] ?? e.status}</span>
                      {e.error ? <><br /><span class="muted" safe>{e.error}</span></> : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : ''}
      </>
    )}
  </ClinicalLayout>
)

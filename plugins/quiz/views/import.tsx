// The quiz service's moderators' import page: connect to a WebDAV file server (Nextcloud and the like), browse its
// folders and import a PDF, which becomes a document exactly as an uploaded one does. The page's content is one
// element (#import), which is also the fragment htmx asks for when a folder is opened. Every form has action + method
// and works without JavaScript. The password is never written into the page: once connected, the server keeps it.
import { Field, Layout, sizeInWords, type Errors, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import type { FilesResponse } from '../models/nextcloud'
import { BRAND, SignedInNav } from './accounts'

/** The file server the browser is connected to: what the page may show of it (never the password). */
export interface ImportConnection { server: string; username: string }

export interface ConnectValues { server: string; username: string; path: string }

export interface ImportState {
  /** Null when not connected: the connect form is shown. */
  connection: ImportConnection | null
  /** The folder listed (connected only); null when it could not be listed. */
  listing?: FilesResponse | null
  /** The connect form's values and messages (the password field always starts empty). */
  values?: ConnectValues
  errors?: Errors
  /** A refusal or failure, said at the top of the content. */
  message?: string
  /** How long a connection is remembered, in minutes (said on the page). */
  connectionMinutes: number
  maxUploadSize: number
}

export const folderUrl = (base: string, path: string) => (path === '/' ? `${base}/import` : `${base}/import?path=${encodeURIComponent(path)}`)

/** The folder above a path: `/` for a top-level folder. */
export const parentOf = (path: string) => {
  const at = path.replace(/\/+$/, '').lastIndexOf('/')
  return at <= 0 ? '/' : path.slice(0, at)
}

const ConnectForm = (p: { base: string; values?: ConnectValues; errors?: Errors }) => {
  const v = p.values ?? { server: '', username: '', path: '' }
  const e = p.errors ?? {}
  return (
    <form id="connect" class="stack" action={`${p.base}/import/browse`} method="post">
      <Field label="File server address" name="server" type="url" value={v.server} error={e.server} required autocomplete="url"
        hint="Its WebDAV address. For Nextcloud: https://cloud.example.org/remote.php/dav/files/your-user-name" />
      {/* The file server's account, not this site's: the browser should not fill in this site's saved sign-in. */}
      <Field label="Username" name="username" value={v.username} error={e.username} required autocomplete="off" />
      <Field label="Password" name="password" type="password" error={e.password} required autocomplete="off"
        hint="Sent only to the file server. This site keeps it, locked, for a short time so you can browse, and never shows it again." />
      <Field label="Folder to open" name="path" value={v.path} error={e.path} hint="Optional: leave empty to start at the top folder." />
      <div>
        <button type="submit">Connect</button>
      </div>
    </form>
  )
}

const ConnectionFacts = (p: { base: string; connection: ImportConnection; minutes: number }) => (
  <section id="connection" aria-labelledby="connection-title">
    <h2 id="connection-title">File server</h2>
    <dl class="facts">
      <dt>Address</dt><dd safe>{p.connection.server}</dd>
      <dt>Username</dt><dd safe>{p.connection.username}</dd>
    </dl>
    <p class="muted" safe>{`The connection is remembered for ${p.minutes} minutes after you last use it; then you connect again.`}</p>
    <form class="inline" action={`${p.base}/import/disconnect`} method="post">
      <button type="submit" class="secondary">Disconnect</button>
    </form>
  </section>
)

const FolderListing = (p: { base: string; listing: FilesResponse; maxUploadSize: number }) => {
  const { path, items } = p.listing
  const open = (to: string) => ({
    href: folderUrl(p.base, to), 'hx-get': folderUrl(p.base, to), 'hx-target': '#import', 'hx-swap': 'outerHTML', 'hx-push-url': 'true',
  })
  return (
    <section id="folder" aria-labelledby="folder-title">
      <h2 id="folder-title">Folder <span safe>{path}</span></h2>
      {path === '/' ? '' : <p><a {...open(parentOf(path))}>Up to <span safe>{parentOf(path)}</span></a></p>}
      <p class="muted" safe>{`Folders and PDF files are listed; other files are left out. A PDF of at most ${sizeInWords(p.maxUploadSize)} can be imported.`}</p>
      {items.length === 0 ? <p class="muted">This folder has no folders or PDF files.</p> : (
        <table>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Size</th><th scope="col">Action</th></tr>
          </thead>
          <tbody>
            {items.map((item) => item.type === 'dir'
              ? (
                <tr>
                  <th scope="row"><a {...open(item.path)} safe>{item.name}</a></th>
                  <td>Folder</td>
                  <td></td>
                  <td><a {...open(item.path)} aria-label={`Open the folder ${item.name}`}>Open</a></td>
                </tr>
              )
              : (
                <tr>
                  <th scope="row" safe>{item.name}</th>
                  <td>PDF</td>
                  <td safe>{sizeInWords(item.size)}</td>
                  <td>
                    <form class="inline" action={`${p.base}/import/file`} method="post">
                      <input type="hidden" name="path" value={item.path} />
                      <button type="submit" aria-label={`Import ${item.name}`}>Import</button>
                    </form>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/** The page's content: the connect form, or the connection and the folder; also the htmx fragment of a folder. */
export const ImportContent = (p: { base: string; state: ImportState }) => {
  const s = p.state
  return (
    <div id="import">
      {s.message ? <p class="flash error" role="alert" safe>{s.message}</p> : ''}
      {s.connection
        ? (
          <>
            <ConnectionFacts base={p.base} connection={s.connection} minutes={s.connectionMinutes} />
            {s.listing ? <FolderListing base={p.base} listing={s.listing} maxUploadSize={s.maxUploadSize} /> : (
              <p><a href={`${p.base}/import`}>Open the top folder</a></p>
            )}
          </>
        )
        : <ConnectForm base={p.base} values={s.values} errors={s.errors} />}
    </div>
  )
}

export const ImportPage = (p: { ctx: PageContext; user: UserResponse; state: ImportState }) => (
  <Layout title="Import from a file server" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1>Import from a file server</h1>
    <p>
      Bring PDF files in from a WebDAV file server such as Nextcloud. An imported PDF becomes a document, just like one
      you <a href={`${p.ctx.base}/documents`}>upload</a>: its text is read and indexed, and you can make quizzes from it.
    </p>
    <ImportContent base={p.ctx.base} state={p.state} />
  </Layout>
)

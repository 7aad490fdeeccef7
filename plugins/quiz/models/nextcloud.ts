// TypeBox models of spec 1's File-server import: the WebDAV proxy a moderator browses a file server through and
// imports PDFs from. The OpenAPI docs come from them.
import { t } from 'elysia'
import { Int } from '../../../src/core/schema'

export const SERVER_URL_MAX = 500
export const USERNAME_MAX = 256
export const PASSWORD_MAX = 1_024
export const REMOTE_PATH_MAX = 1_000

export const NextcloudBody = t.Object({
  server: t.String({
    minLength: 1, maxLength: SERVER_URL_MAX,
    description: 'The WebDAV root URL, e.g. https://cloud.example.org/remote.php/dav/files/alice (no user:password@ part, query or fragment)',
  }),
  username: t.String({ maxLength: USERNAME_MAX, description: 'Sent to the file server with HTTP authentication; never logged' }),
  password: t.String({ maxLength: PASSWORD_MAX, description: 'Sent to the file server with HTTP authentication; never logged or echoed' }),
  path: t.String({
    maxLength: REMOTE_PATH_MAX,
    description: 'Relative to the server URL; empty or `/` is its root. `.` segments and repeated slashes are dropped; a `..` segment is refused (400)',
  }),
})
export type NextcloudBody = typeof NextcloudBody.static

export const TestResponse = t.Object({ ok: t.Literal(true), message: t.String() })

export const RemoteItem = t.Object({
  name: t.String({ description: 'The file or folder name' }),
  path: t.String({ description: 'Its path relative to the server URL, to send back as `path`' }),
  type: t.Union([t.Literal('dir'), t.Literal('pdf')], { description: '`dir` for a folder, `pdf` for a file whose name ends in .pdf (any letter case)' }),
  size: Int({ minimum: 0, description: 'Bytes; 0 for a folder' }),
})
export type RemoteItem = typeof RemoteItem.static

export const FilesResponse = t.Object({
  path: t.String({ description: 'The folder listed, normalised (`/` for the root)' }),
  items: t.Array(RemoteItem, { description: 'Folders first, then PDFs, each group by name (case-insensitive); other files are left out' }),
})
export type FilesResponse = typeof FilesResponse.static

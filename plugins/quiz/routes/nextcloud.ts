// Spec 1, File-server import (WebDAV proxy), the JSON API. Routing, guards, validation and response shaping only.
import { Elysia } from 'elysia'
import { FilesResponse, NextcloudBody, TestResponse } from '../models/nextcloud'
import * as nextcloud from '../services/nextcloud'
import type { QuizState } from '../state'

const tags = ['File-server import']

export const nextcloudRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  const common = [
    'The body names a WebDAV server (a Nextcloud user\'s files are at https://<host>/remote.php/dav/files/<user>), the',
    'username and password sent to it with HTTP basic authentication, and a path relative to the server URL.',
    `Address rule: the server URL must use https and every address its host resolves to must be public (not loopback,`,
    `private, link-local, unique-local, CGNAT or a cloud metadata address); an operator may allow an internal host`,
    `(and port) with the ${nextcloud.ALLOW_LIST_SETTING} setting, which also permits http for that host. A refused`,
    'address, or a URL with credentials, a query or a fragment, is 400 naming the rule. Redirects from the file server',
    `are not followed (502). Each call waits at most ${nextcloud.WEBDAV_TIMEOUT_MS / 1000} s for the file server (502 after that,`,
    'and when it cannot be reached or does not answer as a WebDAV server; 502 too when its name does not resolve).',
    'The file server refusing the username or password (its 401), or access (its 403), is 400; a missing path is 404.',
    'A `..` path segment, a backslash or a control character in the path is 400. Credentials are never logged, stored',
    'or repeated in an answer.',
  ].join(' ')
  return new Elysia({ prefix: '/api/nextcloud' })
    .use(auth)
    .post('/test', ({ body }) => nextcloud.testConnection(core, body), {
      role: 'moderator', body: NextcloudBody, response: TestResponse,
      detail: {
        tags, summary: 'Test a file-server connection',
        description: `Reads the path's properties (a folder or a file) with the given credentials: \`{ok: true, message}\` when that works. ${common}`,
      },
    })
    .post('/files', ({ body }) => nextcloud.listFiles(core, body), {
      role: 'moderator', body: NextcloudBody, response: FilesResponse,
      detail: {
        tags, summary: 'List the folders and PDFs of a folder',
        description: [
          'The folder\'s direct children that are folders (`type: dir`, size 0) or files whose name ends in .pdf in any',
          'letter case (`type: pdf`, size in bytes); other files are left out. Folders come first, then PDFs, each by name',
          `(case-insensitive). Each item's \`path\` can be sent back as \`path\` to list it or to POST ${api}/nextcloud/download.`,
          common,
        ].join(' '),
      },
    })
    .post('/download', ({ body }) => nextcloud.downloadFile(core, body), {
      role: 'moderator', body: NextcloudBody,
      detail: {
        tags, summary: 'Download a PDF from the file server',
        description: [
          'Streams the file as `application/pdf` with `Content-Disposition: attachment` and its file name. 400 when the',
          'path\'s name does not end in .pdf (checked before the file server is asked) or names a folder; 404 when it',
          'does not exist; 413 when the file is larger than the PDF upload limit (MAX_UPLOAD_SIZE), which it could not',
          `be uploaded past with POST ${api}/documents/upload anyway. A download may take up to`,
          `${nextcloud.WEBDAV_DOWNLOAD_TIMEOUT_MS / 60_000} minutes once started.`,
          common,
        ].join(' '),
        responses: {
          200: { description: 'The PDF, streamed from the file server', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } },
        },
      },
    })
}

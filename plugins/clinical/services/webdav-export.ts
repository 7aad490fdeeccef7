// Spec 2, File-sync export: a clinician connects a WebDAV server (Nextcloud, ownCloud, any WebDAV share) and
// exports a note to it as a text file. The server's address rule (checked when connecting and before every call),
// the refused redirects, the time bounds and the error mapping are src/core/webdav.ts's, shared with the quiz
// import. The password or app token is stored sealed with DATA_ENCRYPTION_KEY in users.nextcloud_token; a legacy
// plaintext value is sealed the next time it is read. Credentials are never logged or echoed.
import type { FileStat } from 'webdav'
import { HttpError } from '../../../src/core/errors'
import { checkServer, normaliseRemotePath, webdavCall as call, webdavClient as clientFor } from '../../../src/core/webdav'
import type { Core } from '../../../src/plugin'
import type { ConnectBody, ConnectionStatus, ExportBody } from '../models/files'

/** The file name keeps this many characters of the title. */
export const FILE_TITLE_MAX = 80
/** Names tried with a counter before giving up, when the timestamped name is taken. */
export const EXPORT_NAME_ATTEMPTS = 20

export const MESSAGES = {
  notConnected: 'No file server is connected: connect one first',
  unreadableToken: 'The stored file-server password can no longer be read: connect the file server again',
  connected: (host: string) => `Connected to the file server at ${host}`,
  disconnected: 'The file server is disconnected',
} as const

// ---- paths and names ------------------------------------------------------------------------------------------

/** A folder relative to the server URL as stored (src/core/webdav.ts's path rule). */
export const normaliseFolder = normaliseRemotePath

/**
 * A file name made from a title: no folder separators, control, format or bidi characters, or characters file
 * systems refuse (`\ / : * ? " < > |`); no leading dots (hidden files, `..`); at most FILE_TITLE_MAX characters;
 * `note` when nothing is left.
 */
export function safeFileTitle(title: string): string {
  const cleaned = title.normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, ' ')
    .replace(/[\\/:*?"<>|]/g, '-')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.\-]+/, '')
  const cut = [...cleaned].slice(0, FILE_TITLE_MAX).join('').replace(/[\s.]+$/, '')
  return cut || 'note'
}

/** `YYYY-MM-DD HH-mm-ss` (UTC): sorts by time, and has no colon (which Windows sync clients refuse). */
export const fileTimestamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ').replaceAll(':', '-')

// ---- the connection -------------------------------------------------------------------------------------------

interface ConnectionRow {
  nextcloud_url: string | null
  nextcloud_username: string | null
  nextcloud_token: string | null
  webdav_path: string | null
}

/** POST /api/nextcloud/connect: checks the server and the credentials with a PROPFIND, then stores them (token sealed). */
export async function connect(core: Core, userId: number, input: ConnectBody): Promise<{ message: string }> {
  const server = await checkServer(core, input.url)
  const client = clientFor(core, server, input.username, input.password)
  await call((signal) => client.stat('/', { signal }) as Promise<FileStat>)
  await core.db.sql`
    update clinical.users
    set nextcloud_url = ${server}, nextcloud_username = ${input.username}, nextcloud_token = ${core.crypto.sealText(input.password)}
    where id = ${userId}`
  return { message: MESSAGES.connected(new URL(server).host) }
}

export async function disconnect(core: Core, userId: number): Promise<{ message: string }> {
  await core.db.sql`
    update clinical.users set nextcloud_url = null, nextcloud_username = null, nextcloud_token = null where id = ${userId}`
  return { message: MESSAGES.disconnected }
}

export async function connectionStatus(core: Core, userId: number): Promise<Omit<ConnectionStatus, 'success'>> {
  const [row] = await core.db.sql<ConnectionRow>`
    select nextcloud_url, nextcloud_username, nextcloud_token, webdav_path from clinical.users where id = ${userId}`
  const connected = !!(row?.nextcloud_url && row.nextcloud_username && row.nextcloud_token)
  return {
    connected,
    url: connected ? row!.nextcloud_url : null,
    username: connected ? row!.nextcloud_username : null,
    path: row?.webdav_path ?? '/',
  }
}

/** POST /api/user/webdav-path: the export folder, normalised. */
export async function setWebDavPath(core: Core, userId: number, path: string): Promise<string> {
  const folder = normaliseFolder(path)
  await core.db.sql`update clinical.users set webdav_path = ${folder} where id = ${userId}`
  return folder
}

/**
 * The stored connection with its password opened; 400 `not_connected` when there is none (the learning hub's
 * WebDAV browsing reads it too, through exports.ts). A token stored before encryption
 * (plaintext) is sealed now, once: the update only applies while the column still holds that plaintext.
 */
export async function storedConnection(core: Core, userId: number) {
  const [row] = await core.db.sql<ConnectionRow>`
    select nextcloud_url, nextcloud_username, nextcloud_token, webdav_path from clinical.users where id = ${userId}`
  if (!row?.nextcloud_url || !row.nextcloud_username || !row.nextcloud_token) throw HttpError.badRequest('not_connected', MESSAGES.notConnected)
  let password: string
  if (core.crypto.isSealedText(row.nextcloud_token)) {
    try {
      password = core.crypto.openText(row.nextcloud_token)
    } catch {
      throw HttpError.badRequest('reconnect_needed', MESSAGES.unreadableToken)
    }
  } else {
    password = row.nextcloud_token
    await core.db.sql`
      update clinical.users set nextcloud_token = ${core.crypto.sealText(password)}
      where id = ${userId} and nextcloud_token = ${row.nextcloud_token}`
    core.log.info({ userId }, 'legacy plaintext file-server token encrypted')
  }
  return { url: row.nextcloud_url, username: row.nextcloud_username, password, folder: row.webdav_path ?? '/' }
}

/**
 * POST /api/nextcloud/export: writes the note as `<folder>/<title> <timestamp>.txt` (UTF-8), creating the folder
 * when missing. An existing file is never overwritten: a taken name gets a counter, ` (2)`, ` (3)`, ...
 */
export async function exportNote(core: Core, userId: number, input: ExportBody): Promise<{ path: string }> {
  const conn = await storedConnection(core, userId)
  const server = await checkServer(core, conn.url)
  const client = clientFor(core, server, conn.username, conn.password)
  const folder = normaliseFolder(conn.folder)
  if (folder !== '/') await call((signal) => client.createDirectory(folder, { recursive: true, signal }))
  const stem = `${safeFileTitle(input.title)} ${fileTimestamp(core.now())}`
  const data = Buffer.from(input.text, 'utf8')
  for (let n = 1; n <= EXPORT_NAME_ATTEMPTS; n++) {
    const path = `${folder === '/' ? '' : folder}/${n === 1 ? stem : `${stem} (${n})`}.txt`
    if (await call((signal) => client.exists(path, { signal }))) continue
    // If-None-Match: * as well, so a file written between the check and this put is not replaced.
    const written = await call((signal) => client.putFileContents(path, data, {
      overwrite: false, signal, headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    }))
    if (written) return { path }
  }
  throw HttpError.conflict('export_name_taken', 'Too many files with this title and time exist in the folder: change the title')
}

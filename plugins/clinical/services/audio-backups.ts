// Audio backups: a recording kept for AUDIO_BACKUP_LIFETIME_HOURS so a dictation survives a lost connection or a
// closed tab until its note is saved. The file lives under DATA_DIR/files (core storage), gzipped and then sealed
// in the core's envelope (core.crypto.sealToFile: version byte 0x01 | 12-byte IV | 16-byte tag | AES-256-GCM
// ciphertext, with DATA_ENCRYPTION_KEY). Both directions are streams: a 25 MB recording is never held whole in
// memory again after the upload's own parsing.
// Legacy files without the version byte pass through undecrypted (gunzipped when they are gzip).
import { readdir, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { ENVELOPE_HEADER_BYTES, ENVELOPE_V1 } from '../../../src/core/crypto'
import { asDiskFull, HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import {
  AUDIO_BACKUP_LIFETIME_HOURS, AUDIO_BACKUP_LIST_MAX, AUDIO_BACKUP_MAX_BYTES, DEFAULT_MODULE, type AudioBackup,
} from '../models/records'

export const AUDIO_BACKUP_LIFETIME_MS = AUDIO_BACKUP_LIFETIME_HOURS * 3600 * 1000
/** Room for the multipart framing (boundary, part headers, the module field) around a recording at the limit. */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024
/** A file in the backup folder without a row (a deleted user's, an upload cut short) goes once it is this old. */
export const ORPHAN_AGE_MS = 3600 * 1000
const STORAGE_PREFIX = 'clinical/audio-backups'
const GZIP_MAGIC = [0x1f, 0x8b] as const
/** Bytes the content sniffer looks at. */
const SNIFF_BYTES = 4100

export const MESSAGES = {
  notFound: 'Audio backup not found',
  missing: 'The recording of this audio backup is no longer stored',
  empty: 'The recording is empty',
  notAudio: 'The file is not an audio recording (send it with its audio file name, e.g. recording.webm)',
  tooLarge: `The recording is too large: at most ${AUDIO_BACKUP_MAX_BYTES} bytes (${AUDIO_BACKUP_MAX_BYTES / 1024 / 1024} MB)`,
  unreadable: 'The stored recording could not be read',
} as const

/** The upload route's body limit: a recording at the limit with its multipart framing; more is refused unread. */
export const uploadBodyLimit = { bytes: AUDIO_BACKUP_MAX_BYTES + MULTIPART_OVERHEAD_BYTES, code: 'file_too_large', message: MESSAGES.tooLarge }

export const audioStorageKey = (name: string) => `${STORAGE_PREFIX}/${name}`

/** Video containers a browser's recorder may declare (or a sniffer may see) for a sound-only recording. */
const AUDIO_CONTAINERS: Record<string, string> = { 'video/webm': 'audio/webm', 'video/ogg': 'audio/ogg', 'video/mp4': 'audio/mp4' }
const AUDIO_TYPE = /^audio\/[a-z0-9][a-z0-9.+-]{0,60}$/

/** A media type without its parameters, lower case: `audio/webm;codecs=opus` is `audio/webm`. */
const essence = (type: string) => (type.split(';')[0] ?? '').trim().toLowerCase()

/**
 * The recording's content type: what its leading bytes show when they show audio (a sound-only WebM, Ogg or MP4
 * counts as audio), else its declared type (Bun's form parser takes it from the file name's extension, e.g.
 * `.webm`, `.mp3`, `.wav`); parameters such as codecs are dropped. A file whose bytes are plainly something else
 * (a PDF, an image, a program) is refused whatever it declares, and so is one with neither.
 */
async function audioType(file: File): Promise<string> {
  const { fileTypeFromBuffer } = await import('file-type')
  const sniffed = await fileTypeFromBuffer(new Uint8Array(await file.slice(0, SNIFF_BYTES).arrayBuffer())).catch(() => undefined)
  const sniffedType = sniffed ? essence(sniffed.mime) : undefined
  if (sniffedType !== undefined) {
    const audio = AUDIO_TYPE.test(sniffedType) ? sniffedType : AUDIO_CONTAINERS[sniffedType]
    if (!audio) throw new HttpError(415, 'not_audio', MESSAGES.notAudio)
    return audio
  }
  const declared = essence(file.type)
  if (AUDIO_TYPE.test(declared)) return declared
  if (AUDIO_CONTAINERS[declared]) return AUDIO_CONTAINERS[declared]!
  throw new HttpError(415, 'not_audio', MESSAGES.notAudio)
}

const gzipStream = () => new CompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>
const gunzipStream = () => new DecompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>

/** Deletes a file, saying nothing when it is already gone. */
const removeFile = (path: string) => unlink(path).catch(() => {})

interface BackupRow {
  id: number
  module: string
  mime_type: string
  size_bytes: number
  compressed_bytes: number
  created_at: Date
  expires_at: Date
}

const toBackup = (row: BackupRow): AudioBackup => ({
  id: row.id, module: row.module, mime_type: row.mime_type, size_bytes: Number(row.size_bytes), compressed_bytes: Number(row.compressed_bytes),
  created_at: row.created_at.toISOString(), expires_at: row.expires_at.toISOString(),
})

/** Stores a recording for the user; it expires AUDIO_BACKUP_LIFETIME_HOURS later. Nothing stays behind on a failure. */
export async function createAudioBackup(core: Core, userId: number, file: File, module: string | undefined): Promise<{ id: number }> {
  // The declared length may be absent (chunked bodies): the actual size decides.
  if (file.size > AUDIO_BACKUP_MAX_BYTES) throw HttpError.tooLarge('file_too_large', MESSAGES.tooLarge)
  if (file.size === 0) throw HttpError.badRequest('empty_file', MESSAGES.empty)
  const mimeType = await audioType(file)
  const key = audioStorageKey(`${crypto.randomUUID()}.gz.sealed`)
  const path = core.storage.path(key)
  try {
    // gzip, then the envelope: the sealed bytes are the gzip's
    const compressed = await core.crypto.sealToFile(file.stream().pipeThrough(gzipStream()), path)
    const now = core.now()
    const [row] = await core.db.sql<{ id: number }>`
      insert into clinical.audio_backups (user_id, module, mime_type, size_bytes, compressed_bytes, storage_key, created_at, expires_at)
      values (${userId}, ${module ?? DEFAULT_MODULE}, ${mimeType}, ${file.size}, ${compressed}, ${key},
              ${new Date(now).toISOString()}, ${new Date(now + AUDIO_BACKUP_LIFETIME_MS).toISOString()})
      returning id`
    return { id: row!.id }
  } catch (err) {
    await removeFile(path)
    throw asDiskFull(err)
  }
}

/** The user's unexpired backups, newest first, at most AUDIO_BACKUP_LIST_MAX. */
export async function listAudioBackups(core: Core, userId: number): Promise<AudioBackup[]> {
  const rows = await core.db.sql<BackupRow>`
    select id, module, mime_type, size_bytes, compressed_bytes, created_at, expires_at
    from clinical.audio_backups
    where user_id = ${userId} and expires_at > ${new Date(core.now()).toISOString()}
    order by created_at desc, id desc
    limit ${AUDIO_BACKUP_LIST_MAX}`
  return rows.map(toBackup)
}

export interface AudioStream {
  mimeType: string
  /** Bytes of the recording, as the answer's Content-Length. */
  size: number
  body: ReadableStream<Uint8Array>
}

/**
 * A backup's recording, decompressed, as a stream. The file is authenticated first (one pass through the
 * cipher without output, so an altered file is refused before a byte is sent), then streamed: decipher, gunzip.
 */
export async function openAudioBackup(core: Core, userId: number, id: number): Promise<AudioStream> {
  const [row] = await core.db.sql<{ mime_type: string; size_bytes: number; storage_key: string }>`
    select mime_type, size_bytes, storage_key from clinical.audio_backups
    where id = ${id} and user_id = ${userId} and expires_at > ${new Date(core.now()).toISOString()}`
  if (!row) throw HttpError.notFound('audio_backup_not_found', MESSAGES.notFound)
  const file = Bun.file(core.storage.path(row.storage_key))
  if (!(await file.exists())) throw HttpError.notFound('audio_backup_missing', MESSAGES.missing)
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer())
  const meta = { mimeType: row.mime_type, size: Number(row.size_bytes) }

  if (head[0] === ENVELOPE_V1 && file.size >= ENVELOPE_HEADER_BYTES) {
    let plain: ReadableStream<Uint8Array>
    try {
      plain = await core.crypto.openFile(file.name!)
    } catch (err) {
      throw new HttpError(500, 'audio_backup_unreadable', MESSAGES.unreadable, undefined, { cause: err })
    }
    return { ...meta, body: plain.pipeThrough(gunzipStream()) }
  }
  // Legacy: stored before encryption, so no version byte; gzip is undone, anything else is sent as it is.
  const gzipped = head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]
  const raw = file.stream()
  return { ...meta, body: gzipped ? raw.pipeThrough(gunzipStream()) : raw }
}

/** Deletes one of the user's backups and its file; 404 when there is none (an expired one goes all the same). */
export async function deleteAudioBackup(core: Core, userId: number, id: number): Promise<void> {
  const [row] = await core.db.sql<{ storage_key: string; expires_at: Date }>`
    delete from clinical.audio_backups where id = ${id} and user_id = ${userId} returning storage_key, expires_at`
  if (!row) throw HttpError.notFound('audio_backup_not_found', MESSAGES.notFound)
  await removeFile(core.storage.path(row.storage_key))
  if (row.expires_at.getTime() <= core.now()) throw HttpError.notFound('audio_backup_not_found', MESSAGES.notFound)
}

/**
 * Deletes expired audio backups, rows and files, and the files of the backup folder no row names once they are
 * ORPHAN_AGE_MS old (a deleted user's recordings, an upload cut short); how many backups (rows) went.
 */
export async function sweepExpiredAudioBackups(core: Core): Promise<number> {
  const rows = await core.db.sql<{ storage_key: string }>`
    delete from clinical.audio_backups where expires_at <= ${new Date(core.now()).toISOString()} returning storage_key`
  for (const row of rows) await removeFile(core.storage.path(row.storage_key))
  await sweepOrphanFiles(core)
  return rows.length
}

async function sweepOrphanFiles(core: Core): Promise<void> {
  const dir = dirname(core.storage.path(audioStorageKey('probe')))
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return // no backup was ever stored
  }
  // File ages are wall-clock times of the file system, so they are compared with the wall clock.
  const cutoff = Date.now() - ORPHAN_AGE_MS
  const old: string[] = []
  for (const name of names) {
    const info = await stat(join(dir, name)).catch(() => null)
    if (info?.isFile() && info.mtimeMs < cutoff) old.push(audioStorageKey(name))
  }
  if (old.length === 0) return
  const known = new Set((await core.db.sql<{ storage_key: string }>`
    select storage_key from clinical.audio_backups where storage_key = any(${old}::text[])`).map((r) => r.storage_key))
  for (const key of old) {
    if (known.has(key)) continue
    await removeFile(core.storage.path(key))
    core.log.info({ key }, 'audio backup file without a row removed')
  }
}

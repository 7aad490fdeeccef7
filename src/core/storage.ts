// File storage: a local folder under DATA_DIR (every service), and for the clinical documents an S3 bucket
// when S3_* is set (Bun's built-in S3 client), else that same local folder served through short-lived
// HMAC-signed links of the app. Keys are app-generated relative paths; anything that could leave the folder is
// refused. A local write goes to a temporary name beside the key and is renamed once whole, so a key names a
// complete file or none: a write that fails (a full disk answers 507 disk_full) leaves nothing behind, and the one
// a killed process left is swept by the hourly schedule (core.storage.sweep).
import { createHmac } from 'node:crypto'
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import type { Config } from '../config'
import { constantTimeEqual } from './crypto'
import { asDiskFull } from './errors'
import { withTimeout } from './timeout'

/** A write to object storage (up to a document upload's size) gives up after this. */
export const S3_WRITE_TIMEOUT_MS = 60_000
/** A delete or an existence check gives up after this. */
export const S3_CALL_TIMEOUT_MS = 15_000

/** The suffix of a local file being written; such a file never stays once its write has ended. */
export const PARTIAL_SUFFIX = '.part'
/** A temporary file of a write: the key's name, a random UUID and the suffix. */
const PARTIAL = /\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.part$/
/** A temporary file older than this belongs to no write under way (the largest upload takes minutes): it is swept. */
export const PARTIAL_MAX_AGE_MS = 6 * 3_600_000

export interface Storage {
  /** Stores the bytes under the key whole, or not at all; 507 disk_full when the disk has no room for them. */
  put(key: string, data: Blob | Uint8Array | ArrayBuffer): Promise<void>
  /** The stored file, or null. */
  get(key: string): Promise<Blob | null>
  delete(key: string): Promise<void>
  /** Local path of a key (for tools that read files, e.g. the PDF parser). */
  path(key: string): string
  /** The object store of the clinical documents when S3_* is set; null: they live in this local folder. */
  readonly s3: ObjectStore | null
  /**
   * The signature of a local download link for `key` valid until `expiresAtS` (Unix seconds): HMAC-SHA256 with a
   * key derived from JWT_SECRET, hex.
   */
  signLink(key: string, expiresAtS: number): string
  /** True when `signature` is the link signature of `key` and `expiresAtS` (expiry is the caller's check). */
  verifyLink(key: string, expiresAtS: number, signature: string): boolean
  /**
   * Deletes the temporary files of writes that never ended (the process was killed mid-write) once they are older
   * than `maxAgeMs`; answers how many.
   */
  sweepPartials(maxAgeMs?: number): Promise<number>
}

/** An S3 bucket. Every call is bounded in time; failures are thrown as they come (callers answer 502). */
export interface ObjectStore {
  /** Writes the bytes; a Blob (an uploaded File) is sent as it is, not copied into memory again. */
  put(key: string, data: Blob | Uint8Array, opts: { type: string }): Promise<void>
  exists(key: string): Promise<boolean>
  delete(key: string): Promise<void>
  /** A presigned GET URL valid for `expiresInS`, answering with the content type and as an attachment named `filename`. */
  presign(key: string, opts: { expiresInS: number; filename: string; type: string }): string
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$/

const checkKey = (key: string) => {
  if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid storage key: ${key}`)
}

/** The local folder alone: no object store, and links signed with `linkSecret` (a random one when none is given). */
export function createLocalStorage(root: string, linkSecret?: string): Storage {
  const base = resolve(root)
  const path = (key: string) => {
    checkKey(key)
    const full = resolve(join(base, key))
    if (!full.startsWith(base + sep)) throw new Error(`invalid storage key: ${key}`)
    return full
  }
  const linkKey = createHmac('sha256', linkSecret ?? crypto.randomUUID()).update('storage.download-link.v1').digest()
  const signLink = (key: string, expiresAtS: number) =>
    createHmac('sha256', linkKey).update(`${key}\n${expiresAtS}`).digest('hex')
  return {
    path,
    s3: null,
    async put(key, data) {
      const full = path(key)
      const partial = `${full}.${crypto.randomUUID()}${PARTIAL_SUFFIX}`
      try {
        await mkdir(dirname(full), { recursive: true })
        await Bun.write(partial, data)
        await rename(partial, full)
      } catch (err) {
        await rm(partial, { force: true }).catch(() => {})
        throw asDiskFull(err)
      }
    },
    async get(key) {
      const full = path(key)
      try {
        await stat(full)
      } catch {
        return null
      }
      return Bun.file(full)
    },
    async delete(key) {
      await rm(path(key), { force: true })
    },
    signLink,
    verifyLink: (key, expiresAtS, signature) =>
      /^[0-9a-f]{64}$/.test(signature) && constantTimeEqual(signLink(key, expiresAtS), signature),
    async sweepPartials(maxAgeMs = PARTIAL_MAX_AGE_MS) {
      const entries = await readdir(base, { recursive: true }).catch(() => [] as string[])
      const before = Date.now() - maxAgeMs
      let swept = 0
      for (const entry of entries) {
        if (!PARTIAL.test(entry)) continue
        const full = join(base, entry)
        const info = await stat(full).catch(() => null)
        if (!info?.isFile() || info.mtimeMs > before) continue
        await rm(full, { force: true })
        swept++
      }
      return swept
    },
  }
}

/** Control, zero-width and direction characters (and the BOM): invisible, and able to disguise an extension. */
export const INVISIBLE_CHARS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g

/**
 * A file name as it may be saved: no folder part, no invisible character, no leading dot (a hidden file where it
 * lands); a name that is only dots and an extension becomes `document.ext`; an empty one becomes `fallback`.
 */
export function visibleFileName(name: string, fallback = 'document'): string {
  const visible = (name.split(/[\\/]/).pop() ?? '').replace(INVISIBLE_CHARS, '').trim()
  const onlyExtension = /^[\s.]*(\.[A-Za-z0-9]{1,8})$/.exec(visible)
  return onlyExtension ? `document${onlyExtension[1]}` : visible.replace(/^[\s.]+/, '') || fallback
}

/** `attachment` with the name as ASCII (quoted) and as UTF-8 (RFC 6266 / 5987). */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  // toWellFormed: an unpaired surrogate (which encodeURIComponent throws on) becomes U+FFFD.
  const utf8 = encodeURIComponent(name.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`
}

/** An S3 bucket through Bun's client (path-style addresses, so MinIO, Garage and s3rver work as AWS does). */
export function createObjectStore(s3: NonNullable<Config['s3']>): ObjectStore {
  const client = new Bun.S3Client({
    endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey,
  })
  return {
    async put(key, data, { type }) {
      checkKey(key)
      await withTimeout(client.write(key, data, { type }), S3_WRITE_TIMEOUT_MS, 'object storage write')
    },
    async exists(key) {
      checkKey(key)
      return withTimeout(client.exists(key), S3_CALL_TIMEOUT_MS, 'object storage lookup')
    },
    async delete(key) {
      checkKey(key)
      await withTimeout(client.delete(key), S3_CALL_TIMEOUT_MS, 'object storage delete')
    },
    presign(key, { expiresInS, filename, type }) {
      checkKey(key)
      return client.presign(key, { method: 'GET', expiresIn: expiresInS, contentDisposition: attachmentDisposition(filename), type })
    },
  }
}

/** The Core's storage: the local folder DATA_DIR/files, with the object store when S3_* is set. */
export function createStorage(config: Pick<Config, 'dataDir' | 's3' | 'jwtSecret'>): Storage {
  const local = createLocalStorage(join(config.dataDir, 'files'), config.jwtSecret)
  return config.s3 ? { ...local, s3: createObjectStore(config.s3) } : local
}

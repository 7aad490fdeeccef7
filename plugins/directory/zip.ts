// The export zip as untrusted input: read as a stream, entry by entry, and refused at the first thing out of place
// (too many entries, a path, another file, an archive inside, too much once inflated), before it is inflated whole.
import { Unzip, UnzipInflate, type UnzipFile } from 'fflate'
import { HttpError } from '../../src/core/errors'
import { EXPORT_FILE_NAME, ZIP_ENTRIES_MAX, ZIP_UNCOMPRESSED_MAX_BYTES } from './model'

export const ZIP_MESSAGES = {
  zipDamaged: 'The zip file is damaged or uses a compression this service does not read',
  zipTooManyEntries: `The zip holds more than ${ZIP_ENTRIES_MAX} file: the export holds only ${EXPORT_FILE_NAME}`,
  zipUnsafePath: `The zip holds a file outside its top folder (a path with .., a leading / or a folder): only ${EXPORT_FILE_NAME} is read`,
  zipNestedArchive: 'The zip holds another archive: archives inside archives are not read',
  zipUnexpectedFile: `The zip holds a file other than ${EXPORT_FILE_NAME}`,
  zipMissingFile: `The zip does not hold ${EXPORT_FILE_NAME}`,
  zipTooLarge: `The zip's content is too large once unpacked: at most ${ZIP_UNCOMPRESSED_MAX_BYTES} bytes`,
} as const

const startsWith = (bytes: Uint8Array, magic: number[], at = 0) => magic.every((b, i) => bytes[at + i] === b)
export const isZip = (bytes: Uint8Array) => startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])

/** Leading bytes of the archive and compressed formats a zip must not hold. */
function isArchive(bytes: Uint8Array): boolean {
  return isZip(bytes) || startsWith(bytes, [0x50, 0x4b, 0x07, 0x08]) || startsWith(bytes, [0x1f, 0x8b]) // zip, gzip
    || startsWith(bytes, [0x42, 0x5a, 0x68]) || startsWith(bytes, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]) // bzip2, 7z
    || startsWith(bytes, [0x52, 0x61, 0x72, 0x21]) || startsWith(bytes, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]) // rar, xz
    || startsWith(bytes, [0x28, 0xb5, 0x2f, 0xfd]) || startsWith(bytes, [0x75, 0x73, 0x74, 0x61, 0x72], 257) // zstd, tar
}
const ARCHIVE_NAME = /\.(zip|jar|war|apk|docx|xlsx|pptx|odt|gz|tgz|bz2|tbz2?|xz|txz|zst|7z|rar|tar|cab|iso|lz|lzma|z)$/i

/** Refuses a zip entry's name unless it is the export's file at the top of the zip. */
function checkEntryName(name: string): void {
  if (name === EXPORT_FILE_NAME) return
  const unsafe = name.includes('/') || name.includes('\\') || name.split(/[/\\]/).includes('..') || /^[a-z]:/i.test(name) || name.includes('\0')
  if (unsafe) throw HttpError.badRequest('zip_unsafe_path', ZIP_MESSAGES.zipUnsafePath)
  if (ARCHIVE_NAME.test(name)) throw HttpError.badRequest('zip_nested_archive', ZIP_MESSAGES.zipNestedArchive)
  throw HttpError.badRequest('zip_unexpected_file', ZIP_MESSAGES.zipUnexpectedFile)
}

/** Compressed bytes handed to the inflater at a time: one push inflates to at most ~1 MB, so the size check bites early. */
const ZIP_PUSH_BYTES = 1024

/**
 * The export file inside a zip, inflated as a stream: more than ZIP_ENTRIES_MAX entries, a name other than
 * app-extensions.json (a path, a folder, an archive), a declared or actual size past ZIP_UNCOMPRESSED_MAX_BYTES (a
 * zip bomb: inflating stops at the limit) or an archive inside it is refused at once. Only the local headers are read.
 */
export function unzipExport(bytes: Uint8Array): Uint8Array {
  const tooLarge = () => HttpError.tooLarge('zip_too_large', ZIP_MESSAGES.zipTooLarge)
  const chunks: Uint8Array[] = []
  let entries = 0
  let inflated = 0
  let complete = false
  let current: UnzipFile | null = null
  // The inflater catches what ondata throws and hands it back as `err`: the first refusal is kept and wins.
  let refusal: HttpError | null = null
  const refuse = (err: HttpError) => {
    refusal ??= err
    throw refusal
  }
  const unzip = new Unzip((file) => {
    entries++
    if (entries > ZIP_ENTRIES_MAX) throw HttpError.badRequest('zip_too_many_entries', ZIP_MESSAGES.zipTooManyEntries)
    checkEntryName(file.name)
    if (file.originalSize !== undefined && file.originalSize > ZIP_UNCOMPRESSED_MAX_BYTES) throw tooLarge()
    current = file
    file.ondata = (err, data, final) => {
      if (refusal) throw refusal
      if (err) refuse(HttpError.badRequest('invalid_zip', ZIP_MESSAGES.zipDamaged))
      inflated += data.length
      if (inflated > ZIP_UNCOMPRESSED_MAX_BYTES) refuse(tooLarge())
      chunks.push(data)
      if (final) complete = true
    }
    file.start()
  })
  unzip.register(UnzipInflate)
  try {
    for (let at = 0; at < bytes.length; at += ZIP_PUSH_BYTES) {
      unzip.push(bytes.subarray(at, at + ZIP_PUSH_BYTES), at + ZIP_PUSH_BYTES >= bytes.length)
    }
  } catch (err) {
    ;(current as UnzipFile | null)?.terminate()
    if (refusal) throw refusal
    if (err instanceof HttpError) throw err
    throw HttpError.badRequest('invalid_zip', ZIP_MESSAGES.zipDamaged)
  }
  // no entry read: an empty zip, or one cut short before its first entry
  if (entries === 0 && startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) throw HttpError.badRequest('invalid_zip', ZIP_MESSAGES.zipDamaged)
  if (entries === 0) throw HttpError.badRequest('zip_missing_file', ZIP_MESSAGES.zipMissingFile)
  if (!complete) throw HttpError.badRequest('invalid_zip', ZIP_MESSAGES.zipDamaged)
  const out = new Uint8Array(inflated)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  if (isArchive(out)) throw HttpError.badRequest('zip_nested_archive', ZIP_MESSAGES.zipNestedArchive)
  return out
}

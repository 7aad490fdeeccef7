// AES-256-GCM envelope with DATA_ENCRYPTION_KEY, SHA-256, random tokens, constant-time compare. The envelope is
// written whole (seal) or as a stream into a file (sealToFile: large recordings are never held whole in memory).
import { createCipheriv, createDecipheriv, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdir, open } from 'node:fs/promises'
import { dirname } from 'node:path'

/** Leading version byte of every sealed value (spec 2, encryption at rest). */
export const ENVELOPE_V1 = 0x01
const IV_BYTES = 12
const TAG_BYTES = 16
/** The envelope's header: version byte, IV, tag. */
export const ENVELOPE_HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES
const TEXT_PREFIX = 'enc:v1:'

export interface Crypto {
  /** version byte 0x01 | 12-byte IV | 16-byte tag | ciphertext */
  seal(plain: Uint8Array): Uint8Array
  open(sealed: Uint8Array): Uint8Array
  isSealed(data: Uint8Array): boolean
  /** Text form for columns: `enc:v1:<base64>`. */
  sealText(plain: string): string
  openText(sealed: string): string
  isSealedText(value: string): boolean
  /**
   * Seals a stream into a new file (`wx`: never over another) in the same envelope as seal, as the bytes come: the
   * header goes first with a blank tag, the tag is written into it at the end. The plaintext byte count.
   */
  sealToFile(source: ReadableStream<Uint8Array>, path: string): Promise<number>
  /**
   * The plaintext of a file in the envelope, as a stream. The whole file is authenticated first (one pass without
   * output), so an altered file throws here, before a byte is handed out.
   */
  openFile(path: string): Promise<ReadableStream<Uint8Array>>
}

/** The chunks of a web stream (the DOM typings lack its async iterator). */
export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock()
  }
}

export function createCrypto(key: Uint8Array): Crypto {
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes')
  const crypto: Crypto = {
    seal(plain) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const body = Buffer.concat([cipher.update(plain), cipher.final()])
      return new Uint8Array(Buffer.concat([Buffer.from([ENVELOPE_V1]), iv, cipher.getAuthTag(), body]))
    },
    open(sealed) {
      if (!crypto.isSealed(sealed)) throw new Error('not a sealed value')
      const buf = Buffer.from(sealed)
      const iv = buf.subarray(1, 1 + IV_BYTES)
      const tag = buf.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES)
      const decipher = createDecipheriv('aes-256-gcm', key, iv)
      decipher.setAuthTag(tag)
      return new Uint8Array(Buffer.concat([decipher.update(buf.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]))
    },
    isSealed: (data) => data.length >= 1 + IV_BYTES + TAG_BYTES && data[0] === ENVELOPE_V1,
    sealText: (plain) => TEXT_PREFIX + Buffer.from(crypto.seal(new TextEncoder().encode(plain))).toString('base64'),
    openText(sealed) {
      if (!crypto.isSealedText(sealed)) throw new Error('not a sealed text')
      return new TextDecoder().decode(crypto.open(Buffer.from(sealed.slice(TEXT_PREFIX.length), 'base64')))
    },
    isSealedText: (value) => value.startsWith(TEXT_PREFIX),
    async sealToFile(source, path) {
      await mkdir(dirname(path), { recursive: true })
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const handle = await open(path, 'wx')
      try {
        let position = 0
        // A write may take fewer bytes than given (a disk that just filled up): the rest is written again, so a
        // short write ends in the disk's error, never in a file silently cut short.
        const put = async (bytes: Uint8Array) => {
          for (let done = 0; done < bytes.length;) {
            const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position)
            if (bytesWritten === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
            done += bytesWritten
            position += bytesWritten
          }
        }
        await put(Buffer.concat([Buffer.from([ENVELOPE_V1]), iv, Buffer.alloc(TAG_BYTES)]))
        let plain = 0
        for await (const chunk of chunksOf(source)) {
          plain += chunk.length
          await put(cipher.update(chunk))
        }
        await put(cipher.final())
        await handle.write(cipher.getAuthTag(), 0, TAG_BYTES, 1 + IV_BYTES)
        return plain
      } finally {
        await handle.close()
      }
    },
    async openFile(path) {
      const file = Bun.file(path)
      const head = new Uint8Array(await file.slice(0, ENVELOPE_HEADER_BYTES).arrayBuffer())
      if (head.length !== ENVELOPE_HEADER_BYTES || head[0] !== ENVELOPE_V1) throw new Error('not a sealed file')
      const decipherOf = () => {
        const decipher = createDecipheriv('aes-256-gcm', key, head.subarray(1, 1 + IV_BYTES))
        decipher.setAuthTag(head.subarray(1 + IV_BYTES))
        return decipher
      }
      const check = decipherOf()
      for await (const chunk of chunksOf(file.slice(ENVELOPE_HEADER_BYTES).stream())) check.update(chunk)
      check.final()
      const decipher = decipherOf()
      return file.slice(ENVELOPE_HEADER_BYTES).stream().pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          const out = decipher.update(chunk)
          if (out.length > 0) controller.enqueue(new Uint8Array(out))
        },
        flush(controller) {
          const out = decipher.final()
          if (out.length > 0) controller.enqueue(new Uint8Array(out))
        },
      }))
    },
  }
  return crypto
}

/** Bun's one-shot SHA-256: a quarter of node:crypto's createHash time on a session token (every session check hashes one). */
export const sha256Hex = (data: string | Uint8Array): string => Bun.SHA256.hash(data, 'hex')

/** A random URL-safe token with `bytes` bytes of entropy (default 32 = 256 bits). */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url')

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a)
  const bb = Buffer.from(b)
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab) // same work either way
    return false
  }
  return timingSafeEqual(ab, bb)
}

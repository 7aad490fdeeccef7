// AES-256-GCM envelope with DATA_ENCRYPTION_KEY, SHA-256, random tokens, constant-time compare.
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** Leading version byte of every sealed value (spec 2, encryption at rest). */
export const ENVELOPE_V1 = 0x01
const IV_BYTES = 12
const TAG_BYTES = 16
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
  }
  return crypto
}

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex')

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

// The AES-256-GCM envelope and helpers of src/core/crypto.ts (spec 2, encryption at rest).
import { describe, expect, it } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { constantTimeEqual, createCrypto, ENVELOPE_V1, randomToken, sha256Hex } from '../src/core/crypto'

const IV_BYTES = 12
const TAG_BYTES = 16
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES

const key = Uint8Array.from(randomBytes(32))
const box = createCrypto(key)
const bytes = (text: string) => new TextEncoder().encode(text)

describe('sealed envelope', () => {
  it('opens what it sealed, for empty, short and large values', () => {
    for (const plain of [new Uint8Array(0), bytes('Patient reports chest pain'), Uint8Array.from(randomBytes(1 << 20))]) {
      const sealed = box.seal(plain)
      expect(sealed.length).toBe(HEADER_BYTES + plain.length)
      expect(box.open(sealed)).toEqual(plain)
    }
  })

  it('starts with version byte 0x01, then a 12-byte IV and a 16-byte tag; the plaintext does not appear', () => {
    const plain = bytes('a note that must not be readable at rest')
    const sealed = box.seal(plain)
    expect(ENVELOPE_V1).toBe(0x01)
    expect(sealed[0]).toBe(0x01)
    expect(Buffer.from(sealed).includes(Buffer.from(plain))).toBe(false)
    expect(box.isSealed(sealed)).toBe(true)
    expect(box.isSealed(plain)).toBe(false)
  })

  it('uses a fresh IV each time: the same plaintext seals differently', () => {
    const plain = bytes('same text')
    const seals = Array.from({ length: 20 }, () => Buffer.from(box.seal(plain)))
    const ivs = new Set(seals.map((s) => s.subarray(1, 1 + IV_BYTES).toString('hex')))
    expect(ivs.size).toBe(20)
    expect(new Set(seals.map((s) => s.toString('hex'))).size).toBe(20)
  })

  it('detects tampering anywhere: IV, tag or ciphertext', () => {
    const sealed = box.seal(bytes('dose: 5 mg'))
    for (const at of [1, 1 + IV_BYTES, HEADER_BYTES, sealed.length - 1]) {
      const tampered = Uint8Array.from(sealed)
      tampered[at]! ^= 0x01
      expect(() => box.open(tampered)).toThrow()
    }
  })

  it('refuses a value cut short or with another version byte', () => {
    const sealed = box.seal(bytes('dose: 5 mg'))
    expect(() => box.open(sealed.subarray(0, sealed.length - 1))).toThrow()
    expect(() => box.open(sealed.subarray(0, HEADER_BYTES - 1))).toThrow('not a sealed value')
    const v2 = Uint8Array.from(sealed)
    v2[0] = 0x02
    expect(() => box.open(v2)).toThrow('not a sealed value')
  })

  it('a different key cannot open it', () => {
    const other = createCrypto(Uint8Array.from(randomBytes(32)))
    expect(() => other.open(box.seal(bytes('secret')))).toThrow()
  })

  it('refuses a key that is not 32 bytes', () => {
    expect(() => createCrypto(new Uint8Array(16))).toThrow('32 bytes')
  })
})

describe('sealed text', () => {
  it('round-trips text, including non-ASCII, as enc:v1:<base64>', () => {
    for (const plain of ['', 'Blutdruck 120/80 — Ärztin: Dr. Øster 🩺']) {
      const sealed = box.sealText(plain)
      expect(sealed).toStartWith('enc:v1:')
      if (plain) expect(sealed).not.toContain(plain)
      expect(box.isSealedText(sealed)).toBe(true)
      expect(box.openText(sealed)).toBe(plain)
      expect(Buffer.from(sealed.slice('enc:v1:'.length), 'base64')[0]).toBe(ENVELOPE_V1)
    }
  })

  it('seals the same text differently each time', () => {
    expect(box.sealText('same')).not.toBe(box.sealText('same'))
  })

  it('refuses plain text and a tampered sealed text', () => {
    expect(box.isSealedText('plain value')).toBe(false)
    expect(() => box.openText('plain value')).toThrow('not a sealed text')
    const sealed = box.sealText('medication list')
    const raw = Buffer.from(sealed.slice('enc:v1:'.length), 'base64')
    raw[raw.length - 1]! ^= 0x80
    expect(() => box.openText('enc:v1:' + raw.toString('base64'))).toThrow()
  })
})

describe('helpers', () => {
  it('constantTimeEqual is true only for equal strings, whatever their length', () => {
    expect(constantTimeEqual('token-abc', 'token-abc')).toBe(true)
    expect(constantTimeEqual('token-abc', 'token-abd')).toBe(false)
    expect(constantTimeEqual('token-abc', 'token-ab')).toBe(false)
    expect(constantTimeEqual('', '')).toBe(true)
    expect(constantTimeEqual('', 'x')).toBe(false)
    expect(constantTimeEqual('é', 'e\u0301')).toBe(false)
  })

  it('sha256Hex matches SHA-256 for strings and bytes', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(sha256Hex(bytes('abc'))).toBe(createHash('sha256').update('abc').digest('hex'))
  })

  it('randomToken is URL-safe with the requested entropy and never repeats', () => {
    const tokens = Array.from({ length: 100 }, () => randomToken())
    expect(new Set(tokens).size).toBe(100)
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(Buffer.from(token, 'base64url')).toHaveLength(32)
    }
    expect(Buffer.from(randomToken(16), 'base64url')).toHaveLength(16)
  })
})

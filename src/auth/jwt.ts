// HS256 JWTs via jose. Each service signs with its own audience so a token of one is refused by the other.
import { SignJWT, jwtVerify, type JWTPayload } from 'jose'

export interface TokenClaims extends JWTPayload {
  sub: string
}

// Imported once per secret: handing jose raw bytes makes it import the key again on every call, which was
// a measurable share of a request (scripts/bench/http.ts).
const keys = new Map<string, Promise<CryptoKey>>()
const keyOf = (secret: string): Promise<CryptoKey> => {
  let key = keys.get(secret)
  if (!key) {
    key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
    keys.set(secret, key)
  }
  return key
}

export async function signToken(secret: string, audience: string, claims: TokenClaims, lifetimeS: number, nowMs = Date.now()): Promise<string> {
  const iat = Math.floor(nowMs / 1000)
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetimeS)
    .sign(await keyOf(secret))
}

/**
 * Tokens whose signature, algorithm and audience checked out, per secret and audience, most recently verified last.
 * A client sends its token with every request, and the HMAC through WebCrypto (a hop to its worker thread and back)
 * was the largest single cost of an authenticated read (scripts/bench/http.ts). The time claims are checked again on
 * every use; only tokens that verified are held, so nothing here can be made to pass that would not.
 */
const verified = new Map<string, Map<string, TokenClaims>>()
/** Tokens held per secret and audience; past it, the least recently verified goes. */
export const VERIFIED_TOKENS_MAX = 10_000

/** jose's time checks (no clock tolerance): expired from `exp` on, valid from `nbf` on. */
const inTime = (claims: TokenClaims, nowMs: number) => {
  const now = Math.floor(nowMs / 1000)
  return (claims.exp === undefined || claims.exp > now) && (claims.nbf === undefined || claims.nbf <= now)
}

/** The claims of a valid token, or null (bad signature, wrong audience, expired, malformed). */
export async function verifyToken(secret: string, audience: string, token: string, nowMs = Date.now()): Promise<TokenClaims | null> {
  const cacheKey = `${audience}\u0000${secret}`
  let held = verified.get(cacheKey)
  const known = held?.get(token)
  if (known) {
    if (!inTime(known, nowMs)) return null
    held!.delete(token)
    held!.set(token, known)
    return known
  }
  let claims: TokenClaims
  try {
    const { payload } = await jwtVerify(token, await keyOf(secret), {
      algorithms: ['HS256'],
      audience,
      currentDate: new Date(nowMs),
    })
    if (typeof payload.sub !== 'string') return null
    claims = Object.freeze(payload) as TokenClaims
  } catch {
    return null
  }
  if (!held) verified.set(cacheKey, (held = new Map()))
  held.set(token, claims)
  if (held.size > VERIFIED_TOKENS_MAX) held.delete(held.keys().next().value!)
  return claims
}

/** The Bearer token of an Authorization header; an empty value counts as none. */
export function bearerToken(authorization: string | null | undefined): string | null {
  const match = authorization?.match(/^Bearer\s+(\S+)\s*$/i)
  return match ? match[1]! : null
}

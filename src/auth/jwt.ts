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

/** The claims of a valid token, or null (bad signature, wrong audience, expired, malformed). */
export async function verifyToken(secret: string, audience: string, token: string, nowMs = Date.now()): Promise<TokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, await keyOf(secret), {
      algorithms: ['HS256'],
      audience,
      currentDate: new Date(nowMs),
    })
    return typeof payload.sub === 'string' ? (payload as TokenClaims) : null
  } catch {
    return null
  }
}

/** The Bearer token of an Authorization header; an empty value counts as none. */
export function bearerToken(authorization: string | null | undefined): string | null {
  const match = authorization?.match(/^Bearer\s+(\S+)\s*$/i)
  return match ? match[1]! : null
}

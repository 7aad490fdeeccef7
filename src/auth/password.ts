// Password hashing via Bun.password: argon2id (19 MiB, t=2, p=1; the OWASP baseline both specs name).
// Bun.password.verify also reads bcrypt hashes, so older hashes keep working until they are rehashed.
export const ARGON2_MEMORY_KIB = 19 * 1024
export const ARGON2_TIME_COST = 2

export const hashPassword = (password: string): Promise<string> =>
  Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: ARGON2_MEMORY_KIB, timeCost: ARGON2_TIME_COST })

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash)
  } catch {
    return false // not a hash Bun recognises (e.g. an SSO account's random placeholder)
  }
}

/** True when a stored hash should be replaced by a current argon2id one after a successful login. */
export const needsRehash = (hash: string): boolean =>
  !hash.startsWith(`$argon2id$v=19$m=${ARGON2_MEMORY_KIB},t=${ARGON2_TIME_COST},p=1$`)

let dummy: Promise<string> | null = null
/** Verifies against a fixed dummy hash, so an unknown account costs the same time as a wrong password. */
export async function verifyDummyPassword(password: string): Promise<false> {
  dummy ??= hashPassword('dummy-password-for-timing-equalisation')
  await verifyPassword(password, await dummy)
  return false
}

// Spec 2, Two-factor: TOTP (30 s step, ±1 window) with otplib, QR codes with qrcode, and backup codes.
// The secret is sealed at rest; a secret with totp_enabled false is a pending setup. totp_last_step holds the
// last accepted time step, so a code is accepted once. Backup codes are stored as SHA-256 hashes only.
import { randomBytes } from 'node:crypto'
import { generateSecret, generateURI, verify as verifyTotp } from 'otplib'
import { verifyPassword } from '../../../src/auth/password'
import { sha256Hex } from '../../../src/core/crypto'
import type { Db } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import type { AuditWriter } from '../audit'

/** spec 2, Two-factor: a 30 second step, 6 digits (SHA-1, what authenticator apps expect), ±1 step. */
export const TOTP_PERIOD_S = 30
export const TOTP_DIGITS = 6
export const TOTP_WINDOW_STEPS = 1
/** The issuer label authenticator apps show next to the account's email. */
export const TOTP_ISSUER = 'Clinical assistant'
/** spec 2, Limits: backup codes per set; each XXXXX-XXXXX, from an alphabet without 0, O, 1 and I. */
export const BACKUP_CODE_COUNT = 10
export const BACKUP_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'
export const BACKUP_CODE_GROUP_LENGTH = 5
export const BACKUP_CODE_LENGTH = 2 * BACKUP_CODE_GROUP_LENGTH

export const TWO_FACTOR_MESSAGES = {
  ssoAccount: 'This account signs in through single sign-on: two-factor authentication is managed by your identity provider',
  alreadyEnabled: 'Two-factor authentication is already enabled',
  notEnabled: 'Two-factor authentication is not enabled',
  noPendingSetup: 'No two-factor setup is pending: start the setup first',
  invalidCode: 'Invalid two-factor code',
  passwordIncorrect: 'Password is incorrect',
}

// ---- backup codes ---------------------------------------------------------------------------------------

/** Trimmed, upper-case, spaces and dashes removed: `abcde-fghjk` and `ABCDEFGHJK` are the same code. */
export const normaliseBackupCode = (code: string) => code.trim().toUpperCase().replace(/[\s-]/g, '')

const BACKUP_CODE_FORM = new RegExp(`^[${BACKUP_CODE_ALPHABET}]{${BACKUP_CODE_LENGTH}}$`)
/** True when the input, once normalised, has a backup code's form (a TOTP code never does: it is 6 digits). */
export const hasBackupCodeForm = (code: string) => BACKUP_CODE_FORM.test(normaliseBackupCode(code))

export const hashBackupCode = (code: string) => sha256Hex(normaliseBackupCode(code))

/** Uniform characters of the alphabet: bytes at or above the largest multiple of its size are drawn again. */
function randomCharacters(count: number): string {
  const size = BACKUP_CODE_ALPHABET.length
  const unbiasedBelow = 256 - (256 % size)
  let out = ''
  while (out.length < count) {
    for (const byte of randomBytes(count)) {
      if (byte < unbiasedBelow && out.length < count) out += BACKUP_CODE_ALPHABET[byte % size]
    }
  }
  return out
}

/** A fresh set of distinct codes in the form XXXXX-XXXXX. */
export function generateBackupCodes(count = BACKUP_CODE_COUNT): string[] {
  const codes = new Set<string>()
  while (codes.size < count) {
    const chars = randomCharacters(BACKUP_CODE_LENGTH)
    codes.add(`${chars.slice(0, BACKUP_CODE_GROUP_LENGTH)}-${chars.slice(BACKUP_CODE_GROUP_LENGTH)}`)
  }
  return [...codes]
}

/** The stored hash list (jsonb comes back parsed on both drivers; a text value is parsed defensively). */
function hashList(value: unknown): string[] {
  const list = typeof value === 'string' ? (JSON.parse(value) as unknown) : value
  return Array.isArray(list) ? list.filter((h): h is string => typeof h === 'string') : []
}

// ---- TOTP -----------------------------------------------------------------------------------------------

interface TwoFactorRow {
  totp_secret: string | null
  totp_enabled: boolean
  totp_last_step: number | null
  totp_backup_codes: unknown
}

function lockTwoFactorRow(tx: Db, userId: number): Promise<TwoFactorRow | undefined> {
  return tx.sql<TwoFactorRow>`
    select totp_secret, totp_enabled, totp_last_step, totp_backup_codes
    from clinical.users where id = ${userId} for update`.then(([row]) => row)
}

function openSecret(core: Core, stored: string): string {
  return core.crypto.isSealedText(stored) ? core.crypto.openText(stored) : stored
}

/**
 * The time step a code matches within ±TOTP_WINDOW_STEPS of core.now(), or null. Steps at or before
 * `lastStep` are refused: an accepted code is never accepted again.
 */
export async function matchTotpStep(core: Core, secret: string, code: string, lastStep: number | null): Promise<number | null> {
  const token = code.trim().replace(/\s/g, '')
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(token)) return null
  const epoch = Math.floor(core.now() / 1000)
  const newestStep = Math.floor(epoch / TOTP_PERIOD_S) + TOTP_WINDOW_STEPS
  // otplib refuses an afterTimeStep beyond the window; every step of the window is spent then anyway.
  if (lastStep !== null && lastStep >= newestStep) return null
  const result = await verifyTotp({
    secret, token, epoch, period: TOTP_PERIOD_S, digits: TOTP_DIGITS, algorithm: 'sha1',
    epochTolerance: TOTP_WINDOW_STEPS * TOTP_PERIOD_S,
    ...(lastStep !== null ? { afterTimeStep: lastStep } : {}),
  })
  // The functional verify's result type also covers HOTP, which has no timeStep.
  return result.valid && 'timeStep' in result ? result.timeStep : null
}

// ---- setup and enable -----------------------------------------------------------------------------------

/** Starts a setup: a new pending secret (sealed at rest) and its QR code. 400 for SSO accounts and when already enabled. */
export async function setupTwoFactor(core: Core, user: { id: number; email: string; canLocalAuth: boolean }): Promise<{ secret: string; otpauthUrl: string; qrCode: string }> {
  if (!user.canLocalAuth) throw HttpError.badRequest('sso_account', TWO_FACTOR_MESSAGES.ssoAccount)
  const secret = generateSecret()
  const [row] = await core.db.sql<{ id: number }>`
    update clinical.users set totp_secret = ${core.crypto.sealText(secret)}, totp_last_step = null
    where id = ${user.id} and not totp_enabled returning id`
  if (!row) throw HttpError.badRequest('two_factor_already_enabled', TWO_FACTOR_MESSAGES.alreadyEnabled)
  const otpauthUrl = generateURI({ issuer: TOTP_ISSUER, label: user.email, secret, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD_S })
  return { secret, otpauthUrl, qrCode: await (await import('qrcode')).toDataURL(otpauthUrl) }
}

/** Checks a code against the pending secret and enables 2FA; on the first enable returns 10 new backup codes. */
export async function enableTwoFactor(core: Core, audit: AuditWriter, userId: number, code: string, ip: string): Promise<{ backupCodes: string[] }> {
  const backupCodes = await core.db.transaction(async (tx) => {
    const row = await lockTwoFactorRow(tx, userId)
    if (row?.totp_enabled) throw HttpError.badRequest('two_factor_already_enabled', TWO_FACTOR_MESSAGES.alreadyEnabled)
    if (!row?.totp_secret) throw HttpError.badRequest('no_pending_setup', TWO_FACTOR_MESSAGES.noPendingSetup)
    const step = await matchTotpStep(core, openSecret(core, row.totp_secret), code, row.totp_last_step)
    if (step === null) throw HttpError.badRequest('invalid_2fa_code', TWO_FACTOR_MESSAGES.invalidCode, { code: TWO_FACTOR_MESSAGES.invalidCode })
    // Disabling clears the codes, so an empty set means a first enable.
    const fresh = hashList(row.totp_backup_codes).length === 0 ? generateBackupCodes() : []
    const hashes = fresh.length > 0 ? fresh.map(hashBackupCode) : hashList(row.totp_backup_codes)
    await tx.sql`
      update clinical.users set totp_enabled = true, totp_last_step = ${step}, totp_backup_codes = ${hashes}
      where id = ${userId}`
    return fresh
  })
  audit.write({ action: '2fa_enabled', userId, ip, details: { backupCodesIssued: backupCodes.length } })
  return { backupCodes }
}

// ---- disable, regenerate, count -------------------------------------------------------------------------

/** 400 unless 2FA is enabled and the password is the account's. */
async function checkPasswordForTwoFactor(core: Core, userId: number, password: string): Promise<void> {
  const [row] = await core.db.sql<{ password_hash: string; totp_enabled: boolean }>`
    select password_hash, totp_enabled from clinical.users where id = ${userId}`
  if (!row?.totp_enabled) throw HttpError.badRequest('two_factor_not_enabled', TWO_FACTOR_MESSAGES.notEnabled)
  if (!(await verifyPassword(password, row.password_hash))) {
    throw HttpError.badRequest('password_incorrect', TWO_FACTOR_MESSAGES.passwordIncorrect, { password: TWO_FACTOR_MESSAGES.passwordIncorrect })
  }
}

/** Needs the password; clears the secret and the backup codes. */
export async function disableTwoFactor(core: Core, audit: AuditWriter, userId: number, password: string, ip: string): Promise<void> {
  await checkPasswordForTwoFactor(core, userId, password)
  const [row] = await core.db.sql<{ id: number }>`
    update clinical.users
    set totp_secret = null, totp_enabled = false, totp_last_step = null, totp_backup_codes = ${[]}
    where id = ${userId} and totp_enabled returning id`
  if (!row) throw HttpError.badRequest('two_factor_not_enabled', TWO_FACTOR_MESSAGES.notEnabled)
  audit.write({ action: '2fa_disabled', userId, ip })
}

/** Needs the password; replaces the whole set of backup codes. */
export async function regenerateBackupCodes(core: Core, audit: AuditWriter, userId: number, password: string, ip: string): Promise<{ backupCodes: string[] }> {
  await checkPasswordForTwoFactor(core, userId, password)
  const backupCodes = generateBackupCodes()
  const [row] = await core.db.sql<{ id: number }>`
    update clinical.users set totp_backup_codes = ${backupCodes.map(hashBackupCode)}
    where id = ${userId} and totp_enabled returning id`
  if (!row) throw HttpError.badRequest('two_factor_not_enabled', TWO_FACTOR_MESSAGES.notEnabled)
  audit.write({ action: '2fa_backup_codes_regenerated', userId, ip, details: { count: backupCodes.length } })
  return { backupCodes }
}

export async function backupCodeCount(core: Core, userId: number): Promise<number> {
  const [row] = await core.db.sql<{ n: number }>`
    select jsonb_array_length(totp_backup_codes)::int as n from clinical.users where id = ${userId}`
  return row?.n ?? 0
}

// ---- login ----------------------------------------------------------------------------------------------

/** Removes the code's hash inside a locking transaction; the remaining count, or null when it is not in the set. */
async function consumeBackupCode(core: Core, userId: number, code: string): Promise<number | null> {
  const normalised = normaliseBackupCode(code)
  if (!BACKUP_CODE_FORM.test(normalised)) return null
  const hash = sha256Hex(normalised)
  return core.db.transaction(async (tx) => {
    const row = await lockTwoFactorRow(tx, userId)
    if (!row?.totp_enabled) return null
    const hashes = hashList(row.totp_backup_codes)
    const remaining = hashes.filter((h) => h !== hash)
    if (remaining.length === hashes.length) return null
    await tx.sql`update clinical.users set totp_backup_codes = ${remaining} where id = ${userId}`
    return remaining.length
  })
}

/** Checks a TOTP code and records its step, under the row lock so one code cannot pass two parallel logins. */
async function acceptTotpCode(core: Core, userId: number, code: string): Promise<boolean> {
  return core.db.transaction(async (tx) => {
    const row = await lockTwoFactorRow(tx, userId)
    if (!row?.totp_enabled || !row.totp_secret) return false
    const step = await matchTotpStep(core, openSecret(core, row.totp_secret), code, row.totp_last_step)
    if (step === null) return false
    await tx.sql`update clinical.users set totp_last_step = ${step} where id = ${userId}`
    return true
  })
}

/**
 * The second factor of a login: a TOTP code, or a backup code (in `backupCode`, or in `totpCode` when it has
 * a backup code's form). A backup code is consumed inside a locking transaction, so parallel logins with one
 * code succeed at most once; audit `2fa_backup_code_used`. False when nothing matches.
 */
export async function verifyLoginCode(
  core: Core, audit: AuditWriter, userId: number, input: { totpCode?: string; backupCode?: string }, ip: string,
): Promise<boolean> {
  const backupCode = input.backupCode?.trim() ? input.backupCode : input.totpCode && hasBackupCodeForm(input.totpCode) ? input.totpCode : null
  if (backupCode !== null) {
    const remaining = await consumeBackupCode(core, userId, backupCode)
    if (remaining === null) return false
    audit.write({ action: '2fa_backup_code_used', userId, ip, details: { remaining } })
    return true
  }
  if (!input.totpCode?.trim()) return false
  return acceptTotpCode(core, userId, input.totpCode)
}

// Spec 2, Two-factor: TOTP (30 s step, ±1 window) with otplib, QR codes with qrcode, and backup codes.
import type { Core } from '../../../src/plugin'

const todo = (): never => {
  throw new Error('not implemented')
}

/** Starts a setup: a new pending secret (sealed at rest) and its QR code. 400 for SSO accounts and when already enabled. */
export async function setupTwoFactor(core: Core, user: { id: number; email: string; canLocalAuth: boolean }): Promise<{ secret: string; otpauthUrl: string; qrCode: string }> {
  void core, user
  return todo()
}

/** Checks a code against the pending secret and enables 2FA; on the first enable returns 10 new backup codes. */
export async function enableTwoFactor(core: Core, userId: number, code: string, ip: string): Promise<{ backupCodes: string[] }> {
  void core, userId, code, ip
  return todo()
}

/** Needs the password; clears the secret and the backup codes. */
export async function disableTwoFactor(core: Core, userId: number, password: string, ip: string): Promise<void> {
  void core, userId, password, ip
  return todo()
}

/** Needs the password; replaces the whole set of backup codes. */
export async function regenerateBackupCodes(core: Core, userId: number, password: string, ip: string): Promise<{ backupCodes: string[] }> {
  void core, userId, password, ip
  return todo()
}

export async function backupCodeCount(core: Core, userId: number): Promise<number> {
  void core, userId
  return todo()
}

/**
 * The second factor of a login: a TOTP code, or a backup code (in `backupCode`, or in `totpCode` when it has
 * a backup code's form). A backup code is consumed inside a locking transaction, so parallel logins with one
 * code succeed at most once; audit `2fa_backup_code_used`. False when nothing matches.
 */
export async function verifyLoginCode(core: Core, userId: number, input: { totpCode?: string; backupCode?: string }, ip: string): Promise<boolean> {
  void core, userId, input, ip
  return todo()
}

// Spec 2, Two-factor: setup, enable, disable and the backup codes of the signed-in user.
// Routing, guards, validation and response shaping only; the rules live in services/two-factor.ts.
import { Elysia } from 'elysia'
import { BackupCodeCount, BackupCodesResponse, CodeBody, PasswordBody, SetupTwoFactorResponse, Success } from '../models/accounts'
import { ACCOUNT_SECURITY_RULE } from '../services/accounts'
import * as twoFactor from '../services/two-factor'
import type { ClinicalState } from '../state'

const tags = ['Two-factor']
const LIMITED = '429 (with Retry-After) after 20 requests per client address per 15 minutes, shared with change-password.'

export const twoFactorRoutes = ({ core, audit, auth: clinicalAuth }: ClinicalState) => {
  const limit = (request: Request) => core.rateLimit.consume(ACCOUNT_SECURITY_RULE, core.clientAddress(request))
  return new Elysia({ prefix: '/api/auth' })
    .use(clinicalAuth)
    .post('/setup-2fa', async ({ user, request }) => {
      await limit(request)
      return { success: true as const, ...(await twoFactor.setupTwoFactor(core, user)) }
    }, {
      auth: 'user', response: SetupTwoFactorResponse,
      detail: {
        tags, summary: 'Start two-factor setup',
        description: 'No body. Creates a new pending TOTP secret (SHA-1, 6 digits, 30-second step) and answers it with its '
          + '`otpauth://` URI and a PNG QR code as a data URI; calling it again replaces a pending secret. Two-factor stays off '
          + 'until verify-2fa. 400 when it is already enabled, or for a single sign-on account (its sign-in is the identity '
          + `provider's); 401 without a session. ${LIMITED}`,
      },
    })
    .post('/verify-2fa', async ({ user, body, request }) => {
      await limit(request)
      return { success: true as const, ...(await twoFactor.enableTwoFactor(core, audit, user.id, body.code, core.clientAddress(request))) }
    }, {
      auth: 'user', body: CodeBody, response: BackupCodesResponse,
      detail: {
        tags, summary: 'Enable two-factor authentication',
        description: 'Body `{code}`: a current code of the pending secret (one step either way is accepted, each code once). '
          + `On the first enable \`backupCodes\` holds ${twoFactor.BACKUP_CODE_COUNT} one-time codes (XXXXX-XXXXX), shown only `
          + 'now; it is empty when the account still has codes. 400 when no setup is pending, when it is already enabled, or '
          + `for a wrong code; 401 without a session. ${LIMITED}`,
      },
    })
    .post('/disable-2fa', async ({ user, body, request }) => {
      await limit(request)
      await twoFactor.disableTwoFactor(core, audit, user.id, body.password, core.clientAddress(request))
      return { success: true as const }
    }, {
      auth: 'user', body: PasswordBody, response: Success,
      detail: {
        tags, summary: 'Disable two-factor authentication',
        description: 'Body `{password}`: the current password. Clears the secret and every backup code. 400 `Password is '
          + `incorrect\`, or when two-factor authentication is not enabled; 401 without a session. ${LIMITED}`,
      },
    })
    .post('/2fa/backup-codes', async ({ user, body, request }) => {
      await limit(request)
      return { success: true as const, ...(await twoFactor.regenerateBackupCodes(core, audit, user.id, body.password, core.clientAddress(request))) }
    }, {
      auth: 'user', body: PasswordBody, response: BackupCodesResponse,
      detail: {
        tags, summary: 'Regenerate the backup codes',
        description: `Body \`{password}\`: the current password. Answers \`{success, backupCodes}\` with ${twoFactor.BACKUP_CODE_COUNT} `
          + 'new codes (XXXXX-XXXXX), shown only now; every earlier code stops working. 400 `Password is incorrect`, or when '
          + `two-factor authentication is not enabled; 401 without a session. ${LIMITED}`,
      },
    })
    .get('/2fa/backup-codes/count', async ({ user }) => ({ success: true as const, remaining: await twoFactor.backupCodeCount(core, user.id) }), {
      auth: 'user', response: BackupCodeCount,
      detail: {
        tags, summary: 'How many backup codes are left',
        description: 'Answers `{success, remaining}`: the unused backup codes (0 when two-factor authentication is off). 401 without a session.',
      },
    })
}

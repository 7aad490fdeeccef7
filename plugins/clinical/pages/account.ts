// The clinical service's "my account" pages: the profile, the password change, and two-factor authentication
// (set up with a QR code, enable, backup codes shown once, regenerate, turn off). Every route needs a session
// (`signedIn`); each account-security action consumes ACCOUNT_SECURITY_RULE like its API route.
import { Elysia, t } from 'elysia'
import { FormBody, formErrors, formFailure, formFields, hasErrors, html, redirect } from '../../../views/page'
import { ChangePasswordBody, LoginBody } from '../models/accounts'
import * as accounts from '../services/accounts'
import * as twoFactor from '../services/two-factor'
import type { ClinicalState } from '../state'
import { AccountPage, BackupCodesPage, TwoFactorSetupPage, type AccountErrors } from '../views/account'
import type { Flash } from '../views/common'
import { clinicalPageKit, CodeForm, PASSWORDS_DIFFER, type PageSession } from './common'

const PasswordForm = t.Object({ password: LoginBody.properties.password })

/** Notices of the Post/Redirect/Get answers, by the `notice` query value: fixed texts, never the query's. */
const ACCOUNT_NOTICES: Record<string, string> = {
  'password-changed': 'Your password has been changed. Your other sessions have ended.',
  '2fa-off': 'Two-factor authentication is off.',
}

export const accountPages = (state: ClinicalState) => {
  const { core, audit } = state
  const base = core.config.clinicalBasePath
  const accountUrl = `${base}/account`
  const limit = (request: Request) => core.rateLimit.consume(accounts.ACCOUNT_SECURITY_RULE, core.clientAddress(request))

  const accountPage = async (
    user: PageSession['user'],
    p: { flash?: Flash; warning?: string; errors?: AccountErrors } = {},
    status = 200,
  ) => {
    const backupCodesLeft = user.totp_enabled ? await twoFactor.backupCodeCount(core, user.id) : null
    return html(AccountPage({ base, user, backupCodesLeft, ...p }), { status })
  }

  return new Elysia()
    .use(clinicalPageKit(state))
    .get('/account', ({ user, query }) => {
      const notice = query.notice ? ACCOUNT_NOTICES[query.notice] : undefined
      return accountPage(user, { flash: notice ? { kind: 'ok', text: notice } : null })
    }, { signedIn: true, query: t.Object({ notice: t.Optional(t.String()) }) })

    .get('/account/*', () => redirect(accountUrl), { page: true })

    .post('/account/password', async ({ user, auth, request, body }) => {
      const f = formFields(body)
      const errors = formErrors(ChangePasswordBody, { currentPassword: f.currentPassword ?? '', newPassword: f.newPassword ?? '' })
      if (!errors.newPassword && f.newPassword !== f.confirmPassword) errors.confirmPassword = PASSWORDS_DIFFER
      if (hasErrors(errors)) return accountPage(user, { errors: { password: errors } }, 422)
      try {
        await limit(request)
        const result = await accounts.changePassword(core, audit, user, auth.token, {
          currentPassword: f.currentPassword!, newPassword: f.newPassword!,
        }, core.clientAddress(request))
        if (!result.passwordWarning) return redirect(`${accountUrl}?notice=password-changed`)
        return accountPage(user, { flash: { kind: 'ok', text: ACCOUNT_NOTICES['password-changed']! }, warning: result.passwordWarning })
      } catch (err) {
        const { errors: fieldErrors, flash } = formFailure(err)
        return accountPage(user, { flash, errors: { password: fieldErrors } }, 422)
      }
    }, { signedIn: true, body: FormBody })

    .post('/account/2fa/setup', async ({ user, request }) => {
      try {
        await limit(request)
        const setup = await twoFactor.setupTwoFactor(core, user)
        return html(TwoFactorSetupPage({ base, user, secret: setup.secret, qrCode: setup.qrCode }))
      } catch (err) {
        return accountPage(user, { flash: formFailure(err).flash }, 422)
      }
    }, { signedIn: true, body: FormBody })

    .post('/account/2fa/enable', async ({ user, request, body }) => {
      const f = formFields(body)
      // The setup page posts its secret and QR code back, so a wrong code can show them again without a new secret.
      const secret = /^[A-Z2-7]{16,128}=*$/.test(f.secret ?? '') ? f.secret! : null
      const qrCode = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/.test(f.qrCode ?? '') && f.qrCode!.length <= 64_000 ? f.qrCode! : null
      const again = (error: string, headers: Record<string, string> = {}) => secret && qrCode
        ? html(TwoFactorSetupPage({ base, user, secret, qrCode, error }), { status: 422, headers })
        : accountPage(user, { flash: { kind: 'error', text: `${error}. Start the setup again.` } }, 422)
      const errors = formErrors(CodeForm, { code: f.code?.trim() ?? '' })
      if (errors.code) return again(errors.code)
      try {
        await limit(request)
        const { backupCodes } = await twoFactor.enableTwoFactor(core, audit, user.id, f.code!.trim(), core.clientAddress(request))
        return html(BackupCodesPage({ base, user: { ...user, totp_enabled: true }, backupCodes, enabled: true }))
      } catch (err) {
        const { flash, headers } = formFailure(err)
        return again(flash.text, headers)
      }
    }, { signedIn: true, body: FormBody })

    .post('/account/2fa/backup-codes', async ({ user, request, body }) => {
      const f = formFields(body)
      const errors = formErrors(PasswordForm, { password: f.password ?? '' })
      if (hasErrors(errors)) return accountPage(user, { errors: { regenerate: errors } }, 422)
      try {
        await limit(request)
        const { backupCodes } = await twoFactor.regenerateBackupCodes(core, audit, user.id, f.password!, core.clientAddress(request))
        return html(BackupCodesPage({ base, user, backupCodes, enabled: false }))
      } catch (err) {
        const { errors: fieldErrors, flash } = formFailure(err)
        return accountPage(user, { flash, errors: { regenerate: fieldErrors ?? { password: flash.text } } }, 422)
      }
    }, { signedIn: true, body: FormBody })

    .post('/account/2fa/disable', async ({ user, request, body }) => {
      const f = formFields(body)
      const errors = formErrors(PasswordForm, { password: f.password ?? '' })
      if (hasErrors(errors)) return accountPage(user, { errors: { disable: errors } }, 422)
      try {
        await limit(request)
        await twoFactor.disableTwoFactor(core, audit, user.id, f.password!, core.clientAddress(request))
        return redirect(`${accountUrl}?notice=2fa-off`)
      } catch (err) {
        const { errors: fieldErrors, flash } = formFailure(err)
        return accountPage(user, { flash, errors: { disable: fieldErrors ?? { password: flash.text } } }, 422)
      }
    }, { signedIn: true, body: FormBody })
}

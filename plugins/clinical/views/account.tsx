// The clinical service's "my account" pages: profile, password change, and two-factor authentication
// (set up with a QR code, backup codes shown once, regenerate, turn off).
import { CODE_MAX, PASSWORD_MAX, type ProfileUser } from '../models/accounts'
import { MESSAGES } from '../services/accounts'
import { BACKUP_CODE_COUNT, TWO_FACTOR_MESSAGES } from '../services/two-factor'
import { Field } from '../../../views/layout'
import { ClinicalLayout, NewPasswordFields, type Errors, type Flash } from './common'

/** Field errors of the account page's forms, by form. */
export interface AccountErrors {
  password?: Errors
  regenerate?: Errors
  disable?: Errors
}

const PasswordSection = (p: { base: string; user: ProfileUser; errors?: Errors }) => (
  <section id="password">
    <h2>Password</h2>
    {p.user.canLocalAuth ? (
      <form class="stack" action={`${p.base}/account/password`} method="post">
        <Field
          label="Current password" name="currentPassword" type="password" error={p.errors?.currentPassword}
          autocomplete="current-password" required maxlength={PASSWORD_MAX}
        />
        <NewPasswordFields errors={p.errors} />
        <div>
          <button type="submit">Change password</button>
        </div>
      </form>
    ) : (
      <p class="muted" safe>{MESSAGES.ssoPassword}</p>
    )}
  </section>
)

const TwoFactorSection = (p: { base: string; user: ProfileUser; backupCodesLeft: number | null; errors?: AccountErrors }) => (
  <section id="two-factor">
    <h2>Two-factor authentication</h2>
    {p.user.totp_enabled ? (
      <>
        <p>
          <strong>On.</strong> Signing in asks for a code from your authenticator app.{' '}
          {p.backupCodesLeft === null ? '' : <span id="backup-codes-left" safe>{`Backup codes left: ${p.backupCodesLeft} of ${BACKUP_CODE_COUNT}.`}</span>}
        </p>
        <form class="stack" action={`${p.base}/account/2fa/backup-codes`} method="post">
          <h3>New backup codes</h3>
          <p class="muted">Replaces every backup code you have with 10 new ones.</p>
          <Field
            label="Current password" name="password" id="regenerate-password" type="password" error={p.errors?.regenerate?.password}
            autocomplete="current-password" required maxlength={PASSWORD_MAX}
          />
          <div>
            <button type="submit">Regenerate backup codes</button>
          </div>
        </form>
        <form class="stack" action={`${p.base}/account/2fa/disable`} method="post">
          <h3>Turn off</h3>
          <Field
            label="Current password" name="password" id="disable-password" type="password" error={p.errors?.disable?.password}
            autocomplete="current-password" required maxlength={PASSWORD_MAX}
          />
          <div>
            <button type="submit" class="danger">Turn off two-factor authentication</button>
          </div>
        </form>
      </>
    ) : p.user.canLocalAuth ? (
      <>
        <p>
          <strong>Off.</strong> With two-factor authentication on, signing in also asks for a code from an authenticator app
          on your phone.
        </p>
        <form action={`${p.base}/account/2fa/setup`} method="post">
          <button type="submit">Set up two-factor authentication</button>
        </form>
      </>
    ) : (
      <p class="muted" safe>{TWO_FACTOR_MESSAGES.ssoAccount}</p>
    )}
  </section>
)

export const AccountPage = (p: {
  base: string; user: ProfileUser; backupCodesLeft: number | null; flash?: Flash; warning?: string; errors?: AccountErrors
}) => (
  <ClinicalLayout title="My account" base={p.base} user={p.user} flash={p.flash}>
    <h1>My account</h1>
    {p.warning ? <p class="flash warning" safe>{p.warning}</p> : ''}
    <dl class="facts">
      <dt>Name</dt>
      <dd safe>{p.user.name}</dd>
      <dt>Email</dt>
      <dd safe>{p.user.email}</dd>
      <dt>Role</dt>
      <dd safe>{p.user.role}</dd>
    </dl>
    <PasswordSection base={p.base} user={p.user} errors={p.errors?.password} />
    <TwoFactorSection base={p.base} user={p.user} backupCodesLeft={p.backupCodesLeft} errors={p.errors} />
  </ClinicalLayout>
)

/** A base32 secret in groups of four, easier to type by hand. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ')

/** Step two of the setup: scan (or type) the secret, then confirm with a code. */
export const TwoFactorSetupPage = (p: { base: string; user: ProfileUser; secret: string; qrCode: string; error?: string; flash?: Flash }) => (
  <ClinicalLayout title="Set up two-factor authentication" base={p.base} user={p.user} flash={p.flash}>
    <h1>Set up two-factor authentication</h1>
    <ol>
      <li>Scan this QR code with an authenticator app on your phone.</li>
      <li>Enter the 6-digit code the app then shows.</li>
    </ol>
    <img class="qr" src={p.qrCode} alt="QR code to add this account to an authenticator app" width="200" height="200" />
    <p>
      Cannot scan it? Enter this key in the app instead:
      <br />
      <code class="secret" id="totp-secret" safe>{grouped(p.secret)}</code>
    </p>
    <form class="stack" action={`${p.base}/account/2fa/enable`} method="post">
      <input type="hidden" name="secret" value={p.secret} />
      <input type="hidden" name="qrCode" value={p.qrCode} />
      <Field label="Code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength={CODE_MAX} autofocus error={p.error} />
      <div>
        <button type="submit">Turn on</button> <a href={`${p.base}/account`}>Cancel</a>
      </div>
    </form>
  </ClinicalLayout>
)

/** The backup codes, shown once: after the first enable and after a regeneration. */
export const BackupCodesPage = (p: { base: string; user: ProfileUser; backupCodes: string[]; enabled: boolean }) => (
  <ClinicalLayout
    title="Your backup codes" base={p.base} user={p.user}
    flash={{ kind: 'ok', text: p.enabled ? 'Two-factor authentication is on.' : 'New backup codes made: the old ones no longer work.' }}
  >
    <h1>Your backup codes</h1>
    {p.backupCodes.length === 0 ? (
      <p>Your backup codes from before still work. To get a new set, use "Regenerate backup codes" on your account page.</p>
    ) : (
      <>
        <p>
          If you lose your phone, type one of these codes in place of the app's code when you sign in. Each code works once.
          <strong> Keep them somewhere safe: this is the only time they are shown.</strong>
        </p>
        <ol class="backup-codes">
          {p.backupCodes.map((code) => <li><code safe>{code}</code></li>)}
        </ol>
      </>
    )}
    <p>
      <a class="button" href={`${p.base}/account`}>{p.backupCodes.length === 0 ? 'Back to my account' : 'I have saved them'}</a>
    </p>
  </ClinicalLayout>
)

// The clinical service's signed-out pages: sign in (password, single sign-on, the two-factor step), register,
// forgot and reset password. Every form has action + method and works without JavaScript; hx-boost upgrades it.
import { PASSWORD_MIN, PASSWORD_MAX, CODE_MAX } from '../models/accounts'
import { Field } from '../../../views/layout'
import { Challenge, ClinicalLayout, NewPasswordFields, ResendVerificationForm, type Errors, type Flash, type PageContext } from './common'

export interface SignInOptions {
  /** Single sign-on is enabled: its link (a link, since the identity provider is another origin). */
  sso: { label: string } | null
  /** Password sign-in is for administrators only (single sign-on is the way in). */
  localAuthDisabled: boolean
  registrationOpen: boolean
}

const PasswordSignInForm = (p: { ctx: PageContext; email?: string; errors?: Errors }) => (
  <form class="stack" action={`${p.ctx.base}/login`} method="post">
    <Field label="Email" name="email" type="email" value={p.email} error={p.errors?.email} autocomplete="username" required />
    <Field label="Password" name="password" type="password" error={p.errors?.password} autocomplete="current-password" required maxlength={PASSWORD_MAX} />
    <div>
      <button type="submit">Sign in</button>
    </div>
  </form>
)

export const SignInPage = (p: {
  ctx: PageContext; options: SignInOptions; email?: string; errors?: Errors; flash?: Flash
  /** The password matched an account whose address is not confirmed: offer a new verification email right here. */
  unverified?: boolean
}) => {
  const base = p.ctx.base
  const failed = Boolean(p.email || p.errors || p.flash?.kind === 'error')
  return (
    <ClinicalLayout title="Sign in" base={base} flash={p.flash}>
      <h1>Sign in</h1>
      {p.options.sso ? (
        <p class="sso">
          {/* Not boosted: the identity provider is another origin, the browser must navigate there. */}
          <a class="button" href={`${base}/api/auth/oidc`} hx-boost="false" safe>{p.options.sso.label}</a>
        </p>
      ) : ''}
      {p.options.localAuthDisabled ? (
        <details class="admin-sign-in" open={failed}>
          <summary>Administrator sign-in</summary>
          <PasswordSignInForm ctx={p.ctx} email={p.email} errors={p.errors} />
        </details>
      ) : (
        <>
          {p.options.sso ? <p class="muted">Or sign in with your email and password:</p> : ''}
          <PasswordSignInForm ctx={p.ctx} email={p.email} errors={p.errors} />
          <p>
            <a href={`${base}/forgot-password`}>Forgot your password?</a>
            {p.options.registrationOpen ? <> · <a href={`${base}/register`}>Create an account</a></> : ''}
          </p>
        </>
      )}
      {p.unverified ? <ResendVerificationForm base={base} email={p.email} /> : ''}
    </ClinicalLayout>
  )
}

/** The resend form on a page of its own (its address without JavaScript, and its re-render with a message). */
export const ResendVerificationPage = (p: { ctx: PageContext; email?: string; error?: string; flash?: Flash }) => (
  <ClinicalLayout title="Confirm your email address" base={p.ctx.base} flash={p.flash}>
    <h1>Confirm your email address</h1>
    <p>Enter the address you registered with and we will send you a new verification link.</p>
    <ResendVerificationForm base={p.ctx.base} email={p.email} error={p.error} />
    <p>
      <a href={`${p.ctx.base}/`}>Back to sign in</a>
    </p>
  </ClinicalLayout>
)

/** The second step of a sign-in with two-factor authentication on: the password matched, a code is needed. */
export const TwoFactorStepPage = (p: { ctx: PageContext; pendingToken: string; error?: string; flash?: Flash }) => (
  <ClinicalLayout title="Two-factor authentication" base={p.ctx.base} flash={p.flash}>
    <h1>Two-factor authentication</h1>
    <p>Enter the 6-digit code your authenticator app shows for this account.</p>
    <form class="stack" action={`${p.ctx.base}/login/2fa`} method="post">
      <input type="hidden" name="pendingToken" value={p.pendingToken} />
      <Field
        label="Code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength={CODE_MAX} autofocus
        hint="No access to the app? Type one of your backup codes (XXXXX-XXXXX) instead; each works once."
        error={p.error}
      />
      <div>
        <button type="submit">Verify</button>
      </div>
    </form>
    <p>
      <a href={`${p.ctx.base}/`}>Start again</a>
    </p>
  </ClinicalLayout>
)

export const RegisterPage = (p: { ctx: PageContext; values?: { name?: string; email?: string }; errors?: Errors; flash?: Flash }) => (
  <ClinicalLayout title="Create an account" base={p.ctx.base} flash={p.flash}>
    <h1>Create an account</h1>
    <form class="stack" action={`${p.ctx.base}/register`} method="post">
      <Field label="Name" name="name" value={p.values?.name} error={p.errors?.name} autocomplete="name" required />
      <Field label="Email" name="email" type="email" value={p.values?.email} error={p.errors?.email} autocomplete="email" required />
      <Field
        label={`Password (at least ${PASSWORD_MIN} characters)`} name="password" type="password" error={p.errors?.password}
        autocomplete="new-password" required minlength={PASSWORD_MIN} maxlength={PASSWORD_MAX}
      />
      <Challenge ctx={p.ctx} />
      <div>
        <button type="submit">Create account</button>
      </div>
    </form>
    <p>
      Already have an account? <a href={`${p.ctx.base}/`}>Sign in</a>
    </p>
  </ClinicalLayout>
)

export const ForgotPasswordPage = (p: { ctx: PageContext; email?: string; errors?: Errors; flash?: Flash }) => (
  <ClinicalLayout title="Forgot password" base={p.ctx.base} flash={p.flash}>
    <h1>Forgot your password?</h1>
    <p>Enter your email address and we will send you a link to choose a new password.</p>
    <form class="stack" action={`${p.ctx.base}/forgot-password`} method="post">
      <Field label="Email" name="email" type="email" value={p.email} error={p.errors?.email} autocomplete="email" required />
      <Challenge ctx={p.ctx} />
      <div>
        <button type="submit">Send reset link</button>
      </div>
    </form>
    <p>
      <a href={`${p.ctx.base}/`}>Back to sign in</a>
    </p>
  </ClinicalLayout>
)

export const ResetPasswordPage = (p: { ctx: PageContext; token: string; errors?: Errors; flash?: Flash }) => (
  <ClinicalLayout title="Choose a new password" base={p.ctx.base} flash={p.flash}>
    <h1>Choose a new password</h1>
    {/* The token in the action too: a boosted post puts the action in the address bar, and a reload must keep it. */}
    <form class="stack" action={`${p.ctx.base}/reset-password?token=${encodeURIComponent(p.token)}`} method="post">
      <input type="hidden" name="token" value={p.token} />
      <NewPasswordFields errors={p.errors} />
      <div>
        <button type="submit">Set password</button>
      </div>
    </form>
  </ClinicalLayout>
)

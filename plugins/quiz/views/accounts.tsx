// The quiz service's account pages: sign in, register, forgot and reset password, and "my account".
// Every form has action + method (works without JavaScript); hx-boost on the layout upgrades it.
import { Challenge, Field, Layout, type Errors, type Flash, type PageContext } from '../../../views/layout'
import { PASSWORD_MIN, type UserResponse } from '../models/accounts'

export const BRAND = 'Quiz'

export const SignedOutNav = ({ base }: { base: string }) => (
  <>
    <a href={`${base}/login`}>Sign in</a>
    <a href={`${base}/register`}>Create an account</a>
    <a href={`${base}/contact`}>Contact</a>
  </>
)

export const SignedInNav = ({ base, user }: { base: string; user: UserResponse }) => (
  <>
    <span class="muted" id="nav-name" safe>{user.name}</span>
    {user.role === 'moderator' || user.role === 'admin' ? <a href={`${base}/documents`}>Documents</a> : ''}
    <a href={`${base}/quizzes`}>Quizzes</a>
    <a href={`${base}/bank`}>Question bank</a>
    {user.role === 'moderator' || user.role === 'admin' ? <a href={`${base}/categories`}>Categories</a> : ''}
    <a href={`${base}/progress`}>My progress</a>
    <a href={`${base}/reviews`}>Reviews</a>
    <a href={`${base}/favorites`}>Favorites</a>
    {user.role === 'moderator' || user.role === 'admin' ? <a href={`${base}/import`}>Import</a> : ''}
    {user.role === 'admin' ? <a href={`${base}/contact/messages`}>Messages</a> : <a href={`${base}/contact`}>Contact</a>}
    <a href={`${base}/docs`}>API</a>
    <form action={`${base}/logout`} method="post">
      <button class="link" type="submit">Sign out</button>
    </form>
  </>
)

/** Asks for a new verification email, where a person learns their address is not confirmed yet. */
export const ResendVerificationForm = (p: { ctx: PageContext; email?: string }) => (
  <section id="resend-verification">
    <h2>Need a new verification email?</h2>
    <form class="stack" action={`${p.ctx.base}/resend-verification`} method="post">
      <Field label="Email" name="email" id="resend-email" type="email" value={p.email} autocomplete="email" required />
      <button type="submit">Send a new link</button>
    </form>
  </section>
)

export const LoginPage = (p: { ctx: PageContext; email?: string; errors?: Errors; flash?: Flash; unverified?: boolean }) => (
  <Layout title="Sign in" base={p.ctx.base} brand={BRAND} nav={<SignedOutNav base={p.ctx.base} />} flash={p.flash}>
    <h1>Sign in</h1>
    <form class="stack" action={`${p.ctx.base}/login`} method="post">
      <Field label="Email" name="email" type="email" value={p.email} error={p.errors?.email} autocomplete="username" required />
      <Field label="Password" name="password" type="password" error={p.errors?.password} autocomplete="current-password" required />
      <Challenge ctx={p.ctx} />
      <button type="submit">Sign in</button>
    </form>
    <p>
      <a href={`${p.ctx.base}/forgot-password`}>Forgot your password?</a> · <a href={`${p.ctx.base}/register`}>Create an account</a>
    </p>
    {p.unverified ? <ResendVerificationForm ctx={p.ctx} email={p.email} /> : ''}
  </Layout>
)

export const RegisterPage = (p: { ctx: PageContext; values?: { email?: string; name?: string }; errors?: Errors; flash?: Flash }) => (
  <Layout title="Create an account" base={p.ctx.base} brand={BRAND} nav={<SignedOutNav base={p.ctx.base} />} flash={p.flash}>
    <h1>Create an account</h1>
    <form class="stack" action={`${p.ctx.base}/register`} method="post">
      <Field label="Name" name="name" value={p.values?.name} error={p.errors?.name} autocomplete="name" required />
      <Field label="Email" name="email" type="email" value={p.values?.email} error={p.errors?.email} autocomplete="email" required />
      <Field label={`Password (at least ${PASSWORD_MIN} characters)`} name="password" type="password" error={p.errors?.password} autocomplete="new-password" required minlength={PASSWORD_MIN} />
      <Challenge ctx={p.ctx} />
      <button type="submit">Create account</button>
    </form>
    <p>
      Already registered? <a href={`${p.ctx.base}/login`}>Sign in</a>
    </p>
  </Layout>
)

export const ForgotPasswordPage = (p: { ctx: PageContext; email?: string; errors?: Errors; flash?: Flash }) => (
  <Layout title="Forgot password" base={p.ctx.base} brand={BRAND} nav={<SignedOutNav base={p.ctx.base} />} flash={p.flash}>
    <h1>Forgot your password?</h1>
    <p>Enter your email address and we will send you a link to choose a new password.</p>
    <form class="stack" action={`${p.ctx.base}/forgot-password`} method="post">
      <Field label="Email" name="email" type="email" value={p.email} error={p.errors?.email} autocomplete="email" required />
      <Challenge ctx={p.ctx} />
      <button type="submit">Send reset link</button>
    </form>
    <p>
      <a href={`${p.ctx.base}/login`}>Back to sign in</a>
    </p>
  </Layout>
)

export const ResetPasswordPage = (p: { ctx: PageContext; token: string; errors?: Errors; flash?: Flash }) => (
  <Layout title="Choose a new password" base={p.ctx.base} brand={BRAND} nav={<SignedOutNav base={p.ctx.base} />} flash={p.flash}>
    <h1>Choose a new password</h1>
    <form class="stack" action={`${p.ctx.base}/reset-password`} method="post">
      <input type="hidden" name="token" value={p.token} />
      <Field label={`New password (at least ${PASSWORD_MIN} characters)`} name="new_password" type="password" error={p.errors?.new_password} autocomplete="new-password" required minlength={PASSWORD_MIN} />
      <button type="submit">Set password</button>
    </form>
  </Layout>
)

/** A page with a heading and a message, e.g. after following an email link. */
export const MessagePage = (p: { ctx: PageContext; title: string; message: string; ok: boolean; user?: UserResponse | null; resend?: boolean }) => (
  <Layout title={p.title} base={p.ctx.base} brand={BRAND} nav={p.user ? <SignedInNav base={p.ctx.base} user={p.user} /> : <SignedOutNav base={p.ctx.base} />}>
    <h1 safe>{p.title}</h1>
    <p class={p.ok ? 'flash ok' : 'flash error'} safe>{p.message}</p>
    {p.resend ? <ResendVerificationForm ctx={p.ctx} /> : ''}
    <p>
      <a href={`${p.ctx.base}/`}>Continue</a>
    </p>
  </Layout>
)

/** The profile form is also the htmx fragment the profile POST returns (it swaps itself). */
export const ProfileForm = (p: { base: string; user: UserResponse; errors?: Errors; saved?: boolean }) => (
  <>
  {p.saved ? <span class="muted" id="nav-name" hx-swap-oob="true" safe>{p.user.name}</span> : ''}
  <form id="profile" class="stack" action={`${p.base}/account/profile`} method="post"
    hx-post={`${p.base}/account/profile`} hx-target="this" hx-swap="outerHTML">
    <Field label="Name" name="name" value={p.user.name} error={p.errors?.name} autocomplete="name" required />
    <div>
      <button type="submit">Save name</button> {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
    </div>
  </form>
  </>
)

export const PasswordForm = (p: { base: string; errors?: Errors; saved?: boolean }) => (
  <form id="password" class="stack" action={`${p.base}/account/password`} method="post"
    hx-post={`${p.base}/account/password`} hx-target="this" hx-swap="outerHTML">
    <Field label="Current password" name="current_password" type="password" error={p.errors?.current_password} autocomplete="current-password" required />
    <Field label={`New password (at least ${PASSWORD_MIN} characters)`} name="new_password" type="password" error={p.errors?.new_password} autocomplete="new-password" required minlength={PASSWORD_MIN} />
    <div>
      <button type="submit">Change password</button> {p.saved ? <span class="muted" role="status">Password changed.</span> : ''}
    </div>
  </form>
)

export const AccountPage = (p: { ctx: PageContext; user: UserResponse; flash?: Flash; profileErrors?: Errors; passwordErrors?: Errors }) => (
  <Layout title="My account" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>My account</h1>
    <dl class="facts">
      <dt>Email</dt>
      <dd safe>{p.user.email}</dd>
      <dt>Role</dt>
      <dd safe>{p.user.role}</dd>
      <dt>Member since</dt>
      <dd safe>{p.user.created_at.slice(0, 10)}</dd>
    </dl>
    <section>
      <h2>Profile</h2>
      <ProfileForm base={p.ctx.base} user={p.user} errors={p.profileErrors} />
    </section>
    <section>
      <h2>Password</h2>
      <PasswordForm base={p.ctx.base} errors={p.passwordErrors} />
    </section>
  </Layout>
)

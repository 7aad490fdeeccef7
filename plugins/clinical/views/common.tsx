// The clinical service's page frame and its simplest page: a titled message (email links land here).
// Every clinical page loads clinical.js (the sign-out across tabs of spec 2, Logout and clients); signed-in
// pages carry the sign-out form it listens for (`data-app-logout`).
import type { PropsWithChildren } from '@kitajs/html'
import { Layout, type Errors, type Flash } from '../../../views/layout'

export { Challenge, type Errors, type Flash, type PageContext } from '../../../views/layout'
import { PASSWORD_MAX, PASSWORD_MIN } from '../models/accounts'

export const BRAND = 'Clinical assistant'
/** The page scripts of the clinical pages, served from views/static. */
export const CLINICAL_SCRIPTS = ['clinical.js']


/** The signed-in user as the page frame shows them. */
export interface NavUser {
  name: string
}

const SignedInNav = ({ base, user }: { base: string; user: NavUser }) => (
  <>
    <a href={`${base}/account`} id="nav-name" safe>{user.name}</a>
    <form action={`${base}/logout`} method="post" data-app-logout>
      <button class="link" type="submit">Sign out</button>
    </form>
  </>
)

const SignedOutNav = ({ base }: { base: string }) => <a href={`${base}/`}>Sign in</a>

export interface ClinicalLayoutProps {
  base: string
  title: string
  user?: NavUser | null
  flash?: Flash
}

export const ClinicalLayout = (p: PropsWithChildren<ClinicalLayoutProps>) => (
  <Layout
    title={p.title}
    base={p.base}
    brand={BRAND}
    nav={p.user ? <SignedInNav base={p.base} user={p.user} /> : <SignedOutNav base={p.base} />}
    flash={p.flash}
    scripts={CLINICAL_SCRIPTS}
  >
    {p.children}
  </Layout>
)

export interface MessagePageProps {
  base: string
  title: string
  text: string
  kind: 'ok' | 'error'
  link?: { href: string; label: string }
  /** A second, cautionary line (e.g. a weak new password). */
  warning?: string
  user?: NavUser | null
}

export const MessagePage = (p: MessagePageProps) => (
  <ClinicalLayout title={p.title} base={p.base} user={p.user}>
    <h1 safe>{p.title}</h1>
    <p class={`flash ${p.kind}`} role="status" safe>{p.text}</p>
    {p.warning ? <p class="flash warning" safe>{p.warning}</p> : ''}
    {p.link ? <p><a href={p.link.href} safe>{p.link.label}</a></p> : ''}
  </ClinicalLayout>
)

/** The bot-challenge widget, on the forms it protects when it is configured. */
export interface InputProps {
  label: string
  name: string
  /** Element id, when one page has two inputs of the same name (defaults to the name). */
  id?: string
  type?: string
  value?: string
  error?: string
  hint?: string
  autocomplete?: string
  inputmode?: 'numeric' | 'text' | 'email'
  required?: boolean
  minlength?: number
  maxlength?: number
  autofocus?: boolean
}

/** A labelled input with its hint and its error message, for forms re-rendered after a rule failure. */
export const Input = (p: InputProps) => {
  const id = p.id ?? p.name
  const described = [p.hint ? `${id}-hint` : '', p.error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return (
    <label for={id}>
      <span safe>{p.label}</span>
      <input
        id={id}
        name={p.name}
        type={p.type ?? 'text'}
        value={p.value ?? ''}
        autocomplete={p.autocomplete}
        inputmode={p.inputmode}
        required={p.required}
        minlength={p.minlength}
        maxlength={p.maxlength}
        autofocus={p.autofocus}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      {p.hint ? <span class="field-hint muted" id={`${id}-hint`} safe>{p.hint}</span> : ''}
      {p.error ? <span class="field-error" id={`${id}-error`} safe>{p.error}</span> : ''}
    </label>
  )
}

/** The new password and its repetition, as the reset and change-password forms ask for them. */
export const NewPasswordInputs = ({ errors }: { errors?: Errors }) => (
  <>
    <Input
      label={`New password (at least ${PASSWORD_MIN} characters)`} name="newPassword" type="password" error={errors?.newPassword}
      autocomplete="new-password" required minlength={PASSWORD_MIN} maxlength={PASSWORD_MAX}
    />
    <Input
      label="New password again" name="confirmPassword" type="password" error={errors?.confirmPassword}
      autocomplete="new-password" required minlength={PASSWORD_MIN} maxlength={PASSWORD_MAX}
    />
  </>
)

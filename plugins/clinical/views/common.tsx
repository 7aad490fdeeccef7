// The clinical service's page frame and its simplest page: a titled message (email links land here).
// Every clinical page loads clinical.js (the sign-out across tabs of spec 2, Logout and clients); signed-in
// pages carry the sign-out form it listens for (`data-app-logout`).
import type { PropsWithChildren } from '@kitajs/html'
import { Field, Layout, type Errors, type Flash } from '../../../views/layout'
import { PASSWORD_MAX, PASSWORD_MIN } from '../models/accounts'

export { Challenge, type Errors, type Flash, type PageContext } from '../../../views/layout'

export const BRAND = 'Clinical assistant'
/** The page scripts of the clinical pages, served from views/static. */
export const CLINICAL_SCRIPTS = ['clinical.js']

/** The announcement a signed-in user sees above every page while an admin has it on (spec 3, Announcement). */
export interface Banner {
  enabled: boolean
  text: string
  type: 'info' | 'warning' | 'error' | 'success'
}

/**
 * The signed-in user as the page frame shows them: the role decides which staff areas the nav names, and the
 * announcement addressed to every signed-in user rides along (the page kit's session reads it).
 */
export interface NavUser {
  name: string
  role?: string
  announcement?: Banner | null
}

const BANNER_CLASS: Record<Banner['type'], string> = { info: 'info', warning: 'warning', error: 'error', success: 'ok' }

/** The announcement as a page shows it (the admin's live preview uses it too). */
export const AnnouncementBanner = ({ banner }: { banner: Banner }) => (
  <section class={`flash announcement ${BANNER_CLASS[banner.type]}`} aria-label="Announcement">
    <p safe>{banner.text}</p>
  </section>
)

const bannerOf = (user?: NavUser | null) =>
  user?.announcement?.enabled && user.announcement.text.trim() ? <AnnouncementBanner banner={user.announcement} /> : undefined

const isAuthor = (user: NavUser) => user.role === 'moderator' || user.role === 'admin'

const SignedInNav = ({ base, user }: { base: string; user: NavUser }) => (
  <>
    <a href={`${base}/workspace`}>Workspace</a>
    <a href={`${base}/encounters`}>Encounters</a>
    <a href={`${base}/memories`}>Memories</a>
    <a href={`${base}/documents`}>Documents</a>
    <a href={`${base}/directory`}>Directory</a>
    <a href={`${base}/learning`}>Learning</a>
    {isAuthor(user) ? <a href={`${base}/studio`}>Studio</a> : ''}
    {user.role === 'admin' ? <a href={`${base}/admin`}>Admin</a> : ''}
    <a href={`${base}/preferences`}>Preferences</a>
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
  /** Scripts of this page only (views/layout.tsx `pageScripts`). */
  pageScripts?: string[]
}

export const ClinicalLayout = (p: PropsWithChildren<ClinicalLayoutProps>) => (
  <Layout
    title={p.title}
    base={p.base}
    brand={BRAND}
    nav={p.user ? <SignedInNav base={p.base} user={p.user} /> : <SignedOutNav base={p.base} />}
    flash={p.flash}
    scripts={CLINICAL_SCRIPTS}
    pageScripts={p.pageScripts}
    banner={bannerOf(p.user)}
  >
    {p.children}
  </Layout>
)

/**
 * Asks for a new verification email, where a person learns their address is not confirmed yet (a used or expired
 * link, a sign-in refused with `Email not verified`).
 */
export const ResendVerificationForm = (p: { base: string; email?: string; error?: string }) => (
  <section id="resend-verification">
    <h2>Need a new verification email?</h2>
    <form class="stack" action={`${p.base}/resend-verification`} method="post">
      <Field label="Email" name="email" id="resend-email" type="email" value={p.email} error={p.error} autocomplete="email" required />
      <div>
        <button type="submit">Send a new link</button>
      </div>
    </form>
  </section>
)

export interface MessagePageProps {
  base: string
  title: string
  text: string
  kind: 'ok' | 'error'
  link?: { href: string; label: string }
  /** A second, cautionary line (e.g. a weak new password). */
  warning?: string
  /** Offers a new verification email under the message. */
  resend?: boolean
  user?: NavUser | null
}

export const MessagePage = (p: MessagePageProps) => (
  <ClinicalLayout title={p.title} base={p.base} user={p.user}>
    <h1 safe>{p.title}</h1>
    <p class={`flash ${p.kind}`} role="status" safe>{p.text}</p>
    {p.warning ? <p class="flash warning" safe>{p.warning}</p> : ''}
    {p.resend ? <ResendVerificationForm base={p.base} /> : ''}
    {p.link ? <p><a href={p.link.href} safe>{p.link.label}</a></p> : ''}
  </ClinicalLayout>
)

/** The new password and its repetition, as the reset and change-password forms ask for them. */
export const NewPasswordFields = ({ errors }: { errors?: Errors }) => (
  <>
    <Field
      label={`New password (at least ${PASSWORD_MIN} characters)`} name="newPassword" type="password" error={errors?.newPassword}
      autocomplete="new-password" required minlength={PASSWORD_MIN} maxlength={PASSWORD_MAX}
    />
    <Field
      label="New password again" name="confirmPassword" type="password" error={errors?.confirmPassword}
      autocomplete="new-password" required minlength={PASSWORD_MIN} maxlength={PASSWORD_MAX}
    />
  </>
)

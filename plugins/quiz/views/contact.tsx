// The quiz service's contact pages: the public form (anyone, signed in or not) with its thank-you state, and the
// admins' list of what it received, each unread message with a "Mark as read" form that htmx swaps in place.
import { Challenge, describedBy, Field, Layout, When, type Errors, type Flash, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import { CONTACT_MESSAGE_MAX, CONTACT_NAME_MAX, type ContactSubmission } from '../models/contact'
import { BRAND, SignedInNav, SignedOutNav } from './accounts'

/** The form's choices, in the words of the page; the values are the API's types. */
export const CONTACT_TYPES: Array<{ value: ContactSubmission['type']; label: string }> = [
  { value: 'question', label: 'A question' },
  { value: 'moderator', label: 'Ask to become a moderator' },
]
const typeLabel = (type: string) => CONTACT_TYPES.find((c) => c.value === type)?.label ?? type

export interface ContactValues { name?: string; email?: string; type?: string; message?: string }

const Nav = ({ base, user }: { base: string; user: UserResponse | null }) =>
  user ? <SignedInNav base={base} user={user} /> : <SignedOutNav base={base} />

// The contact form -----------------------------------------------------------------------------------------------

/**
 * The form posts as a whole page (hx-boost off): htmx does not swap a 429, which would hide when to try again, and
 * the challenge widget needs a fresh page to render again after a refused post.
 */
export const ContactForm = (p: { ctx: PageContext; values: ContactValues; errors?: Errors }) => {
  const v = p.values
  const e = p.errors ?? {}
  return (
    <form id="contact-form" class="stack" action={`${p.ctx.base}/contact`} method="post" hx-boost="false">
      <Field label="Your name" name="name" value={v.name} error={e.name} autocomplete="name" required maxlength={CONTACT_NAME_MAX} />
      <Field label="Your email" name="email" type="email" value={v.email} error={e.email} autocomplete="email" required
        hint="The answer comes to this address." />
      <label for="type">
        <span>What is it about?</span>
        <select id="type" name="type" aria-invalid={e.type ? 'true' : undefined} aria-describedby={describedBy('type', false, !!e.type)}>
          {CONTACT_TYPES.map((c) => <option value={c.value} selected={v.type === c.value ? true : undefined}>{c.label}</option>)}
        </select>
        {e.type ? <span class="field-error" id="type-error" safe>{e.type}</span> : ''}
      </label>
      <label for="message">
        <span>Message</span>
        <textarea id="message" name="message" rows="8" required maxlength={String(CONTACT_MESSAGE_MAX)}
          aria-invalid={e.message ? 'true' : undefined} aria-describedby={describedBy('message', true, !!e.message)} safe>{v.message ?? ''}</textarea>
        <span class="field-hint muted" id="message-hint">{`At most ${CONTACT_MESSAGE_MAX} characters.`}</span>
        {e.message ? <span class="field-error" id="message-error" safe>{e.message}</span> : ''}
      </label>
      <Challenge ctx={p.ctx} />
      {e.challenge ? <span class="field-error" id="challenge-error" safe>{e.challenge}</span> : ''}
      <button type="submit">Send message</button>
    </form>
  )
}

/** The page's content: the form, or the thank-you note after a message went out. */
export const ContactContent = (p: { ctx: PageContext; values: ContactValues; errors?: Errors; sent: boolean }) => (
  <div id="contact">
    {p.sent
      ? (
        <>
          <p class="flash ok" role="status">Thank you: your message has been sent. The admins of this service will answer you by email.</p>
          <p><a href={`${p.ctx.base}/contact`}>Send another message</a></p>
        </>
      )
      : (
        <>
          <p>Write to the admins of this service: ask a question, or ask to become a moderator (moderators upload documents and make quizzes).</p>
          <ContactForm ctx={p.ctx} values={p.values} errors={p.errors} />
        </>
      )}
  </div>
)

export const ContactPage = (p: { ctx: PageContext; user: UserResponse | null; values: ContactValues; errors?: Errors; flash?: Flash; sent: boolean }) => (
  <Layout title={p.sent ? 'Message sent' : 'Contact'} base={p.ctx.base} brand={BRAND} nav={<Nav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>{p.sent ? 'Message sent' : 'Contact us'}</h1>
    <ContactContent ctx={p.ctx} values={p.values} errors={p.errors} sent={p.sent} />
  </Layout>
)

// The admins' messages -------------------------------------------------------------------------------------------

/** A mailto link: the local part percent-encoded, so a `?` or `&` in an address cannot add headers to the mail. */
const mailto = (email: string) => {
  const at = email.lastIndexOf('@')
  return `mailto:${encodeURIComponent(email.slice(0, at))}${email.slice(at)}`
}

/** The message as sent, its line breaks kept. */
const MessageText = ({ text }: { text: string }) => (
  <>{text.split(/\r?\n/).map((line, i) => <>{i > 0 ? <br /> : ''}<span safe>{line}</span></>)}</>
)

/** One message; also the fragment "Mark as read" swaps in with htmx. */
export const SubmissionRow = (p: { base: string; s: ContactSubmission; saved?: boolean }) => {
  const url = `${p.base}/contact/messages/${p.s.id}/read`
  return (
    <tr id={`submission-${p.s.id}`}>
      <th scope="row" safe>{p.s.name}</th>
      <td><a href={mailto(p.s.email)} safe>{p.s.email}</a></td>
      <td>{typeLabel(p.s.type)}</td>
      <td><When iso={p.s.created_at} /></td>
      <td><MessageText text={p.s.message} /></td>
      <td>
        {p.s.read ? 'Read' : <strong>Unread</strong>}
        {p.saved ? <span class="muted" role="status"> (marked as read)</span> : ''}
        {p.s.read ? '' : (
          <form class="inline" action={url} method="post" hx-post={url} hx-target={`#submission-${p.s.id}`} hx-swap="outerHTML">
            <button type="submit" class="secondary">Mark as read</button>
          </form>
        )}
      </td>
    </tr>
  )
}

export const SubmissionList = ({ base, submissions }: { base: string; submissions: ContactSubmission[] }) => (
  <div id="messages">
    {submissions.length === 0 ? <p class="muted">No messages yet.</p> : (
      <table>
        <caption class="muted">Newest first. Answer a message by writing to its email address.</caption>
        <thead>
          <tr>
            <th scope="col">From</th><th scope="col">Email</th><th scope="col">About</th><th scope="col">Received</th>
            <th scope="col">Message</th><th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {submissions.map((s) => <SubmissionRow base={base} s={s} />)}
        </tbody>
      </table>
    )}
  </div>
)

export const MessagesPage = (p: { ctx: PageContext; user: UserResponse; submissions: ContactSubmission[] }) => (
  <Layout title="Messages" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1>Messages from the contact form</h1>
    <SubmissionList base={p.ctx.base} submissions={p.submissions} />
  </Layout>
)

// The console's settings page (spec 3, Configuration): one section and one form per area — the announcement with
// a live preview of the banner, mail (what applies now, the stored SMTP settings, a test email), single sign-on, and
// registration; the mail outbox with a retry per message. Secrets are never put in a page: their fields are always empty, and empty keeps the stored one.
// Every user or database string is a `safe` text child or an attribute.
import { describedBy, type Errors, Field, FieldNotes, type Flash, Notice, Problem, When } from '../../../views/layout'
import { AnnouncementBanner, type NavUser } from '../../clinical/views/common'
import { OIDC_BUTTON_LABEL_MAX, OIDC_CLIENT_ID_MAX, OIDC_CLIENT_SECRET_MAX, OIDC_ISSUER_MAX } from '../../clinical/exports'
import {
  ANNOUNCEMENT_TEXT_MAX, ANNOUNCEMENT_TYPES, type AnnouncementType, SMTP_FROM_MAX, SMTP_HOST_MAX, SMTP_PASS_MAX, SMTP_USER_MAX,
  type MailOutbox, type OutboxMessage, type SmtpStatus, TEST_EMAIL_TO_MAX,
} from '../models/config'
import { MAIL_MAX_AGE_MS, MAIL_SENT_RETENTION_MS } from '../../../src/core/outbox'
import { AdminLayout } from './layout'

/** A form of the page as it is shown: its values, and the refusal of its last post. */
interface Refused { errors?: Errors; message?: string }
export interface AnnouncementForm extends Refused { enabled: boolean; type: AnnouncementType; text: string }
export interface SmtpForm extends Refused { host: string; port: string; user: string; from: string; secure: boolean; passStored: boolean }
export interface TestEmailForm { to: string; result?: { success: boolean; message: string }; error?: string }
export interface OidcForm extends Refused {
  enabled: boolean; issuer: string; clientId: string; disableLocalAuth: boolean; buttonLabel: string; secretStored: boolean
}
export interface RegistrationForm extends Refused { enabled: boolean }

export interface SettingsView {
  base: string
  announcement: AnnouncementForm
  mail: SmtpStatus
  outbox: Pick<MailOutbox, 'counts' | 'messages'>
  smtp: SmtpForm
  test: TestEmailForm
  oidc: OidcForm
  registration: RegistrationForm
}

export const settingsUrl = (base: string, area = '') => `${base}/admin/settings${area}`

const TYPE_WORDS: Record<AnnouncementType, string> = { info: 'Information', warning: 'Warning', error: 'Problem', success: 'Good news' }

const Check = (p: { id: string; name: string; checked: boolean; label: string; value?: string; error?: string }) => (
  <>
    <label class="choice" for={p.id}>
      <input type="checkbox" id={p.id} name={p.name} value={p.value ?? 'true'} checked={p.checked}
        aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(p.id, undefined, p.error)} />
      <span safe>{p.label}</span>
    </label>
    <FieldNotes id={p.id} error={p.error} />
  </>
)

// ---- announcement --------------------------------------------------------------------------------------------------

/** The banner as every user would see it, from the form's values: the fragment of the live preview. */
export const AnnouncementPreview = ({ a }: { a: Pick<AnnouncementForm, 'enabled' | 'type' | 'text'> }) => (
  <div id="announcement-preview" class="admin-preview" aria-live="polite">
    <p class="muted">
      {!a.text.trim() ? 'No text yet: there is nothing to show.'
        : a.enabled ? 'Switched on: once saved, every signed-in user sees this above each page.'
          : 'Switched off: once saved, nobody sees it.'}
    </p>
    {a.text.trim() ? <AnnouncementBanner banner={{ enabled: a.enabled, type: a.type, text: a.text }} /> : ''}
  </div>
)

const AnnouncementSection = ({ base, a }: { base: string; a: AnnouncementForm }) => {
  const preview = settingsUrl(base, '/announcement/preview')
  return (
    <section id="announcement" aria-labelledby="announcement-title">
      <h2 id="announcement-title">Announcement</h2>
      <p>A message above every page for everyone signed in: planned downtime, a new feature, a warning.</p>
      <form class="stack" action={settingsUrl(base, '/announcement')} method="post">
        <Problem text={a.message} />
        {/* Any change asks for the preview (the form's values ride along with a POST); the save stays a plain submit. */}
        <div class="stack" hx-post={preview} hx-trigger="input delay:300ms" hx-target="#announcement-preview" hx-swap="outerHTML">
          <Check id="announcement-enabled" name="enabled" checked={a.enabled} label="Show the announcement" error={a.errors?.enabled} />
          <label for="announcement-type">
            <span>Type</span>
            <select id="announcement-type" name="type" aria-invalid={a.errors?.type ? 'true' : undefined}
              aria-describedby={describedBy('announcement-type', undefined, a.errors?.type)}>
              {ANNOUNCEMENT_TYPES.map((t) => <option value={t} selected={a.type === t} safe>{TYPE_WORDS[t]}</option>)}
            </select>
            <FieldNotes id="announcement-type" error={a.errors?.type} />
          </label>
          <label for="announcement-text">
            <span>Text</span>
            <textarea id="announcement-text" name="text" rows="3" maxlength={ANNOUNCEMENT_TEXT_MAX}
              aria-invalid={a.errors?.text ? 'true' : undefined}
              aria-describedby={describedBy('announcement-text', true, a.errors?.text)} safe>{a.text}</textarea>
            <FieldNotes id="announcement-text" hint={`At most ${ANNOUNCEMENT_TEXT_MAX} characters, shown as plain text.`} error={a.errors?.text} />
          </label>
        </div>
        <div class="actions">
          <button type="submit">Save the announcement</button>
          <button type="submit" class="secondary" formaction={preview}>Preview</button>
        </div>
      </form>
      <h3>Preview</h3>
      <AnnouncementPreview a={a} />
    </section>
  )
}

// ---- mail ----------------------------------------------------------------------------------------------------------

const SOURCE_WORDS: Record<SmtpStatus['source'], string> = {
  env: 'The server\'s environment (SMTP_* or RESEND_API_KEY)',
  database: 'The SMTP settings stored here',
  none: 'Nothing: mail is not sent, only written to the server log',
}

const MailStatus = ({ s }: { s: SmtpStatus }) => (
  <>
    <dl class="facts" id="mail-status">
      <dt>Mail is sent with</dt><dd safe>{SOURCE_WORDS[s.source]}</dd>
      {s.configured && s.host ? <><dt>Server</dt><dd safe>{`${s.host}${s.port ? `:${s.port}` : ''}`}</dd></> : ''}
      {s.configured ? <><dt>Signs in as</dt><dd safe>{s.user || 'No sign-in'}</dd></> : ''}
      {s.configured ? <><dt>Sender</dt><dd safe>{s.from || 'The server\'s default sender'}</dd></> : ''}
    </dl>
    {s.note ? <p class="flash warning" safe>{s.note}</p> : ''}
  </>
)

/** The test email's form and its answer in words: the fragment of a send. */
export const TestEmailBox = ({ base, test }: { base: string; test: TestEmailForm }) => (
  <div id="test-email">
    <form class="stack" action={settingsUrl(base, '/test-email')} method="post" hx-post={settingsUrl(base, '/test-email')}
      hx-target="#test-email" hx-swap="outerHTML">
      <Field label="Send to" name="to" id="test-email-to" type="email" value={test.to} error={test.error} autocomplete="email"
        maxlength={TEST_EMAIL_TO_MAX} required hint="One message, through the mail settings that apply now." />
      <div>
        <button type="submit">Send a test email</button>
      </div>
    </form>
    {test.result?.success ? <Notice text={test.result.message} /> : ''}
    {test.result && !test.result.success ? <Problem text={`Not sent. ${test.result.message}`} /> : ''}
  </div>
)

const OutboxRow = ({ base, m }: { base: string; m: OutboxMessage }) => (
  <tr id={`mail-${m.id}`}>
    <th scope="row" safe>{m.to}</th>
    <td safe>{m.subject}</td>
    <td>{m.status === 'failed' ? <strong>Given up</strong> : 'Waiting'}</td>
    <td>{String(m.attempts)}</td>
    <td safe>{m.lastError ?? ''}</td>
    <td>{m.nextAttemptAt ? <When iso={m.nextAttemptAt} /> : ''}</td>
    <td>
      <form action={settingsUrl(base, `/outbox/${m.id}/retry`)} method="post">
        <button type="submit" class="secondary">Retry now<span class="visually-hidden" safe>{` the message to ${m.to}`}</span></button>
      </form>
    </td>
  </tr>
)

/** Mail the server has not accepted yet, kept and tried again; the given-up messages, each with a retry. */
const OutboxBox = ({ base, outbox }: { base: string; outbox: SettingsView['outbox'] }) => (
  <div id="mail-outbox">
    <h3>Outbox</h3>
    <p class="muted">
      Every email is kept here until the mail server accepts it, tried again with growing pauses, and given up
      after {String(MAIL_MAX_AGE_MS / 3_600_000)} hours. The test email is sent directly and never waits here.
    </p>
    <dl class="facts">
      <dt>Waiting</dt><dd>{String(outbox.counts.pending)}</dd>
      <dt>Given up</dt><dd>{String(outbox.counts.failed)}</dd>
      <dt>{`Sent, last ${MAIL_SENT_RETENTION_MS / 86_400_000} days`}</dt><dd>{String(outbox.counts.sent)}</dd>
    </dl>
    {outbox.messages.length === 0 ? <p>Nothing is waiting: every email was accepted by the mail server.</p> : (
      <table>
        <caption class="visually-hidden">Emails waiting or given up, the oldest first</caption>
        <thead>
          <tr>
            <th scope="col">To</th><th scope="col">Subject</th><th scope="col">State</th><th scope="col">Attempts</th>
            <th scope="col">Last error</th><th scope="col">Next attempt</th><th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {outbox.messages.map((m) => <OutboxRow base={base} m={m} />)}
        </tbody>
      </table>
    )}
  </div>
)

const MailSection = ({ base, mail, outbox, smtp, test }: Pick<SettingsView, 'base' | 'mail' | 'outbox' | 'smtp' | 'test'>) => (
  <section id="mail" aria-labelledby="mail-title">
    <h2 id="mail-title">Mail</h2>
    <p>Verification and password reset emails go out this way.</p>
    <h3>What applies now</h3>
    <MailStatus s={mail} />
    <h3>SMTP settings stored here</h3>
    <p class="muted">Used from the next email on, unless the server's environment configures mail: that always wins.</p>
    <form class="stack" action={settingsUrl(base, '/smtp')} method="post">
      <Problem text={smtp.message} />
      <div class="admin-fields">
        <Field label="Host" name="host" id="smtp-host" value={smtp.host} error={smtp.errors?.host} maxlength={SMTP_HOST_MAX}
          hint="A host name or IP address. Empty removes every stored SMTP setting." />
        <Field label="Port" name="port" id="smtp-port" value={smtp.port} error={smtp.errors?.port} inputmode="numeric" maxlength={5}
          hint="1 to 65535: usually 587, or 465 with TLS from the start." />
      </div>
      <div class="admin-fields">
        <Field label="User" name="user" id="smtp-user" value={smtp.user} error={smtp.errors?.user} maxlength={SMTP_USER_MAX}
          autocomplete="off" hint="Empty sends without signing in (and removes a stored password)." />
        <Field label="Password" name="pass" id="smtp-pass" type="password" error={smtp.errors?.pass} maxlength={SMTP_PASS_MAX}
          autocomplete="new-password"
          hint={smtp.passStored ? 'A password is stored and is never shown. Leave this empty to keep it.' : 'No password is stored.'} />
      </div>
      <Field label="Sender" name="from" id="smtp-from" value={smtp.from} error={smtp.errors?.from} maxlength={SMTP_FROM_MAX}
        hint="An address, or Name <address>. Empty uses the server's default sender." />
      <Check id="smtp-secure" name="secure" checked={smtp.secure} label="TLS from the start (port 465); otherwise STARTTLS when the server offers it"
        error={smtp.errors?.secure} />
      <div>
        <button type="submit">Save the SMTP settings</button>
      </div>
    </form>
    <h3>Send a test email</h3>
    <TestEmailBox base={base} test={test} />
    <OutboxBox base={base} outbox={outbox} />
  </section>
)

// ---- single sign-on and registration -------------------------------------------------------------------------------

const OidcSection = ({ base, o }: { base: string; o: OidcForm }) => (
  <section id="sso" aria-labelledby="sso-title">
    <h2 id="sso-title">Single sign-on</h2>
    <p>Sign-in through your organisation's identity provider (OpenID Connect).</p>
    <form class="stack" action={settingsUrl(base, '/oidc')} method="post">
      <Problem text={o.message} />
      <Check id="oidc-enabled" name="oidc.enabled" checked={o.enabled} label="Offer single sign-on (needs an issuer and a client id)"
        error={o.errors?.['oidc.enabled']} />
      <Field label="Issuer URL" name="oidc.issuer" id="oidc-issuer" type="url" value={o.issuer} error={o.errors?.['oidc.issuer']}
        maxlength={OIDC_ISSUER_MAX} hint="The identity provider's address, e.g. https://idp.example.org/realms/clinic" />
      <div class="admin-fields">
        <Field label="Client id" name="oidc.client_id" id="oidc-client-id" value={o.clientId} error={o.errors?.['oidc.client_id']}
          maxlength={OIDC_CLIENT_ID_MAX} autocomplete="off" />
        <Field label="Client secret" name="oidc.client_secret" id="oidc-client-secret" type="password" error={o.errors?.['oidc.client_secret']}
          maxlength={OIDC_CLIENT_SECRET_MAX} autocomplete="new-password"
          hint={o.secretStored ? 'A secret is stored and is never shown. Leave this empty to keep it.' : 'No secret is stored.'} />
      </div>
      {o.secretStored ? <Check id="oidc-clear-secret" name="clear_secret" checked={false} label="Remove the stored client secret" /> : ''}
      <Check id="oidc-disable-local" name="oidc.disable_local_auth" checked={o.disableLocalAuth}
        label="Turn off password sign-in for everyone but admins while single sign-on is on" error={o.errors?.['oidc.disable_local_auth']} />
      <Field label="Sign-in button text" name="oidc.button_label" id="oidc-button-label" value={o.buttonLabel}
        error={o.errors?.['oidc.button_label']} maxlength={OIDC_BUTTON_LABEL_MAX} hint="Empty restores the default text." />
      <div>
        <button type="submit">Save single sign-on</button>
      </div>
    </form>
  </section>
)

const RegistrationSection = ({ base, r }: { base: string; r: RegistrationForm }) => (
  <section id="registration" aria-labelledby="registration-title">
    <h2 id="registration-title">Registration</h2>
    <form class="stack" action={settingsUrl(base, '/registration')} method="post">
      <Problem text={r.message} />
      <fieldset>
        <legend>New accounts</legend>
        <label class="choice" for="registration-open">
          <input type="radio" id="registration-open" name="enabled" value="true" checked={r.enabled} />
          <span>Open: anyone can create an account</span>
        </label>
        <label class="choice" for="registration-closed">
          <input type="radio" id="registration-closed" name="enabled" value="false" checked={!r.enabled} />
          <span>Closed: nobody can register (the very first account always can)</span>
        </label>
      </fieldset>
      <div>
        <button type="submit">Save registration</button>
      </div>
    </form>
  </section>
)

// ---- the page ------------------------------------------------------------------------------------------------------

export const SettingsPage = (p: SettingsView & { user: NavUser; flash?: Flash }) => (
  <AdminLayout base={p.base} title="Settings" user={p.user} area="/settings" flash={p.flash}>
    <h1>Settings</h1>
    <nav class="actions admin-toc" aria-label="Settings areas">
      <a href="#announcement">Announcement</a>
      <a href="#mail">Mail</a>
      <a href="#sso">Single sign-on</a>
      <a href="#registration">Registration</a>
    </nav>
    <AnnouncementSection base={p.base} a={p.announcement} />
    <MailSection base={p.base} mail={p.mail} outbox={p.outbox} smtp={p.smtp} test={p.test} />
    <OidcSection base={p.base} o={p.oidc} />
    <RegistrationSection base={p.base} r={p.registration} />
  </AdminLayout>
)

// The console's settings page (spec 3, Configuration), for admins: /admin/settings with one form per area, each
// posting to its own address under it — the announcement (and its live preview), the SMTP settings, a test email,
// a retry of a message in the mail outbox, single sign-on, registration. Each change goes through the same service
// function as the API, audited alike.
// Post/Redirect/Get with a notice; a refusal re-renders the page (422) with the message by its field. The test
// email's answer is the page (or its fragment) itself: the outcome exists only in this answer.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { SMTP_DEFAULT_PORT } from '../../../src/core/mail'
import { RowId } from '../../../src/core/schema'
import { bodyLimits } from '../../../src/envelope'
import { isFragment, type Flash } from '../../../views/layout'
import { FormBody, formErrors, formFields, hasErrors, html, redirect } from '../../../views/page'
import {
  OIDC_BUTTON_LABEL_MAX, OIDC_CLIENT_ID_MAX, OIDC_CLIENT_SECRET_MAX, OIDC_ISSUER_MAX, saveOidcConfig, type ClinicalUser, type OidcConfigInput,
} from '../../clinical/exports'
import { clinicalPageKit } from '../../clinical/pages/common'
import type { NavUser } from '../../clinical/views/common'
import type { AdminState } from '../index'
import { ANNOUNCEMENT_TYPES, type AnnouncementType, SmtpBody, TestEmailBody } from '../models/config'
import * as admin from '../service'
import * as config from '../services/config'
import {
  AnnouncementPreview, type AnnouncementForm, SettingsPage, settingsUrl, type SettingsView, type TestEmailForm, TestEmailBox,
} from '../views/settings'
import { actorOf, noticeOf, refusalOf, requireAdmin, type Refusal } from './common'

const NOTICES = {
  announcement: 'The announcement is saved.',
  smtp: 'The SMTP settings are saved: mail uses them from the next email on, unless the environment configures mail.',
  mail_sent: 'The message was tried again and the mail server accepted it.',
  mail_waiting: 'The message was tried again and not accepted: it stays in the outbox (see its last error).',
  oidc: 'The single sign-on settings are saved.',
  registration_open: 'Registration is open: anyone can create an account.',
  registration_closed: 'Registration is closed: nobody can create an account.',
} as const
const NoticeQuery = t.Object({ notice: t.Optional(t.String()) })
const OutboxIdParams = t.Object({ id: RowId('The message id') })

/** The service's field keys -> the form's names. */
const ANNOUNCEMENT_FIELDS = { 'announcement.enabled': 'enabled', 'announcement.type': 'type', 'announcement.text': 'text' }
const SMTP_FIELDS = { 'smtp.host': 'host', 'smtp.port': 'port', 'smtp.user': 'user', 'smtp.pass': 'pass', 'smtp.from': 'from', 'smtp.secure': 'secure' }
/** The lengths PUT /api/auth/oidc/config takes (its body model), checked before the service's rules. */
const OidcLengths = t.Object({
  'oidc.issuer': t.String({ maxLength: OIDC_ISSUER_MAX }),
  'oidc.client_id': t.String({ maxLength: OIDC_CLIENT_ID_MAX }),
  'oidc.client_secret': t.Optional(t.String({ maxLength: OIDC_CLIENT_SECRET_MAX })),
  'oidc.button_label': t.String({ maxLength: OIDC_BUTTON_LABEL_MAX }),
})
const PORT_RULE = 'A port number from 1 to 65535'

const asType = (value: string | undefined): AnnouncementType =>
  (ANNOUNCEMENT_TYPES as readonly string[]).includes(value ?? '') ? (value as AnnouncementType) : 'info'
const announcementOf = (f: Record<string, string>): AnnouncementForm => ({ enabled: f.enabled === 'true', type: asType(f.type), text: f.text ?? '' })
const refusedFlash = (area: string): Flash => ({ kind: 'error', text: `Not saved: see the messages under ${area}.` })
/** A refusal as its section shows it: the messages by the fields, or one line when no field is named. */
const shown = (r: Refusal) => ({ errors: r.errors, message: r.errors ? undefined : r.message })
const invalid = (errors: Record<string, string>) => HttpError.unprocessable('invalid_setting', Object.values(errors)[0]!, errors)

export const settingsPages = (state: AdminState) => {
  const { core, clinical: { audit } } = state
  const base = core.config.clinicalBasePath
  const home = settingsUrl(base)

  /** The page's forms with what is stored (secrets only as "stored or not") and the mail settings that apply. */
  const current = async (): Promise<SettingsView> => {
    const [all, mail, outbox] = await Promise.all([config.listConfig(core), config.smtpStatus(core), config.mailOutbox(core)])
    return {
      base,
      announcement: { enabled: all['announcement.enabled'] === 'true', type: asType(all['announcement.type']), text: all['announcement.text'] ?? '' },
      mail,
      outbox,
      smtp: {
        host: all['smtp.host'] ?? '', port: all['smtp.port'] || String(SMTP_DEFAULT_PORT), user: all['smtp.user'] ?? '',
        from: all['smtp.from'] ?? '', secure: all['smtp.secure'] === 'true', passStored: Boolean(all['smtp.pass']),
      },
      test: { to: '' },
      oidc: {
        enabled: all['oidc.enabled'] === 'true', issuer: all['oidc.issuer'] ?? '', clientId: all['oidc.client_id'] ?? '',
        disableLocalAuth: all['oidc.disable_local_auth'] === 'true', buttonLabel: all['oidc.button_label'] ?? '',
        secretStored: Boolean(all['oidc.client_secret']),
      },
      registration: { enabled: all.registration_enabled !== 'false' },
    }
  }
  type Parts = (now: SettingsView) => Partial<SettingsView>
  const page = async (user: NavUser, parts: Parts = () => ({}), o: { flash?: Flash; status?: number; headers?: Record<string, string> } = {}) => {
    const now = await current()
    return html(SettingsPage({ ...now, ...parts(now), user, flash: o.flash }), { status: o.status, headers: o.headers })
  }
  /** A POST-only address answers a GET (a reload, a bookmark) with its section of the page. */
  const section = (user: ClinicalUser, anchor: string) => {
    requireAdmin(user)
    return redirect(`${home}#${anchor}`)
  }

  return new Elysia()
    .use(clinicalPageKit(state.clinical))
    .use(bodyLimits)
    .get('/admin/settings', async ({ user, query }) => {
      requireAdmin(user)
      return page(user, undefined, { flash: noticeOf(NOTICES, query.notice) })
    }, { signedIn: true, query: NoticeQuery })

    // ---- announcement ----
    .get('/admin/settings/announcement', ({ user }) => section(user, 'announcement'), { signedIn: true })
    .post('/admin/settings/announcement', async ({ request, user, body }) => {
      requireAdmin(user)
      const f = formFields(body)
      const a = announcementOf(f)
      const actor = actorOf(core, user, request)
      try {
        // The text first: its length is the rule a person can break, and then nothing is written at all.
        await config.setConfigValue(core, audit, actor, 'announcement.text', a.text)
        await config.setConfigValue(core, audit, actor, 'announcement.type', f.type ?? '')
        await config.setConfigValue(core, audit, actor, 'announcement.enabled', String(a.enabled))
        return redirect(`${home}?notice=announcement`)
      } catch (err) {
        const r = refusalOf(err, ANNOUNCEMENT_FIELDS)
        return page(user, () => ({ announcement: { ...a, ...shown(r) } }), { status: 422, headers: r.headers, flash: refusedFlash('Announcement') })
      }
    }, { signedIn: true, body: FormBody })
    .get('/admin/settings/announcement/preview', ({ user }) => section(user, 'announcement'), { signedIn: true })
    .post('/admin/settings/announcement/preview', async ({ request, user, body }) => {
      requireAdmin(user)
      const a = announcementOf(formFields(body))
      if (isFragment(request)) return html(AnnouncementPreview({ a }))
      return page(user, () => ({ announcement: a }), { flash: { kind: 'ok', text: 'This is a preview: nothing is saved yet.' } })
    }, { signedIn: true, body: FormBody })

    // ---- mail ----
    .get('/admin/settings/smtp', ({ user }) => section(user, 'mail'), { signedIn: true })
    .post('/admin/settings/smtp', async ({ request, user, body }) => {
      requireAdmin(user)
      const f = formFields(body)
      const values = { host: f.host ?? '', port: (f.port ?? '').trim(), user: f.user ?? '', from: f.from ?? '', secure: f.secure === 'true' }
      try {
        // Without a host every stored setting is removed, so the port does not matter then.
        const noHost = values.host.trim() === '' && values.port === ''
        const port = noHost ? SMTP_DEFAULT_PORT : /^\d{1,5}$/.test(values.port) ? Number(values.port) : 0
        const input = { ...values, port, pass: f.pass ?? '' }
        const errors = formErrors(SmtpBody, input)
        delete errors.port
        if (port < 1 || port > 65535) errors.port = PORT_RULE
        if (hasErrors(errors)) throw invalid(errors)
        await config.saveSmtp(core, audit, actorOf(core, user, request), input)
        return redirect(`${home}?notice=smtp`)
      } catch (err) {
        const r = refusalOf(err, SMTP_FIELDS)
        return page(user, (now) => ({ smtp: { ...now.smtp, ...values, ...shown(r) } }), { status: 422, headers: r.headers, flash: refusedFlash('Mail') })
      }
    }, { signedIn: true, body: FormBody })
    .get('/admin/settings/test-email', ({ user }) => section(user, 'mail'), { signedIn: true })
    .post('/admin/settings/test-email', async ({ request, user, body }) => {
      requireAdmin(user)
      const to = (formFields(body).to ?? '').trim()
      let test: TestEmailForm
      let status = 200
      let headers: Record<string, string> = {}
      const errors = formErrors(TestEmailBody, { to })
      if (hasErrors(errors)) {
        test = { to, error: errors.to }
        status = 422
      } else {
        try {
          test = { to, result: await config.sendTestEmail(core, audit, actorOf(core, user, request), to) }
        } catch (err) {
          const r = refusalOf(err)
          test = { to, error: r.errors?.to ?? r.message }
          status = 422
          headers = r.headers
        }
      }
      if (isFragment(request)) return html(TestEmailBox({ base, test }), { status, headers })
      return page(user, () => ({ test }), { status, headers })
    }, { signedIn: true, body: FormBody })

    .get('/admin/settings/outbox/:id/retry', ({ user }) => section(user, 'mail-outbox'), { signedIn: true, params: OutboxIdParams })
    .post('/admin/settings/outbox/:id/retry', async ({ request, user, params }) => {
      requireAdmin(user)
      try {
        const message = await config.retryMail(core, audit, actorOf(core, user, request), params.id)
        return redirect(`${home}?notice=${message.status === 'sent' ? 'mail_sent' : 'mail_waiting'}#mail-outbox`)
      } catch (err) {
        const r = refusalOf(err)
        return page(user, undefined, { status: (err as HttpError).status, headers: r.headers, flash: { kind: 'error', text: r.message } })
      }
    }, { signedIn: true, params: OutboxIdParams })

    // ---- single sign-on ----
    .get('/admin/settings/oidc', ({ user }) => section(user, 'sso'), { signedIn: true })
    .post('/admin/settings/oidc', async ({ request, user, body }) => {
      requireAdmin(user)
      const f = formFields(body)
      const flag = (key: string) => (f[key] === 'true' ? 'true' : 'false')
      const input: OidcConfigInput = {
        'oidc.enabled': flag('oidc.enabled'), 'oidc.issuer': f['oidc.issuer'] ?? '', 'oidc.client_id': f['oidc.client_id'] ?? '',
        'oidc.disable_local_auth': flag('oidc.disable_local_auth'), 'oidc.button_label': f['oidc.button_label'] ?? '',
      }
      // An empty secret field keeps the stored secret: the page never shows it, so empty is what every save sends.
      const secret = f['oidc.client_secret'] ?? ''
      if (f.clear_secret === 'true') input['oidc.client_secret'] = ''
      else if (secret !== '') input['oidc.client_secret'] = secret
      try {
        const errors = formErrors(OidcLengths, input)
        if (hasErrors(errors)) throw invalid(errors)
        const written = await saveOidcConfig(core, input)
        const actor = actorOf(core, user, request)
        audit.write({ action: 'oidc_settings_changed', userId: actor.id, ip: actor.ip, details: { keys: written } })
        return redirect(`${home}?notice=oidc`)
      } catch (err) {
        const r = refusalOf(err)
        const oidc = {
          enabled: input['oidc.enabled'] === 'true', issuer: input['oidc.issuer']!, clientId: input['oidc.client_id']!,
          disableLocalAuth: input['oidc.disable_local_auth'] === 'true', buttonLabel: input['oidc.button_label']!,
        }
        return page(user, (now) => ({ oidc: { ...now.oidc, ...oidc, ...shown(r) } }), { status: 422, headers: r.headers, flash: refusedFlash('Single sign-on') })
      }
    }, { signedIn: true, body: FormBody })

    // ---- registration ----
    .get('/admin/settings/registration', ({ user }) => section(user, 'registration'), { signedIn: true })
    .post('/admin/settings/registration', async ({ request, user, body }) => {
      requireAdmin(user)
      const enabled = formFields(body).enabled
      if (enabled !== 'true' && enabled !== 'false') {
        return page(user, (now) => ({ registration: { ...now.registration, message: 'Choose open or closed.' } }),
          { status: 422, flash: refusedFlash('Registration') })
      }
      await admin.setRegistrationEnabled(core, audit, actorOf(core, user, request), enabled === 'true')
      return redirect(`${home}?notice=${enabled === 'true' ? 'registration_open' : 'registration_closed'}`)
    }, { signedIn: true, body: FormBody })
}

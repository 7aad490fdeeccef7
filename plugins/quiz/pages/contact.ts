// The quiz service's contact pages: /contact, the public form (prefilled for a signed-in user), and
// /contact/messages, where admins read what it received and mark messages read. The rules (limits, the per-address
// rate rule, the bot challenge, the mail to every admin, the admin check) stay in services/contact.ts.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { RowId } from '../../../src/core/schema'
import { isFragment, pageContext, type Errors, type Flash } from '../../../views/layout'
import { challengeToken, FormBody, formErrors, formFailure, formFields, hasErrors, html, redirect } from '../../../views/page'
import { ContactBody } from '../models/contact'
import * as contact from '../services/contact'
import type { QuizState } from '../state'
import { ContactContent, ContactPage, CONTACT_TYPES, MessagesPage, SubmissionList, SubmissionRow, type ContactValues } from '../views/contact'

/** The API's name of the bot-challenge token, which a form may post instead of the widget's own field. */
const CHALLENGE_FIELD = 'challenge_token'
const SubmissionParams = t.Object({ id: RowId() })

/** The wait of a 429 in words: "about 5 minutes", "a minute", "20 seconds". */
function waitInWords(retryAfter: string | undefined): string {
  const s = Number(retryAfter)
  if (!(s > 0)) return 'a while'
  if (s < 60) return `${Math.ceil(s)} seconds`
  const minutes = Math.ceil(s / 60)
  return minutes === 1 ? 'a minute' : `about ${minutes} minutes`
}

/** A refused form in the page's words: field messages next to the fields, the challenge's next to its widget. */
function refusal(err: unknown): { status: number; errors: Errors; flash: NonNullable<Flash>; headers: Record<string, string> } {
  const { errors, flash, headers } = formFailure(err)
  const code = err instanceof HttpError ? err.code : ''
  if (err instanceof HttpError && err.status === 429) {
    return { status: 429, errors: {}, headers, flash: { kind: 'error', text: `${flash.text}. You can send a message again in ${waitInWords(headers['retry-after'])}.` } }
  }
  if (code.startsWith('challenge_')) {
    return { status: 422, errors: { challenge: 'Complete the check that you are not a robot, then send again.' }, flash, headers }
  }
  // the service's "must not be blank" (a name or message of spaces only) in the words formErrors uses
  const fields = Object.fromEntries(Object.entries(errors ?? {}).map(([k, v]) => [k, code === 'blank' ? 'Required' : v]))
  return { status: 422, errors: fields, flash: { kind: 'error', text: 'Check the form: some fields need your attention.' }, headers }
}

export const contactPages = ({ core, pages }: QuizState) => {
  const base = core.config.quizBasePath
  const ctx = pageContext(base, core.config.challenge)

  return new Elysia({ prefix: '/contact' })
    .use(pages)
    .get('', ({ request, user, query }) => {
      const sent = query.sent === '1'
      const values: ContactValues = { name: user?.name ?? '', email: user?.email ?? '' }
      if (isFragment(request)) return html(ContactContent({ ctx, values, sent }))
      return html(ContactPage({ ctx, user, values, sent }))
    }, { page: true, visitor: true, query: t.Object({ sent: t.Optional(t.String()) }) })
    .post('', async ({ request, user, body }) => {
      const f = formFields(body)
      // A browser sends a textarea's line breaks as CRLF; its maxlength counted each as one character, and so do we.
      const message = (f.message ?? '').replace(/\r\n?/g, '\n')
      const input = { name: f.name ?? '', email: f.email ?? '', type: f.type ?? '', message }
      const values: ContactValues = input
      const render = (status: number, errors: Errors, flash: Flash, headers: Record<string, string> = {}) =>
        html(isFragment(request) ? ContactContent({ ctx, values, errors, sent: false }) : ContactPage({ ctx, user, values, errors, flash, sent: false }), { status, headers })
      const errors = formErrors(ContactBody, input)
      if (errors.type) errors.type = `Choose one of: ${CONTACT_TYPES.map((c) => c.label).join(', ')}`
      if (hasErrors(errors)) return render(422, errors, { kind: 'error', text: 'Check the form: some fields need your attention.' })
      try {
        await contact.submitContact(core, { ...(input as ContactBody), challenge_token: challengeToken(f, CHALLENGE_FIELD) }, core.clientAddress(request))
      } catch (err) {
        const r = refusal(err)
        return render(r.status, r.errors, r.flash, r.headers)
      }
      return redirect(`${base}/contact?sent=1`)
    }, { page: true, visitor: true, body: FormBody })
    .get('/messages', async ({ request, user }) => {
      const submissions = await contact.listSubmissions(core, user)
      if (isFragment(request)) return html(SubmissionList({ base, submissions }))
      return html(MessagesPage({ ctx, user, submissions }))
    }, { signedIn: true })
    .post('/messages/:id/read', async ({ request, user, params }) => {
      await contact.markRead(core, user, params.id)
      if (!isFragment(request)) return redirect(`${base}/contact/messages#submission-${params.id}`)
      const s = (await contact.listSubmissions(core, user)).find((x) => x.id === params.id)
      if (!s) throw HttpError.notFound('submission_not_found', 'Contact message not found')
      return html(SubmissionRow({ base, s, saved: true }))
    }, { signedIn: true, params: SubmissionParams, body: FormBody })
    // A boosted form post puts its action in the address bar: a reload (a GET) lands on the list, never a 404.
    .get('/messages/:id/read', () => redirect(`${base}/contact/messages`), { signedIn: true })
}

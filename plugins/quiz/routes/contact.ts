// Spec 1, Contact, the JSON API. Routing, guards, validation and response shaping only; the admin check of the
// two submission routes is made in the service (the spec asks for it inside the handler, not as a route guard).
import { Elysia, t } from 'elysia'
import { CONTACT_MESSAGE_MAX, CONTACT_NAME_MAX, ContactBody, ContactSubmission, SubmissionParams, SuccessResponse } from '../models/contact'
import * as contact from '../services/contact'
import type { QuizState } from '../state'

const tags = ['Contact']
const rule = contact.CONTACT_RULE

export const contactRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/contact' })
    .use(auth)
    .post('', async ({ body, request }) => {
      await contact.submitContact(core, body, core.clientAddress(request))
      return { success: true as const }
    }, {
      body: ContactBody, response: SuccessResponse,
      detail: {
        tags, summary: 'Send a message to the admins',
        description: [
          `No sign-in needed. name (1 to ${CONTACT_NAME_MAX} characters) and message (1 to ${CONTACT_MESSAGE_MAX}) are trimmed and`,
          'must not be blank; email must be a valid address; type is `question` or `moderator`; anything else is 422. The',
          'message is stored and mailed to every admin in the background: `{success: true}` does not wait for the mail, and a',
          `mail failure does not undo it (admins read every message with GET ${api}/contact/submissions). Limit: ${rule.limit}`,
          `messages per client address per hour; over it, 429 with a \`Retry-After\` header (seconds). When the server has a`,
          'bot challenge (CHALLENGE_SECRET_KEY), challenge_token is required: 400 when missing or failed, 502 when the',
          'challenge cannot be verified.',
        ].join(' '),
      },
    })
    .get('/submissions', ({ user }) => contact.listSubmissions(core, user), {
      role: 'user', response: t.Array(ContactSubmission),
      detail: {
        tags, summary: 'The contact messages',
        description: 'Admins only (403 for any other signed-in user). Every message, newest first.',
      },
    })
    .put('/submissions/:submission_id/read', async ({ user, params }) => {
      await contact.markRead(core, user, params.submission_id)
      return { success: true as const }
    }, {
      role: 'user', params: SubmissionParams, response: SuccessResponse,
      detail: {
        tags, summary: 'Mark a contact message as read',
        description: 'Admins only (403 for any other signed-in user). Marking a message already read again is a success too. 404 unknown message.',
      },
    })
}

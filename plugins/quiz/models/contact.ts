// TypeBox models of spec 1's Contact: the public contact form and the admins' list of what it received.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'
import { Email } from './accounts'

export const CONTACT_NAME_MAX = 120 // spec 1, limits: contact name
export const CONTACT_MESSAGE_MAX = 2_000 // spec 1, limits: contact message

export const ContactType = t.Union([t.Literal('question'), t.Literal('moderator')], {
  description: '`question`: a question about the service; `moderator`: a request to become a moderator',
})

export const ContactBody = t.Object({
  name: t.String({ minLength: 1, maxLength: CONTACT_NAME_MAX, description: 'Trimmed; must not be blank' }),
  email: Email,
  type: ContactType,
  message: t.String({ minLength: 1, maxLength: CONTACT_MESSAGE_MAX, description: 'Trimmed; must not be blank' }),
  challenge_token: t.Optional(t.Nullable(t.String({
    maxLength: 4096, description: 'Bot-challenge token; required only when the server has CHALLENGE_SECRET_KEY set',
  }))),
})
export type ContactBody = typeof ContactBody.static

export const SuccessResponse = t.Object({ success: t.Literal(true) })

export const ContactSubmission = t.Object({
  id: Int(),
  name: t.String(),
  email: t.String(),
  type: ContactType,
  message: t.String(),
  read: t.Boolean({ description: 'Set by PUT .../submissions/{submission_id}/read' }),
  created_at: t.String({ format: 'date-time' }),
})
export type ContactSubmission = typeof ContactSubmission.static

export const SubmissionParams = t.Object({ submission_id: RowId() })

// TypeBox models of spec 1's Tutor; the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

export const TUTOR_MESSAGES_MAX = 40
export const TUTOR_MESSAGE_MAX = 4000
export const TUTOR_SUGGESTIONS = 3

export const TeachModel = t.Object({
  id: t.Nullable(Int({ description: 'The configuration id to send as `model_id`; null for the server\'s environment default' })),
  name: t.String(),
  model_id: t.String({ description: 'The model name the gateway knows' }),
  is_default: t.Boolean({ description: 'The model used when a chat names none' }),
})
export type TeachModel = typeof TeachModel.static

export const TutorMessage = t.Object({
  role: t.Union([t.Literal('user'), t.Literal('assistant')], { description: 'user: the learner; assistant: an earlier tutor reply' }),
  content: t.String({ minLength: 1, maxLength: TUTOR_MESSAGE_MAX }),
})
export type TutorMessage = typeof TutorMessage.static

export const TutorChatBody = t.Object({
  question_id: RowId('The bank question the conversation is about'),
  messages: t.Array(TutorMessage, {
    minItems: 1,
    maxItems: TUTOR_MESSAGES_MAX,
    description: `The conversation so far, oldest first, ending with the learner's new message (1 to ${TUTOR_MESSAGES_MAX} entries)`,
  }),
  model_id: t.Optional(t.Nullable(RowId('A teach model configuration id (GET /api/teach/models); null or absent: the default'))),
})
export type TutorChatBody = typeof TutorChatBody.static

export const TutorChatResponse = t.Object({
  reply: t.String({ description: 'The tutor\'s answer in Markdown, without the suggestion lines' }),
  suggestions: t.Array(t.String(), {
    minItems: TUTOR_SUGGESTIONS,
    maxItems: TUTOR_SUGGESTIONS,
    description: 'Three follow-up questions the learner may ask next',
  }),
})
export type TutorChatResponse = typeof TutorChatResponse.static

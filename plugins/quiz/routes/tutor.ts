// Spec 1, Tutor, the JSON API. Routing, guards, validation and response shaping only.
import { Elysia, t } from 'elysia'
import { TeachModel, TutorChatBody, TutorChatResponse, TUTOR_MESSAGE_MAX, TUTOR_MESSAGES_MAX } from '../models/tutor'
import { SERVER_DEFAULT_NAME } from '../services/ai-models'
import * as tutor from '../services/tutor'
import type { QuizState } from '../state'

const tags = ['Tutor']

export const tutorRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/teach' })
    .use(auth)
    .get('/models', () => tutor.listTeachModels(core), {
      role: 'user', response: t.Array(TeachModel),
      detail: {
        tags, summary: 'Models the tutor can use',
        description: [
          'The active `teach` model configurations, the default first. When none is configured: one entry',
          `\`{id: null, name: "${SERVER_DEFAULT_NAME}", model_id, is_default: true}\` for the server's environment model (AI_DEFAULT_MODEL),`,
          `or \`[]\` when the server has no AI gateway either (the chat then answers 503). Same list as GET ${api}/admin/models/available?task=teach.`,
        ].join(' '),
      },
    })
    .post('/chat', ({ user, body }) => tutor.chat(core, user, body), {
      role: 'user', body: TutorChatBody, response: TutorChatResponse,
      detail: {
        tags, summary: 'Ask the tutor about a question',
        description: [
          'One tutor turn about a bank question. Send the whole conversation each time (the server keeps none): 1 to',
          `${TUTOR_MESSAGES_MAX} messages of 1 to ${TUTOR_MESSAGE_MAX} characters, the last one the learner's (role \`user\`), else 422.`,
          'The model is given the question, its options, the correct answer, the explanation and up to',
          `${tutor.SIMILAR_MAX} semantically similar bank questions (cosine similarity at least ${tutor.SIMILAR_MIN_SCORE}; left out`,
          'when the embedding model cannot be reached). It is asked to end with three follow-up questions on lines starting with `> `:',
          'every such line is removed from `reply`, and the last three become `suggestions`. When fewer than three come back the',
          `list is completed, in this order, with: ${tutor.DEFAULT_SUGGESTIONS.map((s) => `"${s}"`).join(', ')}.`,
          '`model_id`: a teach configuration id; null or absent uses the default teach model, else the server\'s environment model.',
          '404 unknown question or model_id; 400 a model_id of another task or an inactive one; 503 no teach model configured;',
          '502 the AI gateway could not be reached, answered with an error or with no text; 504 it did not answer in time.',
          `Limit: 30 messages per user per 10 minutes, counted when a request gets past the checks above; over it, 429 with a`,
          '`Retry-After` header (seconds until the oldest counted message leaves the window). Admins and unthrottled users are exempt.',
        ].join(' '),
      },
    })
}

// Spec 1, Admin: AI model configuration, and the embedding rows of Admin: settings and embeddings.
// Routing, guards, validation and response shaping only. Every route is Admin except /models/available (User).
import { Elysia, t } from 'elysia'
import {
  AIModelConfigResponse, AvailableModel, AvailableQuery, CreateModelBody, EmbeddingTestResponse, GatewayModels, GatewayModelsBody,
  MessageResponse, ModelIdParams, RegenerateResponse, UpdateModelBody, VoiceList, VoicesBody,
} from '../models/ai-models'
import * as models from '../services/ai-models'
import type { QuizState } from '../state'

const MODELS = ['Admin: AI models']
const API_BASE_DOC = 'api_base must not resolve to a loopback, private, link-local, unique-local, multicast, unspecified, shared (CGNAT) '
  + 'or cloud metadata address unless its host is AI_BASE_URL\'s (host and port) or listed in AI_ALLOWED_HOSTS: 400 api_base_not_allowed.'
const UNREACHABLE_DOC = 'a refused address, a closed port, a timeout and a filtered address all answer 502 `The AI service could not be '
  + 'reached`, and a refused address is never sent the key.'
const EMBEDDINGS = ['Admin: settings']

export const aiModelRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/admin' })
    .use(auth)
    .get('/models/available', ({ query }) => models.listAvailableModels(core, query.task ?? 'extraction'), {
      role: 'user', query: AvailableQuery, response: t.Array(AvailableModel),
      detail: {
        tags: MODELS, summary: 'Active models of a task (any user)',
        description: 'The active configurations of the task (default `extraction`), the default first. When none is configured: '
          + 'one entry `{id: null, name: "Server default", model_id, is_default: true}` for the server\'s environment model '
          + '(AI_DEFAULT_MODEL; TTS_MODEL for `tts`), or `[]` when the server has no gateway or no such model either.',
      },
    })
    .get('/models', () => models.listModels(core), {
      role: 'admin', response: t.Array(AIModelConfigResponse),
      detail: { tags: MODELS, summary: 'List AI model configurations', description: 'API keys are masked.' },
    })
    .post('/models', ({ body }) => models.createModel(core, body), {
      role: 'admin', body: CreateModelBody, response: AIModelConfigResponse,
      detail: {
        tags: MODELS, summary: 'Add an AI model configuration',
        description: 'The first model of a task becomes its default; is_default true makes it the default and unsets the previous one. '
          + 'The API key is stored encrypted and answered masked. 409 when (model_id, task) is already configured. '
          + API_BASE_DOC,
      },
    })
    .put('/models/:model_id', ({ params, body }) => models.updateModel(core, params.model_id, body), {
      role: 'admin', params: ModelIdParams, body: UpdateModelBody, response: AIModelConfigResponse,
      detail: {
        tags: MODELS, summary: 'Change an AI model configuration (partial update)',
        description: 'Fields, each optional: name, model_id, task, is_active, is_default, api_key, api_base. Only the fields present change; '
          + 'api_key null clears the stored key, absent keeps it. is_default true unsets the task\'s previous default; unsetting the default '
          + '(is_default false, or moving the model to another task) promotes the task\'s oldest other active model, if any. '
          + '404 unknown id; 409 when (model_id, task) is already configured. ' + API_BASE_DOC,
      },
    })
    .delete('/models/:model_id', async ({ params, set }) => {
      await models.deleteModel(core, params.model_id)
      set.status = 204
    }, {
      role: 'admin', params: ModelIdParams,
      detail: {
        tags: MODELS, summary: 'Delete an AI model configuration',
        description: 'Deleting the default promotes the task\'s oldest other active model; with none, the task has no default and '
          + 'requests use the server\'s environment model. 404 unknown id.',
      },
    })
    .post('/models/:model_id/test', ({ params }) => models.testModel(core, params.model_id), {
      role: 'admin', params: ModelIdParams, response: MessageResponse,
      detail: {
        tags: MODELS, summary: 'Send one short chat request to the model',
        description: '400 for speech (tts) models; 502 when the model is unreachable or fails; 503 when no gateway is configured. '
          + 'The api_base is checked again before the call: ' + UNREACHABLE_DOC,
      },
    })
    .post('/litellm/models', ({ body }) => models.listGatewayModels(core, body), {
      role: 'admin', body: GatewayModelsBody, response: GatewayModels,
      detail: {
        tags: MODELS, summary: 'List the models a gateway offers',
        description: 'GET {api_base}/models with the given key (source `openai-compatible`), or the server\'s gateway AI_BASE_URL when no '
          + 'api_base is given (source `environment`). 502 unreachable; 503 when neither api_base nor AI_BASE_URL is set. '
          + 'The api_base follows the address rule of POST /models: ' + UNREACHABLE_DOC,
      },
    })
    .post('/tts/voices', ({ body }) => models.listProviderVoices(body), {
      role: 'admin', body: VoicesBody, response: VoiceList,
      detail: {
        tags: MODELS, summary: 'List the voices of a speech provider',
        description: '`openai`: the built-in voice list, no call made. `elevenlabs` (api_key) and `azure` (api_key, region): the provider\'s '
          + 'voice list. 400 for a missing key or region, or a key the provider rejects; 502 when the provider is unreachable.',
      },
    })
    .post('/embedding/test', () => models.testEmbedding(core), {
      role: 'admin', response: EmbeddingTestResponse,
      detail: {
        tags: EMBEDDINGS, summary: 'Embed a short text with the current embedding model',
        description: '502 when the gateway\'s embedding model fails; 503 when a gateway model is set but no gateway is configured.',
      },
    })
    .post('/embedding/regenerate', ({ user }) => models.startEmbeddingRegeneration(core, user.id), {
      role: 'admin', response: RegenerateResponse,
      detail: {
        tags: EMBEDDINGS, summary: 'Rebuild every question embedding (a job)',
        description: 'Queues a job (kind quiz.embedding.regenerate) that drops the question index and re-embeds the whole bank in batches '
          + 'of 100, with a step per batch. With WORKERS=0 it has run when this answers.',
      },
    })

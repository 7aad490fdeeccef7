// Spec 1, ai-models: the JSON API. Routing, guards, validation and response shaping only.
import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'
import { quizAuth } from '../guard'

export const aiModelRoutes = (core: Core) =>
  new Elysia({ prefix: '/api/admin' })
    .use(quizAuth(core))

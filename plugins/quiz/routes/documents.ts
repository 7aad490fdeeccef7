// Spec 1, documents: the JSON API. Routing, guards, validation and response shaping only.
import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'
import { quizAuth } from '../guard'

export const documentRoutes = (core: Core) =>
  new Elysia({ prefix: '/api/documents' })
    .use(quizAuth(core))

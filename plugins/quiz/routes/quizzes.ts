// Spec 1, quizzes: the JSON API. Routing, guards, validation and response shaping only.
import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'
import { quizAuth } from '../guard'

export const quizzesRoutes = (core: Core) =>
  new Elysia({ prefix: '/api/quizzes' })
    .use(quizAuth(core))

// The quiz service's controllers, one per area of spec 1.
import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'
import { adminRoutes } from './admin'
import { aiModelRoutes } from './ai-models'
import { authRoutes } from './auth'
import { documentRoutes } from './documents'
import { pageRoutes } from './pages'
import { quizzesRoutes } from './quizzes'

export const quizRoutes = (core: Core) =>
  new Elysia()
    .use(authRoutes(core))
    .use(adminRoutes(core))
    .use(aiModelRoutes(core))
    .use(documentRoutes(core))
    .use(quizzesRoutes(core))
    .use(pageRoutes(core))

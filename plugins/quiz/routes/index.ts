// The quiz service's controllers, one per area of spec 1.
import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'
import { adminRoutes } from './admin'
import { authRoutes } from './auth'
import { pageRoutes } from './pages'

export const quizRoutes = (core: Core) =>
  new Elysia()
    .use(authRoutes(core))
    .use(adminRoutes(core))
    .use(pageRoutes(core))

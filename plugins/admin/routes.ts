// The administration controllers (admin only): users and the registration setting (routes/users.ts), the
// configuration with prompts, mail and AI models (routes/config.ts), logs and milestones (routes/logs.ts); and the
// admin console's pages: users and configuration (pages/console.ts), logs with charts and milestones (pages/logs.ts).
import { Elysia } from 'elysia'
import type { AdminState } from './index'
import { consolePages } from './pages/console'
import { logPages } from './pages/logs'
import { configRoutes } from './routes/config'
import { logRoutes } from './routes/logs'
import { userRoutes } from './routes/users'

export const adminRoutes = (state: AdminState) =>
  new Elysia()
    .use(userRoutes(state))
    .use(configRoutes(state))
    .use(logRoutes(state))
    .use(consolePages(state))
    .use(logPages(state))

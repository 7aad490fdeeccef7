// The clinical service's controllers, one per area of spec 2.
import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'
import { authRoutes } from './auth'
import { oidcRoutes } from './oidc'
import { pagesRoutes } from './pages'
import { sessionRoutes } from './sessions'
import { twoFactorRoutes } from './two-factor'

export const clinicalRoutes = (core: Core) =>
  new Elysia()
    .use(authRoutes(core))
    .use(sessionRoutes(core))
    .use(twoFactorRoutes(core))
    .use(oidcRoutes(core))
    .use(pagesRoutes(core))

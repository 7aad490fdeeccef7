// The clinical service's controllers, one per area of spec 2: the API's here, the pages' in ../pages.
import { Elysia } from 'elysia'
import { bodyLimits } from '../../../src/envelope'
import { accountPages } from '../pages/account'
import { recordPages } from '../pages/records'
import { workspacePages } from '../pages/workspace'
import { signInPages } from '../pages/sign-in'
import type { ClinicalState } from '../state'
import { accountRoutes } from './accounts'
import { fileRoutes } from './files'
import { generationRoutes } from './generation'
import { oidcRoutes } from './oidc'
import { recordRoutes } from './records'
import { sessionRoutes } from './sessions'
import { speechRoutes } from './speech'
import { twoFactorRoutes } from './two-factor'

/** spec 2, security: the account routes (/api/auth/*) take a few short strings; their bodies stay under this. */
export const ACCOUNT_BODY_LIMIT = 64 * 1024

export const clinicalRoutes = (state: ClinicalState) =>
  new Elysia()
    .use(bodyLimits)
    .guard({ bodyLimit: ACCOUNT_BODY_LIMIT }, (accounts) => accounts
      .use(accountRoutes(state))
      .use(sessionRoutes(state))
      .use(twoFactorRoutes(state))
      .use(oidcRoutes(state)))
    // each of these declares its own body limits (uploads: up to 25 MB)
    .use(generationRoutes(state))
    .use(speechRoutes(state))
    .use(recordRoutes(state))
    .use(fileRoutes(state))
    .use(signInPages(state))
    .use(accountPages(state))
    .use(recordPages(state))
    .use(workspacePages(state))

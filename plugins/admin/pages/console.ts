// The admin console's pages for users and configuration (spec 3), every one for admins only (anyone else gets the
// 403 page): /admin (to the users), /admin/users (pages/users.ts), /admin/settings (pages/settings.ts),
// /admin/prompts (pages/prompts.ts) and /admin/models (pages/models.ts). Logs and milestones are pages/logs.ts.
import { Elysia } from 'elysia'
import type { AdminState } from '../index'
import { modelPages } from './models'
import { promptPages } from './prompts'
import { settingsPages } from './settings'
import { userPages } from './users'

export const consolePages = (state: AdminState) =>
  new Elysia()
    .use(userPages(state))
    .use(settingsPages(state))
    .use(promptPages(state))
    .use(modelPages(state))

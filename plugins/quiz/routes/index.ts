// The quiz service's controllers, one per area of spec 1: the JSON API (routes/) and the browser pages (pages/).
import { Elysia } from 'elysia'
import { accountPages } from '../pages/accounts'
import { quizzesPages } from '../pages/quizzes'
import type { QuizState } from '../state'
import { accountRoutes } from './accounts'
import { aiModelRoutes } from './ai-models'
import { documentRoutes } from './documents'
import { extractionRoutes } from './extraction'
import { quizzesRoutes } from './quizzes'
import { settingsRoutes } from './settings'
import { userRoutes } from './users'

export const quizRoutes = (state: QuizState) =>
  new Elysia()
    .use(accountRoutes(state))
    .use(userRoutes(state))
    .use(settingsRoutes(state))
    .use(aiModelRoutes(state))
    .use(documentRoutes(state))
    .use(extractionRoutes(state))
    .use(quizzesRoutes(state))
    .use(accountPages(state))
    .use(quizzesPages(state))

// The quiz service's controllers, one per area of spec 1: the JSON API (routes/) and the browser pages (pages/).
import { Elysia } from 'elysia'
import { accountPages } from '../pages/accounts'
import { bankPages } from '../pages/bank'
import { categoriesPages } from '../pages/categories'
import { contactPages } from '../pages/contact'
import { documentsPages } from '../pages/documents'
import { importPages } from '../pages/import'
import { learnerPages } from '../pages/learner'
import { playerPages } from '../pages/player'
import { quizzesPages } from '../pages/quizzes'
import type { QuizState } from '../state'
import { accountRoutes } from './accounts'
import { aiModelRoutes } from './ai-models'
import { attemptRoutes } from './attempts'
import { bankRoutes } from './bank'
import { categoryRoutes } from './categories'
import { contactRoutes } from './contact'
import { documentRoutes } from './documents'
import { extractionRoutes } from './extraction'
import { favoriteRoutes } from './favorites'
import { nextcloudRoutes } from './nextcloud'
import { quizzesRoutes } from './quizzes'
import { reminderRoutes } from './reminders'
import { searchRoutes } from './search'
import { settingsRoutes } from './settings'
import { speechRoutes } from './speech'
import { tagRoutes } from './tags'
import { tutorRoutes } from './tutor'
import { userRoutes } from './users'

export const quizRoutes = (state: QuizState) =>
  new Elysia()
    .use(accountRoutes(state))
    .use(userRoutes(state))
    .use(settingsRoutes(state))
    .use(aiModelRoutes(state))
    .use(documentRoutes(state))
    .use(extractionRoutes(state))
    // GET /api/quizzes/search before GET /api/quizzes/{quiz_id}, so the search is never read as a quiz id
    .use(searchRoutes(state))
    .use(quizzesRoutes(state))
    .use(bankRoutes(state))
    .use(categoryRoutes(state))
    .use(favoriteRoutes(state))
    .use(tagRoutes(state))
    .use(attemptRoutes(state))
    .use(reminderRoutes(state))
    .use(tutorRoutes(state))
    .use(speechRoutes(state))
    .use(nextcloudRoutes(state))
    .use(contactRoutes(state))
    .use(accountPages(state))
    .use(documentsPages(state))
    .use(quizzesPages(state))
    .use(bankPages(state))
    .use(categoriesPages(state))
    .use(learnerPages(state))
    .use(playerPages(state))
    .use(contactPages(state))
    .use(importPages(state))

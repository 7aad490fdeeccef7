// The learning hub's controllers: the reader's API (routes/reader.ts) and the authors' API (routes/authoring.ts),
// the reader's pages (pages/reader.ts) and the authors' studio (pages/studio.ts).
import { Elysia } from 'elysia'
import type { LearningState } from './index'
import { readerPages } from './pages/reader'
import { studioPages } from './pages/studio'
import { authoringRoutes } from './routes/authoring'
import { readerRoutes } from './routes/reader'

export const learningRoutes = (state: LearningState) =>
  new Elysia()
    .use(readerRoutes(state))
    .use(authoringRoutes(state))
    .use(readerPages(state))
    .use(studioPages(state))

// The learning hub's controllers: the reader routes (routes/reader.ts); authoring is added beside them.
import { Elysia } from 'elysia'
import type { LearningState } from './index'
import { readerRoutes } from './routes/reader'

export const learningRoutes = (state: LearningState) =>
  new Elysia()
    .use(readerRoutes(state))

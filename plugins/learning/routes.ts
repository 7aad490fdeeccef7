// Stub: filled in next.
import { Elysia } from 'elysia'
import type { LearningState } from './index'

export const learningRoutes = (_state: LearningState) => new Elysia()

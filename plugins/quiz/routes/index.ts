import { Elysia } from 'elysia'
import type { Core } from '../../../src/plugin'

export const quizRoutes = (core: Core) => new Elysia({ name: 'quiz.routes' }).get('/api/ping', () => ({ ok: true }))

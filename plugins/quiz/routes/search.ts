// Spec 1, Quizzes: the quiz search (GET /api/quizzes/search), the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const searchRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

// Spec 1, Questions: the shared question bank, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const bankRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

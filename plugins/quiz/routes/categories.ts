// Spec 1, Quiz categories and Question categories, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const categoryRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

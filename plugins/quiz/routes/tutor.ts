// Spec 1, Tutor, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const tutorRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

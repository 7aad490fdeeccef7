// Spec 1, Attempts and saved progress, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const attemptRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

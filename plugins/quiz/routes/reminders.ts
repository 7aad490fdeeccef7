// Spec 1, spaced-repetition reminders (beyond the spec), the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const reminderRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

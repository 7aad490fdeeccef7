// Spec 1, Speech, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const speechRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

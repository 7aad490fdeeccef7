// Spec 1, Contact, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const contactRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

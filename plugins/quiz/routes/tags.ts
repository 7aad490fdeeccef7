// Spec 1, Tags, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const tagRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

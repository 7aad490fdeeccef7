// Spec 1, Favorites, the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const favoriteRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

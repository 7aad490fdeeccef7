// The quiz service's learner pages: progress (dashboard and history), due reviews and favorites.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const learnerPages = ({ pages }: QuizState) => new Elysia().use(pages)

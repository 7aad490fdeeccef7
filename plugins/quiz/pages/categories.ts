// The quiz service's staff pages: categories.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const categoriesPages = ({ pages }: QuizState) => new Elysia().use(pages)

// The quiz service's staff pages: documents.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const documentsPages = ({ pages }: QuizState) => new Elysia().use(pages)

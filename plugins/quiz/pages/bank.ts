// The quiz service's staff pages: bank.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const bankPages = ({ pages }: QuizState) => new Elysia().use(pages)

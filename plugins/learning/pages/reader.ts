// Placeholder: filled in next.
import { Elysia } from 'elysia'
import type { LearningState } from '../index'

export const readerPages = (_state: LearningState) => new Elysia()

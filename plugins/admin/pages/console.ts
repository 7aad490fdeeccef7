// Placeholder: filled in next.
import { Elysia } from 'elysia'
import type { AdminState } from '../index'

export const consolePages = (_state: AdminState) => new Elysia()

// Placeholder: filled in next.
import { Elysia } from 'elysia'
import type { AdminState } from '../index'

export const logPages = (_state: AdminState) => new Elysia()

// Placeholder: filled in next.
import { Elysia } from 'elysia'
import type { AdminState } from '../index'

export const configRoutes = (_state: AdminState) => new Elysia()

// Stub: filled in next.
import { Elysia } from 'elysia'
import type { ClinicalState } from '../state'

export const fileRoutes = (_state: ClinicalState) => new Elysia()

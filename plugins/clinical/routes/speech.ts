// Stub: filled in next.
import { Elysia } from 'elysia'
import type { ClinicalState } from '../state'

export const speechRoutes = (_state: ClinicalState) => new Elysia()

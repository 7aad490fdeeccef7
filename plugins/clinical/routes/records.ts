// Stub: filled in next.
import { Elysia } from 'elysia'
import type { ClinicalState } from '../state'

export const recordRoutes = (_state: ClinicalState) => new Elysia()

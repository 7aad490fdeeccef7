// The clinical service's controllers, one per area of spec 2.
import { Elysia } from 'elysia'
import type { Core } from '../../src/plugin'

export const clinicalRoutes = (core: Core) => {
  void core
  return new Elysia()
}

import { Elysia } from 'elysia'
import type { Core } from '../../src/plugin'

export const adminRoutes = (core: Core) => {
  void core
  return new Elysia()
}

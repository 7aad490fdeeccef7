// Stub: filled in next.
import { Elysia } from 'elysia'
import type { DirectoryState } from './index'

export const directoryRoutes = (_state: DirectoryState) => new Elysia()

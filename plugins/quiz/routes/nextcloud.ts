// Spec 1, File-server import (WebDAV proxy), the JSON API.
import { Elysia } from 'elysia'
import type { QuizState } from '../state'

export const nextcloudRoutes = ({ auth }: QuizState) => new Elysia().use(auth)

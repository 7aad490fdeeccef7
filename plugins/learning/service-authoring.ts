// Authoring with AI and the authors' tools: ai-generate (an article or a Marp deck from a topic, optionally grounded
// in reference files), ai-refine, and browsing the author's connected WebDAV server. Plain functions over the Core;
// routes translate HTTP. (Interface fixed here; bodies being written.)
import type { Core } from '../../src/plugin'
import type { AuditWriter } from '../clinical/exports'
import type { ContentType } from './model'

export interface GenerateInput {
  topic: string
  type: ContentType
  /** A model of the catalogue (GET /api/models); the default when absent. */
  model?: string | null
  /** Reference files (PDF or text) the content is grounded in. */
  files?: File[]
}

export interface RefineInput {
  body: string
  instructions: string
  model?: string | null
}

/** The generated or refined markdown, and the model that wrote it. */
export interface Authored {
  content: string
  model: string
}

export async function generateContent(_core: Core, _userId: number, _input: GenerateInput): Promise<Authored> {
  throw new Error('not implemented')
}

export async function refineContent(_core: Core, _userId: number, _input: RefineInput): Promise<Authored> {
  throw new Error('not implemented')
}

/** One entry of a WebDAV folder listing. */
export interface WebDavEntry {
  name: string
  /** The path on the server, usable as the next `path` for a directory. */
  path: string
  type: 'directory' | 'file'
  /** Bytes; 0 for a directory. */
  size: number
  /** ISO 8601, or null when the server does not say. */
  modified: string | null
  /** The server's content type of a file, or null. */
  mime: string | null
}

export async function browseWebDav(_core: Core, _userId: number, _path: string): Promise<WebDavEntry[]> {
  throw new Error('not implemented')
}

/** The audit actions of authoring (spec 2, Events: other actions than the common ones may exist). */
export type AuthoringAction =
  | 'learning_category_created' | 'learning_category_updated' | 'learning_category_deleted'
  | 'learning_content_created' | 'learning_content_updated' | 'learning_content_deleted'
  | 'learning_content_generated' | 'learning_content_refined'

/** Writes one authoring audit entry (the API and the studio pages both call this): who, from where, which ids. */
export function auditAuthoring(audit: AuditWriter, actor: { id: number; ip: string | null }, action: AuthoringAction, details: Record<string, unknown>): void {
  audit.write({ action, userId: actor.id, ip: actor.ip, details })
}

// The clinician's memories: reusable note style, abbreviations, templates and practice context (added to the AI
// prompts), and `custom` notes kept out of them. Content is gzip-compressed, then sealed with the core's crypto
// (AES-256-GCM). Also the one place that packs record text that way: saved encounters use the same helpers.
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import {
  CONTEXT_CATEGORIES, LEGACY_CATEGORY_PREFIX, MEMORY_CATEGORIES, MEMORY_CONTEXT_MAX, MEMORY_LIST_MAX, type Memory, type MemoryBody,
} from '../models/records'

// ---- sealed, compressed text ----------------------------------------------------------------------------

export interface PackedText {
  /** version byte 0x01 | IV | tag | AES-256-GCM ciphertext of the gzipped UTF-8 text */
  sealed: Uint8Array
  /** Bytes of the text (UTF-8). */
  originalSize: number
  /** Bytes once gzipped, before encryption. */
  compressedSize: number
}

/** Gzips a text, then seals it with the core's key: what the record tables keep. */
export function packText(core: Pick<Core, 'crypto'>, text: string): PackedText {
  const plain = new TextEncoder().encode(text)
  const compressed = Bun.gzipSync(plain)
  return { sealed: core.crypto.seal(compressed), originalSize: plain.length, compressedSize: compressed.length }
}

/** Opens what packText sealed. Throws when the value was not sealed with this key or was altered. */
export function unpackText(core: Pick<Core, 'crypto'>, sealed: Uint8Array): string {
  return new TextDecoder().decode(Bun.gunzipSync(core.crypto.open(sealed) as Uint8Array<ArrayBuffer>))
}

// ---- memories -------------------------------------------------------------------------------------------

interface MemoryRow {
  id: number
  category: string
  name: string
  content: Uint8Array
  created_at: Date
  updated_at: Date
}

const MESSAGES = {
  notFound: 'Memory not found',
  category: `Category must be one of: ${MEMORY_CATEGORIES.join(', ')}`,
  blankName: 'Name must not be blank',
} as const

const isContextCategory = (category: string) => (CONTEXT_CATEGORIES as readonly string[]).includes(category)
const isAllowedCategory = (category: string) => (MEMORY_CATEGORIES as readonly string[]).includes(category)
const isLegacyCategory = (category: string) => category.startsWith(LEGACY_CATEGORY_PREFIX)

const badCategory = () => HttpError.unprocessable('invalid_category', MESSAGES.category, { category: MESSAGES.category })

/** The name as stored: trimmed, and not blank. */
function cleanName(name: string): string {
  const clean = name.trim()
  if (!clean) throw HttpError.unprocessable('invalid_name', MESSAGES.blankName, { name: MESSAGES.blankName })
  return clean
}

const toMemory = (core: Core, row: MemoryRow): Memory => ({
  id: row.id,
  category: row.category,
  name: row.name,
  content: unpackText(core, row.content),
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

/** The user's memories, newest first, at most MEMORY_LIST_MAX. Legacy `correction_*` rows are listed as they are. */
export async function listMemories(core: Core, userId: number): Promise<Memory[]> {
  const rows = await core.db.sql<MemoryRow>`
    select id, category, name, content, created_at, updated_at from clinical.memories
    where user_id = ${userId}
    order by created_at desc, id desc
    limit ${MEMORY_LIST_MAX}`
  return rows.map((row) => toMemory(core, row))
}

/** One of the user's memories (any age, not only the listed ones); 404 for none or another user's. */
export async function getMemory(core: Core, userId: number, id: number): Promise<Memory> {
  const [row] = await core.db.sql<MemoryRow>`
    select id, category, name, content, created_at, updated_at from clinical.memories where id = ${id} and user_id = ${userId}`
  if (!row) throw HttpError.notFound('memory_not_found', MESSAGES.notFound)
  return toMemory(core, row)
}

export async function createMemory(core: Core, userId: number, input: MemoryBody): Promise<{ id: number; originalSize: number; compressedSize: number }> {
  if (!isAllowedCategory(input.category)) throw badCategory()
  const name = cleanName(input.name)
  const packed = packText(core, input.content)
  const now = new Date(core.now()).toISOString()
  const [row] = await core.db.sql<{ id: number }>`
    insert into clinical.memories (user_id, category, name, content, created_at, updated_at)
    values (${userId}, ${input.category}, ${name}, ${packed.sealed}, ${now}, ${now})
    returning id`
  return { id: row!.id, originalSize: packed.originalSize, compressedSize: packed.compressedSize }
}

/**
 * Replaces a memory's category, name and content. A legacy `correction_*` memory may keep its category (the
 * clinician edits its text), but nothing moves into one. 404 for another user's memory or an unknown id.
 */
export async function updateMemory(core: Core, userId: number, id: number, input: MemoryBody): Promise<void> {
  const name = cleanName(input.name)
  const packed = packText(core, input.content)
  const now = new Date(core.now()).toISOString()
  await core.db.transaction(async (db) => {
    const [current] = await db.sql<{ category: string }>`
      select category from clinical.memories where id = ${id} and user_id = ${userId} for update`
    if (!current) throw HttpError.notFound('memory_not_found', MESSAGES.notFound)
    const keepsLegacy = isLegacyCategory(input.category) && input.category === current.category
    if (!isAllowedCategory(input.category) && !keepsLegacy) throw badCategory()
    await db.sql`
      update clinical.memories
      set category = ${input.category}, name = ${name}, content = ${packed.sealed}, updated_at = ${now}
      where id = ${id} and user_id = ${userId}`
  })
}

export async function deleteMemory(core: Core, userId: number, id: number): Promise<void> {
  const rows = await core.db.sql`delete from clinical.memories where id = ${id} and user_id = ${userId} returning id`
  if (rows.length === 0) throw HttpError.notFound('memory_not_found', MESSAGES.notFound)
}

/** The heading of each context category in the prompt. */
const CONTEXT_HEADINGS: Record<(typeof CONTEXT_CATEGORIES)[number], string> = {
  note_style: 'Note style',
  abbreviations: 'Abbreviations',
  templates: 'Templates',
  ai_context: 'Practice context',
}

/**
 * GET /api/memories/context: the user's memories of the context categories (note_style, abbreviations, templates,
 * ai_context), formatted for a prompt; `custom` and legacy `correction_*` memories are never in it. One section per
 * category in that order, each memory oldest first as `- name: content` (further lines indented). Memories that
 * would take the text past MEMORY_CONTEXT_MAX characters are left out. '' when there is nothing to add.
 */
export async function memoryContext(core: Core, userId: number): Promise<string> {
  const rows = await core.db.sql<MemoryRow>`
    select id, category, name, content, created_at, updated_at from clinical.memories
    where user_id = ${userId} and category in (${CONTEXT_CATEGORIES[0]}, ${CONTEXT_CATEGORIES[1]}, ${CONTEXT_CATEGORIES[2]}, ${CONTEXT_CATEGORIES[3]})
    order by created_at, id`
  const intro = 'The clinician\'s saved preferences (follow them unless the request says otherwise):'
  let length = intro.length
  const sections: string[] = []
  for (const category of CONTEXT_CATEGORIES) {
    const items: string[] = []
    const heading = `${CONTEXT_HEADINGS[category]}:`
    for (const row of rows) {
      if (row.category !== category || !isContextCategory(row.category)) continue
      const content = unpackText(core, row.content).trim().replace(/\r\n?/g, '\n').replaceAll('\n', '\n  ')
      const item = `- ${row.name}: ${content}`
      // +2 for the blank line and the heading's line break the first item brings
      const cost = item.length + 1 + (items.length === 0 ? heading.length + 2 : 0)
      if (length + cost > MEMORY_CONTEXT_MAX) continue
      length += cost
      items.push(item)
    }
    if (items.length > 0) sections.push([heading, ...items].join('\n'))
  }
  return sections.length === 0 ? '' : [intro, ...sections].join('\n\n')
}

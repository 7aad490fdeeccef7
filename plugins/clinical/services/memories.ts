// Stub: filled in next.
import type { Core } from '../../../src/plugin'

/** GET /api/memories/context: the user's AI-context memories formatted for a prompt ('' when none). */
export async function memoryContext(_core: Core, _userId: number): Promise<string> {
  return ''
}

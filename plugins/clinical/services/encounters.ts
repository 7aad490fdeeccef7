// Stub: filled in next.
import type { Core } from '../../../src/plugin'

/** Deletes expired saved encounters; how many went. */
export async function sweepExpiredEncounters(_core: Core): Promise<number> {
  return 0
}

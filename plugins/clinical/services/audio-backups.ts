// Stub: filled in next.
import type { Core } from '../../../src/plugin'

/** Deletes expired audio backups; how many went. */
export async function sweepExpiredAudioBackups(_core: Core): Promise<number> {
  return 0
}

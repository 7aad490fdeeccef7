// Stub: filled in next.
import type { Core } from '../../../src/plugin'

/** One AI call, for the admin's usage log: never any transcript, note or patient text. */
export interface UsageRecord {
  userId: number | null
  /** The API path of the call, e.g. `/api/generate-soap` or `/api/transcribe`. */
  endpoint: string
  model: string
  tokensIn: number | null
  tokensOut: number | null
  latencyMs: number
  /** `ok`, or the failure's error code (e.g. `ai_unreachable`, `ai_timeout`). */
  outcome: string
}

export async function recordUsage(_core: Core, _record: UsageRecord): Promise<void> {}

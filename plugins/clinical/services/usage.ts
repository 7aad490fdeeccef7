// The AI usage log (issue 15, for the admin's usage logs): one clinical.ai_usage row per AI call, success or
// failure, with who, which endpoint, which model, the tokens, the latency and the outcome. Never any text.
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

/** The days the admin's usage summary covers unless asked otherwise. */
export const USAGE_SUMMARY_DAYS = 30

const ENDPOINT_MAX = 200
const MODEL_MAX = 200
const OUTCOME_MAX = 64
const count = (n: number | null) => (n === null || !Number.isFinite(n) ? null : Math.max(0, Math.round(n)))

/**
 * Writes the row. A failure to write is logged, never thrown: the clinician's answer does not depend on the log.
 */
export async function recordUsage(core: Core, record: UsageRecord): Promise<void> {
  try {
    await core.db.sql`
      insert into clinical.ai_usage (user_id, endpoint, model, tokens_in, tokens_out, latency_ms, outcome, created_at)
      values (${record.userId}, ${record.endpoint.slice(0, ENDPOINT_MAX)}, ${record.model.slice(0, MODEL_MAX)},
              ${count(record.tokensIn)}, ${count(record.tokensOut)}, ${count(record.latencyMs) ?? 0},
              ${record.outcome.slice(0, OUTCOME_MAX)}, ${new Date(core.now()).toISOString()})`
  } catch (err) {
    core.log.warn({ err, endpoint: record.endpoint, outcome: record.outcome }, 'ai usage row not stored')
  }
}

export interface UsageSummary {
  days: number
  byModel: Array<{ model: string; count: number; tokens: number }>
  byEndpoint: Array<{ endpoint: string; count: number }>
}

/** Calls of the last `days` days by model (with their tokens, in and out) and by endpoint, the busiest first. */
export async function usageSummary(core: Core, days: number = USAGE_SUMMARY_DAYS): Promise<UsageSummary> {
  const since = new Date(core.now() - days * 86_400_000).toISOString()
  const byModel = await core.db.sql<{ model: string; count: number; tokens: number }>`
    select model, count(*)::int as count, coalesce(sum(coalesce(tokens_in, 0) + coalesce(tokens_out, 0)), 0)::float8 as tokens
    from clinical.ai_usage where created_at >= ${since}
    group by model order by count desc, model`
  const byEndpoint = await core.db.sql<{ endpoint: string; count: number }>`
    select endpoint, count(*)::int as count
    from clinical.ai_usage where created_at >= ${since}
    group by endpoint order by count desc, endpoint`
  return { days, byModel, byEndpoint }
}

// TypeBox models of spec 3's Logs and milestones: the query filters with their limits, and the usage summary, audit,
// API-metric, access and milestone objects; the OpenAPI docs come from them. Retention lives with the sweeps in
// services/logs.ts.
import { t } from 'elysia'
import type { SchemaOptions, TLiteral } from '@sinclair/typebox'
import { Int, RowId } from '../../../src/core/schema'
import { MILESTONE_DOMAINS, SIGN_IN_OUTCOMES, USAGE_SUMMARY_DAYS } from '../../clinical/exports'
import { API_METRICS_RETENTION_DAYS, USAGE_RETENTION_DAYS } from '../services/logs'

export const AUDIT_LIMIT_DEFAULT = 100
export const AUDIT_LIMIT_MAX = 1_000
export const ACCESS_LIMIT_DEFAULT = 100
export const ACCESS_LIMIT_MAX = 1_000
export const API_WINDOW_DEFAULT_MIN = 60
/** The API log's window reaches back as far as its rows are kept. */
export const API_WINDOW_MAX_MIN = API_METRICS_RETENTION_DAYS * 24 * 60
export const AUDIT_ACTION_MAX = 100
/** The longest email address. */
export const EMAIL_MAX = 320

/**
 * One of the values: a union of literals (Elysia's UnionEnum would give an optional filter a default). Typed as a
 * one-member tuple, as TypeBox infers a union's type from a tuple of members, not from an array.
 */
const oneOf = <T extends string>(values: readonly T[], options?: SchemaOptions) =>
  t.Union(values.map((v) => t.Literal(v)) as unknown as [TLiteral<T>], options)

const From = t.Optional(t.String({ format: 'date-time', description: 'Entries at or after this instant (ISO 8601 with a time zone)' }))
const To = t.Optional(t.String({ format: 'date-time', description: 'Entries before this instant (ISO 8601 with a time zone)' }))
const Limit = (def: number, max: number) =>
  t.Optional(t.Integer({ minimum: 1, maximum: max, default: def, description: `1 to ${max}, default ${def}` }))

export const UsageQuery = t.Object({
  days: t.Optional(t.Integer({
    minimum: 1, maximum: USAGE_RETENTION_DAYS, default: USAGE_SUMMARY_DAYS,
    description: `The days covered, up to now: 1 to ${USAGE_RETENTION_DAYS}, default ${USAGE_SUMMARY_DAYS}`,
  })),
})

export const UsageSummary = t.Object({
  days: Int({ description: 'The days covered, up to now' }),
  byModel: t.Array(t.Object({
    model: t.String(),
    count: Int({ description: 'AI calls, successful or not' }),
    tokens: t.Number({ description: 'Prompt and answer tokens together, as the gateway reported them' }),
  }), { description: 'The busiest model first' }),
  byEndpoint: t.Array(t.Object({
    endpoint: t.String({ description: 'The API path of the calls, e.g. `/api/generate-soap`' }),
    count: Int(),
  }), { description: 'The busiest endpoint first' }),
})

export const AuditQuery = t.Object({
  action: t.Optional(t.String({
    minLength: 1, maxLength: AUDIT_ACTION_MAX, pattern: '^[A-Za-z0-9_.:-]+$', description: 'Only this action, e.g. `login_failed`',
  })),
  userId: t.Optional(RowId('Only entries of this user id')),
  from: From,
  to: To,
  limit: Limit(AUDIT_LIMIT_DEFAULT, AUDIT_LIMIT_MAX),
})
export type AuditQuery = typeof AuditQuery.static

export const AuditEntry = t.Object({
  id: Int(),
  at: t.String({ format: 'date-time' }),
  action: t.String({ description: 'e.g. `login`, `login_failed`, `password_changed`, `user_disabled`' }),
  userId: t.Nullable(Int({ description: 'The user who acted (or tried to); null for an unknown email' })),
  userEmail: t.Nullable(t.String({ description: 'That user\'s current email; null without a user or once deleted' })),
  ip: t.Nullable(t.String({ description: 'The client address' })),
  details: t.String({ description: 'Redacted before it was stored (no emails, phone numbers, birth dates or note text); JSON text or plain text, at most 500 characters' }),
}, { title: 'AuditEntry' })
export type AuditEntry = typeof AuditEntry.static

export const ApiQuery = t.Object({
  minutes: t.Optional(t.Integer({
    minimum: 1, maximum: API_WINDOW_MAX_MIN, default: API_WINDOW_DEFAULT_MIN,
    description: `The window: the last 1 to ${API_WINDOW_MAX_MIN} minutes, default ${API_WINDOW_DEFAULT_MIN}`,
  })),
  service: t.Optional(oneOf(['clinical', 'quiz'], { description: 'The service whose requests are counted, default `clinical`' })),
})
export type ApiQuery = typeof ApiQuery.static

export const ApiMetricEntry = t.Object({
  route: t.String({ description: 'The route pattern (e.g. `/api/admin/users/:id`), or `unmatched` for requests no route matched' }),
  method: t.String(),
  count: Int({ description: 'Requests answered' }),
  clientErrors: Int({ description: 'Answers with a 4xx status' }),
  errors: Int({ description: 'Answers with a 5xx status' }),
  errorRate: t.Number({ description: '`errors` / `count`, 0 to 1' }),
  meanMs: t.Number({ description: 'Mean latency in milliseconds' }),
  p50: t.Number({ description: 'Median latency in milliseconds (estimated from a histogram)' }),
  p95: t.Number({ description: '95th percentile latency in milliseconds' }),
  p99: t.Number({ description: '99th percentile latency in milliseconds' }),
}, { title: 'ApiMetricEntry' })
export type ApiMetricEntry = typeof ApiMetricEntry.static

const Outcome = oneOf(SIGN_IN_OUTCOMES, {
  description: '`success` (password sign-in), `oidc` (single sign-on), `failed` (wrong credentials or code) or `blocked` (the account may not sign in)',
})
const ClientKind = oneOf(['web', 'mobile'], { description: '`web` (cookie) or `mobile` (Bearer token)' })

export const AccessQuery = t.Object({
  userId: t.Optional(RowId('Only attempts on this user id')),
  email: t.Optional(t.String({ format: 'email', maxLength: EMAIL_MAX, description: 'Only attempts with this email (any case)' })),
  outcome: t.Optional(Outcome),
  client: t.Optional(ClientKind),
  from: From,
  to: To,
  limit: Limit(ACCESS_LIMIT_DEFAULT, ACCESS_LIMIT_MAX),
})
export type AccessQuery = typeof AccessQuery.static

export const AccessEntry = t.Object({
  id: Int(),
  at: t.String({ format: 'date-time' }),
  userId: t.Nullable(Int({ description: 'The account tried; null for an unknown email' })),
  email: t.Nullable(t.String({ description: 'The email as typed, or the account\'s' })),
  name: t.Nullable(t.String({ description: 'The account\'s name; null for an unknown email' })),
  ip: t.Nullable(t.String({ description: 'The client address' })),
  client: ClientKind,
  outcome: Outcome,
  reason: t.Nullable(t.String({
    description: 'For failed and blocked attempts: `unknown_email`, `wrong_password`, `invalid_2fa_code`, `disabled`, `email_not_verified` or `local_auth_disabled`',
  })),
}, { title: 'AccessEntry' })
export type AccessEntry = typeof AccessEntry.static

export const MilestoneObject = t.Object({
  id: Int(),
  ageMonths: Int({ description: 'The checklist age in months: 2, 4, 6, 9, 12, 15, 18, 24, 36, 48 or 60' }),
  ageLabel: t.String({ description: 'The age as said, e.g. `9 months`, `2 years`' }),
  domain: oneOf(MILESTONE_DOMAINS, { description: 'One of the four domains' }),
  domainLabel: t.String({ description: 'e.g. `Social/emotional`' }),
  text: t.String({ description: 'What most children of that age do' }),
  sort: Int({ description: 'The position in the set: by age, then domain, then the checklist\'s order' }),
}, { title: 'Milestone' })

export const SeedResult = t.Object({
  success: t.Literal(true),
  count: Int({ description: 'How many milestones there are after seeding' }),
})

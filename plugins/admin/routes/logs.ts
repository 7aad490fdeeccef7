// Spec 3, Logs and milestones (admin only): the usage summary, the audit, API and access logs, and the developmental
// milestones with their seed. Routing, guards, validation and response shaping; the rules live in services/logs.ts
// and in the clinical plugin's milestones service.
import { Elysia, t } from 'elysia'
import { API_LOG_BUCKET_S, LATENCY_BOUNDS_MS } from '../../../src/core/metrics'
import { listMilestones, seedMilestones, USAGE_SUMMARY_DAYS } from '../../clinical/exports'
import type { AdminState } from '../index'
import {
  ACCESS_LIMIT_DEFAULT, AccessEntry, AccessQuery, API_WINDOW_DEFAULT_MIN, ApiMetricEntry, ApiQuery, AUDIT_LIMIT_DEFAULT, AuditEntry, AuditQuery,
  MilestoneObject, SeedResult, UsageQuery, UsageSummary,
} from '../models/logs'
import * as logs from '../services/logs'

const logsTag = ['Admin: logs']
const milestonesTag = ['Admin: milestones']
const ADMIN = '401 without a session; 403 for non-admins.'
const RANGE = '`from` and `to` are ISO 8601 instants (400 when not, or when `from` is after `to`); other invalid filters answer 400.'
const retention = (days: number) => `Entries are kept ${days} days; a daily sweep deletes older ones.`

export const logRoutes = ({ core, clinical: { audit, auth } }: AdminState) =>
  new Elysia({ prefix: '/api' })
    .use(auth)
    .get('/logs/usage', ({ query }) => logs.usageLog(core, query.days ?? USAGE_SUMMARY_DAYS), {
      auth: 'admin', query: UsageQuery, response: UsageSummary,
      detail: {
        tags: logsTag, summary: 'AI usage summary',
        description: [
          `The calls of the AI endpoints (generation, transcription, speech) over the last \`days\` (default ${USAGE_SUMMARY_DAYS}),`,
          'successful or not: `byModel` [{model, count, tokens}] and `byEndpoint` [{endpoint, count}], the busiest first.',
          'No text of any call is kept.', retention(logs.USAGE_RETENTION_DAYS), ADMIN,
        ].join(' '),
      },
    })
    .get('/logs/audit', ({ query }) => logs.listAudit(core, query, query.limit ?? AUDIT_LIMIT_DEFAULT), {
      auth: 'admin', query: AuditQuery, response: t.Array(AuditEntry),
      detail: {
        tags: logsTag, summary: 'Audit log',
        description: [
          'Audit entries, newest first: id, at, action, userId (the user who acted or tried to; null for an unknown email),',
          'userEmail, ip and details (redacted before storage). Filters: `action`, `userId`, and the time range `from` (inclusive)',
          `to \`to\` (exclusive); \`limit\` as stated. Entries are written in batches (every second or 50 entries), so the latest`,
          `second may not show yet. ${RANGE}`, retention(logs.AUDIT_RETENTION_DAYS), ADMIN,
        ].join(' '),
      },
    })
    .get('/logs/api', ({ query }) => logs.apiMetrics(core, query.service ?? 'clinical', query.minutes ?? API_WINDOW_DEFAULT_MIN), {
      auth: 'admin', query: ApiQuery, response: t.Array(ApiMetricEntry),
      detail: {
        tags: logsTag, summary: 'API metrics per route',
        description: [
          'One entry per route and method with requests in the window (the last `minutes`, counted in whole minutes), busiest',
          'first: count, clientErrors (4xx), errors (5xx), errorRate (errors / count), meanMs, and the p50, p95 and p99 latencies in',
          `milliseconds, estimated from a histogram with bounds ${LATENCY_BOUNDS_MS.join(', ')} ms (linear inside a bound; beyond the`,
          `last, the last). Routes are labelled by their pattern; requests no route matched are \`unmatched\`. Every process adds`,
          `its figures per ${API_LOG_BUCKET_S} s bucket and stores them every few seconds, so the latest seconds may not show yet.`,
          retention(logs.API_METRICS_RETENTION_DAYS), ADMIN,
        ].join(' '),
      },
    })
    .get('/logs/access', ({ query }) => logs.listAccess(core, query, query.limit ?? ACCESS_LIMIT_DEFAULT), {
      auth: 'admin', query: AccessQuery, response: t.Array(AccessEntry),
      detail: {
        tags: logsTag, summary: 'Access log: sign-in attempts',
        description: [
          'Sign-in attempts whose outcome is known, newest first: id, at, userId, email (as typed, or the account\'s), name, ip,',
          'client (`web` or `mobile`), outcome (`success`, `oidc`, `failed`, `blocked`) and reason. A password checked while the',
          'second factor is still to come is not an attempt yet; attempts refused by the rate limit are not listed. Filters:',
          `\`userId\`, \`email\`, \`outcome\`, \`client\`, \`from\` (inclusive) to \`to\` (exclusive); \`limit\` as stated. ${RANGE}`,
          retention(logs.ACCESS_RETENTION_DAYS), ADMIN,
        ].join(' '),
      },
    })
    .get('/admin/milestones', () => listMilestones(core), {
      auth: 'admin', response: t.Array(MilestoneObject),
      detail: {
        tags: milestonesTag, summary: 'Developmental milestones',
        description: [
          'Every milestone grouped by age: the youngest age first, then by domain (social/emotional, language/communication,',
          'cognitive, movement/physical), then in the checklist\'s order (`sort`). Fields: id, ageMonths, ageLabel, domain,',
          'domainLabel, text, sort. Empty until the default set is seeded.', ADMIN,
        ].join(' '),
      },
    })
    .post('/admin/milestones/seed', async ({ user, request }) => {
      const count = await seedMilestones(core)
      audit.write({ action: 'milestones_seeded', userId: user.id, ip: core.clientAddress(request), details: { adminId: user.id, count } })
      return { success: true as const, count }
    }, {
      auth: 'admin', response: SeedResult,
      detail: {
        tags: milestonesTag, summary: 'Load the default milestone set',
        description: [
          'Loads the default set shipped with the app: what most children do by 2, 4, 6, 9, 12, 15 and 18 months and 2, 3, 4 and',
          '5 years, in four domains, after the CDC "Learn the Signs. Act Early." checklists (2022 revision). Idempotent: each default',
          'milestone is inserted or brought back to its shipped text, and anything else goes, so seeding again leaves one set',
          'with the same ids. No body. `count` is how many milestones there are afterwards. Audited as `milestones_seeded`.', ADMIN,
        ].join(' '),
      },
    })

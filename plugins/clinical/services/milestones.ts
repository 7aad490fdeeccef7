// Developmental milestones (spec 3, Logs and milestones): the list grouped by age, seeding the default set shipped in
// defaults/milestones.ts, and the reference list the milestone narrative's prompt gets for the child's age group.
import { fragment, joinFragments } from '../../../src/core/db'
import type { Core } from '../../../src/plugin'
import {
  DEFAULT_MILESTONES, MILESTONE_AGES_MONTHS, MILESTONE_DOMAIN_LABELS, MILESTONE_DOMAINS, milestoneAgeLabel,
  type MilestoneAge, type MilestoneDomain,
} from '../defaults/milestones'

/** A milestone as the admin's list shows it. */
export interface Milestone {
  id: number
  ageMonths: number
  /** e.g. `9 months`, `2 years`. */
  ageLabel: string
  domain: MilestoneDomain
  domainLabel: string
  text: string
  /** The position in the set: by age, then domain, then the checklist's order. */
  sort: number
}

interface DefaultMilestone {
  key: string
  ageMonths: MilestoneAge
  domain: MilestoneDomain
  text: string
  sort: number
}

/** Seeding from several processes at once takes turns, so the set is written once. */
const SEED_LOCK = 'clinical.milestones.seed'
/** A child is matched to a checklist age from 2 months up to (not including) 6 years. */
const OLDEST_MATCHED_MONTHS = 72

/** The default set in list order, each with its stable key (`9m-cognitive-2`). */
export function defaultMilestones(): DefaultMilestone[] {
  const rows: DefaultMilestone[] = []
  for (const ageMonths of MILESTONE_AGES_MONTHS) {
    for (const domain of MILESTONE_DOMAINS) {
      DEFAULT_MILESTONES[ageMonths][domain].forEach((text, i) => {
        rows.push({ key: `${ageMonths}m-${domain}-${i + 1}`, ageMonths, domain, text, sort: rows.length + 1 })
      })
    }
  }
  return rows
}

type MilestoneRow = { id: number; age_months: number; domain: MilestoneDomain; text: string; sort: number }

const toMilestone = (r: MilestoneRow): Milestone => ({
  id: r.id, ageMonths: r.age_months, ageLabel: milestoneAgeLabel(r.age_months),
  domain: r.domain, domainLabel: MILESTONE_DOMAIN_LABELS[r.domain], text: r.text, sort: r.sort,
})

/** Every milestone, youngest age first, then by domain and the checklist's order. */
export async function listMilestones(core: Core): Promise<Milestone[]> {
  const rows = await core.db.sql<MilestoneRow>`
    select id, age_months, domain, text, sort from clinical.milestones order by age_months, sort, id`
  return rows.map(toMilestone)
}

/**
 * Loads the default set: each default milestone's row is inserted or brought back to the shipped text (by its key),
 * and rows the set no longer holds go, so seeding twice (or from two processes at once) leaves one set with
 * unchanged ids. Answers how many milestones there are afterwards.
 */
export async function seedMilestones(core: Core): Promise<number> {
  const rows = defaultMilestones()
  return core.transaction(async (tx) => {
    await tx.db.sql`select pg_advisory_xact_lock(hashtext(${SEED_LOCK}))`
    await tx.db.sql`
      insert into clinical.milestones (key, age_months, domain, text, sort)
      values ${joinFragments(rows.map((m) => fragment`(${m.key}, ${m.ageMonths}::integer, ${m.domain}, ${m.text}, ${m.sort}::integer)`), ',')}
      on conflict (key) do update set
        age_months = excluded.age_months, domain = excluded.domain, text = excluded.text, sort = excluded.sort`
    await tx.db.sql`
      delete from clinical.milestones where key not in (${joinFragments(rows.map((m) => fragment`${m.key}`), ',')})`
    const [count] = await tx.db.sql<{ n: number }>`select count(*)::int as n from clinical.milestones`
    return count!.n
  })
}

/** How many milestones are stored. */
export async function countMilestones(core: Core): Promise<number> {
  const [row] = await core.db.sql<{ n: number }>`select count(*)::int as n from clinical.milestones`
  return row!.n
}

const AGE_PART = /(\d+(?:\.\d+)?)\s*-?\s*(years?|yrs?|y\/?o|y|months?|mths?|mos?|m|weeks?|wks?|w)(?![a-z])/gi
// Weeks count four to the month, as infant visits do (the 2-month check is the 8-week check).
const MONTHS_PER_UNIT: Record<string, number> = { y: 12, m: 1, w: 1 / 4 }

/**
 * The checklist age a patient age names (`9 months`, `18 mo`, `2 years`, `2-year-old`, `1 year 3 months`): the latest
 * checklist age at or below it, as milestones of that age are expected by then (a 10-month-old: the 9-month list).
 * null without a unit, below 2 months or from 6 years on.
 */
export function milestoneAgeGroup(patientAge: unknown): MilestoneAge | null {
  if (typeof patientAge !== 'string') return null
  let months = 0
  let found = false
  for (const [, amount, unit] of patientAge.slice(0, 200).matchAll(AGE_PART)) {
    months += Number(amount) * MONTHS_PER_UNIT[unit!.toLowerCase()[0]!]!
    found = true
  }
  if (!found || months >= OLDEST_MATCHED_MONTHS) return null
  // A little slack, so a rounded fraction of a year still reaches the age it names.
  const whole = Math.floor(months + 0.05)
  return [...MILESTONE_AGES_MONTHS].reverse().find((age) => age <= whole) ?? null
}

/**
 * The stored milestones of one checklist age by domain; the shipped defaults when the table holds none for it yet
 * (before the first seed), so a narrative never lacks its reference list.
 */
export async function milestonesForAge(core: Core, ageMonths: MilestoneAge): Promise<Array<{ domain: MilestoneDomain; text: string }>> {
  const rows = await core.db.sql<{ domain: MilestoneDomain; text: string }>`
    select domain, text from clinical.milestones where age_months = ${ageMonths} order by sort, id`
  if (rows.length > 0) return rows
  return defaultMilestones().filter((m) => m.ageMonths === ageMonths).map(({ domain, text }) => ({ domain, text }))
}

/** The milestone narrative's reference block: the age's milestones by domain, marked as not being findings. */
export function expectedMilestonesBlock(ageMonths: number, rows: ReadonlyArray<{ domain: MilestoneDomain; text: string }>): string {
  const label = milestoneAgeLabel(ageMonths)
  const sections = MILESTONE_DOMAINS
    .map((domain) => ({ domain, items: rows.filter((r) => r.domain === domain) }))
    .filter((s) => s.items.length > 0)
    .map((s) => `${MILESTONE_DOMAIN_LABELS[s.domain]}:\n${s.items.map((r) => `- ${r.text}`).join('\n')}`)
  return [
    `For reference, the milestones most children reach by ${label}, by domain. They are not findings about this patient:`,
    'compare the checklist above with them, and do not report any of them as met or not met unless the checklist says so.',
    `<expected_milestones age="${label}">`,
    sections.join('\n'),
    '</expected_milestones>',
  ].join('\n')
}

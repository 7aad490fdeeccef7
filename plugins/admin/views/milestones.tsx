// The admin console's developmental milestones (spec 3, Logs and milestones): the list under a heading per age group
// with a sub-list per domain, how many there are, and the form that loads the default set (idempotent). The content
// under the heading is one element, the fragment an htmx load answers with.
import { Notice, type Flash } from '../../../views/layout'
import type { NavUser } from '../../clinical/views/common'
import type { Milestone } from '../../clinical/exports'
import { AdminLayout } from './layout'

export interface MilestonesView { base: string; milestones: Milestone[]; notice?: string | null }

/** The milestones of each age, youngest first, and within an age each domain in the list's order. */
function byAge(milestones: Milestone[]) {
  const ages = Map.groupBy(milestones, (m) => m.ageMonths)
  return [...ages.entries()].sort(([a], [b]) => a - b).map(([ageMonths, rows]) => ({
    ageMonths,
    ageLabel: rows[0]!.ageLabel,
    domains: [...Map.groupBy(rows, (m) => m.domain).values()].map((items) => ({ domain: items[0]!.domain, label: items[0]!.domainLabel, items })),
  }))
}

const countWords = (milestones: Milestone[], ages: number) => milestones.length === 0
  ? 'No milestones yet: load the default set below.'
  : `${milestones.length} ${milestones.length === 1 ? 'milestone' : 'milestones'} in ${ages} ${ages === 1 ? 'age group' : 'age groups'}.`

export const MilestonesContent = (p: MilestonesView) => {
  const ages = byAge(p.milestones)
  const seed = `${p.base}/admin/milestones/seed`
  return (
    <div id="milestones">
      <Notice text={p.notice} />
      <p id="milestone-count" role="status" safe>{countWords(p.milestones, ages.length)}</p>
      <form class="stack ms-seed" action={seed} method="post" hx-post={seed} hx-target="#milestones" hx-swap="outerHTML">
        <p class="muted">
          The default set: what most children do by 2, 4, 6, 9, 12, 15 and 18 months and by 2, 3, 4 and 5 years, in four
          domains, after the CDC “Learn the Signs. Act Early.” checklists. Loading it again does not duplicate it: each
          default milestone gets its shipped text back, and milestones outside the set are removed.
        </p>
        <div>
          <button type="submit">Load the default milestones</button>
        </div>
      </form>
      {ages.length === 0 ? '' : (
        <nav class="actions ms-ages" aria-label="Age groups">
          {ages.map((age) => <a href={`#age-${age.ageMonths}`} safe>{age.ageLabel}</a>)}
        </nav>
      )}
      {ages.map((age) => (
        <section class="ms-age" id={`age-${age.ageMonths}`} aria-labelledby={`age-${age.ageMonths}-title`}>
          <h2 id={`age-${age.ageMonths}-title`} safe>{`By ${age.ageLabel}`}</h2>
          <div class="ms-domains">
            {age.domains.map((d) => (
              <div class="ms-domain">
                <h3 safe>{d.label}</h3>
                <ul>
                  {d.items.map((m) => <li id={`milestone-${m.id}`} safe>{m.text}</li>)}
                </ul>
              </div>
            ))}
          </div>
        </section>
      ))}
    </div>
  )
}

export const MilestonesPage = (p: MilestonesView & { user: NavUser; flash?: Flash }) => (
  <AdminLayout base={p.base} title="Milestones" user={p.user} area="/milestones" flash={p.flash}>
    <h1>Developmental milestones</h1>
    <p>By age and domain: the reference list the milestone narrative compares a child’s checklist with.</p>
    <MilestonesContent base={p.base} milestones={p.milestones} notice={p.notice} />
  </AdminLayout>
)

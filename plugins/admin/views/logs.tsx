// The admin console's logs (spec 3, Logs): the overview with its charts (AI usage by model and day, API latency and
// error rate over a chosen window with the per-route table, sign-ins by outcome per day), the audit log and the
// sign-ins, each with its filters as a GET form (htmx swaps the results). A chart is a uPlot canvas drawn by
// admin-charts.js from a JSON block next to it: an image with a name and a one-sentence summary; the tables are its
// text version. Every database string is an attribute or a `safe` text child.
import { describedBy, type Errors, Field, FieldNotes, Problem, When } from '../../../views/layout'
import type { NavUser } from '../../clinical/views/common'
import type { AccessEntry, ApiMetricEntry, AuditEntry } from '../models/logs'
import type { UsageSummary } from '../../clinical/exports'
import { AdminLayout } from './layout'

/** What admin-charts.js draws: one x per point (UTC seconds: a day's or an interval's start), one line per series. */
export interface ChartData {
  scale: 'day' | 'time'
  x: number[]
  unit: 'count' | 'ms' | 'percent'
  yLabel: string
  series: Array<{ label: string; values: Array<number | null> }>
}
export interface Chart { id: string; title: string; summary: string; data: ChartData }

/** The API figures' windows: each with the interval its chart adds up. */
export const API_WINDOWS = {
  hour: { label: 'Last hour', words: 'the last hour', minutes: 60, stepMinutes: 1 },
  day: { label: 'Last 24 hours', words: 'the last 24 hours', minutes: 1_440, stepMinutes: 15 },
  week: { label: 'Last 7 days', words: 'the last 7 days', minutes: 10_080, stepMinutes: 120 },
} as const
export type ApiWindow = keyof typeof API_WINDOWS

export const OUTCOME_WORDS = { success: 'Signed in', oidc: 'Signed in with single sign-on', failed: 'Failed', blocked: 'Blocked' } as const
const REASON_WORDS: Record<string, string> = {
  unknown_email: 'no account has this email', wrong_password: 'wrong password', invalid_2fa_code: 'wrong two-factor code',
  disabled: 'the account is disabled', email_not_verified: 'the email is not verified', local_auth_disabled: 'password sign-in is turned off',
}
const CLIENT_WORDS = { web: 'Web browser', mobile: 'Mobile app' } as const

/** JSON for a `<script type="application/json">` block: `<`, `>`, `&` and the line separators escaped, so no text can end the block. */
export const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
/** A day (YYYY-MM-DD) in words: "3 Jan 2030". */
export const dayWords = (day: string) => `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`
export const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en-GB')} ${n === 1 ? one : many}`
export const percentWords = (fraction: number) => `${Math.round(fraction * 1000) / 10}%`
const ms = (n: number) => `${n.toLocaleString('en-GB')} ms`

// ---- shared pieces ---------------------------------------------------------------------------------------------------

const LOG_PAGES = [
  { path: '', label: 'Usage, API and sign-ins' },
  { path: '/audit', label: 'Audit log' },
  { path: '/access', label: 'Sign-in attempts' },
] as const
type LogPage = (typeof LOG_PAGES)[number]['path']

const LogsFrame = (p: { base: string; user: NavUser; title: string; page: LogPage; charts?: boolean; children: JSX.Element | JSX.Element[] }) => (
  <AdminLayout base={p.base} title={p.title} user={p.user} area="/logs" pageScripts={p.charts ? ['uplot/uPlot.iife.min.js', 'charts.js', 'admin-charts.js'] : undefined}>
    <h1 safe>{p.title}</h1>
    <nav class="actions log-pages" aria-label="Logs">
      {LOG_PAGES.map((l) => <a href={`${p.base}/admin/logs${l.path}`} aria-current={l.path === p.page ? 'page' : undefined}>{l.label}</a>)}
    </nav>
    {p.children}
  </AdminLayout>
)

/** A chart: its title names the image, its summary describes it; without JavaScript, a line of text points to the table. */
export const ChartFigure = ({ chart }: { chart: Chart }) => (
  <figure class="chart log-chart">
    <h3 id={`${chart.id}-title`} safe>{chart.title}</h3>
    <div id={chart.id} class="chart-plot" role="img" aria-labelledby={`${chart.id}-title`} aria-describedby={`${chart.id}-summary`}
      data-chart={`${chart.id}-data`}>
      <p class="muted">The chart needs JavaScript; the table has the same figures.</p>
    </div>
    <figcaption id={`${chart.id}-summary`} safe>{chart.summary}</figcaption>
    {/* Not escaped as HTML on purpose: scriptJson makes the text safe inside the block. */}
    <script type="application/json" id={`${chart.id}-data`}>{scriptJson(chart.data)}</script>
  </figure>
)

const Select = (p: { label: string; name: string; value: string; options: Array<[string, string]>; error?: string }) => (
  <label for={`f-${p.name}`}>
    <span safe>{p.label}</span>
    <select id={`f-${p.name}`} name={p.name} aria-invalid={p.error ? 'true' : undefined} aria-describedby={describedBy(`f-${p.name}`, undefined, p.error)}>
      {p.options.map(([value, label]) => <option value={value} selected={value === p.value ? true : undefined} safe>{label}</option>)}
    </select>
    <FieldNotes id={`f-${p.name}`} error={p.error} />
  </label>
)

/** How many entries the list holds, and a hint when the limit cut it. */
const countLine = (n: number, limit: number, one: string, many: string) =>
  n === 0 ? `No ${many} match the filters.` : n >= limit ? `The newest ${plural(n, one, many)}: narrow the filters or raise the limit to see older ones.` : `${plural(n, one, many)}, newest first.`

// ---- the overview: usage, API, sign-ins ----------------------------------------------------------------------------

export interface ApiFiguresView { base: string; window: ApiWindow; latency: Chart; errorRate: Chart; routes: ApiMetricEntry[] }

/** The API figures of a window: the fragment the window form swaps. */
export const ApiFigures = (p: ApiFiguresView) => {
  const w = API_WINDOWS[p.window]
  return (
    <section id="api-figures" aria-labelledby="api-title">
      <h2 id="api-title">API requests</h2>
      <form class="actions log-window" action={`${p.base}/admin/logs`} method="get" hx-get={`${p.base}/admin/logs`} hx-trigger="change, submit"
        hx-target="#api-figures" hx-swap="outerHTML" hx-push-url="true">
        <Select label="Window" name="window" value={p.window} options={Object.entries(API_WINDOWS).map(([k, v]) => [k, v.label])} />
        <button type="submit" class="secondary">Show</button>
      </form>
      <p class="muted" safe>{`The clinical service's requests over ${w.words}, in ${w.stepMinutes === 1 ? '1-minute' : w.stepMinutes < 60 ? `${w.stepMinutes}-minute` : `${w.stepMinutes / 60}-hour`} intervals (UTC). Latencies are estimated from a histogram.`}</p>
      <div class="log-charts">
        <ChartFigure chart={p.latency} />
        <ChartFigure chart={p.errorRate} />
      </div>
      <h3>Per route</h3>
      {p.routes.length === 0 ? <p class="muted" safe>{`No requests in ${w.words}.`}</p> : (
        <div class="log-table" role="region" aria-label="Requests per route" tabindex="0">
          <table id="api-routes">
            <caption class="visually-hidden" safe>{`Requests per route over ${w.words}, the busiest first`}</caption>
            <thead>
              <tr>
                <th scope="col">Route</th><th scope="col">Method</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Server errors</th>
                <th scope="col" class="num">Error rate</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th><th scope="col" class="num">p99</th>
              </tr>
            </thead>
            <tbody>
              {p.routes.map((r) => (
                <tr>
                  <th scope="row"><code safe>{r.route}</code></th>
                  <td safe>{r.method}</td>
                  <td class="num">{r.count.toLocaleString('en-GB')}</td>
                  <td class="num">{r.errors.toLocaleString('en-GB')}</td>
                  <td class="num">{percentWords(r.errorRate)}</td>
                  <td class="num">{ms(r.p50)}</td><td class="num">{ms(r.p95)}</td><td class="num">{ms(r.p99)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

export interface LogsOverview {
  base: string
  user: NavUser
  usage: UsageSummary
  calls: Chart
  tokens: Chart
  usageDays: Array<{ day: string; model: string; count: number; tokens: number }>
  api: ApiFiguresView
  signIns: Chart
  signInDays: Array<{ day: string } & Record<keyof typeof OUTCOME_WORDS, number>>
}

export const LogsPage = (p: LogsOverview) => (
  <LogsFrame base={p.base} user={p.user} title="Logs" page="" charts>
    <link rel="stylesheet" href={`${p.base}/static/uplot/uPlot.min.css`} />
    <section id="usage" aria-labelledby="usage-title">
      <h2 id="usage-title" safe>{`AI usage, last ${p.usage.days} days`}</h2>
      <div class="log-charts">
        <ChartFigure chart={p.calls} />
        <ChartFigure chart={p.tokens} />
      </div>
      {p.usage.byModel.length === 0 ? <p class="muted" safe>{`No AI calls in the last ${p.usage.days} days.`}</p> : (
        <div class="log-tables">
          <table id="usage-models">
            <caption>By model</caption>
            <thead><tr><th scope="col">Model</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Tokens</th></tr></thead>
            <tbody>
              {p.usage.byModel.map((m) => (
                <tr><th scope="row" safe>{m.model}</th><td class="num">{m.count.toLocaleString('en-GB')}</td><td class="num">{m.tokens.toLocaleString('en-GB')}</td></tr>
              ))}
            </tbody>
          </table>
          <table id="usage-endpoints">
            <caption>By endpoint</caption>
            <thead><tr><th scope="col">Endpoint</th><th scope="col" class="num">Calls</th></tr></thead>
            <tbody>
              {p.usage.byEndpoint.map((e) => <tr><th scope="row"><code safe>{e.endpoint}</code></th><td class="num">{e.count.toLocaleString('en-GB')}</td></tr>)}
            </tbody>
          </table>
        </div>
      )}
      {p.usageDays.length === 0 ? '' : (
        <details>
          <summary>Calls and tokens per day and model</summary>
          <table id="usage-days">
            <caption class="visually-hidden">AI calls and tokens per day (UTC) and model; days without calls are left out</caption>
            <thead><tr><th scope="col">Day</th><th scope="col">Model</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Tokens</th></tr></thead>
            <tbody>
              {p.usageDays.map((d) => (
                <tr><td>{dayWords(d.day)}</td><td safe>{d.model}</td><td class="num">{d.count.toLocaleString('en-GB')}</td><td class="num">{d.tokens.toLocaleString('en-GB')}</td></tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </section>
    <ApiFigures {...p.api} />
    <section id="sign-ins" aria-labelledby="sign-ins-title">
      <h2 id="sign-ins-title" safe>{`Sign-ins, last ${p.signInDays.length} days`}</h2>
      <ChartFigure chart={p.signIns} />
      <details>
        <summary>Sign-in attempts per day and outcome</summary>
        <table id="sign-in-days">
          <caption class="visually-hidden">Sign-in attempts per day (UTC) by outcome</caption>
          <thead>
            <tr><th scope="col">Day</th>{Object.values(OUTCOME_WORDS).map((w) => <th scope="col" class="num">{w}</th>)}</tr>
          </thead>
          <tbody>
            {p.signInDays.map((d) => (
              <tr><td>{dayWords(d.day)}</td>{Object.keys(OUTCOME_WORDS).map((o) => <td class="num">{d[o as keyof typeof OUTCOME_WORDS]}</td>)}</tr>
            ))}
          </tbody>
        </table>
      </details>
      <p><a href={`${p.base}/admin/logs/access`}>Every sign-in attempt, with its address and client</a></p>
    </section>
  </LogsFrame>
)

// ---- the audit log and the sign-in attempts -------------------------------------------------------------------------

/** The filters as typed (strings), so the form shows them again. */
export type Filters = Record<'action' | 'user' | 'from' | 'to' | 'limit' | 'outcome' | 'client', string>
export interface ListState<Entry> { entries: Entry[]; limit: number; errors?: Errors; message?: string | null }

const Results = <Entry,>(p: ListState<Entry> & { id: string; one: string; many: string; table: (entries: Entry[]) => JSX.Element }) => (
  <div id={p.id}>
    {p.message || p.errors ? <Problem text={p.message ?? 'Check the filters: ' + Object.values(p.errors ?? {}).join('; ')} /> : ''}
    <p class="muted" role="status" safe>{countLine(p.entries.length, p.limit, p.one, p.many)}</p>
    {p.entries.length === 0 ? '' : p.table(p.entries)}
  </div>
)

const RangeFields = (p: { filters: Filters; errors?: Errors; limitMax: number; limitDefault: number }) => (
  <>
    <Field label="From (UTC day)" name="from" id="f-from" type="date" value={p.filters.from} error={p.errors?.from} />
    <Field label="To (UTC day, included)" name="to" id="f-to" type="date" value={p.filters.to} error={p.errors?.to} />
    <Field label="At most" name="limit" id="f-limit" type="number" inputmode="numeric" value={p.filters.limit} error={p.errors?.limit}
      hint={`1 to ${p.limitMax}; ${p.limitDefault} when empty`} />
  </>
)

const FilterForm = (p: { url: string; target: string; children: JSX.Element | JSX.Element[] }) => (
  <form class="log-filters" action={p.url} method="get" role="search" aria-label="Filters" hx-get={p.url} hx-target={`#${p.target}`} hx-swap="outerHTML"
    hx-push-url="true">
    <div class="log-filter-fields">{p.children}</div>
    <div class="actions">
      <button type="submit">Filter</button>
      <a href={p.url}>Clear the filters</a>
    </div>
  </form>
)

export const AuditResults = (p: ListState<AuditEntry>) => (
  <Results id="audit-results" one="entry" many="entries" {...p} table={(entries) => (
    <div class="log-table" role="region" aria-label="Audit entries" tabindex="0">
      <table>
        <caption class="visually-hidden">Audit entries, newest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Action</th><th scope="col">User</th><th scope="col">Address</th><th scope="col">Details</th></tr></thead>
        <tbody>
          {entries.map((e) => (
            <tr id={`audit-${e.id}`}>
              <td class="log-time"><When iso={e.at} /></td>
              <td><code safe>{e.action}</code></td>
              <td safe>{e.userEmail ?? (e.userId === null ? '—' : `User ${e.userId}`)}</td>
              <td safe>{e.ip ?? '—'}</td>
              <td class="log-details"><code safe>{e.details}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )} />
)

export const AuditPage = (p: { base: string; user: NavUser; filters: Filters; limitMax: number; limitDefault: number } & ListState<AuditEntry>) => (
  <LogsFrame base={p.base} user={p.user} title="Audit log" page="/audit">
    <p>What people did and tried to do: sign-ins, account and setting changes. Details are stored redacted.</p>
    <FilterForm url={`${p.base}/admin/logs/audit`} target="audit-results">
      <Field label="Action" name="action" id="f-action" value={p.filters.action} error={p.errors?.action} hint="e.g. login_failed" />
      <Field label="User id or email" name="user" id="f-user" value={p.filters.user} error={p.errors?.user} />
      <RangeFields filters={p.filters} errors={p.errors} limitMax={p.limitMax} limitDefault={p.limitDefault} />
    </FilterForm>
    <AuditResults entries={p.entries} limit={p.limit} errors={p.errors} message={p.message} />
  </LogsFrame>
)

/** An attempt's outcome in words, with the reason of a failed or blocked one. */
export const outcomeWords = (e: Pick<AccessEntry, 'outcome' | 'reason'>) =>
  e.reason ? `${OUTCOME_WORDS[e.outcome]}: ${REASON_WORDS[e.reason] ?? e.reason}` : OUTCOME_WORDS[e.outcome]

export const AccessResults = (p: ListState<AccessEntry>) => (
  <Results id="access-results" one="attempt" many="attempts" {...p} table={(entries) => (
    <div class="log-table" role="region" aria-label="Sign-in attempts" tabindex="0">
      <table>
        <caption class="visually-hidden">Sign-in attempts, newest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">User</th><th scope="col">Address</th><th scope="col">Client</th><th scope="col">Outcome</th></tr></thead>
        <tbody>
          {entries.map((e) => (
            <tr id={`access-${e.id}`} class={`log-${e.outcome}`}>
              <td class="log-time"><When iso={e.at} /></td>
              <td>
                {e.name ? <><span safe>{e.name}</span><br /></> : ''}
                <span class={e.name ? 'muted' : ''} safe>{e.email ?? (e.userId === null ? '—' : `User ${e.userId}`)}</span>
              </td>
              <td safe>{e.ip ?? '—'}</td>
              <td>{CLIENT_WORDS[e.client]}</td>
              <td safe>{outcomeWords(e)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )} />
)

export const AccessPage = (p: { base: string; user: NavUser; filters: Filters; limitMax: number; limitDefault: number } & ListState<AccessEntry>) => (
  <LogsFrame base={p.base} user={p.user} title="Sign-in attempts" page="/access">
    <p>Every sign-in whose outcome is known: when, who, from which address and client, and how it ended.</p>
    <FilterForm url={`${p.base}/admin/logs/access`} target="access-results">
      <Field label="User id or email" name="user" id="f-user" value={p.filters.user} error={p.errors?.user} />
      <Select label="Outcome" name="outcome" value={p.filters.outcome} error={p.errors?.outcome}
        options={[['', 'Any outcome'], ...Object.entries(OUTCOME_WORDS)]} />
      <Select label="Client" name="client" value={p.filters.client} error={p.errors?.client} options={[['', 'Any client'], ...Object.entries(CLIENT_WORDS)]} />
      <RangeFields filters={p.filters} errors={p.errors} limitMax={p.limitMax} limitDefault={p.limitDefault} />
    </FilterForm>
    <AccessResults entries={p.entries} limit={p.limit} errors={p.errors} message={p.message} />
  </LogsFrame>
)

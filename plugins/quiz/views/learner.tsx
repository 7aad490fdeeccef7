// The quiz service's learner pages, read only: "My progress" (the dashboard figures, the scores over time, a table per
// quiz, the history), "Due for review" (the spaced-repetition schedule) and "My favorite questions". Each page's main
// content is one element with an id, which is also the fragment htmx requests get.
import { Layout, When, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import type { Dashboard, HistoryEntry } from '../models/attempts'
import type { BankQuestion } from '../models/bank'
import type { DueResponse } from '../models/reminders'
import { BRAND, SignedInNav } from './accounts'

interface Frame { ctx: PageContext; user: UserResponse }

/** A percentage in words: 80 as "80%", 66.7 as "66.7%". */
export const percent = (n: number) => `${Math.round(n * 10) / 10}%`

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

// My progress ---------------------------------------------------------------------------------------------------

/** One quiz's line on the scores-over-time chart: its completed attempts, oldest first (as in the history). */
export interface ChartQuiz { quiz_id: number; title: string; points: Array<{ attempt_id: number; date: string; percentage: number }> }
/** What the page hands progress-chart.js: the quizzes drawn (the most recent first) and how many there are in all. */
export interface ScoresChart { quizzes: ChartQuiz[]; quizzes_total: number }

/** The chart's data from the history (quizzes by latest activity, newest first): the `limit` most recent quizzes. */
export const scoresChart = (history: HistoryEntry[], limit: number): ScoresChart => ({
  quizzes: history.slice(0, limit).map((h) => ({
    quiz_id: h.quiz_id,
    title: h.title,
    points: h.attempts.map((a) => ({ attempt_id: a.attempt_id, date: a.date, percentage: a.percentage })),
  })),
  quizzes_total: history.length,
})

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
/** An ISO timestamp as a day in words, in UTC like the tables: "3 Jan 2025". */
const day = (iso: string) => {
  const d = new Date(iso)
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`
}

/** The chart in one sentence, for screen readers (its aria-label): how many attempts, over which days, the latest score. */
export function chartSummary(chart: ScoresChart): string {
  const points = chart.quizzes.flatMap((q) => q.points).sort((a, b) => a.date.localeCompare(b.date) || a.attempt_id - b.attempt_id)
  const first = points[0]
  const latest = points[points.length - 1]
  if (!first || !latest) return 'No scores yet.'
  const n = chart.quizzes.length
  const quizzes = n < chart.quizzes_total ? `the ${n} quizzes taken most recently` : plural(n, 'quiz', 'quizzes')
  const span = day(first.date) === day(latest.date) ? `on ${day(first.date)}` : `from ${day(first.date)} to ${day(latest.date)}`
  return `Scores of ${plural(points.length, 'attempt', 'attempts')} in ${quizzes}, ${span} (UTC); latest ${percent(latest.percentage)}.`
}

/**
 * JSON for a `<script type="application/json">` block. The browser reads that block as raw text up to the first
 * `</script`, which HTML escaping cannot prevent (entities are not decoded there), so `<`, `>` and `&` (and the two
 * line separators) become JSON's \u escapes: the text parses back unchanged and a title cannot end the block.
 */
export const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/**
 * Scores over time: one line per quiz (a single line through every quiz would rise and fall with how hard each quiz
 * is, not with the learner's progress; per quiz, a retaken quiz shows its trend). Drawn by progress-chart.js with
 * uPlot from the JSON block; the scripts sit here, next to the figure, so that htmx runs them when a boosted
 * navigation swaps this page in (it does not merge a new page's head). The tables below are the text alternative.
 */
const ScoresOverTime = ({ base, chart }: { base: string; chart: ScoresChart }) => (
  <section id="scores-over-time" aria-labelledby="scores-over-time-title">
    <h2 id="scores-over-time-title">Scores over time</h2>
    <link rel="stylesheet" href={`${base}/static/uplot/uPlot.min.css`} />
    <figure class="chart">
      <div id="progress-chart" role="img" aria-label={chartSummary(chart)}>
        <p class="muted">The chart needs JavaScript; the tables below list every score.</p>
      </div>
      <figcaption class="muted">
        {`Your percentage in each completed attempt, by the time you finished it (UTC), one line per quiz. ${
          chart.quizzes.length < chart.quizzes_total
            ? `The ${chart.quizzes.length} quizzes you took most recently are drawn; the tables below list all ${chart.quizzes_total}.`
            : 'The tables below list every score.'}`}
      </figcaption>
    </figure>
    {/* Not escaped as HTML on purpose: scriptJson makes the text safe inside the block (see there). */}
    <script type="application/json" id="progress-data">{scriptJson(chart)}</script>
    <script src={`${base}/static/uplot/uPlot.iife.min.js`} defer></script>
    <script src={`${base}/static/charts.js`} defer></script>
    <script src={`${base}/static/progress-chart.js`} defer></script>
  </section>
)

export const ProgressContent = ({ base, dashboard, history, chartQuizzes }: { base: string; dashboard: Dashboard; history: HistoryEntry[]; chartQuizzes: number }) => (
  <div id="progress">
    <h2>Summary</h2>
    <dl class="facts">
      <dt>Quizzes attempted</dt><dd id="total-quizzes">{dashboard.total_quizzes}</dd>
      <dt>Attempts completed</dt><dd id="total-attempts">{dashboard.total_attempts}</dd>
      <dt>Average score</dt><dd id="average-score">{dashboard.total_attempts === 0 ? 'None yet' : percent(dashboard.average_score)}</dd>
    </dl>
    {dashboard.quiz_stats.length === 0
      ? <p class="muted">No attempts yet: open a quiz from <a href={`${base}/quizzes`}>Quizzes</a> to start.</p>
      : (
        <>
          {history.length > 0 ? <ScoresOverTime base={base} chart={scoresChart(history, chartQuizzes)} /> : ''}
          <h2>Scores by quiz</h2>
          <table>
            <caption class="muted">Completed attempts only; the latest quiz first.</caption>
            <thead>
              <tr>
                <th scope="col">Quiz</th><th scope="col">Attempts</th><th scope="col">Best</th>
                <th scope="col">Latest</th><th scope="col">Average</th>
              </tr>
            </thead>
            <tbody>
              {dashboard.quiz_stats.map((s) => (
                <tr id={`quiz-stat-${s.quiz_id}`}>
                  <th scope="row" safe>{s.quiz_title}</th>
                  <td>{s.attempts_count}</td>
                  <td>{percent(s.best_score)}</td>
                  <td>{percent(s.latest_score)}</td>
                  <td>{percent(s.average_score)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>History</h2>
          {history.map((h) => (
            <section id={`history-${h.quiz_id}`} aria-labelledby={`history-${h.quiz_id}-title`}>
              <h3 id={`history-${h.quiz_id}-title`} safe>{h.title}</h3>
              <table>
                <thead>
                  <tr><th scope="col">Completed</th><th scope="col">Score</th><th scope="col">Percentage</th><th scope="col">Answers</th></tr>
                </thead>
                <tbody>
                  {h.attempts.map((a) => (
                    <tr id={`attempt-${a.attempt_id}`}>
                      <td><When iso={a.date} /></td>
                      <td>{`${a.score} of ${a.total}`}</td>
                      <td>{percent(a.percentage)}</td>
                      <td><a href={`${base}/attempts/${a.attempt_id}`}>{`Review the attempt of ${a.date.slice(0, 10)}`}</a></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          ))}
        </>
      )}
  </div>
)

export const ProgressPage = (p: Frame & { dashboard: Dashboard; history: HistoryEntry[]; chartQuizzes: number }) => (
  <Layout title="My progress" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1>My progress</h1>
    <ProgressContent base={p.ctx.base} dashboard={p.dashboard} history={p.history} chartQuizzes={p.chartQuizzes} />
  </Layout>
)

// Due for review ------------------------------------------------------------------------------------------------

/** The daily review email, on or off: a plain form (it works without JavaScript); htmx swaps just this block. */
export const DigestForm = ({ base, on, saved }: { base: string; on: boolean; saved?: boolean }) => (
  <section id="digest" aria-labelledby="digest-title">
    <h2 id="digest-title">Daily review email</h2>
    <p>
      {on
        ? 'On: an email lists your questions due for review, once a day in the morning (07:00 server time), on days when something is due.'
        : 'Off. Turn it on to get an email listing your questions due for review, once a day in the morning (07:00 server time), on days when something is due.'}
    </p>
    <form class="inline" action={`${base}/reviews/digest`} method="post" hx-post={`${base}/reviews/digest`} hx-target="#digest" hx-swap="outerHTML">
      <input type="hidden" name="on" value={on ? '0' : '1'} />
      <button type="submit" class={on ? 'secondary' : undefined}>{on ? 'Turn the daily email off' : 'Turn the daily email on'}</button>
      {saved ? <span class="muted" role="status"> Saved.</span> : ''}
    </form>
  </section>
)

export const ReviewsContent = ({ base, due, limit, digest }: { base: string; due: DueResponse; limit: number; digest: boolean }) => (
  <div id="reviews">
    <dl class="facts">
      <dt>Questions due now</dt><dd id="due-count">{due.count}</dd>
      <dt>Next review</dt>
      <dd id="next-due">
        {due.next_due === null ? 'Nothing scheduled yet' : due.count > 0 ? <>Now (the oldest has been due since <When iso={due.next_due} />)</> : <When iso={due.next_due} />}
      </dd>
    </dl>
    {due.questions.length === 0
      ? <p class="muted">{due.next_due === null
        ? 'Nothing to review yet: questions you answer in a quiz are scheduled here.'
        : 'Nothing is due right now: come back at the time above.'}</p>
      : (
        <>
          <p><a class="button" href={`${base}/reviews/play`}>Review the due questions now</a></p>
          <h2>Due questions</h2>
          {due.count > due.questions.length ? <p class="muted">{`The ${limit} most overdue of ${due.count} are listed.`}</p> : ''}
          <table>
            <thead>
              <tr><th scope="col">Question</th><th scope="col">Due since</th></tr>
            </thead>
            <tbody>
              {due.questions.map((q) => (
                <tr id={`due-${q.question_id}`}>
                  <td><a href={`${base}/bank?question=${q.question_id}#question-${q.question_id}`} safe>{q.question_text}</a></td>
                  <td><When iso={q.due} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    <h2>How reviews work</h2>
    <p>
      Each time you finish a quiz, every question in it is scheduled for another look: a question you got wrong comes
      back soon, one you got right comes back later, and the gap grows each time you get it right again. This is called
      spaced repetition: reviewing just before you would forget helps you remember for longer.
    </p>
    <DigestForm base={base} on={digest} />
  </div>
)

export const ReviewsPage = (p: Frame & { due: DueResponse; limit: number; digest: boolean }) => (
  <Layout title="Due for review" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1>Due for review</h1>
    <ReviewsContent base={p.ctx.base} due={p.due} limit={p.limit} digest={p.digest} />
  </Layout>
)

// My favorite questions -----------------------------------------------------------------------------------------

export const FavoritesContent = ({ base, questions }: { base: string; questions: BankQuestion[] }) => (
  <div id="favorites">
    {questions.length === 0
      ? <p class="muted">No favorite questions yet: star a question in the <a href={`${base}/bank`}>question bank</a> to keep it here.</p>
      : (
        <>
          <p class="muted">{`${plural(questions.length, 'question', 'questions')}, the most recently starred first.`}</p>
          <ol>
            {questions.map((q) => (
              <li id={`favorite-${q.id}`} class="question">
                <h2><a href={`${base}/bank?question=${q.id}#question-${q.id}`} safe>{q.question_text}</a></h2>
                {q.quiz_title ? <p class="muted">From the quiz <span safe>{q.quiz_title}</span></p> : ''}
                <ol class="options">
                  {q.options.map((o) => (o === q.correct_answer
                    ? <li><strong safe>{o}</strong> <span class="muted">(correct answer)</span></li>
                    : <li safe>{o}</li>))}
                </ol>
                {q.explanation ? <p class="muted" safe>{q.explanation}</p> : ''}
              </li>
            ))}
          </ol>
        </>
      )}
  </div>
)

export const FavoritesPage = (p: Frame & { questions: BankQuestion[] }) => (
  <Layout title="My favorite questions" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1>My favorite questions</h1>
    <FavoritesContent base={p.ctx.base} questions={p.questions} />
  </Layout>
)

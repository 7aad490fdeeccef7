// The quiz service's learner pages, read only: "My progress" (the dashboard figures, a table per quiz, the history),
// "Due for review" (the spaced-repetition schedule) and "My favorite questions". Each page's main content is one
// element with an id, which is also the fragment htmx requests get.
import { Layout, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import type { Dashboard, HistoryEntry } from '../models/attempts'
import type { BankQuestion } from '../models/bank'
import type { DueResponse } from '../models/reminders'
import { BRAND, SignedInNav } from './accounts'

interface Frame { ctx: PageContext; user: UserResponse }

/** An ISO timestamp as a short UTC date and time, in a <time> element (as on the other pages). */
const When = ({ iso }: { iso: string }) => (
  <time datetime={iso} safe>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>
)

/** A percentage in words: 80 as "80%", 66.7 as "66.7%". */
export const percent = (n: number) => `${Math.round(n * 10) / 10}%`

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

// My progress ---------------------------------------------------------------------------------------------------

export const ProgressContent = ({ base, dashboard, history }: { base: string; dashboard: Dashboard; history: HistoryEntry[] }) => (
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
                  <tr><th scope="col">Completed</th><th scope="col">Score</th><th scope="col">Percentage</th></tr>
                </thead>
                <tbody>
                  {h.attempts.map((a) => (
                    <tr id={`attempt-${a.attempt_id}`}>
                      <td><When iso={a.date} /></td>
                      <td>{`${a.score} of ${a.total}`}</td>
                      <td>{percent(a.percentage)}</td>
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

export const ProgressPage = (p: Frame & { dashboard: Dashboard; history: HistoryEntry[] }) => (
  <Layout title="My progress" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1>My progress</h1>
    <ProgressContent base={p.ctx.base} dashboard={p.dashboard} history={p.history} />
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

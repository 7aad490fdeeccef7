// The quiz player: a quiz's start page, the timed player (every question in one form, a countdown and autosave by
// views/static/player.js), the learning player (one question per page, the answer checked at once, the tutor beside
// it, the question read aloud), the review of a finished attempt, and the due-review player. Every form posts and
// works without JavaScript; the script only adds the countdown, the autosave and the automatic submit at zero.
import { Layout, When, type Flash, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import type { AttemptDetail, AttemptResponse } from '../models/attempts'
import type { ReviewAnswerResponse } from '../models/reminders'
import type { QuizAnsweredQuestion, QuizResponse } from '../models/quizzes'
import type { TutorChatResponse } from '../models/tutor'
import { BRAND, SignedInNav } from './accounts'
import { percent } from './learner'

interface Frame { ctx: PageContext; user: UserResponse; flash?: Flash }

type Question = Omit<QuizAnsweredQuestion, 'correct_answer' | 'explanation'> & Partial<Pick<QuizAnsweredQuestion, 'correct_answer' | 'explanation'>>

/** Seconds as m:ss (or h:mm:ss), as the countdown shows them. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const rest = String(s % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`
}

/** The quiz's mode in words. */
export const modeWords = (quiz: Pick<QuizResponse, 'mode' | 'time_limit_minutes'>) =>
  quiz.mode === 'learning'
    ? 'Learning: each answer is checked as you go, with its explanation'
    : quiz.time_limit_minutes ? `Timed: ${quiz.time_limit_minutes} minutes, answers shown at the end` : 'Timed, no time limit: answers shown at the end'

const playUrl = (base: string, attemptId: number) => `${base}/attempts/${attemptId}/play`

// The start page ----------------------------------------------------------------------------------------------------

export interface StartProps extends Frame {
  quiz: QuizResponse
  current: AttemptResponse | null
  completed: AttemptResponse[]
  /** Another device holds this quiz: said instead of opening it. */
  locked?: boolean
}

export const LockedNotice = ({ retry }: { retry: string }) => (
  <div class="flash warning" id="locked" role="alert">
    <p><strong>This quiz is open on another device or browser.</strong></p>
    <p>
      Only one place at a time can work on a quiz, so that answers are not overwritten. Close it there, or wait 30
      seconds after it was last used there, then <a href={retry}>try again</a>.
    </p>
  </div>
)

export const StartPage = (p: StartProps) => {
  const base = p.ctx.base
  return (
    <Layout title={p.quiz.title} base={base} brand={BRAND} nav={<SignedInNav base={base} user={p.user} />} flash={p.flash}>
      <h1 safe>{p.quiz.title}</h1>
      {p.locked ? <LockedNotice retry={`${base}/play/${p.quiz.id}`} /> : ''}
      <dl class="facts">
        <dt>How it works</dt><dd safe>{modeWords(p.quiz)}</dd>
        <dt>Questions</dt><dd>{p.quiz.questions_count}</dd>
        <dt>Your attempts</dt><dd>{p.completed.length === 0 ? 'None yet' : `${p.completed.length} completed`}</dd>
      </dl>
      {p.quiz.questions_count === 0 ? <p class="muted">This quiz has no questions yet.</p> : p.current
        ? (
          <div class="actions">
            <form class="inline" action={`${base}/play/${p.quiz.id}`} method="post">
              <button type="submit">Continue where you left off</button>
            </form>
            <form class="inline" action={`${base}/play/${p.quiz.id}`} method="post">
              <input type="hidden" name="fresh" value="1" />
              <button type="submit" class="secondary">Start again from the beginning</button>
            </form>
          </div>
        )
        : (
          <form action={`${base}/play/${p.quiz.id}`} method="post">
            <button type="submit">{p.completed.length > 0 ? 'Take the quiz again' : 'Start the quiz'}</button>
          </form>
        )}
      {p.quiz.mode === 'timed' && p.quiz.time_limit_minutes && !p.current
        ? <p class="muted">The clock starts when you press start. Your answers are saved as you go; if time runs out, what you have answered is submitted.</p>
        : ''}
      {p.completed.length > 0
        ? (
          <>
            <h2>Your completed attempts</h2>
            <table>
              <thead><tr><th scope="col">Completed</th><th scope="col">Score</th><th scope="col">Review</th></tr></thead>
              <tbody>
                {p.completed.map((a) => (
                  <tr>
                    <td><When iso={a.completed_at!} /></td>
                    <td>{`${a.score} of ${a.total_questions} (${percent(a.percentage)})`}</td>
                    <td><a href={`${base}/attempts/${a.id}`}>{`Review attempt of ${a.completed_at!.slice(0, 10)}`}</a></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )
        : ''}
      <p><a href={`${base}/quizzes`}>Back to the quizzes</a></p>
    </Layout>
  )
}

/** The player while another browser holds the quiz: "try again" is the quiz's page, whose Continue asks again. */
export const LockedPage = (p: Frame & { quiz: Pick<QuizResponse, 'id' | 'title'> }) => (
  <Layout title={p.quiz.title} base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />}>
    <h1 safe>{p.quiz.title}</h1>
    <LockedNotice retry={`${p.ctx.base}/play/${p.quiz.id}`} />
  </Layout>
)

// The timed player --------------------------------------------------------------------------------------------------

/** A question's radio group: name `q_<id>`, the option text as value, the saved answer checked. */
const Choices = ({ q, chosen, checked }: { q: Question; chosen: string | undefined; checked?: boolean }) => (
  <fieldset id={`question-${q.id}`} class="question">
    <legend><span class="muted">{`Question ${q.position}. `}</span><span safe>{q.question_text}</span></legend>
    {q.options.map((o, i) => (
      <label class="option" for={`q-${q.id}-${i}`}>
        <input type="radio" id={`q-${q.id}-${i}`} name={`q_${q.id}`} value={o} checked={o === chosen ? true : undefined} disabled={checked} />
        <span safe>{o}</span>
        {checked && o === chosen ? <span class="mark">{o === q.correct_answer ? 'your answer, correct' : 'your answer'}</span> : ''}
        {checked && o !== chosen && o === q.correct_answer ? <span class="mark">correct answer</span> : ''}
      </label>
    ))}
  </fieldset>
)

export interface TimedProps extends Frame {
  quiz: QuizResponse
  attempt: AttemptResponse
  questions: Question[]
  answers: Record<string, string>
  /** The timer: its end and the seconds left now; null without a time limit. */
  timer: { deadline: string; remaining: number } | null
}

export const TimedPlayer = (p: TimedProps) => {
  const base = p.ctx.base
  const answered = p.questions.filter((q) => p.answers[String(q.id)] !== undefined).length
  return (
    <Layout title={p.quiz.title} base={base} brand={BRAND} nav={<SignedInNav base={base} user={p.user} />} flash={p.flash} pageScripts={['player.js']}>
      <h1 safe>{p.quiz.title}</h1>
      <div class="player-bar" id="player-bar">
        {p.timer
          ? (
            <p class="timer">
              Time left: <span id="timer" role="timer" data-deadline={p.timer.deadline} data-remaining={String(p.timer.remaining)}>{clock(p.timer.remaining)}</span>
              <span class="muted">{` (ends at ${p.timer.deadline.slice(11, 16)} UTC)`}</span>
            </p>
          )
          : <p class="timer muted">No time limit.</p>}
        <p class="muted" id="save-state" role="status">{answered > 0 ? `${answered} of ${p.questions.length} answered, saved.` : 'Your answers are saved as you go.'}</p>
        <p id="time-alert" class="visually-hidden" aria-live="assertive"></p>
      </div>
      <div id="player-locked"></div>
      <form id="player" class="player" action={`${base}/attempts/${p.attempt.id}/submit`} method="post"
        data-progress={`${base}/attempts/${p.attempt.id}/progress`} hx-boost="false">
        {p.questions.map((q) => <Choices q={q} chosen={p.answers[String(q.id)]} />)}
        <p class="muted">Questions left unanswered count as wrong.</p>
        <button type="submit">Submit my answers</button>
      </form>
    </Layout>
  )
}

// The learning player -----------------------------------------------------------------------------------------------

export interface TutorState {
  /** False when no tutor model is configured: the panel says so. */
  available: boolean
  messages: { role: 'user' | 'assistant'; content: string }[]
  suggestions: string[]
  error?: string
}

/** The tutor's side panel; also the fragment its form swaps in. */
export const TutorPanel = (p: { base: string; attemptId: number; questionId: number; index: number; tutor: TutorState }) => {
  const action = `${p.base}/attempts/${p.attemptId}/tutor`
  const form = (message: string | null, label: string, secondary = false) => (
    <form class={message === null ? 'stack' : 'inline'} action={action} method="post" hx-post={action} hx-target="#tutor" hx-swap="outerHTML">
      <input type="hidden" name="question_id" value={String(p.questionId)} />
      <input type="hidden" name="q" value={String(p.index)} />
      {message === null
        ? (
          <label for="tutor-message">
            <span>Your question</span>
            <textarea id="tutor-message" name="message" rows="3" maxlength={2000} required></textarea>
          </label>
        )
        : <input type="hidden" name="message" value={message} />}
      <button type="submit" class={secondary ? 'secondary' : undefined} safe>{label}</button>
    </form>
  )
  return (
    <aside id="tutor" class="tutor" aria-labelledby="tutor-title">
      <h2 id="tutor-title">Ask the tutor</h2>
      {!p.tutor.available
        ? <p class="muted">The AI tutor is not set up on this server. Ask your teacher to add a tutor model.</p>
        : (
          <>
            {p.tutor.messages.length === 0
              ? <p class="muted">Not sure why an answer is right? Ask about this question and the tutor explains it.</p>
              : (
                <ol class="chat" aria-label="Conversation with the tutor">
                  {p.tutor.messages.map((m) => (
                    <li class={m.role}>
                      <span class="muted">{m.role === 'user' ? 'You' : 'Tutor'}</span>
                      <p class="message" safe>{m.content}</p>
                    </li>
                  ))}
                </ol>
              )}
            {p.tutor.error ? <p class="flash error" role="alert" safe>{p.tutor.error}</p> : ''}
            {p.tutor.suggestions.length > 0
              ? (
                <div class="suggestions">
                  <p class="muted">You could ask:</p>
                  {p.tutor.suggestions.map((s) => form(s, s, true))}
                </div>
              )
              : ''}
            {form(null, 'Ask')}
          </>
        )}
    </aside>
  )
}

/** Right or wrong in words (never colour alone), the right answer and the explanation. */
const Feedback = ({ q, chosen }: { q: Question; chosen: string }) => {
  const right = chosen === q.correct_answer
  return (
    <div id="feedback" class={right ? 'flash ok' : 'flash error'} role="status">
      <p><strong>{right ? 'Correct.' : 'Not quite.'}</strong>{right ? '' : <> The answer is <strong safe>{q.correct_answer}</strong>.</>}</p>
      {q.explanation ? <p safe>{q.explanation}</p> : ''}
    </div>
  )
}

export interface LearningProps extends Frame {
  quiz: QuizResponse
  attempt: AttemptResponse
  questions: Question[]
  answers: Record<string, string>
  /** The question on screen, from 1. */
  index: number
  tutor: TutorState
}

export const LearningPlayer = (p: LearningProps) => {
  const base = p.ctx.base
  const q = p.questions[p.index - 1]!
  const chosen = p.answers[String(q.id)]
  const answered = p.questions.filter((x) => p.answers[String(x.id)] !== undefined).length
  const last = p.index === p.questions.length
  const page = (i: number) => `${playUrl(base, p.attempt.id)}?q=${i}`
  return (
    <Layout title={`${p.quiz.title}, question ${p.index}`} base={base} brand={BRAND} nav={<SignedInNav base={base} user={p.user} />} flash={p.flash}>
      <h1 safe>{p.quiz.title}</h1>
      <nav class="question-nav" aria-label="Questions">
        <ol>
          {p.questions.map((x, i) => (
            <li>
              <a href={page(i + 1)} aria-current={i + 1 === p.index ? 'step' : undefined}
                class={p.answers[String(x.id)] !== undefined ? 'answered' : undefined}>
                {String(i + 1)}<span class="visually-hidden">{p.answers[String(x.id)] !== undefined ? ' (answered)' : ''}</span>
              </a>
            </li>
          ))}
        </ol>
        <p class="muted">{`${answered} of ${p.questions.length} answered`}</p>
      </nav>
      <div class="player-learning">
        <section class="current" aria-label={`Question ${p.index} of ${p.questions.length}`}>
          {chosen === undefined
            ? (
              <form class="stack" action={`${base}/attempts/${p.attempt.id}/answer`} method="post">
                <input type="hidden" name="question_id" value={String(q.id)} />
                <input type="hidden" name="q" value={String(p.index)} />
                <Choices q={q} chosen={undefined} />
                <button type="submit">Check my answer</button>
              </form>
            )
            : (
              <>
                <Choices q={q} chosen={chosen} checked />
                <Feedback q={q} chosen={chosen} />
              </>
            )}
          <p class="listen">
            <span id={`listen-${q.id}`}>Listen to the question:</span>{' '}
            <audio controls="" preload="none" aria-labelledby={`listen-${q.id}`} src={`${base}/attempts/${p.attempt.id}/questions/${q.id}/speech`}></audio>
          </p>
          <div class="actions">
            {p.index > 1 ? <a href={page(p.index - 1)}>Previous question</a> : ''}
            {!last ? <a class="button" href={page(p.index + 1)}>{chosen === undefined ? 'Skip to the next question' : 'Next question'}</a> : ''}
            <form class="inline" action={`${base}/attempts/${p.attempt.id}/submit`} method="post">
              <button type="submit" class={last ? undefined : 'secondary'}>
                {answered === p.questions.length ? 'Finish and see my score' : 'Finish now (unanswered count as wrong)'}
              </button>
            </form>
          </div>
        </section>
        <TutorPanel base={base} attemptId={p.attempt.id} questionId={q.id} index={p.index} tutor={p.tutor} />
      </div>
    </Layout>
  )
}

// The review of a finished attempt ----------------------------------------------------------------------------------

export const AttemptReviewPage = (p: Frame & { quiz: Pick<QuizResponse, 'id' | 'title'> | null; attempt: AttemptDetail; expired?: boolean }) => {
  const base = p.ctx.base
  const wrong = p.attempt.answers.filter((a) => !a.is_correct).length
  return (
    <Layout title={`Results: ${p.quiz?.title ?? 'quiz'}`} base={base} brand={BRAND} nav={<SignedInNav base={base} user={p.user} />} flash={p.flash}>
      <h1 safe>{`Results: ${p.quiz?.title ?? 'a quiz no longer available'}`}</h1>
      {p.expired ? <p class="flash warning" role="status">Time ran out, so your saved answers were submitted for you.</p> : ''}
      <dl class="facts">
        <dt>Score</dt><dd id="score">{`${p.attempt.score} of ${p.attempt.total_questions} (${percent(p.attempt.percentage)})`}</dd>
        <dt>Completed</dt><dd>{p.attempt.completed_at ? <When iso={p.attempt.completed_at} /> : 'Not yet'}</dd>
      </dl>
      <div class="actions">
        {p.quiz
          ? (
            <form class="inline" action={`${base}/play/${p.quiz.id}`} method="post">
              <input type="hidden" name="fresh" value="1" />
              <button type="submit">Take the quiz again</button>
            </form>
          )
          : ''}
        <a href={`${base}/progress`}>My progress</a>
        <a href={`${base}/reviews`}>Questions due for review</a>
      </div>
      <h2>{wrong === 0 ? 'Every answer' : `Your answers (${wrong} to look at again)`}</h2>
      <ol class="review">
        {p.attempt.answers.map((a) => (
          <li id={`answer-${a.question_id}`} class={a.is_correct ? 'right' : 'wrong'}>
            <h3 safe>{a.question_text}</h3>
            <p>
              <strong>{a.is_correct ? 'Correct' : a.user_answer === null ? 'Not answered' : 'Wrong'}</strong>
              {a.user_answer !== null ? <>: you answered <span safe>{a.user_answer}</span>.</> : '.'}
            </p>
            {!a.is_correct ? <p>The answer is <strong safe>{a.correct_answer}</strong>.</p> : ''}
            {a.explanation ? <p class="muted" safe>{a.explanation}</p> : ''}
          </li>
        ))}
      </ol>
    </Layout>
  )
}

// The due-review player ---------------------------------------------------------------------------------------------

export interface DueReviewProps extends Frame {
  /** The most overdue question, or null when nothing is due. */
  question: Question | null
  remaining: number
  /** The answer just given (shown above the next question). */
  result: (ReviewAnswerResponse & { question_text: string; answer: string | null }) | null
}

export const DueReviewPage = (p: DueReviewProps) => {
  const base = p.ctx.base
  return (
    <Layout title="Review due questions" base={base} brand={BRAND} nav={<SignedInNav base={base} user={p.user} />} flash={p.flash}>
      <h1>Review due questions</h1>
      {p.result
        ? (
          <div id="feedback" class={p.result.is_correct ? 'flash ok' : 'flash error'} role="status">
            <p><strong>{p.result.is_correct ? 'Correct.' : 'Not quite.'}</strong> <span safe>{p.result.question_text}</span></p>
            {p.result.is_correct ? '' : <p>The answer is <strong safe>{p.result.correct_answer}</strong>.</p>}
            {p.result.explanation ? <p safe>{p.result.explanation}</p> : ''}
            <p class="muted">Next review of this question: <When iso={p.result.next_due} />.</p>
          </div>
        )
        : ''}
      {p.question
        ? (
          <>
            <p class="muted">{`${p.remaining} ${p.remaining === 1 ? 'question' : 'questions'} due, the most overdue first.`}</p>
            <form class="stack" action={`${base}/reviews/answer`} method="post">
              <input type="hidden" name="question_id" value={String(p.question.id)} />
              <Choices q={p.question} chosen={undefined} />
              <div class="actions">
                <button type="submit">Check my answer</button>
                <button type="submit" name="dont_know" value="1" class="secondary">I don't know</button>
              </div>
            </form>
          </>
        )
        : <p>Nothing else is due now. <a href={`${base}/reviews`}>See when the next review is</a>.</p>}
    </Layout>
  )
}

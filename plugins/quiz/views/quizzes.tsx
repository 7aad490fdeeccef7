// The quiz service's pages for quizzes: the list with its search (learners pick a quiz to take, with their own state
// per quiz; moderators get a table with actions), the trash, and a quiz's page with its questions (click-to-edit
// rows). Every form has action + method and works without JavaScript; htmx swaps the results, the list, the trash
// table or one question row in place.
import { Layout, type Errors, type Flash, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import { TITLE_MAX } from '../models/extraction'
import type { QuizAnsweredQuestion, QuizResponse } from '../models/quizzes'
import { SEARCH_Q_MAX, SEARCH_Q_MIN, type MatchType, type QuizSearchResult } from '../models/search'
import type { QuizCategory } from '../services/categories'
import { BRAND, SignedInNav } from './accounts'
import { percent } from './learner'

/** Where a list action sends the browser back to (a form field, mapped to our own paths only). */
export type Back = 'list' | 'trash' | 'quiz'

interface Frame { ctx: PageContext; user: UserResponse; flash?: Flash }

const QuizzesNav = ({ base }: { base: string }) => (
  <p>
    <a href={`${base}/quizzes`}>All quizzes</a> · <a href={`${base}/quizzes/trash`}>Trash</a>
  </p>
)

const ActionForm = (p: { base: string; quizId: number; action: string; label: string; back: Back; target?: string; extra?: Record<string, string>; danger?: boolean }) => (
  <form class="inline" action={`${p.base}/quizzes/${p.quizId}/${p.action}`} method="post"
    hx-post={p.target ? `${p.base}/quizzes/${p.quizId}/${p.action}` : undefined}
    hx-target={p.target ? `#${p.target}` : undefined} hx-swap={p.target ? 'outerHTML' : undefined}>
    <input type="hidden" name="back" value={p.back} />
    {Object.entries(p.extra ?? {}).map(([name, value]) => <input type="hidden" name={name} value={value} />)}
    <button type="submit" class={p.danger ? 'danger' : 'secondary'} safe>{p.label}</button>
  </form>
)

/**
 * The list's category filter as the page's query carries it: '' for every quiz, `none` for the uncategorized ones,
 * or a quiz category's id.
 */
export type CategoryFilter = string

const categoryName = (categories: QuizCategory[], id: number | null) => (id === null ? null : categories.find((c) => c.id === id)?.name ?? null)

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** A quiz's mode as a learner reads it: "Timed, 20 minutes" or "Learning: answers shown as you go". */
export const modeWords = (q: Pick<QuizResponse, 'mode' | 'time_limit_minutes'>) => {
  if (q.mode === 'learning') return 'Learning: answers shown as you go'
  return q.time_limit_minutes ? `Timed, ${plural(q.time_limit_minutes, 'minute', 'minutes')}` : 'Timed'
}

/** A quiz's start page (the player): where a learner, or a moderator trying a quiz, takes it. */
export const playUrl = (base: string, quizId: number) => `${base}/play/${quizId}`

/** The list page's address for a search text and a category filter; empty parts are left out. */
export function listUrl(base: string, q: string, filter: CategoryFilter): string {
  const params = new URLSearchParams()
  if (q) params.set('q', q)
  if (filter) params.set('category_id', filter)
  const query = params.toString()
  return `${base}/quizzes${query ? `?${query}` : ''}`
}

/**
 * The page's one GET form: the search text and the category filter go together, so a search looks only within the
 * chosen category and the category list keeps the search. Without JavaScript it is a plain GET of the page; htmx
 * swaps only the results (after a short pause in typing, or on a change of category) and keeps the address.
 */
export const QuizFilter = ({ base, categories, filter, q = '' }: { base: string; categories: QuizCategory[]; filter: CategoryFilter; q?: string }) => (
  <form id="quiz-filter" class="stack" action={`${base}/quizzes`} method="get" role="search" hx-get={`${base}/quizzes`}
    hx-target="#quizzes" hx-swap="outerHTML" hx-push-url="true"
    hx-trigger="submit, change from:#filter-category, input changed delay:400ms from:#quiz-q">
    <div>
      <label for="quiz-q">
        <span>Search quizzes</span>
        <input id="quiz-q" name="q" type="search" value={q} maxlength={SEARCH_Q_MAX} aria-describedby="quiz-q-hint" />
      </label>
      {/* outside the label, so the box's name stays "Search quizzes"; the hint is its description */}
      <span class="field-hint muted" id="quiz-q-hint">
        {`Words from a quiz's title or from its questions, at least ${SEARCH_Q_MIN} characters. With a category chosen, only that category is searched.`}
      </span>
    </div>
    <label for="filter-category">
      <span>Category</span>
      <select id="filter-category" name="category_id">
        <option value="" selected={filter === '' ? true : undefined}>All categories</option>
        <option value="none" selected={filter === 'none' ? true : undefined}>No category</option>
        {categories.map((c) => <option value={String(c.id)} selected={filter === String(c.id) ? true : undefined} safe>{c.name}</option>)}
      </select>
    </label>
    <div>
      <button type="submit">Search</button>
    </div>
  </form>
)

const emptyText = (filter: CategoryFilter, none: string) => (filter ? 'No quizzes match this category.' : none)

/** A message about the search in place of its results (too short, unavailable); the list follows it. */
const Notice = ({ text }: { text: string | null }) => (text ? <p class="flash warning" role="status" safe>{text}</p> : '')

/** The list's contents as the page carries them; the results element (#quizzes) is also the htmx fragment. */
export interface QuizListView {
  base: string
  moderator: boolean
  quizzes: QuizResponse[]
  categories: QuizCategory[]
  filter: CategoryFilter
  /** A regular user's own state per quiz; null for moderators (their table shows none). */
  learner: LearnerState | null
  search: SearchView
}

/** The signed-in learner's own state: the quizzes with an incomplete attempt, the best score of the completed ones. */
export interface LearnerState { inProgress: Set<number>; bestScore: Map<number, number> }

/** The search as typed (trimmed), its hits (null when no search ran) or why it did not run. */
export interface SearchView { q: string; hits: SearchHit[] | null; notice: string | null }
export interface SearchHit { result: QuizSearchResult; quiz: QuizResponse }

/** The moderators' table of quizzes out of the trash; also the fragment list actions and the filter swap in. */
export const QuizTable = ({ base, quizzes, categories = [], filter = '', notice = null }: {
  base: string; quizzes: QuizResponse[]; categories?: QuizCategory[]; filter?: CategoryFilter; notice?: string | null
}) => (
  <div id="quizzes">
    <Notice text={notice} />
    {quizzes.length === 0 ? <p class="muted">{emptyText(filter, 'No quizzes yet.')}</p> : (
      <table>
        <thead>
          <tr>
            <th scope="col">Title</th><th scope="col">Category</th><th scope="col">Questions</th><th scope="col">Mode</th>
            <th scope="col">Published</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {quizzes.map((q) => {
            const category = categoryName(categories, q.category_id)
            const keep: Record<string, string> = filter ? { category_id: filter } : {}
            return (
              <tr id={`quiz-${q.id}`}>
                <td><a href={`${base}/quizzes/${q.id}`} safe>{q.title}</a></td>
                <td>{category === null ? <span class="muted">None</span> : <span safe>{category}</span>}</td>
                <td>{q.questions_count}</td>
                <td safe>{modeWords(q)}</td>
                <td>{q.is_published ? 'Yes' : 'No'}</td>
                <td>
                  {q.is_published ? <><a href={playUrl(base, q.id)} aria-label={`Take ${q.title}`}>Take</a>{' '}</> : ''}
                  <ActionForm base={base} quizId={q.id} action="publish" back="list" target="quizzes"
                    label={q.is_published ? 'Unpublish' : 'Publish'} extra={{ published: q.is_published ? '0' : '1', ...keep }} />
                  <ActionForm base={base} quizId={q.id} action="trash" back="list" target="quizzes" label="Move to trash" extra={keep} />
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    )}
  </div>
)

/** The learner's own state in words: "In progress", "Best score 75%", both, or not taken yet. */
const LearnerStateWords = ({ quizId, state }: { quizId: number; state: LearnerState }) => {
  const best = state.bestScore.get(quizId)
  const words = [state.inProgress.has(quizId) ? 'In progress' : '', best === undefined ? '' : `Best score ${percent(best)}`].filter(Boolean)
  return words.length === 0 ? <span class="muted">Not taken yet</span> : <span safe>{words.join(' · ')}</span>
}

/** What a regular user sees: the published quizzes, each linked to its start page, with the user's own state. */
export const LearnerList = ({ base, quizzes, categories, filter = '', state, notice = null }: {
  base: string; quizzes: QuizResponse[]; categories: QuizCategory[]; filter?: CategoryFilter; state: LearnerState; notice?: string | null
}) => (
  <div id="quizzes">
    <Notice text={notice} />
    {quizzes.length === 0 ? <p class="muted">{emptyText(filter, 'No quizzes are published yet.')}</p> : (
      <table>
        <caption class="muted">Choose a quiz to start it, or to carry on where you left off.</caption>
        <thead>
          <tr>
            <th scope="col">Quiz</th><th scope="col">Category</th><th scope="col">Questions</th><th scope="col">Mode</th>
            <th scope="col">Your results</th>
          </tr>
        </thead>
        <tbody>
          {quizzes.map((q) => {
            const category = categoryName(categories, q.category_id)
            return (
              <tr id={`quiz-${q.id}`}>
                <th scope="row"><a href={playUrl(base, q.id)} safe>{q.title}</a></th>
                <td>{category === null ? <span class="muted">None</span> : <span safe>{category}</span>}</td>
                <td>{q.questions_count}</td>
                <td safe>{modeWords(q)}</td>
                <td><LearnerStateWords quizId={q.id} state={state} /></td>
              </tr>
            )
          })}
        </tbody>
      </table>
    )}
  </div>
)

const MATCH_WORDS: Record<MatchType, string> = {
  title: 'Found in the title',
  question: 'Found in its questions',
  title_and_question: 'Found in the title and in its questions',
}

/** The search's results: each quiz linked to its start page, how it matched, and up to five matching questions. */
export const SearchResults = (p: QuizListView & { hits: SearchHit[] }) => {
  const { base, search, filter } = p
  const category = filter === 'none' ? 'no category' : filter ? categoryName(p.categories, Number(filter)) : null
  const within = category === null ? '' : filter === 'none' ? ' among the quizzes with no category' : ` in the category “${category}”`
  // wide, as the list's table makes the page: the page keeps its width while htmx swaps list and results
  return (
    <div id="quizzes" class="wide">
      <h2 safe>{p.hits.length === 0
        ? `No quizzes match “${search.q}”${within}`
        : `${plural(p.hits.length, 'quiz matches', 'quizzes match')} “${search.q}”${within}`}</h2>
      <p>
        <a href={listUrl(base, '', filter)}>Clear the search</a>
        {filter ? <>{' · '}<a href={listUrl(base, search.q, '')}>Search every category</a></> : ''}
      </p>
      {p.hits.length === 0 ? '' : (
        <ol>
          {p.hits.map(({ result, quiz }) => {
            const quizCategory = categoryName(p.categories, quiz.category_id)
            const facts = [MATCH_WORDS[result.match_type], plural(quiz.questions_count, 'question', 'questions'), modeWords(quiz),
              quizCategory === null ? 'No category' : `Category: ${quizCategory}`]
            return (
              <li id={`result-${quiz.id}`}>
                <h3><a href={playUrl(base, quiz.id)} safe>{quiz.title}</a></h3>
                <p class="muted" safe>{facts.join(' · ')}</p>
                {p.learner ? <p>Your results: <LearnerStateWords quizId={quiz.id} state={p.learner} /></p> : ''}
                {p.moderator ? (
                  <p>
                    {quiz.is_published ? '' : 'Not published. '}
                    <a href={`${base}/quizzes/${quiz.id}`} aria-label={`Manage ${quiz.title}`}>Manage</a>
                  </p>
                ) : ''}
                {result.matching_questions.length === 0 ? '' : (
                  <>
                    <p>Matching questions:</p>
                    <ul>
                      {result.matching_questions.map((m) => <li safe>{m.question_text}</li>)}
                    </ul>
                  </>
                )}
              </li>
            )
          })}
        </ol>
      )}
    </div>
  )
}

/** The results element: the search's results, or the list (moderators' table, learners' list) with any search notice. */
export const QuizzesContent = (p: QuizListView) => {
  if (p.search.hits) return <SearchResults {...p} hits={p.search.hits} />
  if (p.moderator || !p.learner) {
    return <QuizTable base={p.base} quizzes={p.quizzes} categories={p.categories} filter={p.filter} notice={p.search.notice} />
  }
  return <LearnerList base={p.base} quizzes={p.quizzes} categories={p.categories} filter={p.filter} state={p.learner} notice={p.search.notice} />
}

export const QuizzesPage = (p: Frame & QuizListView) => (
  <Layout title="Quizzes" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>Quizzes</h1>
    {p.moderator ? <QuizzesNav base={p.ctx.base} /> : ''}
    <QuizFilter base={p.ctx.base} categories={p.categories} filter={p.filter} q={p.search.q} />
    <QuizzesContent {...p} />
  </Layout>
)

/** The trash table; also the fragment restore and permanent deletion swap in. */
export const TrashTable = ({ base, quizzes }: { base: string; quizzes: QuizResponse[] }) => (
  <div id="trash">
    {quizzes.length === 0 ? <p class="muted">The trash is empty.</p> : (
      <table>
        <thead>
          <tr><th scope="col">Title</th><th scope="col">Questions</th><th scope="col">Actions</th></tr>
        </thead>
        <tbody>
          {quizzes.map((q) => (
            <tr id={`trashed-${q.id}`}>
              <td safe>{q.title}</td>
              <td>{q.questions_count}</td>
              <td>
                <ActionForm base={base} quizId={q.id} action="restore" back="trash" target="trash" label="Restore" />
                <ActionForm base={base} quizId={q.id} action="delete-permanently" back="trash" target="trash" danger
                  label="Delete permanently (questions stay in the bank)" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </div>
)

export const TrashPage = (p: Frame & { quizzes: QuizResponse[] }) => (
  <Layout title="Quiz trash" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>Trash</h1>
    <QuizzesNav base={p.ctx.base} />
    <TrashTable base={p.ctx.base} quizzes={p.quizzes} />
  </Layout>
)

const questionUrl = (base: string, quizId: number, questionId: number) => `${base}/quizzes/${quizId}/questions/${questionId}`

/** One question, read only; a click on Edit swaps in its edit form (click-to-edit). */
export const QuestionRow = (p: { base: string; quizId: number; q: QuizAnsweredQuestion; saved?: boolean }) => (
  <li id={`question-${p.q.id}`} class="question" hx-target="this" hx-swap="outerHTML">
    <p><strong safe>{p.q.question_text}</strong></p>
    <ol class="options">
      {p.q.options.map((o) => (o === p.q.correct_answer ? <li><strong safe>{o}</strong> <span class="muted">(correct)</span></li> : <li safe>{o}</li>))}
    </ol>
    {p.q.explanation ? <p class="muted" safe>{p.q.explanation}</p> : ''}
    <p>
      <a href={`${questionUrl(p.base, p.quizId, p.q.id)}/edit`} hx-get={`${questionUrl(p.base, p.quizId, p.q.id)}/edit`}>Edit question</a>{' '}
      {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
    </p>
    <form action={`${questionUrl(p.base, p.quizId, p.q.id)}/remove`} method="post"
      hx-post={`${questionUrl(p.base, p.quizId, p.q.id)}/remove`} hx-target="#questions" hx-swap="outerHTML">
      <button type="submit" class="secondary">Remove from this quiz</button>
    </form>
  </li>
)

export interface QuestionValues { question_text: string; options: string; correct_answer: string; explanation: string; question_type: string }

export const questionValues = (q: QuizAnsweredQuestion): QuestionValues => ({
  question_text: q.question_text, options: q.options.join('\n'), correct_answer: q.correct_answer,
  explanation: q.explanation, question_type: q.question_type,
})

const TextArea = (p: { id: string; name: string; label: string; value: string; error?: string; hint?: string; rows?: number }) => {
  const described = [p.hint ? `${p.id}-hint` : '', p.error ? `${p.id}-error` : ''].filter(Boolean).join(' ')
  return (
    <label for={p.id}>
      <span safe>{p.label}</span>
      <textarea id={p.id} name={p.name} rows={String(p.rows ?? 3)} aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={described || undefined} safe>{p.value}</textarea>
      {p.hint ? <span class="field-hint muted" id={`${p.id}-hint`} safe>{p.hint}</span> : ''}
      {p.error ? <span class="field-error" id={`${p.id}-error`} safe>{p.error}</span> : ''}
    </label>
  )
}

const SmallInput = (p: { id: string; name: string; label: string; value: string; error?: string }) => (
  <label for={p.id}>
    <span safe>{p.label}</span>
    <input id={p.id} name={p.name} type="text" value={p.value} aria-invalid={p.error ? 'true' : undefined}
      aria-describedby={p.error ? `${p.id}-error` : undefined} />
    {p.error ? <span class="field-error" id={`${p.id}-error`} safe>{p.error}</span> : ''}
  </label>
)

/** A question's edit form, in place of its row; saving swaps the row back. */
export const QuestionEditForm = (p: { base: string; quizId: number; questionId: number; values: QuestionValues; errors?: Errors; message?: string }) => {
  const url = questionUrl(p.base, p.quizId, p.questionId)
  const id = (name: string) => `q${p.questionId}-${name}`
  return (
    <li id={`question-${p.questionId}`} class="question">
      <form class="stack" action={url} method="post" hx-post={url} hx-target={`#question-${p.questionId}`} hx-swap="outerHTML">
        <p class="flash warning" id={id('shared')}>This question is shared: the change applies to every quiz that uses it.</p>
        {p.message ? <p class="flash error" safe>{p.message}</p> : ''}
        <TextArea id={id('text')} name="question_text" label="Question" value={p.values.question_text} error={p.errors?.question_text} />
        <TextArea id={id('options')} name="options" label="Options" value={p.values.options} error={p.errors?.options}
          hint="One option per line" rows={5} />
        <SmallInput id={id('answer')} name="correct_answer" label="Correct answer (the exact text of one option)"
          value={p.values.correct_answer} error={p.errors?.correct_answer} />
        <TextArea id={id('explanation')} name="explanation" label="Explanation" value={p.values.explanation} error={p.errors?.explanation} />
        <SmallInput id={id('type')} name="question_type" label="Question type" value={p.values.question_type} error={p.errors?.question_type} />
        <div>
          <button type="submit">Save question</button>{' '}
          <a href={`${p.base}/quizzes/${p.quizId}#question-${p.questionId}`} hx-get={url}
            hx-target={`#question-${p.questionId}`} hx-swap="outerHTML">Cancel</a>
        </div>
      </form>
    </li>
  )
}

export interface Editing { questionId: number; values: QuestionValues; errors?: Errors; message?: string }

/** The quiz's questions in order; the fragment removal swaps in (positions renumbered). */
export const QuestionList = (p: { base: string; quizId: number; questions: QuizAnsweredQuestion[]; editing?: Editing }) => (
  <div id="questions">
    {p.questions.length === 0 ? <p class="muted">This quiz has no questions.</p> : (
      <ol class="questions">
        {p.questions.map((q) => (p.editing?.questionId === q.id
          ? <QuestionEditForm base={p.base} quizId={p.quizId} questionId={q.id} values={p.editing.values} errors={p.editing.errors} message={p.editing.message} />
          : <QuestionRow base={p.base} quizId={p.quizId} q={q} />))}
      </ol>
    )}
  </div>
)

export const RenameForm = (p: { base: string; quiz: QuizResponse; value?: string; error?: string; saved?: boolean }) => (
  <form id="rename" class="stack" action={`${p.base}/quizzes/${p.quiz.id}/rename`} method="post"
    hx-post={`${p.base}/quizzes/${p.quiz.id}/rename`} hx-target="this" hx-swap="outerHTML">
    <label for="title">
      <span>Title</span>
      <input id="title" name="title" type="text" value={p.value ?? p.quiz.title} required maxlength={TITLE_MAX}
        aria-invalid={p.error ? 'true' : undefined} aria-describedby={p.error ? 'title-error' : undefined} />
      {p.error ? <span class="field-error" id="title-error" safe>{p.error}</span> : ''}
    </label>
    <div>
      <button type="submit">Rename</button> {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
    </div>
  </form>
)

/** The quiz's category: a select of the quiz categories (or none); saving swaps the form with a note. */
export const CategoryForm = (p: { base: string; quiz: QuizResponse; categories: QuizCategory[]; error?: string; saved?: boolean }) => (
  <form id="quiz-category" class="stack" action={`${p.base}/quizzes/${p.quiz.id}/category`} method="post"
    hx-post={`${p.base}/quizzes/${p.quiz.id}/category`} hx-target="this" hx-swap="outerHTML">
    <label for="quiz-category-select">
      <span>Category</span>
      <select id="quiz-category-select" name="category_id" aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={p.error ? 'quiz-category-error' : undefined}>
        <option value="" selected={p.quiz.category_id === null ? true : undefined}>No category</option>
        {p.categories.map((c) => <option value={String(c.id)} selected={p.quiz.category_id === c.id ? true : undefined} safe>{c.name}</option>)}
      </select>
      {p.error ? <span class="field-error" id="quiz-category-error" safe>{p.error}</span> : ''}
    </label>
    <div>
      <button type="submit">Set category</button> {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
      {p.categories.length === 0 ? <span class="muted"> No quiz categories yet: add them on the <a href={`${p.base}/categories`}>categories page</a>.</span> : ''}
    </div>
  </form>
)

export const QuizPage = (p: Frame & {
  quiz: QuizResponse; questions: QuizAnsweredQuestion[]; categories: QuizCategory[]; editing?: Editing
  renameValue?: string; renameError?: string; categoryError?: string
}) => (
  <Layout title={p.quiz.title} base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1 safe>{p.quiz.title}</h1>
    <QuizzesNav base={p.ctx.base} />
    <dl class="facts">
      <dt>Questions</dt>
      <dd>{p.quiz.questions_count}</dd>
      <dt>Mode</dt>
      <dd safe>{modeWords(p.quiz)}</dd>
      <dt>Published</dt>
      <dd>{p.quiz.is_published ? 'Yes' : 'No'}</dd>
      <dt>Category</dt>
      <dd>{categoryName(p.categories, p.quiz.category_id) === null ? 'None' : <span safe>{categoryName(p.categories, p.quiz.category_id)}</span>}</dd>
    </dl>
    <section>
      <h2>Settings</h2>
      <RenameForm base={p.ctx.base} quiz={p.quiz} value={p.renameValue} error={p.renameError} />
      <CategoryForm base={p.ctx.base} quiz={p.quiz} categories={p.categories} error={p.categoryError} />
      <div>
        <ActionForm base={p.ctx.base} quizId={p.quiz.id} action="publish" back="quiz"
          label={p.quiz.is_published ? 'Unpublish' : 'Publish'} extra={{ published: p.quiz.is_published ? '0' : '1' }} />{' '}
        <ActionForm base={p.ctx.base} quizId={p.quiz.id} action="trash" back="list" label="Move to trash" />
      </div>
    </section>
    <section>
      <h2>Questions</h2>
      <QuestionList base={p.ctx.base} quizId={p.quiz.id} questions={p.questions} editing={p.editing} />
    </section>
  </Layout>
)

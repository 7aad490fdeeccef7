// The question bank page: a GET filter form (text and search mode, category, favorites, tags, quiz), the results
// table with pages of BANK_PAGE_SIZE, each question's answer marked in words, its tags, a favorite star per
// question and, for moderators, near-duplicate flags and the selection form (a new quiz from the selected
// questions, or one category for all of them). Everything works without JavaScript; htmx swaps the results and
// the star in place.
import { Layout, type Errors, type Flash, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import type { BankPage, BankQuestion, BankTag, SearchMode } from '../models/bank'
import { TIME_LIMIT_MAX_MINUTES, TITLE_MAX } from '../models/extraction'
import type { QuestionCategory } from '../services/categories'
import { BRAND, SignedInNav } from './accounts'

export const BANK_PAGE_SIZE = 50

/** What the bank page shows: its filters as the URL carries them, and the page number. */
export interface BankView {
  q: string
  mode: SearchMode
  /** '' all, 'none' uncategorized, or a category id. */
  category: string
  favorites: boolean
  tagIds: number[]
  quizId: number | null
  /** Only this question (the near-duplicate links). */
  question: number | null
  page: number
}

export const DEFAULT_VIEW: BankView = { q: '', mode: 'hybrid', category: '', favorites: false, tagIds: [], quizId: null, question: null, page: 1 }

/** The bank page's URL for a view: only what differs from the defaults. */
export function bankUrl(base: string, v: BankView, page = v.page): string {
  const p = new URLSearchParams()
  if (v.q) p.set('q', v.q)
  if (v.q && v.mode !== 'hybrid') p.set('search_mode', v.mode)
  if (v.category) p.set('category', v.category)
  if (v.favorites) p.set('favorites_only', 'true')
  for (const id of v.tagIds) p.append('tag_ids', String(id))
  if (v.quizId !== null) p.set('quiz_id', String(v.quizId))
  if (v.question !== null) p.set('question', String(v.question))
  if (page > 1) p.set('page', String(page))
  const query = p.toString()
  return `${base}/bank${query ? `?${query}` : ''}`
}

export interface BankResults {
  view: BankView
  page: BankPage
  favorites: Set<number>
  /** Moderators only: question id -> ids of its near duplicates. */
  nearDuplicates: Map<number, number[]> | null
  categories: QuestionCategory[]
  /** The selection form's values after a refused action. */
  selection?: SelectionValues
}

export interface SelectionValues { title: string; mode: string; time_limit_minutes: string; category: string; selected: number[]; errors?: Errors }

const MODES: Array<{ value: SearchMode; label: string }> = [
  { value: 'hybrid', label: 'Both: similar meaning first, then exact words' },
  { value: 'keyword', label: 'Exact words' },
  { value: 'semantic', label: 'Similar meaning' },
]
const KIND_LABEL: Record<BankTag['kind'], string> = { subject: 'subject', disease: 'disease', keyword: 'keyword' }

// A few rules of this page only (tag chips, the wide table); the house sheet has none for them.
/** The star of one question: a form that works without JavaScript; htmx swaps just this form. */
export const FavoriteButton = (p: { base: string; questionId: number; favorite: boolean; back: string }) => {
  const url = `${p.base}/bank/questions/${p.questionId}/favorite`
  return (
    <form id={`favorite-${p.questionId}`} class="inline" action={url} method="post" hx-post={url} hx-target="this" hx-swap="outerHTML">
      <input type="hidden" name="favorite" value={p.favorite ? '0' : '1'} />
      <input type="hidden" name="back" value={p.back} />
      <button type="submit" class="secondary star" aria-pressed={p.favorite ? 'true' : 'false'}
        aria-label={p.favorite ? `Remove question ${p.questionId} from favorites` : `Add question ${p.questionId} to favorites`}
        title={p.favorite ? 'Remove from favorites' : 'Add to favorites'}>
        <span aria-hidden="true">{p.favorite ? '★' : '☆'}</span>
      </button>
    </form>
  )
}

const TagChips = ({ tags }: { tags: BankTag[] }) =>
  tags.length === 0 ? <span class="muted">None</span> : (
    <ul class="chips">
      {tags.map((t) => <li class="chip"><span safe>{t.name}</span> <span class="muted">{KIND_LABEL[t.kind]}</span></li>)}
    </ul>
  )

const QuestionRow = (p: { base: string; q: BankQuestion; favorite: boolean; back: string; moderator: boolean; duplicates: number[]; selected: boolean }) => (
  <tr id={`question-${p.q.id}`}>
    {p.moderator ? (
      <td>
        <label class="choice" for={`select-${p.q.id}`}>
          <input type="checkbox" id={`select-${p.q.id}`} name="question_ids" value={String(p.q.id)} form="bank-selection" checked={p.selected} />
          <span>{`#${p.q.id}`}</span>
        </label>
      </td>
    ) : <td>{`#${p.q.id}`}</td>}
    <td>
      <p><strong safe>{p.q.question_text}</strong></p>
      <ol class="options">
        {p.q.options.map((o) => (o === p.q.correct_answer
          ? <li><strong safe>{o}</strong> <span>(correct answer)</span></li>
          : <li safe>{o}</li>))}
      </ol>
      {p.q.quiz_id !== null && p.q.quiz_title !== null ? (
        <p class="muted">From the quiz {p.moderator
          ? <a href={`${p.base}/quizzes/${p.q.quiz_id}`} safe>{p.q.quiz_title}</a>
          : <span safe>{p.q.quiz_title}</span>}</p>
      ) : ''}
      {p.duplicates.length > 0 ? (
        <p class="near-duplicate">
          <strong>Possible copy:</strong>{' '}
          {p.duplicates.map((id, i) => (
            <>
              {i > 0 ? ', ' : ''}
              <a href={`${bankUrl(p.base, { ...DEFAULT_VIEW, question: id })}#question-${id}`}>{`Near duplicate of #${id}`}</a>
            </>
          ))}
        </p>
      ) : ''}
    </td>
    <td>{p.q.question_category_name === null ? <span class="muted">Uncategorized</span> : <span safe>{p.q.question_category_name}</span>}</td>
    <td><TagChips tags={p.q.tags} /></td>
    <td><FavoriteButton base={p.base} questionId={p.q.id} favorite={p.favorite} back={p.back} /></td>
  </tr>
)

const SelectionForm = (p: { base: string; back: string; total: number; categories: QuestionCategory[]; values?: SelectionValues }) => {
  const v = p.values
  const error = (name: string) => v?.errors?.[name]
  const described = (name: string) => (error(name) ? `selection-${name}-error` : undefined)
  const ErrorText = ({ name }: { name: string }) =>
    error(name) ? <span class="field-error" id={`selection-${name}-error`} safe>{error(name)!}</span> : ''
  return (
    <form id="bank-selection" class="stack" action={`${p.base}/bank/selection`} method="post">
      <h2>Selected questions</h2>
      <input type="hidden" name="back" value={p.back} />
      <p class="muted">Tick questions in the table, or use every match of the current filters.</p>
      <label class="choice" for="selection-all">
        <input type="checkbox" id="selection-all" name="all_matches" value="true" />
        <span>{`Use all ${p.total} matching questions instead of the ticked ones`}</span>
      </label>
      <ErrorText name="question_ids" />
      <fieldset>
        <legend>New quiz from the selected questions</legend>
        <label for="selection-title">
          <span>Title</span>
          <input id="selection-title" name="title" type="text" maxlength={TITLE_MAX} value={v?.title ?? ''}
            aria-invalid={error('title') ? 'true' : undefined} aria-describedby={described('title')} />
          <ErrorText name="title" />
        </label>
        <label for="selection-mode">
          <span>Mode</span>
          <select id="selection-mode" name="mode" aria-invalid={error('mode') ? 'true' : undefined} aria-describedby={described('mode')}>
            <option value="learning" selected={v?.mode !== 'timed'}>Learning (answers shown)</option>
            <option value="timed" selected={v?.mode === 'timed'}>Timed</option>
          </select>
          <ErrorText name="mode" />
        </label>
        <label for="selection-time">
          <span>Time limit in minutes (timed quizzes; leave empty for none)</span>
          <input id="selection-time" name="time_limit_minutes" type="number" min="1" max={String(TIME_LIMIT_MAX_MINUTES)} inputmode="numeric"
            value={v?.time_limit_minutes ?? ''} aria-invalid={error('time_limit_minutes') ? 'true' : undefined} aria-describedby={described('time_limit_minutes')} />
          <ErrorText name="time_limit_minutes" />
        </label>
        <div><button type="submit" name="do" value="new_quiz">New quiz from selected</button></div>
      </fieldset>
      <fieldset>
        <legend>Category of the selected questions</legend>
        <label for="selection-category">
          <span>Question category</span>
          <select id="selection-category" name="category" aria-invalid={error('category') ? 'true' : undefined} aria-describedby={described('category')}>
            <option value="none" selected={v?.category === 'none'}>No category (uncategorized)</option>
            {p.categories.map((c) => <option value={String(c.id)} selected={v?.category === String(c.id)} safe>{c.name}</option>)}
          </select>
          <ErrorText name="category" />
        </label>
        <div><button type="submit" name="do" value="set_category" class="secondary">Set category</button></div>
      </fieldset>
    </form>
  )
}

/** The results: what matched, the table, the pages and (moderators) the selection form. htmx swaps this whole block. */
export const BankResultsBlock = (p: { base: string; moderator: boolean; r: BankResults }) => {
  const { view, page } = p.r
  const back = bankUrl(p.base, view)
  const pages = Math.max(1, Math.ceil(page.total / BANK_PAGE_SIZE))
  const selected = new Set(p.r.selection?.selected ?? [])
  return (
    <div id="bank-results">
      <h2>Results</h2>
      <p role="status">
        {page.total === 0 ? 'No questions match.' : `${page.total} ${page.total === 1 ? 'question matches' : 'questions match'}; page ${view.page} of ${pages}.`}
      </p>
      {page.questions.length === 0 ? '' : (
        <table>
          <thead>
            <tr>
              <th scope="col">{p.moderator ? 'Select' : 'Id'}</th>
              <th scope="col">Question and options</th>
              <th scope="col">Category</th>
              <th scope="col">Tags</th>
              <th scope="col">Favorite</th>
            </tr>
          </thead>
          <tbody>
            {page.questions.map((q) => (
              <QuestionRow base={p.base} q={q} favorite={p.r.favorites.has(q.id)} back={back} moderator={p.moderator}
                duplicates={p.r.nearDuplicates?.get(q.id) ?? []} selected={selected.has(q.id)} />
            ))}
          </tbody>
        </table>
      )}
      {pages > 1 ? (
        <nav class="pages" aria-label="Result pages">
          {view.page > 1 ? <a href={bankUrl(p.base, view, view.page - 1)} rel="prev">Previous page</a> : <span class="muted">Previous page</span>}
          <span>{`Page ${view.page} of ${pages}`}</span>
          {view.page < pages ? <a href={bankUrl(p.base, view, view.page + 1)} rel="next">Next page</a> : <span class="muted">Next page</span>}
        </nav>
      ) : ''}
      {p.moderator ? <SelectionForm base={p.base} back={back} total={page.total} categories={p.r.categories} values={p.r.selection} /> : ''}
    </div>
  )
}

export interface BankFiltersData {
  categories: QuestionCategory[]
  tags: BankTag[]
  quizzes: Array<{ id: number; title: string }>
}

const FilterForm = (p: { base: string; view: BankView; data: BankFiltersData }) => {
  const v = p.view
  const url = `${p.base}/bank`
  return (
    <form id="bank-filters" class="stack" action={url} method="get" role="search"
      hx-get={url} hx-target="#bank-results" hx-swap="outerHTML" hx-push-url="true" hx-trigger="submit, change">
      <h2>Filters</h2>
      <label for="bank-q">
        <span>Search the questions</span>
        <input id="bank-q" name="q" type="search" value={v.q} />
      </label>
      <fieldset>
        <legend>Search by</legend>
        {MODES.map((m) => (
          <label class="choice" for={`mode-${m.value}`}>
            <input type="radio" id={`mode-${m.value}`} name="search_mode" value={m.value} checked={v.mode === m.value} />
            <span>{m.label}</span>
          </label>
        ))}
      </fieldset>
      <label for="bank-category">
        <span>Category</span>
        <select id="bank-category" name="category">
          <option value="" selected={v.category === ''}>All categories</option>
          <option value="none" selected={v.category === 'none'}>Uncategorized</option>
          {p.data.categories.map((c) => (
            <option value={String(c.id)} selected={v.category === String(c.id)} safe>{`${c.name} (${c.question_count})`}</option>
          ))}
        </select>
      </label>
      <label for="bank-quiz">
        <span>Quiz</span>
        <select id="bank-quiz" name="quiz_id">
          <option value="" selected={v.quizId === null}>Any quiz</option>
          {p.data.quizzes.map((z) => <option value={String(z.id)} selected={v.quizId === z.id} safe>{z.title}</option>)}
        </select>
      </label>
      <label class="choice" for="bank-favorites">
        <input type="checkbox" id="bank-favorites" name="favorites_only" value="true" checked={v.favorites} />
        <span>My favorites only</span>
      </label>
      {p.data.tags.length === 0 ? '' : (
        <fieldset>
          <legend>Tags (questions with every ticked tag)</legend>
          <ul class="chips">
            {p.data.tags.map((t) => (
              <li>
                <label class="chip" for={`tag-${t.id}`}>
                  <input type="checkbox" id={`tag-${t.id}`} name="tag_ids" value={String(t.id)} checked={v.tagIds.includes(t.id)} />
                  <span safe>{t.name}</span> <span class="muted">{KIND_LABEL[t.kind]}</span>
                </label>
              </li>
            ))}
          </ul>
        </fieldset>
      )}
      {v.question !== null ? <input type="hidden" name="question" value={String(v.question)} /> : ''}
      <div class="actions">
        <button type="submit">Search</button>
        <a href={url}>Clear the filters</a>
        {v.question !== null ? <span class="muted">{`Showing question #${v.question} only.`}</span> : ''}
      </div>
    </form>
  )
}

export const BankPageView = (p: { ctx: PageContext; user: UserResponse; moderator: boolean; flash?: Flash; data: BankFiltersData; results: BankResults }) => (
  <Layout title="Question bank" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>Question bank</h1>
    <p class="muted">
      {p.moderator
        ? 'Every question of every quiz. Star the ones you want to find again; tick questions to make a quiz of them or to set their category.'
        : 'Every question of the quizzes. Star the ones you want to find again.'}
    </p>
    <FilterForm base={p.ctx.base} view={p.results.view} data={p.data} />
    <BankResultsBlock base={p.ctx.base} moderator={p.moderator} r={p.results} />
  </Layout>
)

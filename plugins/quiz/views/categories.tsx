// The quiz service's staff page for categories: quiz categories (counts, add, delete) and question categories
// (counts, add, click-to-edit name and description, delete with a place for their questions, and a quiz made from
// one). Every form has action + method and works without JavaScript; htmx swaps one section or one row in place.
import { Field, Layout, type Errors, type Flash, type PageContext } from '../../../views/layout'
import type { UserResponse } from '../models/accounts'
import { CATEGORY_DESCRIPTION_MAX, CATEGORY_NAME_MAX } from '../models/categories'
import { TIME_LIMIT_MAX_MINUTES, TITLE_MAX } from '../models/extraction'
import type { QuestionCategory, QuizCategory } from '../services/categories'
import { BRAND, SignedInNav } from './accounts'

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

const Message = ({ text, kind = 'error' }: { text?: string; kind?: 'error' | 'ok' }) =>
  text ? <p class={`flash ${kind}`} role={kind === 'error' ? 'alert' : 'status'} safe>{text}</p> : ''

// ---- quiz categories

export interface QuizCategoryAdd { value: string; error?: string }

export const QuizCategoriesSection = (p: { base: string; categories: QuizCategory[]; add?: QuizCategoryAdd; message?: string; saved?: string }) => {
  const url = `${p.base}/categories/quiz`
  return (
    <section id="quiz-categories" aria-labelledby="quiz-categories-title">
      <h2 id="quiz-categories-title">Quiz categories</h2>
      <Message text={p.message} />
      <Message text={p.saved} kind="ok" />
      {p.categories.length === 0 ? <p class="muted">No quiz categories yet.</p> : (
        <table>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Quizzes</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            {p.categories.map((c) => (
              <tr id={`quiz-category-${c.id}`}>
                <td safe>{c.name}</td>
                <td>{c.quiz_count}</td>
                <td>
                  <form class="inline" action={`${url}/${c.id}/delete`} method="post" hx-post={`${url}/${c.id}/delete`}
                    hx-target="#quiz-categories" hx-swap="outerHTML"
                    hx-confirm="Delete this quiz category? Its quizzes are kept; they just have no category any more.">
                    <button type="submit" class="danger" aria-label={`Delete the quiz category ${c.name}`}>Delete</button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">Deleting a quiz category keeps its quizzes: they are left without a category.</p>
      <form class="stack" action={url} method="post" hx-post={url} hx-target="#quiz-categories" hx-swap="outerHTML">
        <Field label="New quiz category" name="name" id="quiz-category-name" value={p.add?.value} error={p.add?.error}
          required maxlength={CATEGORY_NAME_MAX} />
        <div><button type="submit">Add quiz category</button></div>
      </form>
    </section>
  )
}

// ---- question categories

export interface QuestionCategoryValues { name: string; description: string }
export interface QuestionCategoryEditing { id: number; values: QuestionCategoryValues; errors?: Errors; message?: string }
export interface MakeQuizValues { title: string; mode: string; time_limit_minutes: string }
export interface MakeQuizState { id: number; values: MakeQuizValues; errors?: Errors; message?: string }
export interface QuestionCategoryAdd { values: QuestionCategoryValues; errors?: Errors }

const questionUrl = (base: string, id?: number) => `${base}/categories/question${id === undefined ? '' : `/${id}`}`

const DescriptionField = (p: { id: string; value: string; error?: string }) => (
  <label for={p.id}>
    <span>Description (optional)</span>
    <textarea id={p.id} name="description" rows="2" maxlength={CATEGORY_DESCRIPTION_MAX} aria-invalid={p.error ? 'true' : undefined}
      aria-describedby={p.error ? `${p.id}-error` : undefined} safe>{p.value}</textarea>
    {p.error ? <span class="field-error" id={`${p.id}-error`} safe>{p.error}</span> : ''}
  </label>
)

/** Delete a question category: its questions move to another one, or are left without a category. */
const DeleteForm = (p: { base: string; category: QuestionCategory; others: QuestionCategory[] }) => {
  const id = `qcat-${p.category.id}-move`
  const url = `${questionUrl(p.base, p.category.id)}/delete`
  return (
    <details>
      <summary>Delete</summary>
      <form class="stack" action={url} method="post" hx-post={url} hx-target="#question-categories" hx-swap="outerHTML"
        hx-confirm="Delete this question category? Its questions stay in the question bank.">
        <label for={id}>
          <span safe>{`Its ${plural(p.category.question_count, 'question', 'questions')} then`}</span>
          <select id={id} name="move_to">
            <option value="">stay in the bank without a category</option>
            {p.others.map((o) => <option value={String(o.id)} safe>{`move to ${o.name}`}</option>)}
          </select>
        </label>
        <div><button type="submit" class="danger">Delete this category</button></div>
      </form>
    </details>
  )
}

/** Make a quiz from every question of the category; the quiz's page opens when it is made. */
const MakeQuizForm = (p: { base: string; category: QuestionCategory; state?: MakeQuizState }) => {
  const url = `${questionUrl(p.base, p.category.id)}/create-quiz`
  const id = (name: string) => `qcat-${p.category.id}-${name}`
  const v = p.state?.values ?? { title: p.category.name, mode: 'timed', time_limit_minutes: '' }
  const e = p.state?.errors ?? {}
  return (
    <details open={p.state ? true : undefined}>
      <summary>Make a quiz from this category</summary>
      {p.category.question_count === 0 ? <p class="muted">This category has no questions yet.</p> : (
        <form class="stack" action={url} method="post">
          <Message text={p.state?.message} />
          <p class="muted" safe>{`The quiz uses all ${plural(p.category.question_count, 'question', 'questions')} of this category; nothing is copied.`}</p>
          <Field label="Quiz title" name="title" id={id('title')} value={v.title} error={e.title} required maxlength={TITLE_MAX} />
          <label for={id('mode')}>
            <span>Mode</span>
            <select id={id('mode')} name="mode" aria-invalid={e.mode ? 'true' : undefined} aria-describedby={e.mode ? `${id('mode')}-error` : undefined}>
              <option value="timed" selected={v.mode !== 'learning' ? true : undefined}>Timed: answers shown after submitting</option>
              <option value="learning" selected={v.mode === 'learning' ? true : undefined}>Learning: answers and explanations shown along the way</option>
            </select>
            {e.mode ? <span class="field-error" id={`${id('mode')}-error`} safe>{e.mode}</span> : ''}
          </label>
          <Field label="Time limit in minutes (optional)" name="time_limit_minutes" id={id('time')} type="number" inputmode="numeric"
            value={v.time_limit_minutes} error={e.time_limit_minutes} hint={`Leave empty for no limit; at most ${TIME_LIMIT_MAX_MINUTES}.`} />
          <div><button type="submit">Make the quiz</button></div>
        </form>
      )}
    </details>
  )
}

/** One question category, read only; Edit swaps in its edit form (click-to-edit). */
export const QuestionCategoryRow = (p: { base: string; category: QuestionCategory; all: QuestionCategory[]; makeQuiz?: MakeQuizState }) => {
  const c = p.category
  const rowId = `qcat-${c.id}`
  return (
    <tr id={rowId}>
      <td safe>{c.name}</td>
      <td>{c.description ? <span safe>{c.description}</span> : <span class="muted">None</span>}</td>
      <td>{c.question_count}</td>
      <td>
        <a href={`${questionUrl(p.base, c.id)}/edit#${rowId}`} hx-get={`${questionUrl(p.base, c.id)}/edit`} hx-target={`#${rowId}`}
          hx-swap="outerHTML" aria-label={`Edit the question category ${c.name}`}>Edit</a>
        <DeleteForm base={p.base} category={c} others={p.all.filter((o) => o.id !== c.id)} />
        <MakeQuizForm base={p.base} category={c} state={p.makeQuiz?.id === c.id ? p.makeQuiz : undefined} />
      </td>
    </tr>
  )
}

/** A question category's edit form, in place of its row; saving swaps the whole section back. */
export const QuestionCategoryEditRow = (p: { base: string; editing: QuestionCategoryEditing }) => {
  const rowId = `qcat-${p.editing.id}`
  const url = questionUrl(p.base, p.editing.id)
  const e = p.editing.errors ?? {}
  return (
    <tr id={rowId}>
      <td colspan="4">
        <form class="stack" action={url} method="post" hx-post={url} hx-target="#question-categories" hx-swap="outerHTML">
          <Message text={p.editing.message} />
          <Field label="Name" name="name" id={`${rowId}-name`} value={p.editing.values.name} error={e.name} required maxlength={CATEGORY_NAME_MAX} />
          <DescriptionField id={`${rowId}-description`} value={p.editing.values.description} error={e.description} />
          <div class="actions">
            <button type="submit">Save category</button>
            <a href={`${p.base}/categories#${rowId}`} hx-get={url} hx-target={`#${rowId}`} hx-swap="outerHTML">Cancel</a>
          </div>
        </form>
      </td>
    </tr>
  )
}

export interface QuestionSectionState {
  add?: QuestionCategoryAdd
  editing?: QuestionCategoryEditing
  makeQuiz?: MakeQuizState
  message?: string
  saved?: string
}

export const QuestionCategoriesSection = (p: { base: string; categories: QuestionCategory[] } & QuestionSectionState) => {
  const url = questionUrl(p.base)
  const e = p.add?.errors ?? {}
  return (
    <section id="question-categories" aria-labelledby="question-categories-title">
      <h2 id="question-categories-title">Question categories</h2>
      <Message text={p.message} />
      <Message text={p.saved} kind="ok" />
      {p.categories.length === 0 ? <p class="muted">No question categories yet.</p> : (
        <table>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Questions</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            {p.categories.map((c) => (p.editing?.id === c.id
              ? <QuestionCategoryEditRow base={p.base} editing={p.editing} />
              : <QuestionCategoryRow base={p.base} category={c} all={p.categories} makeQuiz={p.makeQuiz} />))}
          </tbody>
        </table>
      )}
      <form class="stack" action={url} method="post" hx-post={url} hx-target="#question-categories" hx-swap="outerHTML">
        <h3>Add a question category</h3>
        <Field label="Name" name="name" id="question-category-name" value={p.add?.values.name} error={e.name} required maxlength={CATEGORY_NAME_MAX} />
        <DescriptionField id="question-category-description" value={p.add?.values.description ?? ''} error={e.description} />
        <div><button type="submit">Add question category</button></div>
      </form>
    </section>
  )
}

// ---- the page

export interface CategoriesState {
  quiz?: { add?: QuizCategoryAdd; message?: string; saved?: string }
  question?: QuestionSectionState
}

/** Both sections; the page's htmx fragment when no single section is asked for. */
export const CategorySections = (p: { base: string; quizCategories: QuizCategory[]; questionCategories: QuestionCategory[] } & CategoriesState) => (
  <div id="categories">
    <QuizCategoriesSection base={p.base} categories={p.quizCategories} {...p.quiz} />
    <QuestionCategoriesSection base={p.base} categories={p.questionCategories} {...p.question} />
  </div>
)

export const CategoriesPage = (p: { ctx: PageContext; user: UserResponse; flash?: Flash; quizCategories: QuizCategory[]; questionCategories: QuestionCategory[] } & CategoriesState) => (
  <Layout title="Categories" base={p.ctx.base} brand={BRAND} nav={<SignedInNav base={p.ctx.base} user={p.user} />} flash={p.flash}>
    <h1>Categories</h1>
    <p class="muted">Quiz categories group quizzes; question categories group the questions of the question bank.</p>
    <CategorySections base={p.ctx.base} quizCategories={p.quizCategories} questionCategories={p.questionCategories} quiz={p.quiz} question={p.question} />
  </Layout>
)

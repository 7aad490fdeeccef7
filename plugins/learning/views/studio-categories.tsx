// The studio's categories: the table (click-to-edit rows, delete with a confirm step), the add form, and the
// confirm step as a page for browsers without JavaScript. The table with its add form is the fragment an add or a
// delete answers; a row is the fragment of an edit. Every user or database string is a `safe` text child or an
// attribute.
import { type Errors, Field, FieldNotes, type Flash, Notice, Problem, describedBy } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'
import { CATEGORY_DESCRIPTION_MAX, CATEGORY_NAME_MAX, SLUG_MAX, type CategoryListEntry } from '../model'
import { STUDIO_SCRIPTS, areaText } from './studio'

export interface CategoryValues { name: string; slug: string; description: string }
export interface CategoryFormState { values: CategoryValues; errors?: Errors; message?: string }
export const blankCategory: CategoryValues = { name: '', slug: '', description: '' }

const categoryUrl = (base: string, id: number) => `${base}/studio/categories/${id}`
const SLUG_HINT = 'Lowercase letters and digits in words joined by hyphens, e.g. respiratory-care'

const CategoryFields = ({ idPrefix, state }: { idPrefix: string; state: CategoryFormState }) => {
  const { values, errors } = state
  const descriptionId = `${idPrefix}-description`
  return (
    <div class="studio-fields">
      <Field label="Name" name="name" id={`${idPrefix}-name`} value={values.name} error={errors?.name} maxlength={CATEGORY_NAME_MAX} required />
      <label for={`${idPrefix}-slug`}>
        <span>Slug</span>
        <input
          id={`${idPrefix}-slug`} name="slug" type="text" value={values.slug} maxlength={SLUG_MAX} required autocomplete="off"
          data-slug-from={`${idPrefix}-name`}
          aria-invalid={errors?.slug ? 'true' : undefined} aria-describedby={describedBy(`${idPrefix}-slug`, SLUG_HINT, errors?.slug)}
        />
        <FieldNotes id={`${idPrefix}-slug`} hint={SLUG_HINT} error={errors?.slug} />
      </label>
      <label for={descriptionId} class="studio-wide">
        <span>Description (optional)</span>
        <textarea
          id={descriptionId} name="description" rows="2" maxlength={CATEGORY_DESCRIPTION_MAX}
          aria-invalid={errors?.description ? 'true' : undefined} aria-describedby={describedBy(descriptionId, undefined, errors?.description)} safe
        >{areaText(values.description)}</textarea>
        <FieldNotes id={descriptionId} error={errors?.description} />
      </label>
    </div>
  )
}

export const CategoryRow = (p: { base: string; c: CategoryListEntry; saved?: boolean }) => {
  const { c } = p
  const url = categoryUrl(p.base, c.id)
  return (
    <tr id={`category-${c.id}`}>
      <th scope="row" safe>{c.name}</th>
      <td><code safe>{c.slug}</code></td>
      <td safe>{c.description}</td>
      <td safe>{String(c.content_count)}</td>
      <td>
        <div class="actions">
          <a href={`${url}/edit`} hx-get={`${url}/edit`} hx-target={`#category-${c.id}`} hx-swap="outerHTML" aria-label={`Edit ${c.name}`}>Edit</a>
          <a href={`${url}/delete`} hx-get={`${url}/delete`} hx-target={`#category-${c.id}`} hx-swap="outerHTML" aria-label={`Delete ${c.name}`}>Delete</a>
          {p.saved ? <span class="muted" role="status">Saved.</span> : ''}
        </div>
      </td>
    </tr>
  )
}

/** A category's edit form in place of its row (click to edit); saving swaps the row back. */
export const CategoryEditRow = (p: { base: string; id: number; state: CategoryFormState }) => {
  const url = categoryUrl(p.base, p.id)
  return (
    <tr id={`category-${p.id}`}>
      <td colspan="5">
        <form class="stack" action={url} method="post" hx-post={url} hx-target={`#category-${p.id}`} hx-swap="outerHTML">
          <h3 class="rec-edit-title" safe>{`Edit “${p.state.values.name || 'category'}”`}</h3>
          <Problem text={p.state.message} />
          <CategoryFields idPrefix={`category-${p.id}`} state={p.state} />
          <div class="actions">
            <button type="submit">Save category</button>
            <a href={url} hx-get={url} hx-target={`#category-${p.id}`} hx-swap="outerHTML">Cancel</a>
          </div>
        </form>
      </td>
    </tr>
  )
}

/** The confirm step in place of the row; `error` says why the delete was refused (content still in it). */
export const CategoryConfirmRow = (p: { base: string; c: CategoryListEntry; error?: string }) => {
  const url = categoryUrl(p.base, p.c.id)
  return (
    <tr id={`category-${p.c.id}`}>
      <th scope="row" safe>{p.c.name}</th>
      <td colspan="4">
        <form class="rec-confirm" action={`${url}/delete`} method="post" hx-post={`${url}/delete`} hx-target="#studio-categories" hx-swap="outerHTML">
          <span safe>{`Delete the category “${p.c.name}”?`}</span>{' '}
          <button type="submit" class="danger" autofocus aria-describedby={p.error ? `category-${p.c.id}-delete-error` : undefined}>Delete</button>{' '}
          <a href={url} hx-get={url} hx-target={`#category-${p.c.id}`} hx-swap="outerHTML">Keep it</a>
          {p.error ? <span class="field-error" id={`category-${p.c.id}-delete-error`} role="alert" safe>{p.error}</span> : ''}
        </form>
      </td>
    </tr>
  )
}

export interface CategoriesView {
  base: string
  categories: CategoryListEntry[]
  add?: CategoryFormState
  editing?: { id: number; state: CategoryFormState }
  confirming?: { id: number; error?: string }
  notice?: string | null
}

/** The table and the add form: the fragment of an add and of a delete. */
export const CategoriesContent = (p: CategoriesView) => (
  <div id="studio-categories">
    <Notice text={p.notice} />
    {p.categories.length === 0 ? <p class="muted">No categories yet: add the first one below. Content needs a category.</p> : (
      <table>
        <caption class="visually-hidden">The learning hub's categories, by name</caption>
        <thead>
          <tr>
            <th scope="col">Name</th><th scope="col">Slug</th><th scope="col">Description</th>
            <th scope="col">Published content</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {p.categories.map((c) => p.editing?.id === c.id ? <CategoryEditRow base={p.base} id={c.id} state={p.editing.state} />
            : p.confirming?.id === c.id ? <CategoryConfirmRow base={p.base} c={c} error={p.confirming.error} />
              : <CategoryRow base={p.base} c={c} />)}
        </tbody>
      </table>
    )}
    <section aria-labelledby="studio-category-add-title">
      <h2 id="studio-category-add-title">Add a category</h2>
      <form id="studio-category-add" class="stack" action={`${p.base}/studio/categories`} method="post"
        hx-post={`${p.base}/studio/categories`} hx-target="#studio-categories" hx-swap="outerHTML">
        <Problem text={p.add?.message} />
        <CategoryFields idPrefix="category-new" state={p.add ?? { values: blankCategory }} />
        <div>
          <button type="submit">Add category</button>
        </div>
      </form>
    </section>
  </div>
)

export const CategoriesPage = (p: CategoriesView & { user: NavUser; flash?: Flash }) => (
  <ClinicalLayout title="Categories · Studio" base={p.base} user={p.user} flash={p.flash} pageScripts={STUDIO_SCRIPTS}>
    <h1>Categories</h1>
    <p>Every article and presentation belongs to one category. A category with content in it cannot be deleted.</p>
    <p><a href={`${p.base}/studio`}>Back to the studio</a></p>
    <CategoriesContent {...p} />
  </ClinicalLayout>
)

/** The confirm step as a page, where the link lands without JavaScript. */
export const CategoryDeletePage = (p: { base: string; user: NavUser; c: CategoryListEntry; error?: string }) => (
  <ClinicalLayout title="Delete a category · Studio" base={p.base} user={p.user}>
    <h1>Delete a category</h1>
    <p safe>{`Delete the category “${p.c.name}”?`}</p>
    <Problem text={p.error} />
    <form class="actions" action={`${categoryUrl(p.base, p.c.id)}/delete`} method="post">
      <button type="submit" class="danger">Delete the category</button>
      <a href={`${p.base}/studio/categories`}>No, keep it</a>
    </form>
  </ClinicalLayout>
)

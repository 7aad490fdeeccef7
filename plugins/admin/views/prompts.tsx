// The console's prompt templates (spec 3, Configuration: prompts): one section per prompt key note generation reads,
// each with its own form (the template in use now, saved as the admin's override), "Reset to default" while it is
// overridden, and the default beside it, read-only. A section is the fragment of its own save and reset.
import { describedBy, type Errors, FieldNotes, type Flash, Notice, Problem } from '../../../views/layout'
import type { NavUser } from '../../clinical/views/common'
import { PROMPT_MAX_CHARS } from '../../clinical/exports'
import { AdminLayout } from './layout'

export interface PromptView {
  key: string
  /** What the form shows: the template in use, or what was just posted and refused. */
  value: string
  default: string
  overridden: boolean
  errors?: Errors
  message?: string
  notice?: string | null
}

/** What each prompt is for, in words; an unlisted key is shown as it is. */
const PROMPT_TITLES: Record<string, string> = {
  'prompt.system': 'System prompt (every generation)',
  'prompt.hpi_encounter': 'HPI from a visit recording',
  'prompt.hpi_dictation': 'HPI from dictation',
  'prompt.soap': 'SOAP note',
  'prompt.chart_review': 'Pre-visit chart review',
  'prompt.hospital_course': 'Hospital course',
  'prompt.shadess': 'Adolescent psychosocial assessment (SHADESS)',
  'prompt.sick_visit': 'Pediatric sick visit note',
  'prompt.patient_education': 'Patient education handout',
  'prompt.milestone_narrative': 'Developmental milestones narrative',
  'prompt.milestone_summary': 'Developmental milestones summary',
  'prompt.refine': 'Refine a document',
  'prompt.shorten': 'Shorten a document',
  'prompt.clarify': 'Clarify a document',
}
export const promptTitle = (key: string) => PROMPT_TITLES[key] ?? key

/** A prompt section's element id (`prompt.soap` -> `prompt-soap`). */
export const idOf = (key: string) => key.replace(/[^A-Za-z0-9_-]/g, '-')

export const promptUrl = (base: string, key: string) => `${base}/admin/prompts/${encodeURIComponent(key)}`

export const PromptSection = ({ base, p }: { base: string; p: PromptView }) => {
  const id = idOf(p.key)
  const url = promptUrl(base, p.key)
  const textId = `${id}-text`
  const title = promptTitle(p.key)
  const error = p.errors?.template
  return (
    <section id={id} class="admin-prompt" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} safe>{title}</h2>
      <p class="muted">
        <code safe>{p.key}</code>{' · '}
        {p.overridden ? 'Changed here: generation uses this template.' : 'Using the default.'}
      </p>
      <Notice text={p.notice} />
      <Problem text={p.message} />
      <div class="admin-prompt-grid">
        <form class="stack" action={url} method="post" hx-post={url} hx-target={`#${id}`} hx-swap="outerHTML">
          <label for={textId}>
            <span>Template<span class="visually-hidden" safe>{` of ${title}`}</span></span>
            <textarea id={textId} name="template" rows="12" maxlength={PROMPT_MAX_CHARS} class="admin-template"
              aria-invalid={error ? 'true' : undefined} aria-describedby={describedBy(textId, true, error)} safe>{p.value}</textarea>
            <FieldNotes id={textId} error={error}
              hint={'{{name}} marks a placeholder generation fills in. Saving an empty template uses the default again.'} />
          </label>
          <div class="actions">
            <button type="submit" aria-label={`Save ${title}`}>Save</button>
            {/* the reset form's button, beside Save (forms cannot nest) */}
            {p.overridden ? <button type="submit" form={`${id}-reset`} class="secondary" aria-label={`Reset to default: ${title}`}>Reset to default</button> : ''}
          </div>
        </form>
        <details class="admin-default">
          <summary>The default template</summary>
          <pre safe>{p.default}</pre>
        </details>
      </div>
      {p.overridden ? <form id={`${id}-reset`} action={`${url}/reset`} method="post" hx-post={`${url}/reset`} hx-target={`#${id}`} hx-swap="outerHTML"></form> : ''}
    </section>
  )
}

export const PromptsPage = (p: { base: string; user: NavUser; prompts: PromptView[]; flash?: Flash }) => (
  <AdminLayout base={p.base} title="Prompts" user={p.user} area="/prompts" flash={p.flash}>
    <h1>Prompts</h1>
    <p>
      The templates note generation sends to the AI model. A change is used by the very next generation; the default
      stays available and "Reset to default" brings it back.
    </p>
    <nav aria-label="Prompts" class="admin-toc">
      <ul>
        {p.prompts.map((x) => (
          <li><a href={`#${idOf(x.key)}`} safe>{promptTitle(x.key)}</a>{x.overridden ? ' (changed)' : ''}</li>
        ))}
      </ul>
    </nav>
    {p.prompts.map((x) => <PromptSection base={p.base} p={x} />)}
  </AdminLayout>
)

// The console's AI model entries (spec 3, Administration objects: AI model entry): the table with on/off and the
// default, the gateway's own list with "Add" for what is not listed yet, and a form for an entry of the admin's own.
// The content below the heading is the fragment of every change; the gateway's list is the fragment of a discovery.
import { type Errors, Field, type Flash, Notice, Problem } from '../../../views/layout'
import type { NavUser } from '../../clinical/views/common'
import { MODEL_CATEGORY_MAX, MODEL_ID_MAX, MODEL_NAME_MAX } from '../../clinical/exports'
import type { AdminModelEntry } from '../models/config'
import { AdminLayout } from './layout'

/** What the gateway answered: its models, or why there is no list, in words. */
export type DiscoveredView = { models: Array<{ id: string; name: string }> } | { problem: string }
export interface ModelForm { values: { id: string; name: string; category: string }; errors?: Errors; message?: string }

export interface ModelsView {
  base: string
  models: AdminModelEntry[]
  notice?: string | null
  problem?: string | null
  discovered?: DiscoveredView | null
  add?: ModelForm
}

export const modelsUrl = (base: string, path = '') => `${base}/admin/models${path}`
const blankModel: ModelForm = { values: { id: '', name: '', category: 'general' } }

/** A change of the table posts here; with htmx the whole content comes back. */
const ChangeForm = (p: { base: string; path: string; modelId: string; enabled?: boolean; label: string; name: string; kind?: string }) => (
  <form class="inline" action={modelsUrl(p.base, p.path)} method="post" hx-post={modelsUrl(p.base, p.path)} hx-target="#models-content"
    hx-swap="outerHTML">
    <input type="hidden" name="modelId" value={p.modelId} />
    {p.enabled === undefined ? '' : <input type="hidden" name="enabled" value={String(p.enabled)} />}
    <button type="submit" class={p.kind} aria-label={`${p.label}: ${p.name}`} safe>{p.label}</button>
  </form>
)

const ModelRow = ({ base, m }: { base: string; m: AdminModelEntry }) => (
  <tr>
    <th scope="row"><span safe>{m.name}</span>{m.custom ? <span class="muted"> (added here)</span> : ''}</th>
    <td><code safe>{m.id}</code></td>
    <td safe>{m.category}</td>
    <td>{m.enabled ? 'On' : 'Off'}</td>
    <td>{m.isDefault ? <strong>Default</strong> : 'No'}</td>
    <td>
      {m.isDefault ? <span class="muted">The default stays on</span> : (
        <div class="actions">
          <ChangeForm base={base} path="/toggle" modelId={m.id} enabled={!m.enabled} label={m.enabled ? 'Switch off' : 'Switch on'}
            name={m.name} kind="secondary" />
          <ChangeForm base={base} path="/default" modelId={m.id} label="Make default" name={m.name} />
        </div>
      )}
    </td>
  </tr>
)

/** The gateway's models: the fragment of "Discover from the gateway". */
export const DiscoveredList = ({ base, listed, discovered }: { base: string; listed: AdminModelEntry[]; discovered?: DiscoveredView | null }) => (
  <div id="models-discovered">
    {!discovered ? <p class="muted">Ask the gateway which models it serves, and add the ones clinicians should have.</p>
      : 'problem' in discovered ? <Problem text={discovered.problem} />
        : discovered.models.length === 0 ? <p role="status">The gateway lists no models.</p> : (
          <>
            <p role="status" safe>{`The gateway serves ${discovered.models.length} ${discovered.models.length === 1 ? 'model' : 'models'}.`}</p>
            <ul class="admin-discovered">
              {discovered.models.map((d) => (
                <li>
                  <code safe>{d.id}</code>{' '}
                  {listed.some((m) => m.id === d.id) ? <span class="muted">Listed</span> : (
                    <form class="inline" action={modelsUrl(base)} method="post" hx-post={modelsUrl(base)} hx-target="#models-content" hx-swap="outerHTML">
                      <input type="hidden" name="id" value={d.id} />
                      <input type="hidden" name="name" value={d.name} />
                      <input type="hidden" name="category" value="general" />
                      <input type="hidden" name="rediscover" value="true" />
                      <button type="submit" class="secondary" aria-label={`Add ${d.id}`}>Add</button>
                    </form>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
  </div>
)

export const ModelsContent = (p: ModelsView) => {
  const add = p.add ?? blankModel
  return (
    <div id="models-content">
      <Notice text={p.notice} />
      <Problem text={p.problem} />
      <table>
        <caption class="visually-hidden">The model entries: clinicians choose among those that are on</caption>
        <thead>
          <tr>
            <th scope="col">Name</th><th scope="col">Model id</th><th scope="col">Category</th><th scope="col">Status</th>
            <th scope="col">Default</th><th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {p.models.map((m) => <ModelRow base={p.base} m={m} />)}
        </tbody>
      </table>
      <section id="models-discover" aria-labelledby="models-discover-title">
        <h2 id="models-discover-title">Models of the AI gateway</h2>
        <p>
          <a class="button secondary" href={modelsUrl(p.base, '/discover')} hx-get={modelsUrl(p.base, '/discover')} hx-target="#models-discovered"
            hx-swap="outerHTML">Discover from the gateway</a>
        </p>
        <DiscoveredList base={p.base} listed={p.models} discovered={p.discovered} />
      </section>
      <section id="models-add" aria-labelledby="models-add-title">
        <h2 id="models-add-title">Add a model</h2>
        <p class="muted">An entry of your own is added switched on. The id is the gateway's name for the model.</p>
        <form class="stack" action={modelsUrl(p.base)} method="post" hx-post={modelsUrl(p.base)} hx-target="#models-content" hx-swap="outerHTML">
          <Problem text={add.message} />
          <div class="admin-fields">
            <Field label="Model id" name="id" id="model-id" value={add.values.id} error={add.errors?.id} maxlength={MODEL_ID_MAX} required
              autocomplete="off" />
            <Field label="Name" name="name" id="model-name" value={add.values.name} error={add.errors?.name} maxlength={MODEL_NAME_MAX} required
              hint="What clinicians see." />
            <Field label="Category" name="category" id="model-category" value={add.values.category} error={add.errors?.category}
              maxlength={MODEL_CATEGORY_MAX} required hint="e.g. general, fast or reasoning." />
          </div>
          <div>
            <button type="submit">Add the model</button>
          </div>
        </form>
      </section>
    </div>
  )
}

export const ModelsPage = (p: ModelsView & { user: NavUser; flash?: Flash }) => (
  <AdminLayout base={p.base} title="AI models" user={p.user} area="/models" flash={p.flash}>
    <h1>AI models</h1>
    <p>Clinicians choose among the models that are on; the default is chosen for them until they pick another.</p>
    <ModelsContent {...p} />
  </AdminLayout>
)

// The AI model catalogue of note generation: which models clinicians may choose (GET /api/models) and which one is
// the default. Built-in entries (AI_DEFAULT_MODEL, and a few well-known gateway models an admin can switch on) plus
// the admin's custom entries; the admin's changes live in two configuration keys:
//   models.catalog  JSON {"custom": [{id, name, category}], "enabled": {"<model id>": true | false}}
//   models.default  the id of the default model
// Every change goes through one locked read-modify-write, so two admins' changes never overwrite each other.
import { aiNotConfigured } from '../../../src/core/ai'
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import { getConfigValues, setConfigValues } from './app-config'

export const MODELS_CATALOG_KEY = 'models.catalog'
export const MODELS_DEFAULT_KEY = 'models.default'

export const MODEL_ID_MAX = 200
/** Gateway model ids: `gpt-4o`, `openai/gpt-4o`, `ollama/llama3.1:8b`, `anthropic.claude-v2:1`, `model@region`. */
export const MODEL_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$'
export const MODEL_NAME_MAX = 100
export const MODEL_CATEGORY_MAX = 50

/** A relative price tier for clinicians choosing a model; custom and configured models are `unknown`. */
export type ModelCost = 'low' | 'medium' | 'high' | 'unknown'

export interface ModelEntry {
  id: string
  name: string
  /** What the model is for: `general`, `fast`, `reasoning`, or an admin's own category. */
  category: string
  cost: ModelCost
  enabled: boolean
  isDefault: boolean
  /** Added by an admin (not built in). */
  custom: boolean
}

interface BuiltInModel {
  id: string
  name: string
  category: string
  cost: ModelCost
  /** Listed to clinicians until an admin switches it off. */
  enabledByDefault: boolean
}

/**
 * Common models of OpenAI-compatible gateways (LiteLLM names). Off until an admin switches them on: the gateway may
 * not serve them under these names.
 */
export const WELL_KNOWN_MODELS: readonly BuiltInModel[] = [
  { id: 'gpt-4o-mini', name: 'GPT-4o mini', category: 'fast', cost: 'low', enabledByDefault: false },
  { id: 'gpt-4o', name: 'GPT-4o', category: 'general', cost: 'medium', enabledByDefault: false },
  { id: 'o4-mini', name: 'o4-mini', category: 'reasoning', cost: 'medium', enabledByDefault: false },
  { id: 'claude-sonnet-4', name: 'Claude Sonnet 4', category: 'general', cost: 'high', enabledByDefault: false },
]

interface CustomModel {
  id: string
  name: string
  category: string
}

interface Catalog {
  custom: CustomModel[]
  enabled: Record<string, boolean>
}

/** The built-in entries of this server: AI_DEFAULT_MODEL (on) first, then the well-known ones. */
function builtInModels(core: Core): BuiltInModel[] {
  const configured = core.config.ai.defaultModel
  const known = WELL_KNOWN_MODELS.map((m) => (m.id === configured ? { ...m, enabledByDefault: true } : m))
  if (!configured || known.some((m) => m.id === configured)) return known
  return [{ id: configured, name: configured, category: 'general', cost: 'unknown', enabledByDefault: true }, ...known]
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The stored catalogue; a value that is not the expected JSON (edited by hand) counts as empty, with a warning. */
function parseCatalog(core: Core, raw: string | undefined): Catalog {
  const empty: Catalog = { custom: [], enabled: {} }
  if (!raw?.trim()) return empty
  try {
    const value: unknown = JSON.parse(raw)
    if (!isRecord(value)) throw new Error('not an object')
    const custom = (Array.isArray(value.custom) ? value.custom : []).filter(
      (m): m is CustomModel => isRecord(m) && typeof m.id === 'string' && m.id !== '' && typeof m.name === 'string' && typeof m.category === 'string',
    ).map((m) => ({ id: m.id, name: m.name, category: m.category }))
    const enabled = Object.fromEntries(Object.entries(isRecord(value.enabled) ? value.enabled : {}).filter(([, v]) => typeof v === 'boolean')) as Record<string, boolean>
    return { custom, enabled }
  } catch (err) {
    core.log.warn({ err, key: MODELS_CATALOG_KEY }, 'the model catalogue setting is not valid JSON: using the built-in models')
    return empty
  }
}

/** The configuration keys the catalogue lives in: read them with other keys in one query, then pass them on. */
export const MODEL_CONFIG_KEYS = [MODELS_CATALOG_KEY, MODELS_DEFAULT_KEY] as const

const catalogOf = (core: Core, values: Readonly<Record<string, string>>) =>
  ({ catalog: parseCatalog(core, values[MODELS_CATALOG_KEY]), defaultId: values[MODELS_DEFAULT_KEY]?.trim() || null })

async function readCatalog(core: Core): Promise<{ catalog: Catalog; defaultId: string | null }> {
  return catalogOf(core, await getConfigValues(core, MODEL_CONFIG_KEYS))
}

function entriesOf(core: Core, catalog: Catalog, storedDefault: string | null): ModelEntry[] {
  const builtIn = builtInModels(core)
  const entries: ModelEntry[] = builtIn.map((m) => ({
    id: m.id, name: m.name, category: m.category, cost: m.cost,
    enabled: catalog.enabled[m.id] ?? m.enabledByDefault, isDefault: false, custom: false,
  }))
  for (const m of catalog.custom) {
    if (entries.some((e) => e.id === m.id)) continue
    entries.push({ id: m.id, name: m.name, category: m.category, cost: 'unknown', enabled: catalog.enabled[m.id] ?? true, isDefault: false, custom: true })
  }
  // The default: the admin's choice while it is listed and on; else AI_DEFAULT_MODEL; else the first model that is on.
  const usable = (id: string | null) => (id ? entries.find((e) => e.id === id && e.enabled) : undefined)
  const chosen = usable(storedDefault) ?? usable(core.config.ai.defaultModel) ?? entries.find((e) => e.enabled)
  if (chosen) chosen.isDefault = true
  return entries
}

/** Every model entry, on or off, with the default marked (the admin's model list). */
export async function listModelEntries(core: Core): Promise<ModelEntry[]> {
  const { catalog, defaultId } = await readCatalog(core)
  return entriesOf(core, catalog, defaultId)
}

/** The models clinicians can choose, for GET /api/models. */
export async function modelListing(core: Core): Promise<{
  provider: 'litellm' | 'none'
  models: Array<{ id: string; name: string; cost: string; category: string }>
  defaultModel: string | null
}> {
  const entries = await listModelEntries(core)
  return {
    provider: core.ai.configured ? 'litellm' : 'none',
    models: entries.filter((e) => e.enabled).map(({ id, name, cost, category }) => ({ id, name, cost, category })),
    defaultModel: entries.find((e) => e.isDefault)?.id ?? null,
  }
}

/**
 * The model a generation request runs on: the one it names, which must be listed and on (400 otherwise), or, when it
 * names none, the default (503 when there is no model at all).
 */
export async function resolveModel(core: Core, requested: string | null | undefined): Promise<string> {
  return resolveModelIn(core, await getConfigValues(core, MODEL_CONFIG_KEYS), requested)
}

/** resolveModel over configuration values already read (MODEL_CONFIG_KEYS among them). */
export function resolveModelIn(core: Core, values: Readonly<Record<string, string>>, requested: string | null | undefined): string {
  const { catalog, defaultId } = catalogOf(core, values)
  const entries = entriesOf(core, catalog, defaultId)
  if (requested === null || requested === undefined) {
    const fallback = entries.find((e) => e.isDefault)
    if (!fallback) throw aiNotConfigured('No AI model is configured')
    return fallback.id
  }
  const entry = entries.find((e) => e.id === requested)
  if (!entry) throw HttpError.badRequest('unknown_model', `The model "${requested}" is not one of the listed models (GET /api/models)`)
  if (!entry.enabled) throw HttpError.badRequest('model_disabled', `The model "${requested}" is switched off by an administrator`)
  return entry.id
}

/** One locked read-modify-write of the catalogue and the default. */
async function changeCatalog(
  core: Core, change: (state: { catalog: Catalog; defaultId: string | null; entries: ModelEntry[] }) => { defaultId?: string | null } | void,
): Promise<void> {
  await core.transaction(async (tx) => {
    await tx.db.sql`select pg_advisory_xact_lock(hashtext(${MODELS_CATALOG_KEY}))`
    const { catalog, defaultId } = await readCatalog(tx)
    const result = change({ catalog, defaultId, entries: entriesOf(tx, catalog, defaultId) }) ?? {}
    const values: Record<string, string | null> = { [MODELS_CATALOG_KEY]: JSON.stringify(catalog) }
    if (result.defaultId !== undefined) values[MODELS_DEFAULT_KEY] = result.defaultId
    await setConfigValues(tx, values)
  })
}

const unknownModel = (id: string) => HttpError.notFound('unknown_model', `The model "${id}" is not in the catalogue`)

/** Switches a model on or off for clinicians. The default model cannot be switched off (choose another first). */
export async function setModelEnabled(core: Core, modelId: string, enabled: boolean): Promise<void> {
  await changeCatalog(core, ({ catalog, entries }) => {
    const entry = entries.find((e) => e.id === modelId)
    if (!entry) throw unknownModel(modelId)
    if (!enabled && entry.isDefault) {
      throw HttpError.badRequest('default_model', 'The default model cannot be switched off: choose another default first')
    }
    catalog.enabled[modelId] = enabled
  })
}

/** Makes a listed model the default; it is switched on if it was off. */
export async function setDefaultModel(core: Core, modelId: string): Promise<void> {
  await changeCatalog(core, ({ catalog, entries }) => {
    if (!entries.some((e) => e.id === modelId)) throw unknownModel(modelId)
    catalog.enabled[modelId] = true
    return { defaultId: modelId }
  })
}

/** Adds an admin's own model (switched on). 409 when the id is already listed; 422 for a malformed field. */
export async function addCustomModel(core: Core, input: { id: string; name: string; category: string }): Promise<void> {
  const id = input.id.trim()
  const name = input.name.trim()
  const category = input.category.trim().toLowerCase()
  const fields: Record<string, string> = {}
  if (!id || id.length > MODEL_ID_MAX || !new RegExp(MODEL_ID_PATTERN).test(id)) {
    fields.id = `A gateway model id of 1 to ${MODEL_ID_MAX} characters: letters, digits and . _ : / @ + -`
  }
  if (!name || name.length > MODEL_NAME_MAX) fields.name = `1 to ${MODEL_NAME_MAX} characters`
  if (!category || category.length > MODEL_CATEGORY_MAX) fields.category = `1 to ${MODEL_CATEGORY_MAX} characters`
  if (Object.keys(fields).length > 0) throw HttpError.unprocessable('invalid_model', Object.values(fields)[0]!, fields)
  await changeCatalog(core, ({ catalog, entries }) => {
    if (entries.some((e) => e.id === id)) throw HttpError.conflict('model_exists', `The model "${id}" is already in the catalogue`)
    catalog.custom.push({ id, name, category })
    catalog.enabled[id] = true
  })
}

/** The models the configured gateway offers (GET {AI_BASE_URL}/models): 503 without a gateway, 502/504 when it fails. */
export async function discoverModels(core: Core): Promise<Array<{ id: string; name: string }>> {
  if (!core.ai.configured) throw aiNotConfigured('No AI gateway is configured on this server')
  const ids = await core.ai.listModels()
  return [...new Set(ids)].sort().map((id) => ({ id, name: id }))
}

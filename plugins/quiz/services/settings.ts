// Spec 1, Admin: settings. System settings live in the temporary store without expiry, so every process
// on the database reads the same values.
import type { Core } from '../../../src/plugin'
import type { SystemSettings } from '../model'

export const SYSTEM_SETTINGS_KEY = 'quiz:system-settings'
/** The name reported when no gateway embedding model is configured: the built-in local embedder. */
export const LOCAL_EMBEDDING_MODEL = 'local'

export async function getSystemSettings(core: Core): Promise<SystemSettings> {
  const stored = (await core.kv.get<Partial<SystemSettings>>(SYSTEM_SETTINGS_KEY)) ?? {}
  return {
    registration_enabled: stored.registration_enabled ?? true,
    embedding_model: stored.embedding_model ?? core.config.ai.embeddingModel ?? LOCAL_EMBEDDING_MODEL,
  }
}

export async function updateSystemSettings(core: Core, changes: Partial<SystemSettings>): Promise<SystemSettings> {
  const next = { ...(await getSystemSettings(core)), ...changes }
  await core.kv.set(SYSTEM_SETTINGS_KEY, next)
  return next
}

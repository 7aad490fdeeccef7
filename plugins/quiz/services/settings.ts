// Spec 1, Admin: settings. System settings live in the temporary store without expiry, so every process
// on the database reads the same values.
import { LOCAL_EMBEDDING_MODEL } from '../../../src/core/embedder'
import type { Core } from '../../../src/plugin'
import type { SystemSettings } from '../models/settings'

export const SYSTEM_SETTINGS_KEY = 'quiz:system-settings'

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

// Spec 3, Configuration: the clinical service's key-value settings in clinical.app_config. Values are strings;
// secret keys (SECRET_KEYS, and any key named like a password, secret, API key or token) are sealed with
// DATA_ENCRYPTION_KEY at rest and opened on read. Reads go through the core's settings cache (core.settings,
// src/core/settings.ts): hot paths (every generation, every sign-in) cost no query while it is fresh. A write
// invalidates it once committed; other processes see the write within SETTINGS_TTL_MS.
import type { Core } from '../../../src/plugin'

export const APP_CONFIG_TABLE = 'clinical.app_config'
export const REGISTRATION_ENABLED = 'registration_enabled'
/** Keys whose values are secrets: stored sealed, masked in every response. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['oidc.client_secret', 'smtp.pass'])
/** A key whose last word names a credential (`embeddings.api_key`, `tts.token`) is treated as a secret too. */
const SECRET_KEY_NAME = /(^|[._])(pass|password|secret|api_?key|token|private_key)$/

export const isSecretKey = (key: string): boolean => SECRET_KEYS.has(key) || SECRET_KEY_NAME.test(key)

/**
 * The stored values of these keys. Inside a transaction they come from the table itself: a locked
 * read-modify-write must see the latest commit and its own writes, never a snapshot.
 */
async function storedValues(core: Core, keys: readonly string[] | null): Promise<Record<string, string>> {
  if (!core.inTransaction && core.settings.table === APP_CONFIG_TABLE) {
    return keys === null ? core.settings.all() : core.settings.getMany(keys)
  }
  const rows = keys === null
    ? await core.db.sql<{ key: string; value: string }>`select key, value from clinical.app_config`
    : await core.db.sql<{ key: string; value: string }>`
        select key, value from clinical.app_config where key = any(${keys as string[]}::text[])`
  return Object.fromEntries(rows.map((r) => [r.key, r.value]))
}

const opened = (core: Core, values: Record<string, string>) =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key, open(core, key, value)]))

export async function getConfigValues(core: Core, keys: readonly string[]): Promise<Record<string, string>> {
  return opened(core, await storedValues(core, keys))
}

export async function getConfigValue(core: Core, key: string): Promise<string | null> {
  return (await getConfigValues(core, [key]))[key] ?? null
}

/** Every stored pair, secrets opened (callers that show them mask them). */
export async function allConfigValues(core: Core): Promise<Record<string, string>> {
  return opened(core, await storedValues(core, null))
}

/** Writes every pair in one transaction; a null value deletes the key. Readers see it once it has committed. */
export async function setConfigValues(core: Core, values: Record<string, string | null>): Promise<void> {
  await core.db.transaction(async (tx) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === null) {
        await tx.sql`delete from clinical.app_config where key = ${key}`
        continue
      }
      const stored = isSecretKey(key) && value !== '' ? core.crypto.sealText(value) : value
      await tx.sql`
        insert into clinical.app_config (key, value, updated_at) values (${key}, ${stored}, ${new Date(core.now()).toISOString()})
        on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at`
    }
  })
  // Inside a transaction this waits for its commit: invalidating earlier could let a reader cache the old value.
  await core.afterCommit(() => core.settings.invalidate())
}

/** spec 3, OIDC settings: the six keys, all strings. */
export const OIDC_KEYS = ['oidc.enabled', 'oidc.issuer', 'oidc.client_id', 'oidc.client_secret', 'oidc.disable_local_auth', 'oidc.button_label'] as const
export type OidcKey = (typeof OIDC_KEYS)[number]
export const DEFAULT_OIDC_BUTTON_LABEL = 'Sign in with single sign-on'

export interface OidcSettings {
  /** On and complete (issuer and client id set). */
  enabled: boolean
  issuer: string
  clientId: string
  clientSecret: string
  /** Local password sign-in is off for everyone but admins (only while single sign-on is enabled). */
  disableLocalAuth: boolean
  buttonLabel: string
}

export async function oidcSettings(core: Core): Promise<OidcSettings> {
  const v = await getConfigValues(core, OIDC_KEYS)
  const issuer = (v['oidc.issuer'] ?? '').trim().replace(/\/+$/, '')
  const clientId = (v['oidc.client_id'] ?? '').trim()
  const enabled = v['oidc.enabled'] === 'true' && issuer !== '' && clientId !== ''
  return {
    enabled,
    issuer,
    clientId,
    clientSecret: v['oidc.client_secret'] ?? '',
    disableLocalAuth: enabled && v['oidc.disable_local_auth'] === 'true',
    buttonLabel: v['oidc.button_label']?.trim() || DEFAULT_OIDC_BUTTON_LABEL,
  }
}

/** spec 3, Announcement: the banner every signed-in user sees while it is enabled. */
export const ANNOUNCEMENT_KEYS = { enabled: 'announcement.enabled', text: 'announcement.text', type: 'announcement.type' } as const
export const ANNOUNCEMENT_TYPES = ['info', 'warning', 'error', 'success'] as const
export type AnnouncementType = (typeof ANNOUNCEMENT_TYPES)[number]
export interface AnnouncementSettings {
  enabled: boolean
  text: string
  type: AnnouncementType
}

/** The announcement as stored (off, empty and `info` by default; an unknown type reads as `info`). */
export async function readAnnouncement(core: Core): Promise<AnnouncementSettings> {
  const v = await getConfigValues(core, Object.values(ANNOUNCEMENT_KEYS))
  const type = v[ANNOUNCEMENT_KEYS.type] as AnnouncementType | undefined
  return {
    enabled: v[ANNOUNCEMENT_KEYS.enabled] === 'true',
    text: v[ANNOUNCEMENT_KEYS.text] ?? '',
    type: type && ANNOUNCEMENT_TYPES.includes(type) ? type : 'info',
  }
}

/** Registration is on unless an admin turned it off (spec 3, POST /api/admin/settings/registration). */
export async function registrationEnabled(core: Core): Promise<boolean> {
  return (await getConfigValue(core, REGISTRATION_ENABLED)) !== 'false'
}

function open(core: Core, key: string, value: string): string {
  if (!isSecretKey(key) || !core.crypto.isSealedText(value)) return value
  try {
    return core.crypto.openText(value)
  } catch (err) {
    core.log.error({ err, key }, 'a sealed setting could not be opened (was DATA_ENCRYPTION_KEY changed?)')
    return ''
  }
}

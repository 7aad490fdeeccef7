// Spec 3, Configuration: the clinical service's key-value settings in clinical.app_config. Values are strings;
// keys listed in SECRET_KEYS are sealed with DATA_ENCRYPTION_KEY at rest and opened on read.
import type { Core } from '../../../src/plugin'

export const REGISTRATION_ENABLED = 'registration_enabled'
/** Keys whose values are secrets: stored sealed, masked in every response. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['oidc.client_secret', 'smtp.pass'])

export async function getConfigValues(core: Core, keys: readonly string[]): Promise<Record<string, string>> {
  const rows = await core.db.sql<{ key: string; value: string }>`
    select key, value from clinical.app_config where key = any(${keys as string[]}::text[])`
  return Object.fromEntries(rows.map((r) => [r.key, open(core, r.key, r.value)]))
}

export async function getConfigValue(core: Core, key: string): Promise<string | null> {
  return (await getConfigValues(core, [key]))[key] ?? null
}

/** Writes every pair in one transaction; a null value deletes the key. */
export async function setConfigValues(core: Core, values: Record<string, string | null>): Promise<void> {
  await core.db.transaction(async (tx) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === null) {
        await tx.sql`delete from clinical.app_config where key = ${key}`
        continue
      }
      const stored = SECRET_KEYS.has(key) && value !== '' ? core.crypto.sealText(value) : value
      await tx.sql`
        insert into clinical.app_config (key, value, updated_at) values (${key}, ${stored}, ${new Date(core.now()).toISOString()})
        on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at`
    }
  })
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

/** Registration is on unless an admin turned it off (spec 3, POST /api/admin/settings/registration). */
export async function registrationEnabled(core: Core): Promise<boolean> {
  return (await getConfigValue(core, REGISTRATION_ENABLED)) !== 'false'
}

function open(core: Core, key: string, value: string): string {
  if (!SECRET_KEYS.has(key) || !core.crypto.isSealedText(value)) return value
  try {
    return core.crypto.openText(value)
  } catch (err) {
    core.log.error({ err, key }, 'a sealed setting could not be opened (was DATA_ENCRYPTION_KEY changed?)')
    return ''
  }
}

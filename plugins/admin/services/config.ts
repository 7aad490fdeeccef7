// Spec 3, Configuration: the admin's view and edits of the clinical service's key-value settings (clinical.app_config,
// read through the core's settings cache), the announcement, prompt templates, mail settings and the AI model
// catalogue. Plain functions over the core and the clinical audit writer; every change is audited with ids and keys
// only, never a value that could be a secret.
import { HttpError } from '../../../src/core/errors'
import { SMTP_KEYS } from '../../../src/core/mail'
import type { RateRule } from '../../../src/core/ratelimit'
import type { Core } from '../../../src/plugin'
import {
  addCustomModel, allConfigValues, ANNOUNCEMENT_KEYS, readAnnouncement, discoverModels, getConfigValues, isPromptKey, isSecretKey, listModelEntries, listPrompts,
  MODELS_DEFAULT_KEY, OIDC_SECRET_MASK, PROMPT_MAX_CHARS, readOidcConfig, REGISTRATION_ENABLED, resetPrompt, savePrompt,
  setConfigValues, setDefaultModel, setModelEnabled, type AuditWriter,
} from '../../clinical/exports'
import {
  ANNOUNCEMENT_TEXT_MAX, ANNOUNCEMENT_TYPES, CONFIG_KEY_MAX, type AdminModelEntry, type Announcement,
  type CustomModelBody, type MailOutbox, type OutboxMessage, type SmtpBody, type SmtpStatus,
} from '../models/config'
import type { Actor } from '../service'

/** What every secret shows in a read when one is stored (the same mask as the OIDC settings). */
export const SECRET_MASK = OIDC_SECRET_MASK
/** spec 3, PUT /api/admin/config/{key}: the keys an admin may write through it. */
export const CONFIG_KEY_PREFIXES = [
  'announcement.', 'feature.', 'email.', 'prompt.', 'site.', 'smtp.', 'models.', 'tts.', 'stt.', 'embeddings.', 'clinical_assistant.',
] as const
export const CONFIG_KEY_RULE = `The key must begin with one of ${CONFIG_KEY_PREFIXES.join(', ')} or equal ${REGISTRATION_ENABLED}`
/** Letters, digits, `_` and `-` in dot-separated words. */
const KEY_SHAPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/

/** Test emails per admin: each one is a real message to any address. */
export const TEST_EMAIL_RULE: RateRule = {
  name: 'clinical.admin.test-email', limit: 10, windowS: 10 * 60, message: 'Too many test emails: try again in a few minutes',
}

/** Keys every read shows even when nothing is stored, with the value that applies then. */
const SHOWN_DEFAULTS: Readonly<Record<string, string>> = {
  [REGISTRATION_ENABLED]: 'true',
  [ANNOUNCEMENT_KEYS.enabled]: 'false', [ANNOUNCEMENT_KEYS.text]: '', [ANNOUNCEMENT_KEYS.type]: 'info',
  [SMTP_KEYS.host]: '', [SMTP_KEYS.port]: '', [SMTP_KEYS.user]: '', [SMTP_KEYS.pass]: '', [SMTP_KEYS.from]: '', [SMTP_KEYS.secure]: 'false',
}

const invalid = (key: string, message: string) => HttpError.badRequest('invalid_setting', `${key}: ${message}`, { [key]: message })
const audited = (audit: AuditWriter, actor: Actor, action: string, details: Record<string, unknown>) =>
  audit.write({ action, userId: actor.id, ip: actor.ip, details: { adminId: actor.id, ...details } })

export const isAllowedKey = (key: string) => key === REGISTRATION_ENABLED || CONFIG_KEY_PREFIXES.some((p) => key.startsWith(p))

/** spec 3, Announcement: shown to every signed-in user while enabled. */
export async function announcement(core: Core): Promise<Announcement> {
  return { success: true, ...(await readAnnouncement(core)) }
}

/** Every stored pair, the keys above with their defaults, and the six OIDC settings; secrets masked. Sorted by key. */
export async function listConfig(core: Core): Promise<Record<string, string>> {
  const [stored, oidc] = await Promise.all([allConfigValues(core), readOidcConfig(core)])
  const all: Record<string, string> = { ...SHOWN_DEFAULTS, ...stored, ...oidc }
  for (const key of Object.keys(all)) if (isSecretKey(key)) all[key] = all[key] ? SECRET_MASK : ''
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : 1)))
}

const FLAG_KEYS = new Set<string>([REGISTRATION_ENABLED, ANNOUNCEMENT_KEYS.enabled, SMTP_KEYS.secure])
const SMTP_KEY_SET = new Set<string>(Object.values(SMTP_KEYS))
const HOST = /^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$|^\[?[0-9A-Fa-f:.]+\]?$/
const ADDRESS = String.raw`[^\s@<>"]+@[^\s@<>"]+`
const SENDER = new RegExp(String.raw`^(${ADDRESS}|[^<>\r\n"]*<${ADDRESS}>|"[^"\r\n]*"\s*<${ADDRESS}>)$`)

/** Checks a value against its key's rule (free text for keys without one); 400 invalid_setting otherwise. */
function checkValue(key: string, value: string): void {
  if (value.includes('\u0000')) throw invalid(key, 'The value must not contain NUL characters')
  if (FLAG_KEYS.has(key) && value !== 'true' && value !== 'false') throw invalid(key, 'Must be "true" or "false"')
  if (key === ANNOUNCEMENT_KEYS.type && !(ANNOUNCEMENT_TYPES as readonly string[]).includes(value)) {
    throw invalid(key, `Must be one of ${ANNOUNCEMENT_TYPES.join(', ')}`)
  }
  if (key === ANNOUNCEMENT_KEYS.text && value.length > ANNOUNCEMENT_TEXT_MAX) throw invalid(key, `At most ${ANNOUNCEMENT_TEXT_MAX} characters`)
  if (key.startsWith('smtp.') && !SMTP_KEY_SET.has(key)) throw invalid(key, `The SMTP settings are ${[...SMTP_KEY_SET].join(', ')}`)
  if (key === SMTP_KEYS.port && (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535)) throw invalid(key, 'A port number from 1 to 65535')
  if (key === SMTP_KEYS.host && value !== '' && (value.length > 253 || !HOST.test(value))) throw invalid(key, 'A host name or IP address')
  if (key === SMTP_KEYS.from && value !== '' && !SENDER.test(value)) throw invalid(key, 'An address, or Name <address>')
  if (key.startsWith('prompt.') && value.length > PROMPT_MAX_CHARS) throw invalid(key, `At most ${PROMPT_MAX_CHARS} characters`)
}

/**
 * spec 3, PUT /api/admin/config/{key}. The key must be allowed (400 naming the rule); known keys' values are checked;
 * prompts must be ones generation reads; models.* go through the catalogue's own rules; a secret sent as the mask
 * keeps the stored one.
 */
export async function setConfigValue(core: Core, audit: AuditWriter, actor: Actor, key: string, value: string): Promise<void> {
  if (!isAllowedKey(key)) throw HttpError.badRequest('config_key_not_allowed', CONFIG_KEY_RULE)
  if (key.length > CONFIG_KEY_MAX || !KEY_SHAPE.test(key)) {
    throw HttpError.badRequest('config_key_not_allowed', `The key must be at most ${CONFIG_KEY_MAX} characters: letters, digits, _ and - in dot-separated words`)
  }
  checkValue(key, value)
  if (key.startsWith('models.')) {
    if (key !== MODELS_DEFAULT_KEY) {
      throw HttpError.badRequest('config_key_not_allowed', `${key} changes through the model routes (/api/admin/config/models/...), not as raw text`)
    }
    await setDefaultModel(core, value.trim())
  } else if (key.startsWith('prompt.')) {
    if (!isPromptKey(key)) throw HttpError.badRequest('unknown_prompt', `${key} is not a prompt note generation reads (GET /api/admin/config/prompts lists them)`)
    await savePrompt(core, key, value)
  } else if (isSecretKey(key) && value === SECRET_MASK) {
    return // the mask read back from GET: nothing changed
  } else {
    await setConfigValues(core, { [key]: value })
  }
  audited(audit, actor, 'config_changed', { key })
}

/**
 * spec 3, POST /api/admin/config/reset-defaults: removes every stored setting an admin can write through
 * PUT /api/admin/config/{key}, so each falls back to its default; prompt overrides, the announcement, the model
 * catalogue and feature flags included. Kept: what connects the service to the outside or decides who gets in
 * (the SMTP settings, registration_enabled, the OIDC settings) and every secret; those have their own routes.
 * Returns the keys removed.
 */
export async function resetDefaults(core: Core, audit: AuditWriter, actor: Actor): Promise<string[]> {
  const stored = Object.keys(await allConfigValues(core))
  const removed = stored.filter((key) => isAllowedKey(key) && key !== REGISTRATION_ENABLED && !key.startsWith('smtp.') && !isSecretKey(key)).sort()
  if (removed.length > 0) await setConfigValues(core, Object.fromEntries(removed.map((key) => [key, null])))
  audited(audit, actor, 'config_reset_defaults', { count: removed.length, keys: removed })
  return removed
}

/** spec 3, GET /api/admin/config/prompts: key -> the template generation uses now. */
export async function promptValues(core: Core): Promise<Record<string, string>> {
  return Object.fromEntries((await listPrompts(core)).map((p) => [p.key, p.value]))
}

export async function resetPromptToDefault(core: Core, audit: AuditWriter, actor: Actor, key: string): Promise<void> {
  if (!isPromptKey(key)) throw HttpError.notFound('unknown_prompt', `${key} is not a prompt note generation reads`)
  await resetPrompt(core, key)
  audited(audit, actor, 'prompt_reset', { key })
}

// ---- mail ------------------------------------------------------------------------------------------------

export async function smtpStatus(core: Core): Promise<SmtpStatus> {
  const s = await core.mail.status()
  return {
    configured: s.configured, host: s.host, port: s.port, user: s.user, from: s.from, source: s.source,
    note: s.storedIgnored ? 'SMTP settings are stored here, but the environment\'s mail settings are used: they take precedence' : '',
  }
}

/**
 * spec 3, PUT /api/admin/config/smtp. The password is sealed at rest; "" (or the mask) keeps the stored one, and
 * an empty user removes it (no sign-in). An empty host removes every stored SMTP setting. Mail uses the new
 * settings from the next send on, unless the environment configures mail (it wins).
 */
export async function saveSmtp(core: Core, audit: AuditWriter, actor: Actor, input: SmtpBody): Promise<void> {
  const host = input.host.trim()
  let values: Record<string, string | null>
  if (host === '') {
    values = Object.fromEntries(Object.values(SMTP_KEYS).map((k) => [k, null]))
  } else {
    const user = input.user.trim()
    const from = input.from.trim()
    checkValue(SMTP_KEYS.host, host)
    checkValue(SMTP_KEYS.from, from)
    if (/[\r\n\u0000]/.test(user) || input.pass.includes('\u0000')) throw invalid(SMTP_KEYS.user, 'Must not contain line breaks or NUL characters')
    values = { [SMTP_KEYS.host]: host, [SMTP_KEYS.port]: String(input.port), [SMTP_KEYS.user]: user, [SMTP_KEYS.from]: from, [SMTP_KEYS.secure]: String(input.secure) }
    if (user === '') values[SMTP_KEYS.pass] = null
    else if (input.pass !== '' && input.pass !== SECRET_MASK) values[SMTP_KEYS.pass] = input.pass
  }
  await setConfigValues(core, values)
  audited(audit, actor, 'smtp_settings_changed', { keys: Object.keys(values).sort() })
}

/** spec 3, POST /api/admin/config/test-email: a real message through the transport mail uses now. */
export async function sendTestEmail(core: Core, audit: AuditWriter, actor: Actor, to: string): Promise<{ success: boolean; message: string }> {
  await core.rateLimit.consume(TEST_EMAIL_RULE, String(actor.id))
  const result = await core.mail.sendTest({
    to,
    subject: 'Test email',
    text: 'This is a test email from the clinical documentation assistant: mail sending works.',
  })
  audited(audit, actor, 'config_test_email', { delivered: result.delivered, source: result.source })
  return { success: result.delivered, message: result.message }
}

/**
 * The mail outbox: pending and failed messages with the counts per status. Mail written to the server log (no
 * transport configured) never waits there, so the list stays empty then.
 */
export async function mailOutbox(core: Core): Promise<MailOutbox> {
  const list = (await core.mail.outbox?.list()) ?? { counts: { pending: 0, failed: 0, sent: 0 }, messages: [] }
  return { success: true, ...list }
}

/** Tries a pending or failed message again at once; audited with its id and outcome, never its address. */
export async function retryMail(core: Core, audit: AuditWriter, actor: Actor, id: number): Promise<OutboxMessage> {
  if (!core.mail.outbox) throw HttpError.notFound('mail_not_found', 'No such message in the outbox')
  const message = await core.mail.outbox.retry(id)
  audited(audit, actor, 'mail_outbox_retry', { mailId: id, status: message.status, attempts: message.attempts })
  return message
}

// ---- AI models -------------------------------------------------------------------------------------------

export async function listModels(core: Core): Promise<AdminModelEntry[]> {
  return (await listModelEntries(core)).map(({ id, name, enabled, isDefault, category, custom }) => ({ id, name, enabled, isDefault, category, custom }))
}

export async function toggleModel(core: Core, audit: AuditWriter, actor: Actor, modelId: string, enabled: boolean): Promise<void> {
  await setModelEnabled(core, modelId, enabled)
  audited(audit, actor, 'model_enabled_changed', { modelId, enabled })
}

export async function chooseDefaultModel(core: Core, audit: AuditWriter, actor: Actor, modelId: string): Promise<void> {
  await setDefaultModel(core, modelId)
  audited(audit, actor, 'model_default_changed', { modelId })
}

export async function addModel(core: Core, audit: AuditWriter, actor: Actor, input: CustomModelBody): Promise<void> {
  await addCustomModel(core, input)
  audited(audit, actor, 'model_added', { modelId: input.id.trim() })
}

/** spec 3, GET /api/admin/config/models/discover: 503 without a gateway, 502 when it cannot be reached. */
export async function discover(core: Core): Promise<{ success: true; models: Array<{ id: string; name: string }> }> {
  return { success: true, models: await discoverModels(core) }
}

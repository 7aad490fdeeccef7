// TypeBox models of spec 3's Configuration: the key-value pairs, the announcement, prompts, mail settings and the
// AI model entries; the OpenAPI docs come from them. The limits are named here and enforced in services/config.ts.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'
import { MODEL_CATEGORY_MAX, MODEL_ID_MAX, MODEL_NAME_MAX, PROMPT_MAX_CHARS } from '../../clinical/exports'

export { ANNOUNCEMENT_TYPES, type AnnouncementType } from '../../clinical/exports'

/** The longest configuration key, in characters. */
export const CONFIG_KEY_MAX = 100
/** The longest value PUT /api/admin/config/{key} takes: a prompt template's limit, the largest of any key. */
export const CONFIG_VALUE_MAX = PROMPT_MAX_CHARS
export const ANNOUNCEMENT_TEXT_MAX = 2_000
/** A configuration write's body: the largest value, every character escaped in JSON, fits well under it. */
export const CONFIG_BODY_LIMIT = 256 * 1024
export const SMTP_HOST_MAX = 253
export const SMTP_USER_MAX = 254
export const SMTP_PASS_MAX = 1_000
export const SMTP_FROM_MAX = 320
export const TEST_EMAIL_TO_MAX = 254

export const Announcement = t.Object({
  success: t.Literal(true),
  enabled: t.Boolean(),
  text: t.String(),
  type: t.Union([t.Literal('info'), t.Literal('warning'), t.Literal('error'), t.Literal('success')]),
})
export type Announcement = typeof Announcement.static

export const ConfigPairs = t.Record(t.String(), t.String(), {
  description: 'Every configuration key with its value as a string; secrets show a mask when set and "" when not',
})
export const ConfigKeyParams = t.Object({
  key: t.String({ description: 'The configuration key, e.g. `announcement.text` or `registration_enabled`' }),
})
export const ConfigValueBody = t.Object({
  value: t.String({ maxLength: CONFIG_VALUE_MAX, description: `The new value as a string, at most ${CONFIG_VALUE_MAX} characters` }),
})

export const PromptPairs = t.Record(t.String(), t.String(), {
  description: 'Every prompt key note generation reads, with the template it uses now (the override, else the default)',
})
export const PromptKeyParams = t.Object({ key: t.String({ description: 'A prompt key, e.g. `prompt.soap`' }) })

export const TestEmailBody = t.Object({
  to: t.String({ format: 'email', maxLength: TEST_EMAIL_TO_MAX, description: 'Where the test email goes' }),
})
export const TestEmailResult = t.Object({
  success: t.Boolean({ description: 'true when the transport accepted the message' }),
  message: t.String({ description: 'What happened; on failure the transport\'s own error message, without any credential' }),
})

export const MailSource = t.Union([t.Literal('env'), t.Literal('database'), t.Literal('none')])
export const SmtpStatus = t.Object({
  configured: t.Boolean(),
  host: t.String(),
  port: t.String(),
  user: t.String(),
  from: t.String(),
  source: MailSource,
  note: t.String({ description: 'Says when stored settings exist but the environment\'s win; "" otherwise' }),
})
export type SmtpStatus = typeof SmtpStatus.static

export const SmtpBody = t.Object({
  host: t.String({ maxLength: SMTP_HOST_MAX, description: 'Host name or IP address; "" removes the stored SMTP settings' }),
  port: t.Integer({ minimum: 1, maximum: 65535 }),
  user: t.String({ maxLength: SMTP_USER_MAX, description: '"" sends without signing in (and removes a stored password)' }),
  pass: t.String({ maxLength: SMTP_PASS_MAX, description: 'Stored sealed; "" (or the mask) keeps the stored password' }),
  from: t.String({ maxLength: SMTP_FROM_MAX, description: '`address` or `Name <address>`; "" uses the server\'s default sender' }),
  secure: t.Boolean({ description: 'true: TLS from the start (port 465); false: STARTTLS when the server offers it' }),
})
export type SmtpBody = typeof SmtpBody.static

const Instant = (description: string) => t.String({ format: 'date-time', description })
export const OutboxMessage = t.Object({
  id: Int(),
  to: t.String({ description: 'The recipient\'s full address: admins see every account\'s address, and a lost mail is traced by it' }),
  subject: t.String(),
  status: t.Union([t.Literal('pending'), t.Literal('sent'), t.Literal('failed')], {
    description: 'pending: waiting for its next attempt; failed: given up (a retry sends it again); sent: delivered',
  }),
  attempts: Int({ description: 'Attempts made so far' }),
  lastError: t.Nullable(t.String({ description: 'The mail server\'s error of the last attempt, without credentials or link tokens' })),
  nextAttemptAt: t.Nullable(Instant('When a pending message is tried next; null otherwise')),
  createdAt: Instant('When the message was written'),
  lastAttemptAt: t.Nullable(Instant('When it was last tried')),
  giveUpAt: Instant('When a pending message still unsent is marked failed'),
  sentAt: t.Nullable(Instant('When the mail server accepted it')),
})
export type OutboxMessage = typeof OutboxMessage.static
export const MailOutbox = t.Object({
  success: t.Literal(true),
  counts: t.Object({ pending: Int(), failed: Int(), sent: Int() }, {
    description: 'Messages per status; sent ones are counted until the retention sweep deletes them',
  }),
  messages: t.Array(OutboxMessage, { description: 'Pending and failed messages, the oldest first; never a message\'s body' }),
})
export type MailOutbox = typeof MailOutbox.static
export const OutboxIdParams = t.Object({ id: RowId('The message id (GET /api/admin/config/smtp/outbox)') })
export const OutboxRetryResult = t.Object({ success: t.Literal(true), message: OutboxMessage })

/** spec 3, Administration objects: AI model entry, plus whether an admin added it. */
export const AdminModelEntry = t.Object({
  id: t.String(),
  name: t.String(),
  enabled: t.Boolean(),
  isDefault: t.Boolean(),
  category: t.String(),
  custom: t.Boolean({ description: 'Added by an admin (not built in)' }),
})
export type AdminModelEntry = typeof AdminModelEntry.static
export const ModelEntryList = t.Array(AdminModelEntry)

const ModelId = t.String({ minLength: 1, maxLength: MODEL_ID_MAX, description: 'A model id of the catalogue (GET /api/admin/config/models)' })
export const ModelToggleBody = t.Object({ modelId: ModelId, enabled: t.Boolean() })
export const ModelDefaultBody = t.Object({ modelId: ModelId })
export const CustomModelBody = t.Object({
  id: t.String({ maxLength: MODEL_ID_MAX, description: 'The gateway\'s model id' }),
  name: t.String({ maxLength: MODEL_NAME_MAX, description: 'The name clinicians see' }),
  category: t.String({ maxLength: MODEL_CATEGORY_MAX, description: 'e.g. general, fast, reasoning (stored lower-case)' }),
})
export type CustomModelBody = typeof CustomModelBody.static
export const DiscoveredModels = t.Object({
  success: t.Literal(true),
  models: t.Array(t.Object({ id: t.String(), name: t.String() })),
})

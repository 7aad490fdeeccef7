// Spec 3, Configuration: the key-value settings, the announcement (any signed-in user reads it), prompt templates,
// mail settings and the AI model catalogue. Routing, guards, validation and response shaping; the rules live in
// services/config.ts.
import { Elysia } from 'elysia'
import {
  MAIL_MAX_AGE_MS, MAIL_OUTBOX_LIST_MAX, MAIL_RETRY_BASE_DELAY_MS, MAIL_RETRY_MAX_DELAY_MS, MAIL_SENT_RETENTION_MS,
} from '../../../src/core/outbox'
import { SETTINGS_TTL_MS } from '../../../src/core/settings'
import { bodyLimits } from '../../../src/envelope'
import { MODEL_ID_PATTERN } from '../../clinical/exports'
import type { AdminState } from '../index'
import { Success } from '../model'
import {
  Announcement, ANNOUNCEMENT_TEXT_MAX, ANNOUNCEMENT_TYPES, CONFIG_BODY_LIMIT, CONFIG_KEY_MAX, CONFIG_VALUE_MAX, ConfigKeyParams, ConfigPairs,
  ConfigValueBody, CustomModelBody, DiscoveredModels, MailOutbox, ModelDefaultBody, ModelEntryList, ModelToggleBody, OutboxIdParams,
  OutboxRetryResult, PromptKeyParams, PromptPairs, SmtpBody, SmtpStatus, TestEmailBody, TestEmailResult,
} from '../models/config'
import type { Actor } from '../service'
import * as config from '../services/config'

const tags = ['Admin: configuration']
const ADMIN = '401 without a session; 403 for non-admins.'
const FRESHNESS = `Every process of the service uses a change at once in the process that made it and within ${SETTINGS_TTL_MS / 1000} s in the others.`
const AUDITED = 'Audited with the admin\'s id and the keys changed, never a value.'

export const configRoutes = ({ core, clinical: { audit, auth } }: AdminState) => {
  const actor = (user: { id: number }, request: Request): Actor => ({ id: user.id, ip: core.clientAddress(request) })
  const done = { success: true as const }
  return new Elysia({ prefix: '/api/admin/config' })
    .use(auth)
    .use(bodyLimits)
    .get('/announcement', () => config.announcement(core), {
      auth: 'user', response: Announcement,
      detail: {
        tags, summary: 'The announcement',
        description: `Any signed-in user: \`enabled\` (false until an admin turns it on), \`text\` and \`type\` (${ANNOUNCEMENT_TYPES.join(', ')}; `
          + 'info when unset). 401 without a session.',
      },
    })
    .get('', () => config.listConfig(core), {
      auth: 'admin', response: ConfigPairs,
      detail: {
        tags, summary: 'Every configuration key and value',
        description: [
          'An object of every stored key with its value, plus registration_enabled, the announcement.*, smtp.* and six oidc.* settings',
          `with the value that applies when none is stored. Secrets (smtp.pass, oidc.client_secret, and any key named like a password,`,
          `secret, API key or token) read "${config.SECRET_MASK}" when set and "" when not; never the secret. Prompt templates with their`,
          `defaults are at GET /api/admin/config/prompts. ${ADMIN}`,
        ].join(' '),
      },
    })
    .put('/smtp', async ({ body, user, request }) => {
      await config.saveSmtp(core, audit, actor(user, request), body)
      return done
    }, {
      auth: 'admin', body: SmtpBody, response: Success,
      detail: {
        tags, summary: 'Store the SMTP settings',
        description: [
          'The mailer uses them from the next send on, unless SMTP_* (or RESEND_API_KEY) is set in the environment: the environment wins',
          '(GET /api/admin/config/smtp/status says which applies). The password is stored encrypted; "" or the mask keeps the stored one,',
          'and an empty `user` removes it (mail is sent without signing in). An empty `host` removes every stored SMTP setting. `host` is',
          'a host name or IP address, `port` 1 to 65535, `from` an address or `Name <address>` ("" uses the server\'s default sender).',
          `400 invalid_setting naming the field otherwise. ${AUDITED} ${ADMIN}`,
        ].join(' '),
      },
    })
    .get('/smtp/status', () => config.smtpStatus(core), {
      auth: 'admin', response: SmtpStatus,
      detail: {
        tags, summary: 'Which mail settings apply',
        description: [
          '`source`: env (SMTP_* or RESEND_API_KEY in the environment), database (the settings stored with PUT /api/admin/config/smtp),',
          'or none (mail is written to the server log). The environment wins over stored settings; `note` says so when both exist.',
          `host and port are strings ("" when none); never the password. ${ADMIN}`,
        ].join(' '),
      },
    })
    .get('/smtp/outbox', () => config.mailOutbox(core), {
      auth: 'admin', response: MailOutbox,
      detail: {
        tags, summary: 'Mail waiting to be sent, and mail given up',
        description: [
          'Every email (verification, password reset, digests, contact notices) is kept in an outbox until the mail server accepts it:',
          `the first attempt is at once, then again after about ${MAIL_RETRY_BASE_DELAY_MS / 1000} s, doubling up to`,
          `${MAIL_RETRY_MAX_DELAY_MS / 60_000} min, until ${MAIL_MAX_AGE_MS / 3_600_000} h have passed: then it is failed. Lists the pending and`,
          `failed messages (the oldest ${MAIL_OUTBOX_LIST_MAX}) with the full recipient address, the subject, the attempts, the last error`,
          '(credentials and link tokens removed) and the next attempt; never a body (it holds the links, sealed at rest and deleted once sent).',
          `Sent messages are counted for ${MAIL_SENT_RETENTION_MS / 86_400_000} days. Without mail configured messages go to the server log`,
          `and the outbox stays empty. The test email does not go through it. ${ADMIN}`,
        ].join(' '),
      },
    })
    .post('/smtp/outbox/:id/retry', async ({ params, user, request }) => ({
      success: true as const, message: await config.retryMail(core, audit, actor(user, request), params.id),
    }), {
      auth: 'admin', params: OutboxIdParams, response: OutboxRetryResult,
      detail: {
        tags, summary: 'Try a message of the outbox again',
        description: [
          'Sends a pending or failed message at once through the mail settings that apply now and answers it as it stands after that',
          `attempt: sent, or still pending with the new error (a failed one gets a fresh ${MAIL_MAX_AGE_MS / 3_600_000} h of retries).`,
          '404 mail_not_found; 409 mail_already_sent, or mail_being_sent while another attempt holds it. Audited with the admin\'s id,',
          `the message id and the outcome, never the address. ${ADMIN}`,
        ].join(' '),
      },
    })
    .post('/test-email', async ({ body, user, request }) => config.sendTestEmail(core, audit, actor(user, request), body.to), {
      auth: 'admin', body: TestEmailBody, response: TestEmailResult,
      detail: {
        tags, summary: 'Send a test email',
        description: [
          'Sends one message to `to` through the transport mail uses now and answers 200 either way: `success` true when the transport',
          'accepted it; false with the transport\'s own error message (credentials removed) when it refused or could not be reached,',
          `or when no mail is configured. At most ${config.TEST_EMAIL_RULE.limit} per admin per ${config.TEST_EMAIL_RULE.windowS / 60} minutes`,
          `(429 with Retry-After). ${ADMIN}`,
        ].join(' '),
      },
    })
    .get('/prompts', () => config.promptValues(core), {
      auth: 'admin', response: PromptPairs,
      detail: {
        tags, summary: 'The prompt templates of note generation',
        description: 'Every `prompt.*` key generation reads, with the template it uses now: the admin\'s override, else the default. '
          + `Change one with PUT /api/admin/config/{key} (a blank value removes the override). ${FRESHNESS} ${ADMIN}`,
      },
    })
    .post('/prompts/:key/reset', async ({ params, user, request }) => {
      await config.resetPromptToDefault(core, audit, actor(user, request), params.key)
      return done
    }, {
      auth: 'admin', params: PromptKeyParams, response: Success,
      detail: {
        tags, summary: 'Restore a prompt\'s default',
        description: `Removes the override; the next generation uses the default. 404 unknown_prompt for a key generation does not read. ${AUDITED} ${ADMIN}`,
      },
    })
    .post('/reset-defaults', async ({ user, request }) => {
      await config.resetDefaults(core, audit, actor(user, request))
      return done
    }, {
      auth: 'admin', response: Success,
      detail: {
        tags, summary: 'Reset the settings to their defaults',
        description: [
          'Removes every stored setting PUT /api/admin/config/{key} can write: prompt overrides, the announcement, the model catalogue',
          '(custom entries, switches and the default), feature.*, site.*, email.*, tts.*, stt.*, embeddings.*, clinical_assistant.*.',
          'Kept, because they connect the service to the outside or decide who gets in and have their own routes: the SMTP settings,',
          `registration_enabled, the OIDC settings and every secret. ${AUDITED} ${ADMIN}`,
        ].join(' '),
      },
    })
    .get('/models', () => config.listModels(core), {
      auth: 'admin', response: ModelEntryList,
      detail: {
        tags, summary: 'The AI model entries',
        description: 'Every entry, on or off: AI_DEFAULT_MODEL and a few well-known gateway models (off until switched on), then the '
          + `admins' own. Exactly one entry that is on is the default. Generation accepts only entries that are on (400 model_disabled). ${ADMIN}`,
      },
    })
    .put('/models/toggle', async ({ body, user, request }) => {
      await config.toggleModel(core, audit, actor(user, request), body.modelId, body.enabled)
      return done
    }, {
      auth: 'admin', body: ModelToggleBody, response: Success,
      detail: {
        tags, summary: 'Switch a model on or off',
        description: `404 unknown_model when it is not an entry; 400 default_model when switching off the default (choose another first). ${FRESHNESS} ${AUDITED} ${ADMIN}`,
      },
    })
    .put('/models/default', async ({ body, user, request }) => {
      await config.chooseDefaultModel(core, audit, actor(user, request), body.modelId)
      return done
    }, {
      auth: 'admin', body: ModelDefaultBody, response: Success,
      detail: {
        tags, summary: 'Choose the default model',
        description: `The entry becomes the only default and is switched on if it was off. 404 unknown_model when it is not an entry. ${AUDITED} ${ADMIN}`,
      },
    })
    .post('/models/custom', async ({ body, user, request }) => {
      await config.addModel(core, audit, actor(user, request), body)
      return done
    }, {
      auth: 'admin', body: CustomModelBody, response: Success,
      detail: {
        tags, summary: 'Add a model of the admin\'s own',
        description: `Added switched on. \`id\` matches ${MODEL_ID_PATTERN}; name and category must not be blank (422 invalid_model naming `
          + `the field). 409 model_exists when the id is already an entry. ${AUDITED} ${ADMIN}`,
      },
    })
    .get('/models/discover', () => config.discover(core), {
      auth: 'admin', response: DiscoveredModels,
      detail: {
        tags, summary: 'The models the AI gateway offers',
        description: `The ids GET {AI_BASE_URL}/models lists, sorted. 503 ai_not_configured without a gateway; 502 when it cannot be reached or answers with an error. ${ADMIN}`,
      },
    })
    .put('/:key', async ({ params, body, user, request }) => {
      await config.setConfigValue(core, audit, actor(user, request), params.key, body.value)
      return done
    }, {
      auth: 'admin', params: ConfigKeyParams, body: ConfigValueBody, response: Success, bodyLimit: CONFIG_BODY_LIMIT,
      detail: {
        tags, summary: 'Change one setting',
        description: [
          `${config.CONFIG_KEY_RULE}: any other key is 400 config_key_not_allowed, as is a key over ${CONFIG_KEY_MAX} characters or with`,
          `characters other than letters, digits, _ and - in dot-separated words. \`value\`: a string of at most ${CONFIG_VALUE_MAX} characters.`,
          'Known keys are checked (400 invalid_setting naming the rule): registration_enabled, announcement.enabled and smtp.secure are',
          `"true" or "false"; announcement.type one of ${ANNOUNCEMENT_TYPES.join(', ')}; announcement.text at most ${ANNOUNCEMENT_TEXT_MAX}`,
          'characters; smtp.* only the six SMTP settings, with smtp.port 1 to 65535. prompt.* must be a prompt generation reads (400',
          'unknown_prompt); a blank template removes the override. models.default goes through the catalogue (404 unknown_model); other',
          'models.* keys change only through the model routes (400). Secrets are stored encrypted; sending the mask keeps the stored one.',
          `${FRESHNESS} ${AUDITED} ${ADMIN}`,
        ].join(' '),
      },
    })
}

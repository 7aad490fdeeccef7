// What the clinical plugin offers the rest of the clinical family (learning, directory, admin) on purpose: the
// plugin itself (its state, with `use(clinicalPlugin)` in a setup: the guard and the audit writer), the roles,
// the service's settings, the user accounts and ending a user's sessions, the AI model catalogue and usage log,
// and a user's connected WebDAV server. Other plugins import from here, never from the clinical plugin's internals.
export { default as clinicalPlugin } from './index'
export type { ClinicalState } from './state'
export { hasRole, type ClinicalUser } from './guard'
export { Role, ROLES, Success } from './models/accounts'
export type { AuditAction, AuditWriter } from './audit'
export { getConfigValue, getConfigValues, registrationEnabled, REGISTRATION_ENABLED, setConfigValues } from './services/app-config'
export { endUserSessions } from './services/sessions'
export { listModelEntries, modelListing, resolveModel } from './services/models'
export { recordUsage } from './services/usage'
export { storedConnection as webdavConnection } from './services/webdav-export'
export {
  findUserAccount, listUserAccounts, markEmailVerified, setUserDisabled, type ClinicalUserRow, type UserAccountDetail,
} from './services/users'
export {
  allConfigValues, ANNOUNCEMENT_KEYS, ANNOUNCEMENT_TYPES, isSecretKey, OIDC_KEYS, readAnnouncement, type AnnouncementSettings, type AnnouncementType,
} from './services/app-config'
export { OIDC_SECRET_MASK, readOidcConfig } from './services/oidc'
export { isPromptKey, listPrompts, PROMPT_MAX_CHARS, promptKeys, resetPrompt, savePrompt, type PromptKey } from './services/prompts'
export {
  addCustomModel, discoverModels, MODEL_CATEGORY_MAX, MODEL_ID_MAX, MODEL_ID_PATTERN, MODEL_NAME_MAX, MODELS_CATALOG_KEY, MODELS_DEFAULT_KEY,
  setDefaultModel, setModelEnabled, type ModelEntry,
} from './services/models'
export { USAGE_SUMMARY_DAYS, usageSummary, type UsageSummary } from './services/usage'
export { recordSignIn, SIGN_IN_OUTCOMES, type ClientKind, type SignInOutcome } from './services/sessions'
export { countMilestones, listMilestones, seedMilestones, type Milestone } from './services/milestones'
export { MILESTONE_AGES_MONTHS, MILESTONE_DOMAINS, type MilestoneDomain } from './defaults/milestones'
export { listSessions } from './services/sessions'
export type { SessionListing } from './models/accounts'
export { OIDC_BUTTON_LABEL_MAX, OIDC_CLIENT_ID_MAX, OIDC_CLIENT_SECRET_MAX, OIDC_ISSUER_MAX, saveOidcConfig, type OidcConfigInput } from './services/oidc'

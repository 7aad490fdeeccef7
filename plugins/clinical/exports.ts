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

// What the clinical plugin offers the rest of the clinical family (learning, directory, admin) on purpose:
// the guard and its user type, the roles, the audit log, the service's settings, and ending a user's sessions.
// Other plugins import from here, never from the clinical plugin's internals.
export { clinicalAuth, hasRole, type ClinicalUser } from './guard'
export { Role, ROLES, Success } from './models/accounts'
export { auditLog, type AuditAction } from './audit'
export { getConfigValue, getConfigValues, registrationEnabled, REGISTRATION_ENABLED, setConfigValues } from './services/app-config'
export { endUserSessions, USER_COLUMNS, type ClinicalUserRow } from './services/sessions'

// What the clinical plugin builds once per boot and hands its routes and schedules (and, through exports.ts,
// the rest of the clinical family): the Core, the one audit writer, and the `clinical.auth` guard.
import type { Core } from '../../src/plugin'
import { createAuditWriter, type AuditWriter } from './audit'
import { apiCallCounter, clinicalAuth, type ClinicalAuth } from './guard'

export interface ClinicalState {
  core: Core
  /** Spec 2, Events: the batched audit writer every clinical-family plugin writes through; shutdown drains it. */
  audit: AuditWriter
  /** The guard plugin: `.use(auth)` on a controller, then `auth: 'user' | 'moderator' | 'admin'` on a route. */
  auth: ClinicalAuth
}

export function setupClinical(core: Core): ClinicalState {
  const audit = createAuditWriter(core)
  return { core, audit, auth: clinicalAuth(core, audit, apiCallCounter(core)) }
}

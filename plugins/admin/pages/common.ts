// What the admin console's page controllers share: the admin check every route makes once the page kit has found
// the session (anyone else gets the 403 page), the actor of an audited change, and the Post/Redirect/Get notices.
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'
import type { Errors } from '../../../views/layout'
import { formFailure } from '../../../views/page'
import { hasRole, type ClinicalUser } from '../../clinical/exports'
import type { Actor } from '../service'

/** spec 3: user administration and configuration are for admins only. */
export function requireAdmin(user: ClinicalUser): void {
  if (!hasRole(user, 'admin')) throw HttpError.forbidden('insufficient_role', 'The admin console is for admins only.')
}

export const actorOf = (core: Core, user: { id: number }, request: Request): Actor => ({ id: user.id, ip: core.clientAddress(request) })

export { noticeOf } from '../../../views/page'

/** A refused form as it is shown again: the messages by the fields (renamed to the form's own names) and one line. */
export interface Refusal {
  errors?: Errors
  message: string
  headers: Record<string, string>
}

/**
 * A service's 4xx as the form shows it. `names` maps the service's field keys (`smtp.host`) to the form's (`host`);
 * a refusal naming no field of the form keeps only its one line. 5xx failures propagate to the error page.
 */
export function refusalOf(err: unknown, names: Readonly<Record<string, string>> = {}): Refusal {
  const { errors, flash, headers } = formFailure(err)
  const mapped = errors ? Object.fromEntries(Object.entries(errors).map(([k, v]) => [names[k] ?? k, v])) : undefined
  return { errors: mapped && Object.keys(mapped).length > 0 ? mapped : undefined, message: flash.text, headers }
}

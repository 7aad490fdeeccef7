// The clinical family's one guard (exported on purpose for the learning, directory and admin plugins):
// `auth: 'user' | 'moderator' | 'admin'` on a route runs spec 2's per-request checks (src: services/sessions.ts)
// and refuses a lower role with 403. Roles are ordered admin > moderator > user.
import { Elysia } from 'elysia'
import { HttpError } from '../../src/core/errors'
import type { Core } from '../../src/plugin'
import type { Role } from './models/accounts'
import { authenticate, type Authenticated, type ClinicalUser } from './services/sessions'

export type { ClinicalUser } from './services/sessions'

const RANK: Record<Role, number> = { user: 1, moderator: 2, admin: 3 }
export const hasRole = (user: { role: Role }, min: Role) => RANK[user.role] >= RANK[min]

/** Counts each user's authenticated API calls in memory and adds them to clinical.users.api_calls in batches. */
export const API_CALLS_FLUSH_MS = 5_000
const counters = new WeakMap<Core, (userId: number) => void>()
function apiCallCounter(core: Core): (userId: number) => void {
  let count = counters.get(core)
  if (count) return count
  let pending = new Map<number, number>()
  let timer: ReturnType<typeof setTimeout> | null = null
  const flush = async () => {
    timer = null
    const batch = pending
    pending = new Map()
    for (const [userId, n] of batch) {
      await core.db.sql`update clinical.users set api_calls = api_calls + ${n} where id = ${userId}`
        .catch((err) => core.log.warn({ err }, 'api call count not stored'))
    }
  }
  count = (userId) => {
    pending.set(userId, (pending.get(userId) ?? 0) + 1)
    if (!timer) {
      timer = setTimeout(() => void flush(), API_CALLS_FLUSH_MS)
      timer.unref?.()
    }
  }
  core.onShutdown(async () => {
    if (timer) clearTimeout(timer)
    await flush()
  })
  counters.set(core, count)
  return count
}

/** Named per Core (tests boot several apps), so every controller of one app shares one instance. */
export const clinicalAuth = (core: Core) => {
  const countCall = apiCallCounter(core)
  return new Elysia({ name: 'clinical.auth', seed: core.id }).macro({
    auth: (min: Role) => ({
      detail: { security: [{ bearer: [] }, { cookie: [] }] },
      async resolve({ request, set }): Promise<{ user: ClinicalUser; auth: Authenticated }> {
        const auth = await authenticate(core, request)
        if (!hasRole(auth.user, min)) throw HttpError.forbidden('insufficient_role', 'Not enough permissions')
        if (auth.setCookie) set.headers['set-cookie'] = auth.setCookie
        countCall(auth.user.id)
        return { user: auth.user, auth }
      },
    }),
  })
}

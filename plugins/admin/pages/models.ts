// The console's AI model entries (spec 3, Configuration: models), for admins:
//   /admin/models             the entries: switch on or off, make default, add an entry of one's own (POST)
//   /admin/models/discover    the same page with the gateway's models, each not listed yet with "Add"
//   /admin/models/toggle, /admin/models/default    POST the change of one entry
// Every change goes through the API's service function, audited alike. With htmx a change answers with the page's
// content (notice or refusal in it); without, Post/Redirect/Get, or the page again (422) with the refusal.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { bodyLimits } from '../../../src/envelope'
import { isFragment, type Flash } from '../../../views/layout'
import { FormBody, formFields, html, redirect } from '../../../views/page'
import { clinicalPageKit } from '../../clinical/pages/common'
import type { ClinicalUser } from '../../clinical/exports'
import type { NavUser } from '../../clinical/views/common'
import type { AdminState } from '../index'
import * as config from '../services/config'
import { DiscoveredList, ModelsContent, ModelsPage, modelsUrl, type DiscoveredView, type ModelsView } from '../views/models'
import { actorOf, noticeOf, refusalOf, requireAdmin } from './common'

const NOTICES = {
  added: 'The model is added and switched on.',
  on: 'The model is switched on: clinicians can choose it.',
  off: 'The model is switched off: clinicians no longer see it.',
  default: 'The default model is changed.',
} as const
const NoticeQuery = t.Object({ notice: t.Optional(t.String()) })

export const modelPages = (state: AdminState) => {
  const { core, clinical: { audit } } = state
  const base = core.config.clinicalBasePath
  const home = modelsUrl(base)

  /** The gateway's list, or why there is none in words: a gateway that fails is news for the page, not its failure. */
  const discover = async (): Promise<DiscoveredView> => {
    try {
      return { models: (await config.discover(core)).models }
    } catch (err) {
      if (!(err instanceof HttpError) || err.status < 500) throw err
      if (err.status === 503) return { problem: 'No AI gateway is configured on this server (AI_BASE_URL), so there is no list to ask for.' }
      core.log.warn({ err: err.cause ?? err, code: err.code }, 'admin console: model discovery failed')
      return { problem: 'The AI gateway could not be reached, or it answered with an error. Try again later, or check AI_BASE_URL.' }
    }
  }
  type Parts = Omit<ModelsView, 'base' | 'models'>
  const content = async (parts: Parts = {}) => ({ base, models: await config.listModels(core), ...parts })
  /** The answer to a change: the content (htmx), or the page; a refusal as 422. */
  const answer = async (request: Request, user: NavUser, parts: Parts, status = 200, headers: Record<string, string> = {}) => {
    if (isFragment(request)) return html(ModelsContent(await content(parts)), { status, headers })
    const flash: Flash = status === 422 ? { kind: 'error', text: parts.add ? 'Not added: see the messages by the fields.' : 'Not changed: see why below.' } : null
    return html(ModelsPage({ ...(await content(parts)), user, flash }), { status, headers })
  }
  const back = (user: ClinicalUser) => {
    requireAdmin(user)
    return redirect(home)
  }

  return new Elysia()
    .use(clinicalPageKit(state.clinical))
    .use(bodyLimits)
    .get('/admin/models', async ({ request, user, query }) => {
      requireAdmin(user)
      if (isFragment(request)) return html(ModelsContent(await content()))
      return html(ModelsPage({ ...(await content()), user, flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: NoticeQuery })
    .get('/admin/models/discover', async ({ request, user, query }) => {
      requireAdmin(user)
      const [listed, discovered] = await Promise.all([config.listModels(core), discover()])
      if (isFragment(request)) return html(DiscoveredList({ base, listed, discovered }))
      return html(ModelsPage({ base, models: listed, discovered, user, flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: NoticeQuery })

    .post('/admin/models', async ({ request, user, body }) => {
      requireAdmin(user)
      const f = formFields(body)
      const values = { id: f.id ?? '', name: f.name ?? '', category: f.category ?? '' }
      const rediscover = f.rediscover === 'true'
      try {
        await config.addModel(core, audit, actorOf(core, user, request), values)
        if (!isFragment(request)) return redirect(`${rediscover ? `${home}/discover` : home}?notice=added`)
        return answer(request, user, { notice: NOTICES.added, discovered: rediscover ? await discover() : null })
      } catch (err) {
        // model_exists names no field: it is the id that is taken
        const r = refusalOf(err, {})
        const errors = r.errors ?? (err instanceof HttpError && err.status === 409 ? { id: r.message } : undefined)
        return answer(request, user, { add: { values, errors, message: errors ? undefined : r.message } }, 422, r.headers)
      }
    }, { signedIn: true, body: FormBody })

    // The row forms post; a GET of their address (a reload, a bookmark) shows the list.
    .get('/admin/models/toggle', ({ user }) => back(user), { signedIn: true })
    .get('/admin/models/default', ({ user }) => back(user), { signedIn: true })
    .post('/admin/models/toggle', async ({ request, user, body }) => {
      requireAdmin(user)
      const f = formFields(body)
      const enabled = f.enabled === 'true'
      try {
        await config.toggleModel(core, audit, actorOf(core, user, request), f.modelId ?? '', enabled)
        if (!isFragment(request)) return redirect(`${home}?notice=${enabled ? 'on' : 'off'}`)
        return answer(request, user, { notice: enabled ? NOTICES.on : NOTICES.off })
      } catch (err) {
        const r = refusalOf(err)
        return answer(request, user, { problem: `Not changed. ${r.message}` }, 422, r.headers)
      }
    }, { signedIn: true, body: FormBody })
    .post('/admin/models/default', async ({ request, user, body }) => {
      requireAdmin(user)
      try {
        await config.chooseDefaultModel(core, audit, actorOf(core, user, request), formFields(body).modelId ?? '')
        if (!isFragment(request)) return redirect(`${home}?notice=default`)
        return answer(request, user, { notice: NOTICES.default })
      } catch (err) {
        const r = refusalOf(err)
        return answer(request, user, { problem: `Not changed. ${r.message}` }, 422, r.headers)
      }
    }, { signedIn: true, body: FormBody })
}

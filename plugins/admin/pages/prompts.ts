// The console's prompt templates (spec 3, Configuration: prompts), for admins:
//   /admin/prompts                  every prompt key with its template, its default and whether it is changed
//   /admin/prompts/:key             POST saves the template (PUT /api/admin/config/{key}'s service function)
//   /admin/prompts/:key/reset       POST restores the default (the API's reset)
// With htmx a save or reset answers with that prompt's section; without, Post/Redirect/Get to the page.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { bodyLimits } from '../../../src/envelope'
import { isFragment } from '../../../views/layout'
import { FormBody, formFields, html, redirect } from '../../../views/page'
import { clinicalPageKit } from '../../clinical/pages/common'
import { isPromptKey, listPrompts, type ClinicalUser } from '../../clinical/exports'
import type { AdminState } from '../index'
import { CONFIG_BODY_LIMIT, CONFIG_KEY_MAX } from '../models/config'
import * as config from '../services/config'
import { idOf, PromptSection, PromptsPage, type PromptView } from '../views/prompts'
import { actorOf, noticeOf, refusalOf, requireAdmin } from './common'

const NOTICES = {
  saved: 'The prompt is saved: the next generation uses it.',
  reset: 'The default is back: the next generation uses it.',
} as const
const KeyParams = t.Object({ key: t.String({ maxLength: CONFIG_KEY_MAX }) })
const NoticeQuery = t.Object({ notice: t.Optional(t.String()) })

export const promptPages = (state: AdminState) => {
  const { core, clinical: { audit } } = state
  const base = core.config.clinicalBasePath
  const home = `${base}/admin/prompts`

  const prompts = async (): Promise<PromptView[]> =>
    (await listPrompts(core)).map((p) => ({ key: p.key, value: p.value, default: p.default, overridden: p.override !== null }))
  const one = async (key: string, parts: Partial<PromptView> = {}): Promise<PromptView> => ({ ...(await prompts()).find((p) => p.key === key)!, ...parts })
  /** The prompt of the address, for an admin; 404 for a key generation does not read. */
  const known = (user: ClinicalUser, key: string) => {
    requireAdmin(user)
    if (!isPromptKey(key)) throw HttpError.notFound('unknown_prompt', `${key} is not a prompt note generation reads`)
    return key
  }

  return new Elysia()
    .use(clinicalPageKit(state.clinical))
    .use(bodyLimits)
    .get('/admin/prompts', async ({ user, query }) => {
      requireAdmin(user)
      return html(PromptsPage({ base, user, prompts: await prompts(), flash: noticeOf(NOTICES, query.notice) }))
    }, { signedIn: true, query: NoticeQuery })

    // The forms post; a GET of their address (a reload, a bookmark) shows the prompt on the page.
    .get('/admin/prompts/:key', ({ user, params }) => redirect(`${home}#${idOf(known(user, params.key))}`), { signedIn: true, params: KeyParams })
    .get('/admin/prompts/:key/reset', ({ user, params }) => redirect(`${home}#${idOf(known(user, params.key))}`), { signedIn: true, params: KeyParams })

    .post('/admin/prompts/:key', async ({ request, user, params, body }) => {
      const key = known(user, params.key)
      const template = formFields(body).template ?? ''
      try {
        await config.setConfigValue(core, audit, actorOf(core, user, request), key, template)
        if (!isFragment(request)) return redirect(`${home}?notice=saved#${idOf(key)}`)
        return html(PromptSection({ base, p: await one(key, { notice: NOTICES.saved }) }))
      } catch (err) {
        const r = refusalOf(err, { [key]: 'template' })
        const refused = { value: template, errors: r.errors, message: r.errors ? undefined : r.message }
        if (isFragment(request)) return html(PromptSection({ base, p: await one(key, refused) }), { status: 422, headers: r.headers })
        const list = (await prompts()).map((p) => (p.key === key ? { ...p, ...refused } : p))
        return html(PromptsPage({ base, user, prompts: list, flash: { kind: 'error', text: `Not saved: see the message under ${key}.` } }),
          { status: 422, headers: r.headers })
      }
    }, { signedIn: true, params: KeyParams, body: FormBody, bodyLimit: CONFIG_BODY_LIMIT })

    .post('/admin/prompts/:key/reset', async ({ request, user, params }) => {
      const key = known(user, params.key)
      await config.resetPromptToDefault(core, audit, actorOf(core, user, request), key)
      if (!isFragment(request)) return redirect(`${home}?notice=reset#${idOf(key)}`)
      return html(PromptSection({ base, p: await one(key, { notice: NOTICES.reset }) }))
    }, { signedIn: true, params: KeyParams, body: FormBody })
}

// Spec 2, OIDC single sign-on (start and callback) and spec 3's OIDC settings (admin).
// Routing, guards, validation and response shaping only; the rules live in services/oidc.ts.
import { Elysia, t } from 'elysia'
import { HttpError } from '../../../src/core/errors'
import { html } from '../../../views/page'
import { authCookie, bindingCookie, bindingFromRequest, OIDC_BINDING_COOKIE } from '../cookies'
import { callerOf } from '../guard'
import { Success } from '../models/accounts'
import * as oidc from '../services/oidc'
import type { ClinicalState } from '../state'
import { MessagePage } from '../views/common'

const tags = ['Single sign-on']

const CallbackQuery = t.Object({
  code: t.Optional(t.String({ maxLength: 4096 })),
  state: t.Optional(t.String({ maxLength: 4096 })),
  error: t.Optional(t.String({ maxLength: 1024 })),
  error_description: t.Optional(t.String({ maxLength: 4096 })),
  iss: t.Optional(t.String({ maxLength: 2048 })),
})

const setting = (maxLength: number, description: string) => t.String({ maxLength, description })
const OidcConfigBody = t.Object({
  'oidc.enabled': t.Optional(setting(5, '"true" or "false"; enabling needs an issuer and a client id')),
  'oidc.issuer': t.Optional(setting(oidc.OIDC_ISSUER_MAX, 'The identity provider\'s issuer URL ("" clears it); must be https and resolve to a public address when used')),
  'oidc.client_id': t.Optional(setting(oidc.OIDC_CLIENT_ID_MAX, 'The client id registered at the identity provider')),
  'oidc.client_secret': t.Optional(setting(oidc.OIDC_CLIENT_SECRET_MAX, `The client secret; "${oidc.OIDC_SECRET_MASK}" (the masked value of a read) or leaving it out keeps the stored secret; "" clears it`)),
  'oidc.disable_local_auth': t.Optional(setting(5, '"true" or "false": password sign-in off for everyone but admins while single sign-on is enabled')),
  'oidc.button_label': t.Optional(setting(oidc.OIDC_BUTTON_LABEL_MAX, 'Text of the sign-in button ("" restores the default)')),
})
const OidcConfigResponse = t.Object({
  success: t.Literal(true),
  config: t.Object({
    'oidc.enabled': t.String(),
    'oidc.issuer': t.String(),
    'oidc.client_id': t.String(),
    'oidc.client_secret': t.String({ description: `"${oidc.OIDC_SECRET_MASK}" when a secret is stored, "" when not; never the secret` }),
    'oidc.disable_local_auth': t.String(),
    'oidc.button_label': t.String(),
  }),
})

const wantsPage = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html')

export const oidcRoutes = ({ core, audit, auth: clinicalAuth }: ClinicalState) => {
  const base = core.config.clinicalBasePath
  const appHome = `${core.config.appUrl ?? ''}${base}/`

  /**
   * A failed sign-in: browsers get a page explaining it with a link back to the application carrying the error
   * code (`{base}/?error=<code>`); other clients the clinical JSON error body with the code as `error`, as spec 2
   * writes these refusals (`error=email_unverified`), and the explanation as `message`.
   */
  const refused = async (request: Request, err: unknown, clearBinding: boolean): Promise<Response> => {
    const headers: Record<string, string> = clearBinding ? { 'set-cookie': bindingCookie(core, null) } : {}
    const known = err instanceof HttpError ? err : null
    if (!wantsPage(request)) {
      if (!known || known.status >= 500) throw err
      throw new HttpError(known.status, known.code, known.code, known.fields, {
        cause: known.cause, extra: { ...known.extra, message: known.message }, headers: { ...known.headers, ...headers },
      })
    }
    const status = known?.status ?? 500
    const code = known?.code ?? 'internal'
    if (status >= 500) core.log.error({ err: known?.cause ?? err, code, path: new URL(request.url).pathname }, 'single sign-on failed')
    const text = status >= 500
      ? 'Single sign-on is unavailable right now: the identity provider could not be reached or answered unexpectedly. Try again later.'
      : known!.message
    return html(MessagePage({
      base, kind: 'error', title: 'Single sign-on failed', text,
      link: { href: `${base}/?error=${encodeURIComponent(code)}`, label: 'Back to sign in' },
    }), { status, headers })
  }

  return new Elysia({ prefix: '/api/auth' })
    .use(clinicalAuth)
    .get('/oidc', async ({ request }) => {
      try {
        const started = await oidc.startSignIn(core)
        return new Response(null, {
          status: 302,
          headers: { location: started.url, 'set-cookie': bindingCookie(core, started.binding), 'cache-control': 'no-store' },
        })
      } catch (err) {
        return refused(request, err, false)
      }
    }, {
      detail: {
        tags, summary: 'Start single sign-on',
        description: [
          'A plain link (GET), so it works from pages whose CSP allows only same-origin form posts. Answers 302 to the identity',
          'provider\'s authorization endpoint (authorization code with PKCE S256, scopes `openid email profile`, a nonce) and sets',
          `the short-lived httpOnly cookie \`${OIDC_BINDING_COOKIE}\` that binds the sign-in to this browser; the signed`,
          `\`state\` carries the PKCE verifier (sealed), the nonce and the cookie's hash and lasts ${oidc.OIDC_STATE_LIFETIME_S / 60} minutes.`,
          '',
          'Errors (an HTML page for `Accept: text/html`, else `{success: false, error, code}`):',
          '404 `oidc_not_enabled`; 400 `issuer_not_https` or `issuer_private_address` when the issuer breaks the address rules',
          '(https only; no private, loopback, link-local, unspecified or CGNAT address); 502 `oidc_unreachable` or',
          '`oidc_discovery_invalid` when discovery fails or its issuer differs from the configured one.',
        ].join('\n'),
      },
    })
    .get('/oidc/callback', async ({ query, request }) => {
      try {
        const session = await oidc.completeSignIn(core, audit, { ...query, binding: bindingFromRequest(request) }, callerOf(core, request))
        const headers = new Headers({ location: appHome, 'cache-control': 'no-store' })
        headers.append('set-cookie', authCookie(core, session.token))
        headers.append('set-cookie', bindingCookie(core, null))
        return new Response(null, { status: 302, headers })
      } catch (err) {
        return refused(request, err, true)
      }
    }, {
      query: CallbackQuery,
      detail: {
        tags, summary: 'Single sign-on callback (the identity provider redirects here)',
        description: [
          'Success: 302 to the application (`APP_URL` + base path + `/`) with the web session cookie `app_auth`; the binding',
          'cookie is cleared. The account is the one linked to the ID token\'s subject; else the account with the same email',
          '(case-insensitive), linked on the way (audit `oidc_linked`) only when the provider says `email_verified: true`; else a',
          'new account (role user, email verified, no local password) unless registration is disabled (the first account of the',
          'service becomes admin).',
          '',
          'Errors: browsers (`Accept: text/html`) get a page explaining the failure that links to `{base}/?error=<code>`; other',
          'clients get `{success: false, error: <code>, code: <code>, message}` (for example `error=email_unverified`); a 5xx only',
          '`Request failed`. The binding cookie is cleared either way.',
          '- 400 `invalid_state` (missing, tampered or expired state), `state_unbound` (binding cookie missing or not this',
          '  browser\'s), `state_replayed` (a state is spent at its first use), `idp_error` (the provider sent `error`),',
          '  `issuer_mismatch` (RFC 9207 `iss` differs), `invalid_request` (no code), `code_rejected` (the code was refused)',
          '- 401 `email_unverified` (linking needs the provider\'s `email_verified: true`), `sub_mismatch` (the account is linked',
          '  to a different subject), `email_missing` (no email claim), `invalid_id_token` (signature, issuer, audience, expiry',
          '  or nonce wrong)',
          '- 403 `account_disabled`, `registration_disabled`',
          '- 404 `oidc_not_enabled`',
          '- 502 `oidc_unreachable`, `oidc_discovery_invalid`, `oidc_token_failed`',
        ].join('\n'),
      },
    })
    .get('/oidc/config', async () => ({ success: true as const, config: await oidc.readOidcConfig(core) }), {
      auth: 'admin', response: OidcConfigResponse,
      detail: {
        tags, summary: 'Read the single sign-on settings (admin)',
        description: `The six \`oidc.*\` settings as strings; \`oidc.client_secret\` is "${oidc.OIDC_SECRET_MASK}" when one is stored and "" when not. 401 without a session; 403 for non-admins.`,
      },
    })
    .put('/oidc/config', async ({ body, user, request }) => {
      const written = await oidc.saveOidcConfig(core, body)
      audit.write({ action: 'oidc_settings_changed', userId: user.id, ip: core.clientAddress(request), details: { keys: written } })
      return { success: true as const }
    }, {
      auth: 'admin', body: OidcConfigBody, response: Success,
      detail: {
        tags, summary: 'Change the single sign-on settings (admin)',
        description: 'Body: any of the six `oidc.*` settings as strings; settings left out stay as they are. 400 `invalid_setting` when a '
          + 'flag is not "true"/"false", the issuer is not an http(s) URL (its address rules are checked at sign-in), or enabling '
          + `without an issuer and a client id. Sending the mask "${oidc.OIDC_SECRET_MASK}" as the secret keeps the stored secret. `
          + '401 without a session; 403 for non-admins.',
      },
    })
}

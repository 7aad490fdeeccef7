// Spec 2, OIDC (authorization code with PKCE), and spec 3's OIDC settings. The identity provider is found by
// discovery; state, PKCE verifier and nonce travel in one signed state token (no server-side store), bound to
// the browser by a short-lived cookie and spent once. Plain functions over the core services; the controller
// (routes/oidc.ts) reads the binding cookie and turns their results into redirects, cookies and pages.
import { randomBytes } from 'node:crypto'
import { CodeChallengeMethod, generateCodeVerifier, generateState, OAuth2Client, OAuth2Tokens } from 'arctic'
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose'
import { signToken, verifyToken } from '../../../src/auth/jwt'
import { constantTimeEqual, randomToken, sha256Hex } from '../../../src/core/crypto'
import { isUniqueViolation, rawSql } from '../../../src/core/db'
import { HttpError } from '../../../src/core/errors'
import { checkOutboundUrl, OUTBOUND_ADDRESS_RULE, pinnedFetch } from '../../../src/core/outbound'
import { publicOrigin } from '../../../src/config'
import type { Core } from '../../../src/plugin'
import type { AuditWriter } from '../audit'
import type { SessionUser } from '../models/accounts'
import { normaliseEmail, REGISTRATION_LOCK, signedIn } from './accounts'
import { DEFAULT_OIDC_BUTTON_LABEL, getConfigValues, OIDC_KEYS, oidcSettings, registrationEnabled, setConfigValues, type OidcKey, type OidcSettings } from './app-config'
import type { Caller, StartedSession } from './sessions'
import { USER_COLUMNS, type ClinicalUserRow } from './users'

/** spec 2, limits: the OIDC state token lives 5 minutes. */
export const OIDC_STATE_LIFETIME_S = 5 * 60
export const OIDC_STATE_AUDIENCE = 'clinical-oidc-state'
export const OIDC_SCOPES = ['openid', 'email', 'profile']
/** Every call to the identity provider (discovery, token, keys, userinfo) gives up after this long. */
export const OIDC_HTTP_TIMEOUT_MS = 10_000
/** Discovery documents are reused this long per issuer. */
export const DISCOVERY_CACHE_MS = 5 * 60 * 1000
export const DISCOVERY_MAX_BYTES = 512 * 1024
/** Allowed clock difference with the identity provider when checking the ID token's times. */
export const ID_TOKEN_CLOCK_TOLERANCE_S = 30
export const OIDC_NAME_MAX = 200
/** What GET /api/auth/oidc/config shows in place of a stored client secret. */
export const OIDC_SECRET_MASK = '••••••••'
export const OIDC_BUTTON_LABEL_MAX = 100
export const OIDC_CLIENT_ID_MAX = 500
export const OIDC_CLIENT_SECRET_MAX = 2000
export const OIDC_ISSUER_MAX = 500

export const OIDC_MESSAGES = {
  notEnabled: 'Single sign-on is not enabled',
  invalidState: 'The single sign-on request is invalid or has expired (it lasts 5 minutes): start the sign-in again',
  stateReplayed: 'This single sign-on response was already used: start the sign-in again',
  stateUnbound: 'This single sign-on response was not started in this browser (or its cookie expired): start the sign-in again',
  emailUnverified: 'Your identity provider has not verified your email address, so it cannot be linked to the existing account with that address',
  subMismatch: 'The account with this email address is linked to a different single sign-on identity',
  emailMissing: 'Your identity provider did not share an email address: it is needed to sign you in',
  accountDisabled: 'This account is disabled',
  registrationDisabled: 'Registration is disabled: an administrator has to allow new accounts before you can sign in with single sign-on',
  invalidIdToken: 'The identity provider\'s ID token could not be verified',
  unreachable: 'The identity provider could not be reached',
}

// ---- address safety (spec 2, OIDC 2) --------------------------------------------------------------------

/**
 * spec 2, OIDC 2: an address the server fetches from the identity provider must be https and resolve only to
 * public addresses (every address the name has; the shared rule of src/core/outbound.ts).
 * OIDC_ALLOW_INSECURE_ISSUER (tests, never production) lifts both.
 */
export async function assertSafeProviderUrl(core: Core, url: string, what: string): Promise<void> {
  if (core.config.oidcAllowInsecureIssuer) return
  const verdict = await checkOutboundUrl(url, { httpsOnly: true })
  if (verdict.ok) return
  switch (verdict.reason) {
    case 'invalid_url': throw HttpError.badRequest('invalid_issuer', `${what} is not a valid URL`)
    case 'not_https': throw HttpError.badRequest('issuer_not_https', `${what} must use https`)
    case 'unresolvable': throw HttpError.upstream('oidc_unreachable', new Error(verdict.detail), OIDC_MESSAGES.unreachable)
    case 'private_address': throw HttpError.badRequest('issuer_private_address', `${what} ${OUTBOUND_ADDRESS_RULE}`)
  }
}

/**
 * How every request to the identity provider connects: pinned to the addresses the rule above checked (so the name
 * cannot resolve elsewhere between the check and the connection), https only; as it is with OIDC_ALLOW_INSECURE_ISSUER.
 */
const providerFetch = (core: Core) => (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  core.config.oidcAllowInsecureIssuer ? fetch(input, init) : pinnedFetch(input, init, { httpsOnly: true })

// ---- discovery ------------------------------------------------------------------------------------------

interface ProviderMetadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
  userinfo_endpoint?: string
}

const discoveries = new Map<string, { metadata: ProviderMetadata; until: number }>()
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>()

const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '')

function isHttpUrl(value: unknown, httpsOnly: boolean): value is string {
  if (typeof value !== 'string') return false
  try {
    const u = new URL(value)
    return u.protocol === 'https:' || (!httpsOnly && u.protocol === 'http:')
  } catch {
    return false
  }
}

/** The identity provider's metadata (cached per issuer), after the address checks of the issuer. */
export async function discover(core: Core, issuer: string): Promise<ProviderMetadata> {
  await assertSafeProviderUrl(core, issuer, 'The identity provider\'s issuer URL')
  const cached = discoveries.get(issuer)
  if (cached && cached.until > performance.now()) return cached.metadata
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  let doc: Record<string, unknown>
  try {
    const res = await providerFetch(core)(url, { redirect: 'manual', signal: AbortSignal.timeout(OIDC_HTTP_TIMEOUT_MS), headers: { accept: 'application/json' } })
    if (res.status !== 200) throw new Error(`discovery answered ${res.status}`)
    const text = await res.text()
    if (text.length > DISCOVERY_MAX_BYTES) throw new Error('discovery document too large')
    doc = JSON.parse(text)
  } catch (err) {
    throw HttpError.upstream('oidc_unreachable', err, OIDC_MESSAGES.unreachable)
  }
  const httpsOnly = !core.config.oidcAllowInsecureIssuer
  const problem =
    typeof doc.issuer !== 'string' || !sameIssuer(doc.issuer, issuer) ? 'its issuer differs from the configured one'
      : !isHttpUrl(doc.authorization_endpoint, httpsOnly) ? 'authorization_endpoint is missing or not https'
        : !isHttpUrl(doc.token_endpoint, httpsOnly) ? 'token_endpoint is missing or not https'
          : !isHttpUrl(doc.jwks_uri, httpsOnly) ? 'jwks_uri is missing or not https'
            : doc.userinfo_endpoint !== undefined && !isHttpUrl(doc.userinfo_endpoint, httpsOnly) ? 'userinfo_endpoint is not https'
              : null
  if (problem) throw HttpError.upstream('oidc_discovery_invalid', new Error(`discovery document of ${issuer}: ${problem}`), 'The identity provider\'s configuration is invalid')
  const metadata = doc as unknown as ProviderMetadata
  discoveries.set(issuer, { metadata, until: performance.now() + DISCOVERY_CACHE_MS })
  return metadata
}

/** The provider's key set, fetched by jose through providerFetch (cached per address and connection rule). */
function keySet(core: Core, jwksUri: string) {
  const key = `${core.config.oidcAllowInsecureIssuer}:${jwksUri}`
  let keys = keySets.get(key)
  if (!keys) {
    keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: OIDC_HTTP_TIMEOUT_MS, [customFetch]: providerFetch(core) })
    keySets.set(key, keys)
  }
  return keys
}

// ---- sign-in --------------------------------------------------------------------------------------------

async function enabledSettings(core: Core): Promise<OidcSettings> {
  const settings = await oidcSettings(core)
  if (!settings.enabled) throw HttpError.notFound('oidc_not_enabled', OIDC_MESSAGES.notEnabled)
  return settings
}

/** The callback address registered at the identity provider: APP_URL based, never the request's Host. */
export function redirectUri(core: Core): string {
  const origin = publicOrigin(core.config)
  return `${origin}${core.config.clinicalBasePath}/api/auth/oidc/callback`
}

interface StateClaims extends JWTPayload {
  sub: string
  jti: string
  /** The PKCE verifier, sealed with DATA_ENCRYPTION_KEY: the state is visible to the browser and the provider. */
  v: string
  n: string
  /** SHA-256 of the binding cookie's value. */
  b: string
}

/**
 * Starts a sign-in: the identity provider's authorization URL, and the binding: a random value for the browser's
 * binding cookie, whose SHA-256 the state token carries.
 */
export async function startSignIn(core: Core): Promise<{ url: string; binding: string }> {
  const settings = await enabledSettings(core)
  const provider = await discover(core, settings.issuer)
  const verifier = generateCodeVerifier()
  const nonce = generateState()
  const binding = randomToken(32)
  const state = await signToken(core.config.jwtSecret, OIDC_STATE_AUDIENCE, {
    sub: 'oidc', jti: randomToken(16), v: core.crypto.sealText(verifier), n: nonce, b: sha256Hex(binding),
  }, OIDC_STATE_LIFETIME_S, core.now())
  const client = new OAuth2Client(settings.clientId, settings.clientSecret || null, redirectUri(core))
  const url = client.createAuthorizationURLWithPKCE(provider.authorization_endpoint, state, CodeChallengeMethod.S256, verifier, OIDC_SCOPES)
  url.searchParams.set('nonce', nonce)
  return { url: url.toString(), binding }
}

export interface CallbackInput {
  code?: string
  state?: string
  /** The identity provider's error response (RFC 6749 4.1.2.1). */
  error?: string
  /** RFC 9207: the issuer of the response, when the provider sends it. */
  iss?: string
  /** The binding cookie's value, or null when the browser did not send it. */
  binding: string | null
}

/** The state token's claims after every check: signature and expiry, browser binding, first use. */
async function acceptState(core: Core, input: CallbackInput): Promise<StateClaims> {
  const claims = input.state ? (await verifyToken(core.config.jwtSecret, OIDC_STATE_AUDIENCE, input.state, core.now())) as StateClaims | null : null
  if (!claims || typeof claims.jti !== 'string' || typeof claims.v !== 'string' || typeof claims.n !== 'string' || typeof claims.b !== 'string' || typeof claims.exp !== 'number') {
    throw HttpError.badRequest('invalid_state', OIDC_MESSAGES.invalidState)
  }
  if (!input.binding || !constantTimeEqual(sha256Hex(input.binding), claims.b)) {
    throw HttpError.badRequest('state_unbound', OIDC_MESSAGES.stateUnbound)
  }
  const remainingS = Math.max(1, claims.exp - Math.floor(core.now() / 1000))
  if (!(await core.kv.setIfAbsent(`clinical.oidc.state:${claims.jti}`, true, remainingS))) {
    throw HttpError.badRequest('state_replayed', OIDC_MESSAGES.stateReplayed)
  }
  return claims
}

async function exchangeCode(core: Core, settings: OidcSettings, provider: ProviderMetadata, code: string, verifier: string) {
  await assertSafeProviderUrl(core, provider.token_endpoint, 'The identity provider\'s token endpoint')
  // The request arctic's validateAuthorizationCode makes, without following redirects (arctic's fetch does): a
  // redirect would carry the code, the verifier and the client secret to an address no rule has checked.
  const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(core), code_verifier: verifier })
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
  if (settings.clientSecret) headers.authorization = `Basic ${Buffer.from(`${settings.clientId}:${settings.clientSecret}`).toString('base64')}`
  else body.set('client_id', settings.clientId)
  let status: number
  let data: unknown
  try {
    const res = await providerFetch(core)(provider.token_endpoint, { method: 'POST', body, headers, redirect: 'manual', signal: AbortSignal.timeout(OIDC_HTTP_TIMEOUT_MS) })
    status = res.status
    data = await res.json().catch(() => null)
  } catch (err) {
    throw HttpError.upstream('oidc_token_failed', err, OIDC_MESSAGES.unreachable)
  }
  if ((status === 400 || status === 401) && (data as { error?: unknown } | null)?.error === 'invalid_grant') {
    throw HttpError.badRequest('code_rejected', 'The identity provider refused the sign-in code (it was used or has expired): start the sign-in again')
  }
  if (status !== 200 || typeof data !== 'object' || data === null) {
    throw HttpError.upstream('oidc_token_failed', new Error(`token endpoint answered ${status}`), OIDC_MESSAGES.unreachable)
  }
  return new OAuth2Tokens(data)
}

interface IdentityClaims {
  sub: string
  email: string | null
  emailVerified: boolean
  name: string | null
}

const isTrue = (v: unknown) => v === true || v === 'true' // some providers send the flag as a string

async function verifyIdToken(core: Core, settings: OidcSettings, provider: ProviderMetadata, idToken: string, nonce: string): Promise<JWTPayload> {
  await assertSafeProviderUrl(core, provider.jwks_uri, 'The identity provider\'s key set (jwks_uri)')
  let payload: JWTPayload
  try {
    ({ payload } = await jwtVerify(idToken, keySet(core, provider.jwks_uri), {
      issuer: provider.issuer,
      audience: settings.clientId,
      currentDate: new Date(core.now()),
      clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_S,
      requiredClaims: ['sub', 'exp', 'iat'],
    }))
  } catch (err) {
    // The key set could not be fetched (network, timeout, not a key set): the provider failed, not the user.
    const unreachable = !(err instanceof joseErrors.JOSEError) || err instanceof joseErrors.JWKSTimeout
      || err instanceof joseErrors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC'
    if (unreachable) throw HttpError.upstream('oidc_unreachable', err, OIDC_MESSAGES.unreachable)
    core.log.warn({ err: { name: (err as Error).name, message: (err as Error).message } }, 'OIDC ID token refused')
    throw HttpError.unauthorized('invalid_id_token', OIDC_MESSAGES.invalidIdToken)
  }
  // With several audiences the token must name us as its authorised party (OIDC Core 3.1.3.7).
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== settings.clientId) {
    throw HttpError.unauthorized('invalid_id_token', OIDC_MESSAGES.invalidIdToken)
  }
  if (typeof payload.nonce !== 'string' || !constantTimeEqual(payload.nonce, nonce)) {
    throw HttpError.unauthorized('invalid_id_token', OIDC_MESSAGES.invalidIdToken)
  }
  return payload
}

/** Claims a provider keeps out of the ID token (when it also issues an access token) come from userinfo. */
async function userInfo(core: Core, provider: ProviderMetadata, accessToken: string, sub: string): Promise<JWTPayload | null> {
  if (!provider.userinfo_endpoint) return null
  await assertSafeProviderUrl(core, provider.userinfo_endpoint, 'The identity provider\'s userinfo endpoint')
  let info: JWTPayload
  try {
    const res = await providerFetch(core)(provider.userinfo_endpoint, {
      redirect: 'manual', signal: AbortSignal.timeout(OIDC_HTTP_TIMEOUT_MS),
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    })
    if (res.status !== 200) throw new Error(`userinfo answered ${res.status}`)
    info = await res.json() as JWTPayload
  } catch (err) {
    throw HttpError.upstream('oidc_unreachable', err, OIDC_MESSAGES.unreachable)
  }
  // OIDC Core 5.3.2: userinfo of another subject must not be used.
  return info && info.sub === sub ? info : null
}

function identity(claims: JWTPayload): IdentityClaims {
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)
  return {
    sub: claims.sub!,
    email: text(claims.email) ? normaliseEmail(text(claims.email)!) : null,
    emailVerified: isTrue(claims.email_verified),
    name: text(claims.name) ?? text(claims.preferred_username) ?? text(claims.email),
  }
}

type UserRow = ClinicalUserRow & { oidc_sub: string | null }
const userColumns = rawSql(`${USER_COLUMNS}, oidc_sub`)

type Resolution = { row: UserRow; outcome: 'signed_in' | 'linked' | 'created' }

/** spec 2, OIDC 3-5: the account of a verified identity: by subject, else linked by email, else created. */
async function resolveAccount(core: Core, who: IdentityClaims): Promise<Resolution> {
  const [bySub] = await core.db.sql<UserRow>`select ${userColumns} from clinical.users where oidc_sub = ${who.sub}`
  if (bySub) return { row: bySub, outcome: 'signed_in' }
  if (!who.email) throw HttpError.unauthorized('email_missing', OIDC_MESSAGES.emailMissing)
  const email = who.email
  const allowed = await registrationEnabled(core)
  return core.db.transaction(async (tx): Promise<Resolution> => {
    await tx.sql`select pg_advisory_xact_lock(hashtext(${REGISTRATION_LOCK}))`
    const [again] = await tx.sql<UserRow>`select ${userColumns} from clinical.users where oidc_sub = ${who.sub}`
    if (again) return { row: again, outcome: 'signed_in' }
    const [byEmail] = await tx.sql<UserRow>`select ${userColumns} from clinical.users where lower(email) = ${email}`
    if (byEmail) {
      if (byEmail.oidc_sub !== null) throw HttpError.unauthorized('sub_mismatch', OIDC_MESSAGES.subMismatch)
      if (!who.emailVerified) throw HttpError.unauthorized('email_unverified', OIDC_MESSAGES.emailUnverified)
      if (byEmail.disabled) throw HttpError.forbidden('account_disabled', OIDC_MESSAGES.accountDisabled)
      // The provider verified the address, so the account's address counts as verified from now on.
      const [linked] = await tx.sql<UserRow>`
        update clinical.users set oidc_sub = ${who.sub}, email_verified = true where id = ${byEmail.id} returning ${userColumns}`
      return { row: linked!, outcome: 'linked' }
    }
    const [count] = await tx.sql<{ n: number }>`select count(*)::int as n from clinical.users`
    const first = count!.n === 0
    // As with register: the very first account is always allowed, and becomes admin.
    if (!first && !allowed) throw HttpError.forbidden('registration_disabled', OIDC_MESSAGES.registrationDisabled)
    const name = (who.name ?? email).slice(0, OIDC_NAME_MAX)
    // spec 2, OIDC 5: a random 32-byte hex string, not a hash, so no password ever matches it.
    const placeholder = randomBytes(32).toString('hex')
    const [created] = await tx.sql<UserRow>`
      insert into clinical.users (name, email, password_hash, role, email_verified, can_local_auth, oidc_sub)
      values (${name}, ${email}, ${placeholder}, ${first ? 'admin' : 'user'}, true, false, ${who.sub})
      returning ${userColumns}`
    return { row: created!, outcome: 'created' }
  })
}

/**
 * The callback: checks the state, exchanges the code, verifies the ID token and signs the account in (web
 * session). Throws HttpError: 400 for the request itself (state, provider error, refused code), 401/403 for
 * the account rules, 404 when single sign-on is off, 502 when the provider fails.
 */
export async function completeSignIn(
  core: Core, audit: AuditWriter, input: CallbackInput, caller: Pick<Caller, 'ip' | 'userAgent'>,
): Promise<StartedSession & { user: SessionUser }> {
  const { ip } = caller
  const settings = await enabledSettings(core)
  if (input.error) {
    const reason = input.error.replace(/[^\w.-]/g, '').slice(0, 64)
    throw HttpError.badRequest('idp_error', `The identity provider did not sign you in (${reason || 'error'})`)
  }
  const state = await acceptState(core, input)
  const provider = await discover(core, settings.issuer)
  if (input.iss !== undefined && input.iss !== provider.issuer) {
    throw HttpError.badRequest('issuer_mismatch', 'The response came from a different identity provider')
  }
  if (!input.code) throw HttpError.badRequest('invalid_request', 'The identity provider\'s response has no code')
  let verifier: string
  try {
    verifier = core.crypto.openText(state.v)
  } catch {
    throw HttpError.badRequest('invalid_state', OIDC_MESSAGES.invalidState)
  }
  const tokens = await exchangeCode(core, settings, provider, input.code, verifier)
  let idToken: string
  try {
    idToken = tokens.idToken()
  } catch (err) {
    throw HttpError.upstream('oidc_token_failed', err, OIDC_MESSAGES.unreachable)
  }
  let claims = await verifyIdToken(core, settings, provider, idToken, state.n)
  if (typeof claims.email !== 'string') {
    const info = await userInfo(core, provider, tokens.accessToken(), claims.sub!)
    if (info) claims = { ...info, ...claims, email: info.email, email_verified: info.email_verified ?? claims.email_verified }
  }
  const who = identity(claims)

  let resolved: Resolution
  try {
    resolved = await resolveAccount(core, who)
  } catch (err) {
    if (err instanceof HttpError) {
      audit.write({ action: 'login_blocked', ip, details: { reason: err.code, via: 'oidc' } })
      throw err
    }
    if (isUniqueViolation(err)) throw HttpError.conflict('account_conflict', 'The account changed while signing in: try again')
    throw err
  }
  const { row, outcome } = resolved
  if (row.disabled) {
    audit.write({ action: 'login_blocked', userId: row.id, ip, details: { reason: 'account_disabled', via: 'oidc' } })
    throw HttpError.forbidden('account_disabled', OIDC_MESSAGES.accountDisabled)
  }
  if (outcome === 'linked') audit.write({ action: 'oidc_linked', userId: row.id, ip, details: { issuer: provider.issuer } })
  if (outcome === 'created') audit.write({ action: 'register', userId: row.id, ip, details: { via: 'oidc', role: row.role } })
  // A single sign-on is a browser's: its session is a web one (the cookie, the idle limit).
  return signedIn(core, audit, row, { ...caller, client: 'web' }, 'login_oidc')
}

// ---- spec 3: the admin's OIDC settings ------------------------------------------------------------------

export type OidcConfig = Record<OidcKey, string>
export type OidcConfigInput = Partial<Record<OidcKey, string>>

/** The six settings as strings, the client secret masked ('' when none is stored). */
export async function readOidcConfig(core: Core): Promise<OidcConfig> {
  const v = await getConfigValues(core, OIDC_KEYS)
  return {
    'oidc.enabled': v['oidc.enabled'] === 'true' ? 'true' : 'false',
    'oidc.issuer': v['oidc.issuer'] ?? '',
    'oidc.client_id': v['oidc.client_id'] ?? '',
    'oidc.client_secret': v['oidc.client_secret'] ? OIDC_SECRET_MASK : '',
    'oidc.disable_local_auth': v['oidc.disable_local_auth'] === 'true' ? 'true' : 'false',
    'oidc.button_label': v['oidc.button_label'] || DEFAULT_OIDC_BUTTON_LABEL,
  }
}

/**
 * Writes the settings sent (absent keys stay as they are). Flags are 'true' or 'false'; the issuer is '' or an
 * http(s) URL (reachability and the address rules are checked at sign-in, not here); a client secret equal to the
 * mask keeps the stored one. Enabling needs an issuer and a client id. Returns the keys written (for the audit).
 */
export async function saveOidcConfig(core: Core, input: OidcConfigInput): Promise<string[]> {
  const fields: Record<string, string> = {}
  const values: Record<string, string> = {}
  for (const key of ['oidc.enabled', 'oidc.disable_local_auth'] as const) {
    const value = input[key]
    if (value === undefined) continue
    if (value !== 'true' && value !== 'false') fields[key] = 'Must be "true" or "false"'
    else values[key] = value
  }
  if (input['oidc.issuer'] !== undefined) {
    const issuer = input['oidc.issuer'].trim().replace(/\/+$/, '')
    if (issuer !== '' && !validIssuer(issuer)) fields['oidc.issuer'] = 'Must be an http(s) URL without credentials, query or fragment'
    else values['oidc.issuer'] = issuer
  }
  if (input['oidc.client_id'] !== undefined) values['oidc.client_id'] = input['oidc.client_id'].trim()
  if (input['oidc.button_label'] !== undefined) values['oidc.button_label'] = input['oidc.button_label'].trim()
  const secret = input['oidc.client_secret']
  if (secret !== undefined && secret !== OIDC_SECRET_MASK) values['oidc.client_secret'] = secret
  if (Object.keys(fields).length > 0) {
    const [key, message] = Object.entries(fields)[0]!
    throw HttpError.badRequest('invalid_setting', `${key}: ${message}`, fields)
  }
  const stored = await getConfigValues(core, OIDC_KEYS)
  const after = { ...stored, ...values }
  if (after['oidc.enabled'] === 'true' && (!after['oidc.issuer'] || !after['oidc.client_id']?.trim())) {
    throw HttpError.badRequest('invalid_setting', 'Single sign-on needs an issuer and a client id before it can be enabled', {
      'oidc.enabled': 'Set oidc.issuer and oidc.client_id first',
    })
  }
  await setConfigValues(core, values)
  // A changed issuer starts from a fresh discovery.
  if (values['oidc.issuer'] !== undefined) discoveries.delete(values['oidc.issuer'])
  return Object.keys(values)
}

function validIssuer(issuer: string): boolean {
  if (issuer.length > OIDC_ISSUER_MAX) return false
  try {
    const u = new URL(issuer)
    return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.search && !u.hash
  } catch {
    return false
  }
}

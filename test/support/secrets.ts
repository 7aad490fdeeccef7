// Secrets never leave: the secrets the tests hand to the app or get from it, and the check that none turns up where
// it must not. Log lines come from the app's loggers (src/core/log.ts captureLogs, installed by test/preload.ts) and
// from the output of server processes (server-process.ts); responses from TestApp.request (app.ts). A finding names
// the kind and where it was seen, never the secret: every known secret in an excerpt reads [secret].
import pino from 'pino'
import { isSecretKey } from '../../plugins/clinical/services/app-config'

export type SecretKind =
  | 'password' | 'stored credential' | 'API key' | 'server secret'
  | 'access token' | 'session cookie' | 'TOTP secret' | 'backup code' | 'mail link token'

/** Shorter values are ignored: they turn up by chance. */
export const MIN_SECRET_LENGTH = 8

/**
 * Where a kind may appear in a response: in the response that issued it (`issued`), in a Set-Cookie header of any
 * response (`cookie`: a session renewed with its own token), in the response to a request whose URL or body carried it
 * (`echo`: a page form posting it back). Never in a log line.
 */
const POLICY: Record<SecretKind, { issued: boolean; cookie: boolean; echo: boolean }> = {
  'password': { issued: false, cookie: false, echo: false },
  'stored credential': { issued: false, cookie: false, echo: false },
  'API key': { issued: false, cookie: false, echo: false },
  'server secret': { issued: false, cookie: false, echo: false },
  'access token': { issued: true, cookie: true, echo: false },
  'session cookie': { issued: true, cookie: true, echo: false },
  'TOTP secret': { issued: true, cookie: false, echo: true },
  'backup code': { issued: true, cookie: false, echo: false },
  'mail link token': { issued: false, cookie: false, echo: true },
}

/** `seq`: the order it was learnt in (a line is checked later against the secrets learnt after it was written). */
interface Secret { kind: SecretKind; value: string; variants: string[]; seq: number }
export interface Finding { kind: SecretKind; where: string; excerpt: string }

// ---- matching: every written form of every secret, found by a rolling hash of its last WINDOW characters ----------

const WINDOW = MIN_SECRET_LENGTH
const BASE = 31
const BASE_POW = Math.imul(Math.imul(Math.imul(BASE, BASE), Math.imul(BASE, BASE)), Math.imul(Math.imul(BASE, BASE), BASE))
const byTail = new Map<number, Array<{ text: string; secret: Secret }>>()
/** One bit per hash (modulo its size) that some secret ends with: most positions of a text stop at this test. */
const TAIL_BITS = 1 << 21
const tails = new Uint32Array(TAIL_BITS >>> 5)
const known = new Map<string, Secret>()

function hashOf(text: string, end: number): number {
  let h = 0
  for (let i = end - WINDOW; i < end; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) | 0
  return h
}

const htmlEscaped = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')
/** The value as it reads in JSON, a URL, a form body and HTML. */
const variantsOf = (value: string) =>
  [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2), htmlEscaped(value)])]

/** Every known secret in the text, once each. */
function secretsIn(text: string): Secret[] {
  const found = new Set<Secret>()
  if (text.length < WINDOW || byTail.size === 0) return []
  let h = hashOf(text, WINDOW)
  for (let end = WINDOW; ; end++) {
    const bit = h & (TAIL_BITS - 1)
    const candidates = tails[bit >>> 5]! & (1 << (bit & 31)) ? byTail.get(h) : undefined
    if (candidates) for (const c of candidates) if (end >= c.text.length && text.startsWith(c.text, end - c.text.length)) found.add(c.secret)
    if (end === text.length) break
    h = (Math.imul(h - Math.imul(text.charCodeAt(end - WINDOW), BASE_POW), BASE) + text.charCodeAt(end)) | 0
  }
  return [...found]
}

/** The text around the first secret, every known secret in it replaced by [secret]. */
function excerpt(text: string): string {
  let masked = text
  for (const s of secretsIn(text)) for (const v of s.variants) masked = masked.replaceAll(v, '[secret]')
  const at = masked.indexOf('[secret]')
  return `${at > 120 ? '…' : ''}${masked.slice(Math.max(0, at - 120), at + 160)}${at + 160 < masked.length ? '…' : ''}`.replace(/\s+/g, ' ')
}

// ---- findings ---------------------------------------------------------------------------------------------------

const findings: Finding[] = []
/**
 * What the tests also send as ordinary data (a name, a title, a URL). A password or key they chose that turns up
 * inside one of these proves nothing (a fuzzer sends the same text as a password and as a name).
 */
const publicValues = new Set<string>()
const PUBLIC_VALUE_MAX = 2_000
const chosenByTests = (kind: SecretKind) => kind === 'password' || kind === 'stored credential' || kind === 'API key'

function report(secret: Secret, where: string, text: string) {
  if (chosenByTests(secret.kind)) for (const v of publicValues) if (v.includes(secret.value)) return
  findings.push({ kind: secret.kind, where, excerpt: excerpt(text) })
}

/** The findings so far (log lines swept first), and forgets them. */
export function takeFindings(): Finding[] {
  sweepLines()
  return findings.splice(0)
}

export const describeFindings = (list: Finding[]) =>
  `secrets leaked:\n${list.map((f) => `- ${/^[aeiou]/i.test(f.kind) ? 'an' : 'a'} ${f.kind} in ${f.where}: ${f.excerpt}`).join('\n')}`

// ---- the registry -----------------------------------------------------------------------------------------------

/**
 * Not plain words ('password', 'wrong password': the API's own descriptions say them) and not a run of a few characters (a mask, '••••••••'; a fuzzer's 'éééééééé'): those
 * turn up in ordinary text. The server's own keys are taken as they are ('0'.repeat(63) + '1' in tests).
 */
const SECRET_DISTINCT_CHARS_MIN = 5
const secretLike = (kind: SecretKind, value: string) =>
  kind === 'server secret' || (new Set(value).size >= SECRET_DISTINCT_CHARS_MIN && !(value.length < 24 && /^[a-z]+(?: [a-z]+)*$/i.test(value)))

/** Records a secret; from now on any log line carrying it, and any response the kind's policy forbids, is a finding. */
export function rememberSecret(kind: SecretKind, value: string | null | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH || known.has(value) || !secretLike(kind, value)) return
  const secret: Secret = { kind, value, variants: variantsOf(value), seq: known.size }
  known.set(value, secret)
  for (const text of secret.variants) {
    const h = hashOf(text, text.length)
    const bit = h & (TAIL_BITS - 1)
    tails[bit >>> 5]! |= 1 << (bit & 31)
    const list = byTail.get(h)
    if (list) list.push({ text, secret })
    else byTail.set(h, [{ text, secret }])
  }
}

/** Environment variables that hold a secret of the server's. */
const SECRET_ENV = /(SECRET|PASS|PASSWORD|TOKEN|API_KEY|ENCRYPTION_KEY|SECRET_ACCESS_KEY)$/

export function rememberEnvSecrets(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) if (SECRET_ENV.test(name)) rememberSecret('server secret', value)
}

/** The link tokens (verify, reset) of a mail as it arrived at the test's SMTP server. */
export function rememberMailSecrets(raw: string): void {
  for (const m of raw.replace(/=\r?\n/g, '').replace(/&amp;/g, '&').matchAll(/[?&]token=([A-Za-z0-9_\-.~%]+)/g)) {
    try { rememberSecret('mail link token', decodeURIComponent(m[1]!)) } catch {}
  }
}

// ---- log lines --------------------------------------------------------------------------------------------------

/**
 * Lines are checked as they arrive against the secrets known then, and once more at the next sweep (after each test)
 * against the secrets learnt since: the app may log a token before the test reads it from the answer.
 */
interface Line { line: string; source: string; knownBefore: number }
const UNSWEPT_LINES_MAX = 5_000
const unswept: Line[] = []
const RECENT_LINES = 200
const recent: string[] = []

export function captureLine(line: string, source: string): void {
  for (const secret of secretsIn(line)) report(secret, `a log line (${source})`, line)
  unswept.push({ line, source, knownBefore: known.size })
  if (unswept.length > 2 * UNSWEPT_LINES_MAX) unswept.splice(0, unswept.length - UNSWEPT_LINES_MAX)
  recent.push(line)
  if (recent.length > 2 * RECENT_LINES) recent.splice(0, recent.length - RECENT_LINES)
}

/** Checks the lines since the last sweep against the secrets learnt after each was written. */
function sweepLines(): void {
  for (const { line, source, knownBefore } of unswept.splice(0)) {
    if (known.size === knownBefore) continue
    for (const secret of secretsIn(line)) if (secret.seq >= knownBefore) report(secret, `a log line (${source})`, line)
  }
}

/** The last lines captured (at most RECENT_LINES), oldest first. */
export const recentLines = (): string[] => recent.slice(-RECENT_LINES)

/**
 * Captures the lines of a logger a test made itself (to read its lines) and boots an app with: its stream is wrapped,
 * so the lines go where the test wants them and are checked too. Only the lines its own level lets through.
 */
export function captureLoggerLines(log: pino.Logger, source: string): void {
  const holder = log as unknown as Record<symbol, { write(line: string): unknown }>
  const stream = holder[pino.symbols.streamSym]!
  holder[pino.symbols.streamSym] = { write: (line: string) => (captureLine(line, source), stream.write(line)) }
}

/** A writer of chunks of output (a process's stdout) that captures each complete line. */
export function lineCapture(source: string): { write(chunk: string): void; end(): void } {
  let rest = ''
  return {
    write(chunk) {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      for (const line of lines) if (line) captureLine(line, source)
    },
    end() {
      if (rest) captureLine(rest, source)
      rest = ''
    },
  }
}

// ---- responses --------------------------------------------------------------------------------------------------

interface Exchange { where: string; path: string; sent: string }

/** Bodies read for the check: text, HTML, JSON, XML; not scripts, style sheets, event streams or binary files. */
const CHECKED_BODY = /^(text\/(?!css|javascript|event-stream)|application\/([\w.+-]+\+)?(json|xml))/i
const CHECKED_BODY_MAX_BYTES = 4_000_000
/** Routes that hand out (again) a token, a session or two-factor secrets. */
const ISSUING_PATH = /\/(login|register|sign-in|oidc|password|2fa|setup-2fa|verify-2fa|backup-codes)(\/|$)/
const pending = new Set<Promise<void>>()

/**
 * Sends the request through `answer` and checks the exchange: secrets the request body carries (passwords, API keys,
 * stored credentials) are remembered first, then the response (headers, and the body once read, in the background)
 * is checked against the policy of every known secret, and the secrets it issues are remembered.
 */
export async function watchExchange(request: Request, body: unknown, answer: (request: Request) => Response | Promise<Response>): Promise<Response> {
  const exchange = noteRequest(request, body)
  const response = await answer(request)
  const length = Number(response.headers.get('content-length') ?? 0)
  const copy = response.body && CHECKED_BODY.test(response.headers.get('content-type') ?? '') && length <= CHECKED_BODY_MAX_BYTES ? response.clone() : null
  const done: Promise<void> = inspect(exchange, response, copy).catch(() => {}).finally(() => pending.delete(done))
  pending.add(done)
  return response
}

/** Waits until every response so far has been checked (at most `timeoutMs`). */
export async function settleExchanges(timeoutMs = 5_000): Promise<void> {
  if (pending.size > 0) await Promise.race([Promise.all([...pending]), Bun.sleep(timeoutMs)])
}

function kindOfField(key: string, path: string): SecretKind | null {
  if (/pass(word)?$|password|passwd/i.test(key)) return /nextcloud|webdav|smtp|import|settings/i.test(path) ? 'stored credential' : 'password'
  if (/api_?key$/i.test(key)) return 'API key'
  if (/client_?secret$|secret_?(access_)?key$/i.test(key)) return 'stored credential'
  return null
}

/** The string fields of a JSON, form or multipart body, each with its own name. */
function fieldsOf(body: unknown, type: string): Array<[string, string]> {
  const fields: Array<[string, string]> = []
  const walk = (value: unknown, key: string, depth: number) => {
    if (typeof value === 'string') fields.push([key, value])
    else if (Array.isArray(value) && depth < 8) for (const v of value) walk(v, key, depth + 1)
    else if (value && typeof value === 'object' && depth < 8) for (const [k, v] of Object.entries(value)) walk(v, k, depth + 1)
  }
  if (body instanceof URLSearchParams || body instanceof FormData) {
    for (const [k, v] of body.entries()) if (typeof v === 'string') fields.push([k, v])
  } else if (typeof body === 'string') {
    if (/json/i.test(type) || /^\s*[[{]/.test(body)) {
      try { walk(JSON.parse(body), '', 0) } catch {}
    } else if (/x-www-form-urlencoded/i.test(type)) {
      for (const [k, v] of new URLSearchParams(body)) fields.push([k, v])
    }
  }
  return fields
}

function noteRequest(request: Request, body: unknown): Exchange {
  const url = new URL(request.url)
  const fields = fieldsOf(body, request.headers.get('content-type') ?? '')
  const configKey = /\/api\/admin\/config\/([^/]+)$/.exec(url.pathname)?.[1]
  const secretSetting = request.method === 'PUT' && configKey !== undefined && isSecretKey(decodeURIComponent(configKey))
  for (const [key, value] of fields) {
    const kind = secretSetting && key === 'value' ? 'stored credential' : kindOfField(key, url.pathname)
    if (kind) rememberSecret(kind, value)
    else if (value.length >= MIN_SECRET_LENGTH && value.length <= PUBLIC_VALUE_MAX) publicValues.add(value)
  }
  try { publicValues.add(decodeURI(url.pathname + url.search)) } catch { publicValues.add(url.pathname + url.search) }
  const sent = `${url.href}\n${typeof body === 'string' ? body : fields.map(([k, v]) => `${k}=${v}`).join('\n')}`
  return { where: `the response to ${request.method} ${url.pathname}`, path: url.pathname, sent }
}

/** What a response hands out: tokens in JSON, session cookies, a TOTP secret and backup codes (JSON or page). */
function issuedIn(body: string, type: string, cookies: string[]): Array<[SecretKind, string]> {
  const issued: Array<[SecretKind, string]> = []
  for (const cookie of cookies) issued.push(['session cookie', cookie.slice(cookie.indexOf('=') + 1).split(';')[0]!])
  if (/json/i.test(type)) {
    let value: unknown
    try { value = JSON.parse(body) } catch { return issued }
    const walk = (v: unknown, depth: number) => {
      if (!v || typeof v !== 'object' || depth > 4) return
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'string' && /^(access_token|refresh_token|token)$/.test(k)) issued.push(['access token', x])
        else if (typeof x === 'string' && k === 'secret') issued.push(['TOTP secret', x])
        else if (k === 'backupCodes' && Array.isArray(x)) for (const code of x) if (typeof code === 'string') issued.push(['backup code', code])
        else walk(x, depth + 1)
      }
    }
    walk(value, 0)
  } else if (/html/i.test(type)) {
    const secret = /name="secret" value="([^"]+)"/.exec(body)?.[1]
    if (secret) issued.push(['TOTP secret', secret])
    const codes = /<ol class="backup-codes">([\s\S]*?)<\/ol>/.exec(body)?.[1]
    for (const m of codes?.matchAll(/<code>([^<]+)<\/code>/g) ?? []) issued.push(['backup code', m[1]!])
  }
  return issued
}

async function inspect(exchange: Exchange, response: Response, copy: Response | null): Promise<void> {
  const cookies = response.headers.getSetCookie()
  const headers = [...response.headers].filter(([k]) => k !== 'set-cookie').map(([k, v]) => `${k}: ${v}`).join('\n')
  const body = copy ? await copy.text() : ''
  const issued = issuedIn(body, response.headers.get('content-type') ?? '', cookies)
  // A response issues a value it carries unless the value was known before, from another response: then only a
  // route that hands out tokens may carry it again (a second sign-in within the second gets the same JWT).
  const issuing = ISSUING_PATH.test(exchange.path)
  const issuedHere = new Set(issued.filter(([kind, v]) => POLICY[kind].issued && (issuing || !known.has(v))).map(([, v]) => v))
  const text = `${headers}\n\n${body}`
  for (const secret of secretsIn(text)) {
    if (issuedHere.has(secret.value) && POLICY[secret.kind].issued) continue
    if (POLICY[secret.kind].echo && secret.variants.some((v) => exchange.sent.includes(v))) continue
    report(secret, exchange.where, text)
  }
  for (const cookie of cookies) {
    for (const secret of secretsIn(cookie)) if (!POLICY[secret.kind].cookie && !issuedHere.has(secret.value)) report(secret, `a Set-Cookie of ${exchange.where}`, cookie)
  }
  for (const [kind, value] of issued) if (issuedHere.has(value)) rememberSecret(kind, value)
}

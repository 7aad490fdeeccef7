// Environment -> one typed, frozen config object. The names are the outside contract of RUNTIME.md.
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import ipaddr from 'ipaddr.js'
import type { ProxyTrust } from './auth/client-address'
import { DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS } from './core/jobs'
import { parseAllowedHost, type AllowedHost } from './core/outbound'

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
  }
}

export type MailConfig =
  | { transport: 'smtp'; host: string; port: number; user?: string; pass?: string; from: string; secure: boolean }
  | { transport: 'resend'; apiKey: string; from: string; baseUrl: string | null }
  | { transport: 'log'; from: string }

export interface Config {
  production: boolean
  port: number
  host: string
  clinicalBasePath: string
  quizBasePath: string
  quizPort: number | null
  dataDir: string
  /** `null`: embedded PGlite in DATA_DIR/pg; `memory://`: in-memory PGlite; otherwise a postgres:// URL. */
  databaseUrl: string | null
  databasePoolSize: number
  /** PGLITE_SUSPEND_AFTER_S: the embedded database on disk closes after this long unused, and opens at the next query; 0 never. */
  pgliteSuspendAfterMs: number
  vectorDir: string
  /**
   * VECTOR_BACKEND: `auto` is pgvector when the database is a PostgreSQL server that has the extension (every process
   * then shares one index), else LanceDB under vectorDir; `lancedb` and `pgvector` choose (pgvector on PGlite too).
   */
  vectorBackend: 'auto' | 'lancedb' | 'pgvector'
  s3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string } | null
  maxUploadSize: number
  workers: number
  /** JOB_LEASE_MS: how long a claimed job is held without renewal by a worker that keeps no heartbeat. */
  jobLeaseMs: number
  /** JOB_HEARTBEAT_MS: how often a process's workers beat; a process silent for a few beats has its jobs reclaimed. */
  jobHeartbeatMs: number
  jwtSecret: string
  encryptionKey: Uint8Array
  appUrl: string | null
  corsOrigins: string[]
  /** Third-party script origins the Content-Security-Policy allows (spec 2, security headers). */
  cspScriptHosts: string[]
  /**
   * TRUST_PROXY: null reads the socket address; `{ hops }` takes the X-Forwarded-For entry that many places from
   * the right (`true` is one proxy); `{ proxies }` skips, from the right, the entries of the named address ranges.
   */
  trustProxy: ProxyTrust
  /** The bot challenge; siteKey and scriptUrl are what browser forms need to show its widget. */
  challenge: { secretKey: string; verifyUrl: string; siteKey: string | null; scriptUrl: string } | null
  oidcAllowInsecureIssuer: boolean
  ai: {
    baseUrl: string | null
    apiKey: string | null
    defaultModel: string | null
    embeddingModel: string | null
    sttModel: string | null
    ttsModel: string | null
    /** AI_TIMEOUT_MS: how long one gateway call may take before it is a 504 (default 120000). */
    timeoutMs: number
  }
  /**
   * AI_ALLOWED_HOSTS: hosts (any port) and host:port pairs an AI api_base may name although they resolve to a
   * loopback or private address; AI_BASE_URL's own host and port are allowed without being listed.
   */
  aiAllowedHosts: AllowedHost[]
  /**
   * WEBDAV_ALLOWED_HOSTS: the same for the file servers moderators import PDFs from (a clinic's or school's own
   * Nextcloud on its network), and the hosts that may be reached over plain http.
   */
  webdavAllowedHosts: AllowedHost[]
  mail: MailConfig
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** Start-up notes (generated secrets, derived keys) for the log; never the secrets themselves. */
  warnings: string[]
}

type Env = Record<string, string | undefined>

const DEFAULT_CHALLENGE_VERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify'
export const DEFAULT_CHALLENGE_SCRIPT_URL = 'https://challenges.cloudflare.com/turnstile/v0/api.js'
const SECRETS_FILE = 'secrets.json'
// Job timing bounds: a lease renews every third of itself, so shorter ones only add writes; a heartbeat much
// shorter than 100 ms is a write storm, one longer than 10 minutes leaves a crashed process's jobs waiting.
export const JOB_LEASE_MS_MIN = 1_000
export const JOB_LEASE_MS_MAX = 3_600_000
export const JOB_HEARTBEAT_MS_MIN = 100
export const JOB_HEARTBEAT_MS_MAX = 600_000
// spec 2, security headers: the content-delivery hosts and the bot-challenge host of script-src.
const DEFAULT_CSP_SCRIPT_HOSTS = 'https://cdn.jsdelivr.net,https://unpkg.com,https://challenges.cloudflare.com'

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = []
  const warnings: string[] = []
  const str = (name: string): string | null => {
    const v = env[name]?.trim()
    return v ? v : null
  }
  const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = str(name)
    if (raw === null) return fallback
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
      return fallback
    }
    return n
  }
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name)?.toLowerCase()
    if (raw === undefined || raw === null) return fallback
    if (['true', '1', 'yes', 'on'].includes(raw)) return true
    if (['false', '0', 'no', 'off'].includes(raw)) return false
    problems.push(`${name} must be true or false, got "${env[name]}"`)
    return fallback
  }
  const basePath = (name: string, fallback: string): string => {
    const raw = env[name] ?? fallback
    const trimmed = raw.trim().replace(/\/+$/, '')
    if (trimmed !== '' && !/^\/[A-Za-z0-9._~\-/]*$/.test(trimmed)) {
      problems.push(`${name} must be empty or a path starting with "/", got "${raw}"`)
      return fallback
    }
    return trimmed
  }
  const url = (name: string): string | null => {
    const raw = str(name)
    if (raw === null) return null
    try {
      const u = new URL(raw)
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol')
      return raw.replace(/\/+$/, '')
    } catch {
      problems.push(`${name} must be an http(s) URL, got "${raw}"`)
      return null
    }
  }

  // TRUST_PROXY: true/false, a number of proxy hops, or the proxies' addresses and ranges (comma-separated).
  const proxyTrust = (): ProxyTrust => {
    const raw = str('TRUST_PROXY')
    if (raw === null || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return null
    if (['true', 'yes', 'on'].includes(raw.toLowerCase())) return { hops: 1 }
    if (/^\d+$/.test(raw)) {
      const hops = Number(raw)
      if (hops >= 1 && hops <= 10) return { hops }
    } else {
      const proxies = raw.split(',').map((p) => p.trim()).filter(Boolean).map((p) => {
        try {
          return p.includes('/') ? ipaddr.parseCIDR(p) : ([ipaddr.parse(p), ipaddr.parse(p).kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number])
        } catch {
          return null
        }
      })
      if (proxies.length > 0 && proxies.every((p) => p !== null)) return { proxies: proxies as Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> }
    }
    problems.push(`TRUST_PROXY must be true, false, a number of proxy hops (1-10) or proxy addresses/ranges (10.0.0.1, 10.0.0.0/8), got "${raw}"`)
    return null
  }

  const production = str('NODE_ENV') === 'production'
  const dataDir = resolve(str('DATA_DIR') ?? './data')

  const databaseUrl = str('DATABASE_URL')
  if (databaseUrl && databaseUrl !== 'memory://' && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be unset, "memory://" or a postgres:// URL`)
  }

  const s3Vars = ['S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const
  const s3Set = s3Vars.filter((v) => str(v) !== null)
  if (s3Set.length > 0 && s3Set.length < s3Vars.length) {
    problems.push(`object storage needs all of ${s3Vars.join(', ')}; missing ${s3Vars.filter((v) => !s3Set.includes(v)).join(', ')}`)
  }

  const appUrl = url('APP_URL')
  const corsOrigins = (str('CORS_ORIGINS') ?? '').split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean)
  if (production && !appUrl && corsOrigins.length === 0) {
    problems.push('NODE_ENV=production needs APP_URL or CORS_ORIGINS (spec 2, CORS)')
  }

  // Each entry becomes a CSP source, so only plain http(s) origins (an optional leading `*.`) are accepted.
  const cspScriptHosts = (str('CSP_SCRIPT_HOSTS') ?? DEFAULT_CSP_SCRIPT_HOSTS).split(',')
    .map((h) => h.trim().replace(/\/+$/, '').toLowerCase()).filter(Boolean)
  for (const host of cspScriptHosts) {
    if (!/^https?:\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?$/.test(host)) {
      problems.push(`CSP_SCRIPT_HOSTS entries must be http(s) origins such as https://cdn.example.org, got "${host}"`)
    }
  }

  const oidcAllowInsecureIssuer = bool('OIDC_ALLOW_INSECURE_ISSUER', false)
  if (production && oidcAllowInsecureIssuer) problems.push('OIDC_ALLOW_INSECURE_ISSUER=true is refused when NODE_ENV=production')

  // Secrets: required in production; generated once and kept in DATA_DIR otherwise.
  let jwtSecret = str('JWT_SECRET')
  let keyText = str('DATA_ENCRYPTION_KEY')
  if (production) {
    if (!jwtSecret) problems.push('JWT_SECRET must be set when NODE_ENV=production')
    if (!keyText) problems.push('DATA_ENCRYPTION_KEY must be set when NODE_ENV=production (64 hex characters)')
  } else if (!jwtSecret || !keyText) {
    const kept = developmentSecrets(dataDir, problems)
    if (!jwtSecret) {
      jwtSecret = kept.jwtSecret
      warnings.push(`JWT_SECRET is not set: using a generated one kept in ${join(dataDir, SECRETS_FILE)}`)
    }
    if (!keyText) {
      keyText = kept.dataEncryptionKey
      warnings.push(`DATA_ENCRYPTION_KEY is not set: using a generated one kept in ${join(dataDir, SECRETS_FILE)}`)
    }
  }
  if (jwtSecret && jwtSecret.length < 32) {
    if (production) problems.push('JWT_SECRET must be at least 32 characters')
    else warnings.push('JWT_SECRET is shorter than 32 characters')
  }
  let encryptionKey: Uint8Array = new Uint8Array(32)
  if (keyText) {
    if (/^[0-9a-fA-F]{64}$/.test(keyText)) encryptionKey = Uint8Array.from(Buffer.from(keyText, 'hex'))
    else {
      encryptionKey = Uint8Array.from(createHash('sha256').update(keyText).digest())
      warnings.push('DATA_ENCRYPTION_KEY is not 64 hex characters: the key is derived from it by SHA-256')
    }
  }

  const allowedHosts = (name: string): AllowedHost[] => {
    const hosts: AllowedHost[] = []
    for (const entry of (str(name) ?? '').split(',').map((h) => h.trim()).filter(Boolean)) {
      const host = parseAllowedHost(entry)
      if (host) hosts.push(host)
      else problems.push(`${name} entries must be hosts or host:port pairs (gateway.internal, 10.0.0.5:4000, [fd00::5]:4000), got "${entry}"`)
    }
    return hosts
  }
  const aiAllowedHosts = allowedHosts('AI_ALLOWED_HOSTS')
  const webdavAllowedHosts = allowedHosts('WEBDAV_ALLOWED_HOSTS')

  const challengeKey = str('CHALLENGE_SECRET_KEY')
  const challengeVerifyUrl = url('CHALLENGE_VERIFY_URL') ?? DEFAULT_CHALLENGE_VERIFY_URL
  const challengeScriptUrl = url('CHALLENGE_SCRIPT_URL') ?? DEFAULT_CHALLENGE_SCRIPT_URL

  const smtpHost = str('SMTP_HOST')
  const resendKey = str('RESEND_API_KEY')
  const from = str('SMTP_FROM') ?? str('MAIL_FROM') ?? 'no-reply@localhost'
  const mail: MailConfig = smtpHost
    ? {
        transport: 'smtp', host: smtpHost, port: int('SMTP_PORT', 587, 1, 65535),
        user: str('SMTP_USER') ?? undefined, pass: str('SMTP_PASS') ?? undefined, from, secure: bool('SMTP_SECURE', false),
      }
    : resendKey
      ? { transport: 'resend', apiKey: resendKey, from: str('MAIL_FROM') ?? from, baseUrl: url('RESEND_BASE_URL') }
      : { transport: 'log', from }

  const jobLeaseMs = int('JOB_LEASE_MS', DEFAULT_LEASE_MS, JOB_LEASE_MS_MIN, JOB_LEASE_MS_MAX)
  const jobHeartbeatMs = int('JOB_HEARTBEAT_MS', DEFAULT_HEARTBEAT_MS, JOB_HEARTBEAT_MS_MIN, JOB_HEARTBEAT_MS_MAX)
  // A live process keeps its jobs by its heartbeat: one no faster than the lease would make a crash wait out the lease again.
  if (jobHeartbeatMs >= jobLeaseMs) problems.push(`JOB_HEARTBEAT_MS (${jobHeartbeatMs}) must be shorter than JOB_LEASE_MS (${jobLeaseMs})`)

  const vectorBackend = (str('VECTOR_BACKEND') ?? 'auto') as Config['vectorBackend']
  if (!['auto', 'lancedb', 'pgvector'].includes(vectorBackend)) problems.push(`VECTOR_BACKEND must be auto, lancedb or pgvector, got "${vectorBackend}"`)

  const logLevel = (str('LOG_LEVEL') ?? 'info') as Config['logLevel']
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) problems.push(`LOG_LEVEL must be debug, info, warn, error or silent`)

  const config: Config = {
    production,
    port: int('PORT', 3000, 0, 65535),
    host: str('HOST') ?? '0.0.0.0',
    clinicalBasePath: basePath('CLINICAL_BASE_PATH', ''),
    quizBasePath: basePath('QUIZ_BASE_PATH', '/quiz'),
    quizPort: str('QUIZ_PORT') === null ? null : int('QUIZ_PORT', 0, 0, 65535),
    dataDir,
    databaseUrl,
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 1000),
    pgliteSuspendAfterMs: int('PGLITE_SUSPEND_AFTER_S', 300, 0, 86_400) * 1000,
    vectorDir: str('VECTOR_DIR') ?? join(dataDir, 'lance'),
    vectorBackend,
    s3: s3Set.length === s3Vars.length
      ? {
          endpoint: str('S3_ENDPOINT')!, bucket: str('S3_BUCKET')!, region: str('S3_REGION')!,
          accessKeyId: str('S3_ACCESS_KEY_ID')!, secretAccessKey: str('S3_SECRET_ACCESS_KEY')!,
        }
      : null,
    maxUploadSize: int('MAX_UPLOAD_SIZE', 52428800, 1),
    workers: int('WORKERS', 1, 0, 64),
    jobLeaseMs,
    jobHeartbeatMs,
    jwtSecret: jwtSecret ?? '',
    encryptionKey,
    appUrl,
    corsOrigins,
    cspScriptHosts,
    trustProxy: proxyTrust(),
    challenge: challengeKey
      ? { secretKey: challengeKey, verifyUrl: challengeVerifyUrl, siteKey: str('CHALLENGE_SITE_KEY'), scriptUrl: challengeScriptUrl }
      : null,
    oidcAllowInsecureIssuer,
    ai: {
      baseUrl: url('AI_BASE_URL'),
      apiKey: str('AI_API_KEY'),
      defaultModel: str('AI_DEFAULT_MODEL'),
      embeddingModel: str('EMBEDDING_MODEL'),
      sttModel: str('STT_MODEL'),
      ttsModel: str('TTS_MODEL'),
      timeoutMs: int('AI_TIMEOUT_MS', 120_000, 100, 600_000),
    },
    aiAllowedHosts,
    webdavAllowedHosts,
    mail,
    logLevel,
    warnings,
  }
  if (config.clinicalBasePath === config.quizBasePath) problems.push('CLINICAL_BASE_PATH and QUIZ_BASE_PATH must differ')
  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(config)
}

/** The origin links in mails and callback addresses use: APP_URL, never a request's Host header (a client controls it). */
export const publicOrigin = (config: Pick<Config, 'appUrl' | 'port'>): string => config.appUrl ?? `http://localhost:${config.port}`

/**
 * Secrets generated on first start outside production, kept (mode 0600) so restarts keep sessions and data
 * readable. A kept value is never replaced: the key may be the only way to read data encrypted with it.
 */
function developmentSecrets(dataDir: string, problems: string[]): { jwtSecret: string; dataEncryptionKey: string } {
  const file = join(dataDir, SECRETS_FILE)
  let kept: { jwtSecret?: unknown; dataEncryptionKey?: unknown } = {}
  if (existsSync(file)) {
    try {
      kept = (JSON.parse(readFileSync(file, 'utf8')) as typeof kept | null) ?? {}
    } catch (err) {
      problems.push(`${file} could not be read (${err instanceof Error ? err.message : String(err)}): repair it, ` +
        'or delete it to generate new secrets (data encrypted with the old key becomes unreadable)')
      return { jwtSecret: '', dataEncryptionKey: '' }
    }
  }
  const keptText = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null)
  const jwtSecret = keptText(kept.jwtSecret)
  const dataEncryptionKey = keptText(kept.dataEncryptionKey)
  if (jwtSecret && dataEncryptionKey) return { jwtSecret, dataEncryptionKey }
  const secrets = {
    jwtSecret: jwtSecret ?? randomBytes(48).toString('base64url'),
    dataEncryptionKey: dataEncryptionKey ?? randomBytes(32).toString('hex'),
  }
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 })
  chmodSync(file, 0o600)
  return secrets
}

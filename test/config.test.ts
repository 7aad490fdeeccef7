// Environment -> config (src/config.ts): RUNTIME.md's defaults, its production refusals, invalid values named
// in the error, and development secrets kept in DATA_DIR.
import { afterAll, describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ConfigError, loadConfig } from '../src/config'

const dirs: string[] = []
/** A DATA_DIR of its own (not created yet: the config creates it when it writes secrets). */
const dataDir = () => {
  const parent = mkdtempSync(join(tmpdir(), 'config-test-'))
  dirs.push(parent)
  return join(parent, 'data')
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const JWT_SECRET = 'a-production-secret-of-at-least-32-characters'
const HEX_KEY = 'ab'.repeat(32)
/** Everything production needs; tests remove or change one thing at a time. */
const production = (overrides: Record<string, string | undefined> = {}) => ({
  NODE_ENV: 'production',
  DATA_DIR: dataDir(),
  JWT_SECRET,
  DATA_ENCRYPTION_KEY: HEX_KEY,
  APP_URL: 'https://clinic.example.org',
  ...overrides,
})

/** The problems of the ConfigError that loadConfig throws (fails the test when it does not throw). */
function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems
  }
  throw new Error('loadConfig accepted the configuration')
}

describe('config defaults (RUNTIME.md)', () => {
  it('uses the documented defaults when only DATA_DIR is set', () => {
    const dir = dataDir()
    const config = loadConfig({ DATA_DIR: dir })
    expect(config).toMatchObject({
      production: false,
      port: 3000,
      host: '0.0.0.0',
      quizBasePath: '/quiz',
      clinicalBasePath: '',
      quizPort: null,
      dataDir: dir,
      databaseUrl: null,
      pgliteSuspendAfterMs: 300_000,
      vectorDir: join(dir, 'lance'),
      s3: null,
      maxUploadSize: 52428800,
      workers: 1,
      trustProxy: null,
      challenge: null,
      oidcAllowInsecureIssuer: false,
      appUrl: null,
      corsOrigins: [],
      cspScriptHosts: ['https://cdn.jsdelivr.net', 'https://unpkg.com', 'https://challenges.cloudflare.com'],
    })
    expect(config.mail.transport).toBe('log')
    expect(config.ai).toEqual({ baseUrl: null, apiKey: null, defaultModel: null, embeddingModel: null, sttModel: null, ttsModel: null, timeoutMs: 120_000 })
  })

  it('DATA_DIR defaults to ./data, resolved against the working directory', () => {
    const config = loadConfig({ JWT_SECRET, DATA_ENCRYPTION_KEY: HEX_KEY })
    expect(config.dataDir).toBe(resolve('./data'))
    expect(config.vectorDir).toBe(join(resolve('./data'), 'lance'))
  })

  it('the config object is frozen', () => {
    const config = loadConfig({ DATA_DIR: dataDir() })
    expect(Object.isFrozen(config)).toBe(true)
  })

  it('reads the documented variables', () => {
    const config = loadConfig({
      DATA_DIR: dataDir(),
      PORT: '8080',
      HOST: '127.0.0.1',
      QUIZ_BASE_PATH: '/exam/',
      CLINICAL_BASE_PATH: '/clinic',
      QUIZ_PORT: '8081',
      DATABASE_URL: 'postgresql://app@db:5432/app',
      VECTOR_DIR: 's3://bucket/lance',
      MAX_UPLOAD_SIZE: '1000',
      WORKERS: '0',
      TRUST_PROXY: 'true',
      CORS_ORIGINS: 'https://a.example, https://b.example/',
      CSP_SCRIPT_HOSTS: 'https://cdn.example.org/, https://*.Challenge.example:8443',
      CHALLENGE_SECRET_KEY: 'challenge',
      AI_BASE_URL: 'http://127.0.0.1:4000/v1/',
      EMBEDDING_MODEL: 'text-embedding-3-small',
    })
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      quizBasePath: '/exam',
      clinicalBasePath: '/clinic',
      quizPort: 8081,
      databaseUrl: 'postgresql://app@db:5432/app',
      vectorDir: 's3://bucket/lance',
      maxUploadSize: 1000,
      workers: 0,
      trustProxy: { hops: 1 },
      corsOrigins: ['https://a.example', 'https://b.example'],
      cspScriptHosts: ['https://cdn.example.org', 'https://*.challenge.example:8443'],
    })
    expect(config.challenge?.secretKey).toBe('challenge')
    expect(config.ai.baseUrl).toBe('http://127.0.0.1:4000/v1')
    expect(config.ai.embeddingModel).toBe('text-embedding-3-small')
  })

  it('PGLITE_SUSPEND_AFTER_S is read in seconds; 0 keeps the embedded database open', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), PGLITE_SUSPEND_AFTER_S: '45' }).pgliteSuspendAfterMs).toBe(45_000)
    expect(loadConfig({ DATA_DIR: dataDir(), PGLITE_SUSPEND_AFTER_S: '0' }).pgliteSuspendAfterMs).toBe(0)
  })
  it('DATABASE_URL=memory:// selects the in-memory database', () => {
    expect(loadConfig({ DATA_DIR: dataDir(), DATABASE_URL: 'memory://' }).databaseUrl).toBe('memory://')
  })

  it('SMTP_HOST selects SMTP; RESEND_API_KEY selects Resend when there is no SMTP host', () => {
    const smtp = loadConfig({ DATA_DIR: dataDir(), SMTP_HOST: 'mail.example', SMTP_PORT: '2525', SMTP_FROM: 'a@example.org', RESEND_API_KEY: 're_x' })
    expect(smtp.mail).toMatchObject({ transport: 'smtp', host: 'mail.example', port: 2525, from: 'a@example.org', secure: false })
    const resend = loadConfig({ DATA_DIR: dataDir(), RESEND_API_KEY: 're_x', MAIL_FROM: 'b@example.org' })
    expect(resend.mail).toEqual({ transport: 'resend', apiKey: 're_x', from: 'b@example.org', baseUrl: null })
  })
})

describe('production refusals', () => {
  it('accepts a complete production configuration without warnings and writes no secrets file', () => {
    const env = production()
    const config = loadConfig(env)
    expect(config.production).toBe(true)
    expect(config.warnings).toEqual([])
    expect(existsSync(join(env.DATA_DIR, 'secrets.json'))).toBe(false)
  })

  it('refuses to start without JWT_SECRET', () => {
    const problems = problemsOf(production({ JWT_SECRET: undefined }))
    expect(problems).toEqual([expect.stringContaining('JWT_SECRET must be set when NODE_ENV=production')])
  })

  it('refuses a JWT_SECRET shorter than 32 characters', () => {
    expect(problemsOf(production({ JWT_SECRET: 'short' }))).toEqual([expect.stringContaining('JWT_SECRET must be at least 32 characters')])
  })

  it('refuses to start without DATA_ENCRYPTION_KEY', () => {
    const problems = problemsOf(production({ DATA_ENCRYPTION_KEY: undefined }))
    expect(problems).toEqual([expect.stringContaining('DATA_ENCRYPTION_KEY must be set when NODE_ENV=production')])
  })

  it('refuses to start with neither APP_URL nor CORS_ORIGINS, and accepts either one', () => {
    const problems = problemsOf(production({ APP_URL: undefined }))
    expect(problems).toEqual([expect.stringContaining('APP_URL or CORS_ORIGINS')])
    expect(loadConfig(production({ APP_URL: undefined, CORS_ORIGINS: 'https://clinic.example.org' })).corsOrigins)
      .toEqual(['https://clinic.example.org'])
  })

  it('refuses OIDC_ALLOW_INSECURE_ISSUER=true in production, allows it outside', () => {
    expect(problemsOf(production({ OIDC_ALLOW_INSECURE_ISSUER: 'true' })))
      .toEqual([expect.stringContaining('OIDC_ALLOW_INSECURE_ISSUER=true is refused when NODE_ENV=production')])
    expect(loadConfig({ DATA_DIR: dataDir(), OIDC_ALLOW_INSECURE_ISSUER: 'true' }).oidcAllowInsecureIssuer).toBe(true)
  })

  it('lists every problem at once, and the error message carries them', () => {
    let thrown: unknown = null
    try {
      loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir(), OIDC_ALLOW_INSECURE_ISSUER: 'true' })
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    const { problems, message } = thrown as ConfigError
    expect(problems).toHaveLength(4)
    for (const name of ['JWT_SECRET', 'DATA_ENCRYPTION_KEY', 'APP_URL', 'OIDC_ALLOW_INSECURE_ISSUER']) {
      expect(problems.some((p) => p.includes(name))).toBe(true)
      expect(message).toContain(name)
    }
  })
})

describe('invalid values are refused with the variable named', () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['WORKERS', { WORKERS: '-1' }],
    ['WORKERS', { WORKERS: '1.5' }],
    ['MAX_UPLOAD_SIZE', { MAX_UPLOAD_SIZE: '0' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['DATABASE_POOL_SIZE', { DATABASE_POOL_SIZE: '0' }],
    ['PGLITE_SUSPEND_AFTER_S', { PGLITE_SUSPEND_AFTER_S: '-5' }],
    ['PGLITE_SUSPEND_AFTER_S', { PGLITE_SUSPEND_AFTER_S: 'soon' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'maybe' }],
    ['TRUST_PROXY', { TRUST_PROXY: '11' }],
    ['TRUST_PROXY', { TRUST_PROXY: '10.0.0.1, 10.0.0.0/40' }],
    ['QUIZ_BASE_PATH', { QUIZ_BASE_PATH: 'quiz' }],
    ['APP_URL', { APP_URL: 'ftp://clinic.example.org' }],
    ['AI_BASE_URL', { AI_BASE_URL: 'not a url' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
    ['QUIZ_PORT', { QUIZ_PORT: 'x' }],
    ['CSP_SCRIPT_HOSTS', { CSP_SCRIPT_HOSTS: "https://cdn.example.org 'unsafe-inline'" }],
  ]
  for (const [name, env] of cases) {
    it(`${name}=${Object.values(env)[0]}`, () => {
      const problems = problemsOf({ DATA_DIR: dataDir(), ...env })
      expect(problems).toHaveLength(1)
      expect(problems[0]).toContain(name)
    })
  }

  it('refuses the two services on one base path', () => {
    const problems = problemsOf({ DATA_DIR: dataDir(), QUIZ_BASE_PATH: '/', CLINICAL_BASE_PATH: '' })
    expect(problems).toEqual([expect.stringContaining('CLINICAL_BASE_PATH and QUIZ_BASE_PATH must differ')])
  })

  it('refuses a partial object storage configuration and names what is missing', () => {
    const problems = problemsOf({ DATA_DIR: dataDir(), S3_ENDPOINT: 'https://s3.example', S3_BUCKET: 'docs' })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('missing S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY')
  })

  it('accepts a complete object storage configuration', () => {
    const config = loadConfig({
      DATA_DIR: dataDir(), S3_ENDPOINT: 'https://s3.example', S3_BUCKET: 'docs', S3_REGION: 'eu-1',
      S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 'secret',
    })
    expect(config.s3).toEqual({ endpoint: 'https://s3.example', bucket: 'docs', region: 'eu-1', accessKeyId: 'id', secretAccessKey: 'secret' })
  })
})

describe('secrets outside production', () => {
  it('generates JWT_SECRET and DATA_ENCRYPTION_KEY once into DATA_DIR/secrets.json (mode 0600) and reuses them', () => {
    const dir = dataDir()
    const first = loadConfig({ DATA_DIR: dir })
    const file = join(dir, 'secrets.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { jwtSecret: string; dataEncryptionKey: string }
    expect(kept.jwtSecret.length).toBeGreaterThanOrEqual(32)
    expect(kept.dataEncryptionKey).toMatch(/^[0-9a-f]{64}$/)
    expect(first.jwtSecret).toBe(kept.jwtSecret)
    expect(Buffer.from(first.encryptionKey).toString('hex')).toBe(kept.dataEncryptionKey)
    expect(first.warnings).toEqual([
      expect.stringContaining('JWT_SECRET is not set'),
      expect.stringContaining('DATA_ENCRYPTION_KEY is not set'),
    ])
    // the warnings name the file, never the secrets
    expect(first.warnings.join(' ')).not.toContain(kept.jwtSecret)
    expect(first.warnings.join(' ')).not.toContain(kept.dataEncryptionKey)

    const second = loadConfig({ DATA_DIR: dir })
    expect(second.jwtSecret).toBe(first.jwtSecret)
    expect(second.encryptionKey).toEqual(first.encryptionKey)
  })

  it('secrets set in the environment win over the kept ones', () => {
    const dir = dataDir()
    loadConfig({ DATA_DIR: dir })
    const config = loadConfig({ DATA_DIR: dir, JWT_SECRET, DATA_ENCRYPTION_KEY: HEX_KEY })
    expect(config.jwtSecret).toBe(JWT_SECRET)
    expect(Buffer.from(config.encryptionKey).toString('hex')).toBe(HEX_KEY)
    expect(config.warnings).toEqual([])
  })

  it('uses a 64-hex DATA_ENCRYPTION_KEY as the key itself', () => {
    const config = loadConfig({ DATA_DIR: dataDir(), JWT_SECRET, DATA_ENCRYPTION_KEY: HEX_KEY.toUpperCase() })
    expect(config.encryptionKey).toEqual(Uint8Array.from(Buffer.from(HEX_KEY, 'hex')))
  })

  it('derives the key from any other DATA_ENCRYPTION_KEY by SHA-256, with a warning', () => {
    const passphrase = 'correct horse battery staple'
    const config = loadConfig({ DATA_DIR: dataDir(), JWT_SECRET, DATA_ENCRYPTION_KEY: passphrase })
    expect(config.encryptionKey).toEqual(Uint8Array.from(createHash('sha256').update(passphrase).digest()))
    expect(config.encryptionKey).toHaveLength(32)
    expect(config.warnings).toEqual([expect.stringContaining('derived from it by SHA-256')])
  })

  it('a damaged secrets file is refused with a ConfigError naming it, not replaced', () => {
    const dir = dataDir()
    loadConfig({ DATA_DIR: dir })
    const file = join(dir, 'secrets.json')
    writeFileSync(file, '{"jwtSecret": "trunc')
    const problems = problemsOf({ DATA_DIR: dir })
    expect(problems).toEqual([expect.stringContaining(file)])
    expect(readFileSync(file, 'utf8')).toBe('{"jwtSecret": "trunc')
  })

  it('a secrets file missing one value keeps the other: the encryption key is never replaced', () => {
    const dir = dataDir()
    const first = loadConfig({ DATA_DIR: dir })
    const file = join(dir, 'secrets.json')
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { jwtSecret: string; dataEncryptionKey: string }
    writeFileSync(file, JSON.stringify({ dataEncryptionKey: kept.dataEncryptionKey }), { mode: 0o600 })
    const second = loadConfig({ DATA_DIR: dir })
    expect(second.encryptionKey).toEqual(first.encryptionKey)
    expect(second.jwtSecret.length).toBeGreaterThanOrEqual(32)
    const third = loadConfig({ DATA_DIR: dir })
    expect(third.jwtSecret).toBe(second.jwtSecret)
  })
})

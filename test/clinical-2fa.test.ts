// Spec 2, Two-factor authentication, Backup code, Two-factor and Limits: setup, enable, login with TOTP and
// backup codes, disable and regeneration through the real app, on each database target. The app's clock is
// injected, so the tests compute the TOTP codes of known moments with otplib.
import { afterAll, beforeAll, beforeEach, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { SQL } from 'bun'
import { generate } from 'otplib'
import { ACCOUNT_SECURITY_RULE, LOGIN_RULE } from '../plugins/clinical/services/accounts'
import {
  BACKUP_CODE_ALPHABET, BACKUP_CODE_COUNT, TOTP_DIGITS, TOTP_ISSUER, TOTP_PERIOD_S, TOTP_WINDOW_STEPS, TWO_FACTOR_MESSAGES,
} from '../plugins/clinical/services/two-factor'
import { sha256Hex } from '../src/core/crypto'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { CLINICAL_PASSWORD, MOBILE, flushAudit, freshIp, insertUser, signIn, uniqueEmail } from './support/clinical'
import { waitFor } from './support/wait'

setDefaultTimeout(30_000)

const STEP_MS = TOTP_PERIOD_S * 1000
/** 10 seconds into a time step, far from the real clock: only the injected clock can make these codes valid. */
const START_MS = Date.UTC(2031, 0, 6, 9, 0, 10)
const BACKUP_CODE_SHAPE = new RegExp(`^[${BACKUP_CODE_ALPHABET}]{5}-[${BACKUP_CODE_ALPHABET}]{5}$`)
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const PATHS = {
  setup: '/api/auth/setup-2fa',
  verify: '/api/auth/verify-2fa',
  disable: '/api/auth/disable-2fa',
  regenerate: '/api/auth/2fa/backup-codes',
  count: '/api/auth/2fa/backup-codes/count',
}

const stepOf = (ms: number) => Math.floor(ms / STEP_MS)
const codeForStep = (secret: string, step: number) => generate({ secret, epoch: step * TOTP_PERIOD_S })
/** The same backup code as a careless user types it: lower case, a space for the dash, padding around. */
const sloppy = (code: string) => `  ${code.toLowerCase().replace('-', ' ')} `

describe('two-factor limits', () => {
  it('TOTP: 30 second step, 6 digits, one step either way; 10 backup codes per set; account routes 20 per 15 minutes', () => {
    expect(TOTP_PERIOD_S).toBe(30)
    expect(TOTP_DIGITS).toBe(6)
    expect(TOTP_WINDOW_STEPS).toBe(1)
    expect(BACKUP_CODE_COUNT).toBe(10)
    expect(ACCOUNT_SECURITY_RULE).toMatchObject({ limit: 20, windowS: 15 * 60 })
    expect(LOGIN_RULE).toMatchObject({ limit: 10, windowS: 15 * 60 })
  })

  it('the backup code alphabet leaves out 0, O, 1 and I', () => {
    expect(BACKUP_CODE_ALPHABET).toHaveLength(32)
    for (const c of '0O1I') expect(BACKUP_CODE_ALPHABET).not.toContain(c)
  })
})

describe.each(databaseTargets())('two-factor authentication [%s]', (target) => {
  let t: TestApp
  let clock = START_MS

  beforeAll(async () => {
    t = await startTestApp({ target, boot: { now: () => clock } })
  })
  afterAll(() => t?.close())
  // Every test starts a few steps later, so no test's accepted step shadows another's codes.
  beforeEach(() => {
    clock += 5 * STEP_MS
  })

  interface Member { id: number; email: string; token: string; ip: string }

  /** A verified user with a mobile session; its two-factor requests come from an address of its own. */
  async function member(tag: string): Promise<Member> {
    const email = uniqueEmail(tag)
    const id = await insertUser(t, { email })
    const { token } = await signIn(t, email, { ip: freshIp() })
    return { id, email, token, ip: freshIp() }
  }

  const post = (m: Member, path: string, body?: unknown) => t.post(path, body, { token: m.token, ip: m.ip })

  async function setup(m: Member) {
    const res = await post(m, PATHS.setup)
    const body = (await res.json()) as { success: boolean; secret: string; otpauthUrl: string; qrCode: string }
    expect(res.status, JSON.stringify(body)).toBe(200)
    return body
  }

  /** Setup plus verify with the current code; the secret and the backup codes the enable returned. */
  async function enable(m: Member) {
    const { secret } = await setup(m)
    const res = await post(m, PATHS.verify, { code: await codeForStep(secret, stepOf(clock)) })
    const body = (await res.json()) as { success: boolean; backupCodes: string[] }
    expect(res.status, JSON.stringify(body)).toBe(200)
    // The enable spent the current step: later logins move on.
    clock += STEP_MS
    return { secret, backupCodes: body.backupCodes }
  }

  /** A login from an address of its own (login allows 10 per address per 15 minutes). */
  const login = (m: Member, extra: Record<string, string> = {}) =>
    t.post('/api/auth/login', { email: m.email, password: CLINICAL_PASSWORD, ...extra }, { headers: MOBILE, ip: freshIp() })

  async function row(id: number) {
    const [r] = await t.db.sql<{
      totp_secret: string | null; totp_enabled: boolean; totp_last_step: number | string | null; totp_backup_codes: string[]; codes_text: string
    }>`select totp_secret, totp_enabled, totp_last_step, totp_backup_codes, totp_backup_codes::text as codes_text
       from clinical.users where id = ${id}`
    return r!
  }

  async function audits(userId: number, action: string) {
    await flushAudit(t)
    return t.db.sql<{ details: string }>`
      select details from clinical.audit_log where user_id = ${userId} and action = ${action} order by id`
  }

  async function remaining(m: Member): Promise<number> {
    const res = await t.get(PATHS.count, { token: m.token, ip: m.ip })
    const body = (await res.json()) as { success: boolean; remaining: number }
    expect(res.status).toBe(200)
    expect(body.success).toBe(true)
    return body.remaining
  }

  describe('setup (disabled -> disabled with a pending secret)', () => {
    it('returns the secret, its otpauth URI and a PNG QR code as a data URI; the secret is sealed at rest and 2FA stays off', async () => {
      const m = await member('setup')
      const body = await setup(m)
      expect(body.success).toBe(true)
      expect(body.secret).toMatch(/^[A-Z2-7]{32}$/)
      const uri = new URL(body.otpauthUrl)
      expect(decodeURIComponent(body.otpauthUrl.split('?')[0]!)).toBe(`otpauth://totp/${TOTP_ISSUER}:${m.email}`)
      expect(uri.searchParams.get('secret')).toBe(body.secret)
      expect(uri.searchParams.get('issuer')).toBe(TOTP_ISSUER)

      expect(body.qrCode).toStartWith('data:image/png;base64,')
      const png = Buffer.from(body.qrCode.slice('data:image/png;base64,'.length), 'base64')
      expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE)
      expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR')

      const stored = await row(m.id)
      expect(stored.totp_enabled).toBe(false)
      expect(stored.totp_secret).toStartWith('enc:v1:')
      expect(stored.totp_secret).not.toContain(body.secret)
      expect(t.booted.core.crypto.openText(stored.totp_secret!)).toBe(body.secret)
      const me = (await (await t.get('/api/auth/me', { token: m.token, ip: m.ip })).json()) as { user: { totp_enabled: boolean } }
      expect(me.user.totp_enabled).toBe(false)
    })

    it('a pending setup does not change login: no code is asked for', async () => {
      const m = await member('pending-login')
      await setup(m)
      const res = await login(m)
      expect(res.status).toBe(200)
      expect(((await res.json()) as { token?: string }).token).toBeString()
    })

    it('setup again replaces the pending secret: codes of the old one no longer enable', async () => {
      const m = await member('setup-again')
      const first = await setup(m)
      const second = await setup(m)
      expect(second.secret).not.toBe(first.secret)
      const stale = await post(m, PATHS.verify, { code: await codeForStep(first.secret, stepOf(clock)) })
      expect(stale.status).toBe(400)
      const fresh = await post(m, PATHS.verify, { code: await codeForStep(second.secret, stepOf(clock)) })
      expect(fresh.status).toBe(200)
    })

    it('refuses a single sign-on account with 400 and an SSO-aware message; no secret is stored', async () => {
      const m = await member('sso')
      await t.db.sql`update clinical.users set can_local_auth = false where id = ${m.id}`
      const res = await post(m, PATHS.setup)
      expect(res.status).toBe(400)
      const body = (await res.json()) as { success: boolean; error: string }
      expect(body.success).toBe(false)
      expect(body.error).toBe(TWO_FACTOR_MESSAGES.ssoAccount)
      expect(body.error).toContain('single sign-on')
      expect((await row(m.id)).totp_secret).toBeNull()
    })

    it('refuses setup with 400 while 2FA is enabled, and keeps the enabled secret', async () => {
      const m = await member('setup-enabled')
      await enable(m)
      const before = await row(m.id)
      const res = await post(m, PATHS.setup)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe(TWO_FACTOR_MESSAGES.alreadyEnabled)
      expect((await row(m.id)).totp_secret).toBe(before.totp_secret)
    })
  })

  describe('verify-2fa (disabled -> enabled)', () => {
    it('a wrong code answers 400 and 2FA stays off', async () => {
      const m = await member('wrong-enable')
      const { secret } = await setup(m)
      const right = await codeForStep(secret, stepOf(clock))
      const wrong = right === '000000' ? '111111' : '000000'
      const res = await post(m, PATHS.verify, { code: wrong })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe(TWO_FACTOR_MESSAGES.invalidCode)
      // a code of a step two away is wrong too
      expect((await post(m, PATHS.verify, { code: await codeForStep(secret, stepOf(clock) + 2) })).status).toBe(400)
      expect((await row(m.id)).totp_enabled).toBe(false)
    })

    it('without a pending setup answers 400', async () => {
      const m = await member('no-setup')
      const res = await post(m, PATHS.verify, { code: '123456' })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe(TWO_FACTOR_MESSAGES.noPendingSetup)
      expect((await row(m.id)).totp_enabled).toBe(false)
    })

    it('enables 2FA and returns 10 distinct backup codes XXXXX-XXXXX; the database holds only their SHA-256; audit 2fa_enabled', async () => {
      const m = await member('enable')
      const { backupCodes } = await enable(m)
      expect(backupCodes).toHaveLength(BACKUP_CODE_COUNT)
      expect(new Set(backupCodes).size).toBe(BACKUP_CODE_COUNT)
      for (const code of backupCodes) expect(code).toMatch(BACKUP_CODE_SHAPE)

      const stored = await row(m.id)
      expect(stored.totp_enabled).toBe(true)
      expect(stored.totp_backup_codes).toEqual(backupCodes.map((c) => sha256Hex(c.replace('-', ''))))
      for (const code of backupCodes) {
        expect(stored.codes_text).not.toContain(code)
        expect(stored.codes_text).not.toContain(code.replace('-', ''))
      }
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT)
      const me = (await (await t.get('/api/auth/me', { token: m.token, ip: m.ip })).json()) as { user: { totp_enabled: boolean } }
      expect(me.user.totp_enabled).toBe(true)
      expect(await audits(m.id, '2fa_enabled')).toHaveLength(1)
    })

    it('a second verify-2fa answers 400: 2FA is already enabled, and no new codes are issued', async () => {
      const m = await member('verify-twice')
      const { secret } = await enable(m)
      const codesBefore = (await row(m.id)).totp_backup_codes
      const res = await post(m, PATHS.verify, { code: await codeForStep(secret, stepOf(clock)) })
      expect(res.status).toBe(400)
      expect((await row(m.id)).totp_backup_codes).toEqual(codesBefore)
    })

    it('an enable while the account still holds backup codes returns none and keeps the set', async () => {
      const m = await member('enable-kept')
      const { backupCodes } = await enable(m)
      // 2FA switched off outside the disable route (which would clear the codes), e.g. straight in the database
      await t.db.sql`update clinical.users set totp_enabled = false where id = ${m.id}`
      const { secret } = await setup(m)
      const res = await post(m, PATHS.verify, { code: await codeForStep(secret, stepOf(clock)) })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { backupCodes: string[] }).backupCodes).toEqual([])
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT)
      clock += STEP_MS
      expect((await login(m, { backupCode: backupCodes[0]! })).status).toBe(200)
    })
  })

  describe('login with TOTP', () => {
    it('without a code: 200 {requires2FA: true} and no session; a wrong code: 401; the current code: 200 with a session', async () => {
      const m = await member('login-totp')
      const { secret } = await enable(m)
      const missing = await login(m)
      expect(missing.status).toBe(200)
      expect(await missing.json()).toEqual({ requires2FA: true })

      const right = await codeForStep(secret, stepOf(clock))
      const wrong = await login(m, { totpCode: right === '000000' ? '111111' : '000000' })
      expect(wrong.status).toBe(401)
      expect(((await wrong.json()) as { error: string }).error).toBe('Invalid two-factor code')
      const failures = await audits(m.id, 'login_failed')
      expect(failures.some((a) => a.details.includes('invalid_2fa_code'))).toBe(true)

      const ok = await login(m, { totpCode: right })
      expect(ok.status).toBe(200)
      const body = (await ok.json()) as { token: string; user: { totp_enabled: boolean } }
      expect(body.user.totp_enabled).toBe(true)
      expect((await t.get('/api/auth/me', { token: body.token })).status).toBe(200)
    })

    it('an older (bcrypt) password hash is replaced only once the whole login succeeded, second factor included', async () => {
      const m = await member('login-rehash')
      const { secret } = await enable(m)
      const bcrypt = await Bun.password.hash(CLINICAL_PASSWORD, { algorithm: 'bcrypt', cost: 4 })
      await t.db.sql`update clinical.users set password_hash = ${bcrypt} where id = ${m.id}`
      const stored = async () => (await t.db.sql<{ password_hash: string }>`select password_hash from clinical.users where id = ${m.id}`)[0]!.password_hash
      expect(await (await login(m)).json()).toEqual({ requires2FA: true })
      const right = await codeForStep(secret, stepOf(clock))
      expect((await login(m, { totpCode: right === '000000' ? '111111' : '000000' })).status).toBe(401)
      expect(await stored()).toBe(bcrypt)
      expect((await login(m, { totpCode: right })).status).toBe(200)
      expect(await stored()).toStartWith('$argon2id$')
    })

    it('accepts the code of the previous step and of the next step (one step either way)', async () => {
      const m = await member('window')
      const { secret } = await enable(m)
      // past the step the enable spent, so the previous step is an unused one
      clock += 2 * STEP_MS
      const previous = await login(m, { totpCode: await codeForStep(secret, stepOf(clock) - 1) })
      expect(previous.status).toBe(200)
      clock += 3 * STEP_MS
      const next = await login(m, { totpCode: await codeForStep(secret, stepOf(clock) + 1) })
      expect(next.status).toBe(200)
      expect(Number((await row(m.id)).totp_last_step)).toBe(stepOf(clock) + 1)
    })

    it('refuses the codes of two steps before and two steps after', async () => {
      const m = await member('window-edge')
      const { secret } = await enable(m)
      expect((await login(m, { totpCode: await codeForStep(secret, stepOf(clock) - 2) })).status).toBe(401)
      expect((await login(m, { totpCode: await codeForStep(secret, stepOf(clock) + 2) })).status).toBe(401)
      // the same moment's own code still works: the refusals were about the window
      expect((await login(m, { totpCode: await codeForStep(secret, stepOf(clock)) })).status).toBe(200)
    })

    it('refuses a replayed code, and an older step once a newer one was accepted', async () => {
      const m = await member('replay')
      const { secret } = await enable(m)
      const code = await codeForStep(secret, stepOf(clock))
      expect((await login(m, { totpCode: code })).status).toBe(200)
      expect((await login(m, { totpCode: code })).status).toBe(401)

      clock += 3 * STEP_MS
      expect((await login(m, { totpCode: await codeForStep(secret, stepOf(clock) + 1) })).status).toBe(200)
      expect((await login(m, { totpCode: await codeForStep(secret, stepOf(clock)) })).status).toBe(401)
    })

    it('refuses the code that enabled 2FA at login', async () => {
      const m = await member('enable-replay')
      const { secret } = await setup(m)
      const code = await codeForStep(secret, stepOf(clock))
      expect((await post(m, PATHS.verify, { code })).status).toBe(200)
      expect((await login(m, { totpCode: code })).status).toBe(401)
    })
  })

  describe('login with a backup code (unused -> consumed)', () => {
    it('accepts a code in totpCode and one in backupCode (any case, spaces or dash); each once; audit 2fa_backup_code_used', async () => {
      const m = await member('backup')
      const { backupCodes } = await enable(m)
      const [first, second] = backupCodes as [string, string]
      expect((await login(m, { totpCode: first })).status).toBe(200)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 1)
      expect((await login(m, { backupCode: sloppy(second) })).status).toBe(200)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 2)

      expect((await login(m, { totpCode: first })).status).toBe(401)
      expect((await login(m, { backupCode: second })).status).toBe(401)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 2)
      expect((await row(m.id)).totp_backup_codes).not.toContain(sha256Hex(first.replace('-', '')))

      const used = await audits(m.id, '2fa_backup_code_used')
      expect(used.map((a) => JSON.parse(a.details) as { remaining: number })).toEqual([
        { remaining: BACKUP_CODE_COUNT - 1 }, { remaining: BACKUP_CODE_COUNT - 2 },
      ])
    })

    it('refuses a well-formed code that is not one of the account\'s', async () => {
      const m = await member('backup-foreign')
      const { backupCodes } = await enable(m)
      const other = await member('backup-other')
      const { backupCodes: theirs } = await enable(other)
      const foreign = theirs.find((c) => !backupCodes.includes(c))!
      expect((await login(m, { backupCode: foreign })).status).toBe(401)
      expect((await login(m, { totpCode: foreign })).status).toBe(401)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT)
      expect(await remaining(other)).toBe(BACKUP_CODE_COUNT)
    })

    it('five parallel logins with one backup code: exactly one succeeds and one code is spent', async () => {
      const m = await member('backup-race')
      const { backupCodes } = await enable(m)
      const code = backupCodes[3]!
      const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => login(m, i % 2 === 0 ? { backupCode: code } : { totpCode: code })))
      const statuses = responses.map((r) => r.status).sort()
      expect(statuses).toEqual([200, 401, 401, 401, 401])
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 1)
      expect(await audits(m.id, '2fa_backup_code_used')).toHaveLength(1)
    })

    // On the server the race is made certain: a second connection holds the user's row lock until every login
    // the pool can run is waiting on it, so they all reach the backup code together.
    it.if(target === 'postgres')('logins lined up behind a held row lock: released together, one backup code still succeeds once', async () => {
      const m = await member('backup-lock')
      const { backupCodes } = await enable(m)
      const code = backupCodes[5]!
      const waiters = Math.min(5, t.booted.core.config.databasePoolSize)
      const side = new SQL({ url: t.booted.core.config.databaseUrl!, max: 1 })
      let pending: Promise<Response[]> | null = null
      try {
        await side.begin(async (tx) => {
          await tx`select id from clinical.users where id = ${m.id} for update`
          pending = Promise.all(Array.from({ length: 5 }, () => login(m, { backupCode: code })))
          await waitFor(async () => {
            const [r] = await tx<Array<{ n: number }>>`
              select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
            return r!.n >= waiters
          }, 'logins waiting on the row lock', 10_000)
        })
        const responses = await pending!
        expect(responses.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401])
      } finally {
        await side.close()
      }
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 1)
    })
  })

  describe('disable-2fa (enabled -> disabled)', () => {
    it('a wrong password answers 400 `Password is incorrect` and 2FA stays on', async () => {
      const m = await member('disable-wrong')
      await enable(m)
      const res = await post(m, PATHS.disable, { password: 'not-the-password' })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('Password is incorrect')
      const stored = await row(m.id)
      expect(stored.totp_enabled).toBe(true)
      expect(stored.totp_backup_codes).toHaveLength(BACKUP_CODE_COUNT)
    })

    it('the right password clears the secret, the step and the backup codes; login needs no code; the next enable issues a new set', async () => {
      const m = await member('disable')
      const { backupCodes } = await enable(m)
      const res = await post(m, PATHS.disable, { password: CLINICAL_PASSWORD })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true })
      const stored = await row(m.id)
      expect(stored).toMatchObject({ totp_secret: null, totp_enabled: false, totp_last_step: null, totp_backup_codes: [] })
      expect(await remaining(m)).toBe(0)
      const plain = await login(m)
      expect(plain.status).toBe(200)
      expect(((await plain.json()) as { token?: string }).token).toBeString()

      const again = await enable(m)
      expect(again.backupCodes).toHaveLength(BACKUP_CODE_COUNT)
      expect(again.backupCodes.some((c) => backupCodes.includes(c))).toBe(false)
      expect((await login(m, { backupCode: backupCodes[0]! })).status).toBe(401)
    })

    it('answers 400 when 2FA is not enabled', async () => {
      const m = await member('disable-off')
      const res = await post(m, PATHS.disable, { password: CLINICAL_PASSWORD })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe(TWO_FACTOR_MESSAGES.notEnabled)
    })
  })

  describe('2fa/backup-codes (enabled -> enabled, the set replaced)', () => {
    it('needs the password: a wrong one answers 400 and keeps the set', async () => {
      const m = await member('regen-wrong')
      await enable(m)
      const before = (await row(m.id)).totp_backup_codes
      const res = await post(m, PATHS.regenerate, { password: 'not-the-password' })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('Password is incorrect')
      expect((await row(m.id)).totp_backup_codes).toEqual(before)
      expect(await audits(m.id, '2fa_backup_codes_regenerated')).toHaveLength(0)
    })

    it('replaces the whole set: {success, backupCodes}; old codes are refused, new ones work; audit 2fa_backup_codes_regenerated', async () => {
      const m = await member('regen')
      const { backupCodes: old } = await enable(m)
      expect((await login(m, { backupCode: old[0]! })).status).toBe(200)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 1)

      const res = await post(m, PATHS.regenerate, { password: CLINICAL_PASSWORD })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { success: boolean; backupCodes: string[] }
      expect(body.success).toBe(true)
      expect(body.backupCodes).toHaveLength(BACKUP_CODE_COUNT)
      expect(new Set(body.backupCodes).size).toBe(BACKUP_CODE_COUNT)
      for (const code of body.backupCodes) expect(code).toMatch(BACKUP_CODE_SHAPE)
      expect(body.backupCodes.some((c) => old.includes(c))).toBe(false)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT)
      expect((await row(m.id)).totp_backup_codes).toEqual(body.backupCodes.map((c) => sha256Hex(c.replace('-', ''))))

      expect((await login(m, { backupCode: old[1]! })).status).toBe(401)
      expect((await login(m, { totpCode: body.backupCodes[0]! })).status).toBe(200)
      expect(await remaining(m)).toBe(BACKUP_CODE_COUNT - 1)
      expect(await audits(m.id, '2fa_backup_codes_regenerated')).toHaveLength(1)
    })

    it('answers 400 when 2FA is not enabled', async () => {
      const m = await member('regen-off')
      const res = await post(m, PATHS.regenerate, { password: CLINICAL_PASSWORD })
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe(TWO_FACTOR_MESSAGES.notEnabled)
      expect(await remaining(m)).toBe(0)
    })
  })

  describe('guards and limits', () => {
    it('every two-factor route answers 401 without a session', async () => {
      const ip = freshIp()
      const results = await Promise.all([
        t.post(PATHS.setup, undefined, { ip }),
        t.post(PATHS.verify, { code: '123456' }, { ip }),
        t.post(PATHS.disable, { password: CLINICAL_PASSWORD }, { ip }),
        t.post(PATHS.regenerate, { password: CLINICAL_PASSWORD }, { ip }),
        t.get(PATHS.count, { ip }),
      ])
      expect(results.map((r) => r.status)).toEqual([401, 401, 401, 401, 401])
    })

    it('setup, verify, disable and regenerate share 20 requests per client address per 15 minutes: then 429 with Retry-After', async () => {
      const m = await member('limit')
      for (let i = 0; i < ACCOUNT_SECURITY_RULE.limit; i++) {
        expect((await post(m, PATHS.setup)).status).toBe(200)
      }
      for (const [path, body] of [
        [PATHS.setup, undefined], [PATHS.verify, { code: '123456' }], [PATHS.disable, { password: CLINICAL_PASSWORD }],
        [PATHS.regenerate, { password: CLINICAL_PASSWORD }],
      ] as const) {
        const res = await post(m, path, body)
        expect(res.status).toBe(429)
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
        expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(ACCOUNT_SECURITY_RULE.windowS)
      }
      // the count is not limited, and another address has its own bucket
      expect((await t.get(PATHS.count, { token: m.token, ip: m.ip })).status).toBe(200)
      expect((await t.post(PATHS.setup, undefined, { token: m.token, ip: freshIp() })).status).toBe(200)
      // the window slides: 15 minutes later the address may ask again
      clock += ACCOUNT_SECURITY_RULE.windowS * 1000
      expect((await post(m, PATHS.setup)).status).toBe(200)
    })
  })
})

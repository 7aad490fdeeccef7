// Browser check of the clinical pages at `/` in headless Chromium: starts a real server on a fresh data folder,
// registers the first user, opens the account page, sets up two-factor authentication (QR code shown), and checks
// that signing out in one tab sends a second tab of the same browser to the sign-in page (BroadcastChannel
// app-auth), that a 401 seen by fetch() or by an htmx request signs every tab out, and that no page logs a
// console error (a CSP violation shows up as one). Screenshots go to OUT_DIR (default /tmp/clinical-pages).
//
//   bun scripts/check-clinical-pages.ts
//   CHROMIUM=/usr/bin/chromium OUT_DIR=/tmp/shots bun scripts/check-clinical-pages.ts
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generate } from 'otplib'
import { chromium, type ConsoleMessage, type Page } from 'playwright-core'

const ROOT = join(import.meta.dir, '..')
const OUT_DIR = process.env.OUT_DIR ?? '/tmp/clinical-pages'
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'browser-admin@example.test'
const PASSWORD = 'Browser-check-password-5'

const failures: string[] = []
const check = (ok: boolean, what: string) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`)
  if (!ok) failures.push(what)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function waitForHealth(url: string, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    const ok = await fetch(`${url}/api/health`).then((r) => r.ok, () => false)
    if (ok) return
    await Bun.sleep(250)
  }
  throw new Error('the server did not become ready')
}

mkdirSync(OUT_DIR, { recursive: true })
const dataDir = mkdtempSync(join(tmpdir(), 'clinical-pages-'))
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const server = Bun.spawn([process.execPath, 'src/main.ts'], {
  cwd: ROOT,
  env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  stdout: 'inherit',
  stderr: 'inherit',
})

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
})

/**
 * Console errors per page, except what this check provokes on purpose: the browser's network line for a 401 or
 * a 422 (a form re-rendered with its message) and htmx's own line for the 401 it hands to clinical.js.
 */
const consoleErrors: string[] = []
const watch = (page: Page, name: string) => {
  page.on('console', (msg: ConsoleMessage) => {
    if (msg.type() !== 'error') return
    if (/status of (401|422)\b/.test(msg.text()) || /^Response Status Error Code 401 from /.test(msg.text())) return
    consoleErrors.push(`${name} ${page.url()}: ${msg.text()}`)
  })
  page.on('pageerror', (err) => consoleErrors.push(`${name} ${page.url()}: ${err.message}`))
}
const shot = (page: Page, file: string) => page.screenshot({ path: join(OUT_DIR, file), fullPage: true })
const path = (page: Page) => new URL(page.url()).pathname + new URL(page.url()).search

try {
  await waitForHealth(base)
  const context = await browser.newContext({ baseURL: base })
  const tab1 = await context.newPage()
  watch(tab1, 'tab1')

  await tab1.goto('/')
  check(await tab1.locator('h1', { hasText: 'Sign in' }).isVisible(), 'the sign-in page shows')
  await shot(tab1, '01-sign-in.png')

  await tab1.getByRole('link', { name: 'Create an account' }).click()
  await tab1.waitForURL('**/register')
  await tab1.getByLabel('Name').fill('Browser <Admin>')
  await tab1.getByLabel('Email').fill(EMAIL)
  await tab1.getByLabel(/^Password/).fill(PASSWORD)
  await shot(tab1, '02-register.png')
  await tab1.getByRole('button', { name: 'Create account' }).click()
  await tab1.waitForURL('**/account')
  check(await tab1.locator('dd', { hasText: EMAIL }).isVisible(), 'registering the first user lands on the account page')
  check((await tab1.locator('#nav-name').textContent()) === 'Browser <Admin>', 'the name shows as text')
  await shot(tab1, '03-account.png')

  await tab1.getByRole('button', { name: 'Set up two-factor authentication' }).click()
  await tab1.locator('img.qr').waitFor()
  const qrWidth = await tab1.locator('img.qr').evaluate((img) => (img as HTMLImageElement).naturalWidth)
  check(qrWidth > 0, `the QR code image loads (natural width ${qrWidth})`)
  await shot(tab1, '04-2fa-setup.png')
  const secret = ((await tab1.locator('#totp-secret').textContent()) ?? '').replace(/\s/g, '')
  await tab1.getByLabel('Code').fill('000000')
  await tab1.getByRole('button', { name: 'Turn on' }).click()
  await tab1.locator('.field-error', { hasText: 'Invalid two-factor code' }).waitFor()
  check(await tab1.locator('img.qr').isVisible(), 'a wrong code shows the message and the QR code again')
  await tab1.getByLabel('Code').fill(await generate({ secret }))
  await tab1.getByRole('button', { name: 'Turn on' }).click()
  await tab1.locator('ol.backup-codes').waitFor()
  const backupCodes = await tab1.locator('ol.backup-codes code').allTextContents()
  check(backupCodes.length === 10, `10 backup codes are shown (${backupCodes.length})`)
  await shot(tab1, '05-backup-codes.png')
  await tab1.getByRole('link', { name: 'I have saved them' }).click()
  await tab1.waitForURL('**/account')
  check(await tab1.getByText('Backup codes left: 10 of 10.').isVisible(), 'the account page counts the backup codes')
  await shot(tab1, '06-account-2fa-on.png')

  // Sign-out in one tab reaches the other.
  const tab2 = await context.newPage()
  watch(tab2, 'tab2')
  await tab2.goto('/account')
  check(path(tab2) === '/account', 'a second tab of the same browser is signed in')
  await tab1.getByRole('button', { name: 'Sign out' }).click()
  await tab1.waitForURL('**/?signed-out=1')
  check(await tab1.getByText('You have signed out.').isVisible(), 'the signing-out tab shows the sign-in page')
  await tab2.waitForURL('**/?signed-out=1', { timeout: 5000 }).catch(() => {})
  check(path(tab2) === '/?signed-out=1', `the other tab went to the sign-in page (at ${path(tab2)})`)
  await shot(tab2, '07-other-tab-after-sign-out.png')

  // Sign in again with the second step (a backup code), then end the session behind the pages' back.
  const signInWithBackupCode = async (page: Page, code: string) => {
    await page.goto('/')
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.locator('input[name="pendingToken"]').waitFor({ state: 'attached' })
    await shot(page, '08-2fa-step.png')
    await page.getByLabel('Code').fill(code)
    await page.getByRole('button', { name: 'Verify' }).click()
    // A sign-in lands in the workspace (a new account on its account page); the checks below use the account page.
    await page.waitForURL('**/workspace')
    await page.goto('/account')
  }
  await signInWithBackupCode(tab1, backupCodes[0]!)
  check(path(tab1) === '/account', 'signing in with a backup code works')
  await tab2.goto('/account')
  await tab1.evaluate(() => fetch('/api/auth/logout', { method: 'POST' }).then(() => undefined))
  const status = await tab2.evaluate(() => fetch('/api/auth/me').then((r) => r.status))
  check(status === 401, 'the API answers 401 once the session ended')
  await tab2.waitForURL('**/?signed-out=1', { timeout: 5000 }).catch(() => {})
  await tab1.waitForURL('**/?signed-out=1', { timeout: 5000 }).catch(() => {})
  check(path(tab2) === '/?signed-out=1', `a 401 seen by fetch() sends the tab to the sign-in page (at ${path(tab2)})`)
  check(path(tab1) === '/?signed-out=1', `... and the other tab too, by the broadcast (at ${path(tab1)})`)

  await signInWithBackupCode(tab1, backupCodes[1]!)
  await tab2.goto('/account')
  await tab2.evaluate(() => fetch('/api/auth/logout', { method: 'POST' }).then(() => undefined))
  await tab1.locator('#regenerate-password').fill(PASSWORD)
  await tab1.getByRole('button', { name: 'Regenerate backup codes' }).click()
  await tab1.waitForURL('**/?signed-out=1', { timeout: 5000 }).catch(() => {})
  check(path(tab1) === '/?signed-out=1', `a 401 answer to an htmx request sends the tab to the sign-in page (at ${path(tab1)})`)

  // The other signed-out pages.
  for (const [url, file] of [['/forgot-password', '09-forgot.png'], ['/reset-password?token=abc', '10-reset.png'], ['/?error=sub_mismatch', '11-sso-error.png']] as const) {
    await tab1.goto(url)
    await shot(tab1, file)
  }
  await context.close()
  check(consoleErrors.length === 0, `no console errors or CSP violations${consoleErrors.length ? `:\n  ${consoleErrors.join('\n  ')}` : ''}`)
} catch (err) {
  failures.push(String(err))
  console.error(err)
} finally {
  await browser.close()
  server.kill('SIGTERM')
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}

console.log(failures.length ? `\n${failures.length} check(s) failed` : `\nall checks passed; screenshots in ${OUT_DIR}`)
process.exit(failures.length ? 1 : 0)

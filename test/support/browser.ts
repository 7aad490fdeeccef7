// The page check's harness: the real server as a process (as `npm start` runs it) on a fresh data folder and an
// in-memory database, the OpenAI-compatible test server as its AI gateway, and Debian's headless Chromium driven
// by playwright-core. checkPage() is the page rule: no console or page error, no serious or critical axe-core
// violation (WCAG 2 A/AA, light and dark), links and form actions that answer a same-origin GET with < 400.
// Chromium is required: .ci/run installs it; elsewhere `apt-get install chromium` (or CHROMIUM=/path/to/chrome).
import { afterAll, beforeAll } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page, type Response as PageResponse } from 'playwright-core'
import { startAiServer, type AiServer } from './ai-server'
import { startServer, type ServerProcess } from './server-process'

const ROOT = join(import.meta.dir, '..', '..')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']
const BLOCKING_IMPACTS = new Set(['serious', 'critical'])
/** The server, the test gateway and Chromium are up well within this (a fresh in-memory database included). */
export const BROWSER_START_TIMEOUT_MS = 30_000
export const BROWSER_STOP_TIMEOUT_MS = 10_000

/** With PAGE_SHOTS=<folder>, every visited page (and every shot()) is saved there as a PNG, for a person to look at. */
export const PAGE_SHOTS = process.env.PAGE_SHOTS

export interface BrowserHarnessOptions {
  /** Variables of the server process on top of the harness's (development mode, memory://, no workers, the test gateway). */
  env?: Record<string, string>
}

export interface BrowserHarness {
  /** http://127.0.0.1:<port> of the server under test. */
  readonly base: string
  /** The server's AI gateway: set its answers with reply(), reset() after. */
  readonly ai: AiServer
  /** The server's DATA_DIR, a fresh temporary folder removed by close(); files to upload may be written there. */
  readonly dataDir: string
  newContext(): Promise<BrowserContext>
  /** A tab whose console errors and page errors are kept for the next checkPage(). */
  newPage(context: BrowserContext): Promise<Page>
  /**
   * What is wrong with the page a tab shows now. `status` is the HTTP status the page came with: Chromium logs a
   * non-2xx answer as a console error ("Failed to load resource: ... status of 404"), which is the point of that
   * page, not a fault, so exactly that line is let through.
   */
  checkPage(page: Page, label: string, status: number): Promise<string[]>
  /** Opens a path in the tab, expects the status (200 by default) and checks the page. */
  visit(page: Page, path: string, status?: number): Promise<string[]>
  /** Waits until a form control's value matches (a textarea filled by a script, a stream, a swap). */
  expectValue(page: Page, selector: string, pattern: RegExp): Promise<void>
  /** Clicks a form's button and waits for the answer of its (boosted) request to be in the page; answers its status. */
  submit(page: Page, button: string, answer: (res: PageResponse) => boolean): Promise<number>
  /**
   * Waits until htmx has finished its swaps. While it settles, a new element with the id of an old one wears the old
   * one's attributes (its htmx-request class, a faded button), which a check in between would see.
   */
  htmxSettled(page: Page): Promise<void>
  /** Saves the page as PAGE_SHOTS/<name>.png when PAGE_SHOTS is set. */
  shot(page: Page, name: string): Promise<void>
  /** Closes Chromium, stops the server and the gateway, removes the data folder. */
  close(): Promise<void>
}

interface AxeViolation { id: string; impact: string | null; help: string; targets: string[] }

/** Starts the server, the gateway and Chromium; whatever did start is stopped again when one of them fails. */
export async function startBrowserHarness(opts: BrowserHarnessOptions = {}): Promise<BrowserHarness> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: the page tests need Debian's chromium. Install it with `
      + '`apt-get install -y chromium` (.ci/run does so), or point CHROMIUM at a Chromium or Chrome binary.')
  }
  const axeSource = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8')
  const dataDir = mkdtempSync(join(tmpdir(), 'pages-browser-'))
  let ai: AiServer | null = null
  let server: ServerProcess | null = null
  let browser: Browser | null = null

  let closing: Promise<void> | null = null
  const close = () => (closing ??= stopAll())
  const stopAll = async () => {
    await browser?.close().catch(() => {})
    if (server) {
      const stopping = server
      await Promise.race([stopping.stop(), Bun.sleep(5_000).then(() => stopping.kill9())])
    }
    await ai?.close().catch(() => {})
    rmSync(dataDir, { recursive: true, force: true })
  }

  let running: { ai: AiServer; server: ServerProcess; browser: Browser }
  try {
    ai = await startAiServer()
    // Only what the process needs (bare): no mail, bot challenge or APP_URL from the caller's environment.
    const env = { NODE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: 'memory://', WORKERS: '0', LOG_LEVEL: 'error', ...ai.env, ...opts.env }
    // Both are waited for, so close() stops the server even when the browser fails to start (and the other way).
    const [launched, started] = await Promise.allSettled([
      // launch() gives Chromium a fresh --user-data-dir of its own (a temporary profile, removed on close).
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, timeout: 15_000 }),
      startServer(env, { bare: true }),
    ])
    if (launched.status === 'fulfilled') browser = launched.value
    if (started.status === 'fulfilled') server = started.value
    if (launched.status === 'rejected') throw launched.reason
    if (started.status === 'rejected') throw started.reason
    running = { ai, server: started.value, browser: launched.value }
  } catch (err) {
    await close()
    throw err
  }
  const base = running.server.url

  /** What one browser tab logged: console errors and uncaught page errors, since the last check of its page. */
  const logs = new WeakMap<Page, string[]>()
  /** Links already checked, per browser context (a signed-in context sees other answers than a signed-out one). */
  const checkedLinks = new WeakMap<BrowserContext, Map<string, number>>()

  const newContext = async () => {
    const context = await running.browser.newContext({ baseURL: base })
    context.setDefaultTimeout(10_000)
    return context
  }

  const newPage = async (context: BrowserContext) => {
    const page = await context.newPage()
    const lines: string[] = []
    logs.set(page, lines)
    page.on('console', (msg) => {
      if (msg.type() === 'error') lines.push(`console error: ${msg.text()}`)
    })
    page.on('pageerror', (err) => lines.push(`page error: ${err.message}`))
    return page
  }

  const axeViolations = async (page: Page): Promise<AxeViolation[]> => {
    // The CSP admits scripts from 'self' only, so a <script> tag with axe's source would be refused; evaluating it
    // through the DevTools protocol is not subject to the page's CSP.
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
    return page.evaluate(async (tags) => {
      const axe = (window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; impact?: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe
      const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })
      return result.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }))
    }, AXE_TAGS)
  }

  const checkPage = async (page: Page, label: string, status: number) => {
    await page.waitForLoadState('load')
    const problems: string[] = []
    const where = `${label} (${new URL(page.url()).pathname})`

    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      for (const v of await axeViolations(page)) {
        if (!BLOCKING_IMPACTS.has(v.impact ?? '')) continue
        problems.push(`${where} [${scheme}]: axe ${v.impact} ${v.id}: ${v.help} -> ${v.targets.join(', ')}`)
      }
    }
    await page.emulateMedia({ colorScheme: 'light' })

    const targets = await page.evaluate(() => [
      ...[...document.querySelectorAll('a[href]')].map((a) => ({ kind: 'link', href: (a as HTMLAnchorElement).href, signOut: false })),
      // the attribute, not f.action: a control named "action" would shadow that property
      ...[...document.querySelectorAll('form')].map((f) => new URL(f.getAttribute('action') ?? '', location.href)).map((action, i) => ({
        kind: 'form action',
        href: action.href,
        signOut: document.querySelectorAll('form')[i]!.hasAttribute('data-app-logout') || /\/logout$/.test(action.pathname),
      })),
    ])
    const origin = new URL(base).origin
    const context = page.context()
    const seen = checkedLinks.get(context) ?? new Map<string, number>()
    checkedLinks.set(context, seen)
    for (const target of targets) {
      if (/^javascript:/i.test(target.href)) {
        problems.push(`${where}: ${target.kind} uses javascript: (${target.href})`)
        continue
      }
      const url = new URL(target.href)
      if (url.origin !== origin || target.signOut) continue
      url.hash = ''
      let answer = seen.get(url.href)
      if (answer === undefined) {
        answer = (await context.request.get(url.href, { maxRedirects: 10, failOnStatusCode: false })).status()
        seen.set(url.href, answer)
      }
      if (answer >= 400) problems.push(`${where}: ${target.kind} ${url.pathname}${url.search} answers ${answer} to a GET`)
    }

    const lines = logs.get(page) ?? []
    const expected = new RegExp(`status of ${status}\\b`)
    for (const line of lines) {
      if (status >= 400 && /^console error: Failed to load resource: the server responded with a status of/.test(line) && expected.test(line)) continue
      problems.push(`${where}: ${line}`)
    }
    lines.length = 0
    return problems
  }

  const htmxSettled = async (page: Page) => {
    await page.waitForFunction(() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added'))
  }

  const shot = async (page: Page, name: string) => {
    if (PAGE_SHOTS) await page.screenshot({ path: `${PAGE_SHOTS}/${name}.png`, fullPage: true })
  }

  const visit = async (page: Page, path: string, status = 200) => {
    const res = await page.goto(path)
    await shot(page, path.replace(/[^a-z0-9]+/gi, '_') || 'root')
    const problems = res?.status() === status ? [] : [`${path}: answered ${res?.status()}, expected ${status}`]
    return [...problems, ...(await checkPage(page, path, status))]
  }

  const expectValue = async (page: Page, selector: string, pattern: RegExp) => {
    await page.waitForFunction(([sel, source]) => new RegExp(source as string).test((document.querySelector(sel as string) as HTMLTextAreaElement | null)?.value ?? ''),
      [selector, pattern.source], { timeout: 15_000 })
  }

  const submit = async (page: Page, button: string, answer: (res: PageResponse) => boolean) => {
    const response = page.waitForResponse((res) => res.request().method() === 'POST' && answer(res))
    await page.getByRole('button', { name: button, exact: true }).click()
    const res = await response
    await page.waitForLoadState('load')
    return res.status()
  }

  return { base, ai: running.ai, dataDir, newContext, newPage, checkPage, visit, expectValue, submit, htmxSettled, shot, close }
}

/**
 * A harness started in the file's beforeAll and closed in its afterAll. Its members are usable inside the tests;
 * when the start failed they throw, pointing at the error of beforeAll.
 */
export function useBrowserHarness(opts: BrowserHarnessOptions = {}): BrowserHarness {
  let started: BrowserHarness | null = null
  beforeAll(async () => {
    started = await startBrowserHarness(opts)
  }, BROWSER_START_TIMEOUT_MS)
  afterAll(async () => {
    await started?.close()
  }, BROWSER_STOP_TIMEOUT_MS)
  const h = (): BrowserHarness => {
    if (!started) throw new Error('the browser did not start (see the error of beforeAll)')
    return started
  }
  return {
    get base() { return h().base },
    get ai() { return h().ai },
    get dataDir() { return h().dataDir },
    newContext: () => h().newContext(),
    newPage: (context) => h().newPage(context),
    checkPage: (page, label, status) => h().checkPage(page, label, status),
    visit: (page, path, status) => h().visit(page, path, status),
    expectValue: (page, selector, pattern) => h().expectValue(page, selector, pattern),
    submit: (page, button, answer) => h().submit(page, button, answer),
    htmxSettled: (page) => h().htmxSettled(page),
    shot: (page, name) => h().shot(page, name),
    close: async () => {
      await started?.close()
      started = null
    },
  }
}

// The page rule, in headless Chromium: every page of both services, signed out and signed in as each service's
// first (admin) user, plus the pages a failed form shows, loads without a console error or page error (a CSP
// violation shows as a console error), has no serious or critical axe-core violation (WCAG 2 A/AA, in the light
// and the dark colour scheme, since app.css follows the system's), and links only to same-origin URLs that answer
// a GET with < 400 (links and form actions, but not the sign-out form). The real server runs as a process (as
// `npm start` does), on a fresh data folder and an in-memory database. Debian's chromium is required: .ci/run
// installs it; elsewhere, `apt-get install chromium` (or CHROMIUM=/path/to/chrome).
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generate } from 'otplib'
import { startAiServer, type AiServer } from './support/ai-server'
import { makePdf } from './support/pdf'
import { startServer, type ServerProcess } from './support/server-process'
import { chromium, type Browser, type BrowserContext, type Page, type Response as PageResponse } from 'playwright-core'

const ROOT = join(import.meta.dir, '..')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']
const BLOCKING_IMPACTS = new Set(['serious', 'critical'])
const CLINICAL_ADMIN = { name: 'Browser <Admin>', email: 'browser-admin@example.test', password: 'Browser-check-password-5' }
const QUIZ_ADMIN = { name: 'Quiz <Admin>', email: 'quiz-admin@example.test', password: 'Quiz-check-password-5' }

let dataDir = ''
let server: ServerProcess | null = null
/** The project's OpenAI-compatible test server: the tutor of the player's walk answers from it. */
let ai: AiServer | null = null
let browser: Browser | null = null
let base = ''
let axeSource = ''

/** What one browser tab logged: console errors and uncaught page errors, since the last check of its page. */
const logs = new WeakMap<Page, string[]>()
/** Links already checked, per browser context (a signed-in context sees other answers than a signed-out one). */
const checkedLinks = new WeakMap<BrowserContext, Map<string, number>>()

async function newContext(): Promise<BrowserContext> {
  if (!browser) throw new Error('the browser did not start (see the error of beforeAll)')
  const context = await browser.newContext({ baseURL: base })
  context.setDefaultTimeout(10_000)
  return context
}

async function newPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage()
  const lines: string[] = []
  logs.set(page, lines)
  page.on('console', (msg) => {
    if (msg.type() === 'error') lines.push(`console error: ${msg.text()}`)
  })
  page.on('pageerror', (err) => lines.push(`page error: ${err.message}`))
  return page
}

interface AxeViolation { id: string; impact: string | null; help: string; targets: string[] }

async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // The CSP admits scripts from 'self' only, so a <script> tag with axe's source would be refused; evaluating it
  // through the DevTools protocol is not subject to the page's CSP.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
  return page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; impact?: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }))
  }, AXE_TAGS)
}

/**
 * Checks the page a tab shows now; returns what is wrong with it. `status` is the HTTP status the page came with:
 * Chromium logs a non-2xx answer as a console error ("Failed to load resource: ... status of 404"), which is the
 * point of that page, not a fault, so exactly that line is let through.
 */
async function checkPage(page: Page, label: string, status: number): Promise<string[]> {
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

/** With PAGE_SHOTS=<folder>, every visited page is saved there as a PNG, for a person to look at. */
const SHOTS = process.env.PAGE_SHOTS

/** Opens a URL in the tab, expects the status and checks the page. */
async function visit(page: Page, path: string, status = 200): Promise<string[]> {
  const res = await page.goto(path)
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${path.replace(/[^a-z0-9]+/gi, '_') || 'root'}.png`, fullPage: true })
  const problems = res?.status() === status ? [] : [`${path}: answered ${res?.status()}, expected ${status}`]
  return [...problems, ...(await checkPage(page, path, status))]
}

/** Waits until a form control's value matches (a textarea filled by a script, a stream, a swap). */
async function expectValue(page: Page, selector: string, pattern: RegExp): Promise<void> {
  await page.waitForFunction(([sel, source]) => new RegExp(source as string).test((document.querySelector(sel as string) as HTMLTextAreaElement | null)?.value ?? ''),
    [selector, pattern.source], { timeout: 15_000 })
}

/** A quiz API call of the server under test (Bearer token), expected to succeed: its JSON. */
async function api(path: string, init: RequestInit & { token?: string } = {}): Promise<Record<string, unknown>> {
  const headers = new Headers(init.headers)
  if (init.token) headers.set('authorization', `Bearer ${init.token}`)
  if (typeof init.body === 'string') headers.set('content-type', 'application/json')
  const res = await fetch(`${base}/quiz/api${path}`, { ...init, headers })
  expect(res.status).toBeLessThan(300)
  return res.json() as Promise<Record<string, unknown>>
}

/** Clicks a form's button and waits for the answer of its (boosted) request to be in the page. */
async function submit(page: Page, button: string, answer: (res: PageResponse) => boolean): Promise<number> {
  const response = page.waitForResponse((res) => res.request().method() === 'POST' && answer(res))
  await page.getByRole('button', { name: button, exact: true }).click()
  const res = await response
  await page.waitForLoadState('load')
  return res.status()
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: the page tests need Debian's chromium. Install it with `
      + '`apt-get install -y chromium` (.ci/run does so), or point CHROMIUM at a Chromium or Chrome binary.')
  }
  axeSource = readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8')
  dataDir = mkdtempSync(join(tmpdir(), 'pages-browser-'))
  // Assigned as soon as it runs, so afterAll stops it even when the browser fails to start.
  // Only what the process needs: no mail, bot challenge or APP_URL from the caller's environment.
  ai = await startAiServer()
  const starting = startServer({ NODE_ENV: 'development', DATA_DIR: dataDir, DATABASE_URL: 'memory://', WORKERS: '0', LOG_LEVEL: 'error', ...ai.env }, { bare: true })
    .then((started) => (server = started))
  const [launched] = await Promise.all([
    // launch() gives Chromium a fresh --user-data-dir of its own (a temporary profile, removed on close).
    chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_FLAGS,
      timeout: 15_000,
    }),
    starting,
  ])
  browser = launched
  base = server!.url
}, 30_000)

afterAll(async () => {
  await browser?.close().catch(() => {})
  if (server) await Promise.race([server.stop(), Bun.sleep(5_000).then(() => server?.kill9())])
  await ai?.close().catch(() => {})
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
}, 10_000)

describe('every page in headless Chromium: no console error, no serious axe violation, no broken link', () => {
  it('clinical pages, signed out', async () => {
    const context = await newContext()
    const page = await newPage(context)
    const problems = [
      ...(await visit(page, '/')),
      ...(await visit(page, '/register')),
      ...(await visit(page, '/forgot-password')),
      ...(await visit(page, '/reset-password?token=x')),
      ...(await visit(page, '/api/auth/verify-email?token=not-a-token', 400)),
      ...(await visit(page, '/no-such-page', 404)),
    ]
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it('quiz pages, signed out', async () => {
    const context = await newContext()
    const page = await newPage(context)
    const problems = [
      ...(await visit(page, '/quiz/login')),
      ...(await visit(page, '/quiz/register')),
      ...(await visit(page, '/quiz/forgot-password')),
      ...(await visit(page, '/quiz/reset-password?token=x')),
      ...(await visit(page, '/quiz/contact')),
      ...(await visit(page, '/quiz/verify-email?token=x', 400)),
      ...(await visit(page, '/quiz/no-such-page', 404)),
    ]
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it('clinical pages of the first user, registered through the form: account, two-factor setup, backup codes', async () => {
    const context = await newContext()
    const page = await newPage(context)
    const problems: string[] = []
    await page.goto('/register')
    await page.getByLabel('Name').fill(CLINICAL_ADMIN.name)
    await page.getByLabel('Email').fill(CLINICAL_ADMIN.email)
    await page.getByLabel(/^Password/).fill(CLINICAL_ADMIN.password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL('**/account')
    await page.locator('dd', { hasText: CLINICAL_ADMIN.email }).waitFor()
    problems.push(...(await checkPage(page, 'account (first user, admin)', 200)))

    await submit(page, 'Set up two-factor authentication', (res) => res.url().endsWith('/account/2fa/setup'))
    await page.locator('img.qr').waitFor()
    problems.push(...(await checkPage(page, 'two-factor setup', 200)))
    const secret = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s/g, '')

    await page.getByLabel('Code').fill('000000')
    const wrong = await submit(page, 'Turn on', (res) => res.url().endsWith('/account/2fa/enable'))
    await page.locator('.field-error').waitFor()
    problems.push(...(await checkPage(page, 'two-factor setup, wrong code', wrong)))

    await page.getByLabel('Code').fill(await generate({ secret }))
    await submit(page, 'Turn on', (res) => res.url().endsWith('/account/2fa/enable'))
    await page.locator('ol.backup-codes').waitFor()
    problems.push(...(await checkPage(page, 'backup codes', 200)))

    problems.push(...(await visit(page, '/account')))
    // the clinician's record pages and the phone directory, empty
    for (const path of ['/encounters', '/memories', '/documents', '/preferences', '/directory', '/directory/trash', '/directory/import']) problems.push(...(await visit(page, path)))
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it("a clinician's note in the workspace: dictation uploaded, transcript, a SOAP note streamed, refined, saved, reopened", async () => {
    const context = await newContext()
    const page = await newPage(context)
    const problems: string[] = []
    const shot = async (name: string) => {
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/workspace-${name}.png`, fullPage: true })
    }
    // A second clinician (a user, not the admin, who has two-factor on by now), registered through the form.
    await page.goto('/register')
    await page.getByLabel('Name').fill('Dr <Second>')
    await page.getByLabel('Email').fill('second-clinician@example.test')
    await page.getByLabel(/^Password/).fill('Second-clinician-password-5')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL('**/account')
    await page.getByRole('navigation').getByRole('link', { name: 'Workspace' }).click()
    await page.waitForURL('**/workspace')
    problems.push(...(await checkPage(page, 'the workspace, empty', 200)))
    await shot('1-empty')

    // A short recording (a second of silence as WAV): the test gateway transcribes it.
    const wavPath = join(dataDir, 'dictation.wav')
    const samples = 8000
    const wav = Buffer.alloc(44 + samples * 2)
    wav.write('RIFF', 0); wav.writeUInt32LE(36 + samples * 2, 4); wav.write('WAVE', 8); wav.write('fmt ', 12)
    wav.writeUInt32LE(16, 16); wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22); wav.writeUInt32LE(8000, 24)
    wav.writeUInt32LE(16000, 28); wav.writeUInt16LE(2, 32); wav.writeUInt16LE(16, 34); wav.write('data', 36); wav.writeUInt32LE(samples * 2, 40)
    await Bun.write(wavPath, wav)
    await page.getByLabel('Audio file').setInputFiles(wavPath)
    await page.getByRole('button', { name: 'Transcribe the file' }).click()
    await expectValue(page, '#ws-transcript', /test transcript/)
    problems.push(...(await checkPage(page, 'the workspace with a transcript', 200)))

    // The note streams in from the gateway; then one click refines it.
    ai!.reply(() => 'S: Cough for three days.\nO: Afebrile, clear lungs.\nA: Viral upper respiratory infection.\nP: Fluids and rest.')
    await page.getByLabel('Patient age').fill('7 years')
    await page.getByRole('button', { name: 'Write the note' }).click()
    await expectValue(page, '#ws-note', /P: Fluids and rest\./)
    await shot('2-note')
    ai!.reply(() => 'S: Cough for three days, no fever.\nO: Afebrile, clear lungs.\nA: Viral upper respiratory infection.\nP: Fluids, rest, return if breathing is hard.')
    await page.getByLabel('Refine instruction').fill('Add the return precautions')
    await page.getByRole('button', { name: 'Refine', exact: true }).click()
    await expectValue(page, '#ws-note', /return if breathing is hard/)
    ai!.reset()
    problems.push(...(await checkPage(page, 'the workspace with a refined note', 200)))

    // Saved as an encounter (a draft), then reopened from its address.
    await page.getByLabel('Label').fill('Cough, 7 years')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.waitForURL(/\/workspace\?encounter=\d+/)
    await page.locator('#flash', { hasText: 'Saved' }).waitFor()
    await page.getByText('Draft', { exact: false }).first().waitFor()
    problems.push(...(await checkPage(page, 'the workspace with a saved draft', 200)))
    await shot('3-saved')
    const saved = page.url()
    await page.goto('/encounters')
    await page.getByText('Cough, 7 years').first().waitFor()
    problems.push(...(await checkPage(page, 'the saved encounters', 200)))
    await page.goto(saved)
    await expectValue(page, '#ws-note', /return if breathing is hard/)
    problems.push(...(await checkPage(page, 'the workspace, reopened', 200)))
    await shot('4-reopened')
    await context.close()
    expect(problems).toEqual([])
  }, 60_000)

  it('quiz pages of the first user, registered through the form: my account', async () => {
    const context = await newContext()
    const page = await newPage(context)
    await page.goto('/quiz/register')
    await page.getByLabel('Name').fill(QUIZ_ADMIN.name)
    await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
    await page.getByLabel(/^Password/).fill(QUIZ_ADMIN.password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(/\/quiz\/$/)
    await page.locator('dd', { hasText: QUIZ_ADMIN.email }).waitFor()
    const problems = [...(await checkPage(page, 'quiz account (first user, admin)', 200)), ...(await visit(page, '/quiz/'))]
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it('quiz staff pages of the first user (admin): quizzes, trash, a quiz and its question editor', async () => {
    // A quiz through the API: a two-page PDF with one numbered question, a section, and a regex extraction (no AI).
    const { access_token: token } = await api('/auth/login', { method: 'POST', body: JSON.stringify({ email: QUIZ_ADMIN.email, password: QUIZ_ADMIN.password }) }) as { access_token: string }
    const form = new FormData()
    const pdf = await makePdf([['1. Which valve separates the left atrium from the left ventricle?', 'A) Tricuspid', 'B) Mitral', 'Answer: B'], ['The end.']])
    form.append('file', new File([pdf], 'valves.pdf', { type: 'application/pdf' }))
    const doc = await api('/documents/upload', { method: 'POST', body: form, token }) as { id: number }
    const section = await api(`/documents/${doc.id}/sections`, { method: 'POST', body: JSON.stringify({ name: 'All', start_page: 1, end_page: 2 }), token }) as { id: number }
    const started = await api('/quizzes/', {
      method: 'POST', token, body: JSON.stringify({ section_id: section.id, title: 'Valves <quiz>', mode: 'learning', extraction_mode: 'regex' }),
    }) as { job_id: string }
    const job = await api(`/quizzes/job/${started.job_id}`, { token }) as { quiz_id: number }
    const [question] = await api(`/quizzes/${job.quiz_id}/questions`, { token }) as unknown as Array<{ id: number }>
    await api(`/quizzes/${job.quiz_id}/publish`, { method: 'PATCH', token })
    const trashed = await api('/quizzes/', {
      method: 'POST', token, body: JSON.stringify({ section_id: section.id, title: 'In the trash', mode: 'timed', extraction_mode: 'regex' }),
    }) as { job_id: string }
    const trashedQuiz = await api(`/quizzes/job/${trashed.job_id}`, { token }) as { quiz_id: number }
    await fetch(`${base}/quiz/api/quizzes/${trashedQuiz.quiz_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })

    const context = await newContext()
    const page = await newPage(context)
    await page.goto('/quiz/login')
    await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
    await page.getByLabel('Password').fill(QUIZ_ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/quiz\/$/)
    const quizUrl = `/quiz/quizzes/${job.quiz_id}`
    const problems = [
      ...(await visit(page, '/quiz/quizzes')),
      ...(await visit(page, '/quiz/quizzes/trash')),
      ...(await visit(page, `${quizUrl}/questions/${question!.id}/edit`)),
      ...(await visit(page, quizUrl)),
    ]
    // click-to-edit with htmx: the row becomes the form in place
    await page.getByRole('link', { name: 'Edit question' }).click()
    await page.getByText('applies to every quiz that uses it').waitFor()
    problems.push(...(await checkPage(page, 'quiz page with a question in edit', 200)))
    await context.close()
    expect(problems).toEqual([])
  }, 30_000)

  it("a moderator's day through the pages alone: upload, section, extraction, the quiz, a question edited, published, the bank, then the learner's pages", async () => {
    const context = await newContext()
    const page = await newPage(context)
    const problems: string[] = []
    const shot = async (name: string) => {
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/walk-${name}.png`, fullPage: true })
    }
    await page.goto('/quiz/login')
    await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
    await page.getByLabel('Password').fill(QUIZ_ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/quiz\/$/)

    // Upload: the nav names the area; the form is a plain multipart post that lands on the document's page.
    await page.getByRole('navigation').getByRole('link', { name: 'Documents' }).click()
    await page.waitForURL('**/quiz/documents')
    problems.push(...(await checkPage(page, 'documents', 200)))
    await shot('1-documents')
    const pdfPath = join(dataDir, 'walk.pdf')
    await Bun.write(pdfPath, await makePdf([
      ['1. Which chamber pumps blood into the aorta?', 'A) Right atrium', 'B) Left ventricle', 'C) Right ventricle', 'Answer: B'],
      ['2. Which vessel carries blood from the lungs?', 'A) Pulmonary vein', 'B) Vena cava', 'Answer: A'],
    ]))
    await page.getByLabel('PDF file').setInputFiles(pdfPath)
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    await page.waitForURL(/\/quiz\/documents\/\d+(\?|$)/)
    await page.getByText('Add a section', { exact: false }).first().waitFor()
    problems.push(...(await checkPage(page, 'a document, processed', 200)))
    await shot('2-document')

    // A section, then a quiz from it by pattern matching (no AI).
    await page.getByLabel('Section name').fill('Cardiology')
    await page.locator('#section-start').fill('1')
    await page.locator('#section-end').fill('2')
    await page.getByRole('button', { name: 'Add the section' }).click()
    await page.getByText('Make a quiz from "Cardiology"').click()
    await page.getByLabel('Quiz title').fill('Heart basics')
    await page.getByLabel('Pattern matching (no AI)').check()
    problems.push(...(await checkPage(page, 'a document with a section and its quiz form open', 200)))
    await shot('3-section')
    await page.getByRole('button', { name: 'Make the quiz' }).click()
    await page.waitForURL(/\/quiz\/documents\/jobs\//)
    await page.getByRole('link', { name: /quiz/i }).filter({ hasText: /open|quiz/i }).first().waitFor()
    problems.push(...(await checkPage(page, 'the extraction job, completed', 200)))
    await shot('4-job')

    // The quiz: edit a question in place, then publish it.
    const quizLink = page.locator('main a[href*="/quiz/quizzes/"]').first()
    await quizLink.click()
    await page.waitForURL(/\/quiz\/quizzes\/\d+(\?|#|$)/)
    await page.getByRole('link', { name: 'Edit question' }).first().click()
    await page.getByText('applies to every quiz that uses it').waitFor()
    const text = page.locator('textarea[name="question_text"]').first()
    await text.fill('Which chamber of the heart pumps blood into the aorta?')
    await page.getByRole('button', { name: 'Save question' }).click()
    await page.getByText('Which chamber of the heart pumps blood into the aorta?').waitFor()
    await page.getByRole('button', { name: 'Publish', exact: true }).click()
    await page.locator('dd', { hasText: 'Yes' }).first().waitFor()
    problems.push(...(await checkPage(page, 'the quiz, edited and published', 200)))
    await shot('5-quiz')

    // The bank shows the edited question; categories are one click away.
    await page.getByRole('navigation').getByRole('link', { name: 'Question bank' }).click()
    await page.waitForURL('**/quiz/bank')
    await page.getByText('Which chamber of the heart pumps blood into the aorta?').first().waitFor()
    problems.push(...(await checkPage(page, 'the question bank', 200)))
    await shot('6-bank')
    await page.getByRole('navigation').getByRole('link', { name: 'Categories' }).click()
    await page.waitForURL('**/quiz/categories')
    problems.push(...(await checkPage(page, 'categories', 200)))
    await shot('7-categories')
    // the learner's side of the same account: progress, due reviews, favorites
    for (const [name, path] of [['progress', '/quiz/progress'], ['reviews', '/quiz/reviews'], ['favorites', '/quiz/favorites']] as const) {
      await page.getByRole('navigation').getByRole('link', { name: name === 'progress' ? 'My progress' : name === 'reviews' ? 'Reviews' : 'Favorites' }).click()
      await page.waitForURL(`**${path}`)
      problems.push(...(await checkPage(page, name, 200)))
      await shot(`8-${name}`)
    }
    await context.close()
    expect(problems).toEqual([])
  }, 60_000)

  it("a learner's quizzes in the player: a timed quiz survives a reload, a second browser meets the lock, a learning quiz with a tutor question", async () => {
    const { access_token: token } = await api('/auth/login', { method: 'POST', body: JSON.stringify({ email: QUIZ_ADMIN.email, password: QUIZ_ADMIN.password }) }) as { access_token: string }
    const form = new FormData()
    const pdf = await makePdf([
      ['1. Which valve separates the left atrium from the left ventricle?', 'A) Tricuspid', 'B) Mitral', 'C) Aortic', 'Answer: B', 'Explanation: The mitral valve has two cusps.'],
      ['2. Which vessel carries blood from the lungs to the heart?', 'A) Pulmonary vein', 'B) Vena cava', 'C) Aorta', 'Answer: A'],
    ])
    form.append('file', new File([pdf], 'player.pdf', { type: 'application/pdf' }))
    const doc = await api('/documents/upload', { method: 'POST', body: form, token }) as { id: number }
    const section = await api(`/documents/${doc.id}/sections`, { method: 'POST', body: JSON.stringify({ name: 'All', start_page: 1, end_page: 2 }), token }) as { id: number }
    const quizOf = async (title: string, mode: 'timed' | 'learning') => {
      const started = await api('/quizzes/', {
        method: 'POST', token, body: JSON.stringify({ section_id: section.id, title, mode, time_limit_minutes: mode === 'timed' ? 10 : null, extraction_mode: 'regex' }),
      }) as { job_id: string }
      const job = await api(`/quizzes/job/${started.job_id}`, { token }) as { quiz_id: number }
      await api(`/quizzes/${job.quiz_id}/publish`, { method: 'PATCH', token })
      return job.quiz_id
    }
    const timedId = await quizOf('Valves, timed', 'timed')
    const learningId = await quizOf('Valves, learning', 'learning')
    const signIn = async (page: Page) => {
      await page.goto('/quiz/login')
      await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
      await page.getByLabel('Password').fill(QUIZ_ADMIN.password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.waitForURL(/\/quiz\/$/)
    }
    const shot = async (page: Page, name: string) => {
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/player-${name}.png`, fullPage: true })
    }
    const secondsLeft = async (page: Page) => {
      const [m, s] = ((await page.locator('#timer').textContent()) ?? '').split(':').map(Number)
      return m! * 60 + s!
    }
    const context = await newContext()
    const page = await newPage(context)
    const problems: string[] = []
    await signIn(page)

    // Timed: start from the quiz's page; answer one question; the autosave stores it (the POST answers 204).
    problems.push(...(await visit(page, `/quiz/play/${timedId}`)))
    await page.getByRole('button', { name: 'Start the quiz' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+\/play$/)
    const playerUrl = new URL(page.url()).pathname
    expect(await secondsLeft(page)).toBeGreaterThan(9 * 60 + 50)
    const saved = page.waitForResponse((res) => res.url().endsWith('/progress') && res.request().method() === 'POST')
    await page.getByLabel('Mitral').check()
    expect((await saved).status()).toBe(204)
    await page.locator('#save-state', { hasText: 'saved at' }).waitFor()
    problems.push(...(await checkPage(page, 'the timed player', 200)))
    await shot(page, '1-timed')
    // a reload: the answer is checked again and the clock has gone on from where it was, not restarted
    await Bun.sleep(2_000)
    await page.reload()
    expect(await page.getByLabel('Mitral').isChecked()).toBe(true)
    const left = await secondsLeft(page)
    expect(left).toBeLessThan(10 * 60 - 1)
    expect(left).toBeGreaterThan(9 * 60)
    // the countdown runs in the page
    const before = await secondsLeft(page)
    await Bun.sleep(1_500)
    expect(await secondsLeft(page)).toBeLessThan(before)
    problems.push(...(await checkPage(page, 'the timed player after a reload', 200)))

    // A second browser signed in as the same person: the quiz is held by the first one.
    const other = await newContext()
    const second = await newPage(other)
    await signIn(second)
    const res = await second.goto(playerUrl)
    expect(res?.status()).toBe(409)
    await second.getByText('This quiz is open on another device or browser').waitFor()
    problems.push(...(await checkPage(second, 'the player held by another browser', 409)))
    await shot(second, '2-locked')
    await other.close()

    // Submit from the first: the results page.
    await page.getByLabel('Pulmonary vein').check()
    await page.getByRole('button', { name: 'Submit my answers' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+$/)
    await page.locator('#score', { hasText: '2 of 2' }).waitFor()
    problems.push(...(await checkPage(page, 'the results of a timed attempt', 200)))
    await shot(page, '3-results')

    // Learning: answer, see the explanation at once, ask the tutor beside it.
    problems.push(...(await visit(page, `/quiz/play/${learningId}`)))
    await page.getByRole('button', { name: 'Start the quiz' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+\/play$/)
    problems.push(...(await checkPage(page, 'the learning player', 200)))
    await page.getByLabel('Tricuspid').check()
    await page.getByRole('button', { name: 'Check my answer' }).click()
    await page.getByText('Not quite.').waitFor()
    await page.getByText('The mitral valve has two cusps.').waitFor()
    ai!.reply(() => 'The mitral valve lies between the left atrium and the left ventricle.\n> What does the tricuspid valve do?\n> Why two cusps?\n> Where is the aortic valve?')
    await page.getByLabel('Your question').fill('Why not the tricuspid?')
    await page.getByRole('button', { name: 'Ask', exact: true }).click()
    await page.getByText('The mitral valve lies between the left atrium and the left ventricle.').waitFor()
    await page.getByRole('button', { name: 'Why two cusps?' }).waitFor()
    ai!.reset()
    problems.push(...(await checkPage(page, 'the learning player with a tutor answer', 200)))
    await shot(page, '4-learning')
    await page.getByRole('link', { name: 'Next question' }).click()
    await page.getByLabel('Pulmonary vein').check()
    await page.getByRole('button', { name: 'Check my answer' }).click()
    await page.getByText('Correct.').waitFor()
    await page.getByRole('button', { name: 'Finish and see my score' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+$/)
    await page.locator('#score', { hasText: '1 of 2' }).waitFor()
    problems.push(...(await checkPage(page, 'the results of a learning attempt', 200)))
    // the due-review player (nothing is due yet: its empty state), the progress chart of the two attempts, the quiz
    // list with a search, the moderator's file-server import and the admin's contact messages
    problems.push(...(await visit(page, '/quiz/reviews/play')))
    problems.push(...(await visit(page, '/quiz/progress')))
    await page.locator('figure.chart canvas').first().waitFor()
    await shot(page, '5-progress')
    problems.push(...(await visit(page, '/quiz/quizzes?q=valve')))
    problems.push(...(await visit(page, '/quiz/quizzes?q=v')))
    problems.push(...(await visit(page, '/quiz/import')))
    problems.push(...(await visit(page, '/quiz/contact/messages')))
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it('the sign-in forms of both services re-rendered after a wrong password', async () => {
    const context = await newContext()
    const page = await newPage(context)
    const problems: string[] = []
    for (const [path, admin] of [['/', CLINICAL_ADMIN], ['/quiz/login', QUIZ_ADMIN]] as const) {
      await page.goto(path)
      await page.getByLabel('Email').fill(admin.email)
      await page.getByLabel('Password').fill(`${admin.password}-wrong`)
      const status = await submit(page, 'Sign in', (res) => res.url().endsWith('/login'))
      await page.locator('.flash.error').waitFor()
      if (status !== 422) problems.push(`${path}: a wrong password answered ${status}, expected 422`)
      problems.push(...(await checkPage(page, `${path} after a wrong password`, status)))
    }
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)
})

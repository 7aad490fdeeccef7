// The scores-over-time chart on the learner's "My progress" page (/quiz/progress): the figure, its summary for screen
// readers and its line of text without JavaScript; the JSON block the script draws from (every completed attempt,
// one line per quiz, at most CHART_QUIZZES quizzes, the most recent), escaped so that a quiz title cannot end it;
// the scripts next to the figure and no inline script; no chart for a new learner. Then in headless Chromium (the
// app served on a real port): the canvas drawn once, after a full load and after htmx boosted navigations, following
// the page's width and the dark scheme, with no console error and no serious axe violation.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { CHART_QUIZZES } from '../plugins/quiz/pages/learner'
import type { ScoresChart } from '../plugins/quiz/views/learner'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { API, createAccount, makeRegexQuiz, PASSWORD, registerAdmin, type Account } from './support/quiz'

setDefaultTimeout(30_000)

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']
/** The first line colour of each scheme in charts.js, as the canvas has it. */
const FIRST_LINE = { light: [0x1d, 0x6f, 0xa5], dark: [0x8c, 0xc4, 0xf2] }
const SECOND_LINE = { light: [0xb3, 0x26, 0x1e], dark: [0xff, 0x8f, 0x86] }

const html = { accept: 'text/html' }
/** With PAGE_SHOTS=<folder>, the chart's page is saved there as PNGs (light, narrow, dark), for a person to look at. */
const SHOTS = process.env.PAGE_SHOTS
const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''
/** A title that would end a <script> block and start another one, were it not escaped. */
const EVIL = 'Heart </script><script>alert("chart")</script> & <!-- valves'
const DATA_BLOCK = /<script type="application\/json" id="progress-data">([^<]*)<\/script>/

interface StudyQuestion { id: number; correct_answer: string; options: string[] }

let browser: Browser | null = null
let axeSource = ''
async function launchBrowser(): Promise<Browser> {
  if (browser) return browser
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM`)
  }
  axeSource = readFileSync(join(import.meta.dir, '..', 'node_modules/axe-core/axe.min.js'), 'utf8')
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, timeout: 15_000 })
  return browser
}
afterAll(async () => {
  await browser?.close().catch(() => {})
})

for (const target of databaseTargets()) {
  describe(`quiz pages: scores over time [${target}]`, () => {
    let t: TestApp
    let moderator: Account
    let learner: Account
    let busy: Account
    let learnerCookie = ''
    let freshCookie = ''
    let busyCookie = ''
    let heartId = 0
    let lungsId = 0

    const pageCookie = async (email: string) => {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return cookieOf(res)
    }
    const page = async (cookie: string, extra: Record<string, string> = {}) => {
      const res = await t.get('/quiz/progress', { headers: { ...html, cookie, ...extra } })
      expect(res.status).toBe(200)
      return res.text()
    }
    const newQuiz = async (title: string) => {
      const { quizId } = await makeRegexQuiz(t, moderator, { title, n: 4 })
      expect((await t.patch(`${API}/quizzes/${quizId}/publish`, undefined, { token: moderator.token })).status).toBe(200)
      return quizId
    }
    /** A completed attempt with `correct` of the 4 answers right, then dated `completedAt`; its id. */
    const finish = async (who: Account, quizId: number, correct: number, completedAt: string) => {
      const quiz = (await (await t.get(`${API}/quizzes/${quizId}?study=true`, { token: moderator.token })).json()) as { questions: StudyQuestion[] }
      const start = await t.post(`${API}/attempts/start?quiz_id=${quizId}&fresh=true`, undefined, { token: who.token })
      expect(start.status).toBe(200)
      const { id } = (await start.json()) as { id: number }
      const answers = quiz.questions.map((q, i) => ({ question_id: q.id, user_answer: i < correct ? q.correct_answer : q.options.find((o) => o !== q.correct_answer)! }))
      expect((await t.post(`${API}/attempts/${id}/submit`, { answers }, { token: who.token })).status).toBe(200)
      await t.db.sql`update quiz.attempts set completed_at = ${completedAt}::timestamptz where id = ${id}`
      return id
    }
    const chartOf = (body: string): ScoresChart => {
      const block = DATA_BLOCK.exec(body)
      expect(block).not.toBeNull()
      return JSON.parse(block![1]!) as ScoresChart
    }
    const attemptIds: Record<string, number> = {}

    beforeAll(async () => {
      t = await startTestApp({ target })
      const admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'chartmod')
      learner = await createAccount(t, admin, 'user', 'chartlearner')
      busy = await createAccount(t, admin, 'user', 'chartbusy')
      const fresh = await createAccount(t, admin, 'user', 'chartnew')
      heartId = await newQuiz(EVIL)
      lungsId = await newQuiz('Lungs')
      attemptIds.heart1 = await finish(learner, heartId, 3, '2025-01-03T09:15:00Z') // 75%
      attemptIds.lungs1 = await finish(learner, lungsId, 2, '2025-01-20T12:00:00Z') // 50%
      attemptIds.heart2 = await finish(learner, heartId, 4, '2025-02-09T16:40:00Z') // 100%
      // One quiz more than the chart draws, one a day: the first one taken is the one left out.
      const many = [heartId, lungsId]
      while (many.length < CHART_QUIZZES + 1) many.push(await newQuiz(`Extra ${many.length + 1}`))
      for (const [i, quizId] of many.entries()) await finish(busy, quizId, 1 + (i % 4), `2025-03-${String(i + 1).padStart(2, '0')}T08:00:00Z`)
      learnerCookie = await pageCookie(learner.email)
      freshCookie = await pageCookie(fresh.email)
      busyCookie = await pageCookie(busy.email)
    }, 120_000) // a fresh app and ten quizzes; slow on a busy machine
    afterAll(() => t?.close())

    it('a learner with completed attempts gets the figure: caption, summary for screen readers, a line of text without JavaScript', async () => {
      const body = await page(learnerCookie)
      const section = body.slice(body.indexOf('<section id="scores-over-time"'), body.indexOf('</section>', body.indexOf('<section id="scores-over-time"')))
      expect(section).toContain('<h2 id="scores-over-time-title">Scores over time</h2>')
      expect(section).toContain('<figure class="chart">')
      expect(section).toContain('<div id="progress-chart" role="img" aria-label="Scores of 3 attempts in 2 quizzes, from 3 Jan 2025 to 9 Feb 2025 (UTC); latest 100%.">')
      expect(section).toContain('<p class="muted">The chart needs JavaScript; the tables below list every score.</p>')
      expect(section).toContain('<figcaption class="muted">Your percentage in each completed attempt, by the time you finished it (UTC), one line per quiz. The tables below list every score.</figcaption>')
      // the chart sits between the summary and the tables that are its text alternative
      expect(body.indexOf('<h2>Summary</h2>')).toBeLessThan(body.indexOf('id="scores-over-time"'))
      expect(body.indexOf('id="scores-over-time"')).toBeLessThan(body.indexOf('<h2>Scores by quiz</h2>'))
    })

    it('the data block holds every completed attempt, one line per quiz, the latest quiz first, as the history has them', async () => {
      const chart = chartOf(await page(learnerCookie))
      expect(chart).toEqual({
        quizzes_total: 2,
        quizzes: [
          { quiz_id: heartId, title: EVIL, points: [
            { attempt_id: attemptIds.heart1!, date: '2025-01-03T09:15:00.000Z', percentage: 75 },
            { attempt_id: attemptIds.heart2!, date: '2025-02-09T16:40:00.000Z', percentage: 100 },
          ] },
          { quiz_id: lungsId, title: 'Lungs', points: [{ attempt_id: attemptIds.lungs1!, date: '2025-01-20T12:00:00.000Z', percentage: 50 }] },
        ],
      })
      // the same figures as the API's history
      const history = (await (await t.get(`${API}/attempts/history`, { token: learner.token })).json()) as Array<{ quiz_id: number; attempts: Array<{ attempt_id: number; date: string; percentage: number }> }>
      expect(chart.quizzes.map((q) => [q.quiz_id, q.points])).toEqual(history.map((h) => [h.quiz_id, h.attempts.map((a) => ({ attempt_id: a.attempt_id, date: a.date, percentage: a.percentage }))]))
    })

    it('a quiz title with </script> stays inside the JSON block: escaped there, parsed back unchanged', async () => {
      const body = await page(learnerCookie)
      expect(body).not.toContain('</script><script>alert("chart")')
      expect(body).not.toContain('<!-- valves')
      const block = DATA_BLOCK.exec(body)![1]!
      expect(block).toContain('Heart \\u003c/script\\u003e\\u003cscript\\u003ealert(\\"chart\\")\\u003c/script\\u003e \\u0026 \\u003c!-- valves')
      expect(chartOf(body).quizzes[0]!.title).toBe(EVIL)
      // and as text in the tables, HTML-escaped
      expect(body).toContain(`<h3 id="history-${heartId}-title">Heart &lt;/script&gt;&lt;script&gt;alert(&quot;chart&quot;)&lt;/script&gt; &amp; &lt;!-- valves</h3>`)
    })

    it('the scripts and the stylesheet are our own files next to the figure; the page has no inline script (CSP)', async () => {
      const res = await t.get('/quiz/progress', { headers: { ...html, cookie: learnerCookie } })
      const scriptSrc = (res.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src '))
      expect(scriptSrc).toContain("'self'")
      expect(scriptSrc).not.toContain("'unsafe-inline'")
      const body = await res.text()
      const section = body.slice(body.indexOf('<section id="scores-over-time"'))
      expect(section).toContain('<link rel="stylesheet" href="/quiz/static/uplot/uPlot.min.css"/>')
      expect(section).toContain('<script src="/quiz/static/uplot/uPlot.iife.min.js" defer></script><script src="/quiz/static/charts.js" defer></script><script src="/quiz/static/progress-chart.js" defer></script>')
      // uPlot and the shared chart code first, then the script that uses them
      expect(section.indexOf('uPlot.iife.min.js')).toBeLessThan(section.indexOf('progress-chart.js'))
      const scripts = body.match(/<script\b[^>]*>/g) ?? []
      expect(scripts.length).toBeGreaterThan(3)
      for (const tag of scripts) expect(tag).toMatch(/ src="\/quiz\/static\/[^"]+"| type="application\/json"/)
      for (const path of ['/quiz/static/uplot/uPlot.iife.min.js', '/quiz/static/charts.js', '/quiz/static/progress-chart.js', '/quiz/static/uplot/uPlot.min.css']) {
        const asset = await t.get(path)
        expect(asset.status).toBe(200)
        expect((await asset.text()).length).toBeGreaterThan(500)
      }
    })

    it('htmx gets the figure, its data and its scripts in the content fragment (htmx runs scripts it swaps in)', async () => {
      const body = await page(learnerCookie, { 'hx-request': 'true' })
      expect(body.startsWith('<div id="progress">')).toBe(true)
      expect(body).toContain('<div id="progress-chart" role="img"')
      expect(chartOf(body).quizzes.map((q) => q.quiz_id)).toEqual([heartId, lungsId])
      expect(body).toContain('<script src="/quiz/static/progress-chart.js" defer></script>')
    })

    it(`more than ${CHART_QUIZZES} quizzes: the ${CHART_QUIZZES} taken most recently are drawn, and the caption and summary say so`, async () => {
      const body = await page(busyCookie)
      const chart = chartOf(body)
      expect(chart.quizzes_total).toBe(CHART_QUIZZES + 1)
      expect(chart.quizzes.length).toBe(CHART_QUIZZES)
      expect(chart.quizzes.map((q) => q.quiz_id)).not.toContain(heartId) // the first one taken
      expect(chart.quizzes.at(-1)!.quiz_id).toBe(lungsId)
      expect(chart.quizzes[0]!.points[0]!.date).toBe(`2025-03-${String(CHART_QUIZZES + 1).padStart(2, '0')}T08:00:00.000Z`)
      expect(body).toContain(`The ${CHART_QUIZZES} quizzes you took most recently are drawn; the tables below list all ${CHART_QUIZZES + 1}.`)
      expect(body).toContain(`aria-label="Scores of ${CHART_QUIZZES} attempts in the ${CHART_QUIZZES} quizzes taken most recently, from 2 Mar 2025 to ${CHART_QUIZZES + 1} Mar 2025 (UTC); latest `)
      // every quiz is still in the tables
      expect(body).toContain(`id="history-${heartId}"`)
    })

    it('a new learner gets no chart, no data block and no chart scripts', async () => {
      for (const body of [await page(freshCookie), await page(freshCookie, { 'hx-request': 'true' })]) {
        expect(body).toContain('No attempts yet')
        expect(body).not.toContain('scores-over-time')
        expect(body).not.toContain('progress-chart')
        expect(body).not.toContain('progress-data')
        expect(body).not.toContain('uPlot')
      }
    })

    describe('in headless Chromium', () => {
      let server: ReturnType<typeof Bun.serve> | null = null
      let origin = ''
      beforeAll(async () => {
        await launchBrowser()
        server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request, s) => t.booted.fetch(request, s) })
        origin = `http://127.0.0.1:${server.port}`
      })
      afterAll(() => server?.stop(true))

      /** What the chart shows now: uPlot roots, canvas size, and pixels of the first two lines' colours. */
      const chartState = (page: Page, scheme: 'light' | 'dark') => page.evaluate(([first, second]) => {
        const canvas = document.querySelector<HTMLCanvasElement>('#progress-chart canvas')
        const count = (rgb: number[]) => {
          if (!canvas) return 0
          const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
          let n = 0
          for (let i = 0; i < data.length; i += 4) if (data[i] === rgb[0] && data[i + 1] === rgb[1] && data[i + 2] === rgb[2] && data[i + 3] === 255) n++
          return n
        }
        const figure = document.querySelector('#progress-chart')!
        return {
          roots: document.querySelectorAll('.uplot').length,
          canvasWidth: canvas ? canvas.getBoundingClientRect().width : 0,
          figureWidth: figure.getBoundingClientRect().width,
          firstLine: count(first!),
          secondLine: count(second!),
          fallback: figure.querySelector('p') !== null,
          label: figure.getAttribute('aria-label'),
          legend: [...document.querySelectorAll('.u-legend .u-series .u-label')].map((e) => e.textContent),
        }
      }, [FIRST_LINE[scheme], SECOND_LINE[scheme]])

      const axeViolations = async (page: Page) => {
        if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource)
        return page.evaluate(async (tags) => {
          const axe = (window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; impact?: string | null; nodes: Array<{ target: unknown[] }> }> }> } }).axe
          const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })
          return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
        }, AXE_TAGS)
      }

      it('the canvas is drawn once after a full load and after boosted navigations, follows the width and the scheme; no console error', async () => {
        const context = await browser!.newContext({ baseURL: origin, viewport: { width: 1200, height: 900 } })
        context.setDefaultTimeout(10_000)
        const page = await context.newPage()
        const errors: string[] = []
        page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()) })
        page.on('pageerror', (err) => errors.push(err.message))
        page.on('dialog', (dialog) => { errors.push(`dialog: ${dialog.message()}`); void dialog.dismiss() })

        await page.goto('/quiz/login')
        await page.getByLabel('Email').fill(learner.email)
        await page.getByLabel('Password').fill(PASSWORD)
        await page.getByRole('button', { name: 'Sign in' }).click()
        await page.waitForURL(/\/quiz\/$/)

        // boosted navigation from another page: the scripts in the swapped body run
        await page.getByRole('navigation').getByRole('link', { name: 'My progress' }).click()
        await page.waitForURL('**/quiz/progress')
        await page.locator('#progress-chart canvas').waitFor()
        let state = await chartState(page, 'light')
        expect(state.roots).toBe(1)
        expect(state.fallback).toBe(false)
        expect(state.firstLine).toBeGreaterThan(20)
        expect(state.secondLine).toBeGreaterThan(5) // one attempt: one point
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/progress-chart-${target}-light.png`, fullPage: true })
        expect(state.label).toBe('Scores of 3 attempts in 2 quizzes, from 3 Jan 2025 to 9 Feb 2025 (UTC); latest 100%.')
        // the key names each line as text (a long title cut), never as markup
        expect(state.legend).toEqual(['Completed', `${EVIL.slice(0, 39).trimEnd()}…`, 'Lungs'])

        // away and back again by boosted links, then a full load: still one chart, drawn
        await page.getByRole('navigation').getByRole('link', { name: 'Reviews' }).click()
        await page.waitForURL('**/quiz/reviews')
        await page.getByRole('navigation').getByRole('link', { name: 'My progress' }).click()
        await page.waitForURL('**/quiz/progress')
        await page.locator('#progress-chart canvas').waitFor()
        await page.reload()
        await page.locator('#progress-chart canvas').waitFor()
        state = await chartState(page, 'light')
        expect(state.roots).toBe(1)
        expect(state.firstLine).toBeGreaterThan(20)

        // the page gets narrower: so does the chart
        const wide = state.canvasWidth
        expect(wide).toBeLessThanOrEqual(state.figureWidth)
        await page.setViewportSize({ width: 420, height: 900 })
        await page.waitForFunction((before) => {
          const canvas = document.querySelector('#progress-chart canvas')
          return canvas !== null && canvas.getBoundingClientRect().width < before
        }, wide)
        state = await chartState(page, 'light')
        expect(state.canvasWidth).toBeLessThanOrEqual(state.figureWidth)
        expect(state.firstLine).toBeGreaterThan(20)
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/progress-chart-${target}-narrow.png`, fullPage: true })
        expect(await axeViolations(page)).toEqual([])

        // the dark scheme: the lines are drawn again in its colours
        await page.emulateMedia({ colorScheme: 'dark' })
        await page.waitForFunction(() => {
          const marker = document.querySelector<HTMLElement>('.u-legend .u-series:nth-child(2) .u-marker')
          return marker !== null && marker.style.borderColor === 'rgb(140, 196, 242)'
        })
        state = await chartState(page, 'dark')
        if (SHOTS) await page.screenshot({ path: `${SHOTS}/progress-chart-${target}-dark.png`, fullPage: true })
        expect(state.roots).toBe(1)
        expect(state.firstLine).toBeGreaterThan(20)
        expect(state.secondLine).toBeGreaterThan(5)
        expect(await axeViolations(page)).toEqual([])

        expect(errors).toEqual([])
        await context.close()
      }, 60_000)

      it('without JavaScript the figure shows its line of text', async () => {
        const context = await browser!.newContext({ baseURL: origin, javaScriptEnabled: false, extraHTTPHeaders: { cookie: learnerCookie } })
        const page = await context.newPage()
        await page.goto('/quiz/progress')
        expect(await page.locator('#progress-chart p').textContent()).toBe('The chart needs JavaScript; the tables below list every score.')
        expect(await page.locator('#progress-chart p').isVisible()).toBe(true)
        expect(await page.locator('#progress-chart canvas').count()).toBe(0)
        await context.close()
      }, 20_000)
    })
  })
}

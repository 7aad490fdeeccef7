// The page rule, in headless Chromium: every page of both services, signed out and signed in as each service's
// first (admin) user, plus the pages a failed form shows, loads without a console error or page error (a CSP
// violation shows as a console error), has no serious or critical axe-core violation (WCAG 2 A/AA, in the light
// and the dark colour scheme, since app.css follows the system's), and links only to same-origin URLs that answer
// a GET with < 400 (links and form actions, but not the sign-out form). The harness (test/support/browser.ts) runs
// the real server as a process, as `npm start` does, on a fresh data folder and an in-memory database, and needs
// Debian's chromium: .ci/run installs it; elsewhere, `apt-get install chromium` (or CHROMIUM=/path/to/chrome).
import { describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { strToU8, zipSync } from 'fflate'
import { generate } from 'otplib'
import type { Page } from 'playwright-core'
import { EXPORT_FILE_NAME, EXPORT_FORMAT, EXPORT_VERSION, EXPORT_ZIP_NAME, type ExportFile } from '../plugins/directory/model'
import { useBrowserHarness } from './support/browser'
import { makePdf } from './support/pdf'

const CLINICAL_ADMIN = { name: 'Browser <Admin>', email: 'browser-admin@example.test', password: 'Browser-check-password-5' }
const QUIZ_ADMIN = { name: 'Quiz <Admin>', email: 'quiz-admin@example.test', password: 'Quiz-check-password-5' }

const h = useBrowserHarness()

/** A quiz API call of the server under test (Bearer token), expected to succeed: its JSON. */
async function api(path: string, init: RequestInit & { token?: string } = {}): Promise<Record<string, unknown>> {
  const headers = new Headers(init.headers)
  if (init.token) headers.set('authorization', `Bearer ${init.token}`)
  if (typeof init.body === 'string') headers.set('content-type', 'application/json')
  const res = await fetch(`${h.base}/quiz/api${path}`, { ...init, headers })
  expect(res.status).toBeLessThan(300)
  return res.json() as Promise<Record<string, unknown>>
}

describe('every page in headless Chromium: no console error, no serious axe violation, no broken link', () => {
  it('clinical pages, signed out', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems = [
      ...(await h.visit(page, '/')),
      ...(await h.visit(page, '/register')),
      ...(await h.visit(page, '/forgot-password')),
      ...(await h.visit(page, '/reset-password?token=x')),
      ...(await h.visit(page, '/api/auth/verify-email?token=not-a-token', 400)),
      ...(await h.visit(page, '/no-such-page', 404)),
    ]
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it('quiz pages, signed out', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems = [
      ...(await h.visit(page, '/quiz/login')),
      ...(await h.visit(page, '/quiz/register')),
      ...(await h.visit(page, '/quiz/forgot-password')),
      ...(await h.visit(page, '/quiz/reset-password?token=x')),
      ...(await h.visit(page, '/quiz/contact')),
      ...(await h.visit(page, '/quiz/verify-email?token=x', 400)),
      ...(await h.visit(page, '/quiz/no-such-page', 404)),
    ]
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it('the API documents of both services in Swagger UI, an operation open', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    for (const path of ['/docs', '/quiz/docs']) {
      const res = await page.goto(path)
      expect(res?.status()).toBe(200)
      // Swagger UI draws the operations once it has the document; an admin reading one opens it
      await page.locator('.opblock-summary-control').first().click()
      await page.waitForSelector('.opblock-body .responses-wrapper')
      await h.shot(page, path.replace(/[^a-z0-9]+/gi, '_'))
      problems.push(...(await h.checkPage(page, path, 200)))
    }
    await context.close()
    expect(problems).toEqual([])
  }, 30_000)

  it('clinical pages of the first user, registered through the form: account, two-factor setup, backup codes', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    await page.goto('/register')
    await page.getByLabel('Name').fill(CLINICAL_ADMIN.name)
    await page.getByLabel('Email').fill(CLINICAL_ADMIN.email)
    await page.getByLabel(/^Password/).fill(CLINICAL_ADMIN.password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL('**/account')
    await page.locator('dd', { hasText: CLINICAL_ADMIN.email }).waitFor()
    problems.push(...(await h.checkPage(page, 'account (first user, admin)', 200)))

    await h.submit(page, 'Set up two-factor authentication', (res) => res.url().endsWith('/account/2fa/setup'))
    await page.locator('img.qr').waitFor()
    problems.push(...(await h.checkPage(page, 'two-factor setup', 200)))
    const secret = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s/g, '')

    await page.getByLabel('Code').fill('000000')
    const wrong = await h.submit(page, 'Turn on', (res) => res.url().endsWith('/account/2fa/enable'))
    await page.locator('.field-error').waitFor()
    problems.push(...(await h.checkPage(page, 'two-factor setup, wrong code', wrong)))

    await page.getByLabel('Code').fill(await generate({ secret }))
    await h.submit(page, 'Turn on', (res) => res.url().endsWith('/account/2fa/enable'))
    await page.locator('ol.backup-codes').waitFor()
    problems.push(...(await h.checkPage(page, 'backup codes', 200)))

    problems.push(...(await h.visit(page, '/account')))
    // the clinician's record pages and the phone directory, empty
    for (const path of ['/encounters', '/memories', '/documents', '/preferences', '/directory', '/directory/trash', '/directory/import']) problems.push(...(await h.visit(page, path)))
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)

  it("a clinician's note in the workspace: dictation uploaded, transcript, a SOAP note streamed, refined, saved, reopened", async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    const shot = (name: string) => h.shot(page, `workspace-${name}`)
    // A second clinician (a user, not the admin, who has two-factor on by now), registered through the form.
    await page.goto('/register')
    await page.getByLabel('Name').fill('Dr <Second>')
    await page.getByLabel('Email').fill('second-clinician@example.test')
    await page.getByLabel(/^Password/).fill('Second-clinician-password-5')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL('**/account')
    await page.getByRole('navigation').getByRole('link', { name: 'Workspace' }).click()
    await page.waitForURL('**/workspace')
    problems.push(...(await h.checkPage(page, 'the workspace, empty', 200)))
    await shot('1-empty')

    // A short recording (a second of silence as WAV): the test gateway transcribes it.
    const wavPath = join(h.dataDir, 'dictation.wav')
    const samples = 8000
    const wav = Buffer.alloc(44 + samples * 2)
    wav.write('RIFF', 0); wav.writeUInt32LE(36 + samples * 2, 4); wav.write('WAVE', 8); wav.write('fmt ', 12)
    wav.writeUInt32LE(16, 16); wav.writeUInt16LE(1, 20); wav.writeUInt16LE(1, 22); wav.writeUInt32LE(8000, 24)
    wav.writeUInt32LE(16000, 28); wav.writeUInt16LE(2, 32); wav.writeUInt16LE(16, 34); wav.write('data', 36); wav.writeUInt32LE(samples * 2, 40)
    await Bun.write(wavPath, wav)
    await page.getByLabel('Audio file').setInputFiles(wavPath)
    await page.getByRole('button', { name: 'Transcribe the file' }).click()
    await h.expectValue(page, '#ws-transcript', /test transcript/)
    problems.push(...(await h.checkPage(page, 'the workspace with a transcript', 200)))

    // The note streams in from the gateway; then one click refines it.
    h.ai.reply(() => 'S: Cough for three days.\nO: Afebrile, clear lungs.\nA: Viral upper respiratory infection.\nP: Fluids and rest.')
    await page.getByLabel('Patient age').fill('7 years')
    await page.getByRole('button', { name: 'Write the note' }).click()
    await h.expectValue(page, '#ws-note', /P: Fluids and rest\./)
    await shot('2-note')
    h.ai.reply(() => 'S: Cough for three days, no fever.\nO: Afebrile, clear lungs.\nA: Viral upper respiratory infection.\nP: Fluids, rest, return if breathing is hard.')
    await page.getByLabel('Refine instruction').fill('Add the return precautions')
    await page.getByRole('button', { name: 'Refine', exact: true }).click()
    await h.expectValue(page, '#ws-note', /return if breathing is hard/)
    h.ai.reset()
    problems.push(...(await h.checkPage(page, 'the workspace with a refined note', 200)))

    // Saved as an encounter (a draft), then reopened from its address.
    await page.getByLabel('Label').fill('Cough, 7 years')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.waitForURL(/\/workspace\?encounter=\d+/)
    await page.locator('#flash', { hasText: 'Saved' }).waitFor()
    await page.getByText('Draft', { exact: false }).first().waitFor()
    problems.push(...(await h.checkPage(page, 'the workspace with a saved draft', 200)))
    await shot('3-saved')
    const saved = page.url()
    await page.goto('/encounters')
    await page.getByText('Cough, 7 years').first().waitFor()
    problems.push(...(await h.checkPage(page, 'the saved encounters', 200)))
    await page.goto(saved)
    await h.expectValue(page, '#ws-note', /return if breathing is hard/)
    problems.push(...(await h.checkPage(page, 'the workspace, reopened', 200)))
    await shot('4-reopened')
    await context.close()
    expect(problems).toEqual([])
  }, 60_000)

  it('a phone directory import with duplicates: entries added, one trashed, a file previewed by the four rules, imported with the trashed one restored', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    const shot = (name: string) => h.shot(page, `directory-${name}`)
    await page.goto('/register')
    await page.getByLabel('Name').fill('Dr <Directory>')
    await page.getByLabel('Email').fill('directory-clinician@example.test')
    await page.getByLabel(/^Password/).fill('Directory-clinician-password-5')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL('**/account')

    // Three entries through the add form (an htmx swap of the table and the form), then one moved to the trash.
    problems.push(...(await h.visit(page, '/directory')))
    const entries = [
      { location: 'Ward 4', name: 'Charge nurse', number: '4411', type: 'extension', notes: 'Day shift' },
      { location: 'Radiology', name: 'Reception', number: '5520', type: 'extension', notes: '' },
      { location: 'ICU', name: 'On-call registrar', number: '7788', type: 'pager', notes: 'Bleep after 18:00' },
    ]
    for (const [i, e] of entries.entries()) {
      const add = page.locator('#dir-add')
      await add.getByLabel('Location', { exact: true }).fill(e.location)
      await add.getByLabel('Name', { exact: true }).fill(e.name)
      await add.getByLabel('Number', { exact: true }).fill(e.number)
      await add.getByLabel('Type').selectOption(e.type)
      await add.getByLabel('Notes', { exact: true }).fill(e.notes)
      await add.getByRole('button', { name: 'Add entry' }).click()
      await page.locator('#dir-count', { hasText: `${i + 1} ${i === 0 ? 'entry' : 'entries'}.` }).waitFor()
    }
    await h.htmxSettled(page)
    problems.push(...(await h.checkPage(page, 'the directory with three entries', 200)))
    await shot('1-added')
    await page.getByRole('button', { name: 'Move to trash: On-call registrar' }).click()
    await page.getByText('The entry was moved to the trash.').waitFor()
    await page.locator('#dir-count', { hasText: '2 entries.' }).waitFor()
    await h.htmxSettled(page)
    problems.push(...(await h.checkPage(page, 'the directory after a move to the trash', 200)))
    problems.push(...(await h.visit(page, '/directory/trash')))
    await page.getByRole('button', { name: 'Restore: On-call registrar' }).waitFor()
    await shot('2-trash')

    // The file: the export format (the zip of one JSON file), holding one entry for each of the rules.
    const [nurse, reception, registrar] = entries
    const file: ExportFile = {
      format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: new Date().toISOString(),
      items: [
        nurse!, // rule 1: exactly an active entry, always skipped
        registrar!, // rule 2: exactly the trashed entry, restored when asked
        { ...reception!, name: 'Night reception' }, // rule 3: same location and number, another name
        { location: 'Pharmacy', name: 'Dispensary', number: '6100', type: 'extension', notes: '' },
        { location: 'Theatres', name: 'Coordinator', number: '2233', type: 'pager', notes: 'Theatre 3' },
      ],
    }
    const zipPath = join(h.dataDir, EXPORT_ZIP_NAME)
    await Bun.write(zipPath, zipSync({ [EXPORT_FILE_NAME]: strToU8(JSON.stringify(file)) }))
    problems.push(...(await h.visit(page, '/directory/import')))
    await page.getByLabel('Export file').setInputFiles(zipPath)
    await page.getByRole('button', { name: 'Preview the import' }).click()
    await page.waitForURL(/\/directory\/import\/[\w-]+$/)
    const previewUrl = new URL(page.url()).pathname
    problems.push(...(await h.checkPage(page, 'the import preview', 200)))
    await shot('3-preview')
    const facts = (selector: string) => page.locator(selector).evaluate((dl) =>
      Object.fromEntries([...dl.querySelectorAll('dt')].map((dt) => [dt.textContent?.trim(), dt.nextElementSibling?.textContent?.trim()])))
    expect(await facts('#dir-summary')).toEqual({
      'Entries in the file': '5',
      'New': '2',
      'Already in your directory (skipped)': '1',
      'The same as an entry in your trash': '1',
      'Possible duplicates (same location and number, or same number and type)': '1',
      'Cannot be imported (a rule is not met)': '0',
    })
    const found = await page.locator('#dir-preview tbody tr').evaluateAll((rows) => rows.map((r) => r.lastElementChild?.textContent?.trim()))
    expect(found).toEqual(['Already in your directory', 'In your trash', 'Possible duplicate', 'New', 'New'])

    // Restore the trashed one, leave the possible duplicate out: 2 imported, 1 restored, 1 skipped, 1 possible skipped.
    await page.getByLabel('Restore entries from the trash that the file holds exactly').check()
    expect(await page.getByLabel('Import possible duplicates too').isChecked()).toBe(false)
    await page.getByRole('button', { name: 'Import', exact: true }).click()
    await page.locator('#dir-result').waitFor()
    problems.push(...(await h.checkPage(page, 'the import done', 200)))
    await shot('4-imported')
    const result = {
      'Imported': '2',
      'Restored from the trash': '1',
      'Skipped as duplicates': '1',
      'Possible duplicates skipped': '1',
      'Could not be imported': '0',
      'Entries in the file': '5',
    }
    expect(await facts('#dir-result')).toEqual(result)
    // the preview's address shows that import again rather than a second one
    problems.push(...(await h.visit(page, previewUrl)))
    expect(await facts('#dir-result')).toEqual(result)

    // The table: the active two, the restored one and the two new ones; the duplicates not a second time.
    await page.getByRole('link', { name: 'Open the directory' }).click()
    await page.waitForURL(/\/directory$/)
    await page.locator('#dir-count', { hasText: '5 entries.' }).waitFor()
    problems.push(...(await h.checkPage(page, 'the directory after the import', 200)))
    await shot('5-directory')
    const rows = await page.locator('#dir-rows tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 4).map((c) => c.textContent?.trim()).join(' | ')))
    expect(rows.sort()).toEqual([
      'ICU | On-call registrar | 7788 | Pager',
      'Pharmacy | Dispensary | 6100 | Extension',
      'Radiology | Reception | 5520 | Extension',
      'Theatres | Coordinator | 2233 | Pager',
      'Ward 4 | Charge nurse | 4411 | Extension',
    ])
    problems.push(...(await h.visit(page, '/directory/trash')))
    await page.getByText('The trash is empty.').waitFor()
    await context.close()
    expect(problems).toEqual([])
  }, 60_000)

  it('quiz pages of the first user, registered through the form: my account', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    await page.goto('/quiz/register')
    await page.getByLabel('Name').fill(QUIZ_ADMIN.name)
    await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
    await page.getByLabel(/^Password/).fill(QUIZ_ADMIN.password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(/\/quiz\/$/)
    await page.locator('dd', { hasText: QUIZ_ADMIN.email }).waitFor()
    const problems = [...(await h.checkPage(page, 'quiz account (first user, admin)', 200)), ...(await h.visit(page, '/quiz/'))]
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
    await fetch(`${h.base}/quiz/api/quizzes/${trashedQuiz.quiz_id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })

    const context = await h.newContext()
    const page = await h.newPage(context)
    await page.goto('/quiz/login')
    await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
    await page.getByLabel('Password').fill(QUIZ_ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/quiz\/$/)
    const quizUrl = `/quiz/quizzes/${job.quiz_id}`
    const problems = [
      ...(await h.visit(page, '/quiz/quizzes')),
      ...(await h.visit(page, '/quiz/quizzes/trash')),
      ...(await h.visit(page, `${quizUrl}/questions/${question!.id}/edit`)),
      ...(await h.visit(page, quizUrl)),
    ]
    // click-to-edit with htmx: the row becomes the form in place
    await page.getByRole('link', { name: 'Edit question' }).click()
    await page.getByText('applies to every quiz that uses it').waitFor()
    problems.push(...(await h.checkPage(page, 'quiz page with a question in edit', 200)))
    await context.close()
    expect(problems).toEqual([])
  }, 30_000)

  it("a moderator's day through the pages alone: upload, section, extraction, the quiz, a question edited, published, the bank, then the learner's pages", async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    const shot = (name: string) => h.shot(page, `walk-${name}`)
    await page.goto('/quiz/login')
    await page.getByLabel('Email').fill(QUIZ_ADMIN.email)
    await page.getByLabel('Password').fill(QUIZ_ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/quiz\/$/)

    // Upload: the nav names the area; the form is a plain multipart post that lands on the document's page.
    await page.getByRole('navigation').getByRole('link', { name: 'Documents' }).click()
    await page.waitForURL('**/quiz/documents')
    problems.push(...(await h.checkPage(page, 'documents', 200)))
    await shot('1-documents')
    const pdfPath = join(h.dataDir, 'walk.pdf')
    await Bun.write(pdfPath, await makePdf([
      ['1. Which chamber pumps blood into the aorta?', 'A) Right atrium', 'B) Left ventricle', 'C) Right ventricle', 'Answer: B'],
      ['2. Which vessel carries blood from the lungs?', 'A) Pulmonary vein', 'B) Vena cava', 'Answer: A'],
    ]))
    await page.getByLabel('PDF file').setInputFiles(pdfPath)
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    await page.waitForURL(/\/quiz\/documents\/\d+(\?|$)/)
    await page.getByText('Add a section', { exact: false }).first().waitFor()
    problems.push(...(await h.checkPage(page, 'a document, processed', 200)))
    await shot('2-document')

    // A section, then a quiz from it by pattern matching (no AI).
    await page.getByLabel('Section name').fill('Cardiology')
    await page.locator('#section-start').fill('1')
    await page.locator('#section-end').fill('2')
    await page.getByRole('button', { name: 'Add the section' }).click()
    await page.getByText('Make a quiz from "Cardiology"').click()
    await page.getByLabel('Quiz title').fill('Heart basics')
    await page.getByLabel('Pattern matching (no AI)').check()
    problems.push(...(await h.checkPage(page, 'a document with a section and its quiz form open', 200)))
    await shot('3-section')
    await page.getByRole('button', { name: 'Make the quiz' }).click()
    await page.waitForURL(/\/quiz\/documents\/jobs\//)
    await page.getByRole('link', { name: /quiz/i }).filter({ hasText: /open|quiz/i }).first().waitFor()
    problems.push(...(await h.checkPage(page, 'the extraction job, completed', 200)))
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
    problems.push(...(await h.checkPage(page, 'the quiz, edited and published', 200)))
    await shot('5-quiz')

    // The bank shows the edited question; categories are one click away.
    await page.getByRole('navigation').getByRole('link', { name: 'Question bank' }).click()
    await page.waitForURL('**/quiz/bank')
    await page.getByText('Which chamber of the heart pumps blood into the aorta?').first().waitFor()
    problems.push(...(await h.checkPage(page, 'the question bank', 200)))
    await shot('6-bank')
    await page.getByRole('navigation').getByRole('link', { name: 'Categories' }).click()
    await page.waitForURL('**/quiz/categories')
    problems.push(...(await h.checkPage(page, 'categories', 200)))
    await shot('7-categories')
    // the learner's side of the same account: progress, due reviews, favorites
    for (const [name, path] of [['progress', '/quiz/progress'], ['reviews', '/quiz/reviews'], ['favorites', '/quiz/favorites']] as const) {
      await page.getByRole('navigation').getByRole('link', { name: name === 'progress' ? 'My progress' : name === 'reviews' ? 'Reviews' : 'Favorites' }).click()
      await page.waitForURL(`**${path}`)
      problems.push(...(await h.checkPage(page, name, 200)))
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
    const shot = (page: Page, name: string) => h.shot(page, `player-${name}`)
    const secondsLeft = async (page: Page) => {
      const [m, s] = ((await page.locator('#timer').textContent()) ?? '').split(':').map(Number)
      return m! * 60 + s!
    }
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    await signIn(page)

    // Timed: start from the quiz's page; answer one question; the autosave stores it (the POST answers 204).
    problems.push(...(await h.visit(page, `/quiz/play/${timedId}`)))
    await page.getByRole('button', { name: 'Start the quiz' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+\/play$/)
    const playerUrl = new URL(page.url()).pathname
    expect(await secondsLeft(page)).toBeGreaterThan(9 * 60 + 50)
    const saved = page.waitForResponse((res) => res.url().endsWith('/progress') && res.request().method() === 'POST')
    await page.getByLabel('Mitral').check()
    expect((await saved).status()).toBe(204)
    await page.locator('#save-state', { hasText: 'saved at' }).waitFor()
    problems.push(...(await h.checkPage(page, 'the timed player', 200)))
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
    problems.push(...(await h.checkPage(page, 'the timed player after a reload', 200)))

    // A second browser signed in as the same person: the quiz is held by the first one.
    const other = await h.newContext()
    const second = await h.newPage(other)
    await signIn(second)
    const res = await second.goto(playerUrl)
    expect(res?.status()).toBe(409)
    await second.getByText('This quiz is open on another device or browser').waitFor()
    problems.push(...(await h.checkPage(second, 'the player held by another browser', 409)))
    await shot(second, '2-locked')
    await other.close()

    // Submit from the first: the results page.
    await page.getByLabel('Pulmonary vein').check()
    await page.getByRole('button', { name: 'Submit my answers' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+$/)
    await page.locator('#score', { hasText: '2 of 2' }).waitFor()
    problems.push(...(await h.checkPage(page, 'the results of a timed attempt', 200)))
    await shot(page, '3-results')

    // Learning: answer, see the explanation at once, ask the tutor beside it.
    problems.push(...(await h.visit(page, `/quiz/play/${learningId}`)))
    await page.getByRole('button', { name: 'Start the quiz' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+\/play$/)
    problems.push(...(await h.checkPage(page, 'the learning player', 200)))
    await page.getByLabel('Tricuspid').check()
    await page.getByRole('button', { name: 'Check my answer' }).click()
    await page.getByText('Not quite.').waitFor()
    await page.getByText('The mitral valve has two cusps.').waitFor()
    h.ai.reply(() => 'The mitral valve lies between the left atrium and the left ventricle.\n> What does the tricuspid valve do?\n> Why two cusps?\n> Where is the aortic valve?')
    await page.getByLabel('Your question').fill('Why not the tricuspid?')
    await page.getByRole('button', { name: 'Ask', exact: true }).click()
    await page.getByText('The mitral valve lies between the left atrium and the left ventricle.').waitFor()
    await page.getByRole('button', { name: 'Why two cusps?' }).waitFor()
    h.ai.reset()
    problems.push(...(await h.checkPage(page, 'the learning player with a tutor answer', 200)))
    await shot(page, '4-learning')
    await page.getByRole('link', { name: 'Next question' }).click()
    await page.getByLabel('Pulmonary vein').check()
    await page.getByRole('button', { name: 'Check my answer' }).click()
    await page.getByText('Correct.').waitFor()
    await page.getByRole('button', { name: 'Finish and see my score' }).click()
    await page.waitForURL(/\/quiz\/attempts\/\d+$/)
    await page.locator('#score', { hasText: '1 of 2' }).waitFor()
    problems.push(...(await h.checkPage(page, 'the results of a learning attempt', 200)))
    // the due-review player (nothing is due yet: its empty state), the progress chart of the two attempts, the quiz
    // list with a search, the moderator's file-server import and the admin's contact messages
    problems.push(...(await h.visit(page, '/quiz/reviews/play')))
    problems.push(...(await h.visit(page, '/quiz/progress')))
    await page.locator('figure.chart canvas').first().waitFor()
    await shot(page, '5-progress')
    problems.push(...(await h.visit(page, '/quiz/quizzes?q=valve')))
    problems.push(...(await h.visit(page, '/quiz/quizzes?q=v')))
    problems.push(...(await h.visit(page, '/quiz/import')))
    problems.push(...(await h.visit(page, '/quiz/contact/messages')))
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it('the sign-in forms of both services re-rendered after a wrong password', async () => {
    const context = await h.newContext()
    const page = await h.newPage(context)
    const problems: string[] = []
    for (const [path, admin] of [['/', CLINICAL_ADMIN], ['/quiz/login', QUIZ_ADMIN]] as const) {
      await page.goto(path)
      await page.getByLabel('Email').fill(admin.email)
      await page.getByLabel('Password').fill(`${admin.password}-wrong`)
      const status = await h.submit(page, 'Sign in', (res) => res.url().endsWith('/login'))
      await page.locator('.flash.error').waitFor()
      if (status !== 422) problems.push(`${path}: a wrong password answered ${status}, expected 422`)
      problems.push(...(await h.checkPage(page, `${path} after a wrong password`, status)))
    }
    await context.close()
    expect(problems).toEqual([])
  }, 20_000)
})

// The learning hub in headless Chromium, through the pages alone: an author (the first clinical user, an admin)
// makes a category, writes an article with slides and a two-question quiz in the studio while the slide preview
// follows the typing, downloads the PowerPoint file; then a plain user finds the article in the hub, reads it, takes
// its quiz (one answer right, one wrong, said in words) and steps through its slides with the keyboard. Every page
// on the way has no console error, no serious axe violation (light and dark) and no broken link.
import { describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { unzipSync } from 'fflate'
import type { Page } from 'playwright-core'
import { useBrowserHarness } from './support/browser'

const AUTHOR = { name: 'Hub <Author>', email: 'hub-author@example.test', password: 'Hub-author-password-5' }
const READER = { name: 'Hub Reader', email: 'hub-reader@example.test', password: 'Hub-reader-password-5' }
const SLIDES = [
  '---', 'marp: true', '---', '',
  '# Inhaler technique', '', '- Shake the inhaler', '- Breathe out fully', '', '<!-- Show a spacer to the family. -->', '',
  '---', '', '# With a spacer', '', '- One puff at a time', '- Five breaths per puff', '',
  '---', '', '# Review', '', '- Check technique at every visit',
].join('\n')

const h = useBrowserHarness()

async function register(page: Page, who: typeof AUTHOR): Promise<void> {
  await page.goto('/register')
  await page.getByLabel('Name').fill(who.name)
  await page.getByLabel('Email').fill(who.email)
  await page.getByLabel(/^Password/).fill(who.password)
  await page.getByRole('button', { name: 'Create account' }).click()
  await page.waitForURL((url) => !url.pathname.endsWith('/register'))
}

describe('the learning hub in headless Chromium', () => {
  it('an author writes an article with slides and a quiz in the studio; a reader reads it, takes the quiz and steps through the slides', async () => {
    const problems: string[] = []
    const authorContext = await h.newContext()
    const author = await h.newPage(authorContext)
    await register(author, AUTHOR)

    // A category first: the editor's category list needs one.
    problems.push(...(await h.visit(author, '/studio')))
    problems.push(...(await h.visit(author, '/studio/categories')))
    await author.getByLabel('Name').fill('Respiratory')
    await author.getByLabel(/^Slug/).fill('respiratory')
    await author.getByRole('button', { name: /^Add/ }).click()
    await author.getByRole('cell', { name: 'Respiratory' }).or(author.getByText('respiratory', { exact: true })).first().waitFor()
    // The new row can be in before htmx has settled: the Add button still faded (htmx-request) fails the contrast rule.
    await h.htmxSettled(author)
    problems.push(...(await h.checkPage(author, 'studio categories after adding one', 200)))

    problems.push(...(await h.visit(author, '/studio/new?type=article')))
    await author.getByLabel('Title', { exact: true }).fill('Asthma inhalers <made easy>')
    await author.getByLabel('Category').selectOption({ label: 'Respiratory' })
    await author.locator('#studio-body').fill('# Inhalers\n\nUse a **spacer** with a metered dose inhaler.\n\n- Shake\n- Breathe out\n')
    await author.locator('#studio-slides').fill(SLIDES)
    // The preview follows the typing (htmx, a moment after the last key).
    await author.locator('#studio-preview div.marpit > svg').nth(2).waitFor({ timeout: 15_000 })
    expect(await author.locator('#studio-preview div.marpit > svg').count()).toBe(3)
    await author.locator('[name="questions.0.text"]').fill('Which device helps a child use a metered dose inhaler?')
    await author.locator('[name="questions.0.options.0.text"]').fill('A spacer')
    await author.locator('[name="questions.0.options.0.correct"]').check()
    await author.locator('[name="questions.0.options.1.text"]').fill('A nebuliser mask only')
    await author.getByRole('button', { name: 'Add question' }).click()
    await author.locator('[name="questions.1.text"]').fill('Which steps belong to good technique?')
    await author.locator('[name="questions.1.options.0.text"]').fill('Shake the inhaler')
    await author.locator('[name="questions.1.options.0.correct"]').check()
    await author.locator('[name="questions.1.options.1.text"]').fill('Breathe out fully first')
    await author.locator('[name="questions.1.options.1.correct"]').check()
    await author.locator('[name="questions.1.options.2.text"]').fill('Two puffs at once')
    await h.shot(author, 'learning-1-editor')
    problems.push(...(await h.checkPage(author, 'studio editor, filled in', 200)))

    await author.getByRole('button', { name: 'Save the new content' }).click()
    await author.waitForURL(/\/studio\/\d+/)
    await author.getByText(/saved/i).first().waitFor()
    problems.push(...(await h.checkPage(author, 'studio editor after saving', 200)))
    await h.shot(author, 'learning-2-saved')

    // The PowerPoint download: a real pptx with one slide per Marp slide.
    const download = author.waitForEvent('download')
    await author.getByRole('button', { name: 'Download PowerPoint' }).click()
    const file = await download
    expect(file.suggestedFilename()).toMatch(/\.pptx$/)
    const pptx = unzipSync(new Uint8Array(readFileSync((await file.path())!)))
    expect(Object.keys(pptx).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name))).toHaveLength(3)
    problems.push(...(await h.visit(author, '/studio')))
    await authorContext.close()

    // A plain user reads it.
    const readerContext = await h.newContext()
    const reader = await h.newPage(readerContext)
    await register(reader, READER)
    problems.push(...(await h.visit(reader, '/learning')))
    await expect(reader.getByRole('link', { name: 'Studio' }).count()).resolves.toBe(0)
    await reader.getByRole('link', { name: 'Asthma inhalers <made easy>' }).first().click()
    await reader.waitForURL(/\/learning\/read\//)
    await reader.getByRole('heading', { level: 1, name: 'Asthma inhalers <made easy>' }).waitFor()
    problems.push(...(await h.checkPage(reader, 'the article', 200)))

    // Question 1 right (the spacer), question 2 wrong (one of its two correct options only).
    await reader.getByLabel('A spacer').check()
    await reader.getByLabel('Shake the inhaler').check()
    await reader.getByRole('button', { name: /submit|check/i }).click()
    await reader.getByText('You answered 1 of 2 correctly').waitFor()
    problems.push(...(await h.checkPage(reader, 'the quiz answered', 200)))
    await h.shot(reader, 'learning-3-quiz')

    const article = new URL(reader.url()).pathname.replace(/\/quiz$/, '')
    problems.push(...(await h.visit(reader, `${article}/slides`)))
    const counter = reader.locator('.learn-deck-count')
    await expect(counter.textContent()).resolves.toBe('Slide 1 of 3')
    await reader.keyboard.press('ArrowRight')
    await expect(counter.textContent()).resolves.toBe('Slide 2 of 3')
    await reader.keyboard.press('End')
    await expect(counter.textContent()).resolves.toBe('Slide 3 of 3')
    await reader.keyboard.press('Home')
    await expect(counter.textContent()).resolves.toBe('Slide 1 of 3')
    await h.shot(reader, 'learning-4-slides')
    problems.push(...(await h.visit(reader, '/learning/category/respiratory')))
    problems.push(...(await h.visit(reader, '/learning?q=spacer')))
    problems.push(...(await h.visit(reader, '/studio', 403)))
    await readerContext.close()
    expect(problems).toEqual([])
  }, 120_000)
})

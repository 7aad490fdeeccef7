// The clinician's workspace (/workspace) through the real app, without JavaScript: the page for a signed-in user
// (a redirect to sign in, or 401 for htmx, without one), the note type's fields (htmx fragment; every field with its
// note types without JavaScript), each form action as a plain post with its inputs kept (transcribe an uploaded
// recording, kept as an audio backup until the note is saved; write, refine, shorten, clarify; save with the
// idempotency key, twice at once too, and with the version check: a stale version shows both versions and keeps
// one; mark reviewed; export with its confirm step to a real WebDAV server; the patient handout and its reading
// aloud), the AI service's refusals in the page, the save state fragment workspace.js swaps, user text escaped, and
// cross-origin posts refused. The project's OpenAI-compatible test server stands in for the AI gateway.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BACKUP_IDS_MAX, LISTEN_TTL_S } from '../plugins/clinical/pages/workspace'
import * as audioBackups from '../plugins/clinical/services/audio-backups'
import * as encounters from '../plugins/clinical/services/encounters'
import { FIELDS, NOTE_TYPES } from '../plugins/clinical/views/workspace'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { freshIp, HTMX, outsideAttributes, pageClinician, type PageClinician as Clinician, textareaOf, unescapeHtml, XSS } from './support/clinical'
import { startWebDavServer, WEBDAV_PASSWORD, WEBDAV_USER, type WebDavServer } from './support/webdav'

setDefaultTimeout(60_000)

function inputValue(page: string, name: string): string {
  const m = new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(page) ?? new RegExp(`<input[^>]*value="([^"]*)"[^>]*name="${name}"`).exec(page)
  if (!m) throw new Error(`no input ${name}`)
  return unescapeHtml(m[1]!)
}
const fieldError = (page: string, id: string) => unescapeHtml(new RegExp(`<span class="field-error" id="${id}-error">([^<]*)</span>`).exec(page)?.[1] ?? '')
const flashOf = (page: string) => unescapeHtml(/<div id="flash" class="flash (?:ok|error)" role="status"><span>([^<]*)<\/span>/.exec(page)?.[1] ?? '')
/** Whether the draft banner is shown (rendered without `hidden`). */
const bannerShown = (page: string) => /<p id="ws-draft" class="flash warning ws-draft">/.test(page)

/** A real PCM WAV file: a 440 Hz tone of `seconds`. */
function wav(seconds: number): Uint8Array<ArrayBuffer> {
  const rate = 16_000
  const samples = Math.round(seconds * rate)
  const out = new Uint8Array(44 + samples * 2)
  const view = new DataView(out.buffer)
  const ascii = (at: number, s: string) => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)))
  ascii(0, 'RIFF')
  view.setUint32(4, 36 + samples * 2, true)
  ascii(8, 'WAVEfmt ')
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true)
  view.setUint16(22, 1, true)
  view.setUint32(24, rate, true)
  view.setUint32(28, rate * 2, true)
  view.setUint16(32, 2, true)
  view.setUint16(34, 16, true)
  ascii(36, 'data')
  view.setUint32(40, samples * 2, true)
  for (let i = 0; i < samples; i++) view.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), true)
  return out
}

describe.each(databaseTargets())('clinical workspace pages [%s]', (target) => {
  let ai: AiServer
  let dav: WebDavServer
  let t: TestApp
  let offline: TestApp
  let alice: Clinician
  let bob: Clinician
  let carol: Clinician

  const signInPage = (app: TestApp, tag: string, name = 'Workspace User') => pageClinician(app, tag, name)
  const get = (path: string, who: Clinician, headers: Record<string, string> = {}, app = t) =>
    app.get(path, { headers: { accept: 'text/html', cookie: who.cookie, ...headers } })
  const post = (path: string, fields: Record<string, string>, who: Clinician, headers: Record<string, string> = {}, app = t) =>
    app.form(path, fields, { headers: { cookie: who.cookie, ...headers }, ip: freshIp() })
  /** What the page's form posts, for a SOAP note; `over` replaces or adds fields. */
  const soapForm = (over: Record<string, string> = {}) => ({
    note_type: 'soap', model: TEST_MODEL, patientAge: '7 years', patientGender: 'female', type: 'follow-up',
    transcript: 'Mother reports fever and cough for three days.', generated_note: '', instructions: '', label: '',
    encounter_id: '', version: '', idempotency_key: `key-${crypto.randomUUID()}`, backup_ids: '',
    handout: '', language: 'English', readingLevel: '', ...over,
  })
  const savedRows = async (userId: number) => t.db.sql<{ id: number; version: number; status: string }>`
    select id, version, status from clinical.saved_encounters where user_id = ${userId} order by id`
  /** Saves through the plain form; the new encounter's id from the redirect. */
  const saveForm = async (who: Clinician, fields: Record<string, string>, path = '/workspace/save') => {
    const res = await post(path, fields, who)
    expect(res.status).toBe(303)
    const id = Number(/encounter=(\d+)/.exec(res.headers.get('location') ?? '')?.[1])
    expect(id).toBeGreaterThan(0)
    return { id, location: res.headers.get('location')! }
  }

  beforeAll(async () => {
    ai = await startAiServer()
    dav = await startWebDavServer({ 'Notes/': '' })
    ;[t, offline] = await Promise.all([
      startTestApp({ target, env: { ...ai.env, AI_TIMEOUT_MS: '1500', WEBDAV_ALLOWED_HOSTS: `127.0.0.1:${dav.port}` } }),
      startTestApp({ target }),
    ])
    alice = await signInPage(t, 'ws-alice', 'Alice')
    bob = await signInPage(t, 'ws-bob', 'Bob')
    carol = await signInPage(offline, 'ws-carol', 'Carol')
  })
  afterAll(async () => {
    await Promise.all([t.close(), offline.close()])
    await Promise.all([ai.close(), dav.close()])
  })

  describe('the page', () => {
    it('signed out: a plain request goes to the sign-in page, htmx gets 401, a post is refused too', async () => {
      const plain = await t.get('/workspace', { headers: { accept: 'text/html' } })
      expect(plain.status).toBe(303)
      expect(plain.headers.get('location')).toBe('/')
      expect((await t.get('/workspace', { headers: HTMX })).status).toBe(401)
      const write = await t.form('/workspace/generate', soapForm())
      expect(write.status).toBe(303)
      expect(write.headers.get('location')).toBe('/')
      expect(ai.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(0)
    })

    it('signed in: the form with the note types, the listed models, the SOAP fields, labelled controls and workspace.js', async () => {
      const res = await get('/workspace', alice)
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(page).toContain('<h1>Workspace</h1>')
      expect(page).toContain('<form id="ws-form" class="ws-form" action="/workspace/save" method="post" data-base="">')
      for (const type of NOTE_TYPES) expect(page).toContain(`<option value="${type.id}"`)
      expect(page).toContain(`<option value="${TEST_MODEL}" selected>`)
      expect(page).toContain('data-endpoint="/api/generate-soap" data-key="soap" data-source="transcript"')
      for (const [id, label] of [['ws-note-type', 'Note type'], ['ws-model', 'AI model'], ['ws-patientAge', 'Patient age'], ['ws-transcript', 'Transcript, dictation or notes'],
        ['ws-note', 'Generated note'], ['ws-instructions', 'Refine instruction'], ['ws-label', 'Label'], ['ws-audio', 'Audio file'], ['ws-handout', 'Handout text']]) {
        expect(page).toContain(`<label for="${id}"><span>${label}</span>`)
      }
      for (const button of ['Write the note', 'Refine', 'Shorten', 'Clarify', 'Save', 'Transcribe the file', 'Export to file server', 'Write a handout', 'Listen']) {
        expect(page).toContain(`>${button}</button>`)
      }
      // a fresh idempotency key per rendering: a double click of one page makes one encounter, two pages two
      const again = await (await get('/workspace', alice)).text()
      expect(inputValue(page, 'idempotency_key')).toMatch(/^[A-Za-z0-9_-]{16,}$/)
      expect(inputValue(again, 'idempotency_key')).not.toBe(inputValue(page, 'idempotency_key'))
      expect(page).toContain('<script src="/static/workspace.js" defer></script></body>')
      expect(bannerShown(page)).toBe(false)
      // the script the page loads is served
      const script = await t.get('/static/workspace.js')
      expect(script.status).toBe(200)
      expect(await script.text()).toContain('clinicalWorkspaceLoaded')
    })

    it('without JavaScript every note type\'s fields are there (in <noscript>), each saying which note types use it', async () => {
      const page = await (await get('/workspace', alice)).text()
      const [visible, hidden] = page.split('<noscript>')
      expect(visible).toContain('name="patientAge"')
      expect(visible).not.toContain('name="chiefComplaint"')
      expect(hidden).toContain('name="chiefComplaint"')
      expect(hidden).toContain('Used for: Pediatric sick visit')
      for (const name of Object.keys(FIELDS)) expect(page).toContain(`name="${name}"`)
    })

    it('changing the note type: htmx gets the new type\'s fieldset with the shared values kept; a plain post the whole page', async () => {
      const fields = { ...soapForm({ note_type: 'chart_review', patientAge: '9 years' }), visitType: 'annual physical' }
      const res = await post('/workspace/fields', fields, alice, HTMX)
      expect(res.status).toBe(200)
      const fragment = await res.text()
      expect(fragment).toStartWith('<fieldset id="ws-fields"')
      expect(fragment).toContain('data-endpoint="/api/generate-chart-review" data-key="chartReview" data-source="notes"')
      expect(fragment).toContain('<option value="annual physical" selected>')
      // JavaScript is on (htmx asked): no <noscript>, whose controls htmx would parse as real ones
      expect(fragment).not.toContain('<noscript>')
      expect(fragment).not.toContain('name="patientGender"')
      const hpi = await (await post('/workspace/fields', { ...fields, note_type: 'hpi_dictation' }, alice, HTMX)).text()
      expect(hpi).toContain('value="9 years"')
      const plain = await post('/workspace/fields', fields, alice)
      expect(plain.status).toBe(200)
      const page = await plain.text()
      expect(page).toContain('<option value="chart_review" selected>')
      expect(textareaOf(page, 'ws-transcript')).toBe(fields.transcript)
    })

    it('reopens a saved encounter: texts, label, note type, fields, model and handout back in the form', async () => {
      const form = soapForm({
        note_type: 'sick_visit', chiefComplaint: 'Ear pain', label: 'Reopen me', generated_note: 'CHIEF COMPLAINT: ear pain.', handout: 'Rest and fluids.', language: 'Spanish',
      })
      const { id, location } = await saveForm(alice, form)
      expect(location).toBe(`/workspace?encounter=${id}&notice=saved`)
      const page = await (await get(location, alice)).text()
      expect(flashOf(page)).toBe('Saved.')
      expect(inputValue(page, 'encounter_id')).toBe(String(id))
      expect(inputValue(page, 'version')).toBe('1')
      expect(inputValue(page, 'label')).toBe('Reopen me')
      expect(inputValue(page, 'chiefComplaint')).toBe('Ear pain')
      expect(page).toContain('<option value="sick_visit" selected>')
      expect(page).toContain('<option value="Spanish" selected>')
      expect(textareaOf(page, 'ws-transcript')).toBe(form.transcript)
      expect(textareaOf(page, 'ws-note')).toBe(form.generated_note)
      expect(textareaOf(page, 'ws-handout')).toBe('Rest and fluids.')
      expect(bannerShown(page)).toBe(true)
      // another user's, an unknown or a malformed id: the empty workspace with a 404
      for (const path of [location, '/workspace?encounter=999999', '/workspace?encounter=abc']) {
        const res = await get(path, bob)
        expect(res.status, path).toBe(404)
        const other = await res.text()
        expect(other).not.toContain('Reopen me')
        expect(inputValue(other, 'encounter_id')).toBe('')
      }
    })
  })

  describe('dictation without JavaScript', () => {
    const upload = (who: Clinician, fields: Record<string, string>, file: File | null, app = t) => {
      const body = new FormData()
      for (const [k, v] of Object.entries(fields)) body.append(k, v)
      body.append('audio', file ?? new File([], ''), file?.name ?? '')
      return app.request('/workspace/transcribe', { method: 'POST', body, headers: { accept: 'text/html', cookie: who.cookie }, ip: freshIp() })
    }

    it('transcribes the uploaded recording into the transcript, keeps the other inputs, and keeps the audio as a backup until the save', async () => {
      const res = await upload(alice, soapForm({ label: 'Dictated', patientAge: '4 years' }), new File([wav(1)], 'dictation.wav', { type: 'audio/wav' }))
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(flashOf(page)).toBe('The recording is transcribed (1 second): check the transcript.')
      expect(textareaOf(page, 'ws-transcript')).toBe('Mother reports fever and cough for three days.\n\ntest transcript')
      expect(inputValue(page, 'patientAge')).toBe('4 years')
      expect(inputValue(page, 'label')).toBe('Dictated')
      const backupId = Number(inputValue(page, 'backup_ids'))
      const [backup] = await t.db.sql<{ module: string; user_id: number }>`select module, user_id from clinical.audio_backups where id = ${backupId}`
      expect(backup).toEqual({ module: 'soap', user_id: alice.id })
      const transcription = ai.requests.filter((r) => r.path.endsWith('/audio/transcriptions')).at(-1)!
      expect(transcription.body.file.size).toBe(wav(1).byteLength)

      // saving the note deletes this page's backups, and only the caller's
      const bobs = await audioBackups.createAudioBackup(t.booted.core, bob.id, new File([wav(0.2)], 'b.wav', { type: 'audio/wav' }), 'soap')
      const { id } = await saveForm(alice, soapForm({
        label: 'Dictated', transcript: textareaOf(page, 'ws-transcript'), generated_note: 'S: fever.', backup_ids: `${backupId},${bobs.id},nonsense`,
      }))
      expect(id).toBeGreaterThan(0)
      expect(await t.db.sql`select id from clinical.audio_backups where id = ${backupId}`).toHaveLength(0)
      expect(await t.db.sql`select id from clinical.audio_backups where id = ${bobs.id}`).toHaveLength(1)
      expect(BACKUP_IDS_MAX).toBeGreaterThan(1)
    })

    it('no file chosen: 422 with the message next to the file input, nothing sent to the AI service', async () => {
      const before = ai.requests.length
      const res = await upload(alice, soapForm(), null)
      expect(res.status).toBe(422)
      const page = await res.text()
      expect(fieldError(page, 'ws-audio')).toBe('Choose an audio file to transcribe')
      expect(textareaOf(page, 'ws-transcript')).toBe(soapForm().transcript)
      expect(ai.requests.length).toBe(before)
    })

    it('without a gateway: transcription is said to be unavailable, the recording is kept as a backup, the inputs stay', async () => {
      const page0 = await (await get('/workspace', carol, {}, offline)).text()
      expect(page0).toContain('Transcription is not available on this server')
      const res = await upload(carol, soapForm({ label: 'Kept' }), new File([wav(0.5)], 'd.wav', { type: 'audio/wav' }), offline)
      expect(res.status).toBe(422)
      const page = await res.text()
      expect(flashOf(page)).toBe('Transcription is not available: no AI gateway is configured on this server. Your recording is kept for 24 hours as an audio backup.')
      expect(inputValue(page, 'label')).toBe('Kept')
      // not listed for deletion: its words are not in the transcript
      expect(inputValue(page, 'backup_ids')).toBe('')
      expect(await offline.db.sql`select id from clinical.audio_backups where user_id = ${carol.id}`).toHaveLength(1)
    })
  })

  describe('writing without JavaScript', () => {
    it('writes the note from the transcript and the fields: a draft with its banner, the other inputs kept', async () => {
      ai.reset()
      ai.reply((req) => `SUBJECTIVE: ${String(req.messages.at(-1)!.content).includes('Mother reports fever') ? 'fever and cough' : '?'}`)
      const res = await post('/workspace/generate', soapForm({ label: 'Kept label', physicianMemories: 'Use metric units.' }), alice)
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(textareaOf(page, 'ws-note')).toBe('SUBJECTIVE: fever and cough')
      expect(flashOf(page)).toBe('The note is written. It is a draft: check it before you use it.')
      expect(bannerShown(page)).toBe(true)
      expect(page).toContain('Draft: check this note before you use it.')
      expect(inputValue(page, 'label')).toBe('Kept label')
      const chat = ai.requests.find((r) => r.path.endsWith('/chat/completions'))!
      expect(chat.body.model).toBe(TEST_MODEL)
      expect(JSON.stringify(chat.body.messages)).toContain('7 years')
      expect(JSON.stringify(chat.body.messages)).toContain('Use metric units.')
      const [usage] = await t.db.sql<{ endpoint: string }>`select endpoint from clinical.ai_usage where user_id = ${alice.id} order by id desc limit 1`
      expect(usage!.endpoint).toBe('/api/generate-soap')
      ai.reply()
    })

    it('each note type sends its own request: chart review reads the transcript box as notes; SHADESS answers; milestones by line', async () => {
      ai.reset()
      await post('/workspace/generate', soapForm({ note_type: 'chart_review', visitType: 'annual physical', transcript: 'Prior note: asthma.' }), alice)
      await post('/workspace/generate', soapForm({ note_type: 'shadess', shadess_school: 'Grade 9, doing well', transcript: '' }), alice)
      await post('/workspace/generate', soapForm({ note_type: 'milestones', milestones: 'walks alone: met\n\nsays 10 words: not yet' }), alice)
      const prompts = ai.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => JSON.stringify(r.body.messages))
      expect(prompts[0]).toContain('annual physical')
      expect(prompts[0]).toContain('Prior note: asthma.')
      expect(prompts[1]).toContain('School: Grade 9, doing well')
      expect(prompts[2]).toContain('- walks alone: met\\n- says 10 words: not yet')
      // nothing to write from: the page says so next to the field, and the AI service is not asked
      const none = await post('/workspace/generate', soapForm({ note_type: 'shadess', transcript: '' }), alice)
      expect(none.status).toBe(422)
      expect(fieldError(await none.text(), 'ws-shadess_strengths')).toBe('Write at least one answer, or the interview in the transcript')
      expect(ai.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(3)
    })

    it('refuses with the message next to the field, inputs kept: no transcript; an unknown model; too long an age', async () => {
      const before = ai.requests.length
      const empty = await post('/workspace/generate', soapForm({ transcript: '', label: 'Still here' }), alice)
      expect(empty.status).toBe(422)
      const page = await empty.text()
      expect(fieldError(page, 'ws-transcript')).toBe('Required')
      expect(inputValue(page, 'label')).toBe('Still here')
      const long = await post('/workspace/generate', soapForm({ patientAge: 'x'.repeat(101) }), alice)
      expect(fieldError(await long.text(), 'ws-patientAge')).toBe('Must be at most 100 characters')
      expect(ai.requests.length).toBe(before)
      const model = await post('/workspace/generate', soapForm({ model: 'no-such-model' }), alice)
      expect(model.status).toBe(422)
      const modelPage = await model.text()
      expect(fieldError(modelPage, 'ws-model')).toContain('no-such-model')
      expect(modelPage).toContain('<option value="no-such-model" selected>')
    })

    it('the AI service failing, slow or missing: the reason in the flash, the inputs kept, the note as it was', async () => {
      ai.failNext(500)
      const failed = await post('/workspace/generate', soapForm({ generated_note: 'Earlier note' }), alice)
      expect(failed.status).toBe(422)
      const page = await failed.text()
      expect(flashOf(page)).toBe('The AI service answered with an error')
      expect(textareaOf(page, 'ws-note')).toBe('Earlier note')
      ai.delayNext(4000)
      const slow = await post('/workspace/refine', soapForm({ generated_note: 'Earlier note', instructions: 'Shorter' }), alice)
      expect(slow.status).toBe(422)
      expect(flashOf(await slow.text())).toStartWith('The AI service did not answer within')
      const none = await post('/workspace/generate', soapForm(), carol, {}, offline)
      expect(none.status).toBe(422)
      const nonePage = await none.text()
      expect(flashOf(nonePage)).toBe('Note generation is unavailable: no AI gateway is configured on this server')
      expect(nonePage).toContain('Note writing is not available: no AI service is configured on this server.')
      expect(textareaOf(nonePage, 'ws-transcript')).toBe(soapForm().transcript)
    })

    it('refine, shorten and clarify rewrite the note; refine sends the instruction, and needs one', async () => {
      ai.reset()
      ai.reply((req) => `REVISED ${String(req.messages.at(-1)!.content).length}`)
      const form = soapForm({ generated_note: 'S: cough. O: clear.', instructions: 'Add that the parents were counselled' })
      for (const action of ['refine', 'shorten', 'clarify']) {
        const res = await post(`/workspace/${action}`, form, alice)
        expect(res.status, action).toBe(200)
        expect(textareaOf(await res.text(), 'ws-note')).toStartWith('REVISED ')
      }
      const prompts = ai.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => JSON.stringify(r.body.messages))
      expect(prompts[0]).toContain('Add that the parents were counselled')
      expect(prompts[0]).toContain('S: cough. O: clear.')
      expect(prompts[2]).toContain('Mother reports fever')
      const noInstruction = await post('/workspace/refine', { ...form, instructions: '' }, alice)
      expect(noInstruction.status).toBe(422)
      expect(fieldError(await noInstruction.text(), 'ws-instructions')).toBe('Required')
      const noNote = await post('/workspace/shorten', { ...form, generated_note: '' }, alice)
      expect(fieldError(await noNote.text(), 'ws-note')).toBe('Required')
      ai.reply()
    })
  })

  describe('saving', () => {
    it('creates once per idempotency key: the same form posted twice, also at the same time, is one encounter', async () => {
      const who = await signInPage(t, 'ws-twice')
      const form = soapForm({ label: 'Double click', generated_note: 'A: viral URI.' })
      const [a, b] = await Promise.all([post('/workspace/save', form, who), post('/workspace/save', form, who)])
      expect([a.status, b.status]).toEqual([303, 303])
      expect(a.headers.get('location')).toBe(b.headers.get('location'))
      const again = await post('/workspace/save', form, who)
      expect(again.headers.get('location')).toBe(a.headers.get('location'))
      const rows = await savedRows(who.id)
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ version: 1, status: 'draft' })
      // another rendering of the page (another key) is another encounter
      await saveForm(who, soapForm({ label: 'Second', generated_note: 'x' }))
      expect(await savedRows(who.id)).toHaveLength(2)
    })

    it('updates with the version it read; the fragment for workspace.js is the save state with the new version', async () => {
      const { id } = await saveForm(alice, soapForm({ label: 'Versioned', generated_note: 'v1' }))
      const update = await post('/workspace/save', soapForm({ label: 'Versioned', generated_note: 'v2', encounter_id: String(id), version: '1' }), alice)
      expect(update.status).toBe(303)
      const fragment = await post('/workspace/save', soapForm({ label: 'Versioned', generated_note: 'v3', encounter_id: String(id), version: '2' }), alice, HTMX)
      expect(fragment.status).toBe(200)
      const html = await fragment.text()
      expect(html).toStartWith(`<div id="ws-record" class="ws-record" data-status="draft" data-encounter="${id}" data-version="3">`)
      expect(inputValue(html, 'version')).toBe('3')
      expect((await encounters.getEncounter(t.booted.core, alice.id, id)).generated_note).toBe('v3')
    })

    it('a stale version: 409 with both versions side by side and nothing overwritten; "Keep my version" saves mine', async () => {
      const { id } = await saveForm(alice, soapForm({ label: 'Contested', generated_note: 'first text' }))
      // saved from another device meanwhile
      await encounters.saveEncounter(t.booted.core, alice.id, { id, generated_note: 'their text', expected_version: 1 })
      const mine = soapForm({ label: 'Contested', generated_note: 'my text', encounter_id: String(id), version: '1' })
      const stale = await post('/workspace/save', mine, alice)
      expect(stale.status).toBe(409)
      const page = await stale.text()
      expect(page).toContain('This note was changed somewhere else')
      expect(textareaOf(page, 'ws-mine')).toBe('my text')
      expect(textareaOf(page, 'ws-theirs')).toBe('their text')
      expect(page).toContain('Saved version (version 2: Contested)')
      expect(inputValue(page, 'conflict_version')).toBe('2')
      expect(page).toContain(`href="/workspace?encounter=${id}">Use the saved version</a>`)
      expect(textareaOf(page, 'ws-note')).toBe('my text')
      expect((await encounters.getEncounter(t.booted.core, alice.id, id)).generated_note).toBe('their text')
      // the same for workspace.js: the panel alone, 409
      const fragment = await post('/workspace/save', mine, alice, HTMX)
      expect(fragment.status).toBe(409)
      expect(await fragment.text()).toStartWith('<section id="ws-conflict"')
      // keep mine: saved over version 2
      const keep = await post('/workspace/save', { ...mine, keep: 'mine', conflict_version: '2' }, alice)
      expect(keep.status).toBe(303)
      const saved = await encounters.getEncounter(t.booted.core, alice.id, id)
      expect(saved).toMatchObject({ generated_note: 'my text', version: 3 })
    })

    it('an encounter deleted meanwhile: the page says so and the next save keeps the note as a new one', async () => {
      const who = await signInPage(t, 'ws-gone')
      const { id } = await saveForm(who, soapForm({ label: 'Gone soon', generated_note: 'kept text' }))
      await encounters.deleteEncounter(t.booted.core, who.id, id)
      const res = await post('/workspace/save', soapForm({ label: 'Gone soon', generated_note: 'kept text', encounter_id: String(id), version: '1' }), who)
      expect(res.status).toBe(422)
      const page = await res.text()
      expect(flashOf(page)).toContain('This saved encounter is not there any more')
      expect(inputValue(page, 'encounter_id')).toBe('')
      expect(textareaOf(page, 'ws-note')).toBe('kept text')
      const again = await saveForm(who, soapForm({ label: 'Gone soon', generated_note: 'kept text', idempotency_key: inputValue(page, 'idempotency_key') }))
      expect(again.id).not.toBe(id)
      expect(await savedRows(who.id)).toHaveLength(1)
    })

    it('refuses a save without a label: 422 with the message next to the label, nothing stored', async () => {
      const who = await signInPage(t, 'ws-nolabel')
      const res = await post('/workspace/save', soapForm({ label: '  ', generated_note: 'x' }), who)
      expect(res.status).toBe(422)
      const page = await res.text()
      expect(fieldError(page, 'ws-label')).toBe('The label must not be blank')
      expect(textareaOf(page, 'ws-transcript')).toBe(soapForm().transcript)
      const fragment = await post('/workspace/save', soapForm({ label: '', generated_note: 'x' }), who, HTMX)
      expect(fragment.status).toBe(422)
      expect(await fragment.text()).toContain('<p class="field-error" id="ws-save-error" role="alert">The label must not be blank</p>')
      expect(await savedRows(who.id)).toHaveLength(0)
    })

    it('mark as reviewed: the banner goes; an edited note is a draft again', async () => {
      const form = soapForm({ label: 'To review', generated_note: 'Checked text' })
      const { id, location } = await saveForm(alice, form, '/workspace/review')
      expect(location).toBe(`/workspace?encounter=${id}&notice=reviewed`)
      const page = await (await get(location, alice)).text()
      expect(flashOf(page)).toBe('Saved and marked as reviewed.')
      expect(bannerShown(page)).toBe(false)
      expect(page).toContain('<p id="ws-reviewed" class="flash ok ws-draft"><strong>Reviewed.</strong>')
      expect((await savedRows(alice.id)).find((r) => r.id === id)!.status).toBe('reviewed')
      // the same note re-rendered (another action) stays reviewed; a changed one is a draft until saved and reviewed
      const same = await (await post('/workspace/fields', { ...form, encounter_id: String(id), version: '1' }, alice)).text()
      expect(bannerShown(same)).toBe(false)
      const edited = await (await post('/workspace/fields', { ...form, generated_note: 'Checked text, edited', encounter_id: String(id), version: '1' }, alice)).text()
      expect(bannerShown(edited)).toBe(true)
      await saveForm(alice, { ...form, generated_note: 'Checked text, edited', encounter_id: String(id), version: '1' })
      expect((await savedRows(alice.id)).find((r) => r.id === id)!.status).toBe('draft')
    })
  })

  describe('export to the file server', () => {
    let dana: Clinician

    beforeAll(async () => {
      dana = await signInPage(t, 'ws-dana', 'Dana')
      const res = await t.post('/api/nextcloud/connect', { url: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD }, { headers: { cookie: dana.cookie, 'x-client': 'web' } })
      expect(res.status).toBe(200)
      expect((await t.post('/api/user/webdav-path', { path: '/Notes' }, { headers: { cookie: dana.cookie, 'x-client': 'web' } })).status).toBe(200)
    })
    const notesFolder = () => readdirSync(join(dav.root, 'Notes'))

    it('an unreviewed note asks first ("export anyway?"), writes nothing, then exports on the second button', async () => {
      const form = soapForm({ label: 'Export me', generated_note: 'S: fever.\nP: fluids.' })
      const ask = await post('/workspace/export', form, dana)
      expect(ask.status).toBe(200)
      const page = await ask.text()
      expect(page).toContain('This note is not reviewed yet: export anyway?')
      expect(page).toContain('<button type="submit" name="confirm" value="yes" formaction="/workspace/export"')
      expect(textareaOf(page, 'ws-note')).toBe(form.generated_note)
      expect(notesFolder().filter((n) => n.startsWith('Export me'))).toHaveLength(0)
      const done = await post('/workspace/export', { ...form, confirm: 'yes' }, dana)
      expect(done.status).toBe(200)
      const donePage = await done.text()
      const path = unescapeHtml(/Exported to the file server as <code>([^<]+)<\/code>/.exec(donePage)![1]!)
      expect(path).toMatch(/^\/Notes\/Export me \d{4}-\d{2}-\d{2} \d{2}-\d{2}-\d{2}\.txt$/)
      expect(readFileSync(join(dav.root, path), 'utf8')).toBe(form.generated_note)
    })

    it('a reviewed note exports at once; htmx gets the export box alone', async () => {
      const form = soapForm({ label: 'Reviewed export', generated_note: 'A: otitis media.' })
      const { id } = await saveForm(dana, form, '/workspace/review')
      const res = await post('/workspace/export', { ...form, encounter_id: String(id), version: '1' }, dana, HTMX)
      expect(res.status).toBe(200)
      const box = await res.text()
      expect(box).toStartWith('<div id="ws-export" class="ws-export">')
      expect(box).toContain('Exported to the file server as')
      expect(notesFolder().some((n) => n.startsWith('Reviewed export'))).toBe(true)
      // the htmx confirm step is the box too
      const ask = await post('/workspace/export', soapForm({ generated_note: 'unreviewed' }), dana, HTMX)
      expect(await ask.text()).toContain('export anyway?')
    })

    it('not connected: says so with a link to Preferences; no note: nothing to export', async () => {
      const res = await post('/workspace/export', soapForm({ generated_note: 'x', confirm: 'yes' }), alice)
      expect(res.status).toBe(422)
      const page = await res.text()
      expect(page).toContain('No file server is connected: connect one first')
      expect(page).toContain('<a href="/preferences#webdav">Connect a file server in Preferences</a>')
      const empty = await post('/workspace/export', soapForm({ generated_note: '  ', confirm: 'yes' }), dana)
      expect(empty.status).toBe(422)
      expect(await empty.text()).toContain('There is no note to export yet.')
      expect(existsSync(join(dav.root, 'x'))).toBe(false)
    })
  })

  describe('patient handout', () => {
    it('writes the handout from the note in the chosen language and reading level, into its own box', async () => {
      ai.reset()
      const res = await post('/workspace/handout', soapForm({ generated_note: 'A: otitis media. P: amoxicillin.', language: 'Spanish', readingLevel: '5th grade' }), alice)
      expect(res.status).toBe(200)
      const page = await res.text()
      expect(textareaOf(page, 'ws-handout')).toStartWith('echo: ')
      expect(textareaOf(page, 'ws-note')).toBe('A: otitis media. P: amoxicillin.')
      const prompt = JSON.stringify(ai.requests.find((r) => r.path.endsWith('/chat/completions'))!.body.messages)
      expect(prompt).toContain('write the whole handout in Spanish')
      expect(prompt).toContain('Reading level: 5th grade')
      const none = await post('/workspace/handout', soapForm({ generated_note: '' }), alice)
      expect(none.status).toBe(422)
      expect(fieldError(await none.text(), 'ws-note')).toBe('Required')
    })

    it('Listen: an <audio> of the handout at a private address that serves audio/mpeg to its owner only', async () => {
      const res = await post('/workspace/listen', soapForm({ handout: 'Drink plenty of fluids.' }), alice, HTMX)
      expect(res.status).toBe(200)
      const box = await res.text()
      expect(box).toStartWith('<div id="ws-listen" class="ws-listen">')
      const src = /<audio[^>]*src="([^"]+)"/.exec(box)![1]!
      expect(src).toMatch(/^\/workspace\/listen\/[A-Za-z0-9_-]{20,}$/)
      expect(src).not.toContain('fluids')
      const [row] = await t.db.sql<{ value: unknown; expires_at: Date }>`select value, expires_at from core.kv where key like ${'%' + src.split('/').at(-1)!}`
      expect(JSON.stringify(row!.value)).not.toContain('fluids')
      expect(row!.expires_at.getTime() - Date.now()).toBeLessThanOrEqual(LISTEN_TTL_S * 1000)
      const audio = await get(src, alice)
      expect(audio.status).toBe(200)
      expect(audio.headers.get('content-type')).toBe('audio/mpeg')
      expect((await audio.arrayBuffer()).byteLength).toBeGreaterThan(100)
      expect((await get(src, bob)).status).toBe(404)
      // without JavaScript: the whole page with the player; no handout yet: said next to the button
      const plain = await post('/workspace/listen', soapForm({ handout: 'Rest.' }), alice)
      expect(await plain.text()).toMatch(/<audio controls="" autoplay preload="auto" src="\/workspace\/listen\//)
      const none = await post('/workspace/listen', soapForm({ handout: ' ' }), alice)
      expect(none.status).toBe(422)
      expect(await none.text()).toContain('Write or paste a handout first.')
    })
  })

  describe('safety', () => {
    it('escapes what the clinician typed in every box', async () => {
      const form = soapForm({ label: XSS, transcript: `</textarea>${XSS}`, generated_note: `</textarea>${XSS}`, patientAge: `"><b>x` })
      const page = await (await post('/workspace/fields', form, alice)).text()
      expect(outsideAttributes(page)).not.toContain(XSS)
      expect(outsideAttributes(page)).not.toContain('</textarea><script>')
      expect(textareaOf(page, 'ws-note')).toBe(`</textarea>${XSS}`)
      const { location } = await saveForm(alice, form)
      const reopened = await (await get(location, alice)).text()
      expect(outsideAttributes(reopened)).not.toContain(XSS)
      expect(inputValue(reopened, 'label')).toBe(XSS)
    })

    it('refuses a post from another site: 403, nothing saved or sent', async () => {
      const who = await signInPage(t, 'ws-csrf')
      const before = ai.requests.length
      for (const path of ['/workspace/save', '/workspace/generate', '/workspace/export']) {
        const res = await post(path, soapForm({ label: 'Forged', generated_note: 'x' }), who, { origin: 'https://evil.example' })
        expect(res.status, path).toBe(403)
      }
      expect(await savedRows(who.id)).toHaveLength(0)
      expect(ai.requests.length).toBe(before)
    })

    it('a reload of a posted action\'s address lands on the workspace', async () => {
      const res = await get('/workspace/generate', alice)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/workspace')
    })
  })
})

// Hostile archives and hostile file names, through the real app. Every route that takes an archive (the phone
// directory's import: its API, its preview and its page; a Word .docx upload, which the type check peeks into)
// refuses bombs, too many entries, archives inside archives and entry names that climb out (`../`, absolute paths,
// backslashes, drive letters, NUL) with a 4xx and a message, and stores nothing. Every export that names a file
// (the clinical WebDAV export, the learning PowerPoint download, the clinical document download, the quiz file-server
// download, the directory export) turns a name with separators, control or direction characters, leading dots or
// too many characters into a safe one, or refuses it with a 4xx.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate'
import { EXPORT_TITLE_MAX } from '../plugins/clinical/models/files'
import { PPTX_TITLE_MAX } from '../plugins/learning/model'
import { EXPORT_FILE_NAME, EXPORT_FORMAT, EXPORT_ZIP_NAME, ZIP_UNCOMPRESSED_MAX_BYTES } from '../plugins/directory/model'
import { ZIP_MESSAGES } from '../plugins/directory/zip'
import { rawSql } from '../src/core/db'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { pageClinician, unescapeHtml, userWithSession, type PageClinician, type SignedIn } from './support/clinical'
import { API, createAccount, registerAdmin, type Account } from './support/quiz'
import { pdfBytes, startWebDavServer, WEBDAV_PASSWORD, WEBDAV_USER, type WebDavServer } from './support/webdav'

setDefaultTimeout(60_000)

const good = strToU8(JSON.stringify({ format: EXPORT_FORMAT, version: 1, exported_at: '2026-01-01T00:00:00.000Z', items: [{ location: 'W', name: 'N', number: '1', type: 'extension', notes: '' }] }))
const nest = (depth: number): Uint8Array => (depth === 0 ? zipSync({ [EXPORT_FILE_NAME]: good }) : zipSync({ 'inner.zip': nest(depth - 1) }))
const manyEntries = (n: number): Zippable => ({ [EXPORT_FILE_NAME]: good, ...Object.fromEntries(Array.from({ length: n - 1 }, (_, i) => [`e${i}.json`, good])) })

/** Hostile archives: what each is, its bytes, and the refusal's message; every one must be refused. */
const ARCHIVES: Array<[string, Uint8Array, string]> = [
  ['a bomb of over 1000:1 (sizes in the header)', zipSync({ [EXPORT_FILE_NAME]: new Uint8Array(ZIP_UNCOMPRESSED_MAX_BYTES * 16) }, { level: 9 }), ZIP_MESSAGES.zipTooLarge],
  ['too many entries (2000)', zipSync(manyEntries(2000)), ZIP_MESSAGES.zipTooManyEntries],
  ['a zip nested three deep', nest(3), ZIP_MESSAGES.zipNestedArchive],
  ['an entry climbing out (../)', zipSync({ [`../../${EXPORT_FILE_NAME}`]: good }), ZIP_MESSAGES.zipUnsafePath],
  ['an absolute entry name', zipSync({ [`/etc/${EXPORT_FILE_NAME}`]: good }), ZIP_MESSAGES.zipUnsafePath],
  ['a backslash entry name', zipSync({ [`..\\..\\${EXPORT_FILE_NAME}`]: good }), ZIP_MESSAGES.zipUnsafePath],
  ['a drive-letter entry name', zipSync({ [`C:\\${EXPORT_FILE_NAME}`]: good }), ZIP_MESSAGES.zipUnsafePath],
  ['a NUL in the entry name', zipSync({ [`${EXPORT_FILE_NAME}\u0000.txt`]: good }), ZIP_MESSAGES.zipUnsafePath],
]

/** Names a user gives a record or a file; LONG stands for the longest each route accepts. */
const LONG = '<the longest name the route takes>'
const HOSTILE_NAMES = [
  '../../etc/passwd', '/absolute/path', 'a/b', '..\\..\\boot.ini', 'C:\\Windows\\x', 'nul\u0000byte', 'line\r\nX-Injected: 1',
  'tab\tand\u0007bell', 'gnp\u202Eexe.txt', 'zero\u200Bwidth', '..', '.hidden', '   ', LONG,
]
const DIRECTION_OR_CONTROL = /[\\/\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/

/** Why a file name is unsafe, or null: empty, a separator, a control or direction character, a leading dot, over 255 characters. */
function unsafe(name: string): string | null {
  if (name.trim() === '') return 'empty'
  if (DIRECTION_OR_CONTROL.test(name)) return 'a separator, control or direction character'
  if (name.startsWith('.')) return 'a leading dot'
  if ([...name].length > 255) return 'over 255 characters'
  return null
}

/** The names of a Content-Disposition: the quoted ASCII one (printable, no quote or backslash) and the UTF-8 one. */
function dispositionNames(header: string | null): string[] {
  expect(header).toStartWith('attachment; filename="')
  const ascii = /filename="([^"]*)"/.exec(header!)![1]!
  expect(ascii).toMatch(/^[\x20-\x7e]*$/)
  const star = /filename\*=UTF-8''([^;\s]+)/.exec(header!)?.[1]
  return star === undefined ? [ascii] : [ascii, decodeURIComponent(star)]
}

for (const target of databaseTargets()) {
  describe(`hostile archives and names [${target}]`, () => {
    let t: TestApp
    let dav: WebDavServer
    let clinician: SignedIn
    let moderator: SignedIn
    let pageUser: PageClinician
    let quizModerator: Account

    beforeAll(async () => {
      dav = await startWebDavServer({ 'Notes/': '', 'Docs/': '' })
      t = await startTestApp({ target, env: { WEBDAV_ALLOWED_HOSTS: `127.0.0.1:${dav.port}` } })
      clinician = await userWithSession(t)
      moderator = await userWithSession(t, 'moderator')
      pageUser = await pageClinician(t, 'archive-page', 'Page User')
      quizModerator = await createAccount(t, await registerAdmin(t), 'moderator')
    })
    afterAll(async () => {
      await t?.close()
      await dav?.close()
    })

    const count = async (table: 'clinical.phone_directory' | 'clinical.documents' | 'core.kv') =>
      (await t.db.sql<{ n: number }>`select count(*)::int as n from ${rawSql(table)}`)[0]!.n
    const multipart = (file: File, fields: Record<string, string> = {}) => {
      const form = new FormData()
      form.append('file', file)
      for (const [k, v] of Object.entries(fields)) form.append(k, v)
      return form
    }

    describe('archives', () => {
      const routes: Array<[string, (bytes: Uint8Array) => Promise<Response>]> = [
        ['POST /api/extensions/import-file', (b) => t.request('/api/extensions/import-file', { method: 'POST', body: multipart(new File([b as BlobPart], EXPORT_ZIP_NAME)), token: clinician.token })],
        ['POST /api/extensions/import-file/preview', (b) => t.request('/api/extensions/import-file/preview', { method: 'POST', body: multipart(new File([b as BlobPart], EXPORT_ZIP_NAME)), token: clinician.token })],
        ['POST /directory/import (the page)', (b) => t.request('/directory/import', {
          method: 'POST', body: multipart(new File([b as BlobPart], EXPORT_ZIP_NAME)), headers: { cookie: pageUser.cookie, origin: 'http://localhost', accept: 'text/html' },
        })],
      ]

      it('every archive route refuses every hostile archive with a 4xx and a message, and stores or stages nothing', async () => {
        const wrong: string[] = []
        const before = [await count('clinical.phone_directory'), await count('core.kv')]
        for (const [route, send] of routes) {
          for (const [label, bytes, message] of ARCHIVES) {
            const res = await send(bytes)
            const text = unescapeHtml((await res.text()).replace(/&#x27;/g, "'"))
            if (res.status < 400 || res.status >= 500 || !text.includes(message)) wrong.push(`${route} × ${label}: ${res.status} ${text.slice(0, 120)}`)
          }
        }
        expect(wrong).toEqual([])
        expect([await count('clinical.phone_directory'), await count('core.kv')]).toEqual(before)
      })

      it('a Word document whose parts inflate past a megabyte is refused (415) without being unpacked, and not stored', async () => {
        const bomb = zipSync({ '[Content_Types].xml': new Uint8Array(64 * 1024 * 1024).fill(0x20), 'word/document.xml': strToU8('<w:document/>') }, { level: 9 })
        expect(bomb.length).toBeLessThan(1024 * 1024)
        const before = await count('clinical.documents')
        const started = performance.now()
        const res = await t.request('/api/documents/upload', {
          method: 'POST', token: clinician.token,
          body: multipart(new File([bomb as BlobPart], 'report.docx', { type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' })),
        })
        const body = (await res.json()) as { code: string; error: string }
        expect(res.status, JSON.stringify(body)).toBe(415)
        expect(body.code).toBe('content_mismatch')
        expect(performance.now() - started).toBeLessThan(10_000)
        expect(await count('clinical.documents')).toBe(before)
      })
    })

    describe('exported file names', () => {
      /** Sends a name to an export; answers the status and the file names it produced (none on a refusal). */
      type Export = { name: string; refuses?: (name: string) => boolean; send(name: string): Promise<{ status: number; names: string[] }> }
      const longFor = (name: string, max: number) => (name === LONG ? 'Ä'.repeat(max) : name)
      const exports: Export[] = [
        {
          name: 'clinical WebDAV export (POST /api/nextcloud/export): the file on the server',
          async send(title) {
            const files = () => readdirSync(join(dav.root, 'Notes'))
            const before = files()
            const res = await t.post('/api/nextcloud/export', { title: longFor(title, EXPORT_TITLE_MAX), text: 'S: well.' }, { token: clinician.token })
            const body = (await res.json()) as { path?: string }
            if (res.status !== 200) return { status: res.status, names: [] }
            const created = files().filter((f) => !before.includes(f))
            expect(created).toHaveLength(1)
            expect(body.path).toBe(`/Notes/${created[0]}`)
            return { status: res.status, names: created }
          },
        },
        {
          name: 'learning PowerPoint download (POST /api/admin/learning/generate-pptx): Content-Disposition',
          async send(title) {
            const res = await t.post('/api/admin/learning/generate-pptx', { markdown: '# Slide\n\nText', title: longFor(title, PPTX_TITLE_MAX) }, { token: moderator.token })
            const names = res.status === 200 ? dispositionNames(res.headers.get('content-disposition')) : []
            await res.body?.cancel()
            return { status: res.status, names }
          },
        },
        {
          name: 'clinical document download (POST /api/documents/upload, then its signed link): the stored name and Content-Disposition',
          async send(name) {
            const file = new File(['plain text'], `${longFor(name, 400)}.txt`, { type: 'text/plain' })
            const res = await t.request('/api/documents/upload', { method: 'POST', body: multipart(file), token: clinician.token })
            const doc = (await res.json()) as { id: number; filename: string }
            if (res.status !== 200) return { status: res.status, names: [] }
            const link = (await (await t.get(`/api/documents/${doc.id}/download`, { token: clinician.token })).json()) as { url: string }
            const file2 = await t.get(link.url.replace(/^https?:\/\/[^/]+/, ''))
            expect(file2.status).toBe(200)
            return { status: 200, names: [doc.filename, ...dispositionNames(file2.headers.get('content-disposition'))] }
          },
        },
        {
          // The name is the remote file's: one the path rule refuses (control characters, backslashes) never arrives.
          name: `quiz file-server download (POST ${API}/nextcloud/download): Content-Disposition`,
          refuses: (name) => /[\u0000-\u001f\u007f\\]/.test(name),
          async send(name) {
            const file = `${longFor(name, 120)}.pdf` // 244 bytes: within the disk's limit of a name
            if (!file.includes('/') && !file.includes('\u0000')) dav.write(`Docs/${file}`, pdfBytes('hostile'))
            const res = await t.post(`${API}/nextcloud/download`, { server: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD, path: `/Docs/${file}` }, { token: quizModerator.token })
            const names = res.status === 200 ? dispositionNames(res.headers.get('content-disposition')) : []
            await res.body?.cancel()
            return { status: res.status, names }
          },
        },
      ]

      it('every export gives every hostile name a safe file name (or a 4xx where its rule refuses the name)', async () => {
        expect((await t.post('/api/nextcloud/connect', { url: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD }, { token: clinician.token })).status).toBe(200)
        expect((await t.post('/api/user/webdav-path', { path: '/Notes' }, { token: clinician.token })).status).toBe(200)
        const wrong: string[] = []
        for (const e of exports) {
          for (const name of HOSTILE_NAMES) {
            const { status, names } = await e.send(name)
            const label = `${e.name} × ${JSON.stringify(name.slice(0, 40))}`
            if (e.refuses?.(name) || (name.includes('/') && e.name.startsWith('quiz'))) {
              if (status < 400 || status >= 500) wrong.push(`${label}: ${status}, expected a 4xx refusal`)
              continue
            }
            if (status !== 200) wrong.push(`${label}: ${status}`)
            for (const n of names) if (unsafe(n)) wrong.push(`${label}: ${JSON.stringify(n)} has ${unsafe(n)}`)
          }
        }
        expect(wrong).toEqual([])
        // nothing was written outside the export folder
        expect(readdirSync(dav.root).sort()).toEqual(['Docs', 'Notes'])
      })

      it('the directory export has one fixed name whatever the entries hold: the attachment and the one file inside', async () => {
        for (const name of HOSTILE_NAMES.filter((n) => n !== LONG && n.trim() !== '')) {
          expect((await t.post('/api/extensions', { location: name, name, number: '123', type: 'extension', notes: name }, { token: clinician.token })).status).toBeLessThan(500)
        }
        const res = await t.get('/api/extensions/export', { token: clinician.token })
        expect(res.status).toBe(200)
        expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${EXPORT_ZIP_NAME}"`)
        expect(Object.keys(unzipSync(new Uint8Array(await res.arrayBuffer())))).toEqual([EXPORT_FILE_NAME])
      })
    })
  })
}

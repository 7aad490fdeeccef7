// The moderators' import page (/quiz/import) against a real WebDAV server (webdav-server on 127.0.0.1, reachable only
// because WEBDAV_ALLOWED_HOSTS allows its host and port): connect and list, open a subfolder, import a PDF (a document
// owned by the moderator, processed as an upload is), and every refusal said on the page (not a PDF, too large, a
// private address not allowed, an unreachable server, wrong password, connection ended). Roles, the origin check,
// the connection kept server-side (httpOnly cookie, sealed password, bound to its user), and the password never in
// any page or in the log.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { IMPORT_CONNECTION_TTL_S, IMPORT_COOKIE } from '../plugins/quiz/pages/import'
import { sizeInWords } from '../views/layout'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { capturingLogger, closedPort } from './support/net'
import { makePdf } from './support/pdf'
import { createAccount, PASSWORD, questionsText, registerAdmin, type Account } from './support/quiz'
import { pdfBytes, startWebDavServer, WEBDAV_PASSWORD, WEBDAV_USER, type WebDavServer } from './support/webdav'

setDefaultTimeout(60_000)

// Small, so a file over the limit is small too (the upload and the import share it).
const MAX_UPLOAD_SIZE = 50_000
const MARKUP_NAME = 'Week <b>2<b> & "notes".pdf'
const html = { accept: 'text/html' }
const sessionOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? ''

for (const target of databaseTargets()) {
  describe(`quiz pages: file-server import [${target}]`, () => {
    let dav: WebDavServer
    let t: TestApp
    let admin: Account
    let moderator: Account
    let otherModerator: Account
    let regular: Account
    let modCookie = ''
    let otherCookie = ''
    let userCookie = ''
    let deadPort = 0
    let lecture: Uint8Array<ArrayBuffer>
    const logLines: string[] = []
    /** Every page body the tests read: none may carry the file server's password. */
    const pagesSeen: string[] = []

    async function pageCookie(email: string) {
      const res = await t.form('/quiz/login', { email, password: PASSWORD })
      expect(res.status).toBe(303)
      return sessionOf(res)
    }
    const text = async (res: Response) => {
      const body = await res.text()
      pagesSeen.push(body)
      return body
    }
    const get = (path: string, cookie: string, extra: Record<string, string> = {}) => t.get(path, { headers: { ...html, cookie, ...extra } })
    const post = (path: string, fields: Record<string, string>, cookie: string, extra: Record<string, string> = {}) =>
      t.form(path, fields, { headers: { cookie, ...extra } })
    const connectFields = (over: Record<string, string> = {}) => ({ server: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD, path: '/Docs', ...over })
    /** The import cookie a response sets (`name=value`), or ''. */
    const importCookieOf = (res: Response) => {
      const set = res.headers.get('set-cookie') ?? ''
      return set.startsWith(`${IMPORT_COOKIE}=`) ? set.split(';')[0]! : ''
    }
    /** Connects as the moderator: the cookie header to send from now on (session and connection). */
    async function connect(session = modCookie, path = '/Docs'): Promise<string> {
      const res = await post('/quiz/import/browse', connectFields({ path }), session)
      expect(res.status).toBe(303)
      const conn = importCookieOf(res)
      expect(conn).toMatch(new RegExp(`^${IMPORT_COOKIE}=[A-Za-z0-9_-]{32,}$`))
      return `${session}; ${conn}`
    }
    const documentCount = async () => (await t.db.sql<{ n: number }>`select count(*)::int as n from quiz.documents`)[0]!.n
    const importKeys = async () => (await t.db.sql<{ key: string; value: unknown }>`select key, value from core.kv where key like 'quiz:user:%:import:%'`)

    beforeAll(async () => {
      lecture = await makePdf([questionsText('imp', 2).split('\n')])
      expect(lecture.byteLength).toBeLessThan(MAX_UPLOAD_SIZE)
      const big = new Uint8Array(MAX_UPLOAD_SIZE + 1_000)
      big.set(pdfBytes('big'))
      dav = await startWebDavServer({
        'Docs/lecture.pdf': lecture,
        'Docs/notes.txt': 'not a pdf',
        'Docs/fake.pdf': 'plain text that only calls itself a PDF',
        'Docs/big.pdf': big,
        [`Docs/${MARKUP_NAME}`]: pdfBytes('markup'),
        'Docs/zeta/inner.pdf': pdfBytes('inner'),
        'Docs/Alpha/': '',
        'top.pdf': pdfBytes('top'),
      })
      deadPort = closedPort()
      t = await startTestApp({
        target,
        env: { WEBDAV_ALLOWED_HOSTS: `127.0.0.1:${dav.port},127.0.0.1:${deadPort}`, MAX_UPLOAD_SIZE: String(MAX_UPLOAD_SIZE) },
        boot: { log: capturingLogger(logLines) },
      })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator', 'importmod')
      otherModerator = await createAccount(t, admin, 'moderator', 'importmod2')
      regular = await createAccount(t, admin, 'user', 'importuser')
      modCookie = await pageCookie(moderator.email)
      otherCookie = await pageCookie(otherModerator.email)
      userCookie = await pageCookie(regular.email)
    })
    afterAll(async () => {
      await t?.close()
      await dav?.close()
    })

    it('signed out, the page sends the browser to sign in', async () => {
      const res = await t.get('/quiz/import', { headers: html })
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/login')
    })

    it('a regular user gets 403 on the page and on every form', async () => {
      const page = await get('/quiz/import', userCookie)
      expect(page.status).toBe(403)
      expect(await text(page)).toContain('Not allowed')
      for (const path of ['/quiz/import/browse', '/quiz/import/file', '/quiz/import/disconnect']) {
        const res = await post(path, connectFields({ path: '/Docs/lecture.pdf' }), userCookie)
        expect(res.status).toBe(403)
        expect(res.headers.get('set-cookie') ?? '').not.toContain(IMPORT_COOKIE)
      }
      expect(await importKeys()).toHaveLength(0)
    })

    it('admins may use the page too', async () => {
      const adminCookie = await pageCookie(admin.email)
      const res = await get('/quiz/import', adminCookie)
      expect(res.status).toBe(200)
      expect(await text(res)).toContain('action="/quiz/import/browse"')
    })

    it('not connected: the connect form, labelled, posting to /quiz/import/browse, the password not remembered by the browser', async () => {
      const res = await get('/quiz/import', modCookie)
      expect(res.status).toBe(200)
      const body = await text(res)
      expect(body).toContain('<h1>Import from a file server</h1>')
      expect(body).toContain('action="/quiz/import/browse" method="post"')
      for (const name of ['server', 'username', 'password', 'path']) expect(body).toContain(`<label for="${name}">`)
      expect(body).toMatch(/<input id="password" name="password" type="password" value="" autocomplete="off" required/)
      expect(body).toContain('>Connect</button>')
    })

    it('connects and lists the folder: folders as links, PDFs with their size and an Import button, a link up', async () => {
      const res = await post('/quiz/import/browse', connectFields(), modCookie)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/import?path=%2FDocs')
      const setCookie = res.headers.get('set-cookie')!
      expect(setCookie).toContain(`Path=/quiz/import; Max-Age=${IMPORT_CONNECTION_TTL_S}; HttpOnly; SameSite=Lax`)
      const cookie = `${modCookie}; ${importCookieOf(res)}`

      const page = await get(res.headers.get('location')!, cookie)
      expect(page.status).toBe(200)
      const body = await text(page)
      expect(body).toContain('<dd>' + dav.url + '</dd>')
      expect(body).toContain(`<dd>${WEBDAV_USER}</dd>`)
      expect(body).toContain('Folder <span>/Docs</span>')
      expect(body).toContain('href="/quiz/import?path=%2FDocs%2FAlpha"')
      expect(body).toContain('href="/quiz/import?path=%2FDocs%2Fzeta"')
      expect(body).toMatch(/<a href="\/quiz\/import"[^>]*>Up to <span>\/<\/span><\/a>/)
      expect(body).toContain('<th scope="row">lecture.pdf</th>')
      expect(body).toContain(`<th scope="row">lecture.pdf</th><td>PDF</td><td>${sizeInWords(lecture.byteLength)}</td>`)
      expect(body).toContain('<input type="hidden" name="path" value="/Docs/lecture.pdf"/>')
      expect(body).toContain('aria-label="Import lecture.pdf"')
      expect(body).toContain('action="/quiz/import/file" method="post"')
      expect(body).not.toContain('notes.txt')
      // the page renews the connection's cookie on each use
      expect(page.headers.get('set-cookie')).toContain(`${IMPORT_COOKIE}=`)
    })

    it('keeps the connection on the server: one kv entry for the user, the password sealed, never in the cookie', async () => {
      const cookie = await connect()
      const rows = (await importKeys()).filter((r) => r.key.startsWith(`quiz:user:${moderator.id}:import:`))
      expect(rows.length).toBeGreaterThanOrEqual(1)
      for (const row of rows) {
        const stored = JSON.stringify(row.value)
        expect(stored).not.toContain(WEBDAV_PASSWORD)
        expect(stored).toContain('enc:v1:')
        // the key holds the id's hash, not the id the cookie carries
        expect(row.key).not.toContain(cookie.split(`${IMPORT_COOKIE}=`)[1]!)
      }
      expect(cookie).not.toContain(WEBDAV_PASSWORD)
    })

    it('opens a subfolder by its link, as a page and as the htmx fragment; a folder posted alone opens it too', async () => {
      const cookie = await connect()
      const page = await get('/quiz/import?path=%2FDocs%2Fzeta', cookie)
      expect(page.status).toBe(200)
      const body = await text(page)
      expect(body).toContain('Folder <span>/Docs/zeta</span>')
      expect(body).toContain('<th scope="row">inner.pdf</th>')
      expect(body).toMatch(/<a href="\/quiz\/import\?path=%2FDocs"[^>]*>Up to <span>\/Docs<\/span><\/a>/)

      const fragment = await text(await get('/quiz/import?path=%2FDocs%2Fzeta', cookie, { 'hx-request': 'true' }))
      expect(fragment).toStartWith('<div id="import">')
      expect(fragment).not.toContain('<html')
      expect(fragment).toContain('inner.pdf')

      const root = await text(await get('/quiz/import', cookie))
      expect(root).toContain('Folder <span>/</span>')
      expect(root).toContain('<th scope="row">top.pdf</th>')
      expect(root).not.toContain('Up to')

      const open = await post('/quiz/import/browse', { path: '/Docs/zeta' }, cookie)
      expect(open.status).toBe(303)
      expect(open.headers.get('location')).toBe('/quiz/import?path=%2FDocs%2Fzeta')
    })

    it('imports a PDF: a document owned by the moderator, stored and processed as an upload, then its page', async () => {
      const cookie = await connect()
      const before = await documentCount()
      const res = await post('/quiz/import/file', { path: '/Docs/lecture.pdf' }, cookie)
      expect(res.status).toBe(303)
      const m = /^\/quiz\/documents\/(\d+)\?done=imported$/.exec(res.headers.get('location') ?? '')
      expect(m).not.toBeNull()
      const id = Number(m![1])
      expect(await documentCount()).toBe(before + 1)
      const [doc] = await t.db.sql<{ user_id: number; original_filename: string; status: string; size_bytes: number; processing_job_id: string | null }>`
        select user_id, original_filename, status, size_bytes, processing_job_id from quiz.documents where id = ${id}`
      expect(doc!.user_id).toBe(moderator.id)
      expect(doc!.original_filename).toBe('lecture.pdf')
      expect(['processing', 'ready']).toContain(doc!.status)
      expect(doc!.size_bytes).toBe(lecture.byteLength)
      expect(doc!.processing_job_id).not.toBeNull()

      const page = await get(`/quiz/documents/${id}`, modCookie)
      expect(page.status).toBe(200)
      expect(await text(page)).toContain('lecture.pdf')
    })

    it('imports through htmx (a boosted form): HX-Redirect to the document', async () => {
      const cookie = await connect()
      const res = await post('/quiz/import/file', { path: '/Docs/zeta/inner.pdf' }, cookie, { 'hx-request': 'true', 'hx-boosted': 'true' })
      expect(res.status).toBe(200)
      const m = /^\/quiz\/documents\/(\d+)\?done=imported$/.exec(res.headers.get('hx-redirect') ?? '')
      expect(m).not.toBeNull()
      const [doc] = await t.db.sql<{ user_id: number; original_filename: string }>`select user_id, original_filename from quiz.documents where id = ${Number(m![1])}`
      expect(doc).toEqual({ user_id: moderator.id, original_filename: 'inner.pdf' })
    })

    it('refuses a file that is not a PDF, by its name (400) and by its content (415), on the folder\'s page', async () => {
      const cookie = await connect()
      const before = await documentCount()
      const byName = await post('/quiz/import/file', { path: '/Docs/notes.txt' }, cookie)
      expect(byName.status).toBe(400)
      const nameBody = await text(byName)
      expect(nameBody).toContain('class="flash error" role="alert">Only PDF files can be downloaded')
      expect(nameBody).toContain('Folder <span>/Docs</span>') // the folder is listed again

      const byContent = await post('/quiz/import/file', { path: '/Docs/fake.pdf' }, cookie)
      expect(byContent.status).toBe(415)
      expect(await text(byContent)).toContain('This file is not a PDF, although its name ends in .pdf')

      const htmx = await post('/quiz/import/file', { path: '/Docs/fake.pdf' }, cookie, { 'hx-request': 'true', 'hx-boosted': 'true' })
      expect(htmx.status).toBe(422) // htmx swaps 422 only
      expect(await text(htmx)).toContain('This file is not a PDF')
      expect(await documentCount()).toBe(before)
    })

    it('refuses a PDF over the upload limit (413), naming the limit', async () => {
      const cookie = await connect()
      const before = await documentCount()
      const res = await post('/quiz/import/file', { path: '/Docs/big.pdf' }, cookie)
      expect(res.status).toBe(413)
      expect(await text(res)).toContain(`larger than the upload limit of ${MAX_UPLOAD_SIZE} bytes`)
      expect(await documentCount()).toBe(before)
    })

    it('escapes file names: markup in a name is shown as text', async () => {
      const cookie = await connect()
      const body = await text(await get('/quiz/import?path=%2FDocs', cookie))
      expect(body).toContain('<th scope="row">Week &lt;b&gt;2&lt;b&gt; &amp; &quot;notes&quot;.pdf</th>')
      // outside quoted attribute values (where < is plain text), no <b> element made it through
      expect(body.replace(/"[^"]*"/g, '""')).not.toContain('<b>')
    })

    it('refuses a private address that is not allowed (400), next to the address, and keeps no connection', async () => {
      const keys = (await importKeys()).length
      const res = await post('/quiz/import/browse', connectFields({ server: `http://127.0.0.2:${dav.port}` }), modCookie)
      expect(res.status).toBe(400)
      expect(importCookieOf(res)).toBe('')
      const body = await text(res)
      expect(body).toContain('WEBDAV_ALLOWED_HOSTS')
      expect(body).toMatch(/id="server" name="server" type="url" value="http:\/\/127\.0\.0\.2:\d+"[^>]*aria-invalid="true"/)
      expect(body).toContain('id="server-error"')
      expect(body).toContain('value=""') // the password field comes back empty
      expect((await importKeys()).length).toBe(keys)
    })

    it('says when the server cannot be reached (502)', async () => {
      const res = await post('/quiz/import/browse', connectFields({ server: `http://127.0.0.1:${deadPort}` }), modCookie)
      expect(res.status).toBe(502)
      expect(await text(res)).toContain('could not be reached')
      expect(importCookieOf(res)).toBe('')
    })

    it('says the file server refused a wrong password, without repeating it, and keeps no connection', async () => {
      const res = await post('/quiz/import/browse', connectFields({ password: 'wrong-Password-9' }), modCookie)
      expect(res.status).toBe(400)
      const body = await text(res)
      expect(body).toContain('The file server refused the username or password')
      expect(body).toContain('id="password-error"')
      expect(body).not.toContain('wrong-Password-9')
      expect(importCookieOf(res)).toBe('')
    })

    it('asks for the missing details (422), next to each field', async () => {
      const res = await post('/quiz/import/browse', { server: '', username: '', password: '' }, modCookie)
      expect(res.status).toBe(422)
      const body = await text(res)
      expect(body).toContain('id="server-error">Enter the file server')
      expect(body).toContain('Enter the username')
      expect(body).toContain('Enter the password')
    })

    it('refuses a form sent from another site (403): nothing is connected or imported', async () => {
      const keys = (await importKeys()).length
      const docs = await documentCount()
      const cookie = await connect()
      const evil = { origin: 'https://evil.example' }
      expect((await post('/quiz/import/browse', connectFields(), modCookie, evil)).status).toBe(403)
      expect((await post('/quiz/import/file', { path: '/Docs/lecture.pdf' }, cookie, evil)).status).toBe(403)
      expect((await importKeys()).length).toBe(keys + 1) // only the connect() above
      expect(await documentCount()).toBe(docs)
    })

    it('a connection belongs to its moderator: another moderator with the same cookie is not connected', async () => {
      const cookie = await connect()
      const conn = cookie.slice(modCookie.length + 2)
      const body = await text(await get('/quiz/import', `${otherCookie}; ${conn}`))
      expect(body).toContain('action="/quiz/import/browse"')
      expect(body).not.toContain('Folder <span>')
      const res = await post('/quiz/import/file', { path: '/Docs/lecture.pdf' }, `${otherCookie}; ${conn}`)
      expect(res.status).toBe(400)
      expect(await text(res)).toContain('Connect to the file server again')
    })

    it('disconnects: the stored connection is deleted and the cookie cleared; an import then asks to connect again', async () => {
      const cookie = await connect()
      const before = (await importKeys()).length
      const res = await post('/quiz/import/disconnect', {}, cookie)
      expect(res.status).toBe(303)
      expect(res.headers.get('location')).toBe('/quiz/import')
      expect(res.headers.get('set-cookie')).toContain(`${IMPORT_COOKIE}=; Path=/quiz/import; Max-Age=0`)
      expect((await importKeys()).length).toBe(before - 1)
      const again = await post('/quiz/import/file', { path: '/Docs/lecture.pdf' }, cookie)
      expect(again.status).toBe(400)
      const body = await text(again)
      expect(body).toContain('Connect to the file server again')
      expect(body).toContain('name="path" type="text" value="/Docs"') // the folder to go back to
    })

    it('a GET on a form\'s address (a reload after a boosted post) lands on the page', async () => {
      for (const path of ['/quiz/import/browse', '/quiz/import/file', '/quiz/import/disconnect']) {
        const res = await get(path, modCookie)
        expect(res.status).toBe(303)
        expect(res.headers.get('location')).toBe('/quiz/import')
      }
    })

    it('the password is in no page the tests read, and not in the log', async () => {
      expect(pagesSeen.length).toBeGreaterThan(15)
      for (const body of pagesSeen) expect(body).not.toContain(WEBDAV_PASSWORD)
      const log = logLines.join('')
      expect(log).toContain('/quiz/import') // the request log is there ...
      expect(log).not.toContain(WEBDAV_PASSWORD) // ... without bodies or credentials
      expect(log).not.toContain('wrong-Password-9')
      expect(log).not.toContain(btoa(`${WEBDAV_USER}:${WEBDAV_PASSWORD}`))
    })
  })
}

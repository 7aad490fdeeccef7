// Spec 1, File-server import: the WebDAV proxy against a real WebDAV server (webdav-server on 127.0.0.1), which the
// app may reach only because its configuration allows that host and port (WEBDAV_ALLOWED_HOSTS, the operator's
// outbound allow-list). Test, list and download; every refusal (non-PDF, folder, missing, bad credentials,
// unreachable, a private or plain-http address not allowed, `..`); roles; and credentials kept out of the log.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { capturingLogger, closedPort } from './support/net'
import { API, createAccount, expectDetail, expectValidation, registerAdmin, type Account } from './support/quiz'
import { pdfBytes, startWebDavServer, WEBDAV_PASSWORD, WEBDAV_USER, type WebDavServer } from './support/webdav'

setDefaultTimeout(30_000)

const FILES = {
  'Docs/b.pdf': pdfBytes('b'),
  'Docs/A.PDF': pdfBytes('upper'),
  'Docs/Übung ä.pdf': pdfBytes('umlaut'),
  'Docs/notes.txt': 'not a pdf',
  'Docs/scan.pdf.png': 'an image',
  'Docs/zeta/inner.pdf': pdfBytes('inner'),
  'Docs/Alpha/': '',
  'Docs/folder.pdf/': '',
  'top.pdf': pdfBytes('top'),
}

interface Item { name: string; path: string; type: string; size: number }

for (const target of databaseTargets()) {
  describe(`file-server import [${target}]`, () => {
    let dav: WebDavServer
    let t: TestApp
    let moderator: Account
    let user: Account
    let admin: Account
    let deadPort: number
    let redirector: ReturnType<typeof Bun.serve>
    const logLines: string[] = []

    beforeAll(async () => {
      dav = await startWebDavServer(FILES)
      deadPort = closedPort()
      // A file server that redirects to the cloud metadata address.
      redirector = Bun.serve({
        port: 0, hostname: '127.0.0.1',
        fetch: () => new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }),
      })
      t = await startTestApp({
        target,
        env: { WEBDAV_ALLOWED_HOSTS: `127.0.0.1:${dav.port},127.0.0.1:${deadPort},127.0.0.1:${redirector.port}` },
        boot: { log: capturingLogger(logLines) },
      })
      admin = await registerAdmin(t)
      moderator = await createAccount(t, admin, 'moderator')
      user = await createAccount(t, admin, 'user')
    })
    afterAll(async () => {
      await t.close()
      await dav.close()
      await redirector.stop(true)
    })

    const body = (over: Record<string, unknown> = {}) => ({ server: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD, path: '/Docs', ...over })
    const call = (op: 'test' | 'files' | 'download', over: Record<string, unknown> = {}, who: Account = moderator) =>
      t.post(`${API}/nextcloud/${op}`, body(over), { token: who.token })

    it('tests a connection: ok with a message', async () => {
      const res = await call('test')
      expect(res.status).toBe(200)
      const out = (await res.json()) as { ok: boolean; message: string }
      expect(out.ok).toBe(true)
      expect(out.message).toContain('/Docs')
      expect(out.message).not.toContain(WEBDAV_PASSWORD)
      // The client's allow-list travels to the package's fetch hook by a header that never leaves the server.
      expect(dav.headerNames.has('authorization')).toBe(true)
      expect([...dav.headerNames].filter((name) => name.startsWith('x-webdav'))).toEqual([])
    })

    it('lists folders first, then PDFs, each by name; other files left out', async () => {
      const res = await call('files')
      expect(res.status).toBe(200)
      const out = (await res.json()) as { path: string; items: Item[] }
      expect(out.path).toBe('/Docs')
      expect(out.items.map((i) => [i.name, i.type])).toEqual([
        ['Alpha', 'dir'], ['folder.pdf', 'dir'], ['zeta', 'dir'],
        ['A.PDF', 'pdf'], ['b.pdf', 'pdf'], ['Übung ä.pdf', 'pdf'],
      ])
      const b = out.items.find((i) => i.name === 'b.pdf')!
      expect(b.path).toBe('/Docs/b.pdf')
      expect(b.size).toBe(pdfBytes('b').byteLength)
      expect(out.items.find((i) => i.name === 'zeta')!.size).toBe(0)
    })

    it('lists the root and a nested folder through the paths it returned; normalises the path', async () => {
      const root = (await (await call('files', { path: '' })).json()) as { path: string; items: Item[] }
      expect(root.path).toBe('/')
      expect(root.items.map((i) => i.name)).toEqual(['Docs', 'top.pdf'])
      const zeta = (await (await call('files', { path: '//Docs/./zeta/' })).json()) as { path: string; items: Item[] }
      expect(zeta.path).toBe('/Docs/zeta')
      expect(zeta.items).toEqual([{ name: 'inner.pdf', path: '/Docs/zeta/inner.pdf', type: 'pdf', size: pdfBytes('inner').byteLength }])
    })

    it('downloads a PDF: streamed application/pdf, attachment with the file name, the exact bytes', async () => {
      const res = await call('download', { path: '/Docs/b.pdf' })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="b.pdf"; filename*=UTF-8''b.pdf`)
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(pdfBytes('b'))

      const upper = await call('download', { path: 'Docs/A.PDF' })
      expect(upper.status).toBe(200)
      expect(new TextDecoder().decode(await upper.arrayBuffer())).toContain('upper')

      const umlaut = await call('download', { path: '/Docs/Übung ä.pdf' })
      expect(umlaut.status).toBe(200)
      const disposition = umlaut.headers.get('content-disposition')!
      expect(disposition).toContain(`filename*=UTF-8''${encodeURIComponent('Übung ä.pdf')}`)
      expect(disposition).toMatch(/filename="[\x20-\x7e]+"/)
      expect(new TextDecoder().decode(await umlaut.arrayBuffer())).toContain('umlaut')
    })

    it('refuses a download that is not a PDF (400), a folder named .pdf (400), and a missing PDF (404)', async () => {
      const txt = await expectDetail(await call('download', { path: '/Docs/notes.txt' }), 400)
      expect(txt).toContain('PDF')
      await expectDetail(await call('download', { path: '/Docs/scan.pdf.png' }), 400)
      await expectDetail(await call('download', { path: '/Docs' }), 400)
      await expectDetail(await call('download', { path: '' }), 400)
      expect(await expectDetail(await call('download', { path: '/Docs/folder.pdf' }), 400)).toContain('folder')
      await expectDetail(await call('download', { path: '/Docs/missing.pdf' }), 404)
      await expectDetail(await call('files', { path: '/Nope' }), 404)
      await expectDetail(await call('test', { path: '/Nope' }), 404)
    })

    it('answers bad credentials with 400, without echoing them', async () => {
      for (const op of ['test', 'files', 'download'] as const) {
        const res = await call(op, { password: 'wrong-Password-9', path: '/Docs/b.pdf' })
        const text = await res.text()
        expect(res.status).toBe(400)
        expect(JSON.parse(text).detail).toContain('username or password')
        expect(text).not.toContain('wrong-Password-9')
        expect(text).not.toContain(WEBDAV_USER)
      }
    })

    it('answers an unreachable server with 502, quickly', async () => {
      const started = performance.now()
      const detail = await expectDetail(await call('files', { server: `http://127.0.0.1:${deadPort}` }), 502)
      expect(detail).toContain('could not be reached')
      expect(performance.now() - started).toBeLessThan(5_000)
    })

    it('answers a name that does not resolve with 502', async () => {
      await expectDetail(await call('test', { server: 'https://no-such-host.invalid/dav' }), 502)
    })

    it('refuses a private, loopback or metadata address that is not allowed, naming the rule, before any request', async () => {
      for (const server of [
        `http://127.0.0.2:${dav.port}`, 'https://10.1.2.3/remote.php/dav',
        'https://169.254.169.254/', 'https://[::1]/', 'https://localhost/dav', `http://[::ffff:127.0.0.1]:${dav.port}`,
      ]) {
        const detail = await expectDetail(await call('files', { server }), 400)
        expect(detail).toContain('loopback, private, link-local')
        expect(detail).toContain('WEBDAV_ALLOWED_HOSTS')
      }
    })

    it('refuses plain http to a host that is not allowed, and malformed server URLs', async () => {
      expect(await expectDetail(await call('test', { server: 'http://93.184.215.14/dav' }), 400)).toContain('https')
      await expectDetail(await call('test', { server: 'not a url' }), 400)
      await expectDetail(await call('test', { server: 'ftp://93.184.215.14/' }), 400)
      const creds = await expectDetail(await call('test', { server: `http://${WEBDAV_USER}:${WEBDAV_PASSWORD}@127.0.0.1:${dav.port}` }), 400)
      expect(creds).not.toContain(WEBDAV_PASSWORD)
      await expectDetail(await call('test', { server: `${dav.url}/?x=1` }), 400)
    })

    it('refuses `..` segments (plain and percent-encoded), backslashes and control characters in the path', async () => {
      for (const path of ['../etc', '/Docs/../../secret.pdf', 'Docs/..', '/Docs/%2e%2e/top.pdf', 'Docs\\b.pdf', '/Docs/\u0000b.pdf']) {
        const res = await call('download', { path })
        expect(res.status).toBe(400)
        await res.body?.cancel()
      }
      expect(await expectDetail(await call('files', { path: '/Docs/../..' }), 400)).toContain('..')
    })

    it('does not follow a redirect from the file server (502)', async () => {
      for (const op of ['test', 'files'] as const) {
        expect(await expectDetail(await call(op, { server: `http://127.0.0.1:${redirector.port}` }), 502)).toContain('redirect')
      }
    })

    it('needs a moderator: 401 without a token, 403 for a user; admins may', async () => {
      for (const op of ['test', 'files', 'download'] as const) {
        const anon = await t.post(`${API}/nextcloud/${op}`, body())
        expect(anon.status).toBe(401)
        expect((await call(op, {}, user)).status).toBe(403)
      }
      expect((await call('files', {}, admin)).status).toBe(200)
    })

    it('validates the body (422)', async () => {
      await expectValidation(await t.post(`${API}/nextcloud/files`, { server: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD }, { token: moderator.token }), 'path')
      await expectValidation(await call('files', { server: 'x'.repeat(501) }), 'server')
      await expectValidation(await call('files', { password: 42 }), 'password')
    })

    it('never writes the password (or the Authorization header) to the log', async () => {
      await call('files')
      await call('download', { path: '/Docs/b.pdf' })
      await call('test', { password: 'another-Secret-77' })
      await call('files', { server: 'https://10.9.9.9/' })
      const log = logLines.join('')
      expect(log).toContain('/quiz/api/nextcloud/files') // the request log is there ...
      expect(log).not.toContain(WEBDAV_PASSWORD) // ... without bodies or credentials
      expect(log).not.toContain('another-Secret-77')
      expect(log).not.toContain(btoa(`${WEBDAV_USER}:${WEBDAV_PASSWORD}`))
    })
  })
}

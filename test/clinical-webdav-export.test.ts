// Spec 2, File-sync export, against a real WebDAV server (webdav-server on 127.0.0.1, which the app may reach only
// because WEBDAV_ALLOWED_HOSTS names it): connect (the PROPFIND check, the token sealed in users.nextcloud_token,
// read from the raw column), the export folder (POST /api/user/webdav-path, traversal refused), export (the file's
// content on the server, the title made safe, no overwriting), a legacy plaintext token sealed on its next use,
// disconnect, and the refusals: not connected, bad credentials, unreachable, redirecting and disallowed servers.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { userWithSession, type SignedIn } from './support/clinical'
import { capturingLogger, closedPort } from './support/net'
import { startWebDavServer, WEBDAV_PASSWORD, WEBDAV_USER, type WebDavServer } from './support/webdav'
import { fileTimestamp, safeFileTitle } from '../plugins/clinical/services/webdav-export'

setDefaultTimeout(30_000)

interface ErrorBody { success: false; error: string; code: string }
interface Connection { nextcloud_url: string | null; nextcloud_username: string | null; nextcloud_token: string | null; webdav_path: string | null }

// A fixed clock: two exports of one title in the same second meet the same timestamped name.
const CLOCK = Date.UTC(2026, 2, 1, 9, 30, 0)
const STAMP = '2026-03-01 09-30-00'

async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body).toMatchObject({ success: false, code })
  return body
}

describe('file names from titles', () => {
  it('drops folder separators, control and bidi characters and leading dots; keeps words; never empty', () => {
    expect(safeFileTitle('../../etc/passwd')).toBe('etc-passwd')
    expect(safeFileTitle('Visit: Jane\\Doe <3> "flu"?')).toBe('Visit- Jane-Doe -3- -flu--')
    expect(safeFileTitle('a\u0000b\nc\u202Ed')).toBe('a b c d')
    expect(safeFileTitle('...')).toBe('note')
    expect(safeFileTitle('   ')).toBe('note')
    expect(safeFileTitle('Ärztlicher Bericht')).toBe('Ärztlicher Bericht')
    expect([...safeFileTitle('x'.repeat(500))].length).toBe(80)
    expect(fileTimestamp(CLOCK)).toBe(STAMP)
  })
})

for (const target of databaseTargets()) {
  describe(`file-sync export [${target}]`, () => {
    let dav: WebDavServer
    let t: TestApp
    let clinician: SignedIn
    let colleague: SignedIn
    let deadPort: number
    let redirector: ReturnType<typeof Bun.serve>
    const logLines: string[] = []

    beforeAll(async () => {
      dav = await startWebDavServer({ 'Existing/readme.txt': 'already here' })
      deadPort = closedPort()
      // A file server that redirects to the cloud metadata address.
      redirector = Bun.serve({
        port: 0, hostname: '127.0.0.1',
        fetch: () => new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }),
      })
      t = await startTestApp({
        target,
        env: { WEBDAV_ALLOWED_HOSTS: `127.0.0.1:${dav.port},127.0.0.1:${deadPort},127.0.0.1:${redirector.port}` },
        boot: { log: capturingLogger(logLines), now: () => CLOCK },
      })
      clinician = await userWithSession(t)
      colleague = await userWithSession(t)
    })
    afterAll(async () => {
      await t.close()
      await dav.close()
      await redirector.stop(true)
    })

    const connection = async (who: SignedIn) => (await t.db.sql<Connection>`
      select nextcloud_url, nextcloud_username, nextcloud_token, webdav_path from clinical.users where id = ${who.user.id}`)[0]!
    const connect = (who: SignedIn, over: Record<string, string> = {}) =>
      t.post('/api/nextcloud/connect', { url: dav.url, username: WEBDAV_USER, password: WEBDAV_PASSWORD, ...over }, { token: who.token })
    const exportNote = (who: SignedIn, title: string, text = 'S: cough for 3 days.\nO: afebrile.\nA: viral URI.\nP: fluids.') =>
      t.post('/api/nextcloud/export', { title, text }, { token: who.token })
    const onServer = (path: string) => join(dav.root, ...path.split('/').filter(Boolean))

    it('export without a connected server is 400 not_connected', async () => {
      await expectError(await exportNote(clinician, 'Early'), 400, 'not_connected')
    })

    it('refused credentials are 400 webdav_auth_failed (not 401: that would end the session); nothing stored', async () => {
      const body = await expectError(await connect(clinician, { password: 'wrong-password' }), 400, 'webdav_auth_failed')
      expect(body.error).not.toContain('wrong-password')
      expect(await connection(clinician)).toMatchObject({ nextcloud_url: null, nextcloud_token: null })
      // the session is untouched
      expect((await t.get('/api/auth/me', { token: clinician.token })).status).toBe(200)
    })

    it('an unreachable server is 502; a redirecting one 502 (not followed); a private address not allowed 400', async () => {
      await expectError(await connect(clinician, { url: `http://127.0.0.1:${deadPort}/dav` }), 502, 'webdav_unreachable')
      await expectError(await connect(clinician, { url: `http://127.0.0.1:${redirector.port}/dav` }), 502, 'webdav_redirect')
      await expectError(await connect(clinician, { url: 'http://10.1.2.3/remote.php/dav' }), 400, 'server_not_allowed')
      await expectError(await connect(clinician, { url: `http://${WEBDAV_USER}:x@127.0.0.1:${dav.port}/` }), 400, 'invalid_server')
      await expectError(await connect(clinician, { url: 'ftp://files.example.org/' }), 400, 'invalid_server')
      expect((await connection(clinician)).nextcloud_url).toBeNull()
    })

    it('connects after a PROPFIND check; the token is stored sealed (raw column) and never answered or logged', async () => {
      const res = await connect(clinician)
      const body = (await res.json()) as { success: boolean; message: string }
      expect(res.status, JSON.stringify(body)).toBe(200)
      expect(body).toEqual({ success: true, message: `Connected to the file server at 127.0.0.1:${dav.port}` })
      const row = await connection(clinician)
      expect(row.nextcloud_url).toBe(dav.url)
      expect(row.nextcloud_username).toBe(WEBDAV_USER)
      expect(row.nextcloud_token).toStartWith('enc:v1:')
      expect(row.nextcloud_token).not.toContain(WEBDAV_PASSWORD)
      expect(t.booted.core.crypto.openText(row.nextcloud_token!)).toBe(WEBDAV_PASSWORD)

      const status = await t.get('/api/nextcloud/status', { token: clinician.token })
      const text = await status.text()
      expect(JSON.parse(text)).toEqual({ success: true, connected: true, url: dav.url, username: WEBDAV_USER, path: '/' })
      expect(text).not.toContain(WEBDAV_PASSWORD)
      expect(logLines.join('\n')).not.toContain(WEBDAV_PASSWORD)
      // one user's connection is not another's
      expect((await connection(colleague)).nextcloud_url).toBeNull()
      await expectError(await exportNote(colleague, 'Not mine'), 400, 'not_connected')
    })

    it('exports a note to the root as <title> <timestamp>.txt with its exact text', async () => {
      const text = 'Ärztlicher Verlauf: Fieber 39 °C.\nPlan: Kontrolle in 2 Tagen.'
      const res = await exportNote(clinician, 'Sick visit', text)
      const body = (await res.json()) as { success: boolean; path: string }
      expect(res.status, JSON.stringify(body)).toBe(200)
      expect(body).toEqual({ success: true, path: `/Sick visit ${STAMP}.txt` })
      expect(readFileSync(onServer(body.path), 'utf8')).toBe(text)
    })

    it('stores the export folder normalised; traversal, backslashes and control characters are refused and change nothing', async () => {
      const res = await t.post('/api/user/webdav-path', { path: 'Notes//Clinic/./' }, { token: clinician.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true, path: '/Notes/Clinic' })
      for (const path of ['../outside', '/Notes/../../etc', '/Notes/%2e%2e/x', 'Notes\\..\\x', '/Notes/\u0000x', '/a/%2F../b']) {
        await expectError(await t.post('/api/user/webdav-path', { path }, { token: clinician.token }), 400, 'invalid_path')
      }
      expect((await connection(clinician)).webdav_path).toBe('/Notes/Clinic')
    })

    it('exports into the folder (created when missing); a title with a path in it stays in the folder', async () => {
      const res = await exportNote(clinician, '../../../Existing/readme', 'Discharge summary.')
      const body = (await res.json()) as { path: string }
      expect(res.status, JSON.stringify(body)).toBe(200)
      expect(body.path).toBe(`/Notes/Clinic/Existing-readme ${STAMP}.txt`)
      expect(readFileSync(onServer(body.path), 'utf8')).toBe('Discharge summary.')
      expect(readFileSync(join(dav.root, 'Existing', 'readme.txt'), 'utf8')).toBe('already here')
      expect(readdirSync(join(dav.root, 'Notes', 'Clinic'))).toEqual([`Existing-readme ${STAMP}.txt`])
    })

    it('never overwrites: the same title in the same second gets a counter; control characters and dots are neutralised', async () => {
      const first = (await (await exportNote(clinician, 'Follow-up', 'first')).json()) as { path: string }
      const second = (await (await exportNote(clinician, 'Follow-up', 'second')).json()) as { path: string }
      expect(first.path).toBe(`/Notes/Clinic/Follow-up ${STAMP}.txt`)
      expect(second.path).toBe(`/Notes/Clinic/Follow-up ${STAMP} (2).txt`)
      expect(readFileSync(onServer(first.path), 'utf8')).toBe('first')
      expect(readFileSync(onServer(second.path), 'utf8')).toBe('second')

      const hidden = (await (await exportNote(clinician, '..\u0000.hidden\r\nname')).json()) as { path: string }
      expect(hidden.path).toBe(`/Notes/Clinic/hidden name ${STAMP}.txt`)
      const empty = (await (await exportNote(clinician, '')).json()) as { path: string }
      expect(empty.path).toBe(`/Notes/Clinic/note ${STAMP}.txt`)
      expect(existsSync(onServer(empty.path))).toBe(true)
    })

    it('refuses an empty note (400) before calling the server', async () => {
      await expectError(await t.post('/api/nextcloud/export', { title: 'x', text: '' }, { token: clinician.token }), 400, 'invalid_input')
    })

    it('a legacy plaintext token works and is sealed on its next use', async () => {
      await t.db.sql`update clinical.users set nextcloud_token = ${WEBDAV_PASSWORD} where id = ${clinician.user.id}`
      expect((await connection(clinician)).nextcloud_token).toBe(WEBDAV_PASSWORD)
      const res = await exportNote(clinician, 'Legacy', 'still exported')
      expect(res.status).toBe(200)
      const sealed = (await connection(clinician)).nextcloud_token!
      expect(sealed).toStartWith('enc:v1:')
      expect(t.booted.core.crypto.openText(sealed)).toBe(WEBDAV_PASSWORD)
      // and keeps working sealed
      expect((await exportNote(clinician, 'After legacy')).status).toBe(200)
    })

    it('a server that starts refusing the stored password answers 400, and the connection stays for a retry', async () => {
      await t.db.sql`update clinical.users set nextcloud_token = ${t.booted.core.crypto.sealText('changed-elsewhere')} where id = ${clinician.user.id}`
      await expectError(await exportNote(clinician, 'Refused'), 400, 'webdav_auth_failed')
      expect((await connect(clinician)).status).toBe(200)
    })

    it('disconnect forgets the server and the token, keeps the folder; export is 400 again', async () => {
      const res = await t.post('/api/nextcloud/disconnect', undefined, { token: clinician.token })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ success: true, message: 'The file server is disconnected' })
      expect(await connection(clinician)).toEqual({ nextcloud_url: null, nextcloud_username: null, nextcloud_token: null, webdav_path: '/Notes/Clinic' })
      await expectError(await exportNote(clinician, 'After'), 400, 'not_connected')
      const status = (await (await t.get('/api/nextcloud/status', { token: clinician.token })).json()) as { connected: boolean }
      expect(status.connected).toBe(false)
    })

    it('needs a session', async () => {
      expect((await t.post('/api/nextcloud/connect', { url: dav.url, username: 'a', password: 'b' })).status).toBe(401)
      expect((await t.post('/api/nextcloud/export', { title: 'a', text: 'b' })).status).toBe(401)
      expect((await t.post('/api/user/webdav-path', { path: '/x' })).status).toBe(401)
    })
  })
}

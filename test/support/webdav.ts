// A real WebDAV server for tests (webdav-server, over node:http on 127.0.0.1): one user with basic auth and a
// folder tree on disk with PDFs, other files and folders. Apps under test reach it through the outbound rule only
// when their configuration allows its host and port.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { v2 as webdav } from 'webdav-server'

export const WEBDAV_USER = 'alice'
export const WEBDAV_PASSWORD = 'dav-secret-Pa55'

export interface WebDavServer {
  /** http://127.0.0.1:port */
  url: string
  port: number
  /** The directory the server serves. */
  root: string
  /** Every request header name the server received, lower case. */
  headerNames: Set<string>
  /** Writes a file under the served tree (parents created). */
  write(path: string, content: string | Uint8Array): void
  close(): Promise<void>
}

/** A minimal PDF's bytes with a marker, enough to tell files apart. */
export const pdfBytes = (marker: string) => new TextEncoder().encode(`%PDF-1.4\n% ${marker}\n%%EOF\n`)

export async function startWebDavServer(files: Record<string, string | Uint8Array> = {}): Promise<WebDavServer> {
  const root = mkdtempSync(join(tmpdir(), 'webdav-test-'))
  const write = (path: string, content: string | Uint8Array) => {
    const full = join(root, path)
    mkdirSync(dirname(full), { recursive: true })
    writeFileSync(full, content)
  }
  for (const [path, content] of Object.entries(files)) {
    if (path.endsWith('/')) mkdirSync(join(root, path), { recursive: true })
    else write(path, content)
  }
  const users = new webdav.SimpleUserManager()
  const user = users.addUser(WEBDAV_USER, WEBDAV_PASSWORD, false)
  const privileges = new webdav.SimplePathPrivilegeManager()
  privileges.setRights(user, '/', ['all'])
  const server = new webdav.WebDAVServer({
    httpAuthentication: new webdav.HTTPBasicAuthentication(users, 'Test files'),
    privilegeManager: privileges,
    hostname: '127.0.0.1',
    port: 0,
  })
  const headerNames = new Set<string>()
  server.beforeRequest((ctx, next) => {
    for (const name of Object.keys(ctx.request.headers)) headerNames.add(name.toLowerCase())
    next()
  })
  await new Promise<void>((resolve, reject) =>
    server.setFileSystem('/', new webdav.PhysicalFileSystem(root), (ok) => (ok ? resolve() : reject(new Error('webdav: file system not mounted')))))
  const http = await new Promise<{ address(): AddressInfo | string | null }>((resolve) => server.start((s) => resolve(s!)))
  const port = (http.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    root,
    headerNames,
    write,
    async close() {
      await new Promise<void>((resolve) => server.stop(() => resolve()))
      rmSync(root, { recursive: true, force: true })
    },
  }
}

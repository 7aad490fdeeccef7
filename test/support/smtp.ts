// A real SMTP listener for tests: apps under test send through their ordinary SMTP transport to it, and tests
// read what arrived. Mail is sent in the background, so tests wait for a message rather than expect it at once.
import { SMTPServer } from 'smtp-server'
import type { AddressInfo } from 'node:net'
import { rememberMailSecrets } from './secrets'

export interface ReceivedMail {
  from: string
  /** Envelope recipients, lower-cased. */
  to: string[]
  subject: string
  /** The text/plain part, decoded (falls back to the HTML part with tags stripped). */
  text: string
  html: string | null
  raw: string
}

export interface SmtpSink {
  port: number
  messages: ReceivedMail[]
  /** Messages whose recipients include the address (case-insensitive). */
  to(address: string): ReceivedMail[]
  /** Resolves with the first message (already received or arriving later) that matches; rejects after timeoutMs. */
  waitFor(predicate: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>
  /** Env for an app under test that should send its mail here. */
  env: Record<string, string>
  close(): Promise<void>
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = []
  const waiters = new Set<{ predicate: (m: ReceivedMail) => boolean; resolve: (m: ReceivedMail) => void }>()

  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(_auth, _session, cb) {
      cb(null, { user: 'test' })
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const mail = parseMail(raw, session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          session.envelope.rcptTo.map((r) => r.address.toLowerCase()))
        messages.push(mail)
        rememberMailSecrets(`${mail.text}\n${mail.html ?? ''}`)
        for (const w of [...waiters]) {
          if (w.predicate(mail)) {
            waiters.delete(w)
            w.resolve(mail)
          }
        }
        cb()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port

  return {
    port,
    messages,
    to: (address) => messages.filter((m) => m.to.includes(address.toLowerCase())),
    waitFor(predicate, timeoutMs = 5000) {
      const found = messages.find(predicate)
      if (found) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const waiter = { predicate, resolve: (m: ReceivedMail) => { clearTimeout(timer); resolve(m) } }
        const timer = setTimeout(() => {
          waiters.delete(waiter)
          reject(new Error(`no matching mail within ${timeoutMs} ms (received: ${messages.map((m) => `${m.to.join(',')}: ${m.subject}`).join(' | ') || 'none'})`))
        }, timeoutMs)
        waiters.add(waiter)
      })
    },
    env: {
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(port),
      SMTP_FROM: 'quiz@example.test',
      SMTP_SECURE: 'false',
      APP_URL: 'http://localhost',
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

// A small MIME reader: enough for what nodemailer writes (single part or multipart, quoted-printable or base64).
interface Part { headers: Map<string, string>; body: string }

function splitPart(raw: string): Part {
  const normalized = raw.replace(/\r\n/g, '\n')
  const sep = normalized.indexOf('\n\n')
  const head = sep === -1 ? normalized : normalized.slice(0, sep)
  const body = sep === -1 ? '' : normalized.slice(sep + 2)
  const headers = new Map<string, string>()
  let last = ''
  for (const line of head.split('\n')) {
    if (/^\s/.test(line) && last) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`)
      continue
    }
    const i = line.indexOf(':')
    if (i <= 0) continue
    last = line.slice(0, i).trim().toLowerCase()
    headers.set(last, line.slice(i + 1).trim())
  }
  return { headers, body }
}

function decodeBody(part: Part): string {
  const cte = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase()
  if (cte === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (cte === 'quoted-printable') {
    const bytes = part.body.replace(/=\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    return Buffer.from(bytes, 'latin1').toString('utf8')
  }
  return part.body
}

function decodeHeader(value: string): string {
  return value.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=\s*/g, (_, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8'))
}

function leaves(part: Part): Part[] {
  const type = part.headers.get('content-type') ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (!/^multipart\//i.test(type) || !boundary) return [part]
  const pieces = part.body.split(`--${boundary}`).slice(1)
  return pieces
    .filter((p) => !p.startsWith('--'))
    .flatMap((p) => leaves(splitPart(p.replace(/^\n/, ''))))
}

function parseMail(raw: string, from: string, to: string[]): ReceivedMail {
  const top = splitPart(raw)
  const parts = leaves(top)
  const typeOf = (p: Part) => (p.headers.get('content-type') ?? 'text/plain').toLowerCase()
  const textPart = parts.find((p) => typeOf(p).startsWith('text/plain'))
  const htmlPart = parts.find((p) => typeOf(p).startsWith('text/html'))
  const html = htmlPart ? decodeBody(htmlPart) : null
  const text = textPart ? decodeBody(textPart) : (html ?? '').replace(/<[^>]+>/g, ' ')
  return { from, to, subject: decodeHeader(top.headers.get('subject') ?? ''), text, html, raw }
}

/** The first `${APP_URL}${path}?token=...` link in a mail, as path + query to request through the app. */
export function linkIn(mail: ReceivedMail, path: string, appUrl = 'http://localhost'): { pathAndQuery: string; token: string } {
  const haystack = `${mail.text}\n${mail.html ?? ''}`.replace(/&amp;/g, '&')
  const escaped = (appUrl + path).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const m = new RegExp(`${escaped}\\?token=([A-Za-z0-9_\\-.~%]+)`).exec(haystack)
  if (!m) throw new Error(`no ${appUrl}${path}?token=... link in mail "${mail.subject}":\n${mail.text}`)
  return { pathAndQuery: `${path}?token=${m[1]}`, token: decodeURIComponent(m[1]!) }
}

// Outbound address rules: where the server may send a request whose address an admin or a configuration names
// (an identity provider, an AI gateway, a file server). A URL passes when every address its host resolves to is
// publicly routable, or when the operator allowed its host by name. Callers check when the address is saved (to
// answer with the rule), and send through pinnedFetch, which checks again and connects to the very addresses it
// checked: a name cannot answer a public address to the check and a private one to the connection (DNS rebinding).
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'
import { withTimeout } from './timeout'

export const DNS_TIMEOUT_MS = 5_000

/**
 * Cloud metadata and platform services. Most sit in ranges refused anyway (169.254.169.254 link-local,
 * fd00:ec2::254 unique-local, 100.100.100.200 CGNAT); Azure's platform address looks public and is listed by name.
 */
export const METADATA_ADDRESSES: readonly string[] = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '192.0.0.192', '168.63.129.16']

/** The rule as refusals name it. */
export const OUTBOUND_ADDRESS_RULE =
  'must not resolve to a loopback, private, link-local, unique-local, multicast, unspecified, shared (CGNAT) or cloud metadata address'

/** A host the operator allows whatever it resolves to; port null allows every port. */
export interface AllowedHost {
  host: string
  port: number | null
}

export type OutboundRefusal = 'invalid_url' | 'not_https' | 'unresolvable' | 'private_address'
export type OutboundVerdict = { ok: true } | { ok: false; reason: OutboundRefusal; detail: string }

export type Resolver = (host: string) => Promise<string[]>

const systemResolver: Resolver = async (host) =>
  (await withTimeout(lookup(host, { all: true, verbatim: true }), DNS_TIMEOUT_MS, 'DNS lookup')).map((a) => a.address)

const metadata = new Set(METADATA_ADDRESSES.map((a) => ipaddr.parse(a).toNormalizedString()))

/**
 * The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, which also covers :: and
 * ::1, NAT64 64:ff9b::/96, 6to4 2002::/16), or null.
 */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address()
  const w = ip.parts
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])
  if (w.slice(0, 6).every((x) => x === 0)) return fromWords(w[6]!, w[7]!)
  if (ip.range() === 'rfc6052') return fromWords(w[6]!, w[7]!)
  if (w[0] === 0x2002) return fromWords(w[1]!, w[2]!)
  return null
}

/**
 * True for a globally routable unicast address (ipaddr.js's `unicast` range) that is not a metadata service.
 * False for private, loopback, link-local, unspecified, CGNAT, unique-local (fc00::/7), multicast, reserved and
 * special-purpose ranges, for IPv4 addresses inside IPv6 (mapped, NAT64, 6to4) by their IPv4 address, and for
 * anything that is not an address.
 */
export function isPublicAddress(address: string): boolean {
  const text = address.replace(/^\[|\]$/g, '').split('%')[0]!
  if (!ipaddr.isValid(text)) return false
  const ip = ipaddr.parse(text)
  const v4 = ip.kind() === 'ipv6' ? embeddedIpv4(ip as ipaddr.IPv6) : (ip as ipaddr.IPv4)
  const effective = v4 ?? ip
  return effective.range() === 'unicast' && !metadata.has(effective.toNormalizedString()) && !metadata.has(ip.toNormalizedString())
}

/** A URL's host as the rules compare it: lower case (the URL parser's), without IPv6 brackets or a trailing dot. */
const comparableHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase()

const effectivePort = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80)

/**
 * One allow-list entry (`gateway.internal`, `gateway.internal:4000`, `10.0.0.5:4000`, `[fd00::5]:4000`, `::1`),
 * normalised the way a URL's host is (so `127.1` and `127.0.0.1` are one host), or null when it is not a host.
 */
export function parseAllowedHost(entry: string): AllowedHost | null {
  const text = entry.trim()
  if (!text || /[\s/?#@]/.test(text)) return null
  // A bare IPv6 address has colons of its own: it takes no port unless bracketed.
  const bareIpv6 = !text.startsWith('[') && (text.match(/:/g)?.length ?? 0) > 1
  const m = bareIpv6 ? [text, `[${text}]`, undefined] : /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text)
  if (!m) return null
  const port = m[2] === undefined ? null : Number(m[2])
  if (port !== null && (port < 1 || port > 65535)) return null
  try {
    return { host: comparableHost(new URL(`http://${m[1]}/`).hostname), port }
  } catch {
    return null
  }
}

/** The allow-list entry naming exactly a URL's host and port (an operator's own gateway), or null for a bad URL. */
export function allowedHostOf(url: string): AllowedHost | null {
  try {
    const u = new URL(url)
    return { host: comparableHost(u.hostname), port: effectivePort(u) }
  } catch {
    return null
  }
}

function isAllowed(url: URL, allowed: readonly AllowedHost[]): boolean {
  const host = comparableHost(url.hostname)
  const port = effectivePort(url)
  return allowed.some((a) => a.host === host && (a.port === null || a.port === port))
}

/** What a check found: refused, or passed with the addresses to connect to (null: an allowed host, or an address). */
type Checked =
  | Extract<OutboundVerdict, { ok: false }>
  | { ok: true; url: URL; addresses: string[] | null }

/** Options of a check: the operator's allowed hosts, https only, the resolver and the address rule (tests replace them). */
export interface OutboundOptions {
  allowedHosts?: readonly AllowedHost[]
  httpsOnly?: boolean
  resolve?: Resolver
  /** Whether an address may be connected to: isPublicAddress unless a test says otherwise. */
  addressAllowed?: (address: string) => boolean
}

async function check(url: string, opts: OutboundOptions): Promise<Checked> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { ok: false, reason: 'invalid_url', detail: 'not a URL' }
  }
  if (parsed.protocol !== 'https:' && (opts.httpsOnly || parsed.protocol !== 'http:')) {
    return { ok: false, reason: opts.httpsOnly ? 'not_https' : 'invalid_url', detail: `protocol ${parsed.protocol}` }
  }
  if (isAllowed(parsed, opts.allowedHosts ?? [])) return { ok: true, url: parsed, addresses: null }
  const host = comparableHost(parsed.hostname)
  const literal = ipaddr.isValid(host)
  let addresses: string[]
  try {
    addresses = literal ? [host] : await (opts.resolve ?? systemResolver)(host)
  } catch (err) {
    return { ok: false, reason: 'unresolvable', detail: `${host}: ${err instanceof Error ? err.message : String(err)}` }
  }
  const refused = addresses.filter((a) => !(opts.addressAllowed ?? isPublicAddress)(a))
  if (addresses.length === 0 || refused.length > 0) {
    return { ok: false, reason: 'private_address', detail: `${host} resolves to ${refused.join(', ') || 'no address'}` }
  }
  return { ok: true, url: parsed, addresses: literal ? null : addresses }
}

/**
 * Checks a URL against the rule: http(s) (https only with `httpsOnly`), then either a host of `allowedHosts` or a
 * host whose every address is public. The verdict's detail is for the log; callers choose what a response says.
 */
export async function checkOutboundUrl(url: string, opts: OutboundOptions = {}): Promise<OutboundVerdict> {
  const checked = await check(url, opts)
  return checked.ok ? { ok: true } : checked
}

/** A request pinnedFetch did not send: its address broke the rule when it was about to connect. */
export class OutboundRefused extends Error {
  constructor(readonly verdict: Extract<OutboundVerdict, { ok: false }>) {
    super(`outbound address refused (${verdict.reason}): ${verdict.detail}`)
    this.name = 'OutboundRefused'
  }
}

/** Connection failures after which the next address of the name is tried (nothing was sent). */
const NOT_CONNECTED = /^(ConnectionRefused|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|HostUnreachable|NetworkUnreachable)$/

/** A body a second attempt can send again (a stream cannot be read twice). */
const replayable = (body: BodyInit | null | undefined) => body == null || typeof body === 'string' || body instanceof ArrayBuffer ||
  ArrayBuffer.isView(body) || body instanceof URLSearchParams || body instanceof Blob

/**
 * fetch under the rule, with the address pinned: the URL's host is resolved and checked once, and the request goes
 * to the addresses checked (IPv4 first, the next one only when the connection was refused or had no route), with
 * the name in its Host header and as the TLS server name, so the certificate is verified for the name as usual. An
 * allowed host, or a URL naming an address, goes as it is. Throws OutboundRefused, without connecting, when the
 * rule refuses the address; fetch's own errors otherwise.
 */
export async function pinnedFetch(input: string | URL | Request, init: BunFetchRequestInit = {}, opts: OutboundOptions = {}): Promise<Response> {
  const request = input instanceof Request ? input : null
  const checked = await check(request ? request.url : String(input), opts)
  if (!checked.ok) throw new OutboundRefused(checked)
  if (checked.addresses === null) return fetch(input, init)
  const { url } = checked
  const headers = new Headers(init.headers ?? request?.headers)
  headers.set('host', url.host)
  const base: BunFetchRequestInit = request
    ? { method: request.method, body: request.body, signal: request.signal, redirect: request.redirect, ...init, headers }
    : { ...init, headers }
  if (url.protocol === 'https:') base.tls = { ...init.tls, serverName: comparableHost(url.hostname) }
  const addresses = [...checked.addresses].sort((a, b) => Number(a.includes(':')) - Number(b.includes(':')))
  for (let i = 0; ; i++) {
    const target = new URL(url.href)
    target.hostname = addresses[i]!.includes(':') ? `[${addresses[i]}]` : addresses[i]!
    try {
      return await fetch(target, base)
    } catch (err) {
      const code = (err as { code?: unknown }).code
      const retry = i + 1 < addresses.length && typeof code === 'string' && NOT_CONNECTED.test(code) && replayable(base.body)
      if (!retry) throw err
    }
  }
}

// The client address behind a request (RUNTIME.md, TRUST_PROXY): rate limits, audit entries and sessions use it.
// Without a trusted proxy it is the socket address. Behind one, X-Forwarded-For is read from the right, because
// each proxy appends the address it saw and only the entries our own proxies wrote can be believed; the leftmost
// entry is whatever the client sent. A value that is not an IP address is never taken.
import ipaddr from 'ipaddr.js'

/** The socket address of a request, or how to ask the server for it (when first needed). */
const SOCKET = Symbol('socket address')
/**
 * The answer of clientAddress for a request and trust: the rate rule, the session check and the request log line each
 * ask for it, and parsing an address (IPv6 above all) was a visible share of a cheap request (scripts/bench/http.ts).
 */
const ANSWERED = Symbol('client address')
/**
 * Both are kept on the request itself: a WeakMap entry per request cost about 0.3 us more to set and read, and the
 * collector's work for each dead entry besides.
 */
type Marked = Request & {
  [SOCKET]?: string | (() => string | null | undefined)
  [ANSWERED]?: { trust: ProxyTrust; address: string }
}

/**
 * The server records the socket address of each request before the apps see it: the address, or a function that
 * asks the server for it (Bun's requestIP is a visible share of a cheap request, and behind a trusted proxy that
 * names the client it is never needed). The function must be called while the request is being answered.
 */
export function rememberSocketAddress(request: Request, address: string | (() => string | null | undefined) | null | undefined): void {
  const marked = request as Marked
  marked[ANSWERED] = undefined
  if (address) marked[SOCKET] = address
}

/** The socket address (asked of the server now if it was not handed over); clientAddress keeps what it answers. */
function socketOf(request: Request): string {
  const address = (request as Marked)[SOCKET]
  return normaliseIp(typeof address === 'function' ? address() : address) ?? '127.0.0.1'
}

/** How far to trust X-Forwarded-For: not at all, a number of proxy hops, or the proxies named by address range. */
export type ProxyTrust = { hops: number } | { proxies: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> } | null

/** An IP address in its canonical text (IPv4-mapped IPv6 as IPv4), or null for anything else. */
export function normaliseIp(value: string | null | undefined): string | null {
  const text = value?.trim()
  if (!text) return null
  // Dotted decimal without leading zeros is already canonical: what ipaddr would answer, without parsing it.
  if (CANONICAL_IPV4.test(text)) return text
  try {
    // What ipaddr.process does, parsed once: isValid and parse each parsed the text again. Only an IPv6 address has a
    // ':', only an IPv4 one has none; each parse throws for anything that is not an address of its kind.
    if (!text.includes(':')) return ipaddr.IPv4.parse(text).toString()
    const address = ipaddr.IPv6.parse(text)
    return address.isIPv4MappedAddress() ? address.toIPv4Address().toString() : canonical(address)
  } catch {
    return null
  }
}

/**
 * ipaddr's toString of an IPv6 address, written here without its regular expressions: the RFC 5952 form (lower-case
 * hex without leading zeros, the longest run of two or more zero groups as `::`, the leftmost of equal runs, then the
 * zone). With the single parse, normalising an IPv6 address takes about half the time it did, an IPv4 one a twentieth.
 */
function canonical(address: ipaddr.IPv6): string {
  const { parts, zoneId } = address
  let runAt = -1
  let runLength = 1
  for (let i = 0; i < parts.length;) {
    if (parts[i] !== 0) {
      i++
      continue
    }
    let end = i
    while (end < parts.length && parts[end] === 0) end++
    if (end - i > runLength) [runAt, runLength] = [i, end - i]
    i = end
  }
  const hex = (from: number, to: number) => parts.slice(from, to).map((p) => p.toString(16)).join(':')
  const text = runAt < 0 ? hex(0, parts.length) : `${hex(0, runAt)}::${hex(runAt + runLength, parts.length)}`
  return zoneId ? `${text}%${zoneId}` : text
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)'
const CANONICAL_IPV4 = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`)

const within = (address: string, proxies: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>) => {
  const ip = ipaddr.process(address)
  return proxies.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits))
}

export function clientAddress(request: Request, trust: ProxyTrust): string {
  const marked = request as Marked
  const known = marked[ANSWERED]
  if (known?.trust === trust) return known.address
  const address = addressOf(request, trust)
  marked[ANSWERED] = { trust, address }
  return address
}

/** The entries of an X-Forwarded-For header, left to right, without empty ones (none for a request without it). */
function forwardedChain(header: string | null): string[] {
  if (header === null) return []
  if (!header.includes(',')) {
    const entry = header.trim()
    return entry ? [entry] : []
  }
  return header.split(',').map((s) => s.trim()).filter(Boolean)
}

function addressOf(request: Request, trust: ProxyTrust): string {
  if (!trust) return socketOf(request)
  const chain = forwardedChain(request.headers.get('x-forwarded-for'))
  if ('hops' in trust) {
    // With n proxies in front, the n-th entry from the right is what the outermost of them saw.
    const seen = chain.length > 0 ? chain[Math.max(0, chain.length - trust.hops)] : request.headers.get('x-real-ip')
    return normaliseIp(seen) ?? socketOf(request)
  }
  // Only a request that came through one of the named proxies carries a header worth reading; then the first
  // entry from the right that is not one of them is the client.
  const socket = socketOf(request)
  if (!within(socket, trust.proxies)) return socket
  const seen = [...chain].reverse().find((entry) => normaliseIp(entry) === null || !within(normaliseIp(entry)!, trust.proxies))
  return normaliseIp(seen) ?? socket
}

// The client address behind a request (RUNTIME.md, TRUST_PROXY): rate limits, audit entries and sessions use it.
// Without a trusted proxy it is the socket address. Behind one, X-Forwarded-For is read from the right, because
// each proxy appends the address it saw and only the entries our own proxies wrote can be believed; the leftmost
// entry is whatever the client sent. A value that is not an IP address is never taken.
import ipaddr from 'ipaddr.js'

const socketAddress = new WeakMap<Request, string>()

/** The server records the socket address of each request before the apps see it. */
export function rememberSocketAddress(request: Request, address: string | null | undefined): void {
  if (address) socketAddress.set(request, address)
}

/** How far to trust X-Forwarded-For: not at all, a number of proxy hops, or the proxies named by address range. */
export type ProxyTrust = { hops: number } | { proxies: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> } | null

/** An IP address in its canonical text (IPv4-mapped IPv6 as IPv4), or null for anything else. */
export function normaliseIp(value: string | null | undefined): string | null {
  const text = value?.trim()
  if (!text || !ipaddr.isValid(text)) return null
  return ipaddr.process(text).toString()
}

const within = (address: string, proxies: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>) => {
  const ip = ipaddr.process(address)
  return proxies.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits))
}

export function clientAddress(request: Request, trust: ProxyTrust): string {
  const socket = normaliseIp(socketAddress.get(request)) ?? '127.0.0.1'
  if (!trust) return socket
  const chain = (request.headers.get('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  let seen: string | undefined
  if ('hops' in trust) {
    // With n proxies in front, the n-th entry from the right is what the outermost of them saw.
    seen = chain.length > 0 ? chain[Math.max(0, chain.length - trust.hops)] : request.headers.get('x-real-ip') ?? undefined
  } else {
    // Only a request that came through one of the named proxies carries a header worth reading; then the first
    // entry from the right that is not one of them is the client.
    if (!within(socket, trust.proxies)) return socket
    seen = [...chain].reverse().find((entry) => normaliseIp(entry) === null || !within(normaliseIp(entry)!, trust.proxies))
  }
  return normaliseIp(seen) ?? socket
}

// The client address behind a proxy (src/auth/client-address.ts, TRUST_PROXY): X-Forwarded-For is read from the
// right, where the entries our own proxies appended are, so the leftmost entries a client writes itself change
// nothing; a value that is not an IP address is never taken.
import { describe, expect, it } from 'bun:test'
import { clientAddress, rememberSocketAddress, type ProxyTrust } from '../src/auth/client-address'
import { loadConfig } from '../src/config'

const request = (socket: string, forwarded?: string, realIp?: string) => {
  const headers = new Headers()
  if (forwarded !== undefined) headers.set('x-forwarded-for', forwarded)
  if (realIp !== undefined) headers.set('x-real-ip', realIp)
  const r = new Request('http://localhost/api/x', { headers })
  rememberSocketAddress(r, socket)
  return r
}
const trustOf = (value: string): ProxyTrust => loadConfig({ DATA_DIR: '/tmp', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEY: '0'.repeat(64), TRUST_PROXY: value }).trustProxy

describe('client address', () => {
  it('without TRUST_PROXY it is the socket address, whatever the headers say', () => {
    expect(clientAddress(request('192.0.2.7', '203.0.113.9'), trustOf('false'))).toBe('192.0.2.7')
  })

  it('behind one appending proxy, a forged leftmost entry is ignored: the entry the proxy appended counts', () => {
    const one = trustOf('true')
    expect(clientAddress(request('10.0.0.2', '203.0.113.9'), one)).toBe('203.0.113.9')
    // the client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the address it saw
    expect(clientAddress(request('10.0.0.2', '1.1.1.1, 203.0.113.9'), one)).toBe('203.0.113.9')
  })

  it('behind two proxies (TRUST_PROXY=2), the second entry from the right is the client', () => {
    expect(clientAddress(request('10.0.0.3', '6.6.6.6, 203.0.113.9, 10.0.0.2'), trustOf('2'))).toBe('203.0.113.9')
  })

  it('with named proxies, entries of those ranges are skipped from the right, and only a request from one of them is believed', () => {
    const named = trustOf('10.0.0.0/8, 192.168.1.1')
    expect(clientAddress(request('10.0.0.3', '6.6.6.6, 203.0.113.9, 192.168.1.1, 10.1.2.3'), named)).toBe('203.0.113.9')
    expect(clientAddress(request('198.51.100.1', '203.0.113.9'), named)).toBe('198.51.100.1')
  })

  it('an empty, blank or padded header, or empty entries, read as the entries there are', () => {
    const one = trustOf('true')
    expect(clientAddress(request('10.0.0.2'), one)).toBe('10.0.0.2')
    expect(clientAddress(request('10.0.0.2', ''), one)).toBe('10.0.0.2')
    expect(clientAddress(request('10.0.0.2', '   '), one)).toBe('10.0.0.2')
    expect(clientAddress(request('10.0.0.2', ' 203.0.113.9 '), one)).toBe('203.0.113.9')
    expect(clientAddress(request('10.0.0.2', '198.51.100.4, 203.0.113.9, '), one)).toBe('203.0.113.9')
    expect(clientAddress(request('10.0.0.2', '198.51.100.4,,203.0.113.9'), trustOf('2'))).toBe('198.51.100.4')
    // Without the header, X-Real-IP (one proxy that sets it) is the client.
    expect(clientAddress(request('10.0.0.2', undefined, '203.0.113.5'), one)).toBe('203.0.113.5')
  })

  it('a value that is not an IP address is refused: the socket address stands', () => {
    const one = trustOf('true')
    expect(clientAddress(request('10.0.0.2', "10.9.9.9' or '1'='1"), one)).toBe('10.0.0.2')
    expect(clientAddress(request('10.0.0.2', 'unknown'), one)).toBe('10.0.0.2')
    expect(clientAddress(request('10.0.0.2', undefined, '<script>'), one)).toBe('10.0.0.2')
  })

  it('IPv4-mapped IPv6 addresses are written as IPv4, so one client keeps one address', () => {
    expect(clientAddress(request('::ffff:10.0.0.2', '::ffff:203.0.113.9'), trustOf('true'))).toBe('203.0.113.9')
    expect(clientAddress(request('::ffff:192.0.2.7'), null)).toBe('192.0.2.7')
  })
})

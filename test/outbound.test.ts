// src/core/outbound.ts: the one address rule of outbound calls an admin or a configuration names (identity
// provider, AI gateway, file server), its operator allow-list and AI_ALLOWED_HOSTS in the config, and pinnedFetch,
// which connects to the addresses the rule checked.
import { describe, expect, it } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config'
import { join } from 'node:path'
import { allowedHostOf, checkOutboundUrl, OutboundRefused, parseAllowedHost, pinnedFetch, type Resolver } from '../src/core/outbound'

/** A resolver answering from a table (names it does not know fail like a lookup does). */
const table = (entries: Record<string, string[]>): Resolver => async (host) => {
  const found = entries[host]
  if (!found) throw new Error(`getaddrinfo ENOTFOUND ${host}`)
  return found
}

describe('outbound address rule', () => {
  it.each([
    'http://127.0.0.1:4000/v1', 'http://127.1:4000/v1', 'http://0x7f000001/v1', 'http://2130706433/v1', 'http://0177.0.0.1/v1',
    'http://[::1]/v1', 'http://[::ffff:127.0.0.1]/v1', 'http://[0:0:0:0:0:ffff:7f00:1]/v1', 'http://localhost/v1', 'http://LOCALHOST./v1',
    'http://10.0.0.1/v1', 'http://192.168.1.20/v1', 'http://172.16.0.1/v1', 'http://169.254.169.254/latest/meta-data/',
    'http://[fe80::1]/v1', 'http://[fd00:ec2::254]/v1', 'http://[fc00::1]/v1', 'http://224.0.0.1/v1', 'http://[ff02::1]/v1',
    'http://0.0.0.0/v1', 'http://[::]/v1', 'http://100.64.0.1/v1', 'http://168.63.129.16/v1', 'http://100.100.100.200/v1',
  ])('refuses %s', async (url) => {
    const verdict = await checkOutboundUrl(url, { resolve: table({ localhost: ['127.0.0.1', '::1'] }) })
    expect(verdict).toMatchObject({ ok: false, reason: 'private_address' })
  })

  it('a name passes only when every address it resolves to is public', async () => {
    const resolve = table({ 'api.example.org': ['8.8.8.8', '2001:4860:4860::8888'], 'mixed.example.org': ['8.8.8.8', '10.0.0.7'], 'empty.example.org': [] })
    expect(await checkOutboundUrl('https://api.example.org/v1', { resolve })).toEqual({ ok: true })
    expect(await checkOutboundUrl('https://mixed.example.org/v1', { resolve })).toMatchObject({ ok: false, reason: 'private_address' })
    expect(await checkOutboundUrl('https://empty.example.org/v1', { resolve })).toMatchObject({ ok: false, reason: 'private_address' })
    expect(await checkOutboundUrl('https://nowhere.example.org/v1', { resolve })).toMatchObject({ ok: false, reason: 'unresolvable' })
    expect(await checkOutboundUrl('https://8.8.8.8/v1')).toEqual({ ok: true })
  })

  it('the allow-list lets a named host through whatever it resolves to: any port, or only the port named', async () => {
    const resolve = table({ 'gateway.internal': ['10.0.0.5'] })
    const allowedHosts = [parseAllowedHost('gateway.internal')!, parseAllowedHost('127.0.0.1:4000')!, parseAllowedHost('[::1]:8080')!]
    expect(await checkOutboundUrl('http://gateway.internal:9999/v1', { allowedHosts, resolve })).toEqual({ ok: true })
    expect(await checkOutboundUrl('http://GATEWAY.INTERNAL./v1', { allowedHosts, resolve })).toEqual({ ok: true })
    expect(await checkOutboundUrl('http://127.0.0.1:4000/v1', { allowedHosts })).toEqual({ ok: true })
    expect(await checkOutboundUrl('http://127.1:4000/v1', { allowedHosts })).toEqual({ ok: true })
    expect(await checkOutboundUrl('http://127.0.0.1:4001/v1', { allowedHosts })).toMatchObject({ ok: false, reason: 'private_address' })
    expect(await checkOutboundUrl('http://[::1]:8080/v1', { allowedHosts })).toEqual({ ok: true })
    expect(await checkOutboundUrl('http://[::1]:8081/v1', { allowedHosts })).toMatchObject({ ok: false })
    // an operator's own gateway URL allows exactly its host and port (default ports included)
    expect(allowedHostOf('http://localhost:4000/v1')).toEqual({ host: 'localhost', port: 4000 })
    expect(allowedHostOf('https://gateway.example.org/v1')).toEqual({ host: 'gateway.example.org', port: 443 })
    expect(allowedHostOf('http://[::1]/v1')).toEqual({ host: '::1', port: 80 })
  })

  it('only http(s), and only https where asked', async () => {
    expect(await checkOutboundUrl('ftp://8.8.8.8/')).toMatchObject({ ok: false, reason: 'invalid_url' })
    expect(await checkOutboundUrl('file:///etc/passwd')).toMatchObject({ ok: false, reason: 'invalid_url' })
    expect(await checkOutboundUrl('not a url')).toMatchObject({ ok: false, reason: 'invalid_url' })
    expect(await checkOutboundUrl('http://8.8.8.8/', { httpsOnly: true })).toMatchObject({ ok: false, reason: 'not_https' })
  })

  it.each([
    ['gateway.internal', { host: 'gateway.internal', port: null }],
    ['Gateway.Internal:4000', { host: 'gateway.internal', port: 4000 }],
    ['10.0.0.5:4000', { host: '10.0.0.5', port: 4000 }],
    ['127.1', { host: '127.0.0.1', port: null }],
    ['[fd00::5]:4000', { host: 'fd00::5', port: 4000 }],
    ['::1', { host: '::1', port: null }],
    ['http://gateway.internal', null], ['gateway.internal/v1', null], ['host:0', null], ['host:70000', null], ['user@host', null], ['', null],
  ])('allow-list entry %p', (entry, expected) => {
    expect(parseAllowedHost(entry)).toEqual(expected)
  })
})

describe('AI_ALLOWED_HOSTS', () => {
  const env = { DATA_DIR: '/tmp/unused', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEY: 'ab'.repeat(32) }
  it('is empty by default and reads comma-separated hosts and host:port pairs', () => {
    expect(loadConfig(env).aiAllowedHosts).toEqual([])
    expect(loadConfig({ ...env, AI_ALLOWED_HOSTS: 'gateway.internal, 10.0.0.5:4000,[fd00::5]:4000' }).aiAllowedHosts).toEqual([
      { host: 'gateway.internal', port: null }, { host: '10.0.0.5', port: 4000 }, { host: 'fd00::5', port: 4000 },
    ])
  })
  it('WEBDAV_ALLOWED_HOSTS is a list of its own, read the same way, and does not widen the AI list', () => {
    const config = loadConfig({ ...env, WEBDAV_ALLOWED_HOSTS: 'files.school.internal, 192.168.1.20:8443' })
    expect(config.webdavAllowedHosts).toEqual([{ host: 'files.school.internal', port: null }, { host: '192.168.1.20', port: 8443 }])
    expect(config.aiAllowedHosts).toEqual([])
    expect(() => loadConfig({ ...env, WEBDAV_ALLOWED_HOSTS: 'https://files.example/' })).toThrow(/WEBDAV_ALLOWED_HOSTS/)
  })
  it('refuses an entry that is not a host, naming it', () => {
    let problems: string[] = []
    try {
      loadConfig({ ...env, AI_ALLOWED_HOSTS: 'gateway.internal,http://evil.example/' })
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError)
      problems = (err as ConfigError).problems
    }
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('AI_ALLOWED_HOSTS')
    expect(problems[0]).toContain('http://evil.example/')
  })
})

describe('pinnedFetch: the connection goes to the addresses checked', () => {
  // Loopback addresses stand in for public ones (addressAllowed); 127.0.0.1 stays refused, as a private target would be.
  const PINNED = '127.0.0.2'
  const addressAllowed = (address: string) => address === PINNED || address === '127.0.0.3'
  const counting = (answers: string[][]) => {
    const calls: string[] = []
    const resolve: Resolver = async (host) => {
      calls.push(host)
      return answers[Math.min(calls.length, answers.length) - 1]!
    }
    return { calls, resolve }
  }
  const echo = (name: string) => (r: Request) => new Response(`${name} host=${r.headers.get('host')} path=${new URL(r.url).pathname}`)

  it('resolves once and sends to the address it checked, with the name in Host; a later answer does not move it', async () => {
    const server = Bun.serve({ hostname: PINNED, port: 0, fetch: echo('pinned') })
    let trapped = 0
    const trap = Bun.serve({ hostname: '127.0.0.1', port: server.port, fetch: () => (trapped++, new Response('trap')) })
    try {
      // The name answers the checked address first, then a private one (DNS rebinding): the second is never asked for.
      const { calls, resolve } = counting([[PINNED], ['127.0.0.1']])
      const res = await pinnedFetch(`http://gw.example.test:${server.port}/v1/models?x=1`, { headers: { accept: 'application/json' } }, { resolve, addressAllowed })
      expect(await res.text()).toBe(`pinned host=gw.example.test:${server.port} path=/v1/models`)
      expect(calls).toEqual(['gw.example.test'])
      expect(trapped).toBe(0)
    } finally {
      await server.stop(true)
      await trap.stop(true)
    }
  })

  it('refuses, without connecting, a name that resolves to an address the rule refuses', async () => {
    let hits = 0
    const trap = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => (hits++, new Response('trap')) })
    try {
      const { resolve } = counting([['127.0.0.1']])
      const err = await pinnedFetch(`http://gw.example.test:${trap.port}/`, {}, { resolve, addressAllowed }).then(() => null, (e: unknown) => e)
      expect(err).toBeInstanceOf(OutboundRefused)
      expect((err as OutboundRefused).verdict).toMatchObject({ ok: false, reason: 'private_address' })
      const direct = await pinnedFetch(`http://127.0.0.1:${trap.port}/`).then(() => null, (e: unknown) => e)
      expect(direct).toBeInstanceOf(OutboundRefused)
      expect(hits).toBe(0)
    } finally {
      await trap.stop(true)
    }
  })

  it('https: the certificate is verified for the name, not for the address connected to', async () => {
    const cert = await Bun.file(join(import.meta.dir, 'support/tls/gw.example.test.crt')).text()
    const key = await Bun.file(join(import.meta.dir, 'support/tls/gw.example.test.key')).text()
    const server = Bun.serve({ hostname: PINNED, port: 0, tls: { cert, key }, fetch: echo('tls') })
    try {
      const { resolve } = counting([[PINNED]])
      const res = await pinnedFetch(`https://gw.example.test:${server.port}/x`, { tls: { ca: cert } }, { resolve, addressAllowed })
      expect(await res.text()).toBe(`tls host=gw.example.test:${server.port} path=/x`)
      // Another name on the same address: its certificate does not carry that name.
      const other = await pinnedFetch(`https://other.example.test:${server.port}/x`, { tls: { ca: cert } }, { resolve, addressAllowed })
        .then(() => null, (e: unknown) => e)
      expect(String((other as { code?: unknown })?.code ?? other)).toContain('ALTNAME')
    } finally {
      await server.stop(true)
    }
  })

  it('tries the next address checked when the first refuses the connection (IPv4 first)', async () => {
    const server = Bun.serve({ hostname: PINNED, port: 0, fetch: echo('second') })
    try {
      const { resolve } = counting([['127.0.0.3', PINNED]])
      const res = await pinnedFetch(`http://gw.example.test:${server.port}/`, { method: 'POST', body: 'again' }, { resolve, addressAllowed })
      expect(await res.text()).toBe(`second host=gw.example.test:${server.port} path=/`)
    } finally {
      await server.stop(true)
    }
  })

  it('an allowed host goes as it is, unresolved by the rule', async () => {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: echo('allowed') })
    try {
      const resolve: Resolver = async () => {
        throw new Error('not to be resolved')
      }
      const res = await pinnedFetch(`http://localhost:${server.port}/`, {}, { resolve, allowedHosts: [{ host: 'localhost', port: server.port ?? null }] })
      expect(await res.text()).toBe(`allowed host=localhost:${server.port} path=/`)
    } finally {
      await server.stop(true)
    }
  })
})

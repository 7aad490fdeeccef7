// requestPath reads a server request's path off its URL as new URL(url).pathname would, without parsing it again.
import { describe, expect, it } from 'bun:test'
import { pathOf, requestPath } from '../src/core/request-url'

describe('requestPath', () => {
  it('gives what new URL(url).pathname gives for absolute URLs', () => {
    for (const url of [
      'http://h/', 'http://h', 'http://h:8080/a/b?c=/d#e', 'https://h/a#b?c', 'http://[::1]:80/x/y/', 'http://h/%C3%A4?x',
      'http://h//a//b', 'http://h?x', 'http://h#x', 'http://h#x/y', 'http://h?x/y', 'ws://h/p?q', 'http://h/a?',
    ]) {
      expect([url, requestPath(url)]).toEqual([url, new URL(url).pathname])
    }
  })

  it('answers null for a URL that is not absolute (Bun hands over the bare target for a bad Host header)', () => {
    expect(requestPath('/p')).toBeNull()
    expect(requestPath('/p://x')).toBeNull()
    expect(requestPath('')).toBeNull()
    expect(pathOf(new Request('http://h.example/quiz/api/auth/me?x=1'))).toBe('/quiz/api/auth/me')
  })

  it('pathOf a bare target is the target without its query or fragment (a log line never carries a query)', () => {
    const bare = (url: string) => ({ url }) as Request
    expect(pathOf(bare('/api/auth/verify?token=secret'))).toBe('/api/auth/verify')
    expect(pathOf(bare('/a#b?c'))).toBe('/a')
    expect(pathOf(bare('?x'))).toBe('/')
    expect(pathOf(bare('*'))).toBe('*')
  })
})

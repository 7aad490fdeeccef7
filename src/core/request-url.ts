// The path of a request, read off the URL Bun hands a server's handler without parsing it again.

/**
 * The path of a server request's URL, as `new URL(url).pathname` gives it: Bun builds that URL from the request line
 * and the Host header and normalises it (dot segments resolved, characters percent-encoded), so the path is the text
 * from the first "/" after the authority up to "?" or "#". null when the URL is not absolute: Bun hands over the bare
 * request target when the Host header cannot be part of a URL ("a/b", "x?y", "user@h", empty), where
 * `new URL(request.url)` throws.
 */
export function requestPath(url: string): string | null {
  const authority = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : -1
  if (authority === -1) return otherPath(url)
  let start = authority
  while (start < url.length && url[start] !== '/' && url[start] !== '?' && url[start] !== '#') start++
  if (url[start] !== '/') return '/'
  let end = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  if (end === -1 || (hash !== -1 && hash < end)) end = hash
  return end === -1 ? url.slice(start) : url.slice(start, end)
}

function otherPath(url: string): string | null {
  try {
    return new URL(url).pathname
  } catch {
    return null
  }
}

/** Where a request keeps its path once read: a request's URL never changes, and the envelope asks for it several times. */
const PATH = Symbol('path')
type WithPath = Request & { [PATH]?: string }

/** requestPath of a request's URL, read once per request (each read of `request.url` makes a new string). */
export function requestPathOf(request: Request): string | null {
  const known = (request as WithPath)[PATH]
  if (known !== undefined) return known
  const path = requestPath(request.url)
  if (path !== null) (request as WithPath)[PATH] = path
  return path
}

/** The path of a request (see requestPath); of a URL that is not absolute, the text before its query or fragment. */
export const pathOf = (request: Request): string => requestPathOf(request) ?? (request.url.split(/[?#]/, 1)[0] || '/')

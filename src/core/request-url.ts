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

/** The path of a request (see requestPath); of a URL that is not absolute, the text before its query or fragment. */
export const pathOf = (request: Request): string => requestPath(request.url) ?? (request.url.split(/[?#]/, 1)[0] || '/')

// The client address behind a request: the socket address the server saw, or the first X-Forwarded-For
// entry when TRUST_PROXY=true (RUNTIME.md). Rate limits, audit entries and sessions use it.
const socketAddress = new WeakMap<Request, string>()

/** The server records the socket address of each request before the apps see it. */
export function rememberSocketAddress(request: Request, address: string | null | undefined): void {
  if (address) socketAddress.set(request, address)
}

export function clientAddress(request: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim()
    if (forwarded) return forwarded.slice(0, 64)
    const real = request.headers.get('x-real-ip')?.trim()
    if (real) return real.slice(0, 64)
  }
  return socketAddress.get(request) ?? '127.0.0.1'
}

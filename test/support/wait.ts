// Polls until a probe gives a value: for background work (job workers, batched writers) a test cannot await.
export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
}

/**
 * What a promise rejected with; fails if it resolved. Tests use `expect(await rejection(p))` rather than
 * `expect(p).rejects`: bun:test's matcher does not see a promise settled by a Worker's reply (the embedded
 * database thread answers every query that way) and waits until the test times out (oven-sh/bun#43819).
 */
export async function rejection(promise: Promise<unknown>): Promise<Error & { [field: string]: any }> {
  let value: unknown
  try {
    value = await promise
  } catch (err) {
    return err as Error & { [field: string]: any }
  }
  throw new Error(`expected a rejection, the promise resolved with ${JSON.stringify(value)?.slice(0, 200)}`)
}

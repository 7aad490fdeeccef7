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

// Oversized bodies from outside: ten connections at once each stream a 45 MiB chunked body (no Content-Length)
// at the sign-in route, whose limit is 64 KiB, against the real server on the embedded database. Prints how
// many were refused with 413, how much each had sent when refused, the time to refuse, and the server's
// resident memory before, at its peak during, and after the attack. Run: bun scripts/bench/oversize-bodies.ts
import { freshDataDir, rssMb, spawnServer } from './support'

const CONNECTIONS = 10
const BODY_BYTES = 45 * 1024 * 1024
const CHUNK_BYTES = 64 * 1024

const server = await spawnServer({
  cmd: [process.execPath, 'src/main.ts'],
  env: { DATA_DIR: freshDataDir('bench-oversize'), DATABASE_URL: 'memory://', WORKERS: '0' },
  readyPath: '/api/health',
})
const pid = server.proc.pid
const before = rssMb(pid)
let peak = before
const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20)

async function attack(n: number) {
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= BODY_BYTES) return controller.close()
      sent += CHUNK_BYTES
      controller.enqueue(new Uint8Array(CHUNK_BYTES).fill(0x61))
    },
  })
  const started = performance.now()
  const res = await fetch(`http://127.0.0.1:${server.port}/api/auth/login`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.0.${n}` }, duplex: 'half',
  } as RequestInit).catch((err: Error) => ({ status: `error: ${err.message}` }))
  return { status: res.status, sentMb: sent / 1024 / 1024, ms: performance.now() - started }
}

const results = await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => attack(n)))
await Bun.sleep(500)
clearInterval(sampler)
const after = rssMb(pid)
await server.stop()

const refused = results.filter((r) => r.status === 413).length
console.log(`${CONNECTIONS} chunked bodies of ${BODY_BYTES / 1024 / 1024} MiB at /api/auth/login (limit 64 KiB)`)
console.log(`  refused with 413: ${refused}/${CONNECTIONS}; other answers: ${JSON.stringify(results.filter((r) => r.status !== 413).map((r) => r.status))}`)
console.log(`  sent before the answer: max ${Math.max(...results.map((r) => r.sentMb)).toFixed(1)} MiB; time to refuse: max ${Math.max(...results.map((r) => r.ms)).toFixed(0)} ms`)
console.log(`  server RSS: before ${before.toFixed(0)} MB, peak ${peak.toFixed(0)} MB (+${(peak - before).toFixed(0)}), after ${after.toFixed(0)} MB`)

// Dictation uploads at the limit: UPLOADS (default 20) parallel POST /api/transcribe of a 25 MB WAV each against the
// real server (`bun src/main.ts`, a child process) whose AI gateway is the project's OpenAI-compatible test server
// (a second child process, so neither its memory nor its work is the server's or this client's). The multipart body
// is encoded once and sent by every upload with its Content-Length. Prints the answers, the time, and the server's
// resident memory before, at its peak (VmHWM, reset before the uploads through /proc/<pid>/clear_refs) and after,
// with the peak's growth as a multiple of the bytes uploaded at once: the server should hold each file about once.
// Settings: UPLOADS=20, SIZE_MB=25 (MiB; at most 25), ROUNDS=1, DATABASE=postgres|pglite (default: postgres when
// BENCH_DATABASE_URL's server answers, else the embedded one). Run: bun scripts/bench/uploads.ts
import { readFileSync, writeFileSync } from 'node:fs'
import { startAiServer } from '../../test/support/ai-server'
import { TRANSCRIBE_MAX_BYTES } from '../../plugins/clinical/models/speech'
import { freshDataDir, freshServerDatabase, median, redact, rssMb, serverAvailable, spawnServer } from './support'

const UPLOADS = Number(process.env.UPLOADS ?? 20)
const FILE_BYTES = Math.min(TRANSCRIBE_MAX_BYTES, Math.round(Number(process.env.SIZE_MB ?? 25) * 1024 * 1024))
const ROUNDS = Number(process.env.ROUNDS ?? 1)
const SAMPLE_RATE = 16_000

/** A PCM WAV (16-bit mono) of exactly `bytes` bytes, silent: a real recording's header, so the length is read from it. */
function wavOf(bytes: number): Uint8Array {
  const out = new Uint8Array(bytes)
  const view = new DataView(out.buffer)
  const ascii = (at: number, s: string) => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)))
  ascii(0, 'RIFF'); view.setUint32(4, bytes - 8, true); ascii(8, 'WAVE'); ascii(12, 'fmt ')
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true)
  view.setUint32(24, SAMPLE_RATE, true); view.setUint32(28, SAMPLE_RATE * 2, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true)
  ascii(36, 'data'); view.setUint32(40, bytes - 44, true)
  return out
}

/** The kernel's peak resident set of a process (VmHWM) in MB. */
const peakMb = (pid: number) => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
/** Sets VmHWM back to the current RSS (Linux: writing 5 to clear_refs); false where that is not allowed. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

// The gateway runs in a child process of its own (this file again, BENCH_ROLE=gateway): parsing 20 uploads there
// must compete neither with the server's memory figures nor with this process sending them.
if (process.env.BENCH_ROLE === 'gateway') {
  const gateway = await startAiServer({ transcript: 'Three days of cough and fever.' })
  console.log(JSON.stringify(gateway.env))
  process.on('SIGTERM', () => void gateway.close().then(() => process.exit(0)))
  await new Promise(() => {})
}

async function startGateway(): Promise<{ env: Record<string, string>; stop(): void }> {
  const proc = Bun.spawn([process.execPath, import.meta.path], { env: { ...process.env, BENCH_ROLE: 'gateway' }, stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error('the gateway process ended before it was ready')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { env: JSON.parse(text.split('\n')[0]!), stop: () => proc.kill('SIGTERM') }
}

const usePostgres = process.env.DATABASE ? process.env.DATABASE === 'postgres' : await serverAvailable()
const database = usePostgres ? await freshServerDatabase('bench_uploads') : null
const ai = await startGateway()
const server = await spawnServer({
  cmd: [process.execPath, 'src/main.ts'],
  env: {
    DATA_DIR: freshDataDir('bench-uploads'), DATABASE_URL: database?.url ?? 'memory://', WORKERS: '0',
    ...ai.env, STT_MODEL: 'whisper-bench',
  },
  readyPath: '/api/health',
})
const base = `http://127.0.0.1:${server.port}`
const pid = server.proc.pid

try {
  // The first account of a server without mail is an admin, verified and signed in at once.
  const registered = await fetch(`${base}/api/auth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'mobile' },
    body: JSON.stringify({ name: 'Bench Clinician', email: 'bench@example.test', password: 'Correct-horse-battery-9' }),
  })
  const { token } = (await registered.json()) as { token?: string }
  if (!token) throw new Error(`register answered ${registered.status} without a token`)

  // The multipart body is encoded once; every upload sends the same bytes.
  const form = new FormData()
  form.append('audio', new File([wavOf(FILE_BYTES) as Uint8Array<ArrayBuffer>], 'dictation.wav', { type: 'audio/wav' }))
  const encoded = new Response(form)
  const contentType = encoded.headers.get('content-type')!
  const multipart = new Uint8Array(await encoded.arrayBuffer())
  const upload = async () => {
    const started = performance.now()
    try {
      const res = await fetch(`${base}/api/transcribe`, {
        method: 'POST', body: multipart, headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      })
      const body = (await res.json().catch(() => null)) as { duration?: number } | null
      return { status: String(res.status), duration: body?.duration, ms: performance.now() - started }
    } catch (err) {
      // The server closed the connection (e.g. Bun.serve's idle timeout while the upload waited to be read).
      return { status: (err as { code?: string }).code ?? 'error', duration: undefined, ms: performance.now() - started }
    }
  }

  // One upload first: the code paths (multipart, type sniffing, the audio parser) are loaded before the figures.
  const warm = await upload()
  if (warm.status !== '200') throw new Error(`warm-up upload answered ${warm.status}`)

  console.log(`${UPLOADS} parallel uploads of ${(FILE_BYTES / 1024 / 1024).toFixed(1)} MiB to POST /api/transcribe`
    + ` (${usePostgres ? `PostgreSQL ${redact(database!.url)}` : 'embedded PGlite'}; test gateway in its own process)`)
  for (let round = 1; round <= ROUNDS; round++) {
    await Bun.sleep(1000)
    const before = rssMb(pid)
    const exact = resetPeak(pid)
    let sampled = before
    const sampler = setInterval(() => (sampled = Math.max(sampled, rssMb(pid))), 10)
    const started = performance.now()
    const results = await Promise.all(Array.from({ length: UPLOADS }, upload)).finally(() => clearInterval(sampler))
    const wallMs = performance.now() - started
    const peak = exact ? peakMb(pid) : sampled
    await Bun.sleep(2000)
    const after = rssMb(pid)
    const statuses = Object.entries(results.reduce<Record<string, number>>((n, r) => ((n[r.status] = (n[r.status] ?? 0) + 1), n), {}))
    const uploadedMb = (UPLOADS * FILE_BYTES) / 1024 / 1024
    console.log(`round ${round}: answers ${statuses.map(([s, n]) => `${n}x ${s}`).join(', ')}; duration ${results.find((r) => r.duration)?.duration} s`)
    if (results.some((r) => r.status === 'ECONNRESET')) {
      console.log('  (ECONNRESET: the server closed the connection; its log says whether Bun.serve\'s idle timeout did it)')
    }
    console.log(`  time: all ${wallMs.toFixed(0)} ms; per upload p50 ${median(results.map((r) => r.ms)).toFixed(0)} ms,`
      + ` max ${Math.max(...results.map((r) => r.ms)).toFixed(0)} ms`)
    console.log(`  server RSS: before ${before.toFixed(0)} MB, peak ${peak.toFixed(0)} MB${exact ? ' (VmHWM)' : ' (sampled every 10 ms)'},`
      + ` growth ${(peak - before).toFixed(0)} MB = ${((peak - before) / uploadedMb).toFixed(2)}x the ${uploadedMb.toFixed(0)} MiB uploaded;`
      + ` after ${after.toFixed(0)} MB`)
  }
} finally {
  await server.stop()
  ai.stop()
  await database?.drop()
}

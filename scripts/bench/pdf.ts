// PDF processing throughput and peak memory, for a PAGES-page text PDF made by test/support/pdf.ts:
//   - app: POST /quiz/api/documents/upload through the real app (boot() in this process, WORKERS=0, so the
//     processing job runs inside the request: the answer comes when the document is ready), pages/s from
//     upload to ready, the job's own stage times (read + extract, store + index), and the peak RSS of this
//     process during the upload above its RSS before it (VmHWM, reset through /proc/self/clear_refs);
//   - unpdf alone: getDocumentProxy + extractText on the same bytes in this process (the parsing part of the job);
//   - pdftotext (poppler) on the same file, under /usr/bin/time -v for its peak RSS (maximum resident set size).
// Each is repeated REPEAT times (median printed), the app on the embedded PGlite and, when the PostgreSQL server
// of BENCH_DATABASE_URL answers, on a fresh database of it. The embedder is the built-in local one.
//
//   bun scripts/bench/pdf.ts            (PAGES=300 REPEAT=3)
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { extractText, getDocumentProxy } from 'unpdf'
import { boot } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createLogger } from '../../src/core/log'
import { plugins } from '../../plugins'
import { makePdf, numberedPages } from '../../test/support/pdf'
import { freshDataDir, freshServerDatabase, median, redact, SERVER_URL, serverAvailable } from './support'

const PAGES = Number(process.env.PAGES ?? 300)
const REPEAT = Number(process.env.REPEAT ?? 3)
const PDFTOTEXT = '/usr/bin/pdftotext'
const TIME = '/usr/bin/time'

const statusKb = (field: 'VmRSS' | 'VmHWM') => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) : NaN
}
/** Runs fn and returns its result with this process's RSS before and its peak RSS during it, in MB. */
async function withPeak<T>(fn: () => Promise<T>): Promise<{ value: T; baseMb: number; peakMb: number }> {
  Bun.gc(true)
  writeFileSync('/proc/self/clear_refs', '5') // resets VmHWM to the current RSS
  const baseMb = statusKb('VmRSS') / 1024
  const value = await fn()
  return { value, baseMb, peakMb: statusKb('VmHWM') / 1024 }
}

interface Run { ms: number; baseMb: number; peakMb: number; stages?: { read: number; index: number; total: number } }

const fmt = (runs: Run[], pick: (r: Run) => number, digits = 0) =>
  `${median(runs.map(pick)).toFixed(digits)} [${runs.map((r) => pick(r).toFixed(digits)).join(', ')}]`

async function benchApp(target: 'pglite' | 'postgres', pdf: Uint8Array<ArrayBuffer>): Promise<Run[]> {
  const dataDir = freshDataDir('bench-pdf')
  const server = target === 'postgres' ? await freshServerDatabase('bench_pdf') : null
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: server?.url ?? 'memory://',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    DATA_ENCRYPTION_KEY: '0'.repeat(63) + '1',
    WORKERS: '0',
    LOG_LEVEL: 'warn',
    MAX_UPLOAD_SIZE: String(Math.max(52428800, pdf.length + 1)),
  })
  const booted = await boot(config, plugins, { log: createLogger('warn') })
  const call = (path: string, init: RequestInit = {}) => booted.fetch(new Request(`http://localhost/quiz/api${path}`, init))
  try {
    const reg = await call('/auth/register', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.test', password: 'bench-password-1', name: 'Bench' }),
    })
    const { access_token: token } = (await reg.json()) as { access_token: string }
    const auth = { authorization: `Bearer ${token}` }
    const runs: Run[] = []
    for (let i = 0; i <= REPEAT; i++) { // run 0 warms up (module loading, JIT) and is not counted
      const form = new FormData()
      form.append('file', new File([pdf], `bench-${i}.pdf`, { type: 'application/pdf' }))
      const started = performance.now()
      const { value: doc, baseMb, peakMb } = await withPeak(async () => {
        const res = await call('/documents/upload', { method: 'POST', body: form, headers: auth })
        if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${await res.text()}`)
        return (await res.json()) as { id: number }
      })
      const ms = performance.now() - started
      const status = (await (await call(`/documents/${doc.id}/status`, { headers: auth })).json()) as { status: string; total_pages: number }
      if (status.status !== 'ready' || status.total_pages !== PAGES) throw new Error(`document ${doc.id}: ${JSON.stringify(status)}`)
      const { steps } = (await (await call(`/documents/${doc.id}/processing-steps`, { headers: auth })).json()) as { steps: Array<{ name: string; timestamp: string }> }
      const at = (name: string) => Date.parse(steps.find((s) => s.name === name)!.timestamp)
      const stages = { read: at('read') - at('start'), index: at('index') - at('read'), total: at('done') - at('start') }
      if (i > 0) runs.push({ ms, baseMb, peakMb, stages })
      await call(`/documents/${doc.id}`, { method: 'DELETE', headers: auth })
    }
    return runs
  } finally {
    await booted.shutdown()
    await server?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function benchUnpdf(pdf: Uint8Array<ArrayBuffer>): Promise<Run[]> {
  const runs: Run[] = []
  for (let i = 0; i <= REPEAT; i++) {
    const started = performance.now()
    const { value: pages, baseMb, peakMb } = await withPeak(async () => {
      const doc = await getDocumentProxy(pdf.slice(), { verbosity: 0, isEvalSupported: false })
      const { totalPages } = await extractText(doc, { mergePages: false })
      await doc.destroy()
      return totalPages
    })
    if (pages !== PAGES) throw new Error(`unpdf read ${pages} pages`)
    if (i > 0) runs.push({ ms: performance.now() - started, baseMb, peakMb })
  }
  return runs
}

async function benchPdftotext(file: string): Promise<Run[] | null> {
  if (!existsSync(PDFTOTEXT)) return null
  const timed = existsSync(TIME)
  const runs: Run[] = []
  for (let i = 0; i <= REPEAT; i++) {
    const out = `${file}.txt`
    const cmd = timed ? [TIME, '-v', PDFTOTEXT, '-layout', file, out] : [PDFTOTEXT, '-layout', file, out]
    const started = performance.now()
    const proc = Bun.spawn(cmd, { stdout: 'ignore', stderr: 'pipe' })
    const stderr = await new Response(proc.stderr).text()
    if ((await proc.exited) !== 0) throw new Error(`pdftotext failed: ${stderr}`)
    const ms = performance.now() - started
    const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN)
    const pages = readFileSync(out, 'utf8').split('\f').filter((p) => p.trim()).length
    if (pages !== PAGES) throw new Error(`pdftotext wrote ${pages} pages`)
    rmSync(out, { force: true })
    if (i > 0) runs.push({ ms, baseMb: 0, peakMb: kb / 1024 })
  }
  return runs
}

async function main() {
  const pdf = await makePdf(numberedPages(PAGES))
  const dir = freshDataDir('bench-pdf-file')
  const file = join(dir, 'bench.pdf')
  writeFileSync(file, pdf)
  console.log(`PDF processing: ${PAGES} text pages (${(pdf.length / 1024).toFixed(0)} KiB, test/support/pdf.ts numberedPages), bun ${Bun.version}, ${REPEAT} runs each after one warm-up; median [runs]\n`)

  const targets: Array<'pglite' | 'postgres'> = ['pglite']
  if (await serverAvailable()) targets.push('postgres')
  else console.log(`(no PostgreSQL server answers at ${redact(SERVER_URL)}: PGlite only)`)

  const tool = await benchPdftotext(file)
  const unpdf = await benchUnpdf(pdf)
  const rows: Array<[string, Run[]]> = []
  for (const target of targets) rows.push([`app upload->ready, ${target === 'pglite' ? 'PGlite' : 'PostgreSQL'}`, await benchApp(target, pdf)])
  rows.push(['unpdf alone (in process)', unpdf])
  if (tool) rows.push([`pdftotext -layout${existsSync(TIME) ? '' : ' (no /usr/bin/time: no RSS)'}`, tool])
  rmSync(dir, { recursive: true, force: true })

  const toolMs = tool ? median(tool.map((r) => r.ms)) : NaN
  for (const [name, runs] of rows) {
    const ms = median(runs.map((r) => r.ms))
    console.log(name)
    console.log(`  time ms        ${fmt(runs, (r) => r.ms)}`)
    console.log(`  pages/s        ${(PAGES / (ms / 1000)).toFixed(0)}${tool ? `   (x${(ms / toolMs).toFixed(1)} the time of pdftotext)` : ''}`)
    if (runs[0]!.stages) {
      console.log(`  job stages ms  read+extract ${fmt(runs, (r) => r.stages!.read)}, store+index ${fmt(runs, (r) => r.stages!.index)}, job total ${fmt(runs, (r) => r.stages!.total)}`)
    }
    if (name.startsWith('pdftotext')) console.log(`  peak RSS MB    ${fmt(runs, (r) => r.peakMb, 1)} (whole process)`)
    else console.log(`  peak RSS MB    ${fmt(runs, (r) => r.peakMb, 1)} (this process; before: ${fmt(runs, (r) => r.baseMb, 1)}; growth ${fmt(runs, (r) => r.peakMb - r.baseMb, 1)})`)
    console.log('')
  }
}

await main()

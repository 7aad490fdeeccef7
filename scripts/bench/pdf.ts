// PDF processing time and peak memory, for a PAGES-page text PDF made by test/support/pdf.ts:
//   - app: POST /quiz/api/documents/upload through the real app (boot() in this process, WORKERS=0, so the
//     processing job runs inside the request: the answer comes when the document is ready), on the embedded PGlite
//     and, when the PostgreSQL server of BENCH_DATABASE_URL answers, on a fresh database of it. Besides the time:
//     the CPU time of this process (every thread) during the upload, the job's stages from its steps' timestamps
//     (read: the PDF's text, with chunks embedded as pages come, and its page rows stored; extract: the step after
//     it; index: the last embeddings and the vector writes), and the peak RSS during the upload above the RSS before it (VmHWM, reset through
//     /proc/self/clear_refs). The first upload of each app (not counted) starts the PDF helper threads; its time
//     is printed apart;
//   - the parsing alone, in this process: unpdf's getDocumentProxy + extractText (what the job ran before it read
//     pages itself), and the job's reader (plugins/quiz/services/pdf-text.ts) alone and with its helper threads;
//   - pdftotext (poppler) on the same file, under /usr/bin/time for its CPU time and peak RSS.
// The rows run interleaved, one round of each at a time, so the machine's load falls on all of them alike; "x
// pdftotext" is the median of each round's ratio. The embedder is the built-in local one.
//
//   bun scripts/bench/pdf.ts            (PAGES=300 REPEAT=5)
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { extractText, getDocumentProxy } from 'unpdf'
import { readPdfPages } from '../../plugins/quiz/services/pdf-text'
import { makePdf, numberedPages } from '../../test/support/pdf'
import { bootForBench, freshDataDir, freshServerDatabase, median, redact, SERVER_URL, serverAvailable } from './support'

const PAGES = Number(process.env.PAGES ?? 300)
const REPEAT = Number(process.env.REPEAT ?? 5)
const PDFTOTEXT = '/usr/bin/pdftotext'
const TIME = '/usr/bin/time'

const statusKb = (field: 'VmRSS' | 'VmHWM') => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) : NaN
}
const cpuMs = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}

interface Run { ms: number; cpuMs: number; baseMb: number; peakMb: number; stages?: Record<'read' | 'extract' | 'index' | 'job', number> }

/** Runs fn, with this process's wall and CPU time, its RSS before and its peak RSS during it, in MB. */
async function measured(fn: () => Promise<Pick<Run, 'stages'> | void>): Promise<Run> {
  Bun.gc(true)
  writeFileSync('/proc/self/clear_refs', '5') // resets VmHWM to the current RSS
  const baseMb = statusKb('VmRSS') / 1024
  const cpu = cpuMs()
  const started = performance.now()
  const extra = await fn()
  return { ms: performance.now() - started, cpuMs: cpuMs() - cpu, baseMb, peakMb: statusKb('VmHWM') / 1024, ...extra }
}

type Measure = () => Promise<Run>
interface Row { name: string; measure: Measure; runs: Run[]; first?: Run; close?: () => Promise<void> }

async function appRow(target: 'pglite' | 'postgres', pdf: Uint8Array<ArrayBuffer>): Promise<Row> {
  const dataDir = freshDataDir('bench-pdf')
  const server = target === 'postgres' ? await freshServerDatabase('bench_pdf') : null
  const booted = await bootForBench({
    DATA_DIR: dataDir, DATABASE_URL: server?.url ?? 'memory://', MAX_UPLOAD_SIZE: String(Math.max(52428800, pdf.length + 1)),
  })
  const call = (path: string, init: RequestInit = {}) => booted.fetch(new Request(`http://localhost/quiz/api${path}`, init))
  const reg = await call('/auth/register', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench-password-1', name: 'Bench' }),
  })
  const { access_token: token } = (await reg.json()) as { access_token: string }
  const auth = { authorization: `Bearer ${token}` }
  let n = 0
  const measure = async () => {
    const form = new FormData()
    form.append('file', new File([pdf], `bench-${n++}.pdf`, { type: 'application/pdf' }))
    let id = 0
    const run = await measured(async () => {
      const res = await call('/documents/upload', { method: 'POST', body: form, headers: auth })
      if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${await res.text()}`)
      id = ((await res.json()) as { id: number }).id
    })
    const status = (await (await call(`/documents/${id}/status`, { headers: auth })).json()) as { status: string; total_pages: number }
    if (status.status !== 'ready' || status.total_pages !== PAGES) throw new Error(`document ${id}: ${JSON.stringify(status)}`)
    const { steps } = (await (await call(`/documents/${id}/processing-steps`, { headers: auth })).json()) as { steps: Array<{ name: string; timestamp: string }> }
    const at = (name: string) => Date.parse(steps.find((s) => s.name === name)!.timestamp)
    run.stages = { read: at('read') - at('start'), extract: at('extract') - at('read'), index: at('index') - at('extract'), job: at('done') - at('start') }
    await call(`/documents/${id}`, { method: 'DELETE', headers: auth })
    return run
  }
  return {
    name: `app upload->ready, ${target === 'pglite' ? 'PGlite' : 'PostgreSQL'}`, measure, runs: [],
    close: async () => {
      await booted.shutdown()
      await server?.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

const parsingRows = (pdf: Uint8Array<ArrayBuffer>): Row[] => [
  {
    name: 'unpdf alone (getDocumentProxy + extractText)', runs: [], measure: () => measured(async () => {
      const doc = await getDocumentProxy(pdf.slice(), { verbosity: 0, isEvalSupported: false })
      const { totalPages } = await extractText(doc, { mergePages: false })
      await doc.destroy()
      if (totalPages !== PAGES) throw new Error(`unpdf read ${totalPages} pages`)
    }),
  },
  ...[0, undefined].map((helpers) => ({
    name: `pdf-text readPdfPages, ${helpers === 0 ? 'this thread alone' : 'with its helper threads'}`, runs: [],
    measure: () => measured(async () => {
      const { totalPages } = await readPdfPages(pdf.slice(), { helpers })
      if (totalPages !== PAGES) throw new Error(`readPdfPages read ${totalPages} pages`)
    }),
  })),
]

function pdftotextRow(file: string): Row | null {
  if (!existsSync(PDFTOTEXT)) return null
  const timed = existsSync(TIME)
  return {
    name: `pdftotext -layout${timed ? '' : ' (no /usr/bin/time: no CPU time or RSS)'}`, runs: [], measure: async () => {
      const out = `${file}.txt`
      const cmd = timed ? [TIME, '-f', '%U %S %M', PDFTOTEXT, '-layout', file, out] : [PDFTOTEXT, '-layout', file, out]
      const started = performance.now()
      const proc = Bun.spawn(cmd, { stdout: 'ignore', stderr: 'pipe' })
      const stderr = await new Response(proc.stderr).text()
      if ((await proc.exited) !== 0) throw new Error(`pdftotext failed: ${stderr}`)
      const ms = performance.now() - started
      const [user, sys, kb] = (stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number)
      const pages = readFileSync(out, 'utf8').split('\f').filter((p) => p.trim()).length
      if (pages !== PAGES) throw new Error(`pdftotext wrote ${pages} pages`)
      rmSync(out, { force: true })
      return { ms, cpuMs: timed ? (user! + sys!) * 1000 : NaN, baseMb: 0, peakMb: timed ? kb! / 1024 : NaN }
    },
  }
}

const fmt = (runs: Run[], pick: (r: Run) => number, digits = 0) =>
  `${median(runs.map(pick)).toFixed(digits)} [${runs.map((r) => pick(r).toFixed(digits)).join(', ')}]`

async function main() {
  const pdf = await makePdf(numberedPages(PAGES))
  const dir = freshDataDir('bench-pdf-file')
  const file = join(dir, 'bench.pdf')
  writeFileSync(file, pdf)
  console.log(`PDF processing: ${PAGES} text pages (${(pdf.length / 1024).toFixed(0)} KiB, test/support/pdf.ts numberedPages), bun ${Bun.version}, ` +
    `${REPEAT} interleaved rounds after one warm-up; median [rounds]\n`)
  const tool = pdftotextRow(file)
  const rows: Row[] = [...(tool ? [tool] : []), ...parsingRows(pdf), await appRow('pglite', pdf)]
  if (await serverAvailable()) rows.push(await appRow('postgres', pdf))
  else console.log(`(no PostgreSQL server answers at ${redact(SERVER_URL)}: PGlite only)\n`)
  try {
    for (let round = 0; round <= REPEAT; round++) {
      for (const row of rows) {
        const run = await row.measure()
        if (round === 0) row.first = run // warm-up: module loading, JIT, the helper threads starting
        else row.runs.push(run)
      }
    }
  } finally {
    for (const row of rows) await row.close?.()
    rmSync(dir, { recursive: true, force: true })
  }

  for (const row of rows) {
    const { runs } = row
    console.log(row.name)
    console.log(`  time ms        ${fmt(runs, (r) => r.ms)}   pages/s ${(PAGES / (median(runs.map((r) => r.ms)) / 1000)).toFixed(0)}`)
    if (tool && row !== tool) {
      const ratio = (pick: (r: Run) => number) => fmt(runs.map((r, i) => ({ ...r, ratio: pick(r) / pick(tool.runs[i]!) })), (r) => (r as Run & { ratio: number }).ratio, 1)
      console.log(`  x pdftotext    time ${ratio((r) => r.ms)}, CPU ${ratio((r) => r.cpuMs)}`)
    }
    console.log(`  CPU ms         ${fmt(runs, (r) => r.cpuMs)}${row === tool ? '' : ' (this process, every thread)'}`)
    if (runs[0]!.stages) {
      const stage = (name: 'read' | 'extract' | 'index' | 'job') => fmt(runs, (r) => r.stages![name])
      console.log(`  job stages ms  read and store ${stage('read')}, extract ${stage('extract')}, index ${stage('index')}, job ${stage('job')}`)
      console.log(`  first upload   ${row.first!.ms.toFixed(0)} ms (helper threads starting)`)
    }
    if (row === tool) console.log(`  peak RSS MB    ${fmt(runs, (r) => r.peakMb, 1)} (whole process)`)
    else console.log(`  peak RSS MB    ${fmt(runs, (r) => r.peakMb, 1)} (this process; growth above the RSS before: ${fmt(runs, (r) => r.peakMb - r.baseMb, 1)})`)
    console.log('')
  }
}

await main()

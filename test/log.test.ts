// The server's log destination (src/core/log.ts LineBuffer): lines are written in batches, in order, none lost on
// the way out of the process, and a stdout that does not keep up costs dropped lines (counted), not memory.
import { describe, expect, test } from 'bun:test'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tracingChannel } from 'node:diagnostics_channel'
import pino from 'pino'
import { captureLogs, createLogger, LineBuffer, requestLineWriter, type Logger } from '../src/core/log'

const ROOT = join(import.meta.dir, '..')

/** A LineBuffer whose writes land in `batches`; a write resolves when `release` is called, if `held`. */
function recorder(held = false) {
  const batches: string[] = []
  const releases: Array<() => void> = []
  const buffer = new LineBuffer(1, async (text) => {
    batches.push(text)
    if (held) await new Promise<void>((resolve) => releases.push(resolve))
  })
  const log = pino({ base: undefined }, buffer)
  return { batches, buffer, log, release: () => releases.shift()?.() }
}

const messages = (batches: string[]) => batches.join('').trim().split('\n').map((line) => JSON.parse(line).msg as string)

describe('LineBuffer', () => {
  test('lines logged in one turn are written together, shortly after', async () => {
    const { batches, log } = recorder()
    for (let i = 0; i < 5; i++) log.info(`line ${i}`)
    expect(batches).toEqual([])
    await Bun.sleep(120)
    expect(batches.length).toBe(1)
    expect(messages(batches)).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4'])
  })

  test('a large batch is written at once, without waiting for the timer', () => {
    const { batches, log } = recorder()
    const filler = 'x'.repeat(1_000)
    for (let i = 0; i < 70; i++) log.info({ filler }, `line ${i}`)
    expect(batches.length).toBe(1) // 64 KB reached: written at once; the rest waits for the timer
    const written = messages(batches)
    expect(written.length).toBeGreaterThan(60)
    expect(written).toEqual(written.map((_, i) => `line ${i}`))
  })

  test('lines logged while a write runs follow it in order, in the next write', async () => {
    const { batches, buffer, log, release } = recorder(true)
    log.info('first')
    buffer.flush()
    log.info('second')
    log.info('third')
    buffer.flush()
    expect(batches.length).toBe(1) // the second batch waits for the first write
    release()
    await Bun.sleep(10)
    expect(batches.length).toBe(2)
    release()
    expect(messages(batches)).toEqual(['first', 'second', 'third'])
  })

  test('lines logged while a write runs wait for the timer, not for the end of that write', async () => {
    const { batches, buffer, log, release } = recorder(true)
    log.info('first')
    buffer.flush()
    log.info('second')
    release()
    await Bun.sleep(10)
    // Written at the end of each write, a busy server's lines went out a few at a time, one write after another.
    expect(batches.length).toBe(1)
    await Bun.sleep(120)
    expect(batches.length).toBe(2)
    release()
    expect(messages(batches)).toEqual(['first', 'second'])
  })

  test('a stdout that does not keep up drops lines past the bound and says how many', async () => {
    const { batches, buffer, log, release } = recorder(true)
    log.info('before')
    buffer.flush() // this write never finishes until released: everything after it waits
    const filler = 'y'.repeat(64 * 1024)
    let logged = 0
    while (logged < 400) {
      log.info({ filler }, `waiting ${logged}`)
      logged++
    }
    release()
    await Bun.sleep(10)
    release()
    await buffer.drain(1_000)
    const lines = batches.join('').trim().split('\n').map((line) => JSON.parse(line))
    const dropped = lines.find((line) => line.msg === 'log lines dropped: stdout did not keep up')
    expect(dropped?.level).toBe('warn')
    const kept = lines.filter((line) => String(line.msg).startsWith('waiting')).length
    expect(kept).toBeGreaterThan(200) // 16 MB of 64 KB lines
    expect(kept).toBeLessThan(400)
    expect(kept + dropped.dropped).toBe(400)
  })

  test('drain waits for the write in flight and writes the rest', async () => {
    const { batches, buffer, log, release } = recorder(true)
    log.info('one')
    buffer.flush()
    log.info('two')
    const drained = buffer.drain(1_000)
    setTimeout(release, 20)
    setTimeout(release, 40)
    await drained
    expect(messages(batches)).toEqual(['one', 'two'])
  })
})

describe('the server logger on the way out', () => {
  const script = (ending: string) => `
    import { createLogger } from ${JSON.stringify(join(ROOT, 'src/core/log.ts'))}
    const log = createLogger('info')
    for (let i = 0; i < 3; i++) log.info({ i }, 'line')
    ${ending}
  `
  for (const [how, ending] of [
    ['process.exit', 'process.exit(3)'],
    ['an uncaught exception', "throw new Error('boom')"],
    ['the end of the program', ''],
  ] as const) {
    test(`no line is lost on ${how}`, async () => {
      const proc = Bun.spawn([process.execPath, '-e', script(ending)], { stdout: 'pipe', stderr: 'pipe' })
      const [out] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      const lines = out.trim().split('\n').map((line) => JSON.parse(line))
      expect(lines.map((line) => line.i)).toEqual([0, 1, 2])
    })
  }

  test('stdout redirected to a file: batch after batch lands after what the file held, none over another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'log-test-'))
    try {
      const path = join(dir, 'server.log')
      writeFileSync(path, 'kept\n')
      const batches = `for (let b = 0; b < 3; b++) { for (let i = 0; i < 3; i++) log.info({ b, i }, 'line'); await Bun.sleep(120) }`
      const fd = openSync(path, 'a')
      const proc = Bun.spawn([process.execPath, '-e', script(batches)], { stdout: fd, stderr: 'pipe' })
      await proc.exited
      closeSync(fd)
      const [first, ...lines] = readFileSync(path, 'utf8').trim().split('\n')
      expect(first).toBe('kept')
      expect(lines.map((line) => JSON.parse(line)).map(({ b, i }) => `${b ?? '-'}.${i}`)).toEqual(['-.0', '-.1', '-.2', '0.0', '0.1', '0.2', '1.0', '1.1', '1.2', '2.0', '2.1', '2.2'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('pino on Bun', () => {
  test('lines skip the diagnostics channel unless someone subscribes to it (TracingChannel.hasSubscribers)', () => {
    const { batches, buffer, log } = recorder()
    const channel = tracingChannel('pino_asJson')
    expect(channel.hasSubscribers).toBe(false)
    const seen: unknown[] = []
    const subscriber = { start: (message: unknown) => void seen.push(message), end() {}, asyncStart() {}, asyncEnd() {}, error() {} }
    channel.subscribe(subscriber)
    try {
      expect(channel.hasSubscribers).toBe(true)
      log.info('traced')
      expect(seen).toHaveLength(1)
    } finally {
      channel.unsubscribe(subscriber)
    }
    expect(channel.hasSubscribers).toBe(false)
    log.info('not traced')
    expect(seen).toHaveLength(1)
    buffer.flush()
    expect(batches.join('')).toContain('"msg":"not traced"')
  })
})

describe('the request line', () => {
  test('is the line pino writes for the same fields, without pino', () => {
    const { batches, buffer } = recorder()
    const previous = captureLogs(null) // the preload's capture gives loggers without the line buffer
    let log: Logger, quiet: Logger
    try {
      log = createLogger('info', buffer)
      quiet = createLogger('warn', buffer)
    } finally {
      captureLogs(previous)
    }
    const line = { service: 'clinical', method: 'GET', path: '/api/auth/me', route: '/api/auth/me', status: 200, ms: 1.4, ip: '203.0.113.9' }
    const odd = { ...line, path: '/a "quoted" \\ path\u2028é', route: null }
    const write = requestLineWriter(log)!
    for (const fields of [line, odd]) {
      log.info(fields, 'request')
      write(fields)
    }
    buffer.flush()
    const lines = batches.join('').trim().split('\n').map((l) => l.replace(/"time":"[^"]+"/, '"time":"T"'))
    expect(lines).toHaveLength(4)
    expect(lines[1]).toBe(lines[0]!)
    expect(lines[3]).toBe(lines[2]!)
    expect(JSON.parse(lines[2]!)).toEqual({ level: 'info', time: 'T', ...odd, msg: 'request' })
    expect(requestLineWriter(quiet)).toBeNull()
  })

  test('carries the time it is written at (to the millisecond, shared by the lines of one millisecond)', async () => {
    const { batches, buffer } = recorder()
    const previous = captureLogs(null)
    let log: Logger
    try {
      log = createLogger('info', buffer)
    } finally {
      captureLogs(previous)
    }
    const write = requestLineWriter(log)!
    const fields = { service: 'quiz', method: 'GET', path: '/x', route: null, status: 404, ms: 0.2, ip: '203.0.113.9' }
    const times: Array<{ before: number; after: number }> = []
    for (let i = 0; i < 3; i++) {
      const before = Date.now()
      write(fields)
      times.push({ before, after: Date.now() })
      await Bun.sleep(3)
    }
    buffer.flush()
    const written = batches.join('').trim().split('\n').map((l) => Date.parse(JSON.parse(l).time as string))
    expect(written).toHaveLength(3)
    written.forEach((t, i) => {
      expect(t).toBeGreaterThanOrEqual(times[i]!.before)
      expect(t).toBeLessThanOrEqual(times[i]!.after)
    })
    expect(new Set(written).size).toBe(3)
  })
})

// Spec 2, Events and "Audit details": the clinical audit log writer (plugins/clinical/audit.ts) on each
// database target: redaction and the 500-character cap, batching (50 entries or the timer), order, draining at
// close and at app shutdown, and database failures that never reach the caller.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { tmpdir } from 'node:os'
import { rmSync } from 'node:fs'
import pino from 'pino'
import {
  AUDIT_ACTIONS, AUDIT_BATCH_SIZE, AUDIT_DETAIL_MAX, AUDIT_QUEUE_MAX, NOTE_EXCERPT_CHARS,
  createAuditWriter, redactDetails, type AuditWriterOptions,
} from '../plugins/clinical/audit'
import { Fragment, openDb, type Db } from '../src/core/db'
import type { Logger } from '../src/core/log'
import { databaseTargets, freshServerDatabase, startTestApp, type TestApp } from './support/app'
import { waitFor } from './support/wait'

const silent = pino({ level: 'silent' })

/** Each test writes its own action value, so rows never cross between tests. */
const uniqueAction = (name: string) => `test_${name}_${crypto.randomUUID().slice(0, 8)}`

/** A log that keeps its lines, to assert the aggregator copy and the error reports. */
function capturingLog(level = 'info') {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) }) as Logger
  return { log, lines }
}

/** The database as the writer sees it: records each audit insert's row count, and can fail or hold inserts. */
function probeDb(db: Db) {
  const probe = { inserts: [] as number[], failNext: 0, hold: null as Promise<void> | null }
  const wrapped: Db = {
    kind: db.kind,
    async sql<T>(strings: TemplateStringsArray, ...values: unknown[]) {
      if (strings[0]?.trimStart().startsWith('insert into clinical.audit_log')) {
        if (probe.hold) await probe.hold
        if (probe.failNext > 0) {
          probe.failNext--
          throw new Error('connection refused')
        }
        probe.inserts.push((values[0] as Fragment).values.length)
      }
      return db.sql<T>(strings, ...values)
    },
    transaction: (fn) => db.transaction(fn),
    exec: (text) => db.exec(text),
    close: () => db.close(),
  }
  return { db: wrapped, probe }
}

describe('audit details redaction', () => {
  it.each([
    ['a social security number', 'SSN 123-45-6789 checked', 'SSN [SSN] checked'],
    ['an unformatted, labelled social security number', 'ssn: 123456789', 'ssn: [SSN]'],
    ['a telephone number in brackets', 'call (555) 123-4567 back', 'call [PHONE] back'],
    ['a dashed telephone number', 'call 555-123-4567 back', 'call [PHONE] back'],
    ['a US number with its country code', 'call +1 555 123 4567 back', 'call [PHONE] back'],
    ['an international number', 'call +44 20 7946 0958 back', 'call [PHONE] back'],
    ['a national number with a trunk 0', 'call 020 7946 0958 back', 'call [PHONE] back'],
    ['a labelled number without separators', 'tel: 5551234567', 'tel: [PHONE]'],
    ['an email address', 'reset for jane.doe+ward4@example.co.uk sent', 'reset for [EMAIL] sent'],
    ['an ISO date', 'born 1990-04-12', 'born [DOB]'],
    ['a US date', 'seen 04/12/1990', 'seen [DOB]'],
    ['a European date', 'seen 12.04.1990', 'seen [DOB]'],
    ['a DOB: form with a short year', 'DOB: 4/12/90', 'DOB: [DOB]'],
    ['a written date of birth', 'date of birth April 12, 1990', 'date of birth [DOB]'],
  ])('redacts %s', (_, input, expected) => {
    expect(redactDetails(input)).toBe(expected)
  })

  it('leaves ordinary details alone: idle minutes, addresses, ids, event timestamps, versions', () => {
    for (const text of [
      'Session ended after 1445 idle minutes',
      'login from 10.0.0.1 for user 42, attempt 3 of 10',
      'at 2024-05-01T10:00:00Z',
      'Chrome/120.0.6099.109',
      'session 123e4567-e89b-12d3-a456-426614174000',
      'reason: invalid credentials',
    ]) expect(redactDetails(text)).toBe(text)
  })

  it('cuts note-body text (long prose, or several lines) to a short excerpt', () => {
    const note = 'Patient is a 45 year old male presenting with three days of cough, fever and shortness of breath; ' +
      'denies chest pain and has no sick contacts at home.'
    const out = redactDetails(note)
    expect(out).toStartWith(note.slice(0, 20))
    expect(out).toEndWith(`[truncated, ${note.length} chars]`)
    expect(out.length).toBeLessThan(NOTE_EXCERPT_CHARS + 40)
    const lines = 'Assessment:\nviral URI, supportive care, return if worse'
    expect(redactDetails(lines)).toBe(`Assessment:… [truncated, ${lines.length} chars]`)
  })

  it(`caps details at AUDIT_DETAIL_MAX (${AUDIT_DETAIL_MAX}) characters`, () => {
    const long = 'k=v;'.repeat(AUDIT_DETAIL_MAX)
    const out = redactDetails(long)
    expect(out.length).toBe(AUDIT_DETAIL_MAX)
    expect(out).toEndWith('…')
    expect(redactDetails('k=v;'.repeat(AUDIT_DETAIL_MAX / 4))).toBe('k=v;'.repeat(AUDIT_DETAIL_MAX / 4))
  })

  it('redacts after the cap point too: a number late in a long text never survives in part', () => {
    const out = redactDetails('x'.repeat(AUDIT_DETAIL_MAX - 8) + ' 555-123-4567')
    expect(out).not.toContain('555')
    expect(out.length).toBeLessThanOrEqual(AUDIT_DETAIL_MAX)
  })
})

for (const target of databaseTargets()) {
  describe(`audit log writer [${target}]`, () => {
    let t: TestApp
    const writers: Array<{ close(): Promise<void> }> = []
    beforeAll(async () => {
      t = await startTestApp({ target })
    }, 60_000)
    afterAll(async () => {
      for (const w of writers) await w.close()
      await t.close()
    }, 30_000)

    /** A writer over a probed database; its shutdown registration is kept here, not on the shared app. */
    const writerFor = (opts: AuditWriterOptions = {}, log: Logger = silent) => {
      const { db, probe } = probeDb(t.db)
      const writer = createAuditWriter({ db, log, now: Date.now, onShutdown: () => {} }, opts)
      writers.push(writer)
      return { writer, probe }
    }
    const rowsOf = (action: string) => t.db.sql<{ user_id: number | null; ip_address: string | null; details: string }>`
      select user_id, ip_address, details from clinical.audit_log where action = ${action} order by id`
    const countOf = async (action: string) =>
      (await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.audit_log where action = ${action}`)[0]!.n

    it(`writes ${AUDIT_BATCH_SIZE} entries with one insert as soon as the ${AUDIT_BATCH_SIZE}th is queued`, async () => {
      const { writer, probe } = writerFor({ flushMs: 60_000 })
      const action = uniqueAction('batch')
      for (let n = 0; n < AUDIT_BATCH_SIZE; n++) writer.write({ action, details: `n=${n}` })
      await waitFor(async () => (await countOf(action)) === AUDIT_BATCH_SIZE, 'the batch')
      expect(probe.inserts).toEqual([AUDIT_BATCH_SIZE])
    })

    it('holds fewer entries until the timer flushes them, in one insert', async () => {
      const { writer, probe } = writerFor({ flushMs: 200 })
      const action = uniqueAction('timer')
      for (let n = 0; n < 3; n++) writer.write({ action })
      await Bun.sleep(50)
      expect(await countOf(action)).toBe(0)
      await waitFor(async () => (await countOf(action)) === 3, 'the timed flush')
      expect(probe.inserts).toEqual([3])
    })

    it('keeps the order of writes across batches', async () => {
      const { writer, probe } = writerFor({ flushMs: 60_000 })
      const action = uniqueAction('order')
      const total = 2 * AUDIT_BATCH_SIZE + 20
      for (let n = 0; n < total; n++) writer.write({ action, details: `n=${n}` })
      await writer.flush()
      expect((await rowsOf(action)).map((r) => r.details)).toEqual(Array.from({ length: total }, (_, n) => `n=${n}`))
      expect(probe.inserts).toEqual([AUDIT_BATCH_SIZE, AUDIT_BATCH_SIZE, 20])
    })

    it('stores user, address and redacted details, and copies the same redacted entry to the log at info', async () => {
      const { log, lines } = capturingLog()
      const { writer } = writerFor({ flushMs: 60_000 }, log)
      writer.write({ action: 'login_failed', userId: 7, ip: '10.1.2.3', details: 'bad password for ann@example.org, phone 555-123-4567' })
      const action = uniqueAction('object')
      writer.write({ action, details: { email: 'ann@example.org', dob: '1990-04-12', attempt: 3, transcript: 'Mother reports fever since Monday and poor feeding overnight.' } })
      await writer.flush()

      const [row] = await t.db.sql<{ user_id: number; ip_address: string; details: string }>`
        select user_id, ip_address, details from clinical.audit_log where action = 'login_failed' and user_id = 7 order by id desc limit 1`
      expect(row).toEqual({ user_id: 7, ip_address: '10.1.2.3', details: 'bad password for [EMAIL], phone [PHONE]' })
      const [stored] = await rowsOf(action)
      expect(JSON.parse(stored!.details)).toEqual({
        email: '[EMAIL]', dob: '[DOB]', attempt: 3, transcript: 'Mother reports fever since Monday and… [truncated, 61 chars]',
      })
      expect(stored!.user_id).toBeNull()

      const copies = lines.filter((l) => l.msg === 'audit').map((l) => l.audit as Record<string, unknown>)
      expect(copies[0]).toEqual({ action: 'login_failed', userId: 7, ip: '10.1.2.3', details: 'bad password for [EMAIL], phone [PHONE]' })
      expect(copies[1]!.details).toBe(stored!.details)
      expect(lines.every((l) => l.level === 30)).toBe(true)
      expect(JSON.stringify(lines)).not.toContain('ann@example.org')
    })

    it(`stores details of at most AUDIT_DETAIL_MAX characters, also from an object`, async () => {
      const { writer } = writerFor({ flushMs: 60_000 })
      const action = uniqueAction('cap')
      writer.write({ action, details: 'k=v;'.repeat(AUDIT_DETAIL_MAX) })
      writer.write({ action, details: Object.fromEntries(Array.from({ length: 200 }, (_, n) => [`key${n}`, n])) })
      await writer.flush()
      const rows = await rowsOf(action)
      expect(rows.map((r) => r.details.length)).toEqual([AUDIT_DETAIL_MAX, AUDIT_DETAIL_MAX])
    })

    it('close() drains pending entries; a write after close is logged but not stored', async () => {
      const { log, lines } = capturingLog()
      const { writer } = writerFor({ flushMs: 60_000 }, log)
      const action = uniqueAction('close')
      for (let n = 0; n < 5; n++) writer.write({ action })
      await writer.close()
      expect(await countOf(action)).toBe(5)
      writer.write({ action })
      await writer.flush()
      expect(await countOf(action)).toBe(5)
      expect(lines.some((l) => l.msg === 'audit entry written after shutdown: logged only, not stored')).toBe(true)
    })

    it('a database failure does not throw from write(): the batch is retried on the next flush', async () => {
      const { log, lines } = capturingLog()
      const { writer, probe } = writerFor({ flushMs: 60_000 }, log)
      const action = uniqueAction('retry')
      probe.failNext = 1
      expect(() => {
        for (let n = 0; n < 3; n++) writer.write({ action, details: `n=${n}` })
      }).not.toThrow()
      await writer.flush()
      expect(await countOf(action)).toBe(0)
      expect(lines.find((l) => l.msg === 'audit log insert failed')).toMatchObject({ level: 50, entries: 3, retrying: 3 })
      writer.write({ action, details: 'n=3' })
      await writer.flush()
      expect((await rowsOf(action)).map((r) => r.details)).toEqual(['n=0', 'n=1', 'n=2', 'n=3'])
    })

    it('drops entries whose retry fails too, with an error log naming the count', async () => {
      const { log, lines } = capturingLog()
      const { writer, probe } = writerFor({ flushMs: 60_000 }, log)
      const action = uniqueAction('drop')
      probe.failNext = 2
      for (let n = 0; n < 4; n++) writer.write({ action })
      await writer.flush()
      await writer.flush()
      expect(lines.find((l) => typeof l.dropped === 'number')).toMatchObject({ level: 50, dropped: 4, msg: expect.stringContaining('4 entries dropped') })
      await writer.flush()
      expect(await countOf(action)).toBe(0)
      expect(probe.inserts).toEqual([])
    })

    it('retries failed entries on the timer too, without another write', async () => {
      const { writer, probe } = writerFor({ flushMs: 50 })
      const action = uniqueAction('timer_retry')
      probe.failNext = 1
      writer.write({ action })
      await waitFor(async () => (await countOf(action)) === 1, 'the retried entry')
      expect(probe.inserts).toEqual([1])
    })

    it(`keeps at most AUDIT_QUEUE_MAX entries while the database hangs, dropping the oldest with an error log`, async () => {
      const { log, lines } = capturingLog('error')
      const { writer, probe } = writerFor({ flushMs: 60_000 }, log)
      let release!: () => void
      probe.hold = new Promise<void>((resolve) => (release = resolve))
      const action = uniqueAction('queue')
      const total = AUDIT_QUEUE_MAX + 2 * AUDIT_BATCH_SIZE
      for (let n = 0; n < AUDIT_BATCH_SIZE; n++) writer.write({ action, details: `n=${n}` })
      await Bun.sleep(0)
      for (let n = AUDIT_BATCH_SIZE; n < total; n++) writer.write({ action, details: `n=${n}` })
      // The first batch is in the hanging insert; of the rest, the oldest beyond the cap were dropped.
      const dropped = lines.filter((l) => l.msg?.toString().includes('queue full')).reduce((s, l) => s + (l.dropped as number), 0)
      expect(dropped).toBe(total - AUDIT_BATCH_SIZE - AUDIT_QUEUE_MAX)
      probe.hold = null
      release()
      await writer.flush()
      const rows = await rowsOf(action)
      expect(rows.length).toBe(AUDIT_BATCH_SIZE + AUDIT_QUEUE_MAX)
      expect(rows.at(-1)!.details).toBe(`n=${total - 1}`)
    }, 30_000)

    it('types the spec\'s action values', () => {
      expect(AUDIT_ACTIONS).toContain('session_idle_timeout')
      expect(AUDIT_ACTIONS.length).toBe(14)
    })
  })

  describe(`audit log writer at app shutdown [${target}]`, () => {
    it('booted.shutdown() drains entries written just before it', async () => {
      const server = target === 'postgres' ? await freshServerDatabase() : null
      const db = await openDb({ url: server?.url ?? 'memory://', dataDir: tmpdir(), poolSize: 4 })
      // The app closes its database at shutdown; this handle stays open so the rows can be read afterwards.
      const keepOpen: Db = { kind: db.kind, sql: (s, ...v) => db.sql(s, ...v), transaction: (fn) => db.transaction(fn), exec: (x) => db.exec(x), close: async () => {} }
      let app: TestApp | null = null
      try {
        app = await startTestApp({ target: 'pglite', boot: { db: keepOpen } })
        const writer = createAuditWriter(app.booted.core, { flushMs: 60_000 })
        const action = uniqueAction('shutdown')
        for (let n = 0; n < 7; n++) writer.write({ action, userId: n, details: `n=${n}` })
        await app.booted.shutdown()
        const rows = await db.sql<{ user_id: number }>`select user_id from clinical.audit_log where action = ${action} order by id`
        expect(rows.map((r) => r.user_id)).toEqual([0, 1, 2, 3, 4, 5, 6])
      } finally {
        if (app) rmSync(app.dataDir, { recursive: true, force: true })
        await db.close()
        await server?.drop()
      }
    }, 60_000)
  })
}

// The embedded database at rest (DbRest, src/core/db-pglite-worker.ts): a database on disk closes once unused for
// suspendAfterMs and opens again at the next query, with its data; background queries (`quietly`) do not keep it
// open, use, an open transaction and a hold do; queries that come while it closes or opens all answer.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { boot } from '../src/app'
import { loadConfig } from '../src/config'
import { databaseOptions, openDb, type Db, type DbOptions } from '../src/core/db'
import { openPgliteWorker } from '../src/core/db-pglite-worker'
import { embeddedDatabaseHeld, SERVER_PID_FILE } from '../src/core/backup'
import { startSchedules } from '../src/core/schedule'
import { plugins } from '../plugins'
import type { Manifest } from '../scripts/backup'
import { startServer } from './support/server-process'
import { rejection } from './support/wait'

type RestEvent = Parameters<NonNullable<DbOptions['onRest']>>[0]

const REST_MS = 300
const opened: Array<{ db: Db; dir: string }> = []

/** One initialised data directory, copied for each test (initdb takes seconds). */
let template = ''
beforeAll(async () => {
  template = mkdtempSync(join(tmpdir(), 'db-rest-template-'))
  await (await openPgliteWorker({ url: null, dataDir: template })).close()
}, 60_000)
afterAll(() => rmSync(template, { recursive: true, force: true }))

async function restingDb(suspendAfterMs = REST_MS) {
  const dir = mkdtempSync(join(tmpdir(), 'db-rest-'))
  cpSync(template, dir, { recursive: true })
  const events: RestEvent[] = []
  const db = await openPgliteWorker({ url: null, dataDir: dir, suspendAfterMs, onRest: (e) => void events.push(e) })
  opened.push({ db, dir })
  return { db, events, rest: db.rest! }
}

/** Waits until `done` holds, up to timeoutMs; answers whether it did. */
async function until(done: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (!done()) {
    if (performance.now() > deadline) return false
    await Bun.sleep(20)
  }
  return true
}

afterEach(async () => {
  for (const { db, dir } of opened.splice(0)) {
    await db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

describe('the embedded database at rest', () => {
  it('closes once unused, keeps its data, and opens again at the next query', async () => {
    const { db, events, rest } = await restingDb()
    await db.exec('create table kept (id int primary key, name text)')
    await db.sql`insert into kept values (1, 'first')`
    expect(rest.asleep).toBe(false)
    expect(await until(() => events.length > 0)).toBe(true)
    expect(rest.asleep).toBe(true)
    expect(events).toEqual([{ event: 'suspended', idleMs: expect.any(Number) }])
    expect((events[0] as { idleMs: number }).idleMs).toBeGreaterThanOrEqual(REST_MS)

    expect(await db.sql`select id, name from kept`).toEqual([{ id: 1, name: 'first' }])
    expect(rest.asleep).toBe(false)
    expect(events[1]).toEqual({ event: 'resumed', ms: expect.any(Number) })
    // A transaction on a database that has rested again commits as usual.
    expect(await until(() => events.length === 3)).toBe(true)
    await db.transaction(async (tx) => {
      await tx.sql`insert into kept values (2, 'second')`
    })
    expect(await db.sql`select count(*)::int as n from kept`).toEqual([{ n: 2 }])
  }, 60_000)

  it('an in-memory database, or one without a delay, never rests', async () => {
    const memory = await openPgliteWorker({ url: 'memory://', dataDir: tmpdir(), suspendAfterMs: REST_MS })
    try {
      expect(memory.rest).toBeUndefined()
    } finally {
      await memory.close()
    }
    const { db } = await restingDb(0)
    expect(db.rest).toBeUndefined()
  }, 60_000)

  it('use keeps it open; background queries alone do not, and each still answers', async () => {
    const { db, events, rest } = await restingDb()
    for (let i = 0; i < 15; i++) {
      expect(await db.sql`select ${i}::int as i`).toEqual([{ i }])
      await Bun.sleep(100)
    }
    expect(events).toEqual([])
    const answers: number[] = []
    for (let i = 0; i < 15 && !events.some((e) => e.event === 'suspended'); i++) {
      answers.push((await rest.quietly(() => db.sql<{ i: number }>`select ${i}::int as i`))[0]!.i)
      await Bun.sleep(100)
    }
    expect(await until(() => events.some((e) => e.event === 'suspended'))).toBe(true)
    expect(answers).toEqual(answers.map((_, i) => i))
  }, 60_000)

  it('an open transaction and a hold that says work is waiting keep it open', async () => {
    const { db, events, rest } = await restingDb()
    await db.exec('create table t (id int)')
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const tx = db.transaction(async (t) => {
      await t.sql`insert into t values (1)`
      await held
      await t.sql`insert into t values (2)`
    })
    await Bun.sleep(REST_MS * 4)
    expect(rest.asleep).toBe(false)
    release()
    await tx
    expect(await db.sql`select id from t order by id`).toEqual([{ id: 1 }, { id: 2 }])

    let waiting = true
    const checks: boolean[] = []
    const unhold = rest.holdWhile(async () => {
      // The check may read the database: its query is not use.
      const [row] = await db.sql<{ n: number }>`select count(*)::int as n from t`
      checks.push(row!.n === 2)
      return waiting
    })
    await Bun.sleep(REST_MS * 4)
    expect(rest.asleep).toBe(false)
    expect(checks.length).toBeGreaterThan(0)
    expect(checks.every(Boolean)).toBe(true)
    waiting = false
    expect(await until(() => events.length > 0)).toBe(true)
    unhold()
    expect(events).toEqual([{ event: 'suspended', idleMs: expect.any(Number) }])
  }, 60_000)

  it('queries that come together at rest all answer, on one opening', async () => {
    const { db, events, rest } = await restingDb()
    await db.exec('create table n (i int primary key)')
    expect(await until(() => events.length > 0)).toBe(true)
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => db.sql`insert into n values (${i}) returning i`))
    expect(answers.map((rows) => rows[0])).toEqual(Array.from({ length: 20 }, (_, i) => ({ i })))
    expect(events.filter((e) => e.event === 'resumed')).toHaveLength(1)
  }, 60_000)

  it('queries that come while it closes wait for it and answer', async () => {
    const { db, events, rest } = await restingDb()
    await db.exec('create table n (i int primary key)')
    // Asked from the moment the close has begun (asleep turns true as the close starts, before it ends).
    expect(await until(() => rest.asleep, 10_000)).toBe(true)
    const rows = await db.sql`insert into n values (1) returning i`
    expect(rows).toEqual([{ i: 1 }])
    expect(events.map((e) => e.event)).toEqual(['suspended', 'resumed'])
  }, 60_000)

  it('closes at rest without opening again; later queries are refused', async () => {
    const { db, events } = await restingDb()
    expect(await until(() => events.length > 0)).toBe(true)
    await db.close()
    expect((await rejection(db.sql`select 1`)).message).toMatch(/closed/)
    expect(events.map((e) => e.event)).toEqual(['suspended'])
  }, 60_000)
})

describe('the server on a resting database', () => {
  it('rests while its job workers poll and its schedules run; requests, jobs and waiting mail open it or keep it open', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'db-rest-app-'))
    cpSync(template, join(dataDir, 'pg'), { recursive: true })
    const config = loadConfig({ DATA_DIR: dataDir, PGLITE_SUSPEND_AFTER_S: '1', WORKERS: '1', LOG_LEVEL: 'silent', JOB_HEARTBEAT_MS: '200' })
    const events: RestEvent[] = []
    const booted = await boot(config, plugins, { db: openDb({ ...databaseOptions(config), onRest: (e) => void events.push(e) }) })
    const { core } = booted
    const rest = core.db.rest!
    const suspensions = () => events.filter((e) => e.event === 'suspended').length
    let gate!: () => void
    const gated = new Promise<void>((resolve) => (gate = resolve))
    core.jobs.register('test.rest', async (ctx) => {
      await ctx.step('started')
      await gated
      return 'done'
    })
    core.jobs.start()
    const stopSchedules = startSchedules(core, booted.schedules)
    try {
      // The workers poll every second and beat every 200 ms: neither keeps it open.
      expect(await until(() => suspensions() === 1, 20_000)).toBe(true)

      const register = await booted.fetch(new Request('http://localhost/quiz/api/auth/register', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'rest@example.test', password: 'rest-password-1', name: 'Rest' }),
      }))
      expect(register.status).toBe(200)
      const { access_token: token } = await register.json() as { access_token: string }
      const me = await booted.fetch(new Request('http://localhost/quiz/api/auth/me', { headers: { authorization: `Bearer ${token}` } }))
      expect(await me.json()).toMatchObject({ email: 'rest@example.test' })
      expect(events.map((e) => e.event)).toEqual(['suspended', 'resumed'])

      // A job enqueued at rest opens it, wakes the worker, and keeps it open while it runs.
      expect(await until(() => suspensions() === 2, 20_000)).toBe(true)
      const job = await core.jobs.enqueue('test.rest', {}, { service: 'quiz' })
      await Bun.sleep(3_000) // past the delay and a check
      expect(rest.asleep).toBe(false)
      expect(suspensions()).toBe(2)
      expect((await core.jobs.get(job.id))!.status).toBe('running')
      gate()
      let finished = ''
      for (let i = 0; i < 100 && finished !== 'completed'; i++) {
        finished = (await core.jobs.get(job.id))!.status
        await Bun.sleep(50)
      }
      expect(finished).toBe('completed')
      expect(await until(() => suspensions() === 3, 20_000)).toBe(true)

      // A message waiting in the outbox keeps it open: its retry schedule skips its runs while the database rests.
      await core.db.sql`
        insert into core.mail_outbox (recipient, subject, body, next_attempt_at, give_up_at, created_at)
        values ('someone@example.test', 'Waiting', null, now() + interval '1 hour', now() + interval '1 day', now())`
      await Bun.sleep(3_000)
      expect(rest.asleep).toBe(false)
      expect(suspensions()).toBe(3)
      await core.db.sql`delete from core.mail_outbox`
      expect(await until(() => suspensions() === 4, 20_000)).toBe(true)
    } finally {
      gate()
      stopSchedules()
      await core.jobs.stop()
      await booted.shutdown()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('a server process whose database rests', () => {
  it('still owns its folder: a backup asks it for the snapshot instead of opening the database beside it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'db-rest-server-'))
    cpSync(template, join(dataDir, 'pg'), { recursive: true })
    const server = await startServer({ DATA_DIR: dataDir, PGLITE_SUSPEND_AFTER_S: '1', LOG_LEVEL: 'info', WORKERS: '1' }, { bare: true })
    const rests = () => server.output().split('"event":"suspended"').length - 1
    try {
      expect(await until(() => rests() === 1, 20_000)).toBe(true)
      // PGlite's postmaster.pid is gone with the closed database; the server's own pid file says who holds the folder.
      expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false)
      expect(embeddedDatabaseHeld(dataDir)).toBe(true)

      const archive = join(dataDir, 'at-rest.tar.gz')
      const env = Object.fromEntries(['PATH', 'HOME', 'TMPDIR'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!]))
      const backup = Bun.spawn([process.execPath, 'scripts/backup.ts', '--out', archive], {
        cwd: join(import.meta.dir, '..'), env: { ...env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe',
      })
      const [code, out] = await Promise.all([backup.exited, new Response(backup.stdout).text()])
      expect(code, out).toBe(0)
      const manifest = JSON.parse(Bun.spawnSync(['tar', '-xOzf', archive, 'manifest.json']).stdout.toString()) as Manifest
      expect(manifest.database).toEqual({ kind: 'pglite', file: 'database.tar', taken: 'online' })
      expect(server.output()).toContain('"event":"resumed"')

      // A clean stop takes its pid file away; a pid file of a process that is gone holds nothing.
      expect(await server.stop()).toBe(0)
      expect(existsSync(join(dataDir, SERVER_PID_FILE))).toBe(false)
      expect(embeddedDatabaseHeld(dataDir)).toBe(false)
      writeFileSync(join(dataDir, SERVER_PID_FILE), '2147483646\n')
      expect(embeddedDatabaseHeld(dataDir)).toBe(false)
    } finally {
      await server.kill9().catch(() => {})
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})

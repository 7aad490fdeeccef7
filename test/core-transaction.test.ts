// core.transaction (src/app.ts, src/plugin.ts): a Core bound to one transaction, so services compose in one unit
// of work. Its job queue, temporary store and rate limits write inside the transaction: a job enqueued in it
// exists only once it commits (never after a rollback), and with WORKERS=0 its inline run waits for the commit.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { JobRecord } from '../src/core/jobs'
import type { Core } from '../src/plugin'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { rejection } from './support/wait'

class Rollback extends Error {}

for (const target of databaseTargets()) {
  describe(`core.transaction [${target}]`, () => {
    let inline: TestApp
    let queued: TestApp
    /** What the inline handler saw when it ran: whether its own job row was committed (read on the root handle). */
    const runs: Array<{ id: string; committedBeforeRun: boolean }> = []
    const kind = 'test.tx.record'

    beforeAll(async () => {
      inline = await startTestApp({ target })
      queued = await startTestApp({ target, env: { WORKERS: '1' } })
      for (const app of [inline, queued]) {
        const { core } = app.booted
        core.jobs.register(kind, async (ctx) => {
          const rows = await core.db.sql<{ id: string }>`select id from core.jobs where id = ${ctx.id}`
          runs.push({ id: ctx.id, committedBeforeRun: rows.length === 1 })
          return { ok: true }
        })
      }
    }, 60_000)
    afterAll(async () => {
      await inline?.close()
      await queued?.close()
    })

    const jobRow = (core: Core, id: string) => core.db.sql<JobRecord>`select id, status from core.jobs where id = ${id}`

    it('a job enqueued inside a committed transaction runs inline after the commit, not inside it (WORKERS=0)', async () => {
      const { core } = inline.booted
      let ranInside = false
      const job = await core.transaction(async (tx) => {
        expect(tx.inTransaction).toBe(true)
        const enqueued = await tx.jobs.enqueue(kind, {}, { service: 'test' })
        ranInside = runs.some((r) => r.id === enqueued.id)
        return enqueued
      })
      expect(ranInside).toBe(false)
      expect(runs.find((r) => r.id === job.id)).toEqual({ id: job.id, committedBeforeRun: true })
      expect((await jobRow(core, job.id))[0]?.status).toBe('completed')
    })

    it('a job enqueued inside a rolled-back transaction never exists and never runs, and deferred work is dropped', async () => {
      const { core } = inline.booted
      let id = ''
      let deferredRan = false
      expect(await rejection(core.transaction(async (tx) => {
        id = (await tx.jobs.enqueue(kind, {}, { service: 'test' })).id
        await tx.afterCommit(() => void (deferredRan = true))
        expect(await tx.jobs.get(id)).not.toBeNull()
        throw new Rollback()
      }))).toBeInstanceOf(Rollback)
      expect(id).not.toBe('')
      expect(await jobRow(core, id)).toEqual([])
      expect(runs.some((r) => r.id === id)).toBe(false)
      expect(deferredRan).toBe(false)
    })

    it('with workers, the job is pending once committed and a worker claims it; rolled back, there is nothing to claim', async () => {
      const { core } = queued.booted
      const committed = await core.transaction((tx) => tx.jobs.enqueue(kind, {}, { service: 'test' }))
      expect((await jobRow(core, committed.id))[0]?.status).toBe('pending')
      let rolledBack = ''
      expect(await rejection(core.transaction(async (tx) => {
        rolledBack = (await tx.jobs.enqueue(kind, {}, { service: 'test' })).id
        throw new Rollback()
      }))).toBeInstanceOf(Rollback)
      while (await core.jobs.runOnce('test:w0'));
      expect((await jobRow(core, committed.id))[0]?.status).toBe('completed')
      expect(await jobRow(core, rolledBack)).toEqual([])
    })

    if (target === 'postgres') {
      it('another connection does not see the job before the commit, and sees it after', async () => {
        const { core } = queued.booted
        let seenFromOutside = -1 as number
        const job = await core.transaction(async (tx) => {
          const enqueued = await tx.jobs.enqueue(kind, {}, { service: 'test' })
          seenFromOutside = (await jobRow(core, enqueued.id)).length // root handle: another pool connection
          return enqueued
        })
        expect(seenFromOutside).toBe(0)
        expect(await jobRow(core, job.id)).toHaveLength(1)
      })
    }

    it('the temporary store and rate limits of a transaction roll back with it', async () => {
      const { core } = inline.booted
      const key = `test:tx:${crypto.randomUUID()}`
      const rule = { name: `test.tx.${crypto.randomUUID().slice(0, 8)}`, limit: 1, windowS: 60 }
      expect(await rejection(core.transaction(async (tx) => {
        await tx.kv.set(key, { n: 1 })
        expect(await tx.kv.get(key)).toEqual({ n: 1 })
        expect((await tx.rateLimit.hit(rule, 'ip')).allowed).toBe(true)
        throw new Rollback()
      }))).toBeInstanceOf(Rollback)
      expect(await core.kv.get(key)).toBeNull()
      expect((await core.rateLimit.hit(rule, 'ip')).allowed).toBe(true)

      await core.transaction(async (tx) => tx.kv.set(key, 'kept'))
      expect(await core.kv.get(key)).toBe('kept')
    })

    it('a nested transaction joins the outer one: its writes roll back with the outer one', async () => {
      const { core } = inline.booted
      const key = `test:tx:${crypto.randomUUID()}`
      expect(await rejection(core.transaction(async (tx) => {
        await tx.transaction(async (inner) => {
          expect(inner.db).toBe(tx.db)
          await inner.kv.set(key, 1)
        })
        throw new Rollback()
      }))).toBeInstanceOf(Rollback)
      expect(await core.kv.get(key)).toBeNull()
    })
  })
}

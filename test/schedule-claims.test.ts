// Every process starts the same croner schedules; each scheduled time is run by one of them only. Two schedulers
// on one database stand for two processes: a once-a-second task runs once per second, not twice, and a claimed
// slot cannot be claimed again.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { claimScheduledRun, startSchedules } from '../src/core/schedule'
import { databaseTargets, startTestApp, type TestApp } from './support/app'

describe.each(databaseTargets())('schedules across processes (%s)', (target) => {
  let app: TestApp
  beforeAll(async () => {
    app = await startTestApp({ target })
  }, 60_000)
  afterAll(() => app.close())

  it('claims a scheduled time once: the second claim of the same name and slot is refused, another slot is free', async () => {
    const slot = new Date('2026-01-01T03:00:00.000Z')
    expect(await claimScheduledRun(app.booted.core, 'test.claim', slot)).toBe(true)
    expect(await claimScheduledRun(app.booted.core, 'test.claim', slot)).toBe(false)
    expect(await claimScheduledRun(app.booted.core, 'test.claim', new Date(slot.getTime() + 1000))).toBe(true)
    expect(await claimScheduledRun(app.booted.core, 'test.other', slot)).toBe(true)
  })

  it('runs a once-a-second task once per second with two schedulers on one database, not once per scheduler', async () => {
    const name = `test.every-second.${target}`
    const runs: number[] = []
    const task = { name, cron: '* * * * * *', run: async () => void runs.push(Date.now()) }
    const stopFirst = startSchedules(app.booted.core, [task])
    const stopSecond = startSchedules(app.booted.core, [task])
    const started = Date.now()
    await Bun.sleep(3_500)
    stopFirst()
    stopSecond()
    await Bun.sleep(200)
    const seconds = Math.ceil((Date.now() - started) / 1000)
    const claims = await app.db.sql<{ n: number }>`select count(*)::int as n from core.schedule_runs where name = ${name}`
    expect(runs.length).toBeGreaterThanOrEqual(2)
    expect(runs.length).toBeLessThanOrEqual(seconds)
    expect(claims[0]!.n).toBe(runs.length)
  }, 15_000)
})

// Spec 3, milestones (admin only), through the real app on each database target: the default set seeded
// idempotently (twice, or twice at once, leaves one set with the same ids; a changed or stray row is put right),
// the list grouped and ordered by age with every age group and domain, and the milestone narrative's prompt carrying
// the requested age's milestones as the table holds them.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { MILESTONE_AGES_MONTHS, MILESTONE_DOMAINS } from '../plugins/clinical/defaults/milestones'
import { defaultMilestones, milestoneAgeGroup } from '../plugins/clinical/services/milestones'
import { startAiServer, TEST_MODEL, type AiServer } from './support/ai-server'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import { flushAudit, freshIp, MOBILE, userWithSession, type SignedIn } from './support/clinical'

setDefaultTimeout(30_000)

interface MilestoneBody { id: number; ageMonths: number; ageLabel: string; domain: string; domainLabel: string; text: string; sort: number }

describe('the age group a patient age names', () => {
  it.each([
    ['9 months', 9], ['9 mo', 9], ['18mos', 18], ['2 years', 24], ['2-year-old', 24], ['3 yo', 36], ['1 year 3 months', 15],
    ['10 months', 9], ['8 weeks', 2], ['26 weeks', 6], ['5 years', 60], ['5 y 11 m', 60], ['24 months', 24], ['1.5 years', 18],
  ])('%s -> %d months', (age, months) => expect(milestoneAgeGroup(age)).toBe(months as never))

  it.each(['6 years', '4 weeks', 'newborn', '9', '', '15 minutes'])('%s names none', (age) => expect(milestoneAgeGroup(age)).toBeNull())
})

describe('the default set', () => {
  it('covers every age group and domain, a few plain lines each, with unique keys', () => {
    const rows = defaultMilestones()
    for (const age of MILESTONE_AGES_MONTHS) {
      for (const domain of MILESTONE_DOMAINS) {
        const n = rows.filter((m) => m.ageMonths === age && m.domain === domain).length
        expect(n, `${age} ${domain}`).toBeGreaterThanOrEqual(1)
        expect(n, `${age} ${domain}`).toBeLessThanOrEqual(8)
      }
    }
    expect(new Set(rows.map((m) => m.key)).size).toBe(rows.length)
    for (const m of rows) expect(m.text.length, m.text).toBeLessThanOrEqual(120)
  })
})

for (const target of databaseTargets()) {
  describe(`admin milestones [${target}]`, () => {
    let t: TestApp
    let ai: AiServer
    let admin: SignedIn & { email: string }
    let clinician: SignedIn & { email: string }
    const DEFAULT_COUNT = defaultMilestones().length

    beforeAll(async () => {
      ai = await startAiServer()
      t = await startTestApp({ target, env: ai.env })
      admin = await userWithSession(t, 'admin')
      clinician = await userWithSession(t, 'user')
    })
    afterAll(async () => {
      await t.close()
      await ai.close()
    })

    const get = (token = admin.token) => t.get('/api/admin/milestones', { token, ip: freshIp(), headers: MOBILE })
    const seed = (token = admin.token) => t.post('/api/admin/milestones/seed', undefined, { token, ip: freshIp(), headers: MOBILE })
    const list = async () => {
      const res = await get()
      expect(res.status).toBe(200)
      return (await res.json()) as MilestoneBody[]
    }

    it('answers 401 without a token and 403 to a user or a moderator; nothing is seeded by them', async () => {
      const moderator = await userWithSession(t, 'moderator')
      expect((await t.get('/api/admin/milestones', { ip: freshIp() })).status).toBe(401)
      expect((await t.post('/api/admin/milestones/seed', undefined, { ip: freshIp(), headers: MOBILE })).status).toBe(401)
      for (const who of [clinician, moderator]) {
        expect((await get(who.token)).status).toBe(403)
        expect((await seed(who.token)).status).toBe(403)
      }
      expect(await list()).toEqual([])
    })

    it('seeding twice leaves one set: the same count and the same ids; the seed is audited', async () => {
      const first = await seed()
      expect(first.status).toBe(200)
      expect(await first.json()).toEqual({ success: true, count: DEFAULT_COUNT })
      const ids = (await list()).map((m) => m.id)
      expect(ids).toHaveLength(DEFAULT_COUNT)
      expect(await (await seed()).json()).toEqual({ success: true, count: DEFAULT_COUNT })
      expect((await list()).map((m) => m.id)).toEqual(ids)
      await flushAudit(t)
      const audited = await t.db.sql<{ user_id: number }>`select user_id from clinical.audit_log where action = 'milestones_seeded'`
      expect(audited).toHaveLength(2)
      expect(audited[0]!.user_id).toBe(admin.user.id)
    })

    it('two seeds at once still leave one set', async () => {
      const answers = await Promise.all([seed(), seed()])
      for (const res of answers) expect(await res.json()).toEqual({ success: true, count: DEFAULT_COUNT })
      const [row] = await t.db.sql<{ n: number }>`select count(*)::int as n from clinical.milestones`
      expect(row!.n).toBe(DEFAULT_COUNT)
    })

    it('a seed puts a changed text back and removes a row the set does not hold', async () => {
      const before = await list()
      const changed = before[5]!
      await t.db.sql`update clinical.milestones set text = 'changed by hand' where id = ${changed.id}`
      await t.db.sql`insert into clinical.milestones (key, age_months, domain, text, sort) values ('stray', 9, 'cognitive', 'stray', 0)`
      expect(await (await seed()).json()).toEqual({ success: true, count: DEFAULT_COUNT })
      expect(await list()).toEqual(before)
    })

    it('lists them grouped and ordered by age, then domain, with every age group and domain present', async () => {
      const all = await list()
      expect(Object.keys(all[0]!).sort()).toEqual(['ageLabel', 'ageMonths', 'domain', 'domainLabel', 'id', 'sort', 'text'])
      const order = (m: MilestoneBody) => [m.ageMonths, MILESTONE_DOMAINS.indexOf(m.domain as never), m.sort]
      const sorted = [...all].sort((a, b) => {
        const [x, y] = [order(a), order(b)]
        return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!
      })
      expect(all.map((m) => m.id)).toEqual(sorted.map((m) => m.id))
      expect([...new Set(all.map((m) => m.ageMonths))]).toEqual([...MILESTONE_AGES_MONTHS])
      for (const age of MILESTONE_AGES_MONTHS) {
        expect([...new Set(all.filter((m) => m.ageMonths === age).map((m) => m.domain))], `${age}`).toEqual([...MILESTONE_DOMAINS])
      }
      expect(all.find((m) => m.ageMonths === 9)).toMatchObject({ ageLabel: '9 months', domain: 'social_emotional', domainLabel: 'Social/emotional' })
      expect(all.find((m) => m.ageMonths === 36)!.ageLabel).toBe('3 years')
    })

    describe('the milestone narrative', () => {
      const narrative = async (patientAge: string) => {
        ai.reset()
        const res = await t.post('/api/generate-milestone-narrative', {
          milestones: ['sits without support: met', 'waves bye-bye: not yet'], patientAge, patientGender: 'female', model: TEST_MODEL,
        }, { token: clinician.token, ip: freshIp(), headers: MOBILE })
        expect(res.status).toBe(200)
        const chat = ai.requests.find((r) => r.path === '/v1/chat/completions')!
        return chat.body.messages.find((m: { role: string }) => m.role === 'user').content as string
      }
      const textsOf = async (age: number) => (await list()).filter((m) => m.ageMonths === age).map((m) => m.text)

      it('the prompt holds the default milestones of the requested age, and none of another age', async () => {
        const prompt = await narrative('9 months')
        expect(prompt).toContain('<expected_milestones age="9 months">')
        for (const text of await textsOf(9)) expect(prompt).toContain(text)
        for (const text of await textsOf(12)) expect(prompt).not.toContain(text)
        expect(prompt).toContain('sits without support: met')
      })

      it('reads them from the table: a changed row shows in the prompt; a 10-month-old gets the 9-month list', async () => {
        const [row] = await t.db.sql<{ id: number }>`select id from clinical.milestones where age_months = 9 order by sort limit 1`
        const marker = `reads-the-table-${crypto.randomUUID().slice(0, 8)}`
        await t.db.sql`update clinical.milestones set text = ${marker} where id = ${row!.id}`
        expect(await narrative('10 months')).toContain(marker)
        await seed()
      })

      it('an age that names no age group gets no reference list', async () => {
        expect(await narrative('7 years')).not.toContain('<expected_milestones')
        expect(await narrative('')).not.toContain('<expected_milestones')
      })
    })
  })
}

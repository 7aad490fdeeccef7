// The phone directory at scale: USERS users with ENTRIES entries each (1,000 x 1,000 = 1,000,000 rows), then
// GET /api/extensions through the real app: the full listing and `q` searches (a piece of a name, of a number, a
// location word, a miss) as a random signed-in user, p50/p95/p99; and POST /api/extensions/import of IMPORT new
// entries into a full directory (each rule then checks against the user's 1,000 entries), and the same as the
// zip through /import-file. On PostgreSQL and PGlite. Prints figures (and the plan of one search), asserts nothing.
//
//   bun scripts/bench/directory.ts   USERS=1000 ENTRIES=1000 QUERIES=300 IMPORTS=10 TARGETS=postgres,pglite
import { rmSync } from 'node:fs'
import { strToU8, zipSync } from 'fflate'
import { hashPassword } from '../../src/auth/password'
import { containsPattern } from '../../plugins/directory/service'
import { bootForBench, formatMs, freshDataDir, freshServerDatabase, redact, SERVER_URL, serverAvailable, timed } from './support'

const USERS = Number(process.env.USERS ?? 1000)
const ENTRIES = Number(process.env.ENTRIES ?? 1000)
const QUERIES = Number(process.env.QUERIES ?? 300)
const IMPORTS = Number(process.env.IMPORTS ?? 10)
const IMPORT_SIZE = 1000
const SIGNED_IN = 20
const TARGETS = (process.env.TARGETS ?? 'postgres,pglite').split(',')
const PASSWORD = 'bench-password-1'

const print = (target: string, what: string, f: { p50: number; p95: number; p99: number }, note = '') =>
  console.log(`${target.padEnd(9)} ${what.padEnd(34)} p50 ${formatMs(f.p50).padStart(7)} ms  p95 ${formatMs(f.p95).padStart(7)} ms  p99 ${formatMs(f.p99).padStart(7)} ms${note ? `  ${note}` : ''}`)

let ipSeq = 0
/** A fresh client address per request, so the per-address API limit never counts against the benchmark. */
const nextIp = () => `10.${(++ipSeq >> 16) & 255}.${(ipSeq >> 8) & 255}.${ipSeq & 255}`

async function run(target: string) {
  const dataDir = freshDataDir('bench-directory')
  const server = target === 'postgres' ? await freshServerDatabase('bench_directory') : null
  const booted = await bootForBench({ DATA_DIR: dataDir, DATABASE_URL: server?.url ?? 'memory://', TRUST_PROXY: 'true' })
  const { core } = booted
  const call = (path: string, init: RequestInit & { token: string }) => {
    const headers = new Headers(init.headers)
    headers.set('authorization', `Bearer ${init.token}`)
    headers.set('x-forwarded-for', nextIp())
    headers.set('x-client', 'mobile')
    return booted.fetch(new Request(`http://localhost${path}`, { ...init, headers }))
  }
  try {
    // Seed: the users, then their entries, one statement per 50 users (50,000 rows; a fresh database numbers the users
    // consecutively).
    const seedStart = performance.now()
    const hash = await hashPassword(PASSWORD)
    await core.db.sql`
      insert into clinical.users (name, email, password_hash, email_verified)
      select 'Bench ' || g, 'bench-' || g || '@example.test', ${hash}, true from generate_series(1, ${USERS}) g`
    const users = (await core.db.sql<{ id: number }>`select id from clinical.users order by id`).map((r) => r.id)
    const now = new Date()
    for (let i = 0; i < users.length; i += 50) {
      const ids = users.slice(i, i + 50)
      await core.db.sql`
        insert into clinical.phone_directory (user_id, location, name, number, type, notes, created_at, updated_at)
        select u, (array['Ward', 'ICU', 'ED', 'Theatre', 'Lab', 'Clinic', 'Radiology', 'Pharmacy'])[1 + g % 8] || ' ' || (g % 40),
               'Dr ' || substr(md5(u || '-' || g), 1, 8), (10000 + g)::text, case when g % 5 = 0 then 'pager' else 'extension' end,
               case when g % 3 = 0 then 'ask for ' || substr(md5(g || 'n'), 1, 6) else '' end, ${now}, ${now}
        from generate_series(${ids[0]!}::int, ${ids[ids.length - 1]!}::int) u, generate_series(1, ${ENTRIES}) g`
    }
    await core.db.sql`analyze clinical.phone_directory`
    const [{ n }] = (await core.db.sql<{ n: number }>`select count(*)::int as n from clinical.phone_directory`) as [{ n: number }]
    console.log(`${target}: ${USERS} users, ${n} entries seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)

    // Sign in a sample of the users (the search runs as one of them at random).
    const tokens: Array<{ id: number; token: string }> = []
    for (let i = 0; i < SIGNED_IN; i++) {
      const id = users[Math.floor((i * users.length) / SIGNED_IN)]!
      const res = await booted.fetch(new Request('http://localhost/api/auth/login', {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': nextIp(), 'x-client': 'mobile' },
        body: JSON.stringify({ email: `bench-${users.indexOf(id) + 1}@example.test`, password: PASSWORD }),
      }))
      if (res.status !== 200) throw new Error(`login answered ${res.status}: ${await res.text()}`)
      tokens.push({ id, token: ((await res.json()) as { token: string }).token })
    }
    const who = (i: number) => tokens[i % tokens.length]!

    // Searches: the whole listing, then q of several kinds.
    const namePiece = async (userId: number, i: number) => {
      const [row] = await core.db.sql<{ name: string }>`select name from clinical.phone_directory where user_id = ${userId} order by id offset ${i % ENTRIES} limit 1`
      return row!.name.slice(3 + (i % 3), 7 + (i % 3))
    }
    const kinds: Array<[string, (userId: number, i: number) => Promise<string> | string]> = [
      ['list (no q)', () => ''],
      ['q: 4 letters of a name', namePiece],
      ['q: part of a number', (_u, i) => String(10000 + (i * 37) % ENTRIES).slice(1, 4)],
      ['q: a location word', (_u, i) => ['icu', 'theatre', 'pharmacy', 'ward 1'][i % 4]!],
      ['q: no match', () => 'zzqx'],
    ]
    for (const [what, make] of kinds) {
      let found = 0
      const queries = await Promise.all(Array.from({ length: QUERIES + 5 }, (_, i) => Promise.resolve(make(who(i).id, i))))
      const f = await timed(QUERIES, async (i) => {
        const q = queries[i]!
        const res = await call(`/api/extensions${q ? `?q=${encodeURIComponent(q)}` : ''}`, { method: 'GET', token: who(i).token })
        if (res.status !== 200) throw new Error(`search answered ${res.status}: ${await res.text()}`)
        found += ((await res.json()) as { items: unknown[] }).items.length
      }, 5)
      print(target, `GET /api/extensions ${what}`, f, `mean ${Math.round(found / (QUERIES + 5))} items`)
    }
    const pattern = containsPattern('icu')
    const plan = await core.db.sql<{ 'QUERY PLAN': string }>`
      explain analyze select id from clinical.phone_directory
      where user_id = ${who(0).id} and trashed_at is null
        and (location || E'\n' || name || E'\n' || number || E'\n' || notes) ilike ${pattern}
      order by location, name, id`
    console.log(`${target}: plan of q=icu\n  ${plan.map((r) => Object.values(r)[0]).join('\n  ')}`)

    // Imports of IMPORT_SIZE new entries into a full directory: JSON, then the zip.
    const batch = (k: number) => Array.from({ length: IMPORT_SIZE }, (_, i) => ({
      location: `Imported ${k}`, name: `Person ${k}-${i}`, number: `${500000 + k * IMPORT_SIZE + i}`, type: 'extension', notes: '',
    }))
    let imported = 0
    const json = await timed(IMPORTS, async (i) => {
      const res = await call('/api/extensions/import', {
        method: 'POST', token: who(i).token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: batch(i) }),
      })
      if (res.status !== 200) throw new Error(`import answered ${res.status}: ${await res.text()}`)
      imported += ((await res.json()) as { imported: number }).imported
    }, 5)
    print(target, `POST import ${IMPORT_SIZE} (JSON)`, json, `${imported} imported in all`)
    imported = 0
    const zipped = await timed(IMPORTS, async (i) => {
      const file = { format: 'app-phone-directory', version: 1, exported_at: new Date().toISOString(), items: batch(1000 + i) }
      const form = new FormData()
      form.append('file', new File([zipSync({ 'app-extensions.json': strToU8(JSON.stringify(file)) })], 'app-extensions.zip'))
      const res = await call('/api/extensions/import-file', { method: 'POST', token: who(i).token, body: form })
      if (res.status !== 200) throw new Error(`import-file answered ${res.status}: ${await res.text()}`)
      imported += ((await res.json()) as { imported: number }).imported
    }, 5)
    print(target, `POST import-file ${IMPORT_SIZE} (zip)`, zipped, `${imported} imported in all`)
  } finally {
    await booted.shutdown()
    await server?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

for (const target of TARGETS) {
  if (target === 'postgres' && !(await serverAvailable())) {
    console.log(`postgres: no server at ${redact(SERVER_URL)}, skipped`)
    continue
  }
  await run(target)
}

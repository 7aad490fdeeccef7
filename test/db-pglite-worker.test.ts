// The embedded PGlite on its own thread (src/core/db-pglite-worker.ts) keeps the Db contract of PGlite on the
// calling thread: the same row types, errors with their SQLSTATE, transactions that commit or roll back, the root
// handle joining an open transaction from inside its callback, other queries waiting for it, close and dumps.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isUniqueViolation, openDb, pgErrorCode, type Db } from '../src/core/db'
import { openPgliteWorker } from '../src/core/db-pglite-worker'
import { ROOT_DIR } from '../src/app'
import { rejection } from './support/wait'

class Rollback extends Error {}

/** One of each type the services read, including the edges (an int8 past 2^53, NULL, arrays, jsonb). */
const EVERY_TYPE = `
  select 42::int8 as int8, 9007199254740993::int8 as int8_huge, 7::int4 as int4, 3::int2 as int2, 1.5::float8 as float8,
    '12.30'::numeric as numeric, 'text' as text, 'v'::varchar as varchar, true as bool, null::text as null_text,
    '2024-01-02 03:04:05.678+00'::timestamptz as timestamptz, '2024-01-02 03:04:05'::timestamp as timestamp,
    '2024-01-02'::date as date, '1 day 02:00'::interval as interval, '\\x00ff10'::bytea as bytea,
    '{"a": [1, "2", null], "b": {"c": true}}'::jsonb as jsonb, '{"x": 1}'::json as json,
    array[1, 2]::int8[] as int8_array, array['a', null]::text[] as text_array,
    '3f1c9a8e-7d52-4c3b-9e1a-2b6d4f8c0a11'::uuid as uuid`

describe('PGlite on its own thread', () => {
  let db: Db
  let local: Db
  beforeAll(async () => {
    ;[db, local] = await Promise.all([
      openPgliteWorker({ url: 'memory://', dataDir: tmpdir() }),
      openDb({ url: 'memory://', dataDir: tmpdir(), pgliteThread: false }),
    ])
    for (const d of [db, local]) {
      await d.exec(`
        create table item (id bigint generated always as identity primary key, name text not null unique, n int);
        create table note (id int primary key, body text)`)
    }
  }, 120_000)
  afterAll(async () => {
    await Promise.all([db?.close(), local?.close()])
  })

  it('answers every column type as PGlite on the calling thread does (Date, number, bigint past 2^53, Uint8Array, jsonb)', async () => {
    const [row] = await db.sql([EVERY_TYPE] as unknown as TemplateStringsArray)
    const [same] = await local.sql([EVERY_TYPE] as unknown as TemplateStringsArray)
    expect(row).toEqual(same!)
    const r = row as Record<string, unknown>
    expect(r.int8).toBe(42)
    expect(r.int8_huge).toBe(9007199254740993n)
    expect(r.numeric).toBe('12.30')
    expect(r.timestamptz).toBeInstanceOf(Date)
    expect((r.timestamptz as Date).toISOString()).toBe('2024-01-02T03:04:05.678Z')
    expect(r.date).toBeInstanceOf(Date)
    expect(r.bytea).toBeInstanceOf(Uint8Array)
    expect([...(r.bytea as Uint8Array)]).toEqual([0, 255, 16])
    expect(r.jsonb).toEqual({ a: [1, '2', null], b: { c: true } })
    expect(r.int8_array).toEqual([1, 2])
    expect(r.text_array).toEqual(['a', null])
    expect(r.null_text).toBeNull()
    for (const key of Object.keys(same!)) {
      expect(Object.prototype.toString.call(r[key])).toBe(Object.prototype.toString.call((same as Record<string, unknown>)[key]))
    }
  })

  it('takes parameters of every kind the services pass: Buffer, Date, objects for jsonb, arrays, null', async () => {
    const when = new Date('2025-05-06T07:08:09.010Z')
    const [row] = await db.sql<Record<string, unknown>>`
      select ${Buffer.from([1, 2, 3])}::bytea as bytes, ${when}::timestamptz as at, ${{ k: [1, { z: null }] }}::jsonb as doc,
        ${[3, 4]}::int[] as ints, ${null}::text as nothing, ${'O\'Brien'} as quoted, ${12345678901}::int8 as big`
    expect([...(row!.bytes as Uint8Array)]).toEqual([1, 2, 3])
    expect(row!.at).toEqual(when)
    expect(row!.doc).toEqual({ k: [1, { z: null }] })
    expect(row!.ints).toEqual([3, 4])
    expect(row!.nothing).toBeNull()
    expect(row!.quoted).toBe("O'Brien")
    expect(row!.big).toBe(12345678901)
  })

  it('a failed query rejects with the SQLSTATE and the fields of PGlite\'s error, not the query or its parameters', async () => {
    await db.sql`insert into item (name) values (${'unique-name'})`
    const err = await db.sql`insert into item (name) values (${'unique-name'})`.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect(pgErrorCode(err)).toBe('23505')
    expect(isUniqueViolation(err)).toBe(true)
    const same = await local.sql`insert into item (name) values (${'x'}), (${'x'})`.catch((e: unknown) => e)
    expect(isUniqueViolation(same)).toBe(true)
    const e = err as Error & Record<string, unknown>
    expect(e.message).toBe('duplicate key value violates unique constraint "item_name_key"')
    expect(e.constraint).toBe('item_name_key')
    expect(e.table).toBe('item')
    expect(e.detail).toBe('Key (name)=(unique-name) already exists.')
    expect(e.query).toBeUndefined()
    expect(e.params).toBeUndefined()
    expect(pgErrorCode(await db.sql`selec 1`.catch((x: unknown) => x))).toBe('42601')
    expect(pgErrorCode(await db.exec('select 1/0').catch((x: unknown) => x))).toBe('22012')
    // The connection is usable after a failure.
    expect(await db.sql`select 1 as one`).toEqual([{ one: 1 }])
  })

  it('refuses undefined and a parameter that cannot cross the thread with an error, and goes on', async () => {
    expect(() => db.sql`select ${undefined}`).toThrow(/undefined passed as SQL parameter/)
    expect(await rejection(db.sql`select ${(() => 1) as unknown}::text`)).toBeInstanceOf(Error)
    expect(await db.sql`select 2 as two`).toEqual([{ two: 2 }])
  })

  it('a query text sent again after its table changed its column types gets its parameters in the new types', async () => {
    const insert = (v: unknown) => db.sql`insert into shape values (${v})`
    await db.sql`create table shape (v jsonb)`
    await insert({ a: [1, 2] })
    expect(await db.sql`select v from shape`).toEqual([{ v: { a: [1, 2] } }])
    await db.sql`drop table shape`
    await db.sql`create table shape (v int[])`
    await insert([1, 2])
    expect(await db.sql`select v from shape`).toEqual([{ v: [1, 2] }])
  })

  it('each query text is prepared once and stays right after the table it reads changes shape, by sql or by exec', async () => {
    const all = () => db.sql`select * from wide order by a`
    const prepared = async () => (await db.sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`)[0]!.n
    await db.sql`create table wide (a int)`
    await db.sql`insert into wide values (${1})`
    expect(await all()).toEqual([{ a: 1 }])
    const before = await prepared()
    expect(before).toBeGreaterThan(0)
    expect(await all()).toEqual([{ a: 1 }])
    expect(await prepared()).toBe(before) // the second run reused the first one's statement
    await db.sql`alter table wide add column b text`
    expect(await all()).toEqual([{ a: 1, b: null }])
    await db.exec(`alter table wide drop column b; alter table wide add column c int default 7`)
    expect(await all()).toEqual([{ a: 1, c: 7 }])
    // A text that fails to parse keeps no statement, and the same text fails the same way again.
    for (let i = 0; i < 2; i++) expect(pgErrorCode(await rejection(db.sql`select * frm wide where a = ${1}`))).toBe('42601')
    await db.sql`drop table wide`
  })

  it('keeps the 300 statements used last: past that the one used longest ago is closed, and prepared again if it comes back', async () => {
    const distinct = (i: number) => db.sql([`select ${i} as n, `, '::int as v'] as unknown as TemplateStringsArray, i)
    const prepared = async () => (await db.sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`)[0]!.n
    const hot = () => db.sql<{ one: number }>`select 1 as one where ${1}::int = 1`
    await hot()
    for (let i = 0; i < 400; i++) {
      expect(await distinct(i)).toEqual([{ n: i, v: i }])
      if (i % 50 === 0) expect(await hot()).toEqual([{ one: 1 }]) // used again: kept
    }
    expect(await prepared()).toBeLessThanOrEqual(300)
    expect(await prepared()).toBeGreaterThanOrEqual(290)
    const names = await db.sql<{ statement: string }>`select statement from pg_prepared_statements`
    expect(names.some((r) => r.statement === 'select 1 as one where $1::int = 1')).toBe(true)
    expect(names.some((r) => r.statement === 'select 0 as n, $1::int as v')).toBe(false)
    expect(await distinct(0)).toEqual([{ n: 0, v: 0 }])
  })

  it('exec runs several statements', async () => {
    await db.exec(`insert into note values (1, 'a'); insert into note values (2, 'b'); update note set body = 'c' where id = 2`)
    expect(await db.sql`select id, body from note where id in (1, 2) order by id`).toEqual([{ id: 1, body: 'a' }, { id: 2, body: 'c' }])
  })

  it('a transaction commits what its callback wrote and answers its value', async () => {
    const value = await db.transaction(async (tx) => {
      await tx.sql`insert into note values (10, 'committed')`
      expect(await tx.sql`select body from note where id = 10`).toEqual([{ body: 'committed' }])
      return 'done'
    })
    expect(value).toBe('done')
    expect(await db.sql`select body from note where id = 10`).toEqual([{ body: 'committed' }])
  })

  it('a callback that throws rolls everything back and its own error reaches the caller', async () => {
    const thrown = new Rollback('nope')
    expect(await rejection(db.transaction(async (tx) => {
      await tx.sql`insert into note values (11, 'rolled back')`
      await tx.transaction((inner) => inner.sql`insert into note values (12, 'nested')`)
      throw thrown
    }))).toBe(thrown)
    expect(await db.sql`select id from note where id in (11, 12)`).toEqual([])
  })

  it('a failed statement inside a transaction rolls it back with that statement\'s SQLSTATE', async () => {
    const err = await db.transaction(async (tx) => {
      await tx.sql`insert into note values (13, 'first')`
      await tx.sql`insert into note values (13, 'again')`
    }).catch((e: unknown) => e)
    expect(pgErrorCode(err)).toBe('23505')
    expect(await db.sql`select id from note where id = 13`).toEqual([])
  })

  it('a commit the database refuses rejects (a deferred constraint checked at COMMIT)', async () => {
    await db.exec(`create table parent (id int primary key);
      create table child (id int primary key, parent_id int references parent deferrable initially deferred)`)
    const err = await db.transaction((tx) => tx.sql`insert into child values (1, 99)`).catch((e: unknown) => e)
    expect(pgErrorCode(err)).toBe('23503')
    expect(await db.sql`select id from child`).toEqual([])
  })

  it('inside a transaction\'s callback the root handle joins it: its queries, exec and transaction see and share its writes', async () => {
    expect(await rejection(db.transaction(async (tx) => {
      await tx.sql`insert into note values (20, 'in tx')`
      expect(await db.sql`select body from note where id = 20`).toEqual([{ body: 'in tx' }])
      await db.exec(`insert into note values (21, 'root exec')`)
      await db.transaction((again) => again.sql`insert into note values (22, 'root transaction')`)
      expect((await tx.sql`select id from note where id between 20 and 22 order by id`).length).toBe(3)
      throw new Rollback()
    }))).toBeInstanceOf(Rollback)
    expect(await db.sql`select id from note where id between 20 and 22`).toEqual([])
  })

  it('a query from outside a transaction waits until it ends: it never sees, or lands in, the open transaction', async () => {
    const events: string[] = []
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    // Started before the transaction, so its context is not the transaction's.
    const outside = (async () => {
      await released
      const rows = await db.sql<{ id: number }>`select id from note where id = 30`
      events.push('outside answered')
      return rows
    })()
    expect(await rejection(db.transaction(async (tx) => {
      await tx.sql`insert into note values (30, 'uncommitted')`
      release()
      await Bun.sleep(100)
      events.push('transaction ending')
      throw new Rollback()
    }))).toBeInstanceOf(Rollback)
    expect(await outside).toEqual([])
    expect(events).toEqual(['transaction ending', 'outside answered'])
  })

  it('transactions from separate callers run one after the other, each seeing the one before', async () => {
    await db.sql`insert into note values (40, '0')`
    await Promise.all(Array.from({ length: 8 }, () => db.transaction(async (tx) => {
      const [row] = await tx.sql<{ body: string }>`select body from note where id = 40`
      await Bun.sleep(1)
      await tx.sql`update note set body = ${String(Number(row!.body) + 1)} where id = 40`
    })))
    expect(await db.sql`select body from note where id = 40`).toEqual([{ body: '8' }])
  })

  it('many queries in flight at once all get their own answers', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => db.sql<{ n: number }>`select ${i}::int as n`))
    expect(answers.map(([r]) => r!.n)).toEqual(Array.from({ length: 200 }, (_, i) => i))
  })

  it('dumpDataDir (also inside a transaction, as a backup snapshot takes it) starts another database with the same rows', async () => {
    await db.sql`insert into note values (50, 'dumped')`
    const dump = await db.transaction((tx) => tx.dumpDataDir!())
    expect(dump).toBeInstanceOf(Blob)
    const copy = await openPgliteWorker({ url: 'memory://', dataDir: tmpdir(), pgliteTemplate: dump })
    try {
      expect(await copy.sql`select body from note where id = 50`).toEqual([{ body: 'dumped' }])
      await copy.sql`insert into note values (51, 'only in the copy')`
      expect(await db.sql`select id from note where id = 51`).toEqual([])
    } finally {
      await copy.close()
    }
  })
})

describe('PGlite on its own thread, file-backed and closing', () => {
  it('keeps its data in DATA_DIR/pg across a close and a new open, and loads pgvector when asked', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pglite-worker-'))
    try {
      const first = await openPgliteWorker({ url: null, dataDir, vector: true })
      await first.exec(`create extension vector; create extension pg_trgm;
        create table kept (id int primary key, v vector(3)); insert into kept values (1, '[1,2,3]')`)
      await first.close()
      const again = await openPgliteWorker({ url: null, dataDir, vector: true })
      try {
        expect(await again.sql`select id, v::text as v from kept`).toEqual([{ id: 1, v: '[1,2,3]' }])
      } finally {
        await again.close()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  it('close lets what was asked before it finish, then every query rejects; a second close is harmless', async () => {
    const db = await openPgliteWorker({ url: 'memory://', dataDir: tmpdir() })
    const before = db.sql`select 1 as one`
    await db.close()
    expect(await before).toEqual([{ one: 1 }])
    expect((await rejection(db.sql`select 1`)).message).toMatch(/closed/)
    await db.close()
  })

  it('close rolls back a transaction left open', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pglite-worker-'))
    try {
      const db = await openPgliteWorker({ url: null, dataDir })
      await db.exec('create table t (id int)')
      let entered!: () => void
      const inside = new Promise<void>((resolve) => (entered = resolve))
      const stuck = db.transaction(async (tx) => {
        await tx.sql`insert into t values (1)`
        entered()
        await new Promise(() => {}) // never ends by itself
      })
      await inside
      await db.close()
      void stuck
      const again = await openPgliteWorker({ url: null, dataDir })
      expect(await again.sql`select id from t`).toEqual([])
      await again.close()
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, 60_000)

  it('the thread keeps the process alive only while a query is under way', async () => {
    const script = `
      import { openPgliteWorker } from ${JSON.stringify(join(ROOT_DIR, 'src/core/db-pglite-worker.ts'))}
      const db = await openPgliteWorker({ url: 'memory://', dataDir: '/tmp' })
      db.sql\`select 'answered' as a\`.then((rows) => console.log(rows[0].a))`
    const proc = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'pipe' })
    const exited = await Promise.race([proc.exited, Bun.sleep(60_000).then(() => 'still running')])
    if (exited === 'still running') proc.kill()
    expect(exited).toBe(0)
    expect((await new Response(proc.stdout).text()).trim()).toBe('answered')
  }, 90_000)
})

// Migrations (src/core/migrate.ts) on each database target: once each, in order, recorded, and a failing file
// leaves nothing of itself behind.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb, rawSql, type Db } from '../src/core/db'
import { migrate, MigrationError, type MigrationSource } from '../src/core/migrate'
import { databaseTargets, freshServerDatabase, type DatabaseTarget } from './support/app'

const CORE_SQL = join(import.meta.dir, '..', 'sql')

/** A folder of migration files, as a plugin's sql/ folder. */
function sqlFolder(root: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'sql-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

/** A schema name of its own per test, so tests share one database without colliding. */
const uniqueSchema = () => `m_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`

for (const target of databaseTargets()) {
  describe(`migrations [${target}]`, () => {
    let db: Db
    let root: string
    let server: Awaited<ReturnType<typeof freshServerDatabase>> | null = null
    const exists = async (name: string) =>
      (await db.sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`)[0]!.found
    const recorded = async (owner: string) =>
      (await db.sql<{ name: string }>`select name from core.migrations where name like ${owner + '/%'} order by name`).map((r) => r.name)

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'migrate-test-'))
      if (target === 'postgres') server = await freshServerDatabase()
      db = await openDb({ url: server?.url ?? 'memory://', dataDir: root, poolSize: 4 })
    }, 60_000)
    afterAll(async () => {
      await db.close()
      await server?.drop()
      rmSync(root, { recursive: true, force: true })
    }, 30_000)

    it('applies the core files to an empty database and records each in core.migrations', async () => {
      const applied = await migrate(db, [{ owner: 'core', dir: CORE_SQL }])
      expect(applied).toContain('core/001_core.sql')
      expect(await exists('core.jobs')).toBe(true)
      expect(await recorded('core')).toEqual(applied.filter((n) => n.startsWith('core/')).sort())
    })

    it('applies each file once, in file-name order; a second run applies nothing', async () => {
      const schema = uniqueSchema()
      const owner = `plugin_${schema}`
      const dir = sqlFolder(root, {
        // 002 needs 001's table and 010 needs 002's column: only name order works
        '010_index.sql': `create index on ${schema}.entry (department);`,
        '001_entry.sql': `create schema ${schema}; create table ${schema}.entry (id int primary key, name text not null);`,
        '002_department.sql': `alter table ${schema}.entry add column department text; insert into ${schema}.entry values (1, 'Ward 4', 'A');`,
        'README.md': 'not a migration',
      })
      const first = await migrate(db, [{ owner, dir }])
      expect(first).toEqual([`${owner}/001_entry.sql`, `${owner}/002_department.sql`, `${owner}/010_index.sql`])
      expect(await recorded(owner)).toEqual(first)

      expect(await migrate(db, [{ owner, dir }])).toEqual([])
      // Run twice, the insert of 002 would have failed on the primary key or left two rows.
      const rows = await db.sql<{ n: number }>`select count(*)::int as n from ${rawName(schema, 'entry')}`
      expect(rows[0]!.n).toBe(1)
    })

    it('a new file added later is the only one applied on the next run', async () => {
      const schema = uniqueSchema()
      const owner = `plugin_${schema}`
      const dir = sqlFolder(root, { '001_a.sql': `create schema ${schema}; create table ${schema}.a (id int);` })
      expect(await migrate(db, [{ owner, dir }])).toEqual([`${owner}/001_a.sql`])
      writeFileSync(join(dir, '002_b.sql'), `create table ${schema}.b (id int);`)
      expect(await migrate(db, [{ owner, dir }])).toEqual([`${owner}/002_b.sql`])
      expect(await exists(`${schema}.b`)).toBe(true)
    })

    it('a failing file throws MigrationError naming the file and the database error, and leaves nothing of itself applied', async () => {
      const schema = uniqueSchema()
      const owner = `plugin_${schema}`
      const dir = sqlFolder(root, {
        '001_ok.sql': `create schema ${schema}; create table ${schema}.ok (id int);`,
        // the first statement succeeds, the second fails: the whole file must roll back
        '002_bad.sql': `create table ${schema}.half (id int); insert into ${schema}.missing values (1);`,
        '003_after.sql': `create table ${schema}.after (id int);`,
      })
      const err = await migrate(db, [{ owner, dir }]).then(() => null, (e: unknown) => e)
      expect(err).toBeInstanceOf(MigrationError)
      const failure = err as MigrationError
      expect(failure.file).toBe(`${owner}/002_bad.sql`)
      expect(failure.message).toContain(`${owner}/002_bad.sql`)
      expect(failure.message).toContain(`"${schema}.missing" does not exist`)
      expect(failure.cause).toBeDefined()

      expect(await exists(`${schema}.ok`)).toBe(true)
      expect(await exists(`${schema}.half`)).toBe(false)
      expect(await exists(`${schema}.after`)).toBe(false)
      expect(await recorded(owner)).toEqual([`${owner}/001_ok.sql`])

      // Once the file is fixed, the next start applies it and the ones after it.
      writeFileSync(join(dir, '002_bad.sql'), `create table ${schema}.half (id int);`)
      expect(await migrate(db, [{ owner, dir }])).toEqual([`${owner}/002_bad.sql`, `${owner}/003_after.sql`])
    })

    it('applies the sources in the order given: core first, then the plugins, so plugin files can use core tables', async () => {
      const schema = uniqueSchema()
      const coreDir = sqlFolder(root, {
        '001_base.sql': `create schema ${schema}; create table ${schema}.base (id int primary key);`,
      })
      const pluginDir = sqlFolder(root, {
        // sorts before the core file by name; it must still run after it
        '000_uses_core.sql': `create table ${schema}.child (base_id int references ${schema}.base (id));`,
      })
      const sources: MigrationSource[] = [
        { owner: `core_${schema}`, dir: coreDir },
        { owner: `aaa_${schema}`, dir: pluginDir },
        { owner: `absent_${schema}`, dir: join(root, 'no-such-folder') },
      ]
      const applied = await migrate(db, sources)
      expect(applied).toEqual([`core_${schema}/001_base.sql`, `aaa_${schema}/000_uses_core.sql`])
      const order = await db.sql<{ name: string }>`
        select name from core.migrations where name = any(${applied}::text[]) order by applied_at`
      expect(order.map((r) => r.name)).toEqual(applied)
    })

    it('two processes migrating at once apply each file exactly once', async () => {
      const schema = uniqueSchema()
      const owner = `plugin_${schema}`
      const dir = sqlFolder(root, {
        '001_a.sql': `create schema ${schema}; create table ${schema}.counter (n int);`,
        '002_b.sql': `insert into ${schema}.counter values (1);`,
        '003_c.sql': `insert into ${schema}.counter values (1);`,
      })
      // On a server: a second connection pool stands for the second process.
      const other = server ? await openDb({ url: server.url, dataDir: root, poolSize: 2 }) : db
      try {
        const [a, b] = await Promise.all([migrate(db, [{ owner, dir }]), migrate(other, [{ owner, dir }])])
        expect([...a, ...b].sort()).toEqual([`${owner}/001_a.sql`, `${owner}/002_b.sql`, `${owner}/003_c.sql`])
        const rows = await db.sql<{ n: number }>`select count(*)::int as n from ${rawName(schema, 'counter')}`
        expect(rows[0]!.n).toBe(2)
      } finally {
        if (other !== db) await other.close()
      }
    })
  })
}

/** A schema.table name this file generated, as SQL text. */
function rawName(schema: string, table: string) {
  if (!/^m_[0-9a-f]+$/.test(schema)) throw new Error('unexpected schema name')
  return rawSql(`${schema}.${table}`)
}

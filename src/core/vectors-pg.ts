// The vector index in the database itself (pgvector): every process on a PostgreSQL server shares it, and a write
// made through a transaction-bound Core (core.transaction binds it) commits or rolls back with the caller's rows.
//
// One table per collection, vectors.collection_<n>, listed in vectors.collections with its dimension. The table's
// name is made from that registry's own number, never from the collection's name (a parameter everywhere), and its
// `vector(dims)` column refuses another length. A table of its own per collection (rather than one table with a
// collection column) gives each collection its own HNSW index over fixed dimensions, a build that holds only that
// collection's writes, and a drop that is a `drop table`, not a mass delete left to vacuum.
import { rawSql, type Db, type Fragment } from './db'
import {
  ANN_INDEX_MIN_ROWS, ANN_REFINE_FACTOR, checkId, checkName, VectorDimensionMismatch, type VectorMatch, type Vectors,
} from './vectors'

/** pgvector's HNSW indexes `vector` up to this many dimensions; longer vectors are indexed as half precision (halfvec). */
export const HNSW_VECTOR_MAX_DIMS = 2_000
/** halfvec's limit: a collection of longer vectors is always searched by a scan. */
export const HNSW_HALFVEC_MAX_DIMS = 4_000
/**
 * HNSW build and search breadth. On 100,000 vectors of the local embedder (PGlite, scripts/bench/vectors.ts), a
 * build with ef_construction 128 instead of pgvector's 64 took 1.5x as long and found 85% of the exact top 10 at
 * ef_search 256 instead of 79%; the build happens once per collection. ef_search is at least topK x ANN_REFINE_FACTOR.
 */
export const HNSW_EF_CONSTRUCTION = 128
export const HNSW_EF_SEARCH_MIN = 256
/** pgvector's ceiling for hnsw.ef_search; an index search returns at most that many matches, so more are a scan. */
const EF_SEARCH_MAX = 1_000
/** Memory for one index build: a graph that does not fit is built several times more slowly. */
export const ANN_BUILD_MEMORY = '1GB'
/** Records per insert statement (one parameter of JSON). */
const UPSERT_BATCH = 500
/** Around the set-up, so processes starting together do not race on `create ... if not exists`. */
const SETUP_LOCK_KEY = 727275

/** The database has no pgvector, or this role may not create it: the message says which. */
export class PgvectorUnavailable extends Error {}

interface Collection {
  number: number
  dims: number
  indexed: boolean
}

/**
 * Creates the extension (when the server has it and the role may), the `vectors` schema and its registry.
 * Throws PgvectorUnavailable when the extension cannot be had.
 */
async function setUp(db: Db): Promise<void> {
  const [state] = await db.sql<{ installed: boolean; available: boolean }>`
    select exists (select 1 from pg_extension where extname = 'vector') as installed,
           exists (select 1 from pg_available_extensions where name = 'vector') as available`
  if (!state?.installed && !state?.available) {
    throw new PgvectorUnavailable('the vector extension (pgvector) is not installed on the database server')
  }
  await db.transaction(async (tx) => {
    await tx.sql`select pg_advisory_xact_lock(${SETUP_LOCK_KEY})`
    try {
      await tx.sql`create extension if not exists vector`
    } catch (err) {
      // Typically 42501: only a superuser, or a role granted the extension as trusted, may create it.
      throw new PgvectorUnavailable(`create extension vector failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
    }
    await tx.exec(`
      create schema if not exists vectors;
      create table if not exists vectors.collections (
        name text primary key,
        -- names the collection's table, vectors.collection_<number>
        number integer generated always as identity unique,
        dims integer not null check (dims between 1 and 16000),
        -- the HNSW index has been built (maintain)
        indexed boolean not null default false,
        created_at timestamptz not null default now()
      );`)
  })
}

/** The pgvector index on `db`; a collection gets its HNSW index from maintain() at annIndexMinRows vectors. */
export async function openPgVectors(db: Db, opts: { annIndexMinRows?: number } = {}): Promise<Vectors> {
  await setUp(db)
  return pgVectors(db, opts.annIndexMinRows ?? ANN_INDEX_MIN_ROWS)
}

// Identifiers from the registry's own integers only.
const tableOf = (c: Collection): Fragment => rawSql(`vectors.collection_${integer(c.number)}`)
const integer = (n: number): number => {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`not a registry number: ${n}`)
  return n
}
/** The indexed expression and the query's cast: halfvec above what HNSW takes as `vector`. */
const annTerms = (dims: number): { column: Fragment; cast: Fragment; ops: Fragment } =>
  dims <= HNSW_VECTOR_MAX_DIMS
    ? { column: rawSql('embedding'), cast: rawSql(`vector(${integer(dims)})`), ops: rawSql('vector_cosine_ops') }
    : { column: rawSql(`(embedding::halfvec(${integer(dims)}))`), cast: rawSql(`halfvec(${integer(dims)})`), ops: rawSql('halfvec_cosine_ops') }

function pgVectors(db: Db, annIndexMinRows: number): Vectors {
  const find = async (q: Db, name: string): Promise<Collection | null> => {
    checkName(name)
    const [row] = await q.sql<Collection>`select number, dims, indexed from vectors.collections where name = ${name}`
    return row ?? null
  }
  /** The collection, created with this dimension when it is new (its registry row and table in the caller's transaction). */
  const findOrCreate = async (tx: Db, name: string, dims: number): Promise<Collection> => {
    const [created] = await tx.sql<Collection>`
      insert into vectors.collections (name, dims) values (${name}, ${dims})
      on conflict (name) do nothing
      returning number, dims, indexed`
    if (!created) return (await find(tx, name))!
    await tx.sql`create table ${tableOf(created)} (
      id text primary key,
      embedding vector(${rawSql(String(integer(dims)))}) not null,
      text text not null)`
    return created
  }
  const count = async (c: Collection) => {
    const [row] = await db.sql<{ n: number }>`select count(*)::int as n from ${tableOf(c)}`
    return row?.n ?? 0
  }
  const build = (name: string): Promise<'built' | 'unchanged'> =>
    db.transaction(async (tx) => {
      // The registry row's lock: one build per collection, whichever process's schedule gets there first.
      const [c] = await tx.sql<Collection>`select number, dims, indexed from vectors.collections where name = ${name} for update`
      if (!c || c.indexed || c.dims > HNSW_HALFVEC_MAX_DIMS) return 'unchanged'
      const { column, ops } = annTerms(c.dims)
      await tx.sql`select set_config('maintenance_work_mem', ${ANN_BUILD_MEMORY}, true)`
      const index = rawSql(`collection_${integer(c.number)}_ann`)
      const breadth = rawSql(String(HNSW_EF_CONSTRUCTION))
      await tx.sql`create index ${index} on ${tableOf(c)} using hnsw (${column} ${ops}) with (ef_construction = ${breadth})`
      await tx.sql`update vectors.collections set indexed = true where name = ${name}`
      return 'built'
    })
  const maintain = async (name: string): Promise<'built' | 'unchanged'> => {
    const c = await find(db, name)
    if (!c || c.indexed || c.dims > HNSW_HALFVEC_MAX_DIMS || (await count(c)) < annIndexMinRows) return 'unchanged'
    return build(name)
  }

  const vectors: Vectors = {
    backend: 'pgvector',
    bind: (tx) => pgVectors(tx, annIndexMinRows),
    async upsert(collection, records) {
      if (records.length === 0) return
      checkName(collection)
      for (const r of records) checkId(r.id)
      const dims = records[0]!.vector.length
      for (const r of records) if (r.vector.length !== dims) throw new VectorDimensionMismatch(collection, dims, r.vector.length)
      // One statement may not update a row twice: the last record of an id wins, as in LanceDB's merge.
      const rows = [...new Map(records.map((r) => [r.id, { id: r.id, embedding: JSON.stringify(r.vector), text: r.text }])).values()]
      await db.transaction(async (tx) => {
        const c = await findOrCreate(tx, collection, dims)
        if (c.dims !== dims) throw new VectorDimensionMismatch(collection, c.dims, dims)
        for (let i = 0; i < rows.length; i += UPSERT_BATCH) {
          await tx.sql`
            insert into ${tableOf(c)} (id, embedding, text)
            select r.id, r.embedding::vector, r.text
            from jsonb_to_recordset(${{ value: rows.slice(i, i + UPSERT_BATCH) }}::jsonb -> 'value') as r(id text, embedding text, text text)
            on conflict (id) do update set embedding = excluded.embedding, text = excluded.text`
        }
      })
    },
    async delete(collection, ids) {
      if (ids.length === 0) return
      for (const id of ids) checkId(id)
      const c = await find(db, collection)
      if (c) await db.sql`delete from ${tableOf(c)} where id = any(${ids}::text[])`
    },
    async drop(collection) {
      checkName(collection)
      await db.transaction(async (tx) => {
        const [c] = await tx.sql<Collection>`delete from vectors.collections where name = ${collection} returning number, dims, indexed`
        if (c) await tx.sql`drop table if exists ${tableOf(c)}`
      })
    },
    async search(collection, vector, { topK, minScore = -1, exact = false }) {
      const c = await find(db, collection)
      // An index built with another embedding model matches nothing until it is re-embedded (a job rebuilds it).
      if (!c || c.dims !== vector.length) return []
      const query = JSON.stringify(vector)
      let rows: VectorMatch[]
      if (exact || !c.indexed || topK > EF_SEARCH_MAX) {
        // Ordered by the score, not by the distance operator the index serves: always a scan, so the exact answer.
        // A zero vector has no direction (NaN); LanceDB leaves those out too.
        rows = await db.sql<VectorMatch>`
          select id, text, score from (
            select id, text, 1 - (embedding <=> ${query}::vector) as score from ${tableOf(c)} offset 0
          ) scored
          where score <> 'NaN'
          order by score desc
          limit ${topK}`
      } else {
        const { column, cast } = annTerms(c.dims)
        const ef = Math.min(EF_SEARCH_MAX, Math.max(HNSW_EF_SEARCH_MIN, topK * ANN_REFINE_FACTOR))
        rows = await db.transaction(async (tx) => {
          await tx.sql`select set_config('hnsw.ef_search', ${String(ef)}, true)`
          return tx.sql<VectorMatch>`
            select id, text, 1 - (embedding <=> ${query}::vector) as score from ${tableOf(c)}
            order by ${column} <=> ${query}::${cast}
            limit ${topK}`
        })
      }
      return rows.map((r) => ({ id: r.id, text: r.text, score: Number(r.score) })).filter((m) => m.score >= minScore)
    },
    maintain,
    async maintainAll() {
      const due = await db.sql<{ name: string }>`select name from vectors.collections where not indexed order by number`
      for (const { name } of due) await maintain(name)
    },
    async hasAnnIndex(collection) {
      return (await find(db, collection))?.indexed ?? false
    },
    async count(collection) {
      const c = await find(db, collection)
      return c ? count(c) : 0
    },
    close: () => {},
  }
  return vectors
}

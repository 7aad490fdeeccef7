// pg-boss's adapter hook (`db: { executeSql(text, values) }`) over the project's Db, so one adapter serves PGlite and
// the PostgreSQL server. Db takes tagged templates only: `$n` text is cut at its placeholders into a template with
// the values in textual order, which Db's compile() numbers again. pg-boss sends parameterless multi-statement
// scripts (schema, maintenance under an advisory lock, some wrapped in BEGIN ... COMMIT): they are split into
// statements and run one by one (PGlite's query() takes one statement, and Bun refuses BEGIN on a pooled
// connection), a BEGIN ... COMMIT script inside db.transaction.
import type { Db as BossDb } from 'pg-boss'
import type { Db } from '../../src/core/db'

const template = (parts: string[]) => Object.assign([...parts], { raw: parts }) as unknown as TemplateStringsArray

/** Splits a script at top-level semicolons: quotes, dollar quotes and comments are skipped whole. */
export function splitStatements(script: string): string[] {
  const out: string[] = []
  let start = 0
  let i = 0
  while (i < script.length) {
    const c = script[i]!
    const rest = script.slice(i)
    if (c === "'" || c === '"') {
      const close = script.indexOf(c, i + 1)
      i = close < 0 ? script.length : close + 1 // a doubled quote ('') is two strings back to back: same split
    } else if (rest.startsWith('--')) {
      const nl = script.indexOf('\n', i)
      i = nl < 0 ? script.length : nl + 1
    } else if (rest.startsWith('/*')) {
      const close = script.indexOf('*/', i + 2)
      i = close < 0 ? script.length : close + 2
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(rest)) {
      const tag = /^\$[A-Za-z_]*\$/.exec(rest)![0]
      const close = script.indexOf(tag, i + tag.length)
      i = close < 0 ? script.length : close + tag.length
    } else if (c === ';') {
      out.push(script.slice(start, i))
      i++
      start = i
    } else i++
  }
  out.push(script.slice(start))
  return out.map((s) => s.trim()).filter((s) => s.length > 0 && !/^(--[^\n]*\n?\s*)+$/.test(s))
}

/** Runs `$n` text on a Db: each placeholder becomes a template hole, repeated ones repeat their value. */
function query(db: Db, text: string, values: unknown[]): Promise<unknown[]> {
  const parts: string[] = []
  const ordered: unknown[] = []
  const re = /\$(\d+)/g
  let last = 0
  for (let m = re.exec(text); m; m = re.exec(text)) {
    parts.push(text.slice(last, m.index))
    ordered.push(values[Number(m[1]) - 1] ?? null) // pg reads undefined as null; Db refuses it
    last = re.lastIndex
  }
  parts.push(text.slice(last))
  return db.sql(template(parts), ...ordered)
}

async function script(db: Db, text: string): Promise<unknown[]> {
  const rows: unknown[] = []
  for (const statement of splitStatements(text)) rows.push(...(await db.sql(template([statement]))))
  return rows
}

/** The executeSql adapter for one Db handle (the root, or a transaction for enqueue inside the caller's). */
export function bossDb(db: Db): BossDb {
  return {
    async executeSql(text, values) {
      if (values && values.length > 0) return { rows: await query(db, text, values) }
      const tx = /^\s*BEGIN\s*;([\s\S]*?)COMMIT\s*;?\s*$/i.exec(text)
      if (tx) return { rows: await db.transaction((t) => script(t, tx[1]!)) }
      return { rows: await script(db, text) }
    },
  }
}

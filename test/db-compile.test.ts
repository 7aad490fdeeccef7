// compile (src/core/db.ts): a tagged template's text with $n placeholders, fragments inlined; the text of a call
// site is built once and reused (also with parameter-free fragments, while the same ones stand in the same places),
// and must come out as if built anew.
import { describe, expect, it } from 'bun:test'
import { compile, fragment, rawSql } from '../src/core/db'

const query = (strings: TemplateStringsArray, ...values: unknown[]) => compile(strings, values)
/** One call site, called with other values each time (the cache is per strings array). */
const site = (a: unknown, b: unknown) => query`select * from t where a = ${a} and b = ${b}`

describe('compile', () => {
  it('numbers the parameters in order, and gives the same text from the cache as built anew', () => {
    const first = site(1, 'x')
    expect(first).toEqual({ text: 'select * from t where a = $1 and b = $2', params: [1, 'x'] })
    expect(site(2, 'y')).toEqual({ text: first.text, params: [2, 'y'] })
  })

  it('a fragment at a call site that had none before is inlined, not taken from the cache', () => {
    site(1, 2)
    expect(site(fragment`lower(${'Q'})`, 3)).toEqual({ text: 'select * from t where a = lower($1) and b = $2', params: ['Q', 3] })
    expect(site(rawSql('now()'), 4)).toEqual({ text: 'select * from t where a = now() and b = $1', params: [4] })
    expect(site(5, 6)).toEqual({ text: 'select * from t where a = $1 and b = $2', params: [5, 6] })
  })

  it('a fragment of one value, the first call at its site, is not cached as the plain text', () => {
    const once = (v: unknown) => query`select ${v}`
    expect(once(fragment`${7} + 1`)).toEqual({ text: 'select $1 + 1', params: [7] })
    expect(once(8)).toEqual({ text: 'select $1', params: [8] })
  })

  it('undefined is refused, before and after the text is cached', () => {
    const at = (v: unknown) => query`select ${v}`
    expect(() => at(undefined)).toThrow(/undefined passed as SQL parameter after: select /)
    at(1)
    expect(() => at(undefined)).toThrow(/undefined passed as SQL parameter after: select /)
  })

  it('a parameter-free fragment (a column list) is kept with the text, and only while the same one stands there', () => {
    const columns = rawSql('id, name')
    const other = rawSql('id')
    const read = (cols: unknown, id: unknown, role: unknown) => query`select ${cols} from t where id = ${id} and role = ${role}`
    expect(read(columns, 1, 'a')).toEqual({ text: 'select id, name from t where id = $1 and role = $2', params: [1, 'a'] })
    expect(read(columns, 2, 'b')).toEqual({ text: 'select id, name from t where id = $1 and role = $2', params: [2, 'b'] })
    expect(read(other, 3, 'c')).toEqual({ text: 'select id from t where id = $1 and role = $2', params: [3, 'c'] })
    // The same fragment where a parameter stood, a fragment with parameters, and a plain value where the fragment stood.
    expect(read(other, other, 'd')).toEqual({ text: 'select id from t where id = id and role = $1', params: ['d'] })
    expect(read(other, fragment`${4} + 1`, 'e')).toEqual({ text: 'select id from t where id = $1 + 1 and role = $2', params: [4, 'e'] })
    expect(read(5, 6, 'f')).toEqual({ text: 'select $1 from t where id = $2 and role = $3', params: [5, 6, 'f'] })
    expect(() => read(other, undefined, 'g')).toThrow(/undefined passed as SQL parameter after:  from t where id = $/)
    expect(read(other, 7, 'h')).toEqual({ text: 'select id from t where id = $1 and role = $2', params: [7, 'h'] })
    expect(() => read(other, 8, undefined)).toThrow(/undefined passed as SQL parameter after:  and role = $/)
  })
})

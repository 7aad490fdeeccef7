// TypeBox building blocks that several plugins' models share.
import { Type, type IntegerOptions, type TInteger } from '@sinclair/typebox'
import { t } from 'elysia'

/** The largest value of a PostgreSQL `integer` column, which every identity id here is. */
export const INT4_MAX = 2_147_483_647

/**
 * The id of a row (path parameter or body field): a whole number from 1 to INT4_MAX, so a larger one is refused
 * by validation with the field named instead of failing in the query ("out of range for type integer").
 */
export const RowId = (description?: string) =>
  t.Integer({ minimum: 1, maximum: INT4_MAX, ...(description === undefined ? {} : { description }) })

/**
 * A whole number in a response model. Elysia's t.Integer is a transform over "an integer, or a string of one", what a
 * query string or a form field needs; a response only ever carries the number. As JSON Schema's plain integer the
 * documents say so, and Elysia's response mirror (exact-mirror, which keeps an answer to its schema's fields) copies
 * the field instead of trying each member of a union in a closure of its own, for every item of a list
 * (scripts/bench/README.md). Request models keep t.Integer.
 */
export const Int = (options?: IntegerOptions): TInteger => Type.Integer(options)

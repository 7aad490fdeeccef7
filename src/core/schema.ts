// TypeBox building blocks that several plugins' models share.
import { t } from 'elysia'

/** The largest value of a PostgreSQL `integer` column, which every identity id here is. */
export const INT4_MAX = 2_147_483_647

/**
 * The id of a row (path parameter or body field): a whole number from 1 to INT4_MAX, so a larger one is refused
 * by validation with the field named instead of failing in the query ("out of range for type integer").
 */
export const RowId = (description?: string) =>
  t.Integer({ minimum: 1, maximum: INT4_MAX, ...(description === undefined ? {} : { description }) })

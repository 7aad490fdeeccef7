// TypeBox models of spec 1's Favorites: a user's starred bank questions. The OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

export const FavoriteBody = t.Object({ question_id: RowId('The bank question to star') })
export const FavoriteParams = t.Object({ question_id: RowId() })

export const FavoriteResponse = t.Object({
  id: Int({ description: 'The favorite; the same id on every repeat of the same star' }),
  user_id: Int({ description: 'The caller' }),
  question_id: Int(),
  created_at: t.String({ format: 'date-time', description: 'When the question was first starred' }),
})

export const FavoriteIds = t.Array(Int(), { description: 'Ids of the caller\'s favorite questions, most recently starred first' })

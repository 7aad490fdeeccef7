// Spec 1, Favorites: a user's starred bank questions. Used by the favorites API, the bank's favorites_only filter
// and the bank page's star toggle.
import { HttpError } from '../../../src/core/errors'
import type { Core } from '../../../src/plugin'

export interface Favorite { id: number; user_id: number; question_id: number; created_at: string }
type FavoriteRow = Omit<Favorite, 'created_at'> & { created_at: Date }
const toFavorite = ({ created_at, ...row }: FavoriteRow): Favorite => ({ ...row, created_at: created_at.toISOString() })

/** POST /api/favorites: idempotent; a second call answers the favorite the first one made. 404 unknown question. */
export async function addFavorite(core: Core, userId: number, questionId: number): Promise<Favorite> {
  const [question] = await core.db.sql`select id from quiz.questions where id = ${questionId}`
  if (!question) throw HttpError.notFound('question_not_found', 'Question not found')
  // `do update` (a no-op write) makes `returning` give the existing row too, in one statement that a racing call cannot split.
  const [row] = await core.db.sql<FavoriteRow>`
    insert into quiz.favorites (user_id, question_id) values (${userId}, ${questionId})
    on conflict (user_id, question_id) do update set user_id = excluded.user_id
    returning id, user_id, question_id, created_at`
  return toFavorite(row!)
}

/** DELETE /api/favorites/{question_id}: true when there was one to remove. */
export async function removeFavorite(core: Core, userId: number, questionId: number): Promise<boolean> {
  const rows = await core.db.sql`delete from quiz.favorites where user_id = ${userId} and question_id = ${questionId} returning id`
  return rows.length > 0
}

/** GET /api/favorites: the ids of the user's favorite questions, most recently starred first. */
export async function favoriteIds(core: Core, userId: number): Promise<number[]> {
  const rows = await core.db.sql<{ question_id: number }>`
    select question_id from quiz.favorites where user_id = ${userId} order by created_at desc, id desc`
  return rows.map((r) => r.question_id)
}

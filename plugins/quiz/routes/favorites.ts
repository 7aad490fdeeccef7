// Spec 1, Favorites, the JSON API: each user stars bank questions for themselves. Routing, guards, validation and
// response shaping only; the rules are in services/favorites.ts.
import { Elysia } from 'elysia'
import { FavoriteBody, FavoriteIds, FavoriteParams, FavoriteResponse } from '../models/favorites'
import * as favorites from '../services/favorites'
import type { QuizState } from '../state'

const tags = ['Favorites']

export const favoriteRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/favorites' })
    .use(auth)
    // '' documents the path without a trailing slash (OpenAPI style); /api/favorites/ is served too.
    .post('', async ({ user, body, status }) => status(201, await favorites.addFavorite(core, user.id, body.question_id)), {
      role: 'user', body: FavoriteBody, response: { 201: FavoriteResponse },
      detail: {
        tags, summary: 'Star a question',
        description: [
          '201 with the favorite. Idempotent: starring a question that is already a favorite answers 201 with the existing',
          'favorite (same id and created_at) and adds nothing. 404 when the question is not in the bank.',
        ].join(' '),
      },
    })
    .get('', ({ user }) => favorites.favoriteIds(core, user.id), {
      role: 'user', response: FavoriteIds,
      detail: { tags, summary: 'The caller\'s favorite question ids', description: 'Only the caller\'s own favorites, most recently starred first.' },
    })
    .delete('/:question_id', async ({ user, params, set }) => {
      await favorites.removeFavorite(core, user.id, params.question_id)
      set.status = 204
    }, {
      role: 'user', params: FavoriteParams,
      detail: {
        tags, summary: 'Unstar a question',
        description: 'Idempotent: 204 whether or not the question was a favorite of the caller (or is in the bank at all); afterwards it is not.',
      },
    })

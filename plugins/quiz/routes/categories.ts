// Spec 1, Quiz categories and Question categories, the JSON API. Routing, guards, validation and response shaping
// only. `/quizzes/:quiz_id` is declared before `/:category_id`, so it is never read as a category id.
import { Elysia, t } from 'elysia'
import {
  AssignQuery, AssignResponse, CategoryParams, CATEGORY_NAME_MAX, CreatedQuiz, CreateQuizQuery, DeleteQuestionCategoryQuery,
  idOrNull, QuestionCategory, QuestionCategoryBody, QuestionCategoryParams, QuizCategory, QuizCategoryBody, QuizCategoryParams,
} from '../models/categories'
import * as categories from '../services/categories'
import type { QuizState } from '../state'

const NAME_RULE = `The name is trimmed and must be 1 to ${CATEGORY_NAME_MAX} characters (422 otherwise); a name already used, whatever its letter case, is refused with 409.`

export const categoryRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  const quizCategories = new Elysia({ prefix: '/api/categories' })
    .use(auth)
    // '' documents the path without a trailing slash (OpenAPI style); /api/categories/ is served too.
    .get('', () => categories.listQuizCategories(core), {
      role: 'user', response: t.Array(QuizCategory),
      detail: {
        tags: ['Quiz categories'], summary: 'List quiz categories',
        description: 'By name (A to Z, ignoring letter case). `quiz_count` counts the category\'s quizzes that are not in the trash, published or not.',
      },
    })
    .post('', ({ body }) => categories.createQuizCategory(core, body.name), {
      role: 'moderator', body: QuizCategoryBody, response: QuizCategory,
      detail: {
        tags: ['Quiz categories'], summary: 'Create a quiz category',
        description: `Answers the new category as CategoryResponse: \`{id, name, quiz_count}\` (quiz_count is 0). ${NAME_RULE}`,
      },
    })
    .patch('/quizzes/:quiz_id', ({ params, query }) => categories.setQuizCategory(core, params.quiz_id, idOrNull(query.category_id)), {
      role: 'moderator', params: QuizCategoryParams, query: AssignQuery, response: AssignResponse,
      detail: {
        tags: ['Quiz categories'], summary: 'Put a quiz in a category',
        description: [
          'Sets the quiz\'s category to `category_id`; without it (or with an empty value or `null`) the quiz becomes uncategorized.',
          '404 for an unknown quiz, a quiz in the trash (hidden like an unknown one) or an unknown category.',
        ].join(' '),
      },
    })
    .delete('/:category_id', async ({ params, set }) => {
      await categories.deleteQuizCategory(core, params.category_id)
      set.status = 204
    }, {
      role: 'moderator', params: CategoryParams,
      detail: {
        tags: ['Quiz categories'], summary: 'Delete a quiz category',
        description: '204. Its quizzes (those in the trash too) stay and become uncategorized. 404 unknown category.',
      },
    })

  const questionCategories = new Elysia({ prefix: '/api/question-categories' })
    .use(auth)
    .get('', () => categories.listQuestionCategories(core), {
      role: 'user', response: t.Array(QuestionCategory),
      detail: {
        tags: ['Question categories'], summary: 'List question categories',
        description: 'By name (A to Z, ignoring letter case). `question_count` counts the category\'s questions in the question bank.',
      },
    })
    .post('', ({ body }) => categories.createQuestionCategory(core, body), {
      role: 'moderator', body: QuestionCategoryBody, response: QuestionCategory,
      detail: {
        tags: ['Question categories'], summary: 'Create a question category',
        description: [
          'Answers the new category as QCatResponse: `{id, name, description, question_count}` (question_count is 0).',
          `${NAME_RULE} The description is optional; it is trimmed and a blank one is stored as null.`,
        ].join(' '),
      },
    })
    .patch('/:cat_id', ({ params, body }) => categories.updateQuestionCategory(core, params.cat_id, body), {
      role: 'moderator', params: QuestionCategoryParams, body: QuestionCategoryBody, response: QuestionCategory,
      detail: {
        tags: ['Question categories'], summary: 'Rename a question category or change its description',
        description: [
          'Answers QCatResponse: `{id, name, description, question_count}`. `name` is required.',
          `${NAME_RULE} \`description\`: a string sets it (blank: null), \`null\` clears it, leaving it out keeps it. 404 unknown category.`,
        ].join(' '),
      },
    })
    .delete('/:cat_id', async ({ params, query, set }) => {
      await categories.deleteQuestionCategory(core, params.cat_id, idOrNull(query.move_to))
      set.status = 204
    }, {
      role: 'moderator', params: QuestionCategoryParams, query: DeleteQuestionCategoryQuery,
      detail: {
        tags: ['Question categories'], summary: 'Delete a question category',
        description: [
          '204. In one step, the category\'s questions move to the category `move_to`, or, without it (or with an empty value or',
          '`null`), become uncategorized; the questions themselves stay in the bank. 404 unknown category; 400 when `move_to` is',
          'the category being deleted; 404 when `move_to` names no category. Nothing changes when the call fails.',
        ].join(' '),
      },
    })
    .post('/:cat_id/create-quiz', ({ user, params, query }) => categories.createQuizFromCategory(core, user.id, params.cat_id, {
      title: query.title, mode: query.mode ?? 'timed', time_limit_minutes: typeof query.time_limit_minutes === 'number' ? query.time_limit_minutes : null,
    }), {
      role: 'moderator', params: QuestionCategoryParams, query: CreateQuizQuery, response: CreatedQuiz,
      detail: {
        tags: ['Question categories'], summary: 'Make a quiz from a question category',
        description: [
          'A new quiz that references every question of the category (they are not copied), in the order they entered the bank',
          '(by question id). Answers `{id, title, questions_count}`. The quiz is unpublished and uncategorized, owned by the caller;',
          `read it at GET ${api}/quizzes/{id}. The title is trimmed and must not be blank (422). 404 unknown category; 400 when`,
          'the category has no questions.',
        ].join(' '),
      },
    })

  return new Elysia().use(quizCategories).use(questionCategories)
}

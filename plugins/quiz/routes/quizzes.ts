// Spec 1, Quizzes: reading, renaming, publishing and the trash of quizzes, and their questions, the JSON API.
// Routing, guards, validation and response shaping only. `trash` is declared before `/:quiz_id`.
import { Elysia, t } from 'elysia'
import {
  PublishQuery, PublishResponse, QuestionItem, QuestionPatch, QuizDetail, QuizListQuery, QuizParams, QuizQuestionParams, QuizResponse,
  QuizReview, QuizView, RenameBody, ShuffleQuery, StudyQuery,
} from '../models/quizzes'
import * as quizzes from '../services/quizzes'
import type { QuizState } from '../state'

const tags = ['Quizzes']
const TRASH_HIDES = 'A quiz in the trash is hidden: 404, as for an unknown quiz.'

export const quizzesRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/quizzes' })
    .use(auth)
    // '' documents the path without a trailing slash (OpenAPI style); /api/quizzes/ is served too.
    .get('', ({ user, query }) => quizzes.listQuizzes(core, user, query), {
      role: 'user', query: QuizListQuery, response: t.Array(QuizResponse),
      detail: {
        tags, summary: 'List quizzes',
        description: [
          'Newest first. Moderators see every quiz that is not in the trash, published or not; other users see published quizzes only.',
          '`category_id` keeps the quizzes of one quiz category (an unknown category gives an empty list), `uncategorized=true`',
          'the quizzes in no category; asking for both is refused (400). Each quiz carries its `category_id` (null when uncategorized);',
          `set it with PATCH ${api}/categories/quizzes/{quiz_id}.`,
        ].join(' '),
      },
    })
    .get('/trash', () => quizzes.listTrash(core), {
      role: 'moderator', response: t.Array(QuizResponse),
      detail: { tags, summary: 'Quizzes in the trash', description: `Most recently trashed first. Restore with PATCH ${api}/quizzes/{quiz_id}/restore.` },
    })
    .get('/:quiz_id', ({ user, params, query }) => quizzes.getQuiz(core, user, params.quiz_id, query.study ?? false), {
      role: 'user', params: QuizParams, query: StudyQuery, response: QuizView,
      detail: {
        tags, summary: 'A quiz with its questions',
        description: [
          'A timed quiz answers QuizDetail: the quiz\'s fields and its questions in order (`id`, `position`, `question_text`,',
          '`question_type`, `options`, `image_path`), without answers. A learning quiz, or any quiz with `study=true`, answers',
          'QuizLearningDetail: the same with `correct_answer` and `explanation` on every question.',
          `Regular users see published quizzes only (404 otherwise). ${TRASH_HIDES}`,
        ].join(' '),
      },
    })
    .patch('/:quiz_id', ({ params, body }) => quizzes.renameQuiz(core, params.quiz_id, body.title), {
      role: 'moderator', params: QuizParams, body: RenameBody, response: QuizResponse,
      detail: { tags, summary: 'Rename a quiz', description: `The title is trimmed; a blank one is refused (422). ${TRASH_HIDES}` },
    })
    .post('/:quiz_id/shuffle', ({ user, params, query }) =>
      quizzes.shuffleQuiz(core, user, params.quiz_id, query.shuffle_options ?? true), {
      role: 'user', params: QuizParams, query: ShuffleQuery, response: QuizDetail,
      detail: {
        tags, summary: 'The quiz in a random order',
        description: [
          'QuizDetail (no answers) with the questions in a random order and, unless `shuffle_options=false`, each question\'s',
          'options in a random order too. `position` keeps each question\'s place in the stored quiz. Nothing is stored:',
          `the next read gives the quiz's own order. Same visibility as GET ${api}/quizzes/{quiz_id}.`,
        ].join(' '),
      },
    })
    .get('/:quiz_id/review', ({ user, params }) => quizzes.reviewQuiz(core, user, params.quiz_id), {
      role: 'user', params: QuizParams, response: QuizReview,
      detail: {
        tags, summary: 'Review a quiz with full answers',
        description: [
          'The quiz and every question with `correct_answer` and `explanation`. Moderators may always review. A regular user',
          `may review a quiz once they have a completed (submitted) attempt on it (POST ${api}/attempts/{attempt_id}/submit);`,
          `without one a regular user gets 403. Same visibility as GET ${api}/quizzes/{quiz_id} (404 first).`,
        ].join(' '),
      },
    })
    .get('/:quiz_id/questions', ({ params }) => quizzes.listQuestions(core, params.quiz_id), {
      role: 'moderator', params: QuizParams, response: t.Array(QuestionItem),
      detail: { tags, summary: 'The questions of a quiz', description: `In quiz order, with answers. ${TRASH_HIDES}` },
    })
    .patch('/:quiz_id/questions/:question_id', ({ params, body }) =>
      quizzes.updateQuestion(core, params.quiz_id, params.question_id, body), {
      role: 'moderator', params: QuizQuestionParams, body: QuestionPatch, response: QuestionItem,
      detail: {
        tags, summary: 'Edit a question',
        description: [
          'Any of question_text, options, correct_answer, explanation, question_type; text is trimmed. The question is shared:',
          'the edit shows in every quiz that references it, and its search embedding is updated with it. 400 when the result',
          'has a blank text, blank or repeated options, or a correct_answer equal to none of the options (an options change',
          `must come with a correct_answer that is still one of them). 404 when the question is not in this quiz. ${TRASH_HIDES}`,
        ].join(' '),
      },
    })
    .delete('/:quiz_id/questions/:question_id', async ({ params, set }) => {
      await quizzes.removeQuestion(core, params.quiz_id, params.question_id)
      set.status = 204
    }, {
      role: 'moderator', params: QuizQuestionParams,
      detail: {
        tags, summary: 'Remove a question from a quiz',
        description: [
          '204. When another quiz (in the trash too) references the question, only this quiz\'s link is removed; otherwise',
          'the question is deleted from the bank, with its search embedding. The remaining questions are numbered from 1 again.',
          `404 when the question is not in this quiz. ${TRASH_HIDES}`,
        ].join(' '),
      },
    })
    .patch('/:quiz_id/publish', ({ params, query }) => quizzes.publishQuiz(core, params.quiz_id, query.published ?? true), {
      role: 'moderator', params: QuizParams, query: PublishQuery, response: PublishResponse,
      detail: {
        tags, summary: 'Publish or unpublish a quiz',
        description: 'Sets the published flag to `published` (default true); regular users see published quizzes only. Works on a quiz in the trash too. 404 unknown quiz.',
      },
    })
    .delete('/:quiz_id', async ({ params, set }) => {
      await quizzes.trashQuiz(core, params.quiz_id)
      set.status = 204
    }, {
      role: 'moderator', params: QuizParams,
      detail: { tags, summary: 'Move a quiz to the trash', description: `204; the quiz is hidden from every normal read until restored. 404 unknown quiz or one already in the trash.` },
    })
    .patch('/:quiz_id/restore', ({ params }) => quizzes.restoreQuiz(core, params.quiz_id), {
      role: 'moderator', params: QuizParams, response: QuizResponse,
      detail: { tags, summary: 'Restore a quiz from the trash', description: '400 when the quiz is not in the trash; 404 unknown quiz.' },
    })
    .delete('/:quiz_id/permanent', async ({ params, set }) => {
      await quizzes.deleteQuizPermanently(core, params.quiz_id)
      set.status = 204
    }, {
      role: 'moderator', params: QuizParams,
      detail: {
        tags, summary: 'Delete a quiz from the trash for good',
        description: '204. The questions stay in the question bank, no longer tied to this quiz. 400 when the quiz is not in the trash; 404 unknown quiz.',
      },
    })
}

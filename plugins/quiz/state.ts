// What the quiz plugin's controllers and jobs share, built once per boot (definePlugin's setup): the Core, the API's
// role guard and the pages' kit. Every controller .use()s these same instances.
import type { Core } from '../../src/plugin'
import { quizAuth, quizPages } from './guard'

export interface QuizState {
  core: Core
  auth: ReturnType<typeof quizAuth>
  pages: ReturnType<typeof quizPages>
}

export const setupQuiz = (core: Core): QuizState => ({ core, auth: quizAuth(core), pages: quizPages(core) })

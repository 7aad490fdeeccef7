import { definePlugin } from '../../src/plugin'
import { quizService } from './envelope'
import { quizJobs } from './jobs'
import { quizRoutes } from './routes'
import { setupQuiz } from './state'

export default definePlugin({ name: 'quiz', app: 'quiz', dir: import.meta.dir, setup: setupQuiz, routes: quizRoutes, jobs: quizJobs, service: quizService })

import { definePlugin } from '../../src/plugin'
import { quizJobs } from './jobs'
import { quizRoutes } from './routes'

export default definePlugin({ name: 'quiz', app: 'quiz', dir: import.meta.dir, routes: quizRoutes, jobs: quizJobs })

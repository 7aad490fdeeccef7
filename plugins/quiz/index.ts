import { definePlugin } from '../../src/plugin'
import { quizService } from './envelope'
import { quizJobs } from './jobs'
import { quizRoutes } from './routes'
import { sendDueDigests } from './services/reminders'
import { setupQuiz } from './state'

export default definePlugin({
  name: 'quiz',
  app: 'quiz',
  dir: import.meta.dir,
  setup: setupQuiz,
  routes: quizRoutes,
  jobs: quizJobs,
  service: quizService,
  schedules: [
    // The daily email of due review questions, for the users who asked for it (at most one per user and day).
    { name: 'quiz.reminders.digest', cron: '0 0 7 * * *', run: async ({ core }) => void (await sendDueDigests(core)) },
  ],
})

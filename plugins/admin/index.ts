// Spec 3: administration of the clinical service (users, configuration, logs, milestones).
import { definePlugin } from '../../src/plugin'
import { adminRoutes } from './routes'

export default definePlugin({ name: 'admin', app: 'clinical', dir: import.meta.dir, routes: adminRoutes })

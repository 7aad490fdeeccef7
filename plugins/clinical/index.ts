// Spec 2: the clinical documentation assistant's core (accounts, sessions, security envelope, audit, ...).
import { definePlugin } from '../../src/plugin'
import { clinicalRoutes } from './routes/index'

export default definePlugin({ name: 'clinical', app: 'clinical', dir: import.meta.dir, routes: clinicalRoutes })

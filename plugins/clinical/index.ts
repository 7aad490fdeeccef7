// Spec 2: the clinical documentation assistant's core (accounts, sessions, security envelope, audit, ...).
import { definePlugin } from '../../src/plugin'
import { clinicalService } from './envelope'
import { clinicalRoutes } from './routes/index'
import { sweepExpiredAudioBackups } from './services/audio-backups'
import { sweepExpiredEncounters } from './services/encounters'
import { sweepAuthTokens, sweepSessions } from './services/sessions'
import { setupClinical, type ClinicalState } from './state'

export default definePlugin({
  name: 'clinical',
  app: 'clinical',
  dir: import.meta.dir,
  setup: setupClinical,
  routes: clinicalRoutes,
  service: clinicalService((state: ClinicalState) => state.core),
  schedules: [
    // Expired session rows and spent one-time tokens: nothing reads them, so they go.
    { name: 'clinical.sessions.sweep', cron: '0 23 * * * *', run: async ({ core }) => void (await sweepSessions(core)) },
    { name: 'clinical.auth-tokens.sweep', cron: '0 41 * * * *', run: async ({ core }) => void (await sweepAuthTokens(core)) },
    // Saved encounters and audio backups past their expiry: listings already hide them; the rows (and files) go.
    { name: 'clinical.encounters.sweep', cron: '0 */15 * * * *', run: async ({ core }) => void (await sweepExpiredEncounters(core)) },
    { name: 'clinical.audio-backups.sweep', cron: '0 7,37 * * * *', run: async ({ core }) => void (await sweepExpiredAudioBackups(core)) },
  ],
})

// Spec 1, Admin: settings. Every route here requires Admin.
import { Elysia } from 'elysia'
import { SuccessMessage, SystemSettings, SystemSettingsBody } from '../models/settings'
import { getSystemSettings, updateSystemSettings } from '../services/settings'
import type { QuizState } from '../state'

const tags = ['Admin: settings']

export const settingsRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/admin' })
    .use(auth)
    .get('/settings', () => getSystemSettings(core), {
      role: 'admin', response: SystemSettings, detail: { tags, summary: 'System settings' },
    })
    .put('/settings', async ({ body }) => {
      await updateSystemSettings(core, body)
      return { success: true as const, message: 'Settings saved' }
    }, {
      role: 'admin', body: SystemSettingsBody, response: SuccessMessage,
      detail: { tags, summary: 'Update system settings' },
    })

// TypeBox models of spec 1's Admin: settings; the OpenAPI docs come from them.
import { t } from 'elysia'

export const SystemSettings = t.Object({
  registration_enabled: t.Boolean(),
  embedding_model: t.String(),
})
export type SystemSettings = typeof SystemSettings.static
export const SystemSettingsBody = t.Object({
  registration_enabled: t.Optional(t.Boolean()),
  embedding_model: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
})
export const SuccessMessage = t.Object({ success: t.Literal(true), message: t.String() })

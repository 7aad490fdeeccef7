// The admin console's frame: the clinical page frame with the console's own navigation, which names every area
// (Keycloak's admin UI is the anchor: everything an operator needs without a shell or a database client).
import type { PropsWithChildren } from '@kitajs/html'
import type { Flash } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'

/** The console's areas, in the order the navigation shows them; `path` is under `${base}/admin`. */
export const CONSOLE_AREAS = [
  { path: '/users', label: 'Users' },
  { path: '/settings', label: 'Settings' },
  { path: '/prompts', label: 'Prompts' },
  { path: '/models', label: 'AI models' },
  { path: '/logs', label: 'Logs' },
  { path: '/milestones', label: 'Milestones' },
] as const
export type ConsoleArea = (typeof CONSOLE_AREAS)[number]['path']

export interface AdminLayoutProps {
  base: string
  title: string
  user: NavUser
  /** The area this page belongs to: its link is marked as the current page. */
  area: ConsoleArea
  flash?: Flash
  pageScripts?: string[]
}

export const AdminLayout = (p: PropsWithChildren<AdminLayoutProps>) => (
  <ClinicalLayout base={p.base} title={p.title} user={p.user} flash={p.flash} pageScripts={p.pageScripts}>
    <nav class="actions admin-nav" aria-label="Administration">
      {CONSOLE_AREAS.map((a) => (
        <a href={`${p.base}/admin${a.path}`} aria-current={a.path === p.area ? 'page' : undefined} safe>{a.label}</a>
      ))}
    </nav>
    {p.children}
  </ClinicalLayout>
)

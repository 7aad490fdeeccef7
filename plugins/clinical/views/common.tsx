// The clinical service's page frame and its simplest page: a titled message (email links land here).
import { Layout } from '../../../views/layout'

export const BRAND = 'Clinical assistant'

export interface MessagePageProps {
  base: string
  title: string
  text: string
  kind: 'ok' | 'error'
  link?: { href: string; label: string }
}

export const MessagePage = (p: MessagePageProps) => (
  <Layout title={p.title} base={p.base} brand={BRAND}>
    <h1 safe>{p.title}</h1>
    <p class={`flash ${p.kind}`} role="status" safe>{p.text}</p>
    {p.link ? <p><a href={p.link.href} safe>{p.link.label}</a></p> : ''}
  </Layout>
)

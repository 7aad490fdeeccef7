// The shared htmx layout: real links and forms first, htmx on top (hx-boost), htmx served by the app itself.
import type { PropsWithChildren } from '@kitajs/html'

export type Errors = Record<string, string>
export type Flash = { kind: 'ok' | 'error'; text: string } | null

/** What every account page needs to know about the installation. */
export interface PageContext {
  /** The app's base path, e.g. `/quiz` or '' (the clinical app at the root). */
  base: string
  /** Turnstile-style site key: when set, the forms the challenge protects show its widget. */
  challengeSiteKey: string | null
  challengeScriptUrl: string
}

export const pageContext = (base: string, challenge: { siteKey: string | null; scriptUrl: string } | null): PageContext => ({
  base,
  challengeSiteKey: challenge?.siteKey ?? null,
  challengeScriptUrl: challenge?.scriptUrl ?? '',
})

/** The bot-challenge widget of a form, when the installation has a site key. */
export const Challenge = ({ ctx }: { ctx: PageContext }) =>
  ctx.challengeSiteKey ? (
    <>
      <script src={ctx.challengeScriptUrl} async defer></script>
      <div class="cf-turnstile" data-sitekey={ctx.challengeSiteKey}></div>
    </>
  ) : (
    ''
  )

export interface LayoutProps {
  title: string
  /** The app's base path, e.g. `/quiz`: assets and links are relative to it. */
  base: string
  brand: string
  nav?: JSX.Element
  flash?: Flash
  /** Further scripts of the page, by file name under `{base}/static/` (loaded after app.js, deferred). */
  scripts?: string[]
  /**
   * Scripts of this page only, by file name under `{base}/static/`, at the end of the body: a boosted navigation
   * (htmx swaps the body, not the head) runs them too, so each must be safe to run twice (a guard, then its work on
   * `htmx:load` and at once).
   */
  pageScripts?: string[]
  /** A notice shown above every page's content (the clinical announcement), outside the flash box. */
  banner?: JSX.Element | string
}

// htmx 2 swaps 4xx/5xx nothing by default; 422 (a form re-rendered with its messages) must swap.
const HTMX_CONFIG = JSON.stringify({
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    { code: '422', swap: true },
    { code: '[45]..', swap: false, error: true },
  ],
  historyCacheSize: 0,
})

export const Layout = ({ title, base, brand, nav, flash, scripts, pageScripts, banner, children }: PropsWithChildren<LayoutProps>) => (
  <>
    {'<!doctype html>'}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title safe>{`${title} · ${brand}`}</title>
        <link rel="icon" href={`${base}/static/favicon.svg`} type="image/svg+xml" />
        <link rel="stylesheet" href={`${base}/static/app.css`} />
        <script src={`${base}/static/htmx.min.js`} defer></script>
        <script src={`${base}/static/app.js`} defer></script>
        {scripts?.map((file) => <script src={`${base}/static/${file}`} defer></script>)}
      </head>
      <body hx-boost="true">
        <header class="site">
          <a class="brand" href={`${base}/`} safe>{brand}</a>
          <nav>{nav}</nav>
        </header>
        <main>
          {banner ?? ''}
          <div id="flash" class={flash ? `flash ${flash.kind}` : ''} role="status">{flash ? <span safe>{flash.text}</span> : ''}</div>
          {children}
        </main>
        {pageScripts?.map((file) => <script src={`${base}/static/${file}`} defer></script>)}
      </body>
    </html>
  </>
)

export interface FieldProps {
  label: string
  name: string
  /** Element id, when one page has two inputs of the same name (defaults to the name). */
  id?: string
  type?: string
  value?: string
  error?: string
  hint?: string
  autocomplete?: string
  inputmode?: 'numeric' | 'text' | 'email'
  required?: boolean
  minlength?: number
  maxlength?: number
  autofocus?: boolean
}

/** The aria-describedby of a control whose hint and error, when present, carry the ids `<id>-hint` and `<id>-error`. */
export const describedBy = (id: string, hint?: unknown, error?: unknown): string | undefined =>
  [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined

/** A control's hint and error message, with the ids describedBy names. */
export const FieldNotes = ({ id, hint, error }: { id: string; hint?: string; error?: string }) => (
  <>
    {hint ? <span class="field-hint muted" id={`${id}-hint`} safe>{hint}</span> : ''}
    {error ? <span class="field-error" id={`${id}-error`} safe>{error}</span> : ''}
  </>
)

/** The one field component of both services: a labelled input with its hint and its error message. */
export const Field = (p: FieldProps) => {
  const id = p.id ?? p.name
  return (
    <label for={id}>
      <span safe>{p.label}</span>
      <input
        id={id}
        name={p.name}
        type={p.type ?? 'text'}
        value={p.value ?? ''}
        autocomplete={p.autocomplete}
        inputmode={p.inputmode}
        required={p.required}
        minlength={p.minlength}
        maxlength={p.maxlength}
        autofocus={p.autofocus}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={describedBy(id, p.hint, p.error)}
      />
      <FieldNotes id={id} hint={p.hint} error={p.error} />
    </label>
  )
}

/** A one-line outcome inside a page's content (the page's own flash box is the Layout's). */
export const Notice = ({ text }: { text?: string | null }) => (text ? <p class="flash ok" role="status" safe>{text}</p> : '')
export const Problem = ({ text }: { text?: string | null }) => (text ? <p class="flash error" role="alert" safe>{text}</p> : '')

/** An ISO timestamp as a short UTC date and time, in a <time> element: how every page shows a moment. */
export const When = ({ iso }: { iso: string }) => <time datetime={iso} safe>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>

/** A byte count as people say it: 10 MB, 585.9 KB, 900 bytes, 1 byte. */
export function sizeInWords(bytes: number): string {
  const round = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1))
  if (bytes >= 1024 * 1024) return `${round(Math.round((bytes / (1024 * 1024)) * 10) / 10)} MB`
  if (bytes >= 1024) return `${round(Math.round((bytes / 1024) * 10) / 10)} KB`
  return bytes === 1 ? '1 byte' : `${bytes} bytes`
}

const ERROR_TITLES: Record<number, string> = {
  400: 'This request could not be used', 401: 'Sign in to continue', 403: 'Not allowed', 404: 'Page not found',
  413: 'Too large', 422: 'This request could not be used', 429: 'Too many requests',
}
/** A title a person understands for an error status. */
export const errorTitle = (status: number) => ERROR_TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'This request could not be used')

/** The page a browser gets for an error (a missing page, a refused form): the service's frame and a way home. */
export const ErrorPage = (p: { status: number; message: string; base: string; brand: string }) => (
  <Layout title={errorTitle(p.status)} base={p.base} brand={p.brand}>
    <h1 safe>{errorTitle(p.status)}</h1>
    <p safe>{p.message}</p>
    <p><a href={`${p.base}/`}>Go to the start page</a></p>
  </Layout>
)

/** htmx request for a fragment: HX-Request without HX-Boosted (a boosted request gets the whole page). */
export const isFragment = (request: Request) =>
  request.headers.get('hx-request') === 'true' && request.headers.get('hx-boosted') !== 'true' &&
  // htmx restoring a page from history (its cache missed) asks with HX-Request too, and needs the whole page
  request.headers.get('hx-history-restore-request') !== 'true'

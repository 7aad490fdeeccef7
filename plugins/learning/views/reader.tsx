// The reader's learning hub pages: the hub (search as you type over the feed, the categories with their counts, the
// feed paged newest first), a category's page, and a deck of slides inside the page frame (every slide one under the
// other without JavaScript; slides.js shows one at a time). The article and its quiz are in reader-article.tsx.
// Each page includes its fragment, so one source serves the page and the htmx answer. Every user or database string
// is a `safe` text child or an attribute; the deck's HTML and CSS are Marp's, made safe by service-slides.ts.
import { type Flash, When } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'
import { FEED_LIMIT_DEFAULT, SEARCH_Q_MAX, type Category, type CategoryListEntry, type ContentType, type FeedEntry } from '../model'

/**
 * The reader's URLs. Content lives under `/learning/read/`, so a content slug can never be taken for `category` or
 * any other page of the hub: `/learning`, `/learning/category/:slug`, `/learning/read/:slug` (its quiz posts to
 * `…/quiz`) and `/learning/read/:slug/slides`.
 */
export const learningUrls = (base: string) => ({
  hub: `${base}/learning`,
  category: (slug: string) => `${base}/learning/category/${encodeURIComponent(slug)}`,
  read: (slug: string) => `${base}/learning/read/${encodeURIComponent(slug)}`,
  slides: (slug: string) => `${base}/learning/read/${encodeURIComponent(slug)}/slides`,
})

const TYPE_WORDS: Record<ContentType, string> = { article: 'Article', presentation: 'Slides' }
export const typeWords = (type: ContentType) => TYPE_WORDS[type] ?? type

const countWords = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

// ---- entries -------------------------------------------------------------------------------------------------------

/** Feed entries and search results alike: title (the link), type in words, category, summary, date. */
export const EntryList = (p: { base: string; entries: FeedEntry[]; showCategory?: boolean }) => {
  const urls = learningUrls(p.base)
  return (
    <ol class="learn-entries">
      {p.entries.map((e) => (
        <li class="learn-entry">
          <h3><a href={urls.read(e.slug)} safe>{e.title}</a></h3>
          <p class="learn-meta muted">
            <span safe>{typeWords(e.type)}</span>
            {p.showCategory === false ? '' : <> · <a href={urls.category(e.category_slug)} safe>{e.category}</a></>}
            {' · '}<When iso={e.created_at} />
          </p>
          {e.summary ? <p class="learn-summary" safe>{e.summary}</p> : ''}
        </li>
      ))}
    </ol>
  )
}

// ---- the hub -------------------------------------------------------------------------------------------------------

export type HubResultsView =
  | { kind: 'feed'; entries: FeedEntry[]; limit: number; offset: number; older: boolean }
  | { kind: 'search'; q: string; results: FeedEntry[]; keywordOnly: boolean }

/** A feed page's address: the defaults are left out, so the first page is the hub's own URL. */
export const feedPageUrl = (hub: string, limit: number, offset: number) => {
  const query = new URLSearchParams()
  if (offset > 0) query.set('offset', String(offset))
  if (limit !== FEED_LIMIT_DEFAULT) query.set('limit', String(limit))
  const text = query.toString()
  return text ? `${hub}?${text}` : hub
}

const FeedPages = (p: { hub: string; limit: number; offset: number; older: boolean }) =>
  p.offset === 0 && !p.older ? '' : (
    <nav class="pages learn-pages" aria-label="Feed pages">
      {p.offset > 0 ? <a href={feedPageUrl(p.hub, p.limit, Math.max(0, p.offset - p.limit))} rel="prev">Newer</a> : ''}
      {p.older ? <a href={feedPageUrl(p.hub, p.limit, p.offset + p.limit)} rel="next">Older</a> : ''}
    </nav>
  )

/** The feed or the search results: the fragment of a search (and of clearing it). */
export const HubResults = (p: { base: string; view: HubResultsView }) => {
  const { view } = p
  const hub = learningUrls(p.base).hub
  if (view.kind === 'search') {
    return (
      <div id="learn-results">
        <h2>Search results</h2>
        <p id="learn-count" role="status" safe>
          {`${countWords(view.results.length, 'result', 'results')} for “${view.q}”.`}
        </p>
        {view.keywordOnly ? <p class="muted learn-note">Matching words only: the search by meaning is not available just now.</p> : ''}
        {view.results.length === 0
          ? <p class="muted">Nothing found: try other words, or fewer.</p>
          : <EntryList base={p.base} entries={view.results} />}
        <p><a href={hub}>Back to the latest content</a></p>
      </div>
    )
  }
  const first = view.offset + 1
  const last = view.offset + view.entries.length
  return (
    <div id="learn-results">
      <h2>Latest content</h2>
      {view.entries.length === 0 ? (
        <p class="muted" id="learn-count" role="status">{view.offset > 0 ? 'Nothing more: this is past the oldest content.' : 'Nothing has been published yet.'}</p>
      ) : (
        <>
          <p class="muted" id="learn-count" role="status" safe>{view.offset === 0 && !view.older ? 'Newest first.' : `Newest first: items ${first} to ${last}.`}</p>
          <EntryList base={p.base} entries={view.entries} />
        </>
      )}
      <FeedPages hub={hub} limit={view.limit} offset={view.offset} older={view.older} />
    </div>
  )
}

const CategoryList = (p: { base: string; categories: CategoryListEntry[] }) => {
  const urls = learningUrls(p.base)
  return p.categories.length === 0 ? <p class="muted">No categories yet.</p> : (
    <ul class="learn-categories">
      {p.categories.map((c) => (
        <li>
          <a href={urls.category(c.slug)} safe>{c.name}</a>{' '}
          <span class="muted" safe>{countWords(c.content_count, 'item', 'items')}</span>
        </li>
      ))}
    </ul>
  )
}

export interface HubView { base: string; user: NavUser; q: string; categories: CategoryListEntry[]; results: HubResultsView; flash?: Flash }

export const HubPage = (p: HubView) => {
  const hub = learningUrls(p.base).hub
  return (
    <ClinicalLayout title="Learning hub" base={p.base} user={p.user} flash={p.flash}>
      <h1>Learning hub</h1>
      <p>Articles and slides with short quizzes. Search them, or browse by category.</p>
      <form class="actions learn-search" action={hub} method="get" role="search">
        <label for="learn-q" class="visually-hidden">Search the learning hub</label>
        <input type="search" id="learn-q" name="q" value={p.q} maxlength={SEARCH_Q_MAX} placeholder="Search articles and slides"
          autocomplete="off" hx-get={hub} hx-trigger="input changed delay:300ms, search" hx-target="#learn-results"
          hx-swap="outerHTML" hx-push-url="true" />
        <button type="submit">Search</button>
      </form>
      {/* The short list of categories comes first, so a narrow screen shows it above the feed; wide screens put it beside. */}
      <div class="learn-hub">
        <section class="learn-aside" aria-labelledby="learn-categories-title">
          <h2 id="learn-categories-title">Categories</h2>
          <CategoryList base={p.base} categories={p.categories} />
        </section>
        <HubResults base={p.base} view={p.results} />
      </div>
    </ClinicalLayout>
  )
}

// ---- a category ----------------------------------------------------------------------------------------------------

export const CategoryPage = (p: { base: string; user: NavUser; category: Category; entries: FeedEntry[] }) => (
  <ClinicalLayout title={p.category.name} base={p.base} user={p.user}>
    <nav class="learn-crumbs" aria-label="Breadcrumb"><a href={learningUrls(p.base).hub}>Learning hub</a></nav>
    <h1 safe>{p.category.name}</h1>
    {p.category.description ? <p class="learn-description" safe>{p.category.description}</p> : ''}
    <h2 class="learn-section-title">Content</h2>
    {p.entries.length === 0 ? <p class="muted">Nothing has been published in this category yet.</p> : (
      <>
        <p class="muted" safe>{`${countWords(p.entries.length, 'item', 'items')}, newest first.`}</p>
        <EntryList base={p.base} entries={p.entries} showCategory={false} />
      </>
    )}
  </ClinicalLayout>
)

// ---- slides --------------------------------------------------------------------------------------------------------

// The app's CSP admits no style sheet from another host: a theme's web-font import (Marp's gaia) is left out, and
// the deck uses the fonts at hand.
const STYLE_IMPORT = /@import\s+(?:url\(\s*)?(["'])[^"']*\1\s*\)?[^;]*;/g

export interface SlidesView { base: string; user: NavUser; slug: string; title: string; css: string; slides: string[] }

/**
 * The deck in the page frame. Without JavaScript every slide shows, one under the other; slides.js shows one at a
 * time and reveals the hidden controls (Previous, Next, Full screen and the slide counter).
 */
export const SlidesPage = (p: SlidesView) => {
  const urls = learningUrls(p.base)
  const safeCss = p.css.replace(STYLE_IMPORT, '')
  const safeSlides = p.slides.join('')
  return (
    <ClinicalLayout title={`${p.title}: slides`} base={p.base} user={p.user} pageScripts={['slides.js']}>
      <nav class="learn-crumbs" aria-label="Breadcrumb">
        <a href={urls.hub}>Learning hub</a> <span aria-hidden="true">›</span> <a href={urls.read(p.slug)} safe>{p.title}</a>
      </nav>
      <h1 safe>{`${p.title}: slides`}</h1>
      <style>{safeCss}</style>
      <div class="learn-deck" id="learn-deck" aria-label="Slides" role="region" data-count={String(p.slides.length)}>
        <div class="learn-deck-bar" hidden>
          <button type="button" data-deck="prev">Previous</button>
          <span class="learn-deck-count" aria-live="polite" safe>{`Slide 1 of ${p.slides.length}`}</span>
          <button type="button" data-deck="next">Next</button>
          <button type="button" class="secondary" data-deck="fullscreen">Full screen</button>
        </div>
        <div class="marpit">{safeSlides}</div>
      </div>
      <p class="muted learn-deck-keys" hidden>
        Keys: Right arrow, Page Down or Space for the next slide; Left arrow or Page Up for the previous one; Home and
        End for the first and last; F for full screen.
      </p>
      <p><a href={urls.read(p.slug)}>Back to the article</a></p>
    </ClinicalLayout>
  )
}

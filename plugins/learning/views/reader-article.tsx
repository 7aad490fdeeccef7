// The reader's article page: the body rendered from markdown, the "View the slides" link, and the quiz as a real
// form (radio buttons, or checkboxes when a question has several correct options) with its answer in the same
// section: the score in words, each question right or wrong in words, the reader's progress. The section is what
// htmx swaps; the page includes it, so one source serves both.
import MarkdownIt from 'markdown-it'
import { type Flash, Problem, When } from '../../../views/layout'
import { ClinicalLayout, type NavUser } from '../../clinical/views/common'
import type { ContentRead, Progress, QuizResult, ReaderQuestion } from '../model'
import { learningUrls, typeWords } from './reader'

// ---- the body: markdown to HTML ----------------------------------------------------------------------------------

// Reader-facing links: web, mail and telephone addresses only; anything else (javascript:, data:, relative paths)
// stays the text it was written as.
const LINK_SCHEMES = /^(https?:|mailto:|tel:)/i
const EXTERNAL = /^https?:/i

const markdown = new MarkdownIt({ html: false, linkify: true })
markdown.validateLink = (url: string) => LINK_SCHEMES.test(url.trim())

// The page's title is the only h1: the body's headings move one level down. Web links open in a new tab without
// handing it this page (noopener noreferrer), and say so to screen readers.
markdown.core.ruler.push('learning_reader', (state) => {
  for (const token of state.tokens) {
    if (token.type === 'heading_open' || token.type === 'heading_close') token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 1)}`
    let external = false
    for (const child of token.children ?? []) {
      if (child.type === 'link_open') {
        external = EXTERNAL.test(child.attrGet('href') ?? '')
        if (external) {
          child.attrSet('target', '_blank')
          child.attrSet('rel', 'noopener noreferrer')
        }
      } else if (child.type === 'link_close' && external) {
        child.meta = { external: true }
        external = false
      }
    }
  }
  return true
})
markdown.renderer.rules.link_close = (tokens, idx) =>
  (tokens[idx]!.meta as { external?: boolean } | null)?.external ? '<span class="visually-hidden"> (opens in a new tab)</span></a>' : '</a>'
// The app's CSP admits images from this server only, so an image of the body is a link to it, never a broken image.
markdown.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!
  const alt = self.renderInlineAsText(token.children ?? [], options, env).trim()
  const src = markdown.utils.escapeHtml(token.attrGet('src') ?? '')
  const text = markdown.utils.escapeHtml(alt ? `Image: ${alt}` : 'An image')
  return `<a href="${src}" target="_blank" rel="noopener noreferrer">${text}<span class="visually-hidden"> (opens in a new tab)</span></a>`
}

// A deck's front matter and HTML comments (Marp directives, speaker notes) are for authors, never for readers;
// fenced code keeps them as written.
const FRONT_MATTER = /^\uFEFF?---\r?\n[\s\S]*?\r?\n---[ \t]*(\r?\n|$)/
const FENCE_OR_COMMENT = /(^(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^\2[ \t]*$|(?![\s\S])))|<!--[\s\S]*?(?:-->|(?![\s\S]))/gm

/** An article's markdown as HTML: markdown-it with HTML in the text shown as text and only safe links. */
export function renderArticle(body: string): string {
  const readable = body.replace(FRONT_MATTER, '').replace(FENCE_OR_COMMENT, (match, fence: string | undefined) => (fence ? match : ''))
  return markdown.render(readable)
}

// ---- the quiz ----------------------------------------------------------------------------------------------------

/** What the reader chose, by question id (the form's `answer-<question id>` fields). */
export type Chosen = Map<number, Set<number>>

export interface QuizView {
  base: string
  content: ContentRead
  chosen?: Chosen
  /** The answer of the submission just made. */
  result?: QuizResult
  /** Why the answers could not be scored (a 422), in words. */
  problem?: string
}

const outOf = (score: number | null, total: number | null) => `${score ?? 0} of ${total ?? 0}`

const ProgressFacts = ({ progress }: { progress: Progress }) =>
  progress.attempts === 0 ? (
    <p class="muted" id="learn-progress">You have not taken this quiz yet.</p>
  ) : (
    <div id="learn-progress">
      <h3>Your progress</h3>
      <dl class="facts">
        <dt>Best score</dt><dd safe>{outOf(progress.score, progress.total)}</dd>
        <dt>Latest score</dt><dd safe>{outOf(progress.latest_score, progress.latest_total)}</dd>
        <dt>Attempts</dt><dd safe>{String(progress.attempts)}</dd>
        {progress.last_submitted_at ? <><dt>Last taken</dt><dd><When iso={progress.last_submitted_at} /></dd></> : ''}
      </dl>
    </div>
  )

const Question = (p: { q: ReaderQuestion; n: number; chosen?: Set<number>; correct?: boolean }) => {
  const { q } = p
  return (
    <fieldset class="question" id={`learn-q${q.id}`}>
      <legend>
        <span safe>{`${p.n}. ${q.text}`}</span>
        {q.multiple ? <>{' '}<span class="learn-hint">Choose all that apply.</span></> : ''}
      </legend>
      {p.correct === undefined ? '' : (
        <p class={`learn-verdict ${p.correct ? 'right' : 'wrong'}`}>
          <span aria-hidden="true">{p.correct ? '✓' : '✗'}</span> {p.correct ? 'Correct' : 'Not correct'}
        </p>
      )}
      {q.options.map((o) => {
        const id = `learn-q${q.id}-o${o.id}`
        return (
          <label class="option" for={id}>
            <input type={q.multiple ? 'checkbox' : 'radio'} id={id} name={`answer-${q.id}`} value={String(o.id)}
              checked={p.chosen?.has(o.id) ? true : undefined} />
            <span safe>{o.text}</span>
          </label>
        )
      })}
    </fieldset>
  )
}

/** The quiz section: the form, and after a submission its answer. The fragment of a quiz post. */
export const QuizSection = (p: QuizView) => {
  const { content, result } = p
  const action = `${learningUrls(p.base).read(content.slug)}/quiz`
  const verdicts = new Map(result?.results.map((r) => [r.questionId, r.correct]))
  return (
    <section id="learn-quiz" class="learn-quiz" aria-labelledby="learn-quiz-title">
      <h2 id="learn-quiz-title">Quiz</h2>
      <Problem text={p.problem} />
      {result ? (
        <p class="flash ok" role="status" safe>{`You answered ${result.score} of ${result.total} correctly.`}</p>
      ) : ''}
      <ProgressFacts progress={content.progress} />
      <form class="stack" action={action} method="post" hx-post={action} hx-target="#learn-quiz" hx-swap="outerHTML">
        {content.questions.map((q, i) => <Question q={q} n={i + 1} chosen={p.chosen?.get(q.id)} correct={verdicts.get(q.id)} />)}
        <div>
          <button type="submit">{result || content.progress.attempts > 0 ? 'Check my answers again' : 'Check my answers'}</button>
        </div>
      </form>
    </section>
  )
}

// ---- the page ----------------------------------------------------------------------------------------------------

export const ArticlePage = (p: QuizView & { user: NavUser; flash?: Flash }) => {
  const { content } = p
  const urls = learningUrls(p.base)
  const safeBody = renderArticle(content.body)
  return (
    <ClinicalLayout title={content.title} base={p.base} user={p.user} flash={p.flash}>
      <article class="learn-article">
        <nav class="learn-crumbs" aria-label="Breadcrumb">
          <a href={urls.hub}>Learning hub</a> <span aria-hidden="true">›</span>{' '}
          <a href={urls.category(content.category.slug)} safe>{content.category.name}</a>
        </nav>
        <h1 safe>{content.title}</h1>
        <p class="muted learn-meta">
          <span safe>{typeWords(content.type)}</span> · <When iso={content.created_at} />
        </p>
        {content.has_slides ? <p><a class="button" href={urls.slides(content.slug)}>View the slides</a></p> : ''}
        {safeBody ? <div class="learn-body" hx-boost="false">{safeBody}</div> : ''}
      </article>
      {content.questions.length > 0 ? <QuizSection {...p} /> : ''}
    </ClinicalLayout>
  )
}

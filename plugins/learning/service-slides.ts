// Slide decks: Marp markdown -> HTML and CSS with @marp-team/marp-core, safe to serve under the app's CSP.
// The markdown is untrusted: HTML in it is written out as text (`html: false`), no browser script is added
// (`script: false`), and emoji stay characters (no images from a CDN the CSP would refuse); markdown-it drops
// javascript: and similar links. Marp's own style tweaks (`<style>` blocks, the `style` directive) stay the deck's
// CSS, scoped by Marp to the slides, with every `<` escaped so no text in it can close a <style> element.
import type { Marp } from '@marp-team/marp-core'

export interface RenderedSlides {
  /** The deck's stylesheet, scoped to `div.marpit`. */
  css: string
  /** One HTML fragment (an `<svg>` with the slide) per slide. */
  slides: string[]
  /** Each slide's HTML comments (Marp's speaker notes), in order. */
  notes: string[][]
}

let marp: Marp | null = null
const marpInstance = () =>
  // Loaded at the first deck rendered: Marp is about 15 MB of a server's memory and 0.4 s of its start.
  (marp ??= new (require('@marp-team/marp-core') as typeof import('@marp-team/marp-core')).Marp({
    html: false,
    script: false,
    emoji: { shortcode: true, unicode: false },
    minifyCSS: true,
  }))

export function renderSlides(markdown: string): RenderedSlides {
  const { html, css, comments } = marpInstance().render(markdown, { htmlAsArray: true })
  return { css: css.replaceAll('<', '\\3c '), slides: html, notes: comments }
}

/** The style that shows each slide as one full screen, one after the other (no script needed). */
const SCREEN_CSS = [
  'html{scroll-snap-type:y mandatory;background:#222}',
  'body{margin:0}',
  'div.marpit>svg{display:block;width:100vw;height:100vh;scroll-snap-align:start}',
  '@media print{html{background:none}div.marpit>svg{width:100%;height:auto;page-break-after:always}}',
].join('')

/**
 * The Content-Security-Policy of a served deck, narrower than the app's: no script at all, styles only inline (the
 * deck's own), images and fonts from this server or data: addresses, never framed.
 */
export const SLIDES_CSP = [
  "default-src 'none'", "script-src 'none'", "style-src 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ')

/** A whole HTML document of the deck, each slide a full screen. The title is escaped here; the rest is Marp's. */
export function slidesDocument(title: string, rendered: RenderedSlides): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${Bun.escapeHTML(title)}</title>`,
    `<style>${rendered.css}</style><style>${SCREEN_CSS}</style>`,
    '</head><body>',
    `<div class="marpit">${rendered.slides.join('')}</div>`,
    '</body></html>',
  ].join('')
}

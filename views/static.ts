// Static assets served by each app under its own base path: htmx and Swagger UI from node_modules (no CDN, with the
// contrast and select labels WCAG 2 AA asks for in swagger/a11y.css and a11y.js),
// uPlot (the learner's chart), the house stylesheet and the page scripts (clinical.js: the clinical pages' sign-out
// across tabs; player.js: the quiz player's timer and autosave; progress-chart.js: the scores-over-time chart;
// workspace.js: the clinical workspace's dictation, streamed notes and autosave; studio.js: the learning studio's
// editor; slides.js: a deck one slide at a time with the keyboard).
import { Elysia } from 'elysia'
import { join } from 'node:path'

const moduleFile = (specifier: string) => Bun.resolveSync(specifier, import.meta.dir)

const ASSETS: Record<string, { file: string; type: string }> = {
  'htmx.min.js': { file: moduleFile('htmx.org/dist/htmx.min.js'), type: 'text/javascript; charset=utf-8' },
  'app.css': { file: join(import.meta.dir, 'static', 'app.css'), type: 'text/css; charset=utf-8' },
  'favicon.svg': { file: join(import.meta.dir, 'static', 'favicon.svg'), type: 'image/svg+xml' },
  'app.js': { file: join(import.meta.dir, 'static', 'app.js'), type: 'text/javascript; charset=utf-8' },
  'clinical.js': { file: join(import.meta.dir, 'static', 'clinical.js'), type: 'text/javascript; charset=utf-8' },
  'player.js': { file: join(import.meta.dir, 'static', 'player.js'), type: 'text/javascript; charset=utf-8' },
  'progress-chart.js': { file: join(import.meta.dir, 'static', 'progress-chart.js'), type: 'text/javascript; charset=utf-8' },
  'workspace.js': { file: join(import.meta.dir, 'static', 'workspace.js'), type: 'text/javascript; charset=utf-8' },
  'studio.js': { file: join(import.meta.dir, 'static', 'studio.js'), type: 'text/javascript; charset=utf-8' },
  'slides.js': { file: join(import.meta.dir, 'static', 'slides.js'), type: 'text/javascript; charset=utf-8' },
  'charts.js': { file: join(import.meta.dir, 'static', 'charts.js'), type: 'text/javascript; charset=utf-8' },
  'admin-charts.js': { file: join(import.meta.dir, 'static', 'admin-charts.js'), type: 'text/javascript; charset=utf-8' },
  'uplot/uPlot.iife.min.js': { file: moduleFile('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uplot/uPlot.min.css': { file: moduleFile('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
  'swagger/swagger-ui-bundle.js': { file: moduleFile('swagger-ui-dist/swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'swagger/swagger-ui.css': { file: moduleFile('swagger-ui-dist/swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger/a11y.css': { file: join(import.meta.dir, 'static', 'swagger', 'a11y.css'), type: 'text/css; charset=utf-8' },
  'swagger/a11y.js': { file: join(import.meta.dir, 'static', 'swagger', 'a11y.js'), type: 'text/javascript; charset=utf-8' },
}

const serve = (asset: { file: string; type: string }) =>
  new Response(Bun.file(asset.file), { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' } })

export const staticAssets = () =>
  new Elysia({ name: 'views.static' })
    .get('/static/*', ({ params, status }) => {
      const asset = ASSETS[params['*']]
      return asset ? serve(asset) : status(404, 'Not Found')
    }, { detail: { hide: true } })
    // Pages without an icon link (Swagger UI) make browsers ask for /favicon.ico: the same icon, not a 404.
    .get('/favicon.ico', () => serve(ASSETS['favicon.svg']!), { detail: { hide: true } })

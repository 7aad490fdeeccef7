// Slide decks of the learning hub's authoring: a 40-slide Marp deck (a title, five bullets with a nested one and
// speaker notes per slide) through the app (in-process `app.fetch`, a signed-in moderator, in-memory PGlite):
// - POST /api/admin/learning/preview-slides, one request at a time, p50 and p99 (and renderSlides alone, the floor);
// - the PowerPoint file of the same deck: buildPptx alone and POST /api/admin/learning/generate-pptx, p50 and p99.
// Settings: ROUNDS (preview requests, default 300), PPTX_ROUNDS (default 30), SLIDES (default 40).
import { hashPassword } from '../../src/auth/password'
import { buildPptx } from '../../plugins/learning/service-pptx'
import { renderSlides } from '../../plugins/learning/service-slides'
import { bootForBench, freshDataDir, quantile, sampleMs } from './support'

const ROUNDS = Number(process.env.ROUNDS ?? 300)
const PPTX_ROUNDS = Number(process.env.PPTX_ROUNDS ?? 30)
const SLIDES = Number(process.env.SLIDES ?? 40)
const PASSWORD = 'Correct-horse-battery-9'

const deck = [
  '---', 'marp: true', 'paginate: true', '---', '',
  ...Array.from({ length: SLIDES }, (_, i) => [
    ...(i > 0 ? ['---', ''] : []),
    `# Slide ${i + 1}: managing acute asthma, step ${i + 1}`, '',
    '- Assess severity: **speech**, respiratory rate, SpO2', '  - peak flow when the child is old enough',
    '- Salbutamol through a spacer, 10 puffs', '- Ipratropium when the response is poor',
    '- Oral prednisolone for three days', '- Review after one hour', '',
    `<!-- Speaker notes of slide ${i + 1}: ask the group what they would do next. -->`, '',
  ].join('\n')),
].join('\n')


// warm-up: JIT, Marp's and pptxgenjs's first runs
const measure = (rounds: number, once: () => Promise<void> | void) => sampleMs(rounds, once, Math.min(20, rounds))

const app = await bootForBench({ DATA_DIR: freshDataDir('bench-slides'), DATABASE_URL: 'memory://', TRUST_PROXY: 'true', LOG_LEVEL: 'silent' })
try {
  await app.core.db.sql`
    insert into clinical.users (name, email, password_hash, role, email_verified)
    values ('Bench', 'bench@example.test', ${await hashPassword(PASSWORD)}, 'moderator', true)`
  const login = await app.fetch(new Request('http://localhost/api/auth/login', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-client': 'mobile' },
    body: JSON.stringify({ email: 'bench@example.test', password: PASSWORD }),
  }))
  const { token } = (await login.json()) as { token: string }

  let ip = 0
  const post = (path: string, body: unknown) => {
    // A new client address per request: the API-wide limit (200 per minute per address) must not answer instead.
    ip++
    return app.fetch(new Request(`http://localhost/api/admin/learning/${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', authorization: `Bearer ${token}`,
        'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`,
      },
      body: JSON.stringify(body),
    }))
  }
  let slides = 0
  let pptxBytes = 0
  const preview = async () => {
    const res = await post('preview-slides', { markdown: deck })
    if (res.status !== 200) throw new Error(`preview-slides answered ${res.status}: ${(await res.text()).slice(0, 200)}`)
    slides = ((await res.json()) as { slides: string[] }).slides.length
  }
  const download = async () => {
    const res = await post('generate-pptx', { markdown: deck, title: 'Acute asthma' })
    if (res.status !== 200) throw new Error(`generate-pptx answered ${res.status}: ${(await res.text()).slice(0, 200)}`)
    pptxBytes = (await res.arrayBuffer()).byteLength
  }

  const figures: Array<[string, number[]]> = [
    ['renderSlides alone (the floor)', await measure(ROUNDS, () => void renderSlides(deck))],
    ['POST preview-slides', await measure(ROUNDS, preview)],
    ['buildPptx alone', await measure(PPTX_ROUNDS, async () => void (await buildPptx(deck, 'Acute asthma')))],
    ['POST generate-pptx', await measure(PPTX_ROUNDS, download)],
  ]
  const fmt = (ms: number) => ms.toFixed(2).padStart(8)
  console.log(`\n${SLIDES}-slide deck (${deck.length} characters; preview answered ${slides} slides; .pptx ${pptxBytes} bytes)`)
  console.log(`PGlite in memory, one request at a time; ${ROUNDS} previews, ${PPTX_ROUNDS} .pptx builds (ms)`)
  console.log(`${'figure'.padEnd(40)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}`)
  for (const [name, samples] of figures) console.log(`${name.padEnd(40)} ${fmt(quantile(samples, 0.5))} ${fmt(quantile(samples, 0.99))}`)
} finally {
  await app.shutdown()
}

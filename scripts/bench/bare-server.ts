// The baseline of scripts/bench/http.ts: a bare Bun.serve doing the database work of the three hot authenticated
// reads without the framework, through the app's own openDb (the same driver) and token helpers:
// - GET /quiz/api/auth/me: verify the HS256 bearer token (audience "quiz"), read the user row by id, check the
//   token version, look up the token's signed-out mark (core.kv), answer the user (plugins/quiz/services/accounts.ts
//   userFromToken);
// - GET /api/auth/me: the clinical session check of plugins/clinical/guard.ts (services/sessions.ts authenticate):
//   the token (Bearer, else the cookie), verify it (audience "clinical"), its SHA-256, the user row joined with its
//   session row, the disabled, legacy-token and web idle checks, the throttled session touch (on writes only, so
//   none on a GET), the in-memory API-call count stored every 5 s; answer the profile from that row. The API rate
//   rule is left out unless BARE_RATE_RULE=1: then the request first goes through the app's own limiter
//   (src/core/ratelimit.ts, the rule of plugins/clinical/envelope.ts, batched and reconciled with the database as the
//   app does it) for the client address TRUST_PROXY=1 gives (the last X-Forwarded-For entry), and a refusal is 429;
// - GET /quiz/api/questions/bank: the quiz user check above, then the default first page (50 newest, no filter):
//   the page's ids with the count of every match in one scan, and the page's rows with the app's own SQL
//   (QUESTION_ROWS of plugins/quiz/services/bank.ts).
// BARE_FRAMEWORK=elysia routes the same handlers through a bare Elysia app (below): the framework's ceiling.
// Reads PORT, HOST, JWT_SECRET, DATA_DIR, DATABASE_URL, DATABASE_POOL_SIZE like the server does (JWT_SECRET must be
// set: no generated secret here).
import { Elysia } from 'elysia'
import { readCookie } from '../../src/auth/cookie'
import { bearerToken, verifyToken } from '../../src/auth/jwt'
import { sha256Hex } from '../../src/core/crypto'
import { openDb, type Db } from '../../src/core/db'
import { createRateLimiter, type RateLimiter } from '../../src/core/ratelimit'
import { QUESTION_ROWS } from '../../plugins/quiz/services/bank'
import { CLINICAL_API_RATE_RULE } from '../../plugins/clinical/envelope'

// One bare server a process (openBare sets these).
let secret = ''
let db: Db
let rateLimit: RateLimiter | null = null

// ---- quiz -------------------------------------------------------------------------------------------------

interface QuizUserRow {
  id: number
  email: string
  name: string
  role: string
  is_verified: boolean
  unthrottled: boolean
  token_version: number
  created_at: Date
}

const quizUnauthorized = () =>
  Response.json({ detail: 'Not authenticated' }, { status: 401, headers: { 'www-authenticate': 'Bearer' } })

async function quizUser(request: Request): Promise<QuizUserRow | null> {
  const token = bearerToken(request.headers.get('authorization'))
  const claims = token ? await verifyToken(secret!, 'quiz', token) : null
  const id = Number(claims?.sub)
  if (!claims || !Number.isInteger(id)) return null
  const [row] = await db.sql<QuizUserRow>`
    select id, email, name, role, is_verified, unthrottled, token_version, created_at from quiz.users where id = ${id}`
  if (!row || row.token_version !== claims.ver) return null
  if (typeof claims.jti === 'string') {
    const [mark] = await db.sql<{ value: unknown }>`
      select value from core.kv where key = ${`quiz:signed-out:${claims.jti}`} and (expires_at is null or expires_at > now())`
    if (mark) return null
  }
  return row
}

async function quizMe(request: Request): Promise<Response> {
  const row = await quizUser(request)
  if (!row) return quizUnauthorized()
  return Response.json({
    id: row.id, email: row.email, name: row.name, role: row.role, created_at: row.created_at.toISOString(),
    is_verified: row.is_verified, unthrottled: row.unthrottled,
  })
}

async function bankPage(request: Request): Promise<Response> {
  const user = await quizUser(request)
  if (!user) return quizUnauthorized()
  const moderator = user.role === 'moderator' || user.role === 'admin'
  const more = await db.sql<{ id: number; total: number }>`
    select q.id, count(*) over ()::int as total from quiz.questions q where true
    order by q.id desc limit ${50} offset ${0}`
  const ids = more.map((r) => r.id)
  const rows = ids.length === 0 ? [] : await db.sql<{ id: number; options: unknown; tags: unknown }>`${QUESTION_ROWS(moderator, ids)}`
  const byId = new Map(rows.map((r) => [r.id, {
    ...r, options: Array.isArray(r.options) ? r.options.map(String) : [], tags: r.tags ?? [],
  }]))
  return Response.json({ total: more[0]?.total ?? 0, questions: ids.map((id) => byId.get(id)).filter((r) => r !== undefined) })
}

// ---- clinical ---------------------------------------------------------------------------------------------

interface ClinicalRow {
  id: number
  name: string
  email: string
  role: string
  email_verified: boolean
  totp_enabled: boolean
  disabled: boolean
  can_local_auth: boolean
  created_at: Date
  session_id: string | null
  client: 'web' | 'mobile' | null
  last_activity: Date | null
}

const WEB_IDLE_LIMIT_MS = 24 * 3600 * 1000
const SESSION_TOUCH_THROTTLE_MS = 10 * 60 * 1000
const clinicalUnauthorized = (error: string) =>
  Response.json({ success: false, error }, { status: 401, headers: { 'www-authenticate': 'Bearer' } })

/** TRUST_PROXY=1: the address the one trusted proxy appended, else the socket's (the bench always sends one). */
const clientAddress = (request: Request) => request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim() || '127.0.0.1'

let apiCalls = new Map<number, number>()
async function storeApiCalls() {
  const batch = apiCalls
  apiCalls = new Map()
  for (const [userId, n] of batch) await db.sql`update clinical.users set api_calls = api_calls + ${n} where id = ${userId}`
}

async function clinicalMe(request: Request): Promise<Response> {
  if (rateLimit) {
    const decision = await rateLimit.hit(CLINICAL_API_RATE_RULE, clientAddress(request))
    if (!decision.allowed) return Response.json({ success: false, error: 'Too many requests' }, { status: 429, headers: { 'retry-after': String(decision.retryAfterS) } })
  }
  const token = bearerToken(request.headers.get('authorization')) ?? readCookie(request, 'app_auth')
  if (!token) return clinicalUnauthorized('Not authenticated')
  const now = Date.now()
  const claims = await verifyToken(secret!, 'clinical', token, now)
  const userId = Number(claims?.sub)
  if (!claims || !Number.isSafeInteger(userId)) return clinicalUnauthorized('Invalid or expired token')
  const tokenHash = sha256Hex(token)
  const [row] = await db.sql<ClinicalRow>`
    select u.id, u.name, u.email, u.role, u.email_verified, u.totp_enabled, u.disabled, u.can_local_auth, u.created_at,
           s.id as session_id, s.client, s.last_activity
    from clinical.users u
    left join clinical.user_sessions s on s.token_hash = ${tokenHash} and s.user_id = u.id
    where u.id = ${userId}`
  if (!row) return clinicalUnauthorized('Invalid or expired token')
  if (row.disabled) return clinicalUnauthorized('Account disabled')
  if (row.session_id === null) {
    if (typeof claims.sid === 'string') return clinicalUnauthorized('Session revoked')
    const [other] = await db.sql<{ n: number }>`select count(*)::int as n from clinical.user_sessions where user_id = ${userId}`
    if (other!.n > 0) return clinicalUnauthorized('Session revoked')
  } else {
    const idleMs = now - row.last_activity!.getTime()
    if (row.client === 'web' && idleMs > WEB_IDLE_LIMIT_MS) {
      await db.sql`delete from clinical.user_sessions where token_hash = ${tokenHash}`
      return clinicalUnauthorized('Session expired after 24 hours of inactivity')
    }
    // A GET is no write: the session is touched (at most every 10 minutes) on POST, PUT, PATCH and DELETE only.
    if (request.method !== 'GET' && idleMs > SESSION_TOUCH_THROTTLE_MS) {
      await db.sql`update clinical.user_sessions set last_activity = ${new Date(now).toISOString()} where token_hash = ${tokenHash}`
    }
  }
  apiCalls.set(row.id, (apiCalls.get(row.id) ?? 0) + 1)
  return Response.json({
    success: true,
    user: {
      id: row.id, name: row.name, email: row.email, role: row.role, totp_enabled: row.totp_enabled,
      email_verified: row.email_verified, canLocalAuth: row.can_local_auth,
    },
  })
}

const routes: Record<string, (request: Request) => Promise<Response>> = {
  '/quiz/api/auth/me': quizMe,
  '/api/auth/me': clinicalMe,
  '/quiz/api/questions/bank': bankPage,
  '/api/health': async () => Response.json({ ok: true }),
}

export interface Bare {
  fetch(request: Request): Promise<Response>
  close(): Promise<void>
}

/** Opens the bare server's database and answers its fetch (once a process); scripts/bench/in-process.ts drives it too. */
export async function openBare(env: Record<string, string | undefined> = process.env): Promise<Bare> {
  if (!env.JWT_SECRET) throw new Error('JWT_SECRET must be set')
  secret = env.JWT_SECRET
  db = await openDb({ url: env.DATABASE_URL || null, dataDir: env.DATA_DIR ?? './data', poolSize: Number(env.DATABASE_POOL_SIZE ?? 10) })
  rateLimit = env.BARE_RATE_RULE === '1' ? createRateLimiter(db, Date.now, { solo: db.kind === 'pglite' }) : null
  const timer = setInterval(() => void storeApiCalls(), 5_000)
  timer.unref()
  // BARE_FRAMEWORK=elysia: the same handlers as routes of an Elysia app with no hook, plugin or schema (the
  // framework's own cost per request: its router, its context and its handler chain).
  const framework = env.BARE_FRAMEWORK === 'elysia'
    ? Object.entries(routes).reduce((app, [path, handle]) => app.get(path, ({ request }) => handle(request)), new Elysia())
    : null
  return {
    fetch: framework ? (request) => framework.fetch(request) as Promise<Response> : async (request) => {
      const handle = routes[new URL(request.url).pathname]
      return handle ? handle(request) : new Response('Not found', { status: 404 })
    },
    async close() {
      clearInterval(timer)
      await rateLimit?.close()
      await db.close()
    },
  }
}

if (import.meta.main) {
  const bare = await openBare()
  const server = Bun.serve({ port: Number(process.env.PORT ?? 3001), hostname: process.env.HOST ?? '127.0.0.1', fetch: bare.fetch })
  const stop = async () => {
    await server.stop()
    await bare.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop())
  process.on('SIGINT', () => void stop())
}

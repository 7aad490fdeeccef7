// The baseline of scripts/bench/http.ts: a bare Bun.serve that does the work of GET {quiz}/api/auth/me without
// the framework: verify the HS256 bearer token (jose, audience "quiz"), read the user row by id through openDb,
// check the token version, answer the same JSON. Reads PORT, HOST, JWT_SECRET, DATA_DIR, DATABASE_URL,
// DATABASE_POOL_SIZE like the server does (JWT_SECRET must be set: no generated secret here).
import { bearerToken, verifyToken } from '../../src/auth/jwt'
import { openDb } from '../../src/core/db'

const secret = process.env.JWT_SECRET
if (!secret) throw new Error('JWT_SECRET must be set')
const db = await openDb({
  url: process.env.DATABASE_URL || null,
  dataDir: process.env.DATA_DIR ?? './data',
  poolSize: Number(process.env.DATABASE_POOL_SIZE ?? 10),
})

interface UserRow {
  id: number
  email: string
  name: string
  role: string
  is_verified: boolean
  unthrottled: boolean
  token_version: number
  created_at: Date | string
}

const unauthorized = () =>
  Response.json({ detail: 'Not authenticated' }, { status: 401, headers: { 'www-authenticate': 'Bearer' } })

async function me(request: Request): Promise<Response> {
  const token = bearerToken(request.headers.get('authorization'))
  const claims = token ? await verifyToken(secret!, 'quiz', token) : null
  const id = Number(claims?.sub)
  if (!claims || !Number.isInteger(id)) return unauthorized()
  const [row] = await db.sql<UserRow>`
    select id, email, name, role, is_verified, unthrottled, token_version, created_at from quiz.users where id = ${id}`
  if (!row || row.token_version !== claims.ver) return unauthorized()
  return Response.json({
    id: row.id, email: row.email, name: row.name, role: row.role, created_at: new Date(row.created_at).toISOString(),
    is_verified: row.is_verified, unthrottled: row.unthrottled,
  })
}

const server = Bun.serve({
  port: Number(process.env.PORT ?? 3001),
  hostname: process.env.HOST ?? '127.0.0.1',
  async fetch(request) {
    const path = new URL(request.url).pathname
    if (path === '/quiz/api/auth/me') return me(request)
    if (path === '/api/health') return Response.json({ ok: true })
    return new Response('Not found', { status: 404 })
  },
})

const stop = async () => {
  await server.stop()
  await db.close()
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())

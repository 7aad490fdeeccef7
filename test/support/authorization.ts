// The authorization matrix's machinery (test/authorization-matrix.test.ts holds the table): the operations both
// OpenAPI documents list, the callers of each service, the resources a route acts on, and one request per
// operation and caller with a minimal body built from the operation's own schema.
import { expect } from 'bun:test'
import { EXTRACTION_JOB_KIND } from '../../plugins/quiz/models/extraction'
import type { TestApp } from './app'
import { MOBILE, insertUser, signIn, userWithSession } from './clinical'
import { API, PASSWORD, createAccount, freshIp, loginToken, makeRegexQuiz, registerAdmin, uniqueEmail } from './quiz'

/** The least role a route admits; `public` needs no credentials. */
export type Role = 'public' | 'user' | 'moderator' | 'admin'
/** Who sends a request: no credentials, one account per role, and a second plain user ("another user"). */
export type CallerName = 'anonymous' | 'other' | 'user' | 'moderator' | 'admin'
export type Service = 'quiz' | 'clinical'
/** Path, query and body values a request takes from the resource it acts on. */
export type Resource = Record<string, string | number>

export const RANK: Record<Role, number> = { public: 0, user: 1, moderator: 2, admin: 3 }
/** Refused callers go first, so a request that should have been refused cannot spoil a later allowed one. */
export const CALLERS: CallerName[] = ['anonymous', 'other', 'user', 'moderator', 'admin']
export const callerRank = (caller: CallerName) => (caller === 'anonymous' ? 0 : caller === 'other' ? RANK.user : RANK[caller])

// ---- the documented operations ----------------------------------------------------------------------------------

export interface Schema {
  type?: string | string[]; format?: string; enum?: unknown[]; const?: unknown; minimum?: number; minLength?: number
  minItems?: number; properties?: Record<string, Schema>; required?: string[]; items?: Schema; anyOf?: Schema[]
}
export interface Operation {
  /** `METHOD path`, as the table is keyed. */
  key: string
  method: string
  path: string
  service: Service
  params: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>
  body: Schema | null
  bodyTypes: string[]
}

/** The OpenAPI document of each service (the same routes the Swagger pages read). */
export const DOCS: Record<Service, string> = { quiz: '/quiz/docs/json', clinical: '/docs/json' }

type RawOperation = { parameters?: Operation['params']; requestBody?: { content: Record<string, { schema: Schema }> } }

export async function documentedOperations(app: TestApp): Promise<Operation[]> {
  const all: Operation[] = []
  for (const service of ['quiz', 'clinical'] as const) {
    const res = await app.get(DOCS[service])
    expect(res.status).toBe(200)
    const spec = (await res.json()) as { paths: Record<string, Record<string, RawOperation>> }
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const content = op.requestBody?.content ?? {}
        const schema = content['application/json']?.schema ?? content['multipart/form-data']?.schema ?? null
        all.push({
          key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, service,
          params: op.parameters ?? [], body: op.requestBody ? schema ?? {} : null, bodyTypes: Object.keys(content),
        })
      }
    }
  }
  return all
}

// ---- minimal values from a schema -------------------------------------------------------------------------------

const isNull = (s: Schema) => s.type === 'null'
const hasBinary = (s: Schema | null) => Object.values(s?.properties ?? {}).some((p) => p.format === 'binary')

/**
 * The smallest value the schema accepts as far as a schema can tell: required fields only, null where allowed. An
 * email field is a new address each time, so the per-address limits of the reset and contact routes stay out of it.
 */
export function sample(schema: Schema | undefined, name = ''): unknown {
  if (!schema) return {}
  if (schema.anyOf) {
    if (schema.anyOf.some(isNull)) return null
    // Numeric fields are documented as "a number, or a numeric string": send the number.
    return sample(schema.anyOf.find((s) => s.type === 'integer' || s.type === 'number') ?? schema.anyOf[0], name)
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) return null
  if (schema.const !== undefined) return schema.const
  if (schema.enum) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'object': case undefined:
      return Object.fromEntries((schema.required ?? []).map((k) => [k, sample(schema.properties?.[k], k)]))
    case 'array': return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items))
    case 'integer': case 'number': return schema.minimum ?? 1
    case 'boolean': return false
    default:
      if (schema.format === 'email' || /^(email|to)$/i.test(name)) return uniqueEmail('matrix')
      if (schema.format === 'uuid') return crypto.randomUUID()
      // A closed local port: anything that dials it fails at once instead of waiting on a name lookup.
      if (schema.format === 'uri') return 'http://127.0.0.1:9/'
      if (schema.format === 'date-time') return new Date().toISOString()
      return 'Matrix-probe'.padEnd(schema.minLength ?? 0, 'x')
  }
}

/** A path parameter that names no row: the route's own answer to a missing thing (404) is fine for the matrix. */
function anyId(schema: Schema | undefined): string {
  if (schema?.format === 'uuid') return crypto.randomUUID()
  const numeric = schema?.type === 'integer' || schema?.type === 'number' || schema?.anyOf?.some((s) => s.type === 'integer')
  return numeric ? '999999' : 'matrix-probe'
}

// ---- small real files -------------------------------------------------------------------------------------------

/** A quarter second of 8 kHz mono WAV: a real recording for the audio routes. */
export function wav(): Uint8Array<ArrayBuffer> {
  const samples = 2000
  const bytes = new Uint8Array(44 + samples)
  const view = new DataView(bytes.buffer)
  const text = (at: number, s: string) => bytes.set(new TextEncoder().encode(s), at)
  text(0, 'RIFF'); view.setUint32(4, 36 + samples, true); text(8, 'WAVE'); text(12, 'fmt ')
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true)
  view.setUint32(24, 8000, true); view.setUint32(28, 8000, true); view.setUint16(32, 1, true); view.setUint16(34, 8, true)
  text(36, 'data'); view.setUint32(40, samples, true)
  for (let i = 0; i < samples; i++) bytes[44 + i] = 128 + Math.round(100 * Math.sin(i / 3))
  return bytes
}

const fileFor = (field: string) =>
  field === 'audio' ? new File([wav()], 'recording.wav', { type: 'audio/wav' }) : new File(['Matrix probe\n'], 'notes.txt', { type: 'text/plain' })

function formOf(value: Record<string, unknown>, schema: Schema | null): FormData {
  const form = new FormData()
  for (const [k, v] of Object.entries(value)) {
    if (schema?.properties?.[k]?.format === 'binary') form.append(k, fileFor(k))
    else if (v !== null && v !== undefined) form.append(k, String(v))
  }
  return form
}

// ---- callers ----------------------------------------------------------------------------------------------------

export interface Account { id: number; email: string; token: string }
export type Callers = Record<Exclude<CallerName, 'anonymous'>, Account>

/** Quiz accounts: the first registration is the admin, who makes the others (spec 1, Admin: users). */
export async function quizCallers(app: TestApp): Promise<Callers> {
  const admin = await registerAdmin(app)
  return {
    admin,
    moderator: await createAccount(app, admin, 'moderator'),
    user: await createAccount(app, admin, 'user', 'alice'),
    other: await createAccount(app, admin, 'user', 'bob'),
  }
}

/** Clinical accounts with a Bearer (mobile) session each, so no web idle rule or cookie gets in the way. */
export async function clinicalCallers(app: TestApp): Promise<Callers> {
  const account = async (role: 'admin' | 'moderator' | 'user', tag: string) => {
    const s = await userWithSession(app, role, tag)
    return { id: s.user.id, email: s.email, token: s.token }
  }
  return {
    admin: await account('admin', 'admin'),
    moderator: await account('moderator', 'moderator'),
    user: await account('user', 'alice'),
    other: await account('user', 'bob'),
  }
}

/** A second session of the account, for a route that ends the session it is called with. */
export const freshSession = (app: TestApp, service: Service, who: Account): Promise<string> =>
  service === 'quiz' ? loginToken(app, who.email) : signIn(app, who.email, { ip: freshIp() }).then((s) => s.token)

// ---- resources --------------------------------------------------------------------------------------------------

export interface Fixture {
  app: TestApp
  quiz: Callers
  clinical: Callers
  /** A published learning quiz the moderator made, with one of its questions. */
  sharedQuiz: { quiz_id: number; question_id: number }
}

type Maker = (f: Fixture, owner: Account) => Promise<Resource>

async function json<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text()
  expect(res.status, text.slice(0, 300)).toBe(status)
  return JSON.parse(text) as T
}

async function quizOfModerator(f: Fixture, publish: boolean): Promise<{ quiz_id: number; question_id: number }> {
  const { app, quiz: { moderator } } = f
  const { quizId } = await makeRegexQuiz(app, moderator, { mode: 'learning', n: 2 })
  if (publish) await json(await app.request(`${API}/quizzes/${quizId}/publish?published=true`, { method: 'PATCH', token: moderator.token }))
  const questions = await json<Array<{ id: number }>>(await app.get(`${API}/quizzes/${quizId}/questions`, { token: moderator.token }))
  return { quiz_id: quizId, question_id: questions[0]!.id }
}

/** A new incomplete attempt of the owner on the shared quiz. */
async function quizAttempt(f: Fixture, owner: Account): Promise<{ attempt_id: number; quiz_id: number }> {
  const res = await f.app.request(`${API}/attempts/start?quiz_id=${f.sharedQuiz.quiz_id}&fresh=true`, { method: 'POST', token: owner.token })
  return { attempt_id: (await json<{ id: number }>(res)).id, quiz_id: f.sharedQuiz.quiz_id }
}

/** A ready two-page document owned by the account, written directly (no PDF processing). */
async function quizDocument(f: Fixture, owner: Account): Promise<{ document_id: number }> {
  const [doc] = await f.app.db.sql<{ id: number }>`
    insert into quiz.documents (user_id, filename, original_filename, status, total_pages, storage_key, size_bytes)
    values (${owner.id}, 'matrix.pdf', 'matrix.pdf', 'ready', 2, 'test/none.pdf', 0) returning id`
  return { document_id: doc!.id }
}

const clinicalUpload = async (f: Fixture, owner: Account): Promise<number> => {
  const form = new FormData()
  form.append('file', new File(['A clinical letter.\n'], 'letter.txt', { type: 'text/plain' }))
  const res = await f.app.request('/api/documents/upload', { method: 'POST', body: form, token: owner.token, headers: MOBILE, ip: freshIp() })
  return (await json<{ id: number }>(res)).id
}

const clinicalPost = async (f: Fixture, owner: Account, path: string, body: unknown): Promise<number> =>
  (await json<{ id: number }>(await f.app.post(path, body, { token: owner.token, headers: MOBILE, ip: freshIp() }))).id

const extension = async (f: Fixture, owner: Account) => ({
  id: await clinicalPost(f, owner, '/api/extensions', { location: 'Ward 4', name: 'Matrix desk', number: '4321', type: 'extension', notes: '' }),
})

/**
 * Every resource a route of the table acts on. Each maker returns the path (and query) values naming it; `owner`
 * is whose it is: each caller's own for an owned route, else the moderator, who makes quizzes, documents and jobs.
 */
export const FAMILIES = {
  // quiz service
  sharedQuiz: async (f) => f.sharedQuiz,
  scratchQuiz: (f) => quizOfModerator(f, true),
  trashedQuiz: async (f) => {
    const quiz = await quizOfModerator(f, false)
    const res = await f.app.delete(`${API}/quizzes/${quiz.quiz_id}`, { token: f.quiz.moderator.token })
    expect(res.status).toBe(204)
    return quiz
  },
  quizDocument,
  quizSection: async (f, owner) => {
    const { document_id } = await quizDocument(f, owner)
    const [section] = await f.app.db.sql<{ id: number }>`
      insert into quiz.sections (document_id, name, start_page, end_page) values (${document_id}, 'All', 1, 2) returning id`
    return { document_id, section_id: section!.id }
  },
  /** A finished extraction job of the owner, written directly: cancelling it is the owner's 400 "not running". */
  quizJob: async (f, owner) => {
    const id = crypto.randomUUID()
    await f.app.db.sql`insert into core.jobs (id, kind, service, owner_id, title, status)
      values (${id}, ${EXTRACTION_JOB_KIND}, 'quiz', ${owner.id}, 'Matrix extraction', 'completed')`
    return { job_id: id }
  },
  quizAttempt,
  /** The shared quiz once the owner has a submitted attempt on it: what lets a regular user review it. */
  quizReview: async (f, owner) => {
    const { attempt_id } = await quizAttempt(f, owner)
    await json(await f.app.post(`${API}/attempts/${attempt_id}/submit`, { answers: [] }, { token: owner.token }))
    return { quiz_id: f.sharedQuiz.quiz_id }
  },
  quizUser: async (f) => {
    const res = await f.app.post(`${API}/admin/users`, { email: uniqueEmail('target'), password: PASSWORD, name: 'Target' }, { token: f.quiz.admin.token })
    return { user_id: (await json<{ id: number }>(res)).id }
  },
  /** A verified quiz account nobody else signs in with, for the public login route. */
  quizLogin: async (f) => {
    const email = uniqueEmail('login')
    await json(await f.app.post(`${API}/admin/users`, { email, password: PASSWORD, name: 'Login' }, { token: f.quiz.admin.token }))
    return { email }
  },
  // clinical service
  encounter: async (f, owner) => ({
    id: await clinicalPost(f, owner, '/api/encounters/saved', { label: 'Matrix visit', enc_type: 'soap', transcript: 'Cough for two days.', generated_note: '' }),
  }),
  memory: async (f, owner) => ({
    id: await clinicalPost(f, owner, '/api/memories', { category: 'custom', name: 'Matrix memory', content: 'Prefers short notes.' }),
  }),
  audioBackup: async (f, owner) => {
    const form = new FormData()
    form.append('audio', new File([wav()], 'recording.wav', { type: 'audio/wav' }))
    const res = await f.app.request('/api/audio-backups', { method: 'POST', body: form, token: owner.token, headers: MOBILE, ip: freshIp() })
    return { id: (await json<{ id: number }>(res)).id }
  },
  clinicalDocument: async (f, owner) => ({ id: await clinicalUpload(f, owner) }),
  /** The owner's document and the signed download link it was given: the link is the credential. */
  documentLink: async (f, owner) => {
    const id = await clinicalUpload(f, owner)
    const { url } = await json<{ url: string }>(await f.app.get(`/api/documents/${id}/download`, { token: owner.token, headers: MOBILE, ip: freshIp() }))
    const link = new URL(url, 'http://localhost')
    return { id, expires: link.searchParams.get('expires')!, signature: link.searchParams.get('signature')! }
  },
  extension,
  trashedExtension: async (f, owner) => {
    const { id } = await extension(f, owner)
    await json(await f.app.delete(`/api/extensions/${id}`, { token: owner.token, headers: MOBILE, ip: freshIp() }))
    return { id }
  },
  /** Another session of the owner (not the one the caller signs its requests with). */
  clinicalSession: async (f, owner) => ({ id: (await signIn(f.app, owner.email, { ip: freshIp() })).sessionId }),
  clinicalUser: async (f) => ({ id: await insertUser(f.app, { email: uniqueEmail('target'), verified: false }) }),
  clinicalLogin: async (f) => {
    const email = uniqueEmail('login')
    await insertUser(f.app, { email })
    return { email }
  },
} satisfies Record<string, Maker>
export type Family = keyof typeof FAMILIES

// ---- one request ------------------------------------------------------------------------------------------------

export interface RequestPlan {
  op: Operation
  /** null: no credentials. */
  token: string | null
  resource: Resource
  /** The body to send instead of the schema's minimal sample. */
  body?: unknown
}

/** Sends the operation once: ids from the resource (or ids of nothing), required query values, a minimal body. */
export function send(app: TestApp, plan: RequestPlan): Promise<Response> {
  const { op, resource } = plan
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(String(resource[name] ?? anyId(op.params.find((p) => p.name === name)?.schema))))
  const query = new URLSearchParams()
  for (const p of op.params.filter((q) => q.in === 'query')) {
    if (resource[p.name] !== undefined) query.set(p.name, String(resource[p.name]))
    else if (p.required) query.set(p.name, String(sample(p.schema)))
  }
  const headers: Record<string, string> = { accept: 'application/json', ...(op.service === 'clinical' ? MOBILE : {}) }
  let body: BodyInit | undefined
  if (op.body) {
    const value = plan.body !== undefined ? plan.body : sample(op.body)
    if (value instanceof FormData) body = value
    else if (hasBinary(op.body) || !op.bodyTypes.includes('application/json')) body = formOf(value as Record<string, unknown>, op.body)
    else {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(value)
    }
  }
  const url = query.size > 0 ? `${path}?${query}` : path
  // A fresh client address each time: the per-address limits (API calls, sign-ins) measure other things.
  return app.request(url, { method: op.method, headers, body, ip: freshIp(), ...(plan.token ? { token: plan.token } : {}) })
}

// Helpers of the quiz service's tests: unique data, client addresses, the account calls every file makes,
// and the checks of spec 1's response shapes (UserResponse, error detail, 422 field locations).
import { expect } from 'bun:test'
import type { TestApp } from './app'
import { rememberSecret } from './secrets'
import type { ReceivedMail } from './smtp'

export const API = '/quiz/api'
export const PASSWORD = 'correct-horse-1'
rememberSecret('password', PASSWORD)

let emailSeq = 0
export const uniqueEmail = (tag: string) => `${tag}-${Date.now().toString(36)}-${++emailSeq}@example.test`

// One counter for the whole `bun test` process (it loads this module once for all files), so no two tests of
// any file share an address.
let ipSeq = 0
/** A client address no other test has used, so the login limit of one test never leaks into another. */
export const freshIp = () => {
  ipSeq++
  return `10.77.${Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}`
}

/** Gives background work (mail sending) time to happen, before asserting that it did not. */
export const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms))

export interface TokenBody { access_token: string; token_type: string }
export interface UserBody {
  id: number; email: string; name: string; role: string; created_at: string
  access_token?: string; unthrottled?: boolean; [k: string]: unknown
}

export const isVerifyMail = (email: string) => (m: ReceivedMail) => m.to.includes(email.toLowerCase()) && m.text.includes('/quiz/verify-email?token=')
export const isResetMail = (email: string) => (m: ReceivedMail) => m.to.includes(email.toLowerCase()) && m.text.includes('/quiz/reset-password?token=')

/** A UserResponse: the expected fields, every field typed, and no password hash under any name. */
export function expectUserResponse(body: UserBody, expected: Partial<Pick<UserBody, 'id' | 'email' | 'name' | 'role'>>) {
  expect(body).toMatchObject(expected)
  expect(typeof body.id).toBe('number')
  expect(typeof body.email).toBe('string')
  expect(typeof body.name).toBe('string')
  expect(['admin', 'moderator', 'user']).toContain(body.role)
  expect(Number.isNaN(Date.parse(body.created_at))).toBe(false)
  for (const key of Object.keys(body)) expect(key).not.toMatch(/hash|password/i)
}

/** An error answer: the status and a non-empty `detail` string, which it returns. */
export async function expectDetail(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status)
  const body = (await res.json()) as { detail: unknown }
  expect(typeof body.detail).toBe('string')
  expect((body.detail as string).length).toBeGreaterThan(0)
  return body.detail as string
}

/** A 422 whose `detail` list names the body field. */
export async function expectValidation(res: Response, field: string) {
  expect(res.status).toBe(422)
  const body = (await res.json()) as { detail: Array<{ loc: unknown[]; msg: string; type: string }> }
  expect(Array.isArray(body.detail)).toBe(true)
  expect(body.detail.some((d) => d.loc[0] === 'body' && d.loc[d.loc.length - 1] === field)).toBe(true)
  for (const d of body.detail) expect(typeof d.msg).toBe('string')
}

export async function userCount(t: TestApp, email: string): Promise<number> {
  const [row] = await t.db.sql<{ n: number }>`select count(*) as n from quiz.users where lower(email) = lower(${email})`
  return row!.n
}

export async function register(t: TestApp, email: string, extra: Record<string, unknown> = {}) {
  return t.post(`${API}/auth/register`, { email, password: PASSWORD, name: email.split('@')[0], ...extra }, { ip: freshIp() })
}

export async function login(t: TestApp, email: string, password = PASSWORD, extra: Record<string, unknown> = {}, ip = freshIp()) {
  return t.post(`${API}/auth/login`, { email, password, ...extra }, { ip })
}

export async function loginToken(t: TestApp, email: string, password = PASSWORD): Promise<string> {
  const res = await login(t, email, password)
  expect(res.status).toBe(200)
  const body = (await res.json()) as TokenBody
  expect(body.token_type).toBe('bearer')
  return body.access_token
}

export type Role = 'admin' | 'moderator' | 'user'
export interface Account { id: number; email: string; token: string }

/** The user's id and role as stored, or null when no user has that email (in any letter case). */
export async function userRow(t: TestApp, email: string) {
  const [row] = await t.db.sql<{ id: number; role: string }>`select id, role from quiz.users where lower(email) = lower(${email})`
  return row ?? null
}

/** The first registration of a fresh app: the admin. */
export async function registerAdmin(t: TestApp): Promise<Account> {
  const email = uniqueEmail('admin')
  const res = await register(t, email, { name: 'Admin' })
  expect(res.status).toBe(200)
  const token = ((await res.json()) as TokenBody).access_token
  const me = (await (await t.get(`${API}/auth/me`, { token })).json()) as UserBody
  expect(me.role).toBe('admin')
  return { id: me.id, email, token }
}

/** A user created by the admin, given a role, then logged in (a role change may end earlier tokens). */
export async function createAccount(t: TestApp, admin: Account, role: Role, tag: string = role): Promise<Account> {
  const email = uniqueEmail(tag)
  const res = await t.post(`${API}/admin/users`, { email, password: PASSWORD, name: tag }, { token: admin.token })
  expect(res.status).toBe(200)
  const { id } = (await res.json()) as UserBody
  if (role !== 'user') expect((await t.put(`${API}/admin/users/${id}/role`, { role }, { token: admin.token })).status).toBe(200)
  return { id, email, token: await loginToken(t, email) }
}

/** POST /api/documents/upload of these bytes as a PDF file field. */
export function upload(t: TestApp, token: string, bytes: Uint8Array<ArrayBuffer>, name = 'notes.pdf', headers: Record<string, string> = {}) {
  const form = new FormData()
  form.append('file', new File([bytes], name, { type: 'application/pdf' }))
  return t.request(`${API}/documents/upload`, { method: 'POST', body: form, token, headers })
}

/**
 * Page text the regex extractor reads: n numbered questions, options A-D, answer B, an explanation each. `tag`
 * makes every question's text unique (or shared, to extract the same questions twice).
 */
export function questionsText(tag: string, n: number): string {
  return Array.from({ length: n }, (_, k) => {
    const i = k + 1
    return [`${i}. Question ${tag} number ${i}?`, `A) Alpha ${tag} ${i}`, `B) Beta ${tag} ${i}`, `C) Gamma ${tag} ${i}`, `D) Delta ${tag} ${i}`,
      'Answer: B', `Explanation: Because ${tag} ${i}.`].join('\n')
  }).join('\n\n')
}

let quizSeq = 0
export interface RegexQuizOptions {
  mode?: 'timed' | 'learning'
  n?: number
  title?: string
  /** The page text; default questionsText(a fresh tag, n). */
  text?: string
  question_category_id?: number | null
}

/**
 * A quiz made the way moderators make one: a ready document with a section (rows written directly, no PDF), then
 * POST /api/quizzes/ in `regex` mode (no AI). The test app runs jobs inline, so the quiz exists on return: its id
 * and the job's id.
 */
export async function makeRegexQuiz(t: TestApp, moderator: Account, opts: RegexQuizOptions = {}): Promise<{ quizId: number; jobId: string }> {
  const tag = `q${++quizSeq}${crypto.randomUUID().slice(0, 4)}`
  const [doc] = await t.db.sql<{ id: number }>`
    insert into quiz.documents (user_id, filename, original_filename, status, total_pages, storage_key, size_bytes)
    values (${moderator.id}, 'test.pdf', 'questions.pdf', 'ready', 2, 'test/none.pdf', 0) returning id`
  await t.db.sql`insert into quiz.document_pages (document_id, page_number, text) values (${doc!.id}, 1, ${opts.text ?? questionsText(tag, opts.n ?? 3)})`
  await t.db.sql`insert into quiz.document_pages (document_id, page_number, text) values (${doc!.id}, 2, '')`
  const [section] = await t.db.sql<{ id: number }>`
    insert into quiz.sections (document_id, name, start_page, end_page) values (${doc!.id}, 'All', 1, 2) returning id`
  const res = await t.post(`${API}/quizzes/`, {
    section_id: section!.id, title: opts.title ?? `Quiz ${tag}`, mode: opts.mode ?? 'learning',
    time_limit_minutes: opts.mode === 'timed' ? 20 : null, extraction_mode: 'regex',
    question_category_id: opts.question_category_id ?? null,
  }, { token: moderator.token })
  expect(res.status).toBe(200)
  const { job_id } = (await res.json()) as { job_id: string }
  const job = (await (await t.get(`${API}/quizzes/job/${job_id}`, { token: moderator.token })).json()) as { status: string; quiz_id: number; error?: string }
  expect(job.error ?? null).toBeNull()
  expect(job.status).toBe('completed')
  return { quizId: job.quiz_id, jobId: job_id }
}

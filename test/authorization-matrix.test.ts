// The authorization matrix: every operation both OpenAPI documents list, sent once by each caller (anonymous, a
// user, a moderator, an admin, and another user for a route on someone's own resource), checked against the least
// role the specs give it. One table drives it, keyed exactly as the documents list the operations, so a route added
// without an entry (or an entry whose route is gone) fails the first test.
// Outcome classes: anonymous on a protected route 401; a lower role 403; an allowed caller anything but 401/403 (a
// 4xx for the probe's minimal input or a 404 for a missing thing is fine); another user's resource the status its
// family's rule gives (OTHER_USER); and no 5xx for anyone, except the documented 502/503/504 of a route that needs
// the AI gateway the test app does not have.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { databaseTargets, startTestApp, type TestApp } from './support/app'
import {
  CALLERS, FAMILIES, RANK, callerRank, clinicalCallers, documentedOperations, freshSession, quizCallers, send,
  type CallerName, type Family, type Fixture, type Operation, type Resource, type Role,
} from './support/authorization'
import { CLINICAL_PASSWORD } from './support/clinical'
import { PASSWORD } from './support/quiz'

setDefaultTimeout(60_000)

interface Entry {
  /** The least role the specs give the route; `public` needs no credentials. */
  role: Role
  /** The resource the route's path ids (and same-named query values) come from; without it, ids of nothing. */
  on?: Family
  /**
   * The route acts on the caller's own resource of this family: each caller sends a new one of its own, and another
   * user tries a new one of the user's (OTHER_USER gives the answer).
   */
  owns?: OwnedFamily
  /** The route changes or removes its resource: a new one for every request. */
  fresh?: true
  /** The body to send instead of the minimal sample of the documented schema. */
  body?: (r: Resource) => unknown
  /** Fixed path or query values. */
  with?: Resource
  /** The route ends the session it is called with: each caller sends a second session of its own. */
  ownSession?: true
  /** The route needs the AI gateway the test app has not got: 502, 503 and 504 are its documented answers. */
  upstream?: true
}

/** What another (plain) user gets for the user's resource, per family. */
const OTHER_USER = {
  // spec 1, Documents: own documents only unless moderator, 404 when missing: someone else's is not there for them.
  quizDocument: 404,
  // spec 1: owner-only rules (attempts, job cancel) come on top of the role, and the one the Errors table states is
  // 403 (cancelling a job one does not own); attempts follow the same rule.
  quizAttempt: 403,
  quizJob: 403,
  // spec 1, Quizzes: review is for a user with a completed attempt, or a moderator; without one, refused.
  quizReview: 403,
  // spec 3, Phone directory: own entries only, another user's entry is a 404. The clinical service's other user-owned
  // records (spec 2: encounters, memories, audio backups, documents; the caller's sessions) follow the same rule,
  // so an id tells nobody that it exists.
  encounter: 404,
  memory: 404,
  audioBackup: 404,
  clinicalDocument: 404,
  extension: 404,
  trashedExtension: 404,
  clinicalSession: 404,
} as const satisfies Partial<Record<Family, 403 | 404>>
type OwnedFamily = keyof typeof OTHER_USER

const WEBDAV = { server: 'http://127.0.0.1:9/', username: 'matrix', password: 'matrix-pass', path: '/' }

const MATRIX: Record<string, Entry> = {
  // ==== quiz service (spec 1) ====================================================================================
  // ---- auth
  'POST /quiz/api/auth/register': { role: 'public' },
  'POST /quiz/api/auth/login': { role: 'public', on: 'quizLogin', body: (r) => ({ email: r.email, password: PASSWORD }) },
  'GET /quiz/api/auth/verify-email': { role: 'public' },
  'POST /quiz/api/auth/resend-verification': { role: 'public' },
  'POST /quiz/api/auth/forgot-password': { role: 'public' },
  'POST /quiz/api/auth/reset-password': { role: 'public' },
  'GET /quiz/api/auth/me': { role: 'user' },
  'PUT /quiz/api/auth/me': { role: 'user' },
  'GET /quiz/api/auth/me/settings': { role: 'user' },
  'PUT /quiz/api/auth/me/settings': { role: 'user' },
  // ---- admin: users, settings, AI models
  'GET /quiz/api/admin/users': { role: 'admin' },
  'POST /quiz/api/admin/users': { role: 'admin' },
  'PUT /quiz/api/admin/users/{user_id}/role': { role: 'admin', on: 'quizUser', fresh: true },
  'PUT /quiz/api/admin/users/{user_id}/unthrottle': { role: 'admin', on: 'quizUser' },
  'DELETE /quiz/api/admin/users/{user_id}': { role: 'admin', on: 'quizUser', fresh: true },
  'GET /quiz/api/admin/settings': { role: 'admin' },
  'PUT /quiz/api/admin/settings': { role: 'admin' },
  'GET /quiz/api/admin/models/available': { role: 'user' },
  'GET /quiz/api/admin/models': { role: 'admin' },
  'POST /quiz/api/admin/models': { role: 'admin' },
  'PUT /quiz/api/admin/models/{model_id}': { role: 'admin' },
  'DELETE /quiz/api/admin/models/{model_id}': { role: 'admin' },
  'POST /quiz/api/admin/models/{model_id}/test': { role: 'admin' },
  'POST /quiz/api/admin/litellm/models': { role: 'admin', upstream: true },
  'POST /quiz/api/admin/tts/voices': { role: 'admin' },
  'POST /quiz/api/admin/embedding/test': { role: 'admin' },
  'POST /quiz/api/admin/embedding/regenerate': { role: 'admin' },
  // ---- documents
  'POST /quiz/api/documents/upload': { role: 'moderator' },
  'GET /quiz/api/documents': { role: 'user' },
  'GET /quiz/api/documents/{document_id}': { role: 'user', owns: 'quizDocument' },
  'DELETE /quiz/api/documents/{document_id}': { role: 'moderator', on: 'quizDocument', fresh: true },
  'GET /quiz/api/documents/{document_id}/status': { role: 'user', owns: 'quizDocument' },
  'GET /quiz/api/documents/{document_id}/processing-steps': { role: 'user', owns: 'quizDocument' },
  'GET /quiz/api/documents/{document_id}/sections': { role: 'user', owns: 'quizDocument' },
  'POST /quiz/api/documents/{document_id}/sections': {
    role: 'moderator', on: 'quizDocument', body: () => ({ name: 'Part one', start_page: 1, end_page: 2 }),
  },
  'DELETE /quiz/api/documents/{document_id}/sections/{section_id}': { role: 'moderator', on: 'quizSection', fresh: true },
  // ---- quizzes and extraction jobs
  'POST /quiz/api/quizzes': {
    role: 'moderator', body: () => ({ section_id: 999_999, title: 'Matrix quiz', mode: 'learning', time_limit_minutes: null, extraction_mode: 'regex' }),
  },
  'GET /quiz/api/quizzes': { role: 'user' },
  'GET /quiz/api/quizzes/jobs': { role: 'user' },
  'GET /quiz/api/quizzes/job/{job_id}': { role: 'moderator', on: 'quizJob' },
  'POST /quiz/api/quizzes/job/{job_id}/cancel': { role: 'user', owns: 'quizJob' },
  'GET /quiz/api/quizzes/search': { role: 'user' },
  'GET /quiz/api/quizzes/trash': { role: 'moderator' },
  'GET /quiz/api/quizzes/{quiz_id}': { role: 'user', on: 'sharedQuiz' },
  'PATCH /quiz/api/quizzes/{quiz_id}': { role: 'moderator', on: 'sharedQuiz' },
  'DELETE /quiz/api/quizzes/{quiz_id}': { role: 'moderator', on: 'scratchQuiz', fresh: true },
  'POST /quiz/api/quizzes/{quiz_id}/shuffle': { role: 'user', on: 'sharedQuiz' },
  'GET /quiz/api/quizzes/{quiz_id}/review': { role: 'user', owns: 'quizReview' },
  'GET /quiz/api/quizzes/{quiz_id}/questions': { role: 'moderator', on: 'sharedQuiz' },
  'PATCH /quiz/api/quizzes/{quiz_id}/questions/{question_id}': { role: 'moderator', on: 'sharedQuiz' },
  'DELETE /quiz/api/quizzes/{quiz_id}/questions/{question_id}': { role: 'moderator', on: 'scratchQuiz', fresh: true },
  'PATCH /quiz/api/quizzes/{quiz_id}/publish': { role: 'moderator', on: 'sharedQuiz' },
  'PATCH /quiz/api/quizzes/{quiz_id}/restore': { role: 'moderator', on: 'trashedQuiz', fresh: true },
  'DELETE /quiz/api/quizzes/{quiz_id}/permanent': { role: 'moderator', on: 'trashedQuiz', fresh: true },
  // ---- question bank
  'GET /quiz/api/questions/bank': { role: 'user' },
  'GET /quiz/api/questions/bank/ids': { role: 'user' },
  'PATCH /quiz/api/questions/{question_id}/category': { role: 'moderator', on: 'sharedQuiz' },
  'POST /quiz/api/questions/from-bank': {
    role: 'moderator', on: 'sharedQuiz', body: (r) => ({ title: 'Matrix bank quiz', question_ids: [r.question_id], mode: 'learning', time_limit_minutes: null }),
  },
  'POST /quiz/api/questions/bulk-category': { role: 'moderator' },
  // ---- quiz and question categories
  'GET /quiz/api/categories': { role: 'user' },
  'POST /quiz/api/categories': { role: 'moderator' },
  'PATCH /quiz/api/categories/quizzes/{quiz_id}': { role: 'moderator', on: 'sharedQuiz' },
  'DELETE /quiz/api/categories/{category_id}': { role: 'moderator' },
  'GET /quiz/api/question-categories': { role: 'user' },
  'POST /quiz/api/question-categories': { role: 'moderator' },
  'PATCH /quiz/api/question-categories/{cat_id}': { role: 'moderator' },
  'DELETE /quiz/api/question-categories/{cat_id}': { role: 'moderator' },
  'POST /quiz/api/question-categories/{cat_id}/create-quiz': { role: 'moderator' },
  // ---- favorites and tags
  'POST /quiz/api/favorites': { role: 'user', on: 'sharedQuiz', body: (r) => ({ question_id: r.question_id }) },
  'GET /quiz/api/favorites': { role: 'user' },
  'DELETE /quiz/api/favorites/{question_id}': { role: 'user', on: 'sharedQuiz' },
  'GET /quiz/api/tags': { role: 'user' },
  'POST /quiz/api/tags/classify': { role: 'moderator', upstream: true },
  'GET /quiz/api/tags/status/{job_id}': { role: 'user' },
  // ---- attempts and saved progress
  'POST /quiz/api/attempts/start': { role: 'user', on: 'sharedQuiz' },
  'POST /quiz/api/attempts/progress': {
    role: 'user', owns: 'quizAttempt',
    body: (r) => ({
      quiz_id: r.quiz_id, attempt_id: r.attempt_id, answers: {}, current_idx: 0, mode: 'learning',
      voice: null, time_left: null, started_at: null, total_time: null,
    }),
  },
  'GET /quiz/api/attempts/progress': { role: 'user', on: 'sharedQuiz' },
  'DELETE /quiz/api/attempts/progress/{attempt_id}': { role: 'user', owns: 'quizAttempt' },
  'GET /quiz/api/attempts/in-progress': { role: 'user' },
  'GET /quiz/api/attempts/stats/dashboard': { role: 'user' },
  'GET /quiz/api/attempts/history': { role: 'user' },
  'GET /quiz/api/attempts': { role: 'user' },
  // The path's attempt id is not used for the lookup (the quiz id is), so it is no owned resource.
  'GET /quiz/api/attempts/{attempt_id}/in-progress': { role: 'user', on: 'sharedQuiz' },
  'POST /quiz/api/attempts/{attempt_id}/submit': { role: 'user', owns: 'quizAttempt', body: () => ({ answers: [] }) },
  'GET /quiz/api/attempts/{attempt_id}': { role: 'user', owns: 'quizAttempt' },
  'DELETE /quiz/api/attempts/{attempt_id}': { role: 'user', owns: 'quizAttempt' },
  // ---- spaced-repetition reminders (the schedule that submitting updates)
  'GET /quiz/api/reminders/due': { role: 'user' },
  'POST /quiz/api/reminders/review-quiz': { role: 'user' },
  'POST /quiz/api/reminders/answer': { role: 'user', on: 'sharedQuiz', body: (r) => ({ question_id: r.question_id, answer: null }) },
  // ---- tutor and speech
  'GET /quiz/api/teach/models': { role: 'user' },
  'POST /quiz/api/teach/chat': {
    role: 'user', on: 'sharedQuiz', upstream: true,
    body: (r) => ({ question_id: r.question_id, messages: [{ role: 'user', content: 'Why is that the answer?' }], model_id: null }),
  },
  'GET /quiz/api/tts/voices': { role: 'user' },
  'POST /quiz/api/tts/speak': { role: 'user', body: () => ({ text: 'Hello' }) },
  // ---- file-server import
  'POST /quiz/api/nextcloud/test': { role: 'moderator', body: () => WEBDAV },
  'POST /quiz/api/nextcloud/files': { role: 'moderator', body: () => WEBDAV },
  'POST /quiz/api/nextcloud/download': { role: 'moderator', body: () => ({ ...WEBDAV, path: '/a.pdf' }) },
  // ---- contact (the admin check of the submissions is in the handler, spec 1)
  'POST /quiz/api/contact': { role: 'public' },
  'GET /quiz/api/contact/submissions': { role: 'admin' },
  'PUT /quiz/api/contact/submissions/{submission_id}/read': { role: 'admin' },

  // ==== clinical service (spec 2) ================================================================================
  // ---- accounts and sessions
  'POST /api/auth/register': { role: 'public' },
  'GET /api/auth/verify-email': { role: 'public' },
  'POST /api/auth/resend-verification': { role: 'public' },
  'POST /api/auth/login': { role: 'public', on: 'clinicalLogin', body: (r) => ({ email: r.email, password: CLINICAL_PASSWORD }) },
  'POST /api/auth/forgot-password': { role: 'public' },
  'POST /api/auth/reset-password': { role: 'public' },
  // A wrong current password (400): a right one would end the caller's other sessions.
  'POST /api/auth/change-password': { role: 'user', body: () => ({ currentPassword: 'Not-the-password-1', newPassword: 'Another-horse-battery-9' }) },
  'POST /api/auth/logout': { role: 'public', ownSession: true },
  'GET /api/auth/me': { role: 'user' },
  'GET /api/auth/registration-status': { role: 'public' },
  'GET /api/auth/oidc-status': { role: 'public' },
  'GET /api/auth/sessions': { role: 'user' },
  'DELETE /api/auth/sessions/{id}': { role: 'user', owns: 'clinicalSession' },
  // ---- two-factor (wrong codes and passwords: the answers are 400s, nothing changes)
  'POST /api/auth/setup-2fa': { role: 'user' },
  'POST /api/auth/verify-2fa': { role: 'user', body: () => ({ code: '000000' }) },
  'POST /api/auth/disable-2fa': { role: 'user', body: () => ({ password: 'Not-the-password-1' }) },
  'POST /api/auth/2fa/backup-codes': { role: 'user', body: () => ({ password: 'Not-the-password-1' }) },
  'GET /api/auth/2fa/backup-codes/count': { role: 'user' },
  // ---- single sign-on
  'GET /api/auth/oidc': { role: 'public' },
  'GET /api/auth/oidc/callback': { role: 'public' },
  'GET /api/auth/oidc/config': { role: 'admin' },
  'PUT /api/auth/oidc/config': { role: 'admin' },
  // ---- generation (no AI gateway in the test app: 503)
  'POST /api/generate-hpi-encounter': { role: 'user', upstream: true },
  'POST /api/generate-hpi-dictation': { role: 'user', upstream: true },
  'POST /api/generate-soap': { role: 'user', upstream: true },
  'POST /api/generate-chart-review': { role: 'user', upstream: true },
  'POST /api/generate-hospital-course': { role: 'user', upstream: true },
  'POST /api/well-visit/shadess': { role: 'user', upstream: true },
  'POST /api/sick-visit/note': { role: 'user', upstream: true },
  'POST /api/patient-education': { role: 'user', upstream: true },
  'POST /api/generate-milestone-narrative': { role: 'user', upstream: true },
  'POST /api/generate-milestone-summary': { role: 'user', upstream: true },
  'POST /api/refine': { role: 'user', upstream: true },
  'POST /api/shorten': { role: 'user', upstream: true },
  'POST /api/clarify': { role: 'user', upstream: true },
  'GET /api/models': { role: 'user' },
  // ---- transcription, speech, preferences
  'GET /api/transcribe/status': { role: 'user' },
  'POST /api/transcribe': { role: 'user', upstream: true },
  'POST /api/text-to-speech': { role: 'user', body: () => ({ text: 'Hello' }) },
  'GET /api/user/preferences': { role: 'user' },
  'POST /api/user/preferences': { role: 'user' },
  'GET /api/user/preferences/options': { role: 'user' },
  // ---- saved encounters (a save naming an id updates that encounter: the caller's own only)
  'GET /api/encounters/saved': { role: 'user' },
  'POST /api/encounters/saved': { role: 'user', owns: 'encounter', body: (r) => ({ id: r.id, label: 'Matrix update' }) },
  'GET /api/encounters/saved/{id}': { role: 'user', owns: 'encounter' },
  'DELETE /api/encounters/saved/{id}': { role: 'user', owns: 'encounter' },
  // ---- memories
  'GET /api/memories': { role: 'user' },
  'POST /api/memories': { role: 'user', body: () => ({ category: 'custom', name: 'Matrix memory', content: 'Short notes.' }) },
  'GET /api/memories/context': { role: 'user' },
  'PUT /api/memories/{id}': {
    role: 'user', owns: 'memory', body: () => ({ category: 'custom', name: 'Matrix memory', content: 'Changed.' }),
  },
  'DELETE /api/memories/{id}': { role: 'user', owns: 'memory' },
  // ---- audio backups
  'POST /api/audio-backups': { role: 'user' },
  'GET /api/audio-backups': { role: 'user' },
  'GET /api/audio-backups/{id}/audio': { role: 'user', owns: 'audioBackup' },
  'DELETE /api/audio-backups/{id}': { role: 'user', owns: 'audioBackup' },
  // ---- documents (the signed link is the credential of its file route)
  'GET /api/documents': { role: 'user' },
  'POST /api/documents/upload': { role: 'user' },
  'GET /api/documents/{id}/download': { role: 'user', owns: 'clinicalDocument' },
  'GET /api/documents/{id}/file': { role: 'public', on: 'documentLink' },
  'DELETE /api/documents/{id}': { role: 'user', owns: 'clinicalDocument' },
  // ---- file-sync export
  'POST /api/nextcloud/connect': {
    role: 'user', body: () => ({ url: WEBDAV.server, username: WEBDAV.username, password: WEBDAV.password }),
  },
  'GET /api/nextcloud/status': { role: 'user' },
  'POST /api/nextcloud/export': { role: 'user' },
  'POST /api/nextcloud/disconnect': { role: 'user' },
  'POST /api/user/webdav-path': { role: 'user' },

  // ==== clinical service: learning hub, directory, administration (spec 3) ======================================
  // ---- learning hub
  'GET /api/learning/categories': { role: 'user' },
  'GET /api/learning/feed': { role: 'user' },
  'GET /api/learning/category/{slug}': { role: 'user' },
  'GET /api/learning/content/{slug}': { role: 'user' },
  'GET /api/learning/content/{slug}/slides': { role: 'user' },
  'POST /api/learning/submit-quiz': { role: 'user' },
  'GET /api/learning/search': { role: 'user' },
  'GET /api/learning/search/semantic': { role: 'user' },
  'GET /api/learning/search/hybrid': { role: 'user' },
  // ---- learning hub authoring (moderator+)
  'GET /api/admin/learning/categories': { role: 'moderator' },
  'POST /api/admin/learning/categories': { role: 'moderator' },
  'PUT /api/admin/learning/categories/{id}': { role: 'moderator' },
  'DELETE /api/admin/learning/categories/{id}': { role: 'moderator' },
  'GET /api/admin/learning/content': { role: 'moderator' },
  'POST /api/admin/learning/content': { role: 'moderator' },
  'GET /api/admin/learning/content/{id}': { role: 'moderator' },
  'PUT /api/admin/learning/content/{id}': { role: 'moderator' },
  'DELETE /api/admin/learning/content/{id}': { role: 'moderator' },
  'POST /api/admin/learning/ai-generate': { role: 'moderator', upstream: true },
  'POST /api/admin/learning/ai-refine': { role: 'moderator', upstream: true },
  'POST /api/admin/learning/preview-slides': { role: 'moderator', body: () => ({ markdown: '# Slide one\n\n---\n\n# Slide two' }) },
  'POST /api/admin/learning/generate-pptx': { role: 'moderator', body: () => ({ markdown: '# Slide one', title: 'Matrix deck' }) },
  'GET /api/admin/learning/webdav-browse': { role: 'moderator' },
  'GET /api/admin/learning/stats': { role: 'moderator' },
  // ---- phone directory (own entries only)
  'GET /api/extensions': { role: 'user' },
  'POST /api/extensions': { role: 'user', body: () => ({ location: 'Ward 5', name: 'Matrix', number: '5555', type: 'pager', notes: '' }) },
  'GET /api/extensions/export': { role: 'user' },
  'POST /api/extensions/import': { role: 'user', body: () => [{ location: 'Ward 6', name: 'Imported', number: '6666', type: 'extension', notes: '' }] },
  'POST /api/extensions/import/preview': { role: 'user', body: () => [{ location: 'Ward 6', name: 'Imported', number: '6666', type: 'extension', notes: '' }] },
  'POST /api/extensions/import-file': { role: 'user' },
  'POST /api/extensions/import-file/preview': { role: 'user' },
  'PUT /api/extensions/{id}': {
    role: 'user', owns: 'extension', body: () => ({ location: 'Ward 4', name: 'Renamed', number: '4321', type: 'extension', notes: '' }),
  },
  'DELETE /api/extensions/{id}': { role: 'user', owns: 'extension' },
  'POST /api/extensions/{id}/restore': { role: 'user', owns: 'trashedExtension' },
  'DELETE /api/extensions/{id}/purge': { role: 'user', owns: 'trashedExtension' },
  // ---- user administration
  'GET /api/admin/users': { role: 'admin' },
  'GET /api/admin/users/{id}': { role: 'admin', on: 'clinicalUser' },
  'POST /api/admin/users/{id}/verify': { role: 'admin', on: 'clinicalUser', fresh: true },
  'POST /api/admin/users/{id}/disable': { role: 'admin', on: 'clinicalUser', fresh: true },
  'POST /api/admin/users/{id}/enable': { role: 'admin', on: 'clinicalUser' },
  // Registration stays on: the probe must not change what later requests meet.
  'POST /api/admin/settings/registration': { role: 'admin', body: () => ({ enabled: true }) },
  // ---- configuration (the announcement is for every signed-in user)
  'GET /api/admin/config/announcement': { role: 'user' },
  'GET /api/admin/config': { role: 'admin' },
  // An empty host removes stored SMTP settings: mail stays unconfigured for the later requests.
  'PUT /api/admin/config/smtp': { role: 'admin', body: () => ({ host: '', port: 587, user: '', pass: '', from: '', secure: false }) },
  'GET /api/admin/config/smtp/status': { role: 'admin' },
  'GET /api/admin/config/smtp/outbox': { role: 'admin' },
  'POST /api/admin/config/smtp/outbox/{id}/retry': { role: 'admin' },
  'POST /api/admin/config/test-email': { role: 'admin' },
  'GET /api/admin/config/prompts': { role: 'admin' },
  'POST /api/admin/config/prompts/{key}/reset': { role: 'admin' },
  'POST /api/admin/config/reset-defaults': { role: 'admin' },
  'GET /api/admin/config/models': { role: 'admin' },
  'PUT /api/admin/config/models/toggle': { role: 'admin' },
  'PUT /api/admin/config/models/default': { role: 'admin' },
  'POST /api/admin/config/models/custom': { role: 'admin' },
  'GET /api/admin/config/models/discover': { role: 'admin', upstream: true },
  'PUT /api/admin/config/{key}': { role: 'admin', with: { key: 'site.matrix_probe' } },
  // ---- logs and milestones
  'GET /api/logs/usage': { role: 'admin' },
  'GET /api/logs/audit': { role: 'admin' },
  'GET /api/logs/api': { role: 'admin' },
  'GET /api/logs/access': { role: 'admin' },
  'GET /api/admin/milestones': { role: 'admin' },
  'POST /api/admin/milestones/seed': { role: 'admin' },
  // ---- health and metrics
  'GET /api/health': { role: 'public' },
  'GET /metrics': { role: 'public' },
}

const UPSTREAM = [502, 503, 504]

/** The outcome class a caller must get: 'allowed' is any status but 401, 403 and a 5xx. */
function expected(entry: Entry, caller: CallerName): 'allowed' | 401 | 403 | 404 {
  if (caller === 'other' && entry.owns) return OTHER_USER[entry.owns]
  if (entry.role === 'public') return 'allowed'
  if (caller === 'anonymous') return 401
  return callerRank(caller) >= RANK[entry.role] ? 'allowed' : 403
}

describe.each(databaseTargets())('authorization matrix (%s)', (target) => {
  let app: TestApp
  let fixture: Fixture
  let operations: Map<string, Operation>
  const shared = new Map<Family, Resource>()
  let requests = 0

  beforeAll(async () => {
    app = await startTestApp({ target })
    const quiz = await quizCallers(app)
    const clinical = await clinicalCallers(app)
    fixture = { app, quiz, clinical, sharedQuiz: { quiz_id: 0, question_id: 0 } }
    fixture.sharedQuiz = await FAMILIES.scratchQuiz(fixture)
    operations = new Map((await documentedOperations(app)).map((op) => [op.key, op]))
  })
  afterAll(() => app.close())

  it('has one entry for every documented operation, and none for an operation no longer documented', () => {
    const missing = [...operations.keys()].filter((key) => !(key in MATRIX))
    const stale = Object.keys(MATRIX).filter((key) => !operations.has(key))
    expect({ missing, stale }).toEqual({ missing: [], stale: [] })
  })

  async function resourceFor(entry: Entry, op: Operation, owner: Exclude<CallerName, 'anonymous' | 'other'>): Promise<Resource> {
    const accounts = fixture[op.service]
    if (entry.owns) return { ...entry.with, ...(await FAMILIES[entry.owns](fixture, accounts[owner])) }
    if (!entry.on) return { ...entry.with }
    // Not the caller's own: the moderator's, who makes the quizzes, documents and jobs such routes act on.
    const usualOwner = accounts.moderator
    if (entry.fresh) return { ...entry.with, ...(await FAMILIES[entry.on](fixture, usualOwner)) }
    if (!shared.has(entry.on)) shared.set(entry.on, await FAMILIES[entry.on](fixture, usualOwner))
    return { ...entry.with, ...shared.get(entry.on)! }
  }

  for (const [key, entry] of Object.entries(MATRIX)) {
    it(key, async () => {
      const op = operations.get(key)
      // An entry whose operation is gone fails the coverage test above.
      if (!op) return
      const problems: string[] = []
      for (const caller of CALLERS) {
        if (caller === 'other' && !entry.owns) continue
        const accounts = fixture[op.service]
        // Another user tries the user's resource; everyone else acts on their own (or on the shared one).
        const owner = caller === 'anonymous' || caller === 'other' ? 'user' : caller
        const resource = await resourceFor(entry, op, owner)
        const token = caller === 'anonymous' ? null
          : entry.ownSession ? await freshSession(app, op.service, accounts[caller]) : accounts[caller].token
        const res = await send(app, { op, token, resource, body: entry.body?.(resource) })
        requests++
        const want = expected(entry, caller)
        const got = res.status
        const upstream = entry.upstream && want === 'allowed' && UPSTREAM.includes(got)
        const ok = want === 'allowed' ? got !== 401 && got !== 403 && (got < 500 || upstream) : got === want
        if (!ok) problems.push(`${caller}: expected ${want}, got ${got} ${(await res.text()).slice(0, 160)}`)
        else await res.arrayBuffer()
      }
      expect(problems).toEqual([])
    })
  }

  it('asked every documented operation with every caller', () => {
    const owned = Object.values(MATRIX).filter((e) => e.owns).length
    expect(requests).toBe(4 * operations.size + owned)
  })
})

// The quiz service as its app presents it: the OpenAPI text and the body limit of routes that declare none.
// Spec 1 asks for no CORS or API-wide rate rule, so the service adds no rules of its own to the envelope.
// The description is for API users: it names no internal document.
import type { ServiceDefinition } from '../../src/plugin'

/** JSON bodies of the quiz API (settings, extraction options, question edits) stay well under this. */
export const QUIZ_BODY_LIMIT = 2 * 1024 * 1024

export const quizService: ServiceDefinition<any> = {
  title: 'Quiz generation service',
  brand: 'Quiz',
  bodyLimit: QUIZ_BODY_LIMIT,
  description: [
    'Turns PDFs into multiple-choice quizzes, keeps a shared question bank and records attempts.',
    '',
    'Authentication: `Authorization: Bearer <access_token>` from register (first user) or login. Tokens are',
    'HS256 JWTs valid for 7 days; changing or resetting the password, or deleting the user, ends them (a role change applies at once).',
    '',
    'Errors: `{"detail": "message"}`; validation failures are 422 with',
    '`{"detail": [{"loc": ["body", "field"], "msg": "...", "type": "..."}]}`. Missing or invalid credentials: 401',
    '(with `WWW-Authenticate: Bearer`); a role below the route\'s minimum: 403; registration while disabled: 403;',
    'a rate limit: 429 with `Retry-After` in seconds. A body over 2 MiB (over the upload limit on the PDF upload): 413.',
  ].join('\n'),
}

// Spec 1, Quizzes: creating a quiz by extraction (a job) and the extraction jobs, the JSON API. Routing, guards,
// validation and response shaping only.
import { Elysia, t } from 'elysia'
import { CancelledResponse, CreateQuizBody, JobDetail, JobIdParams, JobListItem, JobStarted } from '../models/extraction'
import { CHUNK_CHARS } from '../services/ai-extract'
import { cancelExtractionJob, getExtractionJob, listExtractionJobs, RECENT_JOBS, startExtraction } from '../services/extraction'
import type { QuizState } from '../state'

const createDescription = (api: string) => `Starts an extraction job that builds a quiz from a section's pages and answers \`{job_id, status: "pending"}\`
at once; poll GET ${api}/quizzes/job/{job_id}. Without a worker (WORKERS=0) the job runs before this answers, and the
answer is still \`pending\`. The quiz and its questions are written in one transaction at the end: the questions go into
the shared bank (with the question category, when given) and the quiz references them.
An extracted question identical to a bank question (same text and options, ignoring letter case, spacing and option
order) is not copied: the quiz references the existing one (the lowest id), which keeps its text and any category it
has; an uncategorized one takes the given category. Identical questions within one extraction become one. A step says
how many questions were new and how many were reused.

\`extraction_mode\` (default \`standard\`):
- \`regex\`: no AI. Numbered questions (\`1.\`, \`1)\`, \`Q1.\`, \`Question 1:\`), lettered options (\`A)\`, \`A.\`, \`(a)\`, \`a)\`,
  several on one line too, \`*\` before the correct one), answer lines (\`Answer: B\`, \`Correct answer: B\`, \`Ans: b\`, or
  the answer written out) or an answer key at the end (\`Answer Key\` or \`Answers\` heading, then \`1. B\`, \`2-C\`, \`3) d\`),
  optional \`Explanation:\` lines. Wrapped lines are joined; page numbers and running headers are ignored.
- \`standard\`: the AI extracts the questions present in the text, with their answers and explanations.
- \`questions_only\`: the AI extracts the questions present in the text and works out the answers itself.
- \`two_step\`: the AI first locates each question block, then structures the blocks.
- \`ai_decide\`: the AI decides whether the text holds questions to extract or material to write questions from, then does that.
- \`generate\`: the AI writes new questions from the content.

AI modes use \`model_id\` (an extraction model configuration) or the default extraction model, read the section in chunks
of about ${CHUNK_CHARS.toLocaleString('en')} characters split at page boundaries (one step each), and drop questions with
fewer than two distinct options or an answer that is not one of them (a letter answer such as \`B\` becomes the option's
text); the steps report how many were dropped. A section that yields no questions fails the job.

404 unknown section or question category; 400 when the section's document is not ready; 404/400 for a model_id that
does not exist, is inactive or is for another task.`

export const extractionRoutes = ({ core, auth }: QuizState) =>
  new Elysia({ prefix: '/api/quizzes' })
    .use(auth)
    // '' documents the path without a trailing slash (OpenAPI style); /api/quizzes/ is served too.
    .post('', ({ user, body }) => startExtraction(core, user.id, body), {
      role: 'moderator', body: CreateQuizBody, response: JobStarted,
      detail: { tags: ['Quizzes'], summary: 'Extract a quiz from a section (a job)', description: createDescription(`${core.config.quizBasePath}/api`) },
    })
    .get('/jobs', ({ user }) => listExtractionJobs(core, user.id), {
      role: 'user', response: t.Array(JobListItem),
      detail: {
        tags: ['Quizzes'], summary: 'The caller\'s recent extraction jobs',
        description: `The ${RECENT_JOBS} most recent extraction jobs the caller started, from any browser session, newest first; last_step is cut to 80 characters.`,
      },
    })
    .get('/job/:job_id', ({ params }) => getExtractionJob(core, params.job_id), {
      role: 'moderator', params: JobIdParams, response: JobDetail,
      detail: { tags: ['Quizzes'], summary: 'An extraction job', description: 'quiz_id when completed, error when failed. 404 unknown job.' },
    })
    .post('/job/:job_id/cancel', ({ user, params }) => cancelExtractionJob(core, user.id, params.job_id), {
      role: 'user', params: JobIdParams, response: CancelledResponse,
      detail: {
        tags: ['Quizzes'], summary: 'Cancel one\'s own extraction job',
        description: 'A pending or running job is cancelled and stops at its next step; no quiz is written. 403 when the caller does not own the job; 400 when it is not running (completed, failed or cancelled) or has already saved its quiz; 404 unknown job.',
      },
    })

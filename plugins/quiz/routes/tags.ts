// Spec 1, Tags, the JSON API: the tag lists and the AI classification job. Routing, guards, validation and
// response shaping only; the rules are in services/tags.ts.
import { Elysia } from 'elysia'
import {
  ClassifyStarted, TAG_BATCH_SIZE, TAG_NAME_MAX, TagJobParams, TagJobStatus, TAGS_PER_KIND_MAX, TagsResponse,
} from '../models/tags'
import { getTagJobStatus, listTags, startTagClassification } from '../services/tags'
import type { QuizState } from '../state'

const tags = ['Tags']

export const tagRoutes = ({ core, auth }: QuizState) => {
  const api = `${core.config.quizBasePath}/api`
  return new Elysia({ prefix: '/api/tags' })
    .use(auth)
    .get('', () => listTags(core), {
      role: 'user', response: TagsResponse,
      detail: {
        tags, summary: 'Tags in use, by kind',
        description: [
          'Subjects, diseases and keywords, each entry `{id, name, count}` where count is the number of bank questions',
          'carrying the tag. Each list is ordered by count (most used first), then by name (any case), then by id.',
          'A tag no question carries any more (its questions were deleted) is left out. Every signed-in user sees all tags.',
          'Tag names are unique per kind whatever their case: "Cardiology" and "cardiology" are one subject, while a',
          'subject and a keyword may share a name.',
        ].join(' '),
      },
    })
    .post('/classify', ({ user }) => startTagClassification(core, user.id), {
      role: 'moderator', response: ClassifyStarted,
      detail: {
        tags, summary: 'Classify untagged questions with the AI (a job)',
        description: [
          `Starts a job that tags every bank question not yet classified, and answers \`{job_id, status: "started"}\`; poll`,
          `GET ${api}/tags/status/{job_id}. When a classification job is already pending or running, its id is answered`,
          'instead and no second job starts. Without a worker (WORKERS=0) the job runs before this answers, and the answer',
          'is still `started`.',
          '',
          `The job uses the default model of the \`keyword\` task (or the server's default model when none is configured)`,
          `and sends the questions untagged at its start in batches of ${TAG_BATCH_SIZE}, in id order; questions added`,
          'meanwhile wait for the next run. For each question the AI gives subjects, diseases and keywords: names are',
          `trimmed, blank ones and ones over ${TAG_NAME_MAX} characters dropped, repeats (any case) removed, and at most`,
          `${TAGS_PER_KIND_MAX} kept per kind. A name that matches an existing tag of its kind (any case) reuses it.`,
          'Each batch is saved in one transaction, with a step such as "Batch 2/7: 20 questions tagged (3 new tags)";',
          'a question is marked classified even when it gets no tag, so it is not sent again. A question the AI leaves',
          'out of its answer stays unclassified for the next run. When the AI fails or answers in the wrong shape, the',
          'job fails with the reason; batches saved before stay, and a new run goes on from there. With no untagged',
          'questions the job completes with the step "No untagged questions".',
          '',
          '503 when no keyword model is configured (nor a server default); 502 when the configured model\'s address is',
          'refused.',
        ].join('\n'),
      },
    })
    .get('/status/:job_id', ({ params }) => getTagJobStatus(core, params.job_id), {
      role: 'user', params: TagJobParams, response: TagJobStatus,
      detail: {
        tags, summary: 'A tag classification job',
        description: [
          'Status (`pending`, `running`, `completed`, `failed` or `cancelled`), the progress steps in order, and `error`:',
          'why it failed, or null. Any signed-in user may read any classification job. 404 for an unknown id or the id',
          'of another kind of job; 422 when job_id is not a UUID.',
        ].join(' '),
      },
    })
}

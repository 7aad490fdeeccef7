// The learning hub's authoring API (moderators and admins): categories and content with their quizzes, AI
// generation and refinement, slide previews, PowerPoint export, browsing the author's WebDAV server and the hub's
// figures. Routing, guards, validation and response shaping only; the rules live in service*.ts.
import { Elysia, t } from 'elysia'
import { bodyLimits, type BodyLimit } from '../../../src/envelope'
import { Success } from '../../clinical/exports'
import type { LearningState } from '../index'
import {
  AuthorCategory, AuthorContentListEntry, AuthorContentRead, AuthoredResponse, BODY_MAX, CATEGORY_NAME_MAX, CategoryInput, ContentInput, Created, GenerateBody,
  IdParams, INSTRUCTIONS_MAX, LearningStatsSchema, OPTIONS_MAX, OPTIONS_MIN, PPTX_SLIDES_MAX, PPTX_TITLE_MAX, PptxBody, PreviewSlidesBody, QUESTIONS_MAX,
  REFERENCE_FILE_MAX_BYTES, REFERENCE_FILES_MAX, REFERENCE_TEXT_MAX, REFINE_BODY_MAX, RefineBody, SLIDES_MAX, SlidesPreview, TITLE_MAX, TOPIC_MAX,
  WEBDAV_PATH_MAX, WebDavBrowseQuery, WebDavEntrySchema,
} from '../model'
import * as learning from '../service'
import { auditAuthoring, browseWebDav, generateContent, listCategoriesForAuthors, refineContent, type AuthoringAction } from '../service-authoring'
import { buildPptx, PPTX_CONTENT_TYPE, pptxContentDisposition, pptxFileName } from '../service-pptx'
import { renderSlides } from '../service-slides'

const tags = ['Learning hub authoring']
const ROLE = '401 without a session; 403 `insufficient_role` for a signed-in user who is not a moderator or an admin.'
const SHAPE = 'A body that does not match its schema (a field missing or of the wrong type, a text over its limit) is 400 `invalid_input`; '
  + 'a well-formed value that breaks a rule is 422 with `fields`. A refused request stores nothing.'
const SLUG_RULE = 'The slug: lowercase letters and digits in words joined by single hyphens (422 `invalid_slug`).'
const CONTENT_RULES = [
  `\`title\` 1 to ${TITLE_MAX} characters (422 \`blank_field\` when only white space); ${SLUG_RULE} Unique among content: 409 \`slug_taken\`.`,
  '`categoryId` must name a category: 422 `unknown_category`. `body` is markdown, at most ' + `${BODY_MAX} characters.`,
  `\`questions\`, optional: at most ${QUESTIONS_MAX}, each \`{text, options: [{text, correct}]}\` with ${OPTIONS_MIN} to ${OPTIONS_MAX} options,`,
  'at least one correct (422 `no_correct_option`); question and option ids are numbered by the server.',
  '`published`: readers see the content while it is true, and it is true when absent; false holds it back from every reader route.',
  '`type` (`article` or `presentation`), `summary` (made from the body when blank) and `slides` (Marp markdown) are optional.',
  'The content is indexed for semantic search in the same request: 502 when the embedding model cannot be reached (nothing stored).',
].join(' ')
const AI_RULES = [
  '`model`: a model of GET /api/models, the default model when absent or empty: 400 `unknown_model` or `model_disabled`; 503',
  '`ai_not_configured` when the server has no AI gateway or no model. The gateway\'s failures: 502 (unreachable, an error or an',
  'unusable answer), 504 (no answer in time). Each gateway call writes one row of the AI usage log (model, tokens, latency,',
  'outcome; never any text). A wrapping ```markdown fence around the answer is removed.',
].join(' ')

/** Room for the form's framing and its text fields around the largest set of reference files. */
export const GENERATE_FORM_OVERHEAD_BYTES = 64 * 1024
export const GENERATE_BODY_LIMIT: BodyLimit = {
  bytes: REFERENCE_FILES_MAX * REFERENCE_FILE_MAX_BYTES + GENERATE_FORM_OVERHEAD_BYTES,
  code: 'request_too_large',
  message: `Request too large: at most ${REFERENCE_FILES_MAX} reference files of at most ${REFERENCE_FILE_MAX_BYTES} bytes each`,
}

export const authoringRoutes = ({ core, clinical: { auth, audit } }: LearningState) => {
  const record = (user: { id: number }, request: Request, action: AuthoringAction, details: Record<string, unknown>) =>
    auditAuthoring(audit, { id: user.id, ip: core.clientAddress(request) }, action, details)
  return new Elysia({ prefix: '/api/admin/learning' })
    .use(auth)
    .use(bodyLimits)
    .get('/categories', () => listCategoriesForAuthors(core), {
      auth: 'moderator', response: t.Array(AuthorCategory),
      detail: {
        tags, summary: 'Learning categories (authors)',
        description: `Every category by name, with \`content_count\`: how many items it holds, published or not. ${ROLE}`,
      },
    })
    .post('/categories', async ({ body, user, request }) => {
      const { id } = await learning.createCategory(core, body)
      record(user, request, 'learning_category_created', { categoryId: id })
      return { success: true as const, id }
    }, {
      auth: 'moderator', body: CategoryInput, response: Created,
      detail: {
        tags, summary: 'Create a learning category',
        description: `\`name\` 1 to ${CATEGORY_NAME_MAX} characters (422 \`blank_field\` when only white space); \`description\` optional (empty). ${SLUG_RULE} `
          + `Unique among categories: 409 \`slug_taken\`. ${SHAPE} ${ROLE}`,
      },
    })
    .put('/categories/:id', async ({ params, body, user, request }) => {
      await learning.updateCategory(core, params.id, body)
      record(user, request, 'learning_category_updated', { categoryId: params.id })
      return { success: true as const }
    }, {
      auth: 'moderator', params: IdParams, body: CategoryInput, response: Success,
      detail: {
        tags, summary: 'Replace a learning category',
        description: `Rules as for create; a description left out becomes empty. 404 \`category_not_found\`. ${SHAPE} ${ROLE}`,
      },
    })
    .delete('/categories/:id', async ({ params, user, request }) => {
      await learning.deleteCategory(core, params.id)
      record(user, request, 'learning_category_deleted', { categoryId: params.id })
      return { success: true as const }
    }, {
      auth: 'moderator', params: IdParams, response: Success,
      detail: {
        tags, summary: 'Delete a learning category',
        description: `Only an empty category: 409 \`category_in_use\` while any content, published or not, is in it. 404 \`category_not_found\`. ${ROLE}`,
      },
    })
    .get('/content', () => learning.listContentForAuthors(core), {
      auth: 'moderator', response: t.Array(AuthorContentListEntry),
      detail: {
        tags, summary: 'Learning content (authors)',
        description: `Every item, published or not, the most recently changed first, without bodies: \`question_count\` counts its quiz. ${ROLE}`,
      },
    })
    .post('/content', async ({ body, user, request }) => {
      const { id } = await learning.createContent(core, body, user.id)
      record(user, request, 'learning_content_created', { contentId: id, categoryId: body.categoryId, published: body.published ?? true })
      return { success: true as const, id }
    }, {
      auth: 'moderator', body: ContentInput, response: Created,
      detail: { tags, summary: 'Create learning content', description: `${CONTENT_RULES} ${SHAPE} ${ROLE}` },
    })
    .get('/content/:id', ({ params }) => learning.getContentForAuthor(core, params.id), {
      auth: 'moderator', params: IdParams, response: AuthorContentRead,
      detail: {
        tags, summary: 'One learning content item (authors)',
        description: `Published or not, with its body, slides, the quiz with \`correct\` on every option, and its metadata. 404 \`content_not_found\`. ${ROLE}`,
      },
    })
    .put('/content/:id', async ({ params, body, user, request }) => {
      await learning.updateContent(core, params.id, body)
      record(user, request, 'learning_content_updated', { contentId: params.id, categoryId: body.categoryId, published: body.published ?? true })
      return { success: true as const }
    }, {
      auth: 'moderator', params: IdParams, body: ContentInput, response: Success,
      detail: {
        tags, summary: 'Replace learning content',
        description: `The body as for create: ${CONTENT_RULES} When left out, \`questions\`, \`type\` and \`slides\` keep their stored values and `
          + `\`published\` becomes true; readers' progress is kept. 404 \`content_not_found\`. ${SHAPE} ${ROLE}`,
      },
    })
    .delete('/content/:id', async ({ params, user, request }) => {
      await learning.deleteContent(core, params.id)
      record(user, request, 'learning_content_deleted', { contentId: params.id })
      return { success: true as const }
    }, {
      auth: 'moderator', params: IdParams, response: Success,
      detail: {
        tags, summary: 'Delete learning content',
        description: `With its readers' progress, quiz submissions and search index entries. 404 \`content_not_found\`. ${ROLE}`,
      },
    })
    .post('/ai-generate', async ({ body, user, request }) => {
      const { content, model } = await generateContent(core, user.id, body)
      record(user, request, 'learning_content_generated', { type: body.type, model, referenceFiles: body.files?.length ?? 0 })
      return { success: true as const, content, model }
    }, {
      auth: 'moderator', body: GenerateBody, response: AuthoredResponse, bodyLimit: GENERATE_BODY_LIMIT,
      // A form with one file gives the field as that file: made a list here, so the schema stays a plain array.
      transform({ body }) {
        const form = body as { files?: unknown } | null
        if (form && form.files instanceof File) form.files = [form.files]
      },
      detail: {
        tags, summary: 'Write an article or a slide deck with AI',
        description: [
          `A JSON body \`{topic, type, model?}\`, or a multipart/form-data form with the same fields plus reference files in the field`,
          `\`files\`, repeated once per file. \`topic\`: 1 to ${TOPIC_MAX} characters (422 \`blank_field\` when only white space).`,
          '`type` `article`: a markdown article (a `#` title, then sections). `presentation`: a Marp deck (front matter `marp: true`,',
          'slides separated by `---` lines, a `#` title per slide, bullet lists, speaker notes in `<!-- -->` comments).',
          `Reference files: at most ${REFERENCE_FILES_MAX} (422 \`too_many_files\`), each at most ${REFERENCE_FILE_MAX_BYTES} bytes`,
          '(413 `file_too_large`, naming the file); PDF (.pdf, read for its text layer) or UTF-8 text (.txt, .md, text/plain,',
          'text/markdown); any other kind is 415 `unsupported_file_type` naming the file, and a file whose content is not what its name',
          'says (a .pdf that is no PDF, text that is not UTF-8) 415 `content_mismatch`. 422 `unreadable_pdf` for a damaged or',
          'password-protected PDF, 422 `no_text` for an empty file or a PDF without text (a scan). The files\' text, at most',
          `${REFERENCE_TEXT_MAX} characters in all (shared fairly between the files), is given to the model inside delimiters as source`,
          `material, not instructions. The whole request is at most ${GENERATE_BODY_LIMIT.bytes} bytes: 413 \`request_too_large\`,`,
          `refused before it is read. ${AI_RULES} \`model\` in the answer is the model that wrote it. ${SHAPE} ${ROLE}`,
        ].join(' '),
      },
    })
    .post('/ai-refine', async ({ body, user, request }) => {
      const { content, model } = await refineContent(core, user.id, body)
      record(user, request, 'learning_content_refined', { model })
      return { success: true as const, content, model }
    }, {
      auth: 'moderator', body: RefineBody, response: AuthoredResponse,
      detail: {
        tags, summary: 'Revise markdown with AI',
        description: [
          `\`body\`: the article or Marp deck to revise, 1 to ${REFINE_BODY_MAX} characters; \`instructions\`: what to change, 1 to`,
          `${INSTRUCTIONS_MAX} characters (422 \`blank_field\` when either is only white space). The answer is the whole revised`,
          `document in the same format. ${AI_RULES} ${SHAPE} ${ROLE}`,
        ].join(' '),
      },
    })
    .post('/preview-slides', ({ body }) => {
      const { css, slides } = renderSlides(body.markdown)
      return { css, slides }
    }, {
      auth: 'moderator', body: PreviewSlidesBody, response: SlidesPreview,
      detail: {
        tags, summary: 'Render Marp markdown as slides',
        description: [
          `\`markdown\`: at most ${SLIDES_MAX} characters, rendered with Marp as readers see it: the stylesheet (scoped to`,
          '`div.marpit`) and one HTML fragment per slide. HTML in the markdown is shown as text, never as markup; links other than',
          `web, mail and telephone addresses are dropped; no script is added. Nothing is stored. ${SHAPE} ${ROLE}`,
        ].join(' '),
      },
    })
    .post('/generate-pptx', async ({ body }) => new Response(await buildPptx(body.markdown, body.title) as Uint8Array<ArrayBuffer>, {
      headers: {
        'content-type': PPTX_CONTENT_TYPE,
        'content-disposition': pptxContentDisposition(body.title),
        'cache-control': 'private, no-store',
      },
    }), {
      auth: 'moderator', body: PptxBody,
      detail: {
        tags, summary: 'Export Marp markdown as a PowerPoint file',
        description: [
          'A .pptx with one slide per Marp slide (as Marp splits the deck): the slide\'s first heading is its title, bullet and',
          'numbered lists become bullets with their nesting, other text becomes paragraphs (tables a line per row, code in a fixed',
          'font), and the slide\'s HTML comments become its speaker notes; Marp directives (`<!-- _class: lead -->`, header and',
          `footer) are not notes. \`markdown\` 1 to ${SLIDES_MAX} characters; \`title\` 1 to ${PPTX_TITLE_MAX} characters, the`,
          'presentation\'s title and its file name: `Content-Disposition: attachment` with an ASCII `filename` (e.g.',
          `\`${pptxFileName('Asthma basics')}\`) and the title's own characters in \`filename*\` (RFC 5987, UTF-8). 422 \`empty_deck\``,
          `when no slide has a title, text or notes, \`too_many_slides\` over ${PPTX_SLIDES_MAX} slides. Nothing is stored. ${SHAPE} ${ROLE}`,
        ].join(' '),
        responses: {
          200: {
            description: 'The presentation',
            headers: { 'Content-Disposition': { description: 'attachment; filename="<title>.pptx"; filename*=UTF-8\'\'<title>.pptx', schema: { type: 'string' } } },
            content: { [PPTX_CONTENT_TYPE]: { schema: { type: 'string', format: 'binary' } } },
          },
        },
      },
    })
    .get('/webdav-browse', ({ query, user }) => browseWebDav(core, user.id, query.path ?? '/'), {
      auth: 'moderator', query: WebDavBrowseQuery, response: t.Array(WebDavEntrySchema),
      detail: {
        tags, summary: 'Browse a folder of the connected WebDAV server',
        description: [
          'The entries of the folder `path` (default `/`, relative to the address of the server the caller connected with POST',
          '/api/nextcloud/connect), folders first, then by name. Each: `name`, `path` (pass a folder\'s as the next `path`), `type`',
          '(`directory` or `file`), `size` (bytes, 0 for a folder), `modified` (ISO 8601 or null), `mime` (a file\'s content type or null).',
          `\`path\` at most ${WEBDAV_PATH_MAX} characters; a \`..\` segment, a backslash or a control character is 400 \`invalid_path\``,
          '(a path cannot leave the server address). 400 `not_connected` without a connection, `webdav_auth_failed` or',
          '`webdav_forbidden` when the server refuses; 404 `webdav_not_found` for a missing folder; 502 when the server cannot be',
          `reached, fails or redirects, or does not answer within its time limit. The server's address is checked before every call. ${ROLE}`,
        ].join(' '),
      },
    })
    .get('/stats', () => learning.learningStats(core), {
      auth: 'moderator', response: LearningStatsSchema,
      detail: {
        tags, summary: 'The learning hub\'s figures',
        description: '`totalContent` (published or not), `totalCategories`, `totalQuizSubmissions` (every reader\'s), and `averageScore`: '
          + `the mean of the submissions' scores as a percentage of their questions (0 to 100, one decimal; 0 without submissions). ${ROLE}`,
      },
    })
}

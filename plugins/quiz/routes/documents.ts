// Spec 1, documents: the JSON API. Routing, guards, validation and response shaping only.
import { Elysia, t } from 'elysia'
import { bodyLimits } from '../../../src/envelope'
import {
  DocumentParams, DocumentResponse, DocumentStatusResponse, ProcessingSteps, SectionBody, SectionParams, SectionResponse, UploadBody,
} from '../models/documents'
import * as documents from '../services/documents'
import type { QuizState } from '../state'

const tags = ['Documents']

export const documentRoutes = ({ core, auth }: QuizState) => {
  const document = `${core.config.quizBasePath}/api/documents/{document_id}`
  return   new Elysia({ prefix: '/api/documents' })
    .use(auth)
    .use(bodyLimits)
    .post('/upload', ({ user, body }) => documents.uploadDocument(core, user, body.file), {
      // Refused before the body is read: a file at the limit and its multipart framing fit, anything more does not.
      bodyLimit: documents.uploadBodyLimit(core.config.maxUploadSize),
      role: 'moderator', body: UploadBody, response: DocumentResponse,
      detail: {
        tags, summary: 'Upload a PDF',
        description: [
          'Multipart form with the field `file`. Stores the PDF and starts its processing: the page text is extracted',
          'and indexed in a background job (with WORKERS=0 the job runs inside this request).',
          'The answer is always the document as stored before processing, with status `processing`;',
          `poll GET ${document}/status for \`ready\` or \`failed\`.`,
          '413 when the file (or the declared Content-Length) is over MAX_UPLOAD_SIZE bytes;',
          '415 when the content is not a PDF (checked by its leading bytes, whatever its name);',
          '400 for an empty file. A damaged or password-protected PDF is accepted here and ends `failed`.',
          '507 `disk_full` when the server\'s disk has no room for the file: nothing is kept, and the same upload works once there is room.',
        ].join(' '),
      },
    })
    // '' documents the path without a trailing slash (OpenAPI style); /api/documents/ is served too.
    .get('', ({ user }) => documents.listDocuments(core, user), {
      role: 'user', response: t.Array(DocumentResponse),
      detail: { tags, summary: 'List documents', description: 'Newest first. Moderators see all documents, others only their own.' },
    })
    .get('/:document_id', ({ user, params }) => documents.getDocument(core, user, params.document_id), {
      role: 'user', params: DocumentParams, response: DocumentResponse,
      detail: { tags, summary: 'A document', description: 'Own documents only unless moderator; 404 when missing or not visible.' },
    })
    .get('/:document_id/status', ({ user, params }) => documents.getDocumentStatus(core, user, params.document_id), {
      role: 'user', params: DocumentParams, response: DocumentStatusResponse,
      detail: { tags, summary: 'Processing status of a document', description: `\`processing\`, \`ready\` or \`failed\` (with error_message). Same visibility as GET ${document}.` },
    })
    .get('/:document_id/processing-steps', ({ user, params }) => documents.getProcessingSteps(core, user, params.document_id), {
      role: 'user', params: DocumentParams, response: ProcessingSteps,
      detail: {
        tags, summary: 'Processing steps of a document',
        description: [
          'The ordered steps of the document\'s processing job: `{steps: [{name, status, message, timestamp}]}`.',
          'A step is recorded when its stage ends, so its status is final: `name` is the stage (`start`, `read`, `extract`,',
          '`index`, `done`), `status` is `completed`, `skipped` (nothing to index: no text layer) or `failed` (the message says why),',
          `\`timestamp\` is ISO 8601. Same visibility as GET ${document}.`,
        ].join(' '),
      },
    })
    .get('/:document_id/sections', ({ user, params }) => documents.listSections(core, user, params.document_id), {
      role: 'user', params: DocumentParams, response: t.Array(SectionResponse),
      detail: { tags, summary: 'Sections of a document', description: `The document's sections, ordered by start_page. Same visibility as GET ${document}.` },
    })
    .post('/:document_id/sections', ({ params, body }) => documents.createSection(core, params.document_id, body), {
      role: 'moderator', params: DocumentParams, body: SectionBody, response: SectionResponse,
      detail: {
        tags, summary: 'Add a named page-range section',
        description: '400, naming the rule, when the document is not ready, start_page < 1, end_page <= start_page, or end_page > total_pages. 404 unknown document.',
      },
    })
    .delete('/:document_id/sections/:section_id', async ({ params, set }) => {
      await documents.deleteSection(core, params.document_id, params.section_id)
      set.status = 204
    }, {
      role: 'moderator', params: SectionParams,
      detail: { tags, summary: 'Delete a section', description: '204; 404 when the document or the section (on that document) does not exist.' },
    })
    .delete('/:document_id', async ({ params, set }) => {
      await documents.deleteDocument(core, params.document_id)
      set.status = 204
    }, {
      role: 'moderator', params: DocumentParams,
      detail: { tags, summary: 'Delete a document', description: '204; removes the document, its pages and sections, the stored file and its vector collection (processing still running is cancelled). 404 when missing.' },
    })
}

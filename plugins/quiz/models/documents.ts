// TypeBox models of the quiz service's documents and sections (spec 1, Documents); the OpenAPI docs come from them.
import { t } from 'elysia'
import { Int, RowId } from '../../../src/core/schema'

export const SECTION_NAME_MAX = 200
export const ORIGINAL_FILENAME_MAX = 255

export const DOCUMENT_STATUSES = ['processing', 'ready', 'failed'] as const
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number]
export const DocumentStatus = t.Union([t.Literal('processing'), t.Literal('ready'), t.Literal('failed')], {
  description: '`processing` after upload; `ready` once the text is extracted and indexed (also for a PDF with no text layer); `failed` for an unreadable, damaged or password-protected PDF (see error_message)',
})

export const DocumentResponse = t.Object({
  id: Int(),
  user_id: Int({ description: 'The moderator who uploaded it' }),
  filename: t.String({ description: 'The stored file name' }),
  original_filename: t.String({ description: 'The name the file was uploaded with' }),
  status: DocumentStatus,
  total_pages: Int({ description: '0 until the PDF has been read' }),
  error_message: t.Nullable(t.String()),
  uploaded_at: t.String({ format: 'date-time' }),
})
export type DocumentResponse = typeof DocumentResponse.static

export const DocumentStatusResponse = t.Object({
  id: Int(),
  status: DocumentStatus,
  total_pages: Int(),
  error_message: t.Nullable(t.String()),
})

export const ProcessingStep = t.Object({
  name: t.String({ description: 'The stage: `start`, `read`, `extract`, `index` or `done`' }),
  status: t.String({ description: '`running` (the stage began), `completed`, `skipped` or `failed`' }),
  message: t.String({ description: 'Human-readable progress line, e.g. "Extracted text from 12 of 12 pages"' }),
  timestamp: t.String({ format: 'date-time' }),
})
export type ProcessingStep = typeof ProcessingStep.static
export const ProcessingSteps = t.Object({ steps: t.Array(ProcessingStep) })

export const UploadBody = t.Object({
  file: t.File({ description: 'The PDF. Its content is checked, not its name or declared type; at most MAX_UPLOAD_SIZE bytes' }),
})

// Integers without bounds on purpose: spec 1 answers a broken page rule with 400 naming the rule, not 422.
export const SectionBody = t.Object({
  name: t.String({ minLength: 1, maxLength: SECTION_NAME_MAX }),
  start_page: t.Integer({ description: 'First page, 1-based; at least 1' }),
  end_page: t.Integer({ description: 'Last page; greater than start_page and at most the document\'s total_pages' }),
})
export type SectionBody = typeof SectionBody.static

export const SectionResponse = t.Object({
  id: Int(),
  document_id: Int(),
  name: t.String(),
  start_page: Int(),
  end_page: Int(),
})
export type SectionResponse = typeof SectionResponse.static

const Id = RowId()
export const DocumentParams = t.Object({ document_id: Id })
export const SectionParams = t.Object({ document_id: Id, section_id: Id })

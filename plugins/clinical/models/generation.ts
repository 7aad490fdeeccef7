// TypeBox models of note generation (the thirteen POST endpoints) and GET /api/models; the OpenAPI docs come from
// them, and the generation controller checks each body against its model (422 with the fields that fail).
import { t } from 'elysia'
import { MODEL_ID_MAX } from '../services/models'

/** A visit transcript or dictation: about two hours of speech. */
export const TRANSCRIPT_MAX = 100_000
/** Prior notes to review or summarize (a hospital stay's worth). */
export const NOTES_MAX = 200_000
/** A document to refine, shorten or clarify, and its source material. */
export const DOCUMENT_MAX = 100_000
/** Instructions, a diagnosis or medication list, the clinician's preferences. */
export const INSTRUCTIONS_MAX = 10_000
/** Review of systems, physical exam, diagnoses of a sick visit. */
export const SECTION_MAX = 20_000
/** Age, gender, setting, visit type, format, language, reading level. */
export const SHORT_MAX = 100
export const CHIEF_COMPLAINT_MAX = 500
/** Structured input (SHADESS answers, milestones): entries, and the text of one value. */
export const ANSWERS_MAX_ENTRIES = 200
export const ANSWER_TEXT_MAX = 2_000
export const ANSWER_KEY_MAX = 200

const text = (max: number, description: string) => t.String({ minLength: 1, maxLength: max, description: `${description} (1 to ${max} characters)` })
const short = (description: string) => t.String({ maxLength: SHORT_MAX, description: `${description} (at most ${SHORT_MAX} characters; may be empty when unknown)` })
const optional = (max: number, description: string) => t.Optional(t.String({ maxLength: max, description: `${description} (optional, at most ${max} characters)` }))

const Model = t.String({
  minLength: 1, maxLength: MODEL_ID_MAX,
  description: 'The id of a model listed by GET /api/models (400 `unknown_model` when not listed, `model_disabled` when switched off)',
})
const PhysicianMemories = optional(INSTRUCTIONS_MAX, 'The clinician\'s standing preferences for this note; added to the instructions as preferences')
const PatientAge = short('Patient age as the clinician writes it, e.g. `7 years`, `18 months`')
const PatientGender = short('Patient gender as the clinician writes it')

/** One answer value: text, a number, yes/no, or a list of texts. */
const AnswerValue = t.Union([
  t.String({ maxLength: ANSWER_TEXT_MAX }),
  t.Number(),
  t.Boolean(),
  t.Null(),
  t.Array(t.String({ maxLength: ANSWER_TEXT_MAX }), { maxItems: ANSWERS_MAX_ENTRIES }),
])
const Answers = (description: string) => t.Record(t.String({ maxLength: ANSWER_KEY_MAX }), AnswerValue, {
  maxProperties: ANSWERS_MAX_ENTRIES, description,
})

export const HpiBody = t.Object({
  transcript: text(TRANSCRIPT_MAX, 'The visit conversation (encounter) or the physician\'s dictation'),
  patientAge: PatientAge,
  patientGender: PatientGender,
  model: Model,
  setting: short('Where the visit happens, e.g. `clinic`, `emergency department`, `telehealth`'),
  physicianMemories: PhysicianMemories,
})

export const SoapBody = t.Object({
  transcript: text(TRANSCRIPT_MAX, 'The visit conversation or dictation'),
  patientAge: PatientAge,
  patientGender: PatientGender,
  model: Model,
  type: short('The visit type, e.g. `new patient`, `follow-up`, `urgent care`'),
  additionalInstructions: optional(INSTRUCTIONS_MAX, 'Instructions for this note'),
  physicianMemories: PhysicianMemories,
})

export const ChartReviewBody = t.Object({
  notes: text(NOTES_MAX, 'The prior notes to review'),
  visitType: short('The coming visit\'s type, e.g. `annual physical`, `diabetes follow-up`'),
  model: Model,
})

export const HospitalCourseBody = t.Object({
  notes: text(NOTES_MAX, 'The admission\'s notes (progress notes, consults, results)'),
  patientAge: PatientAge,
  patientGender: PatientGender,
  model: Model,
  format: short('`narrative`, `problem-based` or `day-by-day`, or a short description of another format'),
  physicianMemories: PhysicianMemories,
})

export const ShadessBody = t.Object({
  responses: Answers('The screening answers by question or domain (Strengths, School, Home, Activities, Drugs, Emotions, Sexuality, Safety): '
    + `text, a number, yes/no or a list of texts; at most ${ANSWERS_MAX_ENTRIES} entries`),
  patientAge: PatientAge,
  model: Model,
})

export const SickVisitBody = t.Object({
  chiefComplaint: text(CHIEF_COMPLAINT_MAX, 'The reason for the visit'),
  transcript: optional(TRANSCRIPT_MAX, 'The visit conversation'),
  dictation: optional(TRANSCRIPT_MAX, 'The physician\'s dictation'),
  patientAge: PatientAge,
  patientGender: PatientGender,
  model: Model,
  ros: optional(SECTION_MAX, 'Review of systems'),
  physicalExam: optional(SECTION_MAX, 'Physical exam findings'),
  diagnoses: optional(SECTION_MAX, 'The diagnoses'),
  physicianMemories: PhysicianMemories,
})

export const PatientEducationBody = t.Object({
  noteText: text(DOCUMENT_MAX, 'The clinician\'s note the handout is based on'),
  diagnosis: optional(INSTRUCTIONS_MAX, 'The diagnosis to explain'),
  medications: optional(INSTRUCTIONS_MAX, 'The medications prescribed'),
  patientAge: optional(SHORT_MAX, 'Patient age'),
  language: optional(SHORT_MAX, 'The handout\'s language; English when absent or empty'),
  readingLevel: optional(SHORT_MAX, 'The reading level, e.g. `5th grade`; plain language at about a 6th-grade level when absent or empty'),
  model: t.Optional(t.String({ ...Model, description: 'A model listed by GET /api/models; the default model when absent' })),
})

/** A milestone: its text, or an object of short facts (`{milestone, domain, status}`). */
const Milestone = t.Union([t.String({ maxLength: ANSWER_TEXT_MAX }), Answers('A milestone with its facts, e.g. {"milestone": "walks alone", "domain": "gross motor", "status": "met"}')])
export const MilestoneNarrativeBody = t.Object({
  milestones: t.Union([
    t.Array(Milestone, { minItems: 1, maxItems: ANSWERS_MAX_ENTRIES }),
    Answers('Milestones by name with their status (`met`, `not yet`, ...) or a list per domain'),
  ], { description: `The milestone checklist: a list of milestones, or an object of milestones (or domains) to their status; at most ${ANSWERS_MAX_ENTRIES} entries` }),
  patientAge: PatientAge,
  patientGender: PatientGender,
  model: Model,
})

export const MilestoneSummaryBody = t.Object({
  narrative: text(DOCUMENT_MAX, 'The milestones narrative to summarize'),
  model: Model,
})

export const RefineBody = t.Object({
  currentDocument: text(DOCUMENT_MAX, 'The document to revise'),
  instructions: text(INSTRUCTIONS_MAX, 'What to change'),
  sourceContext: optional(DOCUMENT_MAX, 'The material the document was written from (transcript, notes)'),
  model: Model,
})

export const ShortenBody = t.Object({
  document: text(DOCUMENT_MAX, 'The document to shorten'),
  model: Model,
})

export const ClarifyBody = t.Object({
  document: text(DOCUMENT_MAX, 'The document to clarify'),
  context: optional(DOCUMENT_MAX, 'Context that helps resolve ambiguities'),
  model: Model,
})

const answer = <K extends string>(key: K, description: string) => t.Object({
  success: t.Literal(true),
  ...({ [key]: t.String({ description }) } as Record<K, ReturnType<typeof t.String>>),
  model: t.String({ description: 'The model that wrote it' }),
})

export const HpiResponse = answer('hpi', 'The History of Present Illness, plain text')
export const SoapResponse = answer('soap', 'The SOAP note, plain text')
export const ChartReviewResponse = answer('chartReview', 'The pre-visit chart review, plain text')
export const HospitalCourseResponse = answer('hospitalCourse', 'The hospital course, plain text')
export const ShadessResponse = answer('assessment', 'The SHADESS psychosocial assessment, plain text')
export const SickVisitResponse = answer('note', 'The sick-visit note, plain text')
export const PatientEducationResponse = answer('handout', 'The patient handout, plain text')
export const MilestoneNarrativeResponse = answer('narrative', 'The developmental milestones narrative, plain text')
export const MilestoneSummaryResponse = answer('summary', 'The milestones summary, plain text')
export const DocumentResponse = answer('document', 'The revised document, plain text')

export const ModelListing = t.Object({
  success: t.Literal(true),
  provider: t.Union([t.Literal('litellm'), t.Literal('none')], { description: '`litellm`: an AI gateway is configured; `none`: generation is unavailable (503)' }),
  models: t.Array(t.Object({
    id: t.String({ description: 'The value to send as `model`' }),
    name: t.String(),
    cost: t.String({ description: 'Relative price: `low`, `medium`, `high` or `unknown`' }),
    category: t.String({ description: '`general`, `fast`, `reasoning` or an administrator\'s own category' }),
  })),
  defaultModel: t.Nullable(t.String({ description: 'The model used when a request names none (patient education); null when there is none' })),
})


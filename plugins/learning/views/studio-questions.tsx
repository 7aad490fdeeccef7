// The editor's quiz: each question a fieldset with its text and its options, each option with its text and a
// "Correct" checkbox. Field names carry the positions (`questions.0.options.1.text`), the same keys the service's
// messages use, so each message lands by its field. Without JavaScript the quiz shows the questions plus one blank
// question with blank option rows; studio.js adds "Add question", "Add option" and "Remove" by cloning the
// <template>s here and renumbering (the `data-studio-js` controls stay hidden until it runs).
import { describedBy, type Errors, FieldNotes } from '../../../views/layout'
import { OPTION_TEXT_MAX, OPTIONS_MAX, OPTIONS_MIN, QUESTION_TEXT_MAX, QUESTIONS_MAX } from '../model'
import { areaText } from './studio'

export interface OptionDraft { text: string; correct: boolean }
export interface QuestionDraft { text: string; options: OptionDraft[] }

/** Option rows a question shows without JavaScript, at least. */
export const OPTION_ROWS_MIN = 4

const blankOption: OptionDraft = { text: '', correct: false }
export const blankQuestion = (): QuestionDraft => ({ text: '', options: Array.from({ length: OPTION_ROWS_MIN }, () => blankOption) })

const OptionRow = ({ q, o, option, errors }: { q: number; o: number; option: OptionDraft; errors?: Errors }) => {
  const id = `studio-q-${q}-o-${o}`
  const error = errors?.[`questions.${q}.options.${o}.text`]
  return (
    <div class="studio-option" data-studio-option>
      <label for={`${id}-text`}>
        <span>Option <span data-o-number>{String(o + 1)}</span></span>
        <input
          id={`${id}-text`} name={`questions.${q}.options.${o}.text`} type="text" value={option.text} maxlength={OPTION_TEXT_MAX} autocomplete="off"
          aria-invalid={error ? 'true' : undefined} aria-describedby={describedBy(`${id}-text`, undefined, error)}
        />
        <FieldNotes id={`${id}-text`} error={error} />
      </label>
      <label class="choice" for={`${id}-correct`}>
        <input id={`${id}-correct`} name={`questions.${q}.options.${o}.correct`} type="checkbox" value="true" checked={option.correct} />
        <span>Correct<span class="visually-hidden">{' answer: option '}<span data-o-number>{String(o + 1)}</span></span></span>
      </label>
      <button type="button" class="secondary" data-studio-js data-studio-remove-option hidden>
        Remove<span class="visually-hidden">{' option '}<span data-o-number>{String(o + 1)}</span></span>
      </button>
    </div>
  )
}

export const QuestionFieldset = ({ q, question, errors }: { q: number; question: QuestionDraft; errors?: Errors }) => {
  const id = `studio-q-${q}`
  const textError = errors?.[`questions.${q}.text`]
  const optionsError = errors?.[`questions.${q}.options`]
  const questionError = errors?.[`questions.${q}`]
  const rows = question.options.length >= OPTION_ROWS_MIN ? question.options
    : [...question.options, ...Array.from({ length: OPTION_ROWS_MIN - question.options.length }, () => blankOption)]
  return (
    <fieldset class="studio-question" id={id} data-studio-question
      aria-describedby={describedBy(id, undefined, questionError)}>
      <legend>Question <span data-q-number>{String(q + 1)}</span></legend>
      <FieldNotes id={id} error={questionError} />
      <label for={`${id}-text`}>
        <span>Question text</span>
        <textarea
          id={`${id}-text`} name={`questions.${q}.text`} rows="2" maxlength={QUESTION_TEXT_MAX}
          aria-invalid={textError ? 'true' : undefined} aria-describedby={describedBy(`${id}-text`, undefined, textError)} safe
        >{areaText(question.text)}</textarea>
        <FieldNotes id={`${id}-text`} error={textError} />
      </label>
      <fieldset class="studio-options" id={`${id}-options`} aria-describedby={describedBy(`${id}-options`, undefined, optionsError)}>
        <legend>Options of question <span data-q-number>{String(q + 1)}</span></legend>
        <FieldNotes id={`${id}-options`} error={optionsError} />
        <div class="studio-option-list" data-studio-options>
          {rows.map((option, o) => <OptionRow q={q} o={o} option={option} errors={errors} />)}
        </div>
        <div class="actions" data-studio-js hidden>
          <button type="button" class="secondary" data-studio-add-option>
            Add option<span class="visually-hidden">{' to question '}<span data-q-number>{String(q + 1)}</span></span>
          </button>
        </div>
      </fieldset>
      <div class="actions" data-studio-js hidden>
        <button type="button" class="secondary" data-studio-remove-question>
          Remove question <span data-q-number>{String(q + 1)}</span>
        </button>
      </div>
    </fieldset>
  )
}

const QUIZ_HINT = `Mark one or more options of each question correct; readers must choose all the correct ones. ` +
  `Each question needs ${OPTIONS_MIN} to ${OPTIONS_MAX} options; at most ${QUESTIONS_MAX} questions. ` +
  'Blank questions and blank options are ignored when you save.'

/** The quiz: the questions, one blank question to add one without JavaScript, and the templates studio.js clones. */
export const QuizEditor = ({ questions, errors }: { questions: QuestionDraft[]; errors?: Errors }) => {
  const shown = questions.length < QUESTIONS_MAX ? [...questions, blankQuestion()] : questions
  return (
    <div class="studio-quiz" data-studio-quiz data-questions-max={String(QUESTIONS_MAX)} data-options-max={String(OPTIONS_MAX)}>
      <p class="muted" id="studio-quiz-hint">{QUIZ_HINT}</p>
      <FieldNotes id="studio-quiz" error={errors?.questions} />
      <div class="studio-questions" data-studio-questions>
        {shown.map((question, q) => <QuestionFieldset q={q} question={question} errors={errors} />)}
      </div>
      <div class="actions" data-studio-js hidden>
        <button type="button" class="secondary" data-studio-add-question>Add question</button>
        <span class="muted" role="status" data-studio-quiz-status></span>
      </div>
      <template data-studio-question-template>
        <QuestionFieldset q={0} question={blankQuestion()} />
      </template>
      <template data-studio-option-template>
        <OptionRow q={0} o={0} option={blankOption} />
      </template>
    </div>
  )
}

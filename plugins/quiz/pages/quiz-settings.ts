// The settings of a quiz made from existing questions (the bank's selection, a question category), as the staff
// pages' forms send them: checked once here, with a message per field.
import { HttpError } from '../../../src/core/errors'
import { TIME_LIMIT_MAX_MINUTES, TITLE_MAX } from '../models/extraction'

export interface QuizSettingsValues { title: string; mode: string; time_limit_minutes: string }
export interface QuizSettings { title: string; mode: 'timed' | 'learning'; time_limit_minutes: number | null }

/** The form's settings, or a 422 naming each field that does not fit. */
export function quizSettings(v: QuizSettingsValues): QuizSettings {
  const errors: Record<string, string> = {}
  const title = v.title.trim()
  if (!title) errors.title = 'Required'
  else if (title.length > TITLE_MAX) errors.title = `Must be at most ${TITLE_MAX} characters`
  if (v.mode !== 'timed' && v.mode !== 'learning') errors.mode = 'Choose timed or learning'
  const limit = v.time_limit_minutes.trim()
  let minutes: number | null = null
  if (limit) {
    minutes = /^\d{1,5}$/.test(limit) ? Number(limit) : NaN
    if (!(minutes >= 1 && minutes <= TIME_LIMIT_MAX_MINUTES)) errors.time_limit_minutes = `A whole number of minutes from 1 to ${TIME_LIMIT_MAX_MINUTES}, or empty`
  }
  if (Object.keys(errors).length > 0) throw HttpError.unprocessable('invalid_input', 'Check the quiz settings', errors)
  return { title, mode: v.mode as QuizSettings['mode'], time_limit_minutes: minutes }
}

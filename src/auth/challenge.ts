// The bot challenge (Turnstile-style siteverify): POST form secret, response, remoteip; answer {success}.
import type { Config } from '../config'
import { HttpError } from '../core/errors'

export const CHALLENGE_TIMEOUT_MS = 10_000

/** Resolves when the challenge is off or the token passes; throws 400 when it fails, 502 when the verifier is unreachable. */
export async function verifyChallenge(
  challenge: Pick<NonNullable<Config['challenge']>, 'secretKey' | 'verifyUrl'> | null,
  token: string | null | undefined,
  remoteIp: string,
): Promise<void> {
  if (!challenge) return
  if (!token) throw HttpError.badRequest('challenge_required', 'Bot challenge required: complete the challenge and send its token')
  let answer: { success?: unknown }
  try {
    const res = await fetch(challenge.verifyUrl, {
      method: 'POST',
      body: new URLSearchParams({ secret: challenge.secretKey, response: token, remoteip: remoteIp }),
      signal: AbortSignal.timeout(CHALLENGE_TIMEOUT_MS),
    })
    if (!res.ok) throw new Error(`siteverify answered ${res.status}`)
    answer = (await res.json()) as { success?: unknown }
  } catch (err) {
    throw HttpError.upstream('challenge_unavailable', err, 'The bot challenge could not be verified; try again')
  }
  if (answer.success !== true) throw HttpError.badRequest('challenge_failed', 'Bot challenge failed')
}

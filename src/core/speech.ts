// The offline voice: speech synthesised on this server, with no gateway and no network. eSpeak NG (the `espeak-ng`
// package, a WebAssembly build of its command line) writes a WAV, which `@breezystack/lamejs` encodes to MP3
// (mono, 48 kbit/s). Both services use it: the quiz tutor's speech when no cloud voice is configured, and the
// clinical assistant later.
//
// The work runs on one worker thread, started on first use and never holding the process open: a long text takes
// a second or two of CPU (mostly the MP3 encoding), which must not stall every other request of the server. Requests
// are served one after another in arrival order; each has a deadline. The same file is the worker's code: imported
// on a worker thread it answers messages instead of exporting the pool.
import { isMainThread, parentPort, Worker } from 'node:worker_threads'
import { HttpError } from './errors'

export interface OfflineVoice {
  /** The id clients send: `offline:<language>`. */
  id: string
  name: string
  /** The eSpeak NG voice (a language tag). */
  espeak: string
}

export const OFFLINE_VOICE_PREFIX = 'offline:'
export const DEFAULT_OFFLINE_VOICE = 'offline:en'
/** The voices offered: a few languages of eSpeak NG's list, English (British) first and the default. */
export const OFFLINE_VOICES: readonly OfflineVoice[] = [
  { id: 'offline:en', name: 'Built-in voice (offline)', espeak: 'en' },
  { id: 'offline:en-us', name: 'Built-in voice, American English (offline)', espeak: 'en-us' },
  { id: 'offline:de', name: 'Built-in voice, German (offline)', espeak: 'de' },
  { id: 'offline:fr', name: 'Built-in voice, French (offline)', espeak: 'fr-fr' },
  { id: 'offline:es', name: 'Built-in voice, Spanish (offline)', espeak: 'es' },
  { id: 'offline:it', name: 'Built-in voice, Italian (offline)', espeak: 'it' },
  { id: 'offline:nl', name: 'Built-in voice, Dutch (offline)', espeak: 'nl' },
  { id: 'offline:pt', name: 'Built-in voice, Portuguese (offline)', espeak: 'pt' },
]
/** Longest text one call speaks (about eight minutes of audio); callers set their own lower limits. */
export const OFFLINE_TEXT_MAX = 5000
/** MP3 bit rate: plenty for a synthetic voice at eSpeak's 22,050 Hz. */
export const OFFLINE_MP3_KBPS = 48
/** Deadline of one request, queueing included. */
export const OFFLINE_TIMEOUT_MS = 60_000

export interface OfflineSpeech {
  readonly voices: readonly OfflineVoice[]
  readonly defaultVoice: string
  /** True for an `offline:` id, known or not (an unknown one is refused by speak). */
  isOfflineVoice(id: string | null | undefined): boolean
  /** MP3 bytes (audio/mpeg) of the text in the voice (default DEFAULT_OFFLINE_VOICE). 422 for no text or an unknown voice. */
  speak(text: string, voice?: string | null): Promise<Uint8Array>
}

// ---- synthesis (runs on the worker thread) -----------------------------------------------------------------

type EspeakModule = { FS: { readFile(path: string): Uint8Array; writeFile(path: string, data: string): void } }
type EspeakFactory = (opts: Record<string, unknown>) => Promise<EspeakModule>

let engine: Promise<{ factory: EspeakFactory; wasm: WebAssembly.Module }> | null = null
/** The eSpeak NG factory and its compiled WebAssembly, loaded once per thread (each call instantiates afresh). */
function loadEngine() {
  engine ??= (async () => {
    // The package has no type declarations: imported by a computed name, typed here.
    const name = 'espeak-ng'
    const { default: factory } = (await import(name)) as { default: EspeakFactory }
    const wasmPath = Bun.resolveSync('espeak-ng/dist/espeak-ng.wasm', import.meta.dir)
    const wasm = await WebAssembly.compile(await Bun.file(wasmPath).arrayBuffer())
    return { factory, wasm }
  })()
  return engine
}

/** Control characters out, whitespace runs to one space: eSpeak reads the rest as plain text (no markup flag). */
export const cleanSpeechText = (text: string) => text.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim()

interface Pcm { samples: Int16Array; sampleRate: number; channels: number }

/** The 16-bit PCM of a RIFF/WAVE file, found by walking its chunks. */
export function readWav(wav: Uint8Array): Pcm {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength)
  const tag = (at: number) => String.fromCharCode(wav[at]!, wav[at + 1]!, wav[at + 2]!, wav[at + 3]!)
  if (wav.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a WAV file')
  let sampleRate = 0
  let channels = 0
  let bits = 0
  for (let at = 12; at + 8 <= wav.length;) {
    const id = tag(at)
    // eSpeak writing to a file it cannot seek leaves the sizes at their maximum: the data runs to the end.
    const size = Math.min(view.getUint32(at + 4, true), wav.length - at - 8)
    if (id === 'fmt ') {
      channels = view.getUint16(at + 10, true)
      sampleRate = view.getUint32(at + 12, true)
      bits = view.getUint16(at + 22, true)
    } else if (id === 'data') {
      if (bits !== 16 || !sampleRate || !channels) throw new Error(`unsupported WAV format (${bits} bit, ${channels} channels)`)
      const bytes = wav.slice(at + 8, at + 8 + (size - (size % 2)))
      return { samples: new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2), sampleRate, channels }
    }
    at += 8 + size + (size % 2)
  }
  throw new Error('WAV file without data')
}

/** MP3 (mono, OFFLINE_MP3_KBPS) of 16-bit mono PCM. */
export async function encodeMp3(pcm: Pcm): Promise<Uint8Array> {
  const { Mp3Encoder } = await import('@breezystack/lamejs')
  if (pcm.channels !== 1) throw new Error('only mono audio is encoded')
  const encoder = new Mp3Encoder(1, pcm.sampleRate, OFFLINE_MP3_KBPS)
  const parts: Uint8Array[] = []
  const block = 1152 * 32
  for (let i = 0; i < pcm.samples.length; i += block) parts.push(encoder.encodeBuffer(pcm.samples.subarray(i, i + block)))
  parts.push(encoder.flush())
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    // lamejs answers signed bytes; the same bytes, read unsigned.
    out.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at)
    at += p.length
  }
  return out
}

/** Text to MP3 on the calling thread: eSpeak NG to WAV in its in-memory file system, then the encoder. */
export async function synthesize(text: string, espeakVoice: string): Promise<Uint8Array> {
  const { factory, wasm } = await loadEngine()
  const log: string[] = []
  const espeak = await factory({
    // Text from a file, not the argument list: a text starting with `-` is never read as an option.
    arguments: ['-w', '/out.wav', '-v', espeakVoice, '-f', '/in.txt'],
    preRun: [(m: EspeakModule) => m.FS.writeFile('/in.txt', text)],
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
      void WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm))
      return {}
    },
    print: (line: string) => log.push(line),
    printErr: (line: string) => log.push(line),
    // The default sets process.exitCode on an exit: never the server's (or the test runner's) exit code.
    quit: (_status: number, toThrow: unknown) => {
      throw toThrow
    },
  })
  let wav: Uint8Array
  try {
    wav = espeak.FS.readFile('/out.wav')
  } catch {
    throw new Error(`eSpeak NG wrote no audio${log.length ? `: ${log.join(' ').slice(0, 200)}` : ''}`)
  }
  return encodeMp3(readWav(wav))
}

// ---- the worker thread's side ------------------------------------------------------------------------------

interface SpeakRequest { id: number; text: string; voice: string }
type SpeakAnswer = { id: number; audio: Uint8Array } | { id: number; error: string }

if (!isMainThread && parentPort) {
  const port = parentPort
  port.on('message', async (msg: SpeakRequest & { kind?: string }) => {
    if (msg?.kind !== 'offline-speech') return
    try {
      const audio = await synthesize(msg.text, msg.voice)
      port.postMessage({ id: msg.id, audio } satisfies SpeakAnswer, [audio.buffer as ArrayBuffer])
    } catch (err) {
      port.postMessage({ id: msg.id, error: err instanceof Error ? err.message : String(err) } satisfies SpeakAnswer)
    }
  })
}

// ---- the main thread's side --------------------------------------------------------------------------------

const synthesisFailed = (message: string) =>
  new HttpError(500, 'offline_speech_failed', 'The built-in voice could not speak this text', undefined, { cause: new Error(message) })

function createOfflineSpeech(): OfflineSpeech {
  let worker: Worker | null = null
  let seq = 0
  const pending = new Map<number, { worker: Worker; resolve(audio: Uint8Array): void; reject(err: unknown): void }>()

  /** Fails what was sent to this worker (a replacement's requests go on). */
  const failAll = (w: Worker, message: string) => {
    for (const [id, p] of pending) {
      if (p.worker !== w) continue
      pending.delete(id)
      p.reject(synthesisFailed(message))
    }
  }
  const start = (): Worker => {
    if (worker) return worker
    const w = new Worker(import.meta.path)
    w.on('message', (answer: SpeakAnswer) => {
      const p = pending.get(answer.id)
      if (!p) return
      pending.delete(answer.id)
      if ('audio' in answer) p.resolve(new Uint8Array(answer.audio))
      else p.reject(synthesisFailed(answer.error))
    })
    const lost = (why: string) => {
      if (worker === w) worker = null
      failAll(w, why)
    }
    w.on('error', (err) => lost(err instanceof Error ? err.message : String(err)))
    w.on('exit', (code) => lost(`the speech worker stopped (exit ${code})`))
    // Idle, the worker must not keep the process alive; busy, the pending promise's timer does.
    w.unref()
    worker = w
    return w
  }

  const voiceOf = (id: string | null | undefined): OfflineVoice => {
    const wanted = id?.trim() || DEFAULT_OFFLINE_VOICE
    const voice = OFFLINE_VOICES.find((v) => v.id === wanted)
    if (!voice) {
      throw HttpError.unprocessable('unknown_voice', `Unknown built-in voice ${wanted.slice(0, 60)}; known: ${OFFLINE_VOICES.map((v) => v.id).join(', ')}`,
        { voice: 'unknown built-in voice' })
    }
    return voice
  }

  return {
    voices: OFFLINE_VOICES,
    defaultVoice: DEFAULT_OFFLINE_VOICE,
    isOfflineVoice: (id) => typeof id === 'string' && id.trim().startsWith(OFFLINE_VOICE_PREFIX),
    async speak(text, voiceId) {
      const voice = voiceOf(voiceId)
      const clean = cleanSpeechText(text)
      if (!clean) return Promise.reject(HttpError.unprocessable('empty_text', 'There is no text to speak', { text: 'no text to speak' }))
      if (clean.length > OFFLINE_TEXT_MAX) {
        return Promise.reject(HttpError.unprocessable('text_too_long', `The text is longer than ${OFFLINE_TEXT_MAX} characters`, { text: 'too long' }))
      }
      const id = ++seq
      return new Promise<Uint8Array>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          // A worker stuck this long is replaced: the next request starts a fresh one.
          const stuck = worker
          worker = null
          void stuck?.terminate()
          reject(new HttpError(504, 'offline_speech_timeout', `The built-in voice did not finish within ${OFFLINE_TIMEOUT_MS / 1000} seconds`))
        }, OFFLINE_TIMEOUT_MS)
        try {
          const w = start()
          pending.set(id, {
            worker: w,
            resolve: (audio) => { clearTimeout(timer); resolve(audio) },
            reject: (err) => { clearTimeout(timer); reject(err) },
          })
          w.postMessage({ kind: 'offline-speech', id, text: clean, voice: voice.espeak })
        } catch (err) {
          pending.delete(id)
          clearTimeout(timer)
          reject(synthesisFailed(err instanceof Error ? err.message : String(err)))
        }
      })
    },
  }
}

/** The process's offline voice (one worker thread, shared by every service). */
export const offlineSpeech: OfflineSpeech = createOfflineSpeech()

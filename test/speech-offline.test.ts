// The core's offline voice (src/core/speech.ts): eSpeak NG (WebAssembly) to WAV, encoded to MP3 by lamejs, on a
// worker thread. Checks real MP3 output (frame headers walked), that longer text gives longer audio, the voices,
// and the refusals. Short texts keep it fast.
import { describe, expect, it, setDefaultTimeout } from 'bun:test'
import { HttpError } from '../src/core/errors'
import { cleanSpeechText, DEFAULT_OFFLINE_VOICE, encodeMp3, OFFLINE_TEXT_MAX, OFFLINE_VOICES, offlineSpeech, readWav } from '../src/core/speech'

setDefaultTimeout(30_000)

// MPEG audio layer III bit rates (kbit/s) by index and sample rates by index, per MPEG version.
const BITRATES = { 1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320], 2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160] }
const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] }

/** Walks the MP3's frames from the start: their count and the audio's duration; throws on a broken frame header. */
function mp3Frames(bytes: Uint8Array): { frames: number; seconds: number; sampleRate: number } {
  let at = 0
  if (bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) at = 10 + ((bytes[6]! << 21) | (bytes[7]! << 14) | (bytes[8]! << 7) | bytes[9]!)
  let frames = 0
  let seconds = 0
  let sampleRate = 0
  while (at + 4 <= bytes.length) {
    const [b0, b1, b2] = [bytes[at]!, bytes[at + 1]!, bytes[at + 2]!]
    if (b0 !== 0xff || (b1 & 0xe0) !== 0xe0) throw new Error(`no frame sync at byte ${at}`)
    const version = (b1 >> 3) & 3 // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    const layer = (b1 >> 1) & 3
    if (layer !== 1) throw new Error('not layer III')
    const kbps = (version === 3 ? BITRATES[1] : BITRATES[2])[b2 >> 4]!
    sampleRate = RATES[version]![(b2 >> 2) & 3]!
    const padding = (b2 >> 1) & 1
    const samples = version === 3 ? 1152 : 576
    const length = Math.floor((samples / 8) * kbps * 1000 / sampleRate) + padding
    if (!kbps || length < 4) throw new Error(`bad frame at byte ${at}`)
    at += length
    frames++
    seconds += samples / sampleRate
  }
  return { frames, seconds, sampleRate }
}

describe('offline speech (espeak-ng + lamejs)', () => {
  it('speaks a short text as a real MP3', async () => {
    const audio = await offlineSpeech.speak('Which organ produces insulin? The pancreas.')
    expect(audio).toBeInstanceOf(Uint8Array)
    // MPEG frame sync: 0xFF then 0xFB (MPEG-1), 0xF3 (MPEG-2) or 0xE3 (MPEG-2.5), or an ID3 tag first.
    const id3 = audio[0] === 0x49 && audio[1] === 0x44 && audio[2] === 0x33
    expect(id3 || (audio[0] === 0xff && [0xfb, 0xf3, 0xe3].includes(audio[1]!))).toBe(true)
    expect(audio.length).toBeGreaterThan(3_000)
    expect(audio.length).toBeLessThan(200_000)
    const { frames, seconds, sampleRate } = mp3Frames(audio)
    expect(sampleRate).toBe(22050)
    expect(frames).toBeGreaterThan(20)
    // A sentence and a half of speech: between one and ten seconds.
    expect(seconds).toBeGreaterThan(1)
    expect(seconds).toBeLessThan(10)
  })

  it('a longer text gives longer audio; voices of other languages speak too, concurrently', async () => {
    const [short, long, german] = await Promise.all([
      offlineSpeech.speak('Yes.'),
      offlineSpeech.speak('The pancreas produces insulin in the beta cells of the islets of Langerhans, and glucagon in the alpha cells.'),
      offlineSpeech.speak('Die Bauchspeicheldrüse bildet Insulin.', 'offline:de'),
    ])
    const s = mp3Frames(short).seconds
    const l = mp3Frames(long).seconds
    expect(l).toBeGreaterThan(s * 3)
    expect(mp3Frames(german).seconds).toBeGreaterThan(1)
  })

  it('reads a text that starts with a dash as text, not as an option', async () => {
    const audio = await offlineSpeech.speak('-v xx --help')
    expect(mp3Frames(audio).seconds).toBeGreaterThan(0.5)
  })

  it('lists its voices, English first and the default', () => {
    expect(offlineSpeech.voices[0]).toEqual({ id: 'offline:en', name: 'Built-in voice (offline)', espeak: 'en' })
    expect(offlineSpeech.defaultVoice).toBe(DEFAULT_OFFLINE_VOICE)
    expect(new Set(OFFLINE_VOICES.map((v) => v.id)).size).toBe(OFFLINE_VOICES.length)
    for (const v of OFFLINE_VOICES) expect(v.id.startsWith('offline:')).toBe(true)
    expect(offlineSpeech.isOfflineVoice('offline:en')).toBe(true)
    expect(offlineSpeech.isOfflineVoice('tts-1:alloy')).toBe(false)
    expect(offlineSpeech.isOfflineVoice(null)).toBe(false)
  })

  it('refuses an unknown voice, a blank text and a text over the limit with 422', async () => {
    const refused = async (p: Promise<unknown>) => {
      const err = await p.then(() => null, (e: unknown) => e)
      expect(err).toBeInstanceOf(HttpError)
      return err as HttpError
    }
    expect((await refused(offlineSpeech.speak('hello', 'offline:xx'))).status).toBe(422)
    expect((await refused(offlineSpeech.speak(' \n\t '))).status).toBe(422)
    expect((await refused(offlineSpeech.speak('a'.repeat(OFFLINE_TEXT_MAX + 1)))).status).toBe(422)
  })

  it('cleans control characters and reads WAV chunks and encodes mono PCM', async () => {
    expect(cleanSpeechText(' a\u0000b\n\n c\u0007 ')).toBe('a b c')
    // A WAV with a LIST chunk before data: 0.5 s of a 440 Hz tone at 22,050 Hz.
    const samples = new Int16Array(11025).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 22050)))
    const list = new Uint8Array([...'LIST'].map((c) => c.charCodeAt(0)).concat([4, 0, 0, 0, 1, 2, 3, 4]))
    const header = new DataView(new ArrayBuffer(36))
    const w = (at: number, s: string) => [...s].forEach((c, i) => header.setUint8(at + i, c.charCodeAt(0)))
    w(0, 'RIFF'); header.setUint32(4, 36 + list.length + 8 + samples.byteLength, true); w(8, 'WAVE'); w(12, 'fmt ')
    header.setUint32(16, 16, true); header.setUint16(20, 1, true); header.setUint16(22, 1, true); header.setUint32(24, 22050, true)
    header.setUint32(28, 44100, true); header.setUint16(32, 2, true); header.setUint16(34, 16, true)
    const dataHeader = new DataView(new ArrayBuffer(8))
    'data'.split('').forEach((c, i) => dataHeader.setUint8(i, c.charCodeAt(0)))
    dataHeader.setUint32(4, samples.byteLength, true)
    const wav = new Uint8Array(36 + list.length + 8 + samples.byteLength)
    wav.set(new Uint8Array(header.buffer), 0)
    wav.set(list, 36)
    wav.set(new Uint8Array(dataHeader.buffer), 36 + list.length)
    wav.set(new Uint8Array(samples.buffer), 36 + list.length + 8)
    const pcm = readWav(wav)
    expect(pcm.sampleRate).toBe(22050)
    expect(pcm.channels).toBe(1)
    expect(Array.from(pcm.samples.slice(0, 50))).toEqual(Array.from(samples.slice(0, 50)))
    const { seconds } = mp3Frames(await encodeMp3(pcm))
    expect(seconds).toBeGreaterThan(0.45)
    expect(seconds).toBeLessThan(0.7)
    expect(() => readWav(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))).toThrow('not a WAV file')
  })
})

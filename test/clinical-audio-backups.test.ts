// Audio backups: upload (multipart `audio`, `module`), the unexpired listing, the streamed decompressed download
// with its content type, delete; the file gzipped then sealed (version byte 0x01) under DATA_DIR, legacy files
// without the byte, a tampered file; the 24-hour expiry and the sweep (rows and files, orphan files) on a moved
// clock; the audio type checks, the size limit (413 before the body is read), other users' backups, sessions.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from 'bun:test'
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { AUDIO_BACKUP_LIFETIME_HOURS, AUDIO_BACKUP_MAX_BYTES, DEFAULT_MODULE } from '../plugins/clinical/models/records'
import {
  MESSAGES, MULTIPART_OVERHEAD_BYTES, ORPHAN_AGE_MS, audioStorageKey, sweepExpiredAudioBackups,
} from '../plugins/clinical/services/audio-backups'
import { databaseTargets, type TestApp } from './support/app'
import { appWithTwoUsers, asUser, type SignedIn, userWithSession } from './support/clinical'

setDefaultTimeout(120_000)

const PATH = '/api/audio-backups'
const HOUR = 3600 * 1000

interface Backup { id: number; module: string; mime_type: string; size_bytes: number; compressed_bytes: number; created_at: string; expires_at: string }
interface ErrorBody { success: false; error: string; code: string }

/** A small WAV file (RIFF header, a sine tone) with a text marker inside its samples. */
function wav(seconds = 0.25, marker = 'PATIENT-MARKER-ALPHA'): Uint8Array<ArrayBuffer> {
  const rate = 8000
  const samples = Math.floor(rate * seconds)
  const bytes = new Uint8Array(44 + samples)
  const view = new DataView(bytes.buffer)
  const text = (at: number, s: string) => bytes.set(new TextEncoder().encode(s), at)
  text(0, 'RIFF'); view.setUint32(4, 36 + samples, true); text(8, 'WAVE'); text(12, 'fmt ')
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true)
  view.setUint32(24, rate, true); view.setUint32(28, rate, true); view.setUint16(32, 1, true); view.setUint16(34, 8, true)
  text(36, 'data'); view.setUint32(40, samples, true)
  for (let i = 0; i < samples; i++) bytes[44 + i] = 128 + Math.round(100 * Math.sin(i / 3))
  text(44 + 100, marker)
  return bytes
}

/** Bytes a content sniffer recognises as nothing in particular (no magic number), with a marker. */
function opaque(size: number, marker = 'OPAQUE-MARKER-BRAVO'): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + 3) % 251
  bytes.set(new TextEncoder().encode(marker), Math.min(64, Math.max(0, size - marker.length)))
  return bytes
}

describe.each(databaseTargets())('audio backups (%s)', (target) => {
  let app: TestApp
  let clock: { now: number }
  let alice: SignedIn
  let bob: SignedIn

  beforeAll(async () => {
    ;({ app, clock, alice, bob } = await appWithTwoUsers(target, '2026-06-10T07:30:00Z'))
  })
  afterAll(() => app.close())

  const as = asUser
  // Bun's form parser takes a part's type from its file name's extension (not its Content-Type): so do the uploads.
  const upload = (s: SignedIn | null, bytes: Uint8Array<ArrayBuffer>, name = 'recording.wav', fields: Record<string, string> = {}, headers: Record<string, string> = {}) => {
    const form = new FormData()
    form.append('audio', new File([bytes], name, { type: Bun.file(name).type }))
    for (const [k, v] of Object.entries(fields)) form.append(k, v)
    return app.request(PATH, { method: 'POST', body: form, ...as(s), headers })
  }
  const store = async (s: SignedIn, bytes: Uint8Array<ArrayBuffer> = wav(), name = 'recording.wav', fields: Record<string, string> = {}): Promise<number> => {
    const res = await upload(s, bytes, name, fields)
    const json = (await res.json()) as { success: boolean; id: number }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json).toEqual({ success: true, id: expect.any(Number) })
    return json.id
  }
  const list = async (s: SignedIn): Promise<Backup[]> => {
    const res = await app.get(PATH, as(s))
    const json = (await res.json()) as { success: boolean; backups: Backup[] }
    expect(res.status, JSON.stringify(json)).toBe(200)
    expect(json.success).toBe(true)
    return json.backups
  }
  const failure = async (res: Response, status: number): Promise<ErrorBody> => {
    const json = (await res.json()) as ErrorBody
    expect(res.status, JSON.stringify(json)).toBe(status)
    expect(json.success).toBe(false)
    return json
  }
  const rowOf = async (id: number) =>
    (await app.db.sql<{ storage_key: string; user_id: number }>`select storage_key, user_id from clinical.audio_backups where id = ${id}`)[0] ?? null
  const fileOf = async (id: number) => app.booted.core.storage.path((await rowOf(id))!.storage_key)
  const count = async () => (await app.db.sql<{ n: number }>`select count(*)::int as n from clinical.audio_backups`)[0]!.n

  it('refuses every route without a session (401)', async () => {
    const id = await store(alice)
    for (const res of [
      await upload(null, wav()),
      await app.get(PATH, as(null)),
      await app.get(`${PATH}/${id}/audio`, as(null)),
      await app.delete(`${PATH}/${id}`, as(null)),
    ]) await failure(res, 401)
    expect(await rowOf(id)).not.toBeNull()
  })

  it('stores a recording and lists it with its sizes, module and 24-hour expiry', async () => {
    const user = await userWithSession(app)
    const audio = wav(1)
    const id = await store(user, audio)
    const [entry] = await list(user)
    expect(entry).toEqual({
      id, module: DEFAULT_MODULE, mime_type: 'audio/wav', size_bytes: audio.length,
      compressed_bytes: expect.any(Number),
      created_at: new Date(clock.now).toISOString(), expires_at: new Date(clock.now + AUDIO_BACKUP_LIFETIME_HOURS * HOUR).toISOString(),
    })
    // compressed_bytes is the gzip size of the recording: what the sealed file holds, less the 29-byte envelope
    const file = readFileSync(await fileOf(id))
    expect(entry!.compressed_bytes).toBe(file.length - 29)
    expect(entry!.compressed_bytes).toBeLessThan(audio.length)
    // a module of the caller's choosing; newest first
    clock.now += 1000
    const second = await store(user, wav(), 'recording.wav', { module: 'sick_visit' })
    const entries = await list(user)
    expect(entries.map((b) => b.id)).toEqual([second, id])
    expect(entries[0]!.module).toBe('sick_visit')
    await failure(await upload(user, wav(), 'recording.wav', { module: 'Bad Module!' }), 400)
  })

  it('answers the decompressed recording, streamed, with its content type', async () => {
    const audio = wav(2)
    const id = await store(alice, audio)
    const res = await app.get(`${PATH}/${id}/audio`, as(alice))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('audio/wav')
    expect(res.headers.get('content-length')).toBe(String(audio.length))
    expect(res.headers.get('cache-control')).toContain('no-store')
    expect(res.body).toBeInstanceOf(ReadableStream)
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(audio)
  })

  it('the file is gzipped, then sealed with a leading 0x01 under DATA_DIR: no plaintext inside', async () => {
    const audio = wav(1, 'PATIENT-MARKER-CHARLIE')
    const id = await store(alice, audio)
    const path = await fileOf(id)
    expect(path.startsWith(join(app.dataDir, 'files'))).toBe(true)
    const raw = readFileSync(path)
    expect(raw[0]).toBe(0x01)
    expect(raw.includes(Buffer.from('PATIENT-MARKER-CHARLIE'))).toBe(false)
    expect(raw.includes(Buffer.from('RIFF'))).toBe(false)
    // the core's envelope with the service's key: it opens to the gzip of the recording
    const opened = app.booted.core.crypto.open(raw)
    expect([opened[0], opened[1]]).toEqual([0x1f, 0x8b])
    expect(Bun.gunzipSync(opened as Uint8Array<ArrayBuffer>)).toEqual(audio)
    // nothing of the recording in the database either
    const [row] = await app.db.sql<Record<string, unknown>>`select * from clinical.audio_backups where id = ${id}`
    expect(JSON.stringify(row)).not.toContain('MARKER')
  })

  it('the type: what the bytes show, else what the name gives (parameters dropped); anything else 415; empty 400', async () => {
    const user = await userWithSession(app)
    const sniffed = await store(user, wav(), 'recording.bin')
    const byName = await store(user, opaque(2000), 'dictation.mp3')
    const container = await store(user, opaque(500), 'dictation.webm') // Bun: video/webm
    const misnamed = await store(user, wav(), 'dictation.mp3')
    // an Ogg Opus stream: its sniffed type `audio/ogg; codecs=opus` is stored without the parameter
    const oggBytes = opaque(400)
    oggBytes.set(new TextEncoder().encode('OggS'), 0)
    oggBytes.set(new TextEncoder().encode('OpusHead'), 28)
    const ogg = await store(user, oggBytes, 'recording')
    const types = Object.fromEntries((await list(user)).map((b) => [b.id, b.mime_type]))
    expect(types).toEqual({ [sniffed]: 'audio/wav', [byName]: 'audio/mpeg', [container]: 'audio/webm', [misnamed]: 'audio/wav', [ogg]: 'audio/ogg' })
    expect((await app.get(`${PATH}/${container}/audio`, as(user))).headers.get('content-type')).toBe('audio/webm')

    const before = await count()
    const pdf = new TextEncoder().encode('%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n') as Uint8Array<ArrayBuffer>
    const exe = new Uint8Array([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0, ...opaque(200)])
    expect((await failure(await upload(user, pdf, 'recording.mp3'), 415)).error).toBe(MESSAGES.notAudio)
    await failure(await upload(user, exe, 'recording.wav'), 415)
    await failure(await upload(user, opaque(300), 'notes.txt'), 415)
    await failure(await upload(user, opaque(300), 'recording'), 415)
    expect((await failure(await upload(user, new Uint8Array(0), 'recording.wav'), 400)).error).toBe(MESSAGES.empty)
    const missing = new FormData()
    missing.append('module', 'soap')
    await failure(await app.request(PATH, { method: 'POST', body: missing, ...as(user) }), 400)
    await failure(await app.post(PATH, { audio: 'UklGRg==' }, as(user)), 400)
    expect(await count()).toBe(before)
  })

  it(`size: ${AUDIO_BACKUP_MAX_BYTES} bytes are accepted and read back; one more is 413 and nothing is stored`, async () => {
    const user = await userWithSession(app)
    const atLimit = opaque(AUDIO_BACKUP_MAX_BYTES)
    const id = await store(user, atLimit, 'recording.webm')
    const res = await app.get(`${PATH}/${id}/audio`, as(user))
    expect(res.status).toBe(200)
    const back = new Uint8Array(await res.arrayBuffer())
    expect(back.length).toBe(AUDIO_BACKUP_MAX_BYTES)
    expect(Buffer.compare(back, atLimit)).toBe(0)

    const before = await count()
    const over = opaque(AUDIO_BACKUP_MAX_BYTES + 1)
    const refused = await failure(await upload(user, over, 'recording.webm'), 413)
    expect(refused.error).toBe(MESSAGES.tooLarge)
    expect(refused.code).toBe('file_too_large')
    // a declared Content-Length over the limit: refused before the body is read
    const declared = await upload(user, wav(), 'recording.wav', {}, { 'content-length': String(AUDIO_BACKUP_MAX_BYTES + MULTIPART_OVERHEAD_BYTES + 1) })
    expect((await failure(declared, 413)).error).toBe(MESSAGES.tooLarge)
    expect(await count()).toBe(before)
  })

  it('another user\'s backup is 404 to download and delete, and missing from their listing', async () => {
    const id = await store(alice)
    await failure(await app.get(`${PATH}/${id}/audio`, as(bob)), 404)
    await failure(await app.delete(`${PATH}/${id}`, as(bob)), 404)
    expect((await list(bob)).some((b) => b.id === id)).toBe(false)
    expect(await rowOf(id)).not.toBeNull()
    await failure(await app.get(`${PATH}/999999/audio`, as(alice)), 404)
    await failure(await app.get(`${PATH}/0/audio`, as(alice)), 400)
  })

  it('delete removes the row and the file', async () => {
    const id = await store(alice)
    const path = await fileOf(id)
    expect(existsSync(path)).toBe(true)
    const res = await app.delete(`${PATH}/${id}`, as(alice))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ success: true })
    expect(await rowOf(id)).toBeNull()
    expect(existsSync(path)).toBe(false)
    await failure(await app.get(`${PATH}/${id}/audio`, as(alice)), 404)
    await failure(await app.delete(`${PATH}/${id}`, as(alice)), 404)
  })

  it('legacy files without the version byte pass through: gzip is undone, anything else sent as it is', async () => {
    const audio = wav(1)
    const insertLegacy = async (bytes: Uint8Array, name: string) => {
      const key = audioStorageKey(name)
      const path = app.booted.core.storage.path(key)
      await Bun.write(path, bytes)
      const [row] = await app.db.sql<{ id: number }>`
        insert into clinical.audio_backups (user_id, module, mime_type, size_bytes, compressed_bytes, storage_key, created_at, expires_at)
        values (${alice.user.id}, 'dictation', 'audio/wav', ${audio.length}, ${bytes.length}, ${key},
                ${new Date(clock.now).toISOString()}, ${new Date(clock.now + HOUR).toISOString()})
        returning id`
      return row!.id
    }
    const gz = await insertLegacy(Bun.gzipSync(audio), `legacy-${crypto.randomUUID()}.gz`)
    const plain = await insertLegacy(audio, `legacy-${crypto.randomUUID()}.wav`)
    for (const id of [gz, plain]) {
      const res = await app.get(`${PATH}/${id}/audio`, as(alice))
      expect(res.status).toBe(200)
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(audio)
    }
  })

  it('an altered file is refused before any byte is sent (500), and a missing file is 404', async () => {
    const id = await store(alice, wav(1))
    const path = await fileOf(id)
    const raw = readFileSync(path)
    raw[raw.length - 5]! ^= 0xff
    writeFileSync(path, raw)
    const res = await app.get(`${PATH}/${id}/audio`, as(alice))
    expect(res.status).toBe(500)
    expect(((await res.json()) as ErrorBody).error).toBe('Request failed')

    const gone = await store(alice, wav())
    await app.booted.core.storage.delete((await rowOf(gone))!.storage_key)
    expect((await failure(await app.get(`${PATH}/${gone}/audio`, as(alice)), 404)).error).toBe(MESSAGES.missing)
  })

  it('expires after 24 hours: hidden from listing and download, then the sweep removes rows and files', async () => {
    const user = await userWithSession(app)
    const start = clock.now
    try {
      const old = await store(user)
      const oldPath = await fileOf(old)
      clock.now += 2 * HOUR
      const young = await store(user)
      const youngPath = await fileOf(young)

      clock.now = start + AUDIO_BACKUP_LIFETIME_HOURS * HOUR - 1
      await sweepExpiredAudioBackups(app.booted.core)
      expect((await list(user)).map((b) => b.id)).toEqual([young, old])
      expect(existsSync(oldPath)).toBe(true)

      clock.now = start + AUDIO_BACKUP_LIFETIME_HOURS * HOUR
      expect((await list(user)).map((b) => b.id)).toEqual([young])
      await failure(await app.get(`${PATH}/${old}/audio`, as(user)), 404)
      expect(await rowOf(old)).not.toBeNull()

      const swept = await sweepExpiredAudioBackups(app.booted.core)
      expect(swept).toBeGreaterThanOrEqual(1)
      expect(await rowOf(old)).toBeNull()
      expect(existsSync(oldPath)).toBe(false)
      expect(await rowOf(young)).not.toBeNull()
      expect(existsSync(youngPath)).toBe(true)
    } finally {
      clock.now = start
    }
  })

  it('the sweep removes old files no row names (a deleted user\'s), and keeps new ones and named ones', async () => {
    const user = await userWithSession(app)
    const kept = await store(alice)
    const keptPath = await fileOf(kept)
    const orphan = await store(user)
    const orphanPath = await fileOf(orphan)
    await app.db.sql`delete from clinical.users where id = ${user.user.id}`
    expect(await rowOf(orphan)).toBeNull() // rows go with the user
    const fresh = join(dirname(orphanPath), `${crypto.randomUUID()}.gz.sealed`)
    writeFileSync(fresh, 'an upload in progress')

    const old = new Date(Date.now() - ORPHAN_AGE_MS - 60_000)
    utimesSync(orphanPath, old, old)
    utimesSync(keptPath, old, old)
    await sweepExpiredAudioBackups(app.booted.core)
    expect(existsSync(orphanPath)).toBe(false)
    expect(existsSync(keptPath)).toBe(true)
    expect(existsSync(fresh)).toBe(true)
  })
})

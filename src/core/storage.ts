// File storage: a local folder under DATA_DIR (object storage arrives with the clinical documents).
// Keys are app-generated relative paths; anything that could leave the folder is refused.
import { mkdir, rm, stat } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'

export interface Storage {
  put(key: string, data: Blob | Uint8Array | ArrayBuffer): Promise<void>
  /** The stored file, or null. */
  get(key: string): Promise<Blob | null>
  delete(key: string): Promise<void>
  /** Local path of a key (for tools that read files, e.g. the PDF parser). */
  path(key: string): string
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,255}$/

export function createLocalStorage(root: string): Storage {
  const base = resolve(root)
  const path = (key: string) => {
    if (!KEY.test(key) || key.includes('..')) throw new Error(`invalid storage key: ${key}`)
    const full = resolve(join(base, key))
    if (!full.startsWith(base + sep)) throw new Error(`invalid storage key: ${key}`)
    return full
  }
  return {
    path,
    async put(key, data) {
      const full = path(key)
      await mkdir(dirname(full), { recursive: true })
      await Bun.write(full, data)
    },
    async get(key) {
      const full = path(key)
      try {
        await stat(full)
      } catch {
        return null
      }
      return Bun.file(full)
    },
    async delete(key) {
      await rm(path(key), { force: true })
    },
  }
}

// Throwaway databases on a PostgreSQL server, for the test suite and the benchmarks: created empty with a
// unique name, dropped (with any connections left) when done.
import { SQL } from 'bun'

export interface ThrowawayDatabase {
  url: string
  drop(): Promise<void>
}

export async function createThrowawayDatabase(serverUrl: string, prefix = 't'): Promise<ThrowawayDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = new SQL({ url: serverUrl, max: 1 })
  try {
    await admin.unsafe(`create database "${name}"`)
  } finally {
    await admin.close()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const a = new SQL({ url: serverUrl, max: 1 })
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`)
      } finally {
        await a.close()
      }
    },
  }
}

// The real server as a child process (`bun src/main.ts`), for tests that stop it from outside: kill -9 at a chosen
// moment, SIGTERM for a clean stop. Its output is kept so a failing test can show what the server said, and goes
// line by line to the secrets check (test/support/secrets.ts), with the secrets of the environment it is given.
import type { Subprocess } from 'bun'
import { join } from 'node:path'
import { lineCapture, rememberEnvSecrets } from './secrets'

const ROOT_DIR = join(import.meta.dir, '..', '..')

/** Start-up of a fresh process (migrations on a new database included) stays well under this. */
export const SERVER_START_TIMEOUT_MS = 30_000

export interface ServerProcess {
  /** http://127.0.0.1:<port> */
  readonly url: string
  readonly pid: number
  /** stdout and stderr so far. */
  output(): string
  /** SIGKILL: no shutdown code runs, as when the kernel (out of memory) or an operator kills the process. */
  kill9(): Promise<void>
  /** SIGTERM and wait for the exit; answers the exit code. */
  stop(): Promise<number>
}

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/** The variables a server process needs from the test's environment when it is to inherit nothing else. */
const BARE_ENV = ['PATH', 'HOME', 'TMPDIR']

/**
 * Spawns the server with this environment and waits until /api/health answers. It runs on top of the test's own
 * environment (without DATABASE_URL unless given), or with `bare` on nothing but PATH, HOME and TMPDIR, so no mail,
 * bot challenge or APP_URL of the caller's reaches it.
 */
export async function startServer(env: Record<string, string>, opts: { bare?: boolean } = {}): Promise<ServerProcess> {
  const port = await freePort()
  const { DATABASE_URL: _, ...inherited } = process.env
  const base = opts.bare ? Object.fromEntries(BARE_ENV.filter((k) => process.env[k]).map((k) => [k, process.env[k]!])) : inherited
  rememberEnvSecrets(env)
  const proc: Subprocess<'ignore', 'pipe', 'pipe'> = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT_DIR,
    env: { ...base, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let output = ''
  const drain = async (stream: ReadableStream<Uint8Array>, name: string) => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    const lines = lineCapture(`server process ${name}`)
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const text = decoder.decode(r.value, { stream: true })
      output += text
      lines.write(text)
    }
    lines.end()
  }
  const drained = Promise.all([drain(proc.stdout, 'stdout'), drain(proc.stderr, 'stderr')])
  const url = `http://127.0.0.1:${port}`
  const until = Date.now() + SERVER_START_TIMEOUT_MS
  for (;;) {
    if (proc.exitCode !== null) {
      await drained
      throw new Error(`the server exited with ${proc.exitCode} during start-up:\n${output}`)
    }
    try {
      if ((await fetch(`${url}/api/health`)).ok) break
    } catch {}
    if (Date.now() > until) {
      proc.kill('SIGKILL')
      throw new Error(`the server did not become healthy within ${SERVER_START_TIMEOUT_MS} ms:\n${output}`)
    }
    await Bun.sleep(50)
  }
  return {
    url,
    pid: proc.pid,
    output: () => output,
    async kill9() {
      proc.kill('SIGKILL')
      await proc.exited
      await drained
    },
    async stop() {
      proc.kill('SIGTERM')
      const code = await proc.exited
      await drained
      return code
    },
  }
}

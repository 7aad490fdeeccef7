// A real S3-protocol server for tests (s3rver, on 127.0.0.1 with its data in a temporary folder) with one bucket,
// the S3_* environment an app under test is started with, and a client of its own to look at the bucket.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const S3_BUCKET = 'clinical-documents'
/** s3rver's fixed credentials: it checks signatures made with them. */
export const S3_KEY = 'S3RVER'

export interface S3Server {
  endpoint: string
  /** The S3_* variables that point an app at this server. */
  env: Record<string, string>
  /** A client of the bucket, to check what the app stored. */
  client: Bun.S3Client
  close(): Promise<void>
}

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>
  close(): Promise<void>
}

export async function startS3Server(): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-test-'))
  // s3rver ships no type declarations: the module is loaded by a name typed as a plain string.
  const name: string = 's3rver'
  const S3rver = (await import(name)).default as new (options: Record<string, unknown>) => S3rverInstance
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: S3_BUCKET, configs: [] }] })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  const env = {
    S3_ENDPOINT: endpoint, S3_BUCKET, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: S3_KEY, S3_SECRET_ACCESS_KEY: S3_KEY,
  }
  const client = new Bun.S3Client({ endpoint, bucket: S3_BUCKET, region: 'us-east-1', accessKeyId: S3_KEY, secretAccessKey: S3_KEY })
  return {
    endpoint,
    env,
    client,
    async close() {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

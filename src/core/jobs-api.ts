// What the job queue (src/core/jobs.ts) offers the rest of the app: the job record, a handler's context and
// give-up hook, the queue's interface and its settings. Plugins import these through src/core/jobs.ts.
import type { Db } from './db'

export type JobStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled'

export interface JobStep {
  /** Human-readable progress line. */
  message: string
  /** Optional machine-readable name and state (document processing steps use both). */
  name?: string
  status?: string
  at: string
}

export interface JobRecord {
  id: string
  kind: string
  service: string
  owner_id: number | null
  title: string
  status: JobStatus
  payload: unknown
  steps: JobStep[]
  result: unknown
  error: string | null
  attempts: number
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
}

export interface JobContext<P = unknown> {
  readonly id: string
  readonly payload: P
  readonly ownerId: number | null
  /** 1 on the first run; more when the job was reclaimed after the process running it stopped. */
  readonly attempt: number
  /** Attempts allowed before the job is abandoned (EnqueueOptions.maxAttempts). */
  readonly maxAttempts: number
  /**
   * The result an earlier attempt recorded with recordResult (so its work is committed), or null. A handler that
   * finds one skips to the steps after that commit, which must be safe to repeat (upsert by id, delete-then-insert).
   */
  readonly recorded: unknown
  /** Aborted when the job is cancelled or the process shuts down. */
  readonly signal: AbortSignal
  /** Appends a step, renews the lease, and throws JobCancelled when the job was cancelled meanwhile. */
  step(message: string, extra?: { name?: string; status?: string }): Promise<void>
  /** Throws JobCancelled when the job was cancelled (a cheap check between steps). */
  throwIfCancelled(): Promise<void>
  /**
   * Records the job's result inside the handler's own transaction: a job that already was cancelled throws
   * JobCancelled (rolling the transaction back), and from the commit on a cancel is refused, so a cancel can
   * never leave the job `cancelled` beside work that was saved.
   */
  recordResult(tx: Db, result: unknown): Promise<void>
}

/** Why a job stopped for good: its worker stopped on every attempt, or its handler threw. */
export type GiveUpReason =
  | { kind: 'abandoned'; attempts: number }
  | { kind: 'failed'; error: string }

export interface GiveUpContext<P = unknown> {
  readonly id: string
  readonly payload: P
  readonly ownerId: number | null
  /** What an attempt recorded with recordResult before the job gave up, or null. */
  readonly recorded: unknown
  readonly reason: GiveUpReason
}

/** A final step for the job; for an abandoned job its message also becomes the job's error. */
export interface GiveUpOutcome {
  message: string
  name?: string
  status?: string
}

/**
 * Gives whatever the job was working on its final failed state. Runs in the transaction that marks the job failed
 * (`tx`), only when this worker holds the job; throwing rolls the hook back and the job is failed without it.
 */
export type GiveUpHandler<P = any> = (tx: Db, job: GiveUpContext<P>) => Promise<GiveUpOutcome | void>

export type JobHandler<P = any> = ((ctx: JobContext<P>) => Promise<unknown>) & {
  /** Set with defineJob: what to do when the job gives up. */
  readonly onGiveUp?: GiveUpHandler<P>
}

/** A handler with its give-up hook, so a plugin's `jobs` record carries both. */
export const defineJob = <P>(run: (ctx: JobContext<P>) => Promise<unknown>, opts: { onGiveUp?: GiveUpHandler<P> }): JobHandler<P> =>
  Object.assign((ctx: JobContext<P>) => run(ctx), { onGiveUp: opts.onGiveUp })

/** Thrown inside a handler to stop a cancelled job; its transaction rolls back, nothing is half made. */
export class JobCancelled extends Error {
  constructor() {
    super('job cancelled')
  }
}

export interface EnqueueOptions {
  service: string
  ownerId?: number | null
  title?: string
  maxAttempts?: number
}

export interface Jobs {
  /** `opts.onGiveUp` wins over one the handler carries (defineJob). */
  register<P>(kind: string, handler: JobHandler<P>, opts?: { onGiveUp?: GiveUpHandler<P> }): void
  /**
   * Inserts the job. With WORKERS=0 it runs it before returning, and the record returned is final. On a
   * transaction-bound queue (`bind`, or a Core from `core.transaction`) the job is inserted in that transaction,
   * so it exists only once it commits; the inline run (WORKERS=0) waits for the commit, and the record returned
   * is the inserted one.
   */
  enqueue(kind: string, payload: unknown, opts: EnqueueOptions): Promise<JobRecord>
  get(id: string): Promise<JobRecord | null>
  /** The owner's newest jobs of a service, of one kind when `kind` is given. */
  listForOwner(service: string, ownerId: number, limit?: number, kind?: string): Promise<JobRecord[]>
  /** Cancels a pending or running job: `cancelled`, `not_running` (finished, or its result already recorded) or `not_found`. */
  cancel(id: string): Promise<'cancelled' | 'not_running' | 'not_found'>
  /** Claims and runs one job; false when none was claimable. Workers loop on it; tests call it directly. */
  runOnce(workerId?: string): Promise<boolean>
  /** Registers this process in core.job_workers (its heartbeat) and starts the worker loops. */
  start(): void
  /**
   * Stops claiming, waits up to graceMs for running jobs, then hands the rest back to the queue and removes this
   * process's heartbeat row.
   */
  stop(graceMs?: number): Promise<void>
  readonly inline: boolean
  /**
   * The same queue with `enqueue`, `get`, `listForOwner` and `cancel` running on a transaction handle; what must
   * wait for the commit (the inline run, waking idle workers) is handed to `afterCommit`.
   */
  bind(tx: Db, afterCommit: (fn: () => Promise<void> | void) => void): Jobs
}

export interface JobsOptions {
  workers: number
  leaseMs?: number
  pollMs?: number
  /** How often a started queue writes its heartbeat row (JOB_HEARTBEAT_MS). */
  heartbeatMs?: number
}

export const DEFAULT_LEASE_MS = 60_000
export const DEFAULT_POLL_MS = 1_000
export const DEFAULT_HEARTBEAT_MS = 5_000
/** A process whose heartbeat is older than this many of its intervals is taken for dead; its running jobs are reclaimed. */
export const STALE_HEARTBEATS = 3
/** The longest error text kept on a job row. */
export const JOB_ERROR_MAX = 2_000

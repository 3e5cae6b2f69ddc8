/**
 * Errors the engine reports to its callers. Faces map `code` to the protocol's error (A2A code,
 * HTTP status); they branch on `code`, never on the class.
 */
export type EngineErrorCode =
  | 'task-not-found'
  | 'task-not-cancelable'
  | 'unsupported-operation'
  | 'invalid-params'
  | 'unknown-skill'
  | 'shutting-down'
  /** The caller already has as many unfinished tasks as it may. */
  | 'too-many-tasks'
  /** The caller already has as many task streams open as it may (MAX_STREAMS). */
  | 'too-many-streams'
  /** The caller may not use what it asked for (a skill it has no access to). */
  | 'forbidden'
  /**
   * A conditional command named a generation the task has moved past (A2A 1.1's
   * TaskGenerationMismatchError): nothing was written; `details` holds both generations.
   */
  | 'task-generation-mismatch';

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    /** What a face may show beside the message (a mismatch's generations), as strings. */
    readonly details?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

export const isEngineError = (e: unknown): e is EngineError =>
  typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'EngineError';

/**
 * A job's failure that its skill (or the skill API) raises on purpose: its message becomes the
 * task's failure message, shown to the task's owner, so it must say what went wrong in the caller's
 * terms. Any other error a job throws is a bug or a runtime failure: the owner is told only that the
 * job failed, and the cause goes to the log (a JavaScript message is never shown to a caller).
 *
 * @example throw new JobError(`the input file has no column "${name}"`);
 */
export class JobError extends Error {
  override readonly name = 'JobError';
  constructor(
    message: string,
    /** What kind of failure, for code that handles some (e.g. `artifact-too-large`). */
    readonly code?: string,
    /**
     * The failure may pass (an upstream timeout, a 503): under its skill's `retry` policy the task
     * is queued again after a backoff instead of failing.
     *
     * @example throw new JobError('the registry answered 503', 'upstream', { transient: true });
     */
    readonly options: { transient?: boolean } = {},
  ) {
    super(message);
  }
}

export const isJobError = (e: unknown): e is JobError =>
  typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'JobError';

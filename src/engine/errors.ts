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
  /** The caller may not use what it asked for (a skill it has no access to). */
  | 'forbidden';

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const isEngineError = (e: unknown): e is EngineError =>
  typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'EngineError';

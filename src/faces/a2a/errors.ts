import {
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { isEngineError } from '../../engine/errors.js';

/** Maps an engine error to the SDK's protocol error (which each transport maps to its code and status). */
export function toProtocolError(err: unknown): unknown {
  if (!isEngineError(err)) return err;
  switch (err.code) {
    case 'task-not-found':
      return new TaskNotFoundError(err.message);
    case 'task-not-cancelable':
      return new TaskNotCancelableError(err.message);
    case 'unsupported-operation':
    case 'shutting-down':
      return new UnsupportedOperationError(err.message);
    case 'invalid-params':
    case 'unknown-skill':
      return new RequestMalformedError(err.message);
  }
}

/**
 * JSON-RPC codes of our own (the spec leaves authentication errors to "custom" codes); each comes
 * with its HTTP status: 401 (and `WWW-Authenticate`) for Unauthenticated, 429 (and `Retry-After`)
 * for RateLimited.
 */
export const TASKHANDLE_ERROR_CODE = {
  UNAUTHENTICATED: -32050,
  RATE_LIMITED: -32051,
} as const;

import {
  A2AError,
  JsonRpcUnsupportedOperationError,
  RequestMalformedError,
  RestUnsupportedOperationError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { isEngineError } from '../../engine/errors.js';
import type { Refusal } from '../http/admission.js';
import { GRPC_STATUS_CODE, GRPC_STATUS_OF_HTTP, GrpcStatusError } from './grpc-status.js';

/** The transport a call came over: errors of our own codes are built for it. */
export type Transport = 'jsonrpc' | 'rest' | 'grpc';

/**
 * Maps an engine error to the SDK's protocol error (which each transport maps to its code and
 * status). The SDK's own errors pass as they are; anything else is an internal failure: handed to
 * `internal` (to log) and answered as InternalError without its message, which may name the
 * database's host or a file path.
 */
export function toProtocolError(
  err: unknown,
  transport: Transport = 'jsonrpc',
  internal: (cause: unknown) => void = () => {},
): unknown {
  if (err instanceof A2AError) return err;
  if (!isEngineError(err)) {
    internal(err);
    return new Error(INTERNAL_MESSAGE);
  }
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
    case 'too-many-tasks':
      return ownError(transport, err.message, 429, TASKHANDLE_ERROR_CODE.TOO_MANY_TASKS);
    case 'too-many-streams':
      return ownError(transport, err.message, 429, TASKHANDLE_ERROR_CODE.TOO_MANY_STREAMS);
    case 'forbidden':
      return ownError(transport, err.message, 403, TASKHANDLE_ERROR_CODE.FORBIDDEN);
    case 'task-generation-mismatch':
      return generationMismatchError(transport, err.message, err.details);
  }
}

/**
 * TaskGenerationMismatchError of the A2A 1.1 draft (section 5.4): JSON-RPC -32010, HTTP 409 (its
 * google.rpc.Status `ABORTED`, set by the REST face), gRPC ABORTED, with the draft's ErrorInfo
 * (reason TASK_GENERATION_MISMATCH, the generations in its metadata). The SDK (v1.0) has no class
 * for it: it rides on UnsupportedOperationError with its own reason and code.
 */
function generationMismatchError(
  transport: Transport,
  message: string,
  metadata: Readonly<Record<string, string>> | undefined,
): Error {
  if (transport === 'grpc') return new GrpcStatusError(GRPC_STATUS_CODE.ABORTED, message);
  const options = { message, metadata: metadata && { ...metadata } };
  const error =
    transport === 'rest'
      ? new RestUnsupportedOperationError({ ...options, statusCode: 409 })
      : new JsonRpcUnsupportedOperationError({ ...options, envelopeCode: TASK_GENERATION_MISMATCH_CODE });
  // `reason` is read-only in the SDK's types, a plain field at run time (toErrorInfo reads it).
  Object.defineProperty(error, 'reason', { value: 'TASK_GENERATION_MISMATCH' });
  return error;
}

/** The JSON-RPC code of TaskGenerationMismatchError (A2A 1.1 draft, section 5.4). */
export const TASK_GENERATION_MISMATCH_CODE = -32010;

/** What a caller is told of an internal failure. */
export const INTERNAL_MESSAGE = 'Internal error; the server logged its cause';

/** An error the spec has no code for: our JSON-RPC code, our HTTP status for REST, its gRPC status. */
function ownError(transport: Transport, message: string, statusCode: number, envelopeCode: number): Error {
  if (transport === 'grpc')
    return new GrpcStatusError(GRPC_STATUS_OF_HTTP[statusCode] ?? GRPC_STATUS_CODE.UNKNOWN, message);
  return transport === 'rest'
    ? new RestUnsupportedOperationError({ message, statusCode })
    : new JsonRpcUnsupportedOperationError({ message, envelopeCode });
}

/**
 * JSON-RPC codes of our own (the spec leaves authentication errors to "custom" codes); each comes
 * with its HTTP status: 401 (and `WWW-Authenticate`) for Unauthenticated, 429 (and `Retry-After`)
 * for RateLimited.
 */
export const TASKHANDLE_ERROR_CODE = {
  UNAUTHENTICATED: -32050,
  RATE_LIMITED: -32051,
  /** HTTP 403: a skill the caller may not use; a request to an anonymous server naming another host. */
  FORBIDDEN: -32052,
  /** HTTP 429: the caller has MAX_ACTIVE_TASKS unfinished tasks. */
  TOO_MANY_TASKS: -32053,
  /** HTTP 429: the caller has MAX_STREAMS task streams open on this instance. */
  TOO_MANY_STREAMS: -32054,
} as const;

/** How A2A words a request turned away before the protocol: the JSON-RPC code and google.rpc status. */
export const REFUSAL_CODES: Record<Refusal['kind'], { code: number; restStatus: string }> = {
  unauthenticated: { code: TASKHANDLE_ERROR_CODE.UNAUTHENTICATED, restStatus: 'UNAUTHENTICATED' },
  'rate-limited': { code: TASKHANDLE_ERROR_CODE.RATE_LIMITED, restStatus: 'RESOURCE_EXHAUSTED' },
  'foreign-host': { code: TASKHANDLE_ERROR_CODE.FORBIDDEN, restStatus: 'PERMISSION_DENIED' },
};

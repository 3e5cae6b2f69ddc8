import { A2AError } from '@a2a-js/sdk/errors';
import { GRPC_STATUS_CODE } from '@a2a-js/sdk/errors/grpc';
import type { Refusal } from '../http/admission.js';

export { GRPC_STATUS_CODE };

/**
 * An error the A2A spec has no type for (authentication, rate and task limits, a skill the caller may
 * not use, an internal failure), answered with a gRPC status code and our message. The SDK's gRPC
 * service answers an error of transport "grpc" with its `status`; A2A's own errors keep theirs, with
 * the `google.rpc.ErrorInfo` detail the spec asks for (domain a2a-protocol.org), which these lack:
 * their reasons are not A2A's to name.
 */
export class GrpcStatusError extends A2AError {
  readonly transport = 'grpc';
  readonly status: number;

  constructor(status: number, message: string) {
    super({ message });
    this.status = status;
  }
}

/** The gRPC status of an error the HTTP faces answer with this HTTP status (403, 429). */
export const GRPC_STATUS_OF_HTTP: Record<number, number> = {
  401: GRPC_STATUS_CODE.UNAUTHENTICATED,
  403: GRPC_STATUS_CODE.PERMISSION_DENIED,
  429: GRPC_STATUS_CODE.RESOURCE_EXHAUSTED,
};

/** A caller turned away before the protocol (no valid credentials, over its rate), as a gRPC error. */
export const refusalError = (refusal: Refusal): GrpcStatusError =>
  new GrpcStatusError(GRPC_STATUS_OF_HTTP[refusal.status] ?? GRPC_STATUS_CODE.UNKNOWN, refusal.message);

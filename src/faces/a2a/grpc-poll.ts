import type { IncomingHttpHeaders } from 'node:http';
import type { GetTaskRequest, Task } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { handleUnaryCall } from '@grpc/grpc-js';
import { ownerKey } from '../../auth/principal.js';
import type { Admission, Caller } from '../http/admission.js';
import {
  admitCall,
  admitHeaders,
  CURRENT_GENERATION_KEY,
  callerOf,
  callHeaders,
  type GrpcCall,
  type GrpcCaller,
} from './grpc-call.js';
import type { TaskCache } from './task-cache.js';

type GetTask = handleUnaryCall<GetTaskRequest, Task>;

/**
 * Who each call is: the SDK's user builder admits a call ({@link admitCall}), unless the GetTask hot
 * path admitted it already and handed that admission over (one rate-limit token a call). Handed
 * over only when the hot path cannot answer: a WeakMap entry per call costs a poll more than the
 * rest of its admission does (ephemerons are the collector's slow work).
 */
export class Admissions {
  readonly #admit: (req: Caller) => Promise<Admission>;
  readonly #shutdown: AbortSignal;
  readonly #handed = new WeakMap<GrpcCall, { headers: IncomingHttpHeaders; admitted: Promise<Admission> }>();

  constructor(admit: (req: Caller) => Promise<Admission>, shutdown: AbortSignal) {
    this.#admit = admit;
    this.#shutdown = shutdown;
  }

  /** The SDK's user builder. */
  readonly userBuilder = async (call: GrpcCall): Promise<GrpcCaller> => {
    const handed = this.#handed.get(call);
    if (!handed) return admitCall(call, this.#admit, this.#shutdown);
    this.#handed.delete(call);
    return callerOf(call, handed.headers, await handed.admitted, this.#shutdown);
  };

  /** The hot path's admission of a call whose {@link callHeaders} it read. */
  admit(call: GrpcCall, headers: IncomingHttpHeaders): Promise<Admission> {
    return admitHeaders(call, headers, this.#admit);
  }

  /** The call goes the SDK's way, admitted already. */
  handOver(call: GrpcCall, headers: IncomingHttpHeaders, admitted: Promise<Admission>): void {
    this.#handed.set(call, { headers, admitted });
  }
}

/**
 * The hot path of polling agents over gRPC, as servePoll is over JSON-RPC: a plain v1.0 GetTask is
 * answered with the task cache's Task, without the SDK's per-call work (a call state and context,
 * the card read to check the version callHeaders checked, the request's depth walk: a GetTaskRequest
 * is flat). Anything else (a long poll, another version, a malformed request, an unknown task, a
 * refusal) takes the SDK's path, `full`, which words its errors, with the admission made here if any.
 */
export function fastGetTask(full: GetTask, tasks: TaskCache, admissions: Admissions): GetTask {
  return async (call, callback) => {
    const poll = plainGetTask(call.request);
    let headers: IncomingHttpHeaders | undefined;
    try {
      headers = callHeaders(call);
    } catch {
      // another version: refused on the full path, before its admission
    }
    // A long poll waits first: the full path.
    if (!poll || !headers || headers[CURRENT_GENERATION_KEY] !== undefined) return full(call, callback);
    const admitted = admissions.admit(call, headers);
    const auth = await admitted.catch(() => undefined);
    let task: Task | undefined;
    try {
      if (auth?.ok) task = await tasks.task(ownerKey(auth.principal), poll.id, poll.historyLength);
    } catch {
      // the full path answers it (an unknown task, say)
    }
    if (task) return callback(null, task);
    admissions.handOver(call, headers, admitted);
    return full(call, callback);
  };
}

/** A GetTask the fast path serves: a task id, no tenant, a history length absent or not negative. */
function plainGetTask(request: GetTaskRequest): { id: string; historyLength?: number } | undefined {
  const { id, tenant, historyLength } = request;
  if (!id.trim() || tenant) return undefined;
  if (historyLength !== undefined && historyLength < 0) return undefined;
  return { id, historyLength };
}

type Bytes = ReturnType<typeof A2AService.getTask.responseSerialize>;
const encoded = new WeakMap<Task, Bytes>();

/**
 * A Task's protobuf encoding, made once for each Task the task cache shares (the same frozen object
 * for every poll of one version of a task, which cannot change): a poll of an unchanged task encodes
 * nothing. Any other Task (a CancelTask's answer, say) is encoded per call.
 */
function taskBytes(task: Task): Bytes {
  const kept = encoded.get(task);
  if (kept) return kept;
  const bytes = A2AService.getTask.responseSerialize(task);
  if (Object.isFrozen(task)) encoded.set(task, bytes);
  return bytes;
}

/** The SDK's service definition, with GetTask's answers encoded by {@link taskBytes}. */
export const A2A_SERVICE: typeof A2AService = {
  ...A2AService,
  getTask: { ...A2AService.getTask, responseSerialize: taskBytes },
};

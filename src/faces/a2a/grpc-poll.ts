import type { GetTaskRequest, Task } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import type { handleUnaryCall, ServerUnaryCall } from '@grpc/grpc-js';
import type { GrpcCaller } from './grpc-call.js';
import type { TaskCache } from './task-cache.js';

type GetTask = handleUnaryCall<GetTaskRequest, Task>;

/**
 * The hot path of polling agents over gRPC, as servePoll is over JSON-RPC: a plain v1.0 GetTask is
 * answered with the task cache's Task, without the SDK's per-call work (a call context, the card read
 * to check the version admitCall checked already, the request's depth walk: a GetTaskRequest is flat).
 * Anything else (a long poll, a malformed request, an unknown task, a refusal) takes the SDK's
 * path, `full`, which words its errors; the admission is the one `admitted` made (one rate-limit
 * token a call), which that path's user builder gets again for the same call.
 */
export function fastGetTask(
  full: GetTask,
  tasks: TaskCache,
  admitted: (call: ServerUnaryCall<unknown, unknown>) => Promise<GrpcCaller>,
): GetTask {
  return async (call, callback) => {
    const poll = plainGetTask(call.request);
    let task: Task | undefined;
    if (poll) {
      try {
        const { state } = await admitted(call);
        // A long poll waits first: the full path.
        if (state.generation === undefined) task = await tasks.task(state.owner, poll.id, poll.historyLength);
      } catch {
        // the full path answers it
      }
    }
    if (task) callback(null, task);
    else full(call, callback);
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

import type { Task as SdkTask, StreamResponse } from '@a2a-js/sdk';
import type { AnswerReceipt } from '../../engine/grant.js';
import { toSdkMessage, toSdkState } from './wire.js';

/**
 * An approver's answer, as A2A shows it: a Task holding only the receipt (id, the state the answer
 * left the task in, the question answered as its status message). `contextId` is the empty string
 * the schema allows for "none" (v1.0 JSON omits it, v0.3 sends ""): the owner's context is not the
 * approver's. No history, no artifacts, and no metadata: the handle extension's createdAt, ttl,
 * expiry and progress describe the owner's work and how the owner may poll it, and an approver
 * cannot poll it at all (to them the task no longer exists once it stops waiting).
 */
export function toSdkReceipt(receipt: AnswerReceipt): SdkTask {
  return {
    id: receipt.taskId,
    contextId: '',
    status: {
      state: toSdkState(receipt.state),
      message: receipt.prompt && toSdkMessage(receipt.prompt),
      timestamp: new Date(receipt.at).toISOString(),
    },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}

/** The one event of an approver's stream: the receipt, after which the stream ends. */
export const receiptEvent = (receipt: AnswerReceipt): StreamResponse => ({
  payload: { $case: 'task', value: toSdkReceipt(receipt) },
});

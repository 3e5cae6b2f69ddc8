import { randomUUID } from 'node:crypto';
import { ownerKey, type Principal, policyOf } from '../auth/principal.js';
import type { Engine } from '../engine/engine.js';
import type { AnswerReceipt } from '../engine/grant.js';
import type { Part, TaskRecord } from '../engine/task.js';
import type { Audit } from './audit.js';

/** How an answer went: the owner gets its task's record, an approver only the receipt. */
export type Answered = { grant: 'owner'; record: TaskRecord } | { grant: 'approver'; receipt: AnswerReceipt };

/**
 * Gives a waiting task the caller's answer (`parts`), for the faces that take answers outside A2A
 * (/v1/jobs `:input`, the inbox), and audits it with its grant. Engine errors pass through.
 */
export async function answerTask(
  engine: Engine,
  audit: Audit,
  principal: Principal,
  taskId: string,
  parts: Part[],
  /** Only while the task is at this generation (an If-Match): else `task-generation-mismatch`. */
  ifGeneration?: number,
): Promise<Answered> {
  const result = await engine.answer({
    owner: ownerKey(principal),
    taskId,
    message: { messageId: randomUUID(), role: 'ROLE_USER', parts },
    policy: policyOf(principal),
    ifGeneration,
  });
  if (result.grant === 'approver') {
    const { receipt } = result;
    audit('input', principal, taskId, { grant: 'approver', approver: receipt.answeredBy });
    return result;
  }
  audit('input', principal, taskId, { grant: 'owner' });
  return { grant: 'owner', record: result.view.record };
}

import { answerTook, traceAnswer } from '../telemetry/task-spans.js';
import { type EngineContext, notFound, refuseManyParts } from './context.js';
import { EngineError } from './errors.js';
import { generationMismatch } from './generation.js';
import { type AnswerReceipt, type CallerPolicy, type Grant, grantOf, receiptOf } from './grant.js';
import { refuseOverfullHistory } from './limits.js';
import type { NewPushConfig } from './push-configs.js';
import { get } from './reads.js';
import {
  ANSWERED_BY,
  isInterrupted,
  isTerminal,
  type Message,
  type TaskRecord,
  type TaskView,
} from './task.js';
import { foldView } from './view.js';

/** A caller's message to an existing task: an answer to a task that waits, or a note to an active one. */
export interface Answer {
  owner: string;
  taskId: string;
  /** The caller's message; its messageId makes a retry change nothing. */
  message: Message;
  /** A webhook registered with the task first (so that it hears of what the answer sets off). */
  push?: NewPushConfig;
  policy?: CallerPolicy;
  /**
   * A2A 1.1's `ifGenerationMatch`: the message is delivered only while the task's generation (its
   * log's `lastSeq`) is this one, decided in the write that delivers it; else `task-generation-mismatch`
   * and nothing is written. A retry of a message already delivered returns what it did, as always.
   */
  ifGeneration?: number;
}

/**
 * How an answer went: the owner gets its task back; an approver, who answered a task that is not
 * theirs, only the receipt of the answer (see grant.ts).
 */
export type Answered = { grant: 'owner'; view: TaskView } | { grant: 'approver'; receipt: AnswerReceipt };

const RETRIES = 3;

/**
 * Delivers a message to a task. An answer to an interrupted task queues it to run again; a message
 * to an active task is recorded in its history and never starts a second execution.
 */
export function answer(core: EngineContext, a: Answer): Promise<Answered> {
  return traceAnswer(a.taskId, () => deliver(core, a));
}

async function deliver(core: EngineContext, a: Answer): Promise<Answered> {
  const { journal } = core;
  const { owner, taskId, policy = {} } = a;
  refuseManyParts(a.message, core.limits);
  // Registered first, so that it hears of what the message sets off (only the owner may register).
  if (a.push) await core.push.put(owner, taskId, a.push);
  for (let attempt = 0; attempt < RETRIES; attempt++) {
    // Who may answer is decided from the record alone, before the log is read: a refusal costs
    // what a missing task does.
    const record = await journal.store.getTask(taskId, journal.now());
    const grant = record && grantOf(record, { owner, approverName: policy.approverName });
    if (!record || !grant) throw notFound(taskId);
    // Checked again by the write itself; a look first spares a stale answer the history's read. A
    // retry of a delivered message is let through to the write, which returns what it did.
    const { ifGeneration } = a;
    if (ifGeneration !== undefined && record.lastSeq !== ifGeneration) {
      const delivered = await journal.store.findByMessageId(owner, a.message.messageId);
      // An approver is not told the owner's task's generation (nor anything else of its log).
      if (!delivered) throw generationMismatch(taskId, ifGeneration, record.lastSeq, grant === 'owner');
    }
    // Who answered is the engine's to say (an approver's name, or the owner's own), never the caller's:
    // an owner must not be able to write "Approved by" someone else.
    const message = answeredBy(a.message, policy.approverName);
    if (isTerminal(record.state)) {
      throw new EngineError(
        'unsupported-operation',
        `Task ${taskId} is ${record.state} and accepts no more messages`,
      );
    }
    // To an approver the same refusal whatever the value: a match must not confirm the owner's context.
    if (message.contextId && grant === 'approver') {
      throw new EngineError(
        'invalid-params',
        "message.contextId must be absent: an approver's answer names the task only (the context is its owner's)",
      );
    }
    if (message.contextId && message.contextId !== record.contextId) {
      throw new EngineError('invalid-params', `message.contextId does not match task ${taskId}'s context`);
    }
    await refuseFull(core, record, message, grant);
    // An approver's grant is guarded too: the write applies only while the task waits (`from`) for
    // them (`approver`), so an answer racing the owner's cannot land on a later wait that names
    // someone else.
    const requeue = isInterrupted(record.state);
    const result = await journal.commit(
      {
        taskId,
        from: [record.state],
        to: requeue ? 'submitted' : undefined,
        events: [{ kind: 'message', message: { ...message, taskId, contextId: record.contextId } }],
        at: journal.now(),
        approver: grant === 'approver' ? policy.approverName : undefined,
        generation: ifGeneration,
      },
      { owner, messageId: message.messageId },
    );
    if (!result) continue; // the task moved on meanwhile: look again
    answerTook(record, requeue && !result.duplicate, grant);
    if (requeue && !result.duplicate) {
      // The wait began with the write that asked (nothing else moves a waiting task's updatedAt).
      journal.observer.answered(record.skill, journal.now() - record.updatedAt);
      journal.queued();
    }
    // An approver never waits on the task, nor reads it: nothing after their answer is theirs.
    if (grant === 'approver' && policy.approverName !== undefined) {
      return { grant: 'approver', receipt: receiptOf(record, result.record, policy.approverName) };
    }
    return { grant: 'owner', view: await get(core, record.owner, taskId) };
  }
  throw new EngineError('unsupported-operation', `Task ${taskId} is changing state; retry the message`);
}

/**
 * Refuses a message the task's history has no room for. The counts are the owner's: an approver
 * is told that the answer does not fit, not the numbers.
 */
async function refuseFull(
  core: EngineContext,
  record: TaskRecord,
  message: Message,
  grant: Grant,
): Promise<void> {
  const { store, now } = core.journal;
  const found = await store.getTaskWithLog(record.id, now(), record.owner);
  if (!found) throw notFound(record.id);
  const { history } = foldView(found.record, found.log, undefined, core.artifactUrl);
  try {
    if (history.length >= core.limits.maxHistoryMessages) {
      throw new EngineError(
        'unsupported-operation',
        `Task ${record.id} holds ${history.length} messages, the most it accepts; start a new task`,
      );
    }
    refuseOverfullHistory(record.id, history, message, core.limits.maxHistoryBytes);
  } catch (err) {
    if (grant === 'owner') throw err;
    throw new EngineError(
      'unsupported-operation',
      `Task ${record.id} cannot take this answer (it is full); send a shorter one, or ask its requester`,
    );
  }
}

/** The message with `taskhandle.answeredBy` set to `name` (or removed), whatever the sender put there. */
function answeredBy(message: Message, name: string | undefined): Message {
  const { [ANSWERED_BY]: _claimed, ...metadata } = message.metadata ?? {};
  if (name !== undefined) return { ...message, metadata: { ...metadata, [ANSWERED_BY]: name } };
  if (!message.metadata) return message;
  return { ...message, metadata: Object.keys(metadata).length > 0 ? metadata : undefined };
}

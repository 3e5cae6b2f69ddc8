import { partBytes } from './artifacts.js';
import { EngineError } from './errors.js';
import type { Message, TaskView } from './task.js';

/** Bounds on what callers' messages and skills' artifacts may make a task hold. */
export interface EngineLimits {
  /** Parts in one message. */
  maxMessageParts: number;
  /** Bytes (as JSON) of a task's metadata, kept in its record; 0 for no bound. */
  maxMetadataBytes: number;
  /** Messages in one task's history (the caller's and the agent's). */
  maxHistoryMessages: number;
  /** Bytes (as JSON) of the messages in one task's history: a task is read whole, so it stays small. */
  maxHistoryBytes: number;
  /** Bytes of one artifact (all its chunks, appended over any runs of the task). */
  maxArtifactBytes: number;
  /** An artifact past this many bytes is stored out of the log and shown by reference. */
  inlineArtifactBytes: number;
  /** Artifact bytes one owner may have stored over all its tasks; 0 for no quota. */
  maxStoredBytes: number;
  /** Webhooks one task may have: each of its events is delivered to every one of them. */
  maxPushConfigs: number;
  /** Webhooks on one owner's unfinished tasks, all together; 0 for no bound. */
  maxActivePushConfigs: number;
  /** Task streams one holder may have open at once on this instance; 0 for no bound. */
  maxStreams: number;
}

export const DEFAULT_LIMITS: EngineLimits = {
  maxMessageParts: 100,
  maxMetadataBytes: 0,
  maxHistoryMessages: 1000,
  maxHistoryBytes: 4 * 2 ** 20,
  maxArtifactBytes: 100 * 2 ** 20,
  inlineArtifactBytes: 64 * 2 ** 10,
  maxStoredBytes: 0,
  maxPushConfigs: 10,
  maxActivePushConfigs: 0,
  maxStreams: 0,
};

/** A ListTasks page that carries histories or artifacts ends early past this many bytes of them. */
export const LIST_PAGE_BYTES = 8 * 2 ** 20;

/** About what a view adds to an answer: its messages as JSON, its inline artifacts' bytes. */
export function viewBytes(view: TaskView): number {
  let bytes = 0;
  for (const m of view.history) bytes += Buffer.byteLength(JSON.stringify(m));
  for (const a of view.artifacts) for (const p of a.parts) bytes += partBytes(p);
  return bytes;
}

/** Refuses a message that would take the task's history past `max` bytes (as JSON). */
export function refuseOverfullHistory(
  taskId: string,
  history: readonly Message[],
  message: Message,
  max: number,
): void {
  const bytes = [...history, message].reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
  if (bytes <= max) return;
  throw new EngineError(
    'unsupported-operation',
    `Task ${taskId} would hold ${bytes} bytes of messages, more than the ${max} it accepts (MAX_HISTORY_BYTES); send less, or start a new task`,
  );
}

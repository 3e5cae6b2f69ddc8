import { randomUUID } from 'node:crypto';
import { Message as SdkMessageCodec, type Task as SdkTask } from '@a2a-js/sdk';
import type { TaskRecord } from '../../engine/task.js';
import { HANDLE_EXTENSION_URI } from './handle-extension.js';
import type { ProtocolVersion } from './version.js';

/** `metadata[HANDLE_EXTENSION_URI].notice` of the status message only an answer shows (see below). */
export const STILL_WORKING_NOTICE = 'still-working';

/**
 * A blocking send answered before its task settled (BLOCKING_TIMEOUT_MS passed, the caller's gRPC
 * deadline came near, the server is stopping): the answer's status message says so, in words a
 * person or a model reads, so that a client that shows only the status text (a2a-ai-provider's
 * generateText, ADK's non-streaming path) shows that instead of nothing. It is the answer's view
 * only: the task's own status message is not changed (GetTask shows it), and follows the note's
 * text here when the task has one. The note is marked `metadata[HANDLE_EXTENSION_URI].notice`
 * ("still-working", with `waitedMs`); the task's handle metadata (`pollIntervalMs`...) is as ever.
 */
export function withStillWorkingNote(
  task: SdkTask,
  record: TaskRecord,
  waitedMs: number,
  version: ProtocolVersion,
): SdkTask {
  const own = task.status?.message;
  const message = SdkMessageCodec.fromJSON({
    messageId: randomUUID(),
    role: 'ROLE_AGENT',
    taskId: record.id,
    contextId: record.contextId,
    parts: [{ text: stillWorkingText(record, waitedMs, version) }],
    metadata: { [HANDLE_EXTENSION_URI]: { notice: STILL_WORKING_NOTICE, waitedMs } },
  });
  if (own) message.parts.push(...own.parts);
  return { ...task, status: task.status && { ...task.status, message } };
}

/** "Still working after 290 s; ... Poll GetTask 0190... every 2000 ms until it ends, or subscribe ..." */
export function stillWorkingText(record: TaskRecord, waitedMs: number, version: ProtocolVersion): string {
  const { id } = record;
  const [get, subscribe] =
    version === '0.3' ? ['tasks/get', 'tasks/resubscribe'] : ['GetTask', 'SubscribeToTask'];
  const doing = record.state === 'submitted' ? 'queued' : 'working';
  return (
    `Still ${doing} after ${duration(waitedMs)}; this answer stops waiting here, the task goes on. ` +
    `Poll ${get} ${id} every ${record.pollIntervalMs} ms until it ends, or subscribe (${subscribe} ${id}) for its updates.`
  );
}

/** 0.3 s, 4.5 s, 30 s, 290 s. */
function duration(ms: number): string {
  const s = ms / 1000;
  return `${s < 10 ? Math.round(s * 10) / 10 : Math.round(s)} s`;
}

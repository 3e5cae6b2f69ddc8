import { type ArtifactLink, foldArtifacts, shownArtifact } from './artifacts.js';
import type { LoggedEvent } from './events.js';
import type { Message, TaskRecord, TaskView } from './task.js';

/**
 * Folds a task's log into what callers see: artifacts (chunks appended in order, a non-append
 * update replacing the artifact) and history (the caller's messages and the agent's status
 * messages, oldest first, without the current status message, which `status` already carries).
 */
export function foldView(
  record: TaskRecord,
  log: readonly LoggedEvent[],
  historyLength: number | undefined,
  link: ArtifactLink,
): TaskView {
  const artifacts = [...foldArtifacts(log).values()].map((a) =>
    shownArtifact(a, link(record.id, a.artifactId)),
  );
  return { record, artifacts, history: historyOf(record, log, historyLength) };
}

/** The task's messages, the caller's and the agent's, oldest first (its current status message apart). */
export function historyOf(
  record: TaskRecord,
  log: readonly LoggedEvent[],
  historyLength?: number,
): Message[] {
  const history: Message[] = [];
  for (const { event } of log) {
    if (event.kind === 'message') {
      history.push(event.message);
    } else if (event.kind === 'status' && event.message) {
      history.push(event.message);
    }
  }
  const current = record.statusMessage;
  if (current && history.at(-1)?.messageId === current.messageId) history.pop();
  if (historyLength === undefined) return history;
  return historyLength <= 0 ? [] : history.slice(-historyLength);
}

/**
 * The task as it stood right after event `seq` of its log: what a notification about that event
 * shows, even when it is delivered after the task moved on.
 */
export function viewAt(
  record: TaskRecord,
  log: readonly LoggedEvent[],
  seq: number,
  link: ArtifactLink,
): TaskView {
  const upTo = log.filter((entry) => entry.seq <= seq);
  let { state, statusMessage, updatedAt } = record;
  for (const { event, at } of upTo) {
    if (event.kind !== 'status') continue;
    state = event.state;
    statusMessage = event.message;
    updatedAt = at;
  }
  return foldView({ ...record, state, statusMessage, updatedAt, lastSeq: seq }, upTo, undefined, link);
}

import {
  isTerminal,
  type Message,
  type Progress,
  type QueueStanding,
  type TaskRecord,
} from '../engine/task.js';

/**
 * The task handle every face shows (A2A in its extension metadata, /v1/jobs in the job document):
 * when to poll again, how long the task is kept, and its progress. See docs/handle-extension.md.
 */
export interface TaskHandle {
  createdAt: string;
  lastUpdatedAt: string;
  pollIntervalMs: number;
  ttlMs: number;
  expiresAt: string;
  progress?: { percent?: number; message?: string };
  /** While submitted: where the task stands in its owner's queue and what it waits for. */
  queue?: QueueStanding;
  /** Its place in its owner's queue, when the caller gave one. */
  priority?: number;
  /** Failed runs queued again under its skill's retry policy (crash re-runs are not counted). */
  retries?: number;
  /** While it waits to be retried: when the next attempt may start. */
  nextAttemptAt?: string;
}

export function handleOf(r: TaskRecord): TaskHandle {
  return {
    createdAt: new Date(r.createdAt).toISOString(),
    lastUpdatedAt: new Date(r.updatedAt).toISOString(),
    pollIntervalMs: r.pollIntervalMs,
    ttlMs: r.ttlMs,
    expiresAt: new Date(r.expiresAt).toISOString(),
    ...progressOf(r),
    ...(r.queue ? { queue: r.queue } : {}),
    ...(r.priority !== 0 ? { priority: r.priority } : {}),
    ...(r.retries > 0 ? { retries: r.retries } : {}),
    // Set by the retry's write, so later than any change before it; a later requeue moves updatedAt past it.
    ...(r.state === 'submitted' && r.runAfter !== undefined && r.runAfter > r.updatedAt
      ? { nextAttemptAt: new Date(r.runAfter).toISOString() }
      : {}),
  };
}

/**
 * The skill's last report while the task runs, and after a completion (its final words). A task
 * that ended otherwise says what ended it: its last report ("running (pid 4242)") stopped being true
 * when it failed, was canceled or was rejected, maybe by a restart the skill never saw.
 */
function progressOf(r: TaskRecord): { progress?: Progress } {
  if (!isTerminal(r.state) || r.state === 'completed') return r.progress ? { progress: r.progress } : {};
  const why = messageText(r.statusMessage).split('\n')[0];
  const percent = r.progress?.percent;
  return {
    progress: {
      ...(percent === undefined ? {} : { percent }),
      message: why ? `${r.state}: ${why}` : r.state,
    },
  };
}

/** A message's text parts, one per line (a status message, a prompt). */
export const messageText = (m: Message | undefined): string =>
  (m?.parts ?? [])
    .map((p) => p.text ?? '')
    .filter(Boolean)
    .join('\n');

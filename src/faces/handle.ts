import type { Message, TaskRecord } from '../engine/task.js';

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
}

export function handleOf(r: TaskRecord): TaskHandle {
  return {
    createdAt: new Date(r.createdAt).toISOString(),
    lastUpdatedAt: new Date(r.updatedAt).toISOString(),
    pollIntervalMs: r.pollIntervalMs,
    ttlMs: r.ttlMs,
    expiresAt: new Date(r.expiresAt).toISOString(),
    ...(r.progress ? { progress: r.progress } : {}),
  };
}

/** A message's text parts, one per line (a status message, a prompt). */
export const messageText = (m: Message | undefined): string =>
  (m?.parts ?? [])
    .map((p) => p.text ?? '')
    .filter(Boolean)
    .join('\n');

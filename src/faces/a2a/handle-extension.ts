import type { TaskRecord } from '../../engine/task.js';

/**
 * The task-handle extension: every task's `metadata` carries, under this URI, what a caller needs to
 * poll it well and to know how long it is kept. Declared in the agent card; see docs/handle-extension.md.
 */
export const HANDLE_EXTENSION_URI = 'https://taskhandle.dev/extensions/task-handle/v1';

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

export const HANDLE_EXTENSION_CARD_ENTRY = {
  uri: HANDLE_EXTENSION_URI,
  description:
    'Task handles: metadata[uri] on every task holds createdAt, lastUpdatedAt, pollIntervalMs (suggested poll ' +
    'interval, may change while the task runs), ttlMs and expiresAt (retention from creation) and progress ' +
    '(percent, message) where the skill reports it.',
  required: false,
};

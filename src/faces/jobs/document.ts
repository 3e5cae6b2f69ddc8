import type { Response } from 'express';
import type { TaskRecord, TaskState, TaskView } from '../../engine/task.js';
import { handleOf, messageText, type TaskHandle } from '../handle.js';
import { type JobStatus, STATE_NAMES } from '../states.js';

export type { JobStatus };

export const JOBS_PATH = '/v1/jobs';

/** The job document: the handle of a task as /v1/jobs shows it. */
export interface JobDocument extends TaskHandle {
  resultType: 'task';
  taskId: string;
  status: JobStatus;
  /** The A2A state behind `status` (e.g. `rejected` behind `failed`). */
  state: TaskState;
  statusMessage?: string;
  /** Why a failed job failed: `rejected` (refused by the agent or an approver) or `failed`. */
  reason?: 'failed' | 'rejected';
  /** Once completed: where the result is. */
  result?: string;
}

/**
 * The path /v1/jobs is reached at before JOBS_PATH: empty, or where an app of the user's mounts the
 * faces (express's `app.use('/agent', server.handler)` makes it `/agent`), read from the router's
 * own mount point, so that every link a job document or header gives leads back to it.
 */
export function mountOf(res: Response): string {
  const base = res.req.baseUrl;
  return base.endsWith(JOBS_PATH) ? base.slice(0, -JOBS_PATH.length) : '';
}

export function jobDocument(r: TaskRecord, mount = ''): JobDocument {
  const status = STATE_NAMES[r.state].jobs;
  const text = messageText(r.statusMessage);
  return {
    resultType: 'task',
    taskId: r.id,
    status,
    state: r.state,
    ...handleOf(r),
    ...(text ? { statusMessage: text } : {}),
    ...(status === 'failed' ? { reason: r.state === 'rejected' ? 'rejected' : 'failed' } : {}),
    ...(status === 'completed' ? { result: resultPath(r.id, mount) } : {}),
  };
}

export const jobPath = (id: string, mount = ''): string => `${mount}${JOBS_PATH}/${encodeURIComponent(id)}`;
export const resultPath = (id: string, mount = ''): string => `${jobPath(id, mount)}/result`;
/** Where a task's artifact downloads: every face links large artifacts here. */
export const artifactPath = (id: string, artifactId: string): string =>
  `${jobPath(id)}/artifacts/${encodeURIComponent(artifactId)}`;

/** Retry-After in whole seconds (at least 1), from the task's suggested poll interval. */
export const retryAfterS = (r: TaskRecord): string => String(Math.max(1, Math.ceil(r.pollIntervalMs / 1000)));

/** The result body: the artifacts of a completed job. */
export function resultBody(view: TaskView): {
  artifacts: { artifactId: string; name?: string; parts: unknown[] }[];
} {
  return {
    artifacts: view.artifacts.map((a) => ({
      artifactId: a.artifactId,
      ...(a.name ? { name: a.name } : {}),
      parts: a.parts,
    })),
  };
}

import { TaskState as SdkState } from '@a2a-js/sdk';
import type { TaskState } from '../engine/task.js';

/**
 * How each face names the engine's task states: one table, so that a state added to the engine
 * (or a face added to the server) is a compile error until every face says what it shows.
 * `a2a`: the A2A v1.0 enum (the SDK writes the v0.3 names from it); `jobs`: the five statuses of
 * /v1/jobs (several states share one). docs/http-jobs.md shows the same table.
 */
export const STATE_NAMES = {
  submitted: { a2a: SdkState.TASK_STATE_SUBMITTED, jobs: 'working' },
  working: { a2a: SdkState.TASK_STATE_WORKING, jobs: 'working' },
  'input-required': { a2a: SdkState.TASK_STATE_INPUT_REQUIRED, jobs: 'input_required' },
  'auth-required': { a2a: SdkState.TASK_STATE_AUTH_REQUIRED, jobs: 'input_required' },
  completed: { a2a: SdkState.TASK_STATE_COMPLETED, jobs: 'completed' },
  failed: { a2a: SdkState.TASK_STATE_FAILED, jobs: 'failed' },
  canceled: { a2a: SdkState.TASK_STATE_CANCELED, jobs: 'cancelled' },
  rejected: { a2a: SdkState.TASK_STATE_REJECTED, jobs: 'failed' },
} as const satisfies Record<TaskState, { a2a: SdkState; jobs: string }>;

/** A /v1/jobs status. */
export type JobStatus = (typeof STATE_NAMES)[TaskState]['jobs'];

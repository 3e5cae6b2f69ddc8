import { TaskState as SdkState } from '@a2a-js/sdk';
import type { TaskState } from '../engine/task.js';

/**
 * How each face names the engine's task states: one table, so that a state added to the engine
 * (or a face added to the server) is a compile error until every face says what it shows.
 * `a2a`: the A2A v1.0 enum (the SDK writes the v0.3 names from it); `jobs`: the five statuses of
 * /v1/jobs (several states share one); `mcp`: the five task statuses of MCP (2025-11-25 tasks and the
 * Tasks extension, SEP-2663), where `rejected` shows as `completed` with a tool result that is an
 * error (the tool answered no; MCP keeps `failed` for JSON-RPC errors). docs/http-jobs.md and
 * docs/mcp.md show the same table.
 */
export const STATE_NAMES = {
  submitted: { a2a: SdkState.TASK_STATE_SUBMITTED, jobs: 'working', mcp: 'working' },
  working: { a2a: SdkState.TASK_STATE_WORKING, jobs: 'working', mcp: 'working' },
  'input-required': {
    a2a: SdkState.TASK_STATE_INPUT_REQUIRED,
    jobs: 'input_required',
    mcp: 'input_required',
  },
  'auth-required': { a2a: SdkState.TASK_STATE_AUTH_REQUIRED, jobs: 'input_required', mcp: 'input_required' },
  completed: { a2a: SdkState.TASK_STATE_COMPLETED, jobs: 'completed', mcp: 'completed' },
  failed: { a2a: SdkState.TASK_STATE_FAILED, jobs: 'failed', mcp: 'failed' },
  canceled: { a2a: SdkState.TASK_STATE_CANCELED, jobs: 'cancelled', mcp: 'cancelled' },
  rejected: { a2a: SdkState.TASK_STATE_REJECTED, jobs: 'failed', mcp: 'completed' },
} as const satisfies Record<TaskState, { a2a: SdkState; jobs: string; mcp: string }>;

/** A /v1/jobs status. */
export type JobStatus = (typeof STATE_NAMES)[TaskState]['jobs'];

/** An MCP task status. */
export type McpStatus = (typeof STATE_NAMES)[TaskState]['mcp'];

import type { TaskRecord } from '../../engine/task.js';
import { handleOf, messageText } from '../handle.js';
import { type McpStatus, STATE_NAMES } from '../states.js';
import { pendingInput } from './input-request.js';

/** Where this face puts a task's progress (percent, message) in `_meta`: MCP's Task has no field for it. */
export const PROGRESS_META = 'taskhandle/progress';
/** Where it puts a queued task's standing (position, ahead, reason: see docs/scheduling.md). */
export const QUEUE_META = 'taskhandle/queue';
/**
 * Where it puts a waiting task's question (`key`, `requestedSchema`): what a client answers with
 * `tasks/update` (`inputResponses: {[key]: {action: "accept", content}}`) without being sent an
 * elicitation, whether or not it declared one. The prompt is the task's `statusMessage`.
 */
export const INPUT_META = 'taskhandle/input';
/**
 * Where it puts the task's generation (the generations extension, docs/generations.md): the number
 * `tasks/get` long-polls past (`_meta["taskhandle/currentGeneration"]`) and `tasks/cancel` and
 * `tasks/update` apply at (`_meta["taskhandle/ifGenerationMatch"]`).
 */
export const GENERATION_META = 'taskhandle/generation';

/** What every MCP revision's task shows: id, status (STATE_NAMES' `mcp` column), message, times. */
function common(r: TaskRecord) {
  const handle = handleOf(r);
  const pending = pendingInput(r);
  const statusMessage =
    pending?.request.params.message ?? (messageText(r.statusMessage) || r.progress?.message);
  return {
    taskId: r.id,
    status: STATE_NAMES[r.state].mcp as McpStatus,
    ...(statusMessage ? { statusMessage } : {}),
    createdAt: handle.createdAt,
    lastUpdatedAt: handle.lastUpdatedAt,
    _meta: {
      [GENERATION_META]: r.lastSeq,
      ...(r.progress || r.queue || pending
        ? {
            ...(r.progress ? { [PROGRESS_META]: r.progress } : {}),
            ...(r.queue ? { [QUEUE_META]: r.queue } : {}),
            ...(pending
              ? {
                  [INPUT_META]: { key: pending.key, requestedSchema: pending.request.params.requestedSchema },
                }
              : {}),
          }
        : {}),
    },
  };
}

/** The Task of protocol 2025-11-25 (`ttl` and `pollInterval` in ms). */
export const legacyTask = (r: TaskRecord) => ({ ...common(r), ttl: r.ttlMs, pollInterval: r.pollIntervalMs });

/** The Task of the Tasks extension (SEP-2663: `ttlMs`, `pollIntervalMs`). */
export const extensionTask = (r: TaskRecord) => ({
  ...common(r),
  ttlMs: r.ttlMs,
  pollIntervalMs: r.pollIntervalMs,
});

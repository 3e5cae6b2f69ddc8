import type {
  ActivityTask,
  AttemptOutcome,
  DeliveryAttempt,
  OperatorFilter,
  OperatorPage,
  OutboxEntry,
} from '../engine/operator-port.js';
import type { TaskState } from '../engine/task.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { type TaskRow, toRecord } from './rows.js';

/** The operator console's rows in both SQL adapters, and their conversions (see rows.ts). */

export interface AttemptRow {
  task_id: string;
  config_id: string;
  seq: number;
  attempt: number;
  at: number;
  duration_ms: number;
  status: number | null;
  outcome: AttemptOutcome;
  error: string | null;
}

export interface OutboxRow {
  task_id: string;
  config_id: string;
  seq: number;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  dead_at: number | null;
}

export interface ActivityRow {
  state: TaskState;
  created_at: number;
  updated_at: number;
  started_at: number | null;
}

/** Above every stored (time, id): the first page's upper bound. */
const TOP = { at: Number.MAX_SAFE_INTEGER, id: '' };

/** The time a list is ordered by: creation when the filter has a created range, else the last update. */
export const orderOf = (f: OperatorFilter): OperatorPage['orderedBy'] =>
  f.createdAfter !== undefined || f.createdBefore !== undefined ? 'createdAt' : 'updatedAt';

/**
 * The page's range over (time, id) in the list's order, newest first: strictly below the cursor (or
 * below the range's end, whichever is lower) and above the range's start. Always bound, so the
 * statement can seek its index to the page instead of walking down from the newest task.
 */
export function keysetBounds(f: OperatorFilter): { after: number; upperAt: number; upperId: string } {
  const cursor = f.pageToken ? decodeCursor(f.pageToken) : TOP;
  const byCreation = orderOf(f) === 'createdAt';
  const before = byCreation ? f.createdBefore : f.updatedBefore;
  // (at, id) < (before, '') holds exactly when at < before: ids are never empty.
  const upper = before !== undefined && before <= cursor.at ? { at: before, id: '' } : cursor;
  // Ordered by update, a created-after bound bounds the walk too: a task is updated at or after its
  // creation.
  const after = byCreation ? (f.createdAfter ?? -1) : Math.max(f.updatedAfter ?? -1, f.createdAfter ?? -1);
  return { after, upperAt: upper.at, upperId: upper.id };
}

/** A page from the rows read for it (one more than `pageSize` says another page follows). */
export function toOperatorPage(
  rows: readonly TaskRow[],
  pageSize: number,
  orderedBy: OperatorPage['orderedBy'],
): OperatorPage {
  const page = rows.slice(0, pageSize);
  const last = page.at(-1);
  const at = last && (orderedBy === 'createdAt' ? last.created_at : last.updated_at);
  const nextPageToken = rows.length > pageSize && last && at !== undefined ? encodeCursor(at, last.id) : '';
  return { records: page.map(toRecord), nextPageToken, orderedBy };
}

export const toAttempt = (r: AttemptRow): DeliveryAttempt => ({
  taskId: r.task_id,
  configId: r.config_id,
  seq: r.seq,
  attempt: r.attempt,
  at: r.at,
  durationMs: r.duration_ms,
  ...(r.status === null ? {} : { status: r.status }),
  outcome: r.outcome,
  ...(r.error === null ? {} : { error: r.error }),
});

export const toOutboxEntry = (r: OutboxRow): OutboxEntry => ({
  taskId: r.task_id,
  configId: r.config_id,
  seq: r.seq,
  createdAt: r.created_at,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  ...(r.last_error === null ? {} : { lastError: r.last_error }),
  ...(r.dead_at === null ? {} : { deadAt: r.dead_at }),
});

export const toActivity = (r: ActivityRow): ActivityTask => ({
  state: r.state,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  ...(r.started_at === null ? {} : { startedAt: r.started_at }),
});

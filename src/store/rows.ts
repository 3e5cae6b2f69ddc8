import type { LoggedEvent, TaskEvent } from '../engine/events.js';
import type { QueuedTask } from '../engine/fair-share.js';
import type { PendingNotification, PushConfig } from '../engine/push.js';
import type { ListPage, NewTask, QueueCounts, TaskStamp } from '../engine/store-port.js';
import type { TaskRecord, TaskState } from '../engine/task.js';
import { encodeCursor } from './cursor.js';

/**
 * The rows of both SQL adapters and their conversions to the engine's records: both schemas keep
 * JSON documents as text and flags as 0/1 integers, so one mapping serves SQLite and PostgreSQL.
 */

export interface TaskRow {
  id: string;
  /** Who holds the task's lease (a runner's or a worker's name), while one does. */
  lease_owner?: string | null;
  lease_expires_at?: number | null;
  context_id: string;
  owner: string;
  skill: string;
  state: TaskState;
  status_message: string | null;
  input: string | null;
  metadata: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
  ttl_ms: number;
  poll_interval_ms: number;
  progress: string | null;
  last_seq: number;
  attempts: number;
  interruptions: number;
  cancel_requested: number;
  push_configs: number;
  approvers: string | null;
  input_deadline: number | null;
  tenant: string;
  priority: number;
  run_after: number;
  queue_at: number;
  retries: number;
  retry_reasons: string | null;
  trace_parent: string | null;
  trace_state: string | null;
}

/** A queued task as the fair claim reads it. */
export interface QueuedRow {
  id: string;
  owner: string;
  tenant: string;
  skill: string;
  created_at: number;
}

export const toQueued = (r: QueuedRow): QueuedTask => ({
  id: r.id,
  owner: r.owner,
  tenant: r.tenant || r.owner,
  skill: r.skill,
  createdAt: r.created_at,
});

export interface PushConfigRow {
  task_id: string;
  id: string;
  url: string;
  token: string | null;
  auth_scheme: string | null;
  auth_credentials: string | null;
  all_events: number;
  format: string;
  created_at: number;
}

export interface NotificationRow extends PushConfigRow {
  config_id: string;
  seq: number;
  n_created_at: number;
  attempts: number;
}

export interface EventRow {
  seq: number;
  at: number;
  payload: string;
}

export const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/**
 * The row a new task is stored as: what the create gives, the table's defaults for the rest. The
 * contract suite checks that getTask reads back the same record (test/store/contract/writes.ts).
 */
export function newTaskRow(task: NewTask): TaskRow {
  return {
    id: task.id,
    context_id: task.contextId,
    owner: task.owner,
    skill: task.skill,
    state: 'submitted',
    status_message: null,
    input: json(task.input),
    metadata: json(task.metadata),
    created_at: task.createdAt,
    updated_at: task.createdAt,
    expires_at: task.expiresAt,
    ttl_ms: task.ttlMs,
    poll_interval_ms: task.pollIntervalMs,
    progress: null,
    last_seq: task.events.length,
    attempts: 0,
    interruptions: 0,
    cancel_requested: 0,
    push_configs: 0,
    approvers: null,
    input_deadline: null,
    tenant: task.tenant ?? task.owner,
    priority: task.priority ?? 0,
    run_after: 0,
    queue_at: task.queueAt ?? task.createdAt,
    retries: 0,
    retry_reasons: null,
    trace_parent: task.trace?.traceparent ?? null,
    trace_state: task.trace?.tracestate ?? null,
  };
}

export function toRecord(r: TaskRow): TaskRecord {
  return {
    id: r.id,
    contextId: r.context_id,
    owner: r.owner,
    skill: r.skill,
    state: r.state,
    statusMessage: r.status_message ? JSON.parse(r.status_message) : undefined,
    input: r.input === null ? undefined : JSON.parse(r.input),
    metadata: r.metadata ? JSON.parse(r.metadata) : undefined,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    expiresAt: r.expires_at,
    ttlMs: r.ttl_ms,
    pollIntervalMs: r.poll_interval_ms,
    progress: r.progress ? JSON.parse(r.progress) : undefined,
    lastSeq: r.last_seq,
    attempts: r.attempts,
    interruptions: r.interruptions,
    cancelRequested: r.cancel_requested === 1,
    pushConfigs: r.push_configs,
    approvers: r.approvers ? (JSON.parse(r.approvers) as string[]) : undefined,
    inputDeadline: r.input_deadline ?? undefined,
    // Rows that ended before tenants were stored have none: each owner was its own.
    tenant: r.tenant || r.owner,
    priority: r.priority,
    retries: r.retries,
    runAfter: r.run_after > 0 ? r.run_after : undefined,
    retryReasons: r.retry_reasons ? (JSON.parse(r.retry_reasons) as string[]) : undefined,
    queueAt: r.queue_at,
    trace: r.trace_parent
      ? { traceparent: r.trace_parent, tracestate: r.trace_state ?? undefined }
      : undefined,
    lease:
      r.state === 'working' && r.lease_owner
        ? { holder: r.lease_owner, expiresAt: Number(r.lease_expires_at ?? 0) }
        : undefined,
  };
}

export const toPushConfigRow = (c: PushConfig): PushConfigRow => ({
  task_id: c.taskId,
  id: c.id,
  url: c.url,
  token: c.token ?? null,
  auth_scheme: c.authentication?.scheme ?? null,
  auth_credentials: c.authentication?.credentials ?? null,
  all_events: c.allEvents ? 1 : 0,
  format: c.format,
  created_at: c.createdAt,
});

export const toPushConfig = (r: PushConfigRow): PushConfig => ({
  taskId: r.task_id,
  id: r.id,
  url: r.url,
  token: r.token ?? undefined,
  authentication:
    r.auth_scheme === null
      ? undefined
      : { scheme: r.auth_scheme, credentials: r.auth_credentials ?? undefined },
  allEvents: r.all_events === 1,
  format: r.format,
  createdAt: r.created_at,
});

export const toLogged = (taskId: string, e: EventRow): LoggedEvent => ({
  taskId,
  seq: e.seq,
  at: e.at,
  event: JSON.parse(e.payload) as TaskEvent,
});

/** A ListTasks page from the rows read for it (one more than `pageSize` says another page follows). */
export function toPage(rows: readonly TaskRow[], pageSize: number, totalSize: number): ListPage {
  const page = rows.slice(0, pageSize);
  const last = page.at(-1);
  const nextPageToken = rows.length > pageSize && last ? encodeCursor(last.updated_at, last.id) : '';
  return { records: page.map(toRecord), nextPageToken, totalSize };
}

/** The columns of a stamp read; the queue's are read with it, and used only while submitted. */
export interface StampRow {
  owner: string;
  state: TaskState;
  last_seq: number;
  updated_at: number;
  tenant: string;
  skill: string;
  queue_at: number;
  poll_interval_ms: number;
  run_after: number;
}

export const toStamp = (r: StampRow, counts?: QueueCounts): TaskStamp => ({
  owner: r.owner,
  state: r.state,
  lastSeq: r.last_seq,
  updatedAt: r.updated_at,
  ...(r.state === 'submitted' && {
    queued: {
      tenant: r.tenant || r.owner,
      skill: r.skill,
      queueAt: r.queue_at,
      pollIntervalMs: r.poll_interval_ms,
      runAfter: r.run_after > 0 ? r.run_after : undefined,
      ...(counts && { counts }),
    },
  }),
});

/** A claimed notification; `r.attempts` must count the attempt it is claimed for. */
export const toPendingNotification = (r: NotificationRow): PendingNotification => ({
  taskId: r.task_id,
  configId: r.config_id,
  seq: r.seq,
  createdAt: r.n_created_at,
  attempts: r.attempts,
  config: toPushConfig(r),
});

import type { NotificationKey } from './push.js';
import type { TaskRecord, TaskState } from './task.js';

/**
 * What the operator console reads of the store, beyond a caller's own tasks: every principal's
 * tasks, webhook delivery attempts and the outbox of one task, and the last hour's activity. Part of
 * the store port (`TaskStore.operator`); every adapter passes test/store/contract/operator.ts.
 */
export interface OperatorStore {
  /**
   * Every owner's tasks, most recently updated (or, with a created range, created) first, a page at a
   * time: keyset pages over (time, id), so a deep page costs what the first does.
   */
  listAllTasks(filter: OperatorFilter): Promise<OperatorPage>;
  /** How many stored tasks are in each state (expired ones not yet swept included). */
  countTasksByState(): Promise<Partial<Record<TaskState, number>>>;
  /** The task's most recent delivery attempts (at most `limit`), newest first. */
  listAttempts(taskId: string, limit: number): Promise<DeliveryAttempt[]>;
  /** The task's notifications not delivered yet: pending ones and dead letters, oldest first. */
  listOutbox(taskId: string): Promise<OutboxEntry[]>;
  /**
   * Makes a dead letter due again at `now`, its attempts counted from zero: false when there is no
   * such dead letter (delivered, deleted, or never dead).
   */
  redeliver(key: NotificationKey, now: number): Promise<boolean>;
  /** The rows the console's charts are drawn from: tasks touched and attempts made since `since`. */
  recentActivity(since: number, limit: number): Promise<RecentActivity>;
}

export interface OperatorFilter {
  state?: TaskState;
  skill?: string;
  /** The owner key (engine form, e.g. "api-key:acme/alice"). */
  owner?: string;
  /** Bounds in epoch ms: `after` exclusive, `before` exclusive. */
  createdAfter?: number;
  createdBefore?: number;
  updatedAfter?: number;
  updatedBefore?: number;
  /** Text the id contains (as typed: no wildcards). */
  idContains?: string;
  pageSize: number;
  /** Opaque cursor from a previous page. */
  pageToken?: string;
  now: number;
}

export interface OperatorPage {
  records: TaskRecord[];
  /**
   * Newest first by this time: `updatedAt`, or `createdAt` when the filter has a created range (then
   * the walk follows the creation index, and a range long ago costs what a recent one does).
   */
  orderedBy: 'updatedAt' | 'createdAt';
  /** Empty on the last page. */
  nextPageToken: string;
}

/** The outcome of one delivery attempt, as the dispatcher settled it. */
export type AttemptOutcome = 'delivered' | 'retry' | 'dead';

/** One POST of a notification to its webhook (or what kept it from being sent). */
export interface DeliveryAttempt extends NotificationKey {
  /** 1 for the first attempt of the notification. */
  attempt: number;
  /** When the attempt started (epoch ms), and how long it took. */
  at: number;
  durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  outcome: AttemptOutcome;
  error?: string;
}

/** What the dispatcher records of an attempt, with the outcome it settles. */
export type AttemptRecord = Pick<DeliveryAttempt, 'attempt' | 'at' | 'durationMs' | 'status'>;

/** A notification still in the outbox: due (now or later), or dead-lettered. */
export interface OutboxEntry extends NotificationKey {
  createdAt: number;
  attempts: number;
  nextAttemptAt: number;
  lastError?: string;
  /** When it was dead-lettered; undefined while it is still to be delivered. */
  deadAt?: number;
}

export interface RecentActivity {
  /** Tasks updated since `since` (newest first, at most `limit`) and the tasks queued now. */
  tasks: ActivityTask[];
  /** Attempts made since `since`, per minute (epoch minute) and outcome. */
  attempts: { minute: number; outcome: AttemptOutcome; count: number }[];
}

export interface ActivityTask {
  state: TaskState;
  createdAt: number;
  updatedAt: number;
  /** When a runner first took it (its first `working` status), if one has. */
  startedAt?: number;
}

/** Delivery attempts kept per task: the newest; older ones are deleted as new ones are written. */
export const ATTEMPTS_KEPT = 50;

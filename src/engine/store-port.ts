import type { LoggedEvent, TaskEvent } from '../engine/events.js';
import type { ClaimPolicy } from '../engine/fair-share.js';
import type { DeliveryOutcome, NotificationKey, PendingNotification, PushConfig } from '../engine/push.js';
import type { Message, Progress, TaskRecord, TaskState, TraceCarrier } from '../engine/task.js';
import type { AttemptRecord, OperatorStore } from './operator-port.js';

/** Blob parts are stored in pieces of this many bytes: a reader holds one piece at a time. */
export const BLOB_PIECE_BYTES = 1024 * 1024;

/** A caller's message, as duplicate detection knows it. */
export interface MessageKey {
  owner: string;
  messageId: string;
}

/** A task to insert, with the events that announce it. */
export interface NewTask {
  id: string;
  contextId: string;
  owner: string;
  skill: string;
  input: unknown;
  metadata?: Record<string, unknown>;
  createdAt: number;
  expiresAt: number;
  ttlMs: number;
  pollIntervalMs: number;
  /** Whose share of the runner slots it uses (default: its owner's own). */
  tenant?: string;
  /** Kept to show it; the order it gives is `queueAt`'s. */
  priority?: number;
  /** Its place in its owner's queue: earlier runs first (default: createdAt). See engine/fair-share.ts. */
  queueAt?: number;
  /** The caller's messageId: a second create with the same (owner, messageId) returns the first task. */
  messageId: string;
  events: TaskEvent[];
  /** Webhooks given with the message that made the task: they hear of its first events too. */
  pushConfigs?: PushConfig[];
  /**
   * The owner may have at most this many unfinished tasks: with as many already, the create fails
   * with EngineError `too-many-tasks`, decided in the create's own transaction.
   */
  maxActive?: number;
  /** The creating span's context, kept with the task (see TaskRecord.trace). */
  trace?: TraceCarrier;
  /**
   * Count the new task's standing too (the created result's `counts`, as `queueCounts` would),
   * ahead counted up to this many, in the create's own transaction: its answer shows where it
   * stands without a second read.
   */
  queueCap?: number;
}

/** What `createTask` did: the task made (or the one its messageId made before). */
export interface Created {
  result: WriteResult;
  /** False when (owner, messageId) had made the task already: nothing was written. */
  created: boolean;
  /** Asked for with `queueCap` and the task made: what it waits behind as it was made. */
  counts?: QueueCounts;
}

/**
 * A guarded write: it applies only while the task is in one of `from` (and, for the runner, still
 * holds the lease `leaseToken`). Zero matching rows is a conflict, reported as `undefined`.
 */
export interface GuardedWrite {
  taskId: string;
  from: readonly TaskState[];
  /** New state; omitted for writes that only append events (artifacts, progress, messages). */
  to?: TaskState;
  statusMessage?: Message;
  progress?: Progress;
  pollIntervalMs?: number;
  leaseToken?: string;
  /** Drop the lease in the same statement (task leaves the runner). */
  releaseLease?: boolean;
  /** A failed run queued again: not claimed before `runAfter`; `reason` joins the task's retry reasons. */
  retry?: { runAfter: number; reason: string };
  /** With a `to`: who may answer and until when, for a task that now waits for input (else cleared). */
  approvers?: string[];
  inputDeadline?: number;
  /**
   * An approver's answer: the write applies only while the task's approvers hold this name, so a
   * grant read before the write still holds when it is written (else a conflict, `undefined`).
   */
  approver?: string;
  /**
   * A caller's condition (A2A 1.1's `ifGenerationMatch`): the write applies only while the task's
   * log ends at this sequence number (`lastSeq`, the task's generation), decided in the write's own
   * statement; a task that moved past it is a conflict (`undefined`) like any other guard.
   */
  generation?: number;
  events: TaskEvent[];
  at: number;
  /**
   * The contents of the events' blob parts (Part.blob), in the order the parts appear: stored as
   * chunks of the event that holds each, in the write's own transaction.
   */
  blobs?: readonly Buffer[];
  /**
   * Events of this task whose blob pieces the write supersedes (a replaced artifact's content):
   * deleted in the write's own transaction.
   */
  dropBlobs?: readonly number[];
  /**
   * Artifact bytes the write adds to the task's owner's stored total (fewer than 0 when it frees
   * more than it adds); with `quota`, a write that adds bytes and would take the total past it is
   * refused whole with QuotaExceeded (engine/errors.ts).
   */
  storage?: { owner: string; bytes: number; quota?: number };
}

export interface WriteResult {
  record: TaskRecord;
  events: LoggedEvent[];
  /** The write carried a (owner, messageId) already delivered: nothing was written, `record` is as it stands. */
  duplicate?: boolean;
}

export interface ClaimedTask {
  record: TaskRecord;
  leaseToken: string;
  /**
   * The task was already `working`: its previous run was cut short, by a lease that expired (its
   * runner died; counted in `interruptions`) or one released (a graceful stop; not counted).
   */
  interrupted: boolean;
  /** Events written by the claim (the `working` status of a fresh claim). */
  events: LoggedEvent[];
  /**
   * A fresh claim's whole log as the claim left it (`events` last; progress left out, as
   * getTaskWithLog's), read in the claim's own transaction: its run starts from it, with no read of
   * the task after the claim. Takeovers have none (their takeover writes first, then reads).
   */
  log?: LoggedEvent[];
}

/**
 * Which skills' tasks a claim may take: `only` these, or all `except` these. An empty `only` claims
 * nothing.
 */
export type SkillFilter = { only: readonly string[] } | { except: readonly string[] };

export interface TaskStamp {
  owner: string;
  state: TaskState;
  lastSeq: number;
  updatedAt: number;
  /** While `submitted`: what its place in the queue is computed from (engine/queue.ts). */
  queued?: QueuedStamp;
}

/** A queued task's fields its standing is computed from, and the counts when they were asked for. */
export interface QueuedStamp
  extends Pick<TaskRecord, 'tenant' | 'skill' | 'queueAt' | 'pollIntervalMs' | 'runAfter'> {
  /** Only when asked for, by the task's owner (see {@link StampQueue}). */
  counts?: QueueCounts;
}

/**
 * Asks `getTaskStamp` to count a queued task's standing too (`queued.counts`), in the same read:
 * only when the task is `owner`'s (nothing is counted for anyone else), ahead counted up to `cap`.
 */
export interface StampQueue {
  owner: string;
  cap: number;
}

/** What a queued task waits behind (see `queueCounts`). */
export interface QueueCounts {
  /** Its owner's queued tasks before it in queue order, counted up to the cap asked for. */
  ahead: number;
  /** Tasks running now: of its tenant, of its skill, and in all. */
  tenantRunning: number;
  skillRunning: number;
  running: number;
}

export interface ListFilter {
  owner: string;
  contextId?: string;
  state?: TaskState;
  statusAfter?: number;
  pageSize: number;
  /** Opaque cursor from a previous page. */
  pageToken?: string;
  now: number;
  /**
   * Count the standing of the page's queued tasks too (`ListPage.queued`), ahead counted up to this
   * many: once for the whole page, in the page's own read (a page with none queued counts nothing).
   */
  queueCap?: number;
}

export interface ListPage {
  records: TaskRecord[];
  nextPageToken: string;
  totalSize: number;
  /** Asked for with `queueCap`: the counts of each queued task of the page, by id (as `queueCounts`). */
  queued?: ReadonlyMap<string, QueueCounts>;
}

export interface LeaseStatus {
  /** False when the lease was lost (taken over, task finished elsewhere, or deleted). */
  held: boolean;
  cancelRequested: boolean;
}

/**
 * A change made by another process sharing the store (another instance on the same database).
 * Only a wake-up: the store stays the truth, and whoever hears it reads what changed.
 */
export type StoreChange =
  /** The task's log grew; `state` is the last status those events set, if any. */
  | { kind: 'events'; taskId: string; state?: TaskState }
  | { kind: 'cancel-requested'; taskId: string }
  /** Changes may have gone unheard (the connection that hears them dropped): re-read what you watch. */
  | { kind: 'missed' };

/**
 * The persistence port of the engine: what it needs of a store, which adapters implement (SQLite,
 * PostgreSQL). Every adapter must pass test/store/contract.ts unchanged.
 *
 * @example
 *   const store: TaskStore = new SqliteStore({ path: './data/taskhandle.db' });
 *   storeContract('my-store', async () => new MyStore());   // test/store/contract.ts
 */
export interface TaskStore {
  /** The operator console's reads and its one action (deliver again): see {@link OperatorStore}. */
  readonly operator: OperatorStore;
  /**
   * Inserts the task and its events atomically, or returns the task that (owner, messageId) already
   * made, unless that task has expired (then its messageId is free again).
   */
  createTask(task: NewTask): Promise<Created>;
  /** The task that (owner, messageId) created or was answered with, if any. */
  findByMessageId(owner: string, messageId: string): Promise<TaskRecord | undefined>;
  /** Records that (owner, messageId) was delivered to an existing task, with the write it caused. */
  write(write: GuardedWrite, dedupe?: MessageKey): Promise<WriteResult | undefined>;
  getTask(id: string, now: number): Promise<TaskRecord | undefined>;
  /**
   * What changes whenever the task's view may have changed (every write moves `updatedAt`, every
   * event `lastSeq`), read without decoding the task: lets a poll reuse a rendering it made before.
   */
  getTaskStamp(id: string, now: number, queue?: StampQueue): Promise<TaskStamp | undefined>;
  /**
   * The record plus the entries of its log that make up its view (all but `progress`), oldest first.
   * With `owner`, another owner's task is not read at all: it is missing, as an unknown id is. With
   * `activeOnly`, a task that has ended comes with an empty log, its log not read: what refuses it
   * (a stream of it) needs its state alone.
   */
  getTaskWithLog(
    id: string,
    now: number,
    owner?: string,
    activeOnly?: boolean,
  ): Promise<{ record: TaskRecord; log: LoggedEvent[] } | undefined>;
  /**
   * One piece of a blob part (pieces are {@link BLOB_PIECE_BYTES} long but the last): the `piece`-th
   * of part `part` of event `seq` of the task; undefined once the task is gone.
   */
  readBlobPiece(taskId: string, seq: number, part: number, piece: number): Promise<Buffer | undefined>;
  listTasks(filter: ListFilter): Promise<ListPage>;
  /** Events with seq > afterSeq, oldest first. */
  readEvents(taskId: string, afterSeq: number, limit: number): Promise<LoggedEvent[]>;
  /**
   * Claims up to `limit` runnable tasks: `working` ones whose lease expired (returned with
   * `interrupted: true`), then `submitted` ones (moved to `working` with an event) as `pickFair`
   * (engine/fair-share.ts) picks them from every owner's queue under `policy`, whose limits hold
   * across every claimer of the store. Expired tasks (expiresAt <= now) and tasks waiting to be
   * retried (runAfter > now) are never claimed. With `skills`, only tasks of the skills it lets
   * through are claimed (takeovers included): in-process runners leave remote skills' tasks to
   * workers, and a worker claims only the skills it works.
   */
  claim(
    workerId: string,
    now: number,
    leaseMs: number,
    limit: number,
    policy?: ClaimPolicy,
    skills?: SkillFilter,
  ): Promise<ClaimedTask[]>;
  /**
   * What the queued `task` waits behind: the cost follows the cap and the running tasks, not the
   * queue's length.
   */
  queueCounts(
    task: Pick<TaskRecord, 'id' | 'owner' | 'tenant' | 'skill' | 'queueAt'>,
    now: number,
    cap: number,
  ): Promise<QueueCounts>;
  /** Extends a held lease to `until`; not held once the task left `working`, changed hands or expired. */
  renewLease(taskId: string, leaseToken: string, now: number, until: number): Promise<LeaseStatus>;
  /** Lets another runner take the task over at once (graceful shutdown). */
  releaseLease(taskId: string, leaseToken: string): Promise<void>;
  /**
   * Asks the job of a working task to stop (the runner hears it through the lease). With
   * `generation`, only while the task's log still ends there (`lastSeq`), decided in the same
   * statement. False when nothing was marked: no such task, or one past that generation.
   */
  requestCancel(taskId: string, generation?: number): Promise<boolean>;
  /**
   * Tasks waiting for input that `owner` owns or that name `approverName` as an approver, the
   * longest-waiting first.
   */
  listWaiting(
    owner: string,
    approverName: string | undefined,
    now: number,
    limit: number,
  ): Promise<TaskRecord[]>;
  /** Tasks waiting for input whose deadline is at or before `now`, oldest deadline first. */
  overdueInputs(now: number, limit: number): Promise<TaskRecord[]>;
  /** Deletes up to `limit` tasks whose expiry has passed, with their events, webhooks and notifications. */
  deleteExpired(now: number, limit: number): Promise<number>;
  /**
   * Forgets the fair share's turns (when a tenant or an owner last got a slot) older than `before`;
   * returns how many. A turn only breaks ties among those waiting: one long idle competes as new.
   */
  forgetTurns(before: number): Promise<number>;
  /**
   * Adds or replaces (same task and id) a webhook. From the next write on, the writes of the task's
   * events add the notifications it asks for (see `notifiesByDefault`) in their own transaction.
   * With `maxPerTask`, a new one (not a replacement) is not stored when the task already has that
   * many, checked in the same transaction (concurrent puts cannot pass it together): false.
   */
  putPushConfig(config: PushConfig, maxPerTask?: number): Promise<boolean>;
  getPushConfig(taskId: string, id: string): Promise<PushConfig | undefined>;
  listPushConfigs(taskId: string): Promise<PushConfig[]>;
  /**
   * The webhooks of `owner`'s unfinished tasks (submitted, working, or waiting for input), all
   * together: the ones its tasks' events may still set off.
   */
  countActivePushConfigs(owner: string, now: number): Promise<number>;
  /** Removes a webhook and its undelivered notifications; false if there was none. */
  deletePushConfig(taskId: string, id: string): Promise<boolean>;
  /**
   * Leases up to `limit` notifications due at `now` until `now + leaseMs`. Only the oldest
   * undelivered notification of each (task, config) is ever due: per webhook, they go out in order.
   */
  claimNotifications(now: number, leaseMs: number, limit: number): Promise<PendingNotification[]>;
  /**
   * Records an attempt: delivered (removed), retry later, or dead-lettered (kept, never retried).
   * With `attempt`, the attempt is also kept in the task's delivery history (the newest
   * {@link ATTEMPTS_KEPT} of each task, deleted with it), in the same transaction.
   */
  settleNotification(key: NotificationKey, outcome: DeliveryOutcome, attempt?: AttemptRecord): Promise<void>;
  /**
   * Calls `listener` for each change that other processes make to the store, from now until the
   * returned function is called. A store that only this process writes (SQLite) never calls it.
   */
  watch(listener: (change: StoreChange) => void): () => void;
  /**
   * What the store holds now, for metrics: cheap counts (the claim queries' partial indexes), read at
   * most once per scrape. Shared by every instance on the same database.
   */
  stats(): Promise<StoreStats>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What {@link TaskStore.stats} reads. */
export interface StoreStats {
  /** Tasks in the states the runner and people work through (expired ones not swept yet included). */
  tasks: Record<'submitted' | 'working' | 'input-required', number>;
  /** Notifications still to deliver (dead-lettered ones are not), and the oldest one's event time. */
  outbox: { depth: number; oldestAt?: number };
  /** PostgreSQL: this instance's connections, in use and idle, and the queries waiting for one. */
  pool?: { total: number; idle: number; waiting: number };
  /** SQLite: the write-ahead log's size on disk. */
  walBytes?: number;
}

/*
 * Refusals the port defines: an adapter reports these (and nothing of the engine's errors), the
 * engine words them for its callers.
 */

/** The create would give the owner more than `maxActive` unfinished tasks: nothing was written. */
export class TooManyTasks extends Error {
  override readonly name = 'TooManyTasks';
  constructor(readonly active: number) {
    super(`the owner has ${active} unfinished tasks`);
  }
}

/** A ListTasks pageToken that no page of this store gave. */
export class InvalidPageToken extends Error {
  override readonly name = 'InvalidPageToken';
}

/**
 * A write would take its owner's stored artifact bytes past their quota (MAX_STORED_BYTES): the
 * store refused it whole, nothing was written. The job that made it fails with this message.
 */
export class QuotaExceeded extends Error {
  override readonly name = 'QuotaExceeded';
  constructor(
    readonly stored: number,
    readonly adding: number,
    readonly quota: number,
  ) {
    super(
      `storing ${adding} more artifact bytes would take this principal to ${stored + adding} bytes, past its quota of ${quota} (MAX_STORED_BYTES): let older tasks expire, or ask the operator for more`,
    );
  }
}

export const isQuotaExceeded = (e: unknown): e is QuotaExceeded =>
  typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'QuotaExceeded';

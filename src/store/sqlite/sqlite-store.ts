import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { LoggedEvent, TaskEvent } from '../../engine/events.js';
import {
  type ClaimPolicy,
  pickFair,
  type QueuedTask,
  type RunningCount,
  turnKeys,
} from '../../engine/fair-share.js';
import type { AttemptRecord } from '../../engine/operator-port.js';
import {
  type DeliveryOutcome,
  type NotificationKey,
  notifiesByDefault,
  type PendingNotification,
  type PushConfig,
} from '../../engine/push.js';
import type {
  ClaimedTask,
  Created,
  GuardedWrite,
  LeaseStatus,
  ListFilter,
  ListPage,
  MessageKey,
  NewTask,
  QueueCounts,
  SkillFilter,
  StampQueue,
  StoreChange,
  StoreStats,
  TaskStamp,
  TaskStore,
  WriteResult,
} from '../../engine/store-port.js';
import { TooManyTasks } from '../../engine/store-port.js';
import { isTerminal, type TaskRecord, type TaskState } from '../../engine/task.js';
import { blobPieces, refuseOverQuota } from '../blobs.js';
import { decodeCursor } from '../cursor.js';
import { pageStanding } from '../page-standing.js';
import {
  type EventRow,
  json,
  type NotificationRow,
  newTaskRow,
  type PushConfigRow,
  type QueuedRow,
  type StampRow,
  type TaskRow,
  toLogged,
  toPage,
  toPendingNotification,
  toPushConfig,
  toPushConfigRow,
  toQueued,
  toRecord,
  toStamp,
} from '../rows.js';
import { Checkpointer } from './checkpointer.js';
import { GroupCommit } from './group-commit.js';
import { InstanceLock } from './instance-lock.js';
import { migrate } from './migrations.js';
import { SqliteOperator } from './operator.js';
import { makeDatabasePrivate } from './private-files.js';
import { prepareStatements, type Statements, skillParams } from './statements.js';
import { SqliteStats } from './stats.js';
import { WalSync } from './wal-sync.js';

export interface SqliteOptions {
  /** File path, or ':memory:'. */
  path: string;
  /**
   * `full`: a write is answered once it would survive power loss; `normal`: once it would survive
   * a crash of the process (the OS may still lose the last writes).
   */
  synchronous?: 'full' | 'normal';
  /** Told when the database's files or directory were found open to other users. */
  logger?: Pick<Logger, 'warn'>;
  /**
   * Hold the file for this process alone until close (a server does; see instance-lock.ts): a second
   * holder is refused with {@link DatabaseInUse}.
   */
  exclusive?: boolean;
}

/** How often the planner's statistics are refreshed (`PRAGMA optimize`: only what changed much). */
const OPTIMIZE_EVERY_MS = 3_600_000;

/** The embedded default store: one better-sqlite3 connection in WAL mode. */
/** Owners whose unfinished tasks are kept bounded (see SqliteStore's #belowActiveLimit), at most. */
const ACTIVE_BOUNDS_KEPT = 10_000;

export class SqliteStore implements TaskStore {
  readonly #db: Database.Database;
  readonly #q: Statements;
  readonly #writes: GroupCommit;
  readonly #wal: WalSync | undefined;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #lock: InstanceLock | undefined;
  readonly #stats: SqliteStats;
  readonly #optimizer: NodeJS.Timeout;
  /** Owners' unfinished tasks, bounded from above (see #belowActiveLimit). */
  readonly #activeBounds = new Map<string, number>();
  /** Whether no other process writes the file (the instance lock, or in memory): the bounds hold. */
  readonly #soleWriter: boolean;
  /** The operator console's reads and deliver-again (operator.ts); the store records attempts through it too. */
  readonly operator: SqliteOperator;
  #closed = false;

  constructor(options: SqliteOptions) {
    const onDisk = options.path !== ':memory:';
    if (onDisk) makeDatabasePrivate(options.path, options.logger);
    this.#lock = onDisk && options.exclusive ? InstanceLock.take(options.path, options.logger) : undefined;
    this.#soleWriter = !onDisk || this.#lock !== undefined;
    this.#db = new Database(options.path);
    this.#db.pragma('journal_mode = WAL');
    // Durability comes from WalSync (off the event loop), not from a sync inside each COMMIT.
    this.#db.pragma('synchronous = NORMAL');
    this.#db.pragma('foreign_keys = ON');
    // Every write runs in its own savepoint (group-commit.ts), whose undo copies of the pages it
    // changes are a statement journal: in a temp file past 64 KiB by default, here in memory. Measured
    // on a create: 134 µs of CPU with the file, 67 with memory (the pages are freed at each release).
    this.#db.pragma('temp_store = MEMORY');
    this.#db.pragma('busy_timeout = 5000');
    try {
      migrate(this.#db);
    } catch (err) {
      this.#db.close();
      this.#lock?.release();
      throw err;
    }
    // Query-planner statistics, as SQLite advises for long-lived connections: without them the fair
    // claim's reads were measured 3x slower beside 200,000 queued tasks than beside 1,000
    // (perf/claim-rate.ts, the bench's fairness); with them, flat. Cheap when nothing changed much.
    this.#db.pragma('optimize=0x10002');
    this.#optimizer = setInterval(() => this.#db.pragma('optimize'), OPTIMIZE_EVERY_MS).unref();
    this.#q = prepareStatements(this.#db);
    this.#stats = new SqliteStats(this.#db, options.path);
    const durable = options.synchronous !== 'normal' && options.path !== ':memory:';
    const wal = durable ? new WalSync(options.path) : undefined;
    this.#wal = wal;
    this.#checkpointer = onDisk ? new Checkpointer(this.#db, options.path, options.logger) : undefined;
    const checkpointer = this.#checkpointer;
    this.#writes = new GroupCommit(this.#db, {
      durable: wal && (() => wal.sync()),
      committed: checkpointer && (() => checkpointer.committed()),
    });
    this.operator = new SqliteOperator(this.#db, (work) => this.#writes.run(work));
  }

  async createTask(task: NewTask): Promise<Created> {
    const made = await this.#writes.run((): Created | { refused: number } => {
      const existing = this.#q.findByMessageId.get(task.owner, task.messageId) as TaskRow | undefined;
      if (existing && existing.expires_at > task.createdAt) {
        return { result: { record: toRecord(existing), events: [] }, created: false };
      }
      // Refused having written nothing, without throwing: a throw would roll back the whole group
      // commit and run every other caller's write in it again (a flood of refusals slowed them all).
      if (task.maxActive !== undefined && !this.#belowActiveLimit(task.owner, task.createdAt, task.maxActive))
        return { refused: task.maxActive };
      // The task this message made has expired and waits for the sweeper: the messageId is free again.
      if (existing) this.#q.forgetMessageId.run(task.owner, task.messageId);
      const row = newTaskRow(task);
      this.#q.insertTask.run(row);
      const bound = this.#activeBounds.get(task.owner);
      if (bound !== undefined) this.#activeBounds.set(task.owner, bound + 1);
      this.#q.insertMessageId.run(task.owner, task.messageId, task.id);
      for (const config of task.pushConfigs ?? []) this.#q.putPushConfig.run(toPushConfigRow(config));
      if (task.pushConfigs?.length) row.push_configs = this.#countPushConfigs(task.id);
      const events = this.#insertEvents(row, 1, task.createdAt, task.events);
      const record = toRecord(row);
      // In the create's own transaction: its answer says where it stands with no read of its own.
      const counts =
        task.queueCap === undefined ? undefined : this.#queueCounts(record, task.createdAt, task.queueCap);
      return { result: { record, events }, created: true, ...(counts && { counts }) };
    });
    if ('refused' in made) throw new TooManyTasks(made.refused);
    return made;
  }

  /**
   * Whether `owner` may have one more unfinished task under `limit`. Its tasks are counted only when
   * an upper bound kept here says it may be at the limit: this store is the only writer of its file
   * (the instance lock; without it, as a test's second store, it counts each time), and the bound is
   * the last count plus the tasks made since; tasks that end
   * or expire only make it larger than the truth, never smaller. Counting on every create cost an
   * owner with thousands of unfinished tasks up to 270 µs a create (OFFSET over 10,000 entries, the
   * default MAX_ACTIVE_TASKS); an owner far below its limit is now counted once every (limit - count)
   * creates. A write run again (the group's savepoint pass) counts its task twice: too large, safe.
   */
  #belowActiveLimit(owner: string, now: number, limit: number): boolean {
    if (!this.#soleWriter) return !this.#q.atActiveLimit.get({ owner, now, limit });
    const bound = this.#activeBounds.get(owner);
    if (bound !== undefined && bound < limit) return true;
    // At the limit (or as good as): one step over its index entries refuses before any count.
    if (bound !== undefined && this.#q.atActiveLimit.get({ owner, now, limit })) return false;
    const { n } = this.#q.countActive.get({ owner, now, limit }) as { n: number };
    this.#activeBounds.delete(owner);
    this.#activeBounds.set(owner, n);
    if (this.#activeBounds.size > ACTIVE_BOUNDS_KEPT)
      this.#activeBounds.delete(this.#activeBounds.keys().next().value as string);
    return n < limit;
  }

  async findByMessageId(owner: string, messageId: string): Promise<TaskRecord | undefined> {
    const row = this.#q.findByMessageId.get(owner, messageId) as TaskRow | undefined;
    return row && toRecord(row);
  }

  async write(w: GuardedWrite, dedupe?: MessageKey): Promise<WriteResult | undefined> {
    return this.#writes.run((): WriteResult | undefined => {
      if (dedupe) {
        const existing = this.#q.findByMessageId.get(dedupe.owner, dedupe.messageId) as TaskRow | undefined;
        if (existing) return { record: toRecord(existing), events: [], duplicate: true };
      }
      const row = this.#q.guardedUpdate.get({
        id: w.taskId,
        from: JSON.stringify(w.from),
        to: w.to ?? null,
        status_message: w.to ? json(w.statusMessage) : null,
        progress: w.progress ? json(w.progress) : null,
        poll_interval_ms: w.pollIntervalMs ?? null,
        lease_token: w.leaseToken ?? null,
        release: w.releaseLease ? 1 : 0,
        n: w.events.length,
        at: w.at,
        approvers: w.approvers?.length ? JSON.stringify(w.approvers) : null,
        input_deadline: w.inputDeadline ?? null,
        stored_bytes: w.storage?.bytes ?? 0,
        approver: w.approver ?? null,
        run_after: w.retry?.runAfter ?? null,
        retry_reason: w.retry?.reason ?? null,
        generation: w.generation ?? null,
      }) as TaskRow | undefined;
      if (!row) return undefined;
      if (dedupe) this.#q.insertMessageId.run(dedupe.owner, dedupe.messageId, w.taskId);
      // Inside the write's savepoint: a refusal (thrown) rolls the whole write back.
      if (w.storage) this.#addStoredBytes(w.storage);
      for (const seq of w.dropBlobs ?? []) this.#q.deleteEventBlobPieces.run(w.taskId, seq);
      const firstSeq = row.last_seq - w.events.length + 1;
      for (const p of blobPieces(w.events, firstSeq, w.blobs ?? [])) {
        this.#q.insertBlobPiece.run(w.taskId, p.seq, p.part, p.piece, p.data);
      }
      const events = this.#insertEvents(row, firstSeq, w.at, w.events);
      return { record: toRecord(row), events };
    });
  }

  async getTask(id: string, now: number): Promise<TaskRecord | undefined> {
    const row = this.#q.getTask.get(id, now) as TaskRow | undefined;
    return row && toRecord(row);
  }

  async getTaskStamp(id: string, now: number, queue?: StampQueue): Promise<TaskStamp | undefined> {
    const row = this.#q.getTaskStamp.get(id, now) as StampRow | undefined;
    if (!row) return undefined;
    const stamp = toStamp(row);
    if (queue && stamp.queued && row.owner === queue.owner) {
      stamp.queued.counts = this.#queueCounts({ id, owner: row.owner, ...stamp.queued }, now, queue.cap);
    }
    return stamp;
  }

  async getTaskWithLog(
    id: string,
    now: number,
    owner?: string,
    activeOnly = false,
  ): Promise<{ record: TaskRecord; log: LoggedEvent[] } | undefined> {
    // One connection and synchronous statements: no write can fall between these two reads.
    const row = (
      owner === undefined ? this.#q.getTask.get(id, now) : this.#q.getOwnTask.get(id, now, owner)
    ) as TaskRow | undefined;
    if (!row) return undefined;
    const record = toRecord(row);
    if (activeOnly && isTerminal(record.state)) return { record, log: [] };
    const log = (this.#q.viewEvents.all(id) as EventRow[]).map((e) => toLogged(id, e));
    return { record, log };
  }

  async listTasks(f: ListFilter): Promise<ListPage> {
    const cursor = f.pageToken ? decodeCursor(f.pageToken) : undefined;
    const params = {
      owner: f.owner,
      now: f.now,
      context_id: f.contextId ?? null,
      state: f.state ?? null,
      after: f.statusAfter ?? null,
    };
    const rows = this.#q.listTasks.all({
      ...params,
      cursor_at: cursor?.at ?? null,
      cursor_id: cursor?.id ?? null,
      limit: f.pageSize + 1,
    }) as TaskRow[];
    const { total } = this.#q.countTasks.get(params) as { total: number };
    const page = toPage(rows, f.pageSize, total);
    if (f.queueCap === undefined || !page.records.some((r) => r.state === 'submitted')) return page;
    // Once for the page (one connection, synchronous statements: the page's own snapshot).
    const head = (
      this.#q.queueHead.all({ owner: f.owner, now: f.now, cap: f.queueCap }) as { id: string }[]
    ).map((r) => r.id);
    const running = this.#q.running.all({ now: f.now }) as RunningCount[];
    return { ...page, queued: pageStanding(page.records, head, running) };
  }

  async readBlobPiece(taskId: string, seq: number, part: number, piece: number): Promise<Buffer | undefined> {
    const row = this.#q.readBlobPiece.get(taskId, seq, part, piece) as { data: Buffer } | undefined;
    return row?.data;
  }

  async readEvents(taskId: string, afterSeq: number, limit: number): Promise<LoggedEvent[]> {
    return (this.#q.readEvents.all(taskId, afterSeq, limit) as EventRow[]).map((e) => toLogged(taskId, e));
  }

  async claim(
    workerId: string,
    now: number,
    leaseMs: number,
    limit: number,
    policy: ClaimPolicy = {},
    skills?: SkillFilter,
  ): Promise<ClaimedTask[]> {
    const passes = skillParams(skills);
    return this.#writes.run(() => {
      // Takeovers first: their tasks were accepted before anything still queued.
      const orphans = (passes ? this.#q.claimableOrphans : this.#q.claimableOrphansAnySkill).all({
        now,
        limit,
        ...passes,
      }) as {
        id: string;
        state: TaskState;
      }[];
      const queued =
        orphans.length < limit ? this.#pickQueued(now, limit - orphans.length, policy, passes) : [];
      const candidates = [...orphans, ...queued.map((t) => ({ id: t.id, state: 'submitted' as const }))];
      const claimed: ClaimedTask[] = [];
      for (const c of candidates) {
        const leaseToken = randomUUID();
        const fresh = c.state === 'submitted';
        const row = this.#q.claim.get({
          id: c.id,
          state: c.state,
          now,
          worker: workerId,
          token: leaseToken,
          until: now + leaseMs,
          to_working: fresh ? 1 : 0,
        }) as TaskRow | undefined;
        if (!row) continue;
        if (!fresh) {
          claimed.push({ record: toRecord(row), leaseToken, interrupted: true, events: [] });
          continue;
        }
        const events = this.#insertEvents(row, row.last_seq, now, [{ kind: 'status', state: 'working' }]);
        const log = (this.#q.viewEvents.all(c.id) as EventRow[]).map((e) => toLogged(c.id, e));
        claimed.push({ record: toRecord(row), leaseToken, interrupted: false, events, log });
      }
      return claimed;
    });
  }

  /** The queued tasks to claim next, as the fair share picks them (one process: exact). */
  #pickQueued(
    now: number,
    slots: number,
    policy: ClaimPolicy,
    passes: ReturnType<typeof skillParams>,
  ): QueuedTask[] {
    const queued: QueuedTask[] = [];
    let owner = '';
    for (;;) {
      const next = this.#q.queuedOwnerAfter.get(owner) as { owner: string } | undefined;
      if (!next) break;
      owner = next.owner;
      const rows = (passes ? this.#q.ownerQueue : this.#q.ownerQueueAnySkill).all({
        owner,
        now,
        limit: slots,
        ...passes,
      }) as QueuedRow[];
      for (const r of rows) queued.push(toQueued(r));
    }
    const running = this.#q.running.all({ now }) as RunningCount[];
    const turns = new Map<string, number>();
    for (const key of turnKeys(queued)) {
      const row = this.#q.turnOf.get(key) as { last_at: number } | undefined;
      if (row) turns.set(key, row.last_at);
    }
    const picked = pickFair(queued, running, policy, slots, turns);
    // In the claim's transaction: a pick that then fails its guard rolls nothing back but its turn.
    for (const key of turnKeys(picked)) this.#q.setTurn.run(key, now);
    return picked;
  }

  async queueCounts(
    task: Pick<TaskRecord, 'id' | 'owner' | 'tenant' | 'skill' | 'queueAt'>,
    now: number,
    cap: number,
  ): Promise<QueueCounts> {
    return this.#queueCounts(task, now, cap);
  }

  #queueCounts(
    task: Pick<TaskRecord, 'id' | 'owner' | 'tenant' | 'skill' | 'queueAt'>,
    now: number,
    cap: number,
  ): QueueCounts {
    const r = this.#q.queueCounts.get({
      owner: task.owner,
      queue_at: task.queueAt,
      id: task.id,
      now,
      cap,
      tenant: task.tenant,
      skill: task.skill,
    }) as { ahead: number; tenant_running: number; skill_running: number; running: number };
    return {
      ahead: r.ahead,
      tenantRunning: r.tenant_running,
      skillRunning: r.skill_running,
      running: r.running,
    };
  }

  async renewLease(taskId: string, leaseToken: string, now: number, until: number): Promise<LeaseStatus> {
    const row = await this.#writes.run(
      () =>
        this.#q.renewLease.get({ id: taskId, token: leaseToken, now, until }) as
          | { cancel_requested: number }
          | undefined,
    );
    return { held: row !== undefined, cancelRequested: row?.cancel_requested === 1 };
  }

  async releaseLease(taskId: string, leaseToken: string): Promise<void> {
    await this.#writes.run(() => this.#q.releaseLease.run(taskId, leaseToken));
  }

  async requestCancel(taskId: string, generation?: number): Promise<boolean> {
    return this.#writes.run(
      () => this.#q.requestCancel.run({ id: taskId, generation: generation ?? null }).changes > 0,
    );
  }

  async listWaiting(
    owner: string,
    approverName: string | undefined,
    now: number,
    limit: number,
  ): Promise<TaskRecord[]> {
    const rows = this.#q.waiting.all({ owner, name: approverName ?? null, now, limit }) as TaskRow[];
    return rows.map(toRecord);
  }

  async overdueInputs(now: number, limit: number): Promise<TaskRecord[]> {
    return (this.#q.overdueInputs.all({ now, limit }) as TaskRow[]).map(toRecord);
  }

  async forgetTurns(before: number): Promise<number> {
    return this.#writes.run(() => this.#q.forgetTurns.run(before).changes);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return this.#writes.run(() => {
      const doomed = this.#q.expired.all(now, limit) as { id: string; owner: string; stored_bytes: number }[];
      for (const { id, owner, stored_bytes } of doomed) {
        // Its artifact bytes leave its owner's total.
        if (stored_bytes > 0) this.#q.addStoredBytes.get(owner, -stored_bytes);
        this.#q.deleteBlobPieces.run(id);
        this.#q.deleteEvents.run(id);
        this.#q.deleteMessageIds.run(id);
        this.#q.deletePushConfigs.run(id);
        this.#q.deleteNotifications.run(id);
        this.operator.deleteAttempts(id);
        this.#q.deleteTask.run(id);
      }
      return doomed.length;
    });
  }

  async putPushConfig(config: PushConfig, maxPerTask?: number): Promise<boolean> {
    return this.#writes.run(() => {
      if (maxPerTask !== undefined && !this.#q.getPushConfig.get(config.taskId, config.id)) {
        const row = this.#q.taskPushConfigs.get(config.taskId) as { push_configs: number } | undefined;
        if ((row?.push_configs ?? 0) >= maxPerTask) return false;
      }
      this.#q.putPushConfig.run(toPushConfigRow(config));
      this.#countPushConfigs(config.taskId);
      return true;
    });
  }

  async getPushConfig(taskId: string, id: string): Promise<PushConfig | undefined> {
    const row = this.#q.getPushConfig.get(taskId, id) as PushConfigRow | undefined;
    return row && toPushConfig(row);
  }

  async listPushConfigs(taskId: string): Promise<PushConfig[]> {
    return (this.#q.listPushConfigs.all(taskId) as PushConfigRow[]).map(toPushConfig);
  }

  async countActivePushConfigs(owner: string, now: number): Promise<number> {
    return (this.#q.countActivePushConfigs.get(owner, now) as { n: number }).n;
  }

  async deletePushConfig(taskId: string, id: string): Promise<boolean> {
    return this.#writes.run(() => {
      if (this.#q.deletePushConfig.run(taskId, id).changes === 0) return false;
      this.#q.deleteConfigNotifications.run(taskId, id);
      this.#countPushConfigs(taskId);
      return true;
    });
  }

  async claimNotifications(now: number, leaseMs: number, limit: number): Promise<PendingNotification[]> {
    return this.#writes.run(() =>
      (this.#q.dueNotifications.all({ now, limit }) as NotificationRow[]).map((r) => {
        this.#q.leaseNotification.run({
          task_id: r.task_id,
          config_id: r.config_id,
          seq: r.seq,
          until: now + leaseMs,
        });
        // Read before the lease counted this attempt.
        return toPendingNotification({ ...r, attempts: r.attempts + 1 });
      }),
    );
  }

  async settleNotification(
    key: NotificationKey,
    outcome: DeliveryOutcome,
    attempt?: AttemptRecord,
  ): Promise<void> {
    const where = { task_id: key.taskId, config_id: key.configId, seq: key.seq };
    await this.#writes.run(() => {
      if (attempt) this.operator.recordAttempt(key, outcome, attempt);
      if (outcome.kind === 'delivered') this.#q.deliveredNotification.run(key.taskId, key.configId, key.seq);
      else if (outcome.kind === 'retry')
        this.#q.retryNotification.run({ ...where, at: outcome.at, error: outcome.error });
      else this.#q.deadNotification.run({ ...where, at: outcome.at, error: outcome.error });
    });
  }

  /** One process owns the file (one connection, group commit): nobody else changes it. */
  watch(_listener: (change: StoreChange) => void): () => void {
    return () => {};
  }

  stats(): Promise<StoreStats> {
    return this.#stats.read();
  }

  async ping(): Promise<void> {
    this.#q.ping.get();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#optimizer);
    this.#writes.flushNow();
    await this.#checkpointer?.close();
    await this.#wal?.sync();
    this.#wal?.close();
    this.#db.close();
    this.#lock?.release();
  }

  /** Logs events of a task, with the notifications they owe its webhooks, if it has any. */
  #insertEvents(task: TaskRow, firstSeq: number, at: number, events: readonly TaskEvent[]): LoggedEvent[] {
    const taskId = task.id;
    return events.map((event, i) => {
      const seq = firstSeq + i;
      this.#q.insertEvent.run(taskId, seq, event.kind, at, JSON.stringify(event));
      if (task.push_configs > 0) {
        const notable = notifiesByDefault(event) ? 1 : 0;
        this.#q.queueNotifications.run({ task_id: taskId, seq, at, notable });
      }
      return { taskId, seq, at, event };
    });
  }

  /** Adds a write's artifact bytes to its owner's total, refusing it past the quota. */
  #addStoredBytes(storage: NonNullable<GuardedWrite['storage']>): void {
    const { bytes } = this.#q.addStoredBytes.get(storage.owner, storage.bytes) as { bytes: number };
    refuseOverQuota(bytes, storage);
  }

  /** Recounts the task's webhooks in its row (one statement: the count comes back with RETURNING). */
  #countPushConfigs(taskId: string): number {
    const row = this.#q.countPushConfigs.get({ id: taskId }) as { push_configs: number } | undefined;
    return row?.push_configs ?? 0;
  }
}

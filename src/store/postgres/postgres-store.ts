import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { LoggedEvent, TaskEvent } from '../../engine/events.js';
import { type ClaimPolicy, pickFair, type RunningCount } from '../../engine/fair-share.js';
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
import type { TaskRecord } from '../../engine/task.js';
import { blobPieces, refuseOverQuota } from '../blobs.js';
import { decodeCursor } from '../cursor.js';
import {
  type EventRow,
  json,
  type NotificationRow,
  type PushConfigRow,
  type QueuedRow,
  type StampRow,
  type TaskRow,
  toLogged,
  toPage,
  toPendingNotification,
  toPushConfig,
  toQueued,
  toRecord,
  toStamp,
} from '../rows.js';
import { ChangeFeed, notice } from './change-feed.js';
import { type CountsRow, toQueueCounts } from './counts.js';
import { createTasks } from './create-batch.js';
import { connectionConfig, Db, type Queryable } from './db.js';
import { migrate } from './migrations.js';
import { PostgresOperator } from './operator.js';
import { encode, logged, pushValues } from './params.js';
import { beginClaim, STATEMENTS as Q } from './statements.js';
import { readStats } from './stats.js';
import { TurnBatch } from './turn-batch.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq-style parameters in the query string). */
  url: string;
  /** The schema that holds the tables; instances sharing it form one cluster. */
  schema: string;
  /** Connections of this instance's pool. */
  poolMax: number;
  logger?: Logger;
}

const WORKING_STATUS = JSON.stringify({ kind: 'status', state: 'working' } satisfies TaskEvent);

/**
 * The store for more than one instance: every instance opens it on the same database and schema.
 * Claims of tasks and notifications use `FOR UPDATE SKIP LOCKED` under leases, so each is worked on
 * by one instance at a time; writes announce themselves with NOTIFY so that streams and waits on
 * other instances wake at once (see {@link ChangeFeed}).
 */
export class PostgresStore implements TaskStore {
  readonly #db: Db;
  readonly #feed: ChangeFeed;
  readonly #channel: string;
  /** Opens a claim's transaction under the cluster's claim lock, in one round trip (statements.ts). */
  readonly #beginClaim: string;
  /** The operator console's reads and deliver-again (operator.ts); the store records attempts through it too. */
  readonly operator: PostgresOperator;
  /** Tells this instance's notices from the others'. */
  readonly #instance = randomUUID().slice(0, 8);
  /** The server's max_connections: the most creates that can be in flight at once, cluster-wide. */
  #maxConnections = 0;
  #closed: Promise<void> | undefined;
  /** Polls' stamp reads, sent many to a statement (turn-batch.ts). */
  readonly #stamps = new TurnBatch((reads: StampRead[]) => this.#readStamps(reads));
  /** Creates, many to a statement (create-batch.ts), each answered with its own outcome. */
  readonly #creates = new TurnBatch((tasks: NewTask[]) => createTasks(this.#db, this.#maxConnections, tasks));

  private constructor(o: PostgresOptions) {
    const config = connectionConfig(o.url, o.schema);
    this.#db = new Db(config, o.poolMax, o.logger);
    this.#channel = `taskhandle_${o.schema}`;
    this.#beginClaim = beginClaim(o.schema);
    this.#feed = new ChangeFeed(config, this.#channel, this.#instance, o.logger);
    this.operator = new PostgresOperator(this.#db);
  }

  /** Connects, migrates the schema (under an advisory lock) and starts hearing other instances. */
  static async open(o: PostgresOptions): Promise<PostgresStore> {
    const store = new PostgresStore(o);
    try {
      const client = await store.#db.pool.connect();
      try {
        await migrate(client, o.schema);
        const { rows } = await client.query<{ max_connections: string }>('SHOW max_connections');
        store.#maxConnections = Number(rows[0]?.max_connections);
      } finally {
        client.release();
      }
      await store.#feed.start();
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  async createTask(task: NewTask): Promise<Created> {
    const settled = await this.#creates.add(task);
    if (!settled.ok) throw settled.error;
    return settled.value;
  }

  async findByMessageId(owner: string, messageId: string): Promise<TaskRecord | undefined> {
    const row = await this.#db.one<TaskRow>(Q.findByMessageId, [owner, messageId]);
    return row && toRecord(row);
  }

  async write(w: GuardedWrite, dedupe?: MessageKey): Promise<WriteResult | undefined> {
    const events = encode(w.events);
    const lastStatus = w.events.findLast((e) => e.kind === 'status');
    const values = [
      w.taskId,
      w.from,
      w.to ?? null,
      w.to ? json(w.statusMessage) : null,
      w.progress ? json(w.progress) : null,
      w.pollIntervalMs ?? null,
      w.leaseToken ?? null,
      w.releaseLease === true,
      w.events.length,
      w.at,
      w.approvers?.length ? JSON.stringify(w.approvers) : null,
      w.inputDeadline ?? null,
      events.kinds,
      events.payloads,
      w.events.flatMap((e, i) => (notifiesByDefault(e) ? [i + 1] : [])),
      this.#channel,
      notice.events(this.#instance, w.taskId, lastStatus?.kind === 'status' ? lastStatus.state : undefined),
      w.storage?.bytes ?? 0,
      w.approver ?? null,
      w.retry?.runAfter ?? null,
      w.retry?.reason ?? null,
      w.generation ?? null,
      w.storage?.owner ?? null,
      w.storage?.quota ?? null,
    ];
    const written = (row: TaskRow | undefined): WriteResult | undefined =>
      row && { record: toRecord(row), events: logged(row, row.last_seq - w.events.length + 1, w.events) };
    // The artifact bytes' accounting and quota are in the statement itself: a write that neither
    // dedupes nor stores pieces is one round trip (a job's ending with its artifact, most often).
    if (!dedupe && !w.blobs?.length && !w.dropBlobs?.length) {
      return written(await overQuotaRefused(this.#db.one<TaskRow>(Q.guardedWrite, values), w.storage));
    }
    const refused = Symbol('refused');
    try {
      return await this.#db.transaction(async (client) => {
        if (dedupe) {
          // The message id first: a concurrent delivery of the same message waits here, then sees it taken.
          const taken = await client.query({
            ...Q.insertMessageId,
            values: [dedupe.owner, dedupe.messageId, w.taskId],
          });
          if (taken.rowCount === 0) {
            const existing = await client.query<TaskRow>({
              ...Q.findByMessageId,
              values: [dedupe.owner, dedupe.messageId],
            });
            const row = existing.rows[0];
            if (!row) throw new Error(`message id ${dedupe.messageId} names a task that no longer exists`);
            return { record: toRecord(row), events: [], duplicate: true };
          }
        }
        const result = written(
          await overQuotaRefused(one<TaskRow>(client, Q.guardedWrite, values), w.storage),
        );
        // A refused write rolls back: the message is not recorded as delivered.
        if (!result) throw refused;
        if (w.dropBlobs?.length) {
          await client.query({ ...Q.deleteEventBlobPieces, values: [w.taskId, w.dropBlobs] });
        }
        const firstSeq = result.record.lastSeq - w.events.length + 1;
        for (const p of blobPieces(w.events, firstSeq, w.blobs ?? [])) {
          await client.query({ ...Q.insertBlobPiece, values: [w.taskId, p.seq, p.part, p.piece, p.data] });
        }
        return result;
      });
    } catch (err) {
      if (err === refused) return undefined;
      throw err;
    }
  }

  async getTask(id: string, now: number): Promise<TaskRecord | undefined> {
    const row = await this.#db.one<TaskRow>(Q.getTask, [id, now]);
    return row && toRecord(row);
  }

  getTaskStamp(id: string, now: number, queue?: StampQueue): Promise<TaskStamp | undefined> {
    return this.#stamps.add({ id, now, queue });
  }

  /** One batch of stamp reads: one statement, each row matched back to its read by position. */
  async #readStamps(reads: StampRead[]): Promise<(TaskStamp | undefined)[]> {
    // ord is a bigint: a number here, as every bigint the store reads (db.ts).
    const rows = await this.#db.query<StampRow & CountsRow & { ord: number }>(Q.getTaskStamps, [
      reads.map((r) => r.id),
      reads.map((r) => r.now),
      reads.map((r) => r.queue?.owner ?? null),
      reads.map((r) => r.queue?.cap ?? null),
    ]);
    const stamps: (TaskStamp | undefined)[] = new Array(reads.length).fill(undefined);
    for (const row of rows)
      stamps[row.ord - 1] = toStamp(row, row.ahead === null ? undefined : toQueueCounts(row));
    return stamps;
  }

  async getTaskWithLog(
    id: string,
    now: number,
    owner?: string,
    activeOnly = false,
  ): Promise<{ record: TaskRecord; log: LoggedEvent[] } | undefined> {
    const row = await this.#db.one<TaskRow & { log: string | null }>(Q.getTaskWithLog, [
      id,
      now,
      owner ?? null,
      activeOnly,
    ]);
    if (!row) return undefined;
    return { record: toRecord(row), log: parseLog(id, row.log) };
  }

  async readBlobPiece(taskId: string, seq: number, part: number, piece: number): Promise<Buffer | undefined> {
    // In binary format: text would hex-encode the piece on the server and decode it here (3x slower).
    const query: pg.QueryConfig & { binary: boolean } = {
      ...Q.readBlobPiece,
      values: [taskId, seq, part, piece],
      binary: true,
    };
    const { rows } = await this.#db.pool.query<{ data: Buffer }>(query);
    return rows[0]?.data;
  }

  async listTasks(f: ListFilter): Promise<ListPage> {
    const cursor = f.pageToken ? decodeCursor(f.pageToken) : undefined;
    const where = [f.owner, f.now, f.contextId ?? null, f.state ?? null, f.statusAfter ?? null];
    const counted = f.queueCap !== undefined;
    const [rows, count] = await Promise.all([
      this.#db.query<TaskRow & Partial<CountsRow>>(counted ? Q.listTasksCounted : Q.listTasks, [
        ...where,
        cursor?.at ?? null,
        cursor?.id ?? null,
        f.pageSize + 1,
        ...(counted ? [f.queueCap] : []),
      ]),
      this.#db.one<{ total: number }>(Q.countTasks, where),
    ]);
    const page = toPage(rows, f.pageSize, count?.total ?? 0);
    if (!counted) return page;
    const queued = new Map<string, QueueCounts>();
    for (const row of rows.slice(0, f.pageSize)) {
      if (row.state === 'submitted' && row.ahead != null) queued.set(row.id, toQueueCounts(row as CountsRow));
    }
    return queued.size > 0 ? { ...page, queued } : page;
  }

  async readEvents(taskId: string, afterSeq: number, limit: number): Promise<LoggedEvent[]> {
    const rows = await this.#db.query<EventRow>(Q.readEvents, [taskId, afterSeq, limit]);
    return rows.map((e) => toLogged(taskId, e));
  }

  async claim(
    workerId: string,
    now: number,
    leaseMs: number,
    limit: number,
    policy: ClaimPolicy = {},
    skills?: SkillFilter,
  ): Promise<ClaimedTask[]> {
    const until = now + leaseMs;
    const filter = skillLists(skills);
    // Takeovers first: their tasks were accepted before anything still queued.
    const orphans = await this.#db.query<TaskRow & { lease_token: string }>(Q.claimOrphans, [
      now,
      limit,
      workerId,
      until,
      ...filter,
    ]);
    const claimed: ClaimedTask[] = orphans.map((row) => ({
      record: toRecord(row),
      leaseToken: row.lease_token,
      interrupted: true,
      events: [],
    }));
    const slots = limit - claimed.length;
    if (slots <= 0) return claimed;
    const claimQueued = async (client: Queryable) => {
      const view = await one<{ queued: string; running: string; turns: string }>(client, Q.claimView, [
        now,
        slots,
        ...filter,
      ]);
      const candidates = (JSON.parse(view?.queued ?? '[]') as QueuedRow[]).map(toQueued);
      if (candidates.length === 0) return [];
      const turns = JSON.parse(view?.turns ?? '[]') as { key: string; last_at: number }[];
      const lastAt = new Map(turns.map((t) => [t.key, Number(t.last_at)]));
      const running = JSON.parse(view?.running ?? '[]') as RunningCount[];
      const picked = pickFair(candidates, running, policy, slots, lastAt);
      if (picked.length === 0) return [];
      const values = [
        now,
        picked.map((t) => t.id),
        workerId,
        until,
        WORKING_STATUS,
        this.#channel,
        notice.eventsPrefix(this.#instance),
      ];
      return (
        await client.query<TaskRow & { lease_token: string; log: string | null }>({
          ...Q.claimQueued,
          values,
        })
      ).rows;
    };
    // Read and claim under the cluster's claim lock: each claim counts what the one before it
    // started (the limits hold across instances) and picks among the tasks still queued (claims
    // side by side would all pick the same heads, and all but one get fewer).
    const queued = await this.#db.transaction(claimQueued, this.#beginClaim);
    for (const row of queued) {
      const events: LoggedEvent[] = [
        { taskId: row.id, seq: row.last_seq, at: now, event: JSON.parse(WORKING_STATUS) },
      ];
      claimed.push({
        record: toRecord(row),
        leaseToken: row.lease_token,
        interrupted: false,
        events,
        log: [...parseLog(row.id, row.log), ...events],
      });
    }
    return claimed;
  }

  async queueCounts(
    task: Pick<TaskRecord, 'id' | 'owner' | 'tenant' | 'skill' | 'queueAt'>,
    now: number,
    cap: number,
  ): Promise<QueueCounts> {
    const r = await this.#db.one<CountsRow>(Q.queueCounts, [
      task.id,
      task.owner,
      task.queueAt,
      now,
      task.tenant,
      cap,
      task.skill,
    ]);
    return toQueueCounts(r ?? { ahead: null, running: null });
  }

  async renewLease(taskId: string, leaseToken: string, now: number, until: number): Promise<LeaseStatus> {
    const row = await this.#db.one<{ cancel_requested: number }>(Q.renewLease, [
      taskId,
      leaseToken,
      now,
      until,
    ]);
    return { held: row !== undefined, cancelRequested: row?.cancel_requested === 1 };
  }

  async releaseLease(taskId: string, leaseToken: string): Promise<void> {
    await this.#db.query(Q.releaseLease, [taskId, leaseToken]);
  }

  async requestCancel(taskId: string, generation?: number): Promise<boolean> {
    const marked = await this.#db.query(Q.requestCancel, [
      taskId,
      this.#channel,
      notice.cancel(this.#instance, taskId),
      generation ?? null,
    ]);
    return marked.length > 0;
  }

  async listWaiting(
    owner: string,
    approverName: string | undefined,
    now: number,
    limit: number,
  ): Promise<TaskRecord[]> {
    return (await this.#db.query<TaskRow>(Q.waiting, [owner, approverName ?? null, now, limit])).map(
      toRecord,
    );
  }

  async overdueInputs(now: number, limit: number): Promise<TaskRecord[]> {
    return (await this.#db.query<TaskRow>(Q.overdueInputs, [now, limit])).map(toRecord);
  }

  async forgetTurns(before: number): Promise<number> {
    return (await this.#db.query(Q.forgetTurns, [before])).length;
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return (await this.#db.query(Q.deleteExpired, [now, limit])).length;
  }

  async putPushConfig(config: PushConfig, maxPerTask?: number): Promise<boolean> {
    return this.#db.transaction(async (client) => {
      const locked = await client.query<{ push_configs: number }>({ ...Q.lockTask, values: [config.taskId] });
      if (maxPerTask !== undefined && (locked.rows[0]?.push_configs ?? 0) >= maxPerTask) {
        const existing = await client.query({ ...Q.getPushConfig, values: [config.taskId, config.id] });
        if (existing.rowCount === 0) return false;
      }
      await client.query({ ...Q.putPushConfig, values: pushValues(config) });
      await client.query({ ...Q.countPushConfigs, values: [config.taskId] });
      return true;
    });
  }

  async getPushConfig(taskId: string, id: string): Promise<PushConfig | undefined> {
    const row = await this.#db.one<PushConfigRow>(Q.getPushConfig, [taskId, id]);
    return row && toPushConfig(row);
  }

  async listPushConfigs(taskId: string): Promise<PushConfig[]> {
    return (await this.#db.query<PushConfigRow>(Q.listPushConfigs, [taskId])).map(toPushConfig);
  }

  async countActivePushConfigs(owner: string, now: number): Promise<number> {
    return Number((await this.#db.one<{ n: string }>(Q.countActivePushConfigs, [owner, now]))?.n ?? 0);
  }

  async deletePushConfig(taskId: string, id: string): Promise<boolean> {
    return this.#db.transaction(async (client) => {
      await client.query({ ...Q.lockTask, values: [taskId] });
      const deleted = await client.query({ ...Q.deletePushConfig, values: [taskId, id] });
      if (deleted.rowCount === 0) return false;
      await client.query({ ...Q.deleteConfigNotifications, values: [taskId, id] });
      await client.query({ ...Q.countPushConfigs, values: [taskId] });
      return true;
    });
  }

  async claimNotifications(now: number, leaseMs: number, limit: number): Promise<PendingNotification[]> {
    const rows = await this.#db.query<NotificationRow>(Q.claimNotifications, [now, limit, now + leaseMs]);
    // Counted by the claim itself: this attempt included.
    return rows.map(toPendingNotification);
  }

  async settleNotification(
    key: NotificationKey,
    outcome: DeliveryOutcome,
    attempt?: AttemptRecord,
  ): Promise<void> {
    const where = [key.taskId, key.configId, key.seq];
    await this.#db.maybeTransaction(attempt !== undefined, async (client) => {
      if (outcome.kind === 'delivered') await client.query({ ...Q.deliveredNotification, values: where });
      else if (outcome.kind === 'retry')
        await client.query({ ...Q.retryNotification, values: [...where, outcome.at, outcome.error] });
      else await client.query({ ...Q.deadNotification, values: [...where, outcome.at, outcome.error] });
      if (attempt) await this.operator.recordAttempt(client, key, outcome, attempt);
    });
  }

  watch(listener: (change: StoreChange) => void): () => void {
    return this.#feed.watch(listener);
  }

  stats(): Promise<StoreStats> {
    return readStats(this.#db);
  }

  async ping(): Promise<void> {
    await this.#db.query(Q.ping, []);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#feed.close();
      await this.#db.end();
    })();
    return this.#closed;
  }
}

/** One row of a named statement, on a pool or a transaction's connection. */
async function one<R extends pg.QueryResultRow>(
  client: Queryable,
  statement: { name: string; text: string },
  values: unknown[],
): Promise<R | undefined> {
  return (await client.query<R>({ ...statement, values })).rows[0];
}

/** A log as the statements build it (statements.ts, logOf): one JSON array text, or null for none. */
function parseLog(taskId: string, text: string | null): LoggedEvent[] {
  const entries = text ? (JSON.parse(text) as Omit<LoggedEvent, 'taskId'>[]) : [];
  return entries.map((e) => ({ taskId, ...e }));
}

/** The SQLSTATE of refused_over_quota (migration 9): the write's statement found its owner past the quota. */
const OVER_QUOTA = 'THQ01';

/** The guarded write's statement, its quota refusal (the owner's new total in its detail) as QuotaExceeded. */
async function overQuotaRefused<T>(statement: Promise<T>, storage: GuardedWrite['storage']): Promise<T> {
  try {
    return await statement;
  } catch (err) {
    if (storage && (err as { code?: unknown }).code === OVER_QUOTA)
      refuseOverQuota(Number((err as { detail?: unknown }).detail), storage);
    throw err;
  }
}

/** One poll's stamp read: its task, its clock, and whose counts it may carry. */
interface StampRead {
  id: string;
  now: number;
  queue: StampQueue | undefined;
}

/** A claim's skill filter as the statements' two text[] parameters (`only`, `except`), each null if not given. */
function skillLists(filter: SkillFilter | undefined): [readonly string[] | null, readonly string[] | null] {
  return [
    filter && 'only' in filter ? filter.only : null,
    filter && 'except' in filter ? filter.except : null,
  ];
}

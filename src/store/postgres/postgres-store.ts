import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { EngineError } from '../../engine/errors.js';
import type { LoggedEvent, TaskEvent } from '../../engine/events.js';
import {
  type DeliveryOutcome,
  type NotificationKey,
  notifiesByDefault,
  type PendingNotification,
  type PushConfig,
} from '../../engine/push.js';
import type { TaskRecord } from '../../engine/task.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type {
  ClaimedTask,
  GuardedWrite,
  LeaseStatus,
  ListFilter,
  ListPage,
  MessageKey,
  NewTask,
  StoreChange,
  TaskStamp,
  TaskStore,
  WriteResult,
} from '../port.js';
import {
  type EventRow,
  json,
  type NotificationRow,
  type PushConfigRow,
  type TaskRow,
  toPushConfig,
  toPushConfigRow,
  toRecord,
} from '../rows.js';
import { ChangeFeed, notice } from './change-feed.js';
import { migrate } from './migrations.js';
import { STATEMENTS as Q, type Statement } from './statements.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq-style parameters in the query string). */
  url: string;
  /** The schema that holds the tables; instances sharing it form one cluster. */
  schema: string;
  /** Connections of this instance's pool. */
  poolMax: number;
  logger?: Logger;
}

const PG_INT8 = 20;
/** Times are Unix milliseconds in bigint columns: well inside Number's exact range. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === PG_INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const CONNECT_TIMEOUT_MS = 10_000;

const WORKING_STATUS = JSON.stringify({ kind: 'status', state: 'working' } satisfies TaskEvent);

/**
 * The store for more than one instance: every instance opens it on the same database and schema.
 * Claims of tasks and notifications use `FOR UPDATE SKIP LOCKED` under leases, so each is worked on
 * by one instance at a time; writes announce themselves with NOTIFY so that streams and waits on
 * other instances wake at once (see {@link ChangeFeed}).
 */
export class PostgresStore implements TaskStore {
  readonly #pool: pg.Pool;
  readonly #feed: ChangeFeed;
  readonly #channel: string;
  /** Tells this instance's notices from the others'. */
  readonly #instance = randomUUID().slice(0, 8);
  /** The server's max_connections: the most creates that can be in flight at once, cluster-wide. */
  #maxConnections = 0;
  #closed: Promise<void> | undefined;

  private constructor(o: PostgresOptions) {
    const config: pg.PoolConfig = {
      connectionString: o.url,
      // Unquoted: the schema name is [a-z0-9_] (config), so it needs no escaping here.
      options: `-c search_path=${o.schema}`,
      types,
      application_name: 'taskhandle',
      // An unreachable server fails the start (or a request) instead of hanging it.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    };
    this.#pool = new pg.Pool({ ...config, max: o.poolMax });
    // An idle connection that breaks (server restart) is dropped by the pool; the next query opens a new one.
    this.#pool.on('error', (err) => o.logger?.warn({ err }, 'store: an idle connection failed'));
    this.#channel = `taskhandle_${o.schema}`;
    this.#feed = new ChangeFeed(config, this.#channel, this.#instance, o.logger);
  }

  /** Connects, migrates the schema (under an advisory lock) and starts hearing other instances. */
  static async open(o: PostgresOptions): Promise<PostgresStore> {
    const store = new PostgresStore(o);
    try {
      const client = await store.#pool.connect();
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

  async createTask(task: NewTask): Promise<{ result: WriteResult; created: boolean }> {
    const events = encode(task.events);
    for (let attempt = 0; attempt < 3; attempt++) {
      // First without a lock, refusing if within max_connections of the limit: however many creates
      // run at once, they cannot pass it together. Near the limit, one at a time per owner.
      let outcome = await this.#insertTask(task, events, false);
      if (outcome.kind === 'near-limit') outcome = await this.#insertTask(task, events, true);
      if (outcome.kind === 'created') return { result: outcome.result, created: true };
      const existing = await this.findByMessageId(task.owner, task.messageId);
      if (existing && existing.expiresAt > task.createdAt) {
        return { result: { record: existing, events: [] }, created: false };
      }
      if (existing) {
        // The task this message made has expired and waits for the sweeper: the messageId is free again.
        await this.#query(Q.forgetMessageId, [task.owner, task.messageId, existing.id]);
        continue;
      }
      if (outcome.kind === 'too-many') {
        throw new EngineError(
          'too-many-tasks',
          `You have ${outcome.active} unfinished tasks, the most allowed; wait for one to end`,
        );
      }
      // The message id was taken by a create that then failed or was swept: try again.
    }
    throw new Error(`createTask: message id ${task.messageId} kept changing hands`);
  }

  async #insertTask(
    task: NewTask,
    events: Encoded,
    locked: boolean,
  ): Promise<
    | { kind: 'created'; result: WriteResult }
    | { kind: 'taken' }
    | { kind: 'too-many'; active: number }
    | { kind: 'near-limit' }
  > {
    const max = task.maxActive;
    const slack = locked || max === undefined ? 0 : this.#maxConnections;
    const values = [
      task.id,
      task.contextId,
      task.owner,
      task.skill,
      json(task.input),
      json(task.metadata),
      task.createdAt,
      task.expiresAt,
      task.ttlMs,
      task.pollIntervalMs,
      task.messageId,
      events.kinds,
      events.payloads,
      max ?? null,
      slack,
    ];
    const configs = task.pushConfigs ?? [];
    const transaction = locked || configs.length > 0;
    const row = await this.#maybeTransaction(transaction, async (client) => {
      if (locked) await client.query(Q.lockOwner.text, [task.owner]);
      const r = (await client.query<TaskRow & { active: number }>({ ...Q.createTask, values })).rows[0];
      if (!r || r.id === null || configs.length === 0) return r;
      for (const config of configs) await client.query({ ...Q.putPushConfig, values: pushValues(config) });
      const seqs = task.events.map((_, i) => i + 1);
      const notable = task.events.map((e) => (notifiesByDefault(e) ? 1 : 0));
      await client.query({ ...Q.queueNotifications, values: [task.id, task.createdAt, seqs, notable] });
      const counted = await client.query<{ push_configs: number }>({
        ...Q.countPushConfigs,
        values: [task.id],
      });
      return { ...r, push_configs: counted.rows[0]?.push_configs ?? 0 };
    });
    if (row && row.id !== null) {
      return { kind: 'created', result: { record: toRecord(row), events: logged(row, 1, task.events) } };
    }
    const active = row?.active ?? 0;
    if (max === undefined || active + slack < max) return { kind: 'taken' };
    return active >= max ? { kind: 'too-many', active } : { kind: 'near-limit' };
  }

  async findByMessageId(owner: string, messageId: string): Promise<TaskRecord | undefined> {
    const row = await this.#one<TaskRow>(Q.findByMessageId, [owner, messageId]);
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
    ];
    const written = (row: TaskRow | undefined): WriteResult | undefined =>
      row && { record: toRecord(row), events: logged(row, row.last_seq - w.events.length + 1, w.events) };
    if (!dedupe) return written(await this.#one<TaskRow>(Q.guardedWrite, values));
    return this.#transaction(async (client) => {
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
      const result = written((await client.query<TaskRow>({ ...Q.guardedWrite, values })).rows[0]);
      // A refused write must not record the message as delivered.
      if (!result) await client.query('ROLLBACK TO SAVEPOINT written');
      return result;
    }, 'written');
  }

  async getTask(id: string, now: number): Promise<TaskRecord | undefined> {
    const row = await this.#one<TaskRow>(Q.getTask, [id, now]);
    return row && toRecord(row);
  }

  async getTaskStamp(id: string, now: number): Promise<TaskStamp | undefined> {
    const row = await this.#one<{ owner: string; last_seq: number; updated_at: number }>(Q.getTaskStamp, [
      id,
      now,
    ]);
    return row && { owner: row.owner, lastSeq: row.last_seq, updatedAt: row.updated_at };
  }

  async getTaskWithLog(
    id: string,
    now: number,
  ): Promise<{ record: TaskRecord; log: LoggedEvent[] } | undefined> {
    const row = await this.#one<TaskRow & { log: string | null }>(Q.getTaskWithLog, [id, now]);
    if (!row) return undefined;
    const entries = row.log ? (JSON.parse(row.log) as Omit<LoggedEvent, 'taskId'>[]) : [];
    return { record: toRecord(row), log: entries.map((e) => ({ taskId: id, ...e })) };
  }

  async listTasks(f: ListFilter): Promise<ListPage> {
    const cursor = f.pageToken ? decodeCursor(f.pageToken) : undefined;
    const where = [f.owner, f.now, f.contextId ?? null, f.state ?? null, f.statusAfter ?? null];
    const [rows, count] = await Promise.all([
      this.#query<TaskRow>(Q.listTasks, [...where, cursor?.at ?? null, cursor?.id ?? null, f.pageSize + 1]),
      this.#one<{ total: number }>(Q.countTasks, where),
    ]);
    const page = rows.slice(0, f.pageSize);
    const last = page.at(-1);
    const nextPageToken = rows.length > f.pageSize && last ? encodeCursor(last.updated_at, last.id) : '';
    return { records: page.map(toRecord), nextPageToken, totalSize: count?.total ?? 0 };
  }

  async readEvents(taskId: string, afterSeq: number, limit: number): Promise<LoggedEvent[]> {
    const rows = await this.#query<EventRow>(Q.readEvents, [taskId, afterSeq, limit]);
    return rows.map((e) => ({ taskId, seq: e.seq, at: e.at, event: JSON.parse(e.payload) as TaskEvent }));
  }

  async claim(workerId: string, now: number, leaseMs: number, limit: number): Promise<ClaimedTask[]> {
    const until = now + leaseMs;
    // Takeovers first: their tasks were accepted before anything still queued.
    const orphans = await this.#query<TaskRow & { lease_token: string }>(Q.claimOrphans, [
      now,
      limit,
      workerId,
      until,
    ]);
    const claimed: ClaimedTask[] = orphans.map((row) => ({
      record: toRecord(row),
      leaseToken: row.lease_token,
      interrupted: true,
      events: [],
    }));
    if (claimed.length >= limit) return claimed;
    const queued = await this.#query<TaskRow & { lease_token: string }>(Q.claimQueued, [
      now,
      limit - claimed.length,
      workerId,
      until,
      WORKING_STATUS,
      this.#channel,
      notice.eventsPrefix(this.#instance),
    ]);
    for (const row of queued) {
      claimed.push({
        record: toRecord(row),
        leaseToken: row.lease_token,
        interrupted: false,
        events: [{ taskId: row.id, seq: row.last_seq, at: now, event: JSON.parse(WORKING_STATUS) }],
      });
    }
    return claimed;
  }

  async renewLease(taskId: string, leaseToken: string, now: number, until: number): Promise<LeaseStatus> {
    const row = await this.#one<{ cancel_requested: number }>(Q.renewLease, [taskId, leaseToken, now, until]);
    return { held: row !== undefined, cancelRequested: row?.cancel_requested === 1 };
  }

  async releaseLease(taskId: string, leaseToken: string): Promise<void> {
    await this.#query(Q.releaseLease, [taskId, leaseToken]);
  }

  async requestCancel(taskId: string): Promise<void> {
    await this.#query(Q.requestCancel, [taskId, this.#channel, notice.cancel(this.#instance, taskId)]);
  }

  async listWaiting(
    owner: string,
    approverName: string | undefined,
    now: number,
    limit: number,
  ): Promise<TaskRecord[]> {
    return (await this.#query<TaskRow>(Q.waiting, [owner, approverName ?? null, now, limit])).map(toRecord);
  }

  async overdueInputs(now: number, limit: number): Promise<TaskRecord[]> {
    return (await this.#query<TaskRow>(Q.overdueInputs, [now, limit])).map(toRecord);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    return (await this.#query(Q.deleteExpired, [now, limit])).length;
  }

  async putPushConfig(config: PushConfig): Promise<void> {
    await this.#transaction(async (client) => {
      await client.query({ ...Q.lockTask, values: [config.taskId] });
      await client.query({ ...Q.putPushConfig, values: pushValues(config) });
      await client.query({ ...Q.countPushConfigs, values: [config.taskId] });
    });
  }

  async getPushConfig(taskId: string, id: string): Promise<PushConfig | undefined> {
    const row = await this.#one<PushConfigRow>(Q.getPushConfig, [taskId, id]);
    return row && toPushConfig(row);
  }

  async listPushConfigs(taskId: string): Promise<PushConfig[]> {
    return (await this.#query<PushConfigRow>(Q.listPushConfigs, [taskId])).map(toPushConfig);
  }

  async deletePushConfig(taskId: string, id: string): Promise<boolean> {
    return this.#transaction(async (client) => {
      await client.query({ ...Q.lockTask, values: [taskId] });
      const deleted = await client.query({ ...Q.deletePushConfig, values: [taskId, id] });
      if (deleted.rowCount === 0) return false;
      await client.query({ ...Q.deleteConfigNotifications, values: [taskId, id] });
      await client.query({ ...Q.countPushConfigs, values: [taskId] });
      return true;
    });
  }

  async claimNotifications(now: number, leaseMs: number, limit: number): Promise<PendingNotification[]> {
    const rows = await this.#query<NotificationRow>(Q.claimNotifications, [now, limit, now + leaseMs]);
    return rows.map((r) => ({
      taskId: r.task_id,
      configId: r.config_id,
      seq: r.seq,
      createdAt: r.n_created_at,
      // Counted by the claim itself: this attempt included.
      attempts: r.attempts,
      config: toPushConfig(r),
    }));
  }

  async settleNotification(key: NotificationKey, outcome: DeliveryOutcome): Promise<void> {
    const where = [key.taskId, key.configId, key.seq];
    if (outcome.kind === 'delivered') await this.#query(Q.deliveredNotification, where);
    else if (outcome.kind === 'retry')
      await this.#query(Q.retryNotification, [...where, outcome.at, outcome.error]);
    else await this.#query(Q.deadNotification, [...where, outcome.at, outcome.error]);
  }

  watch(listener: (change: StoreChange) => void): () => void {
    return this.#feed.watch(listener);
  }

  async ping(): Promise<void> {
    await this.#query(Q.ping, []);
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#feed.close();
      await this.#pool.end();
    })();
    return this.#closed;
  }

  async #query<R extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<R[]> {
    return (await this.#pool.query<R>({ ...statement, values })).rows;
  }

  async #one<R extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<R | undefined> {
    return (await this.#query<R>(statement, values))[0];
  }

  /** Runs `work` in a transaction on one connection; with `savepoint`, one is set after BEGIN. */
  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>, savepoint?: string): Promise<T> {
    const client = await this.#pool.connect();
    let broken = false;
    try {
      await client.query(savepoint ? `BEGIN; SAVEPOINT ${savepoint}` : 'BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      // A connection that could not even roll back is closed, not handed to the next caller.
      client.release(broken);
    }
  }

  /** A single statement needs no transaction of its own; several do. */
  #maybeTransaction<T>(transaction: boolean, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    if (transaction) return this.#transaction(work);
    return work(this.#pool as unknown as pg.ClientBase);
  }
}

interface Encoded {
  kinds: string[];
  payloads: string[];
}

/** Serialized before any SQL runs: an event that cannot be stored fails the write with nothing written. */
const encode = (events: readonly TaskEvent[]): Encoded => ({
  kinds: events.map((e) => e.kind),
  payloads: events.map((e) => JSON.stringify(e)),
});

const logged = (row: TaskRow, firstSeq: number, events: readonly TaskEvent[]): LoggedEvent[] =>
  events.map((event, i) => ({ taskId: row.id, seq: firstSeq + i, at: row.updated_at, event }));

const pushValues = (config: PushConfig): unknown[] => {
  const r = toPushConfigRow(config);
  return [
    r.task_id,
    r.id,
    r.url,
    r.token,
    r.auth_scheme,
    r.auth_credentials,
    r.all_events,
    r.format,
    r.created_at,
  ];
};
